"""The hard backstop of a run's time limit: a report even from a run that does not stop.

The deadline (:mod:`clusterdx.facts.deadline`) is cooperative: it is checked between units of
work, so one unit that never ends (a parser stuck in C code, which holds the interpreter's lock
so no thread of ours can run) would still hang the run. :func:`supervised` therefore runs the
work in a forked child in its own process group and waits for its result through a pipe. When
the child is not done ``grace`` seconds after the deadline, or dies without a result, the whole
group is killed (the child and any workers it started) and the caller's ``fallback`` builds the
report instead: partial, and saying so, but never nothing.

The child only computes: it hands back the text to print, the exit code and what it wrote to
stderr, and the parent emits them, so output is never half-written by a killed process. Without
``os.fork`` (not POSIX) or without a limit the work runs in this process.
"""

from __future__ import annotations

import io
import os
import pickle
import select
import signal
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Callable

from clusterdx.facts.deadline import Deadline


@dataclass
class Outcome:
    #: what the command prints (stdout, or the -o file)
    text: str
    exit_code: int = 0
    #: what the work wrote to stderr (its messages)
    stderr: str = ""
    #: an unexpected error in the work: one line (``Type: message``) and its traceback
    error: str = ""
    traceback: str = ""


def grace_s(deadline: Deadline) -> float:
    """Seconds the cooperative stop gets past the deadline: the unit in progress ends, the report
    is rendered. A fifth of the limit, between 5 s and 60 s."""
    return max(5.0, min(60.0, 0.2 * (deadline.seconds or 0.0)))


def _outcome_of(work: Callable[[], Outcome]) -> Outcome:
    """Run ``work``, turning an exit or an error into an :class:`Outcome` (in the child)."""
    err = io.StringIO()
    saved = sys.stderr
    sys.stderr = err
    try:
        out = work()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        out = Outcome("", code)
    except BaseException as exc:  # noqa: BLE001 -- everything must reach the parent
        # typer.Exit and click's Exit (separate classes, neither a SystemExit) carry exit_code
        code = getattr(exc, "exit_code", None)
        if type(exc).__name__ == "Exit" and isinstance(code, int):
            out = Outcome("", code)
        else:
            first = (str(exc).splitlines() or [""])[0][:200]
            out = Outcome("", 1, error=f"{type(exc).__name__}: {first}", traceback=traceback.format_exc())
    finally:
        sys.stderr = saved
    out.stderr = err.getvalue() + out.stderr
    return out


def supervised(work: Callable[[], Outcome], fallback: Callable[[str], Outcome],
               deadline: Deadline, grace: float | None = None) -> Outcome:
    """``work()``'s outcome, or ``fallback(why)`` when it overran the deadline by ``grace``
    seconds or its process died. See the module docstring."""
    if not deadline.seconds or not hasattr(os, "fork"):
        return work()
    grace = grace_s(deadline) if grace is None else grace
    rfd, wfd = os.pipe()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    pid = os.fork()
    if pid == 0:  # the child: compute, hand the outcome back, leave without cleanup handlers
        status = 0
        try:
            os.close(rfd)
            os.setsid()  # its own process group: killed as one, workers included
            data = pickle.dumps(_outcome_of(work))
            with os.fdopen(wfd, "wb") as fh:
                fh.write(data)
        except BaseException:  # noqa: BLE001
            status = 1
        finally:
            os._exit(status)
    os.close(wfd)
    chunks: list[bytes] = []
    end = time.monotonic() + (deadline.remaining() or 0.0) + grace
    why = ""
    try:
        while True:
            left = end - time.monotonic()
            if left <= 0:
                why = f"the run was stopped {grace:g} s after its time limit ({deadline.seconds:g} s, --timeout)"
                break
            ready, _, _ = select.select([rfd], [], [], left)
            if not ready:
                continue
            chunk = os.read(rfd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    except BaseException:  # Ctrl-C here: the child is in its own session and would run on
        _kill_group(pid)
        os.waitpid(pid, 0)
        raise
    finally:
        os.close(rfd)
    if why:
        _kill_group(pid)
    _, status = os.waitpid(pid, 0)
    if not why:
        try:
            return pickle.loads(b"".join(chunks))
        except Exception:
            why = f"the run's process ended without a result (wait status {status})"
    return fallback(why)


def _kill_group(pid: int) -> None:
    for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            kill()
            return
        except (ProcessLookupError, PermissionError):
            continue


#: how many files of one folder the fallback names one by one (the rest are counted)
_LIST_CAP = 20_000


def _files_given(given: str) -> list[tuple[str, int]]:
    """Every entry under a path given, shown as ingestion shows it (its own folder walk), so a
    stopped run still accounts for each input; past the cap the folder itself is listed with the
    count of what was left out."""
    if not os.path.isdir(given) or os.path.islink(given):
        return [(given, 0)]
    from pathlib import Path

    from clusterdx.facts.ingest import walk_folder

    entries = sorted(parts for parts, _ in walk_folder(Path(given)))
    out = [(os.path.join(given, *parts), 0) for parts in entries[:_LIST_CAP]]
    if len(entries) > _LIST_CAP:
        out.append((given, len(entries) - _LIST_CAP))
    return out or [(given, 0)]


def fallback_report(kb, target: list[str], baseline: list[str], deadline: Deadline, why: str,
                    redact: bool = True):
    """The report of a run the backstop stopped: every file under the paths given, listed as not finished, and
    ``incomplete`` saying why. Nothing of the stopped run survives, so nothing else is claimed."""
    from clusterdx import __version__
    from clusterdx.engine.report import Incomplete, InputOut, Report, ToolInfo
    from clusterdx.facts.base import printable

    reason = f"not finished: {why}"
    inputs = [InputOut(path=printable(shown, False), format=None, confidence=0.0, status="skipped",
                       reason=reason if not more else f"{reason}; {more} more files under it not listed",
                       node="node", scope="unknown", side=side)
              for side, paths in (("target", target), ("baseline", baseline)) for p in paths
              for shown, more in _files_given(str(p))]
    return Report(
        tool=ToolInfo(version=__version__, kb_rules=len(kb.rules),
                      kb_causes=sum(1 for n in kb.nodes.values() if n.kind == "root_cause")),
        target=[printable(str(p), False) for p in target] or ["<this machine>"],
        baseline=[printable(str(p), False) for p in baseline], inputs=inputs, hypotheses=[],
        not_evaluated=[], warnings=[f"no diagnosis: {why}; nothing was finished"], redacted=redact,
        incomplete=Incomplete(timeout_s=deadline.seconds or 0.0, stage="stopped",
                              inputs_not_read=[i.path for i in inputs]))
