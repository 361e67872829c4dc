"""Run probes: commands under a time limit, files read in process, never fatal, never a shell.

A command runs as an argument list in its own session (process group) with stdin closed and
``LC_ALL=C`` (so output is in the shape the parsers know). Its output is read from pipes as it
comes, kept up to :data:`MAX_OUTPUT_BYTES` in memory (never spooled to disk); a probe that writes
more is stopped at the cap and its result marked ``truncated``. When it exits, at its time limit
or at the cap, the whole process group gets SIGKILL, so no child it forked outlives it (or holds
its pipes open: they are drained for at most :data:`DRAIN_S` after the exit). A missing tool, a permission error, a non-zero exit or a
timeout becomes the probe's status, recorded with the duration and the start of stderr.

Probes are grouped by tool; groups run in parallel, the probes of one group one after the
other, and once a tool hangs the rest of its group is skipped (a hung ``nvidia-smi`` costs one
time limit, not four).

>>> from clusterdx.facts.collect.probe import Probe
>>> r = run_probe(Probe("no-such", argv=("clusterdx-no-such-tool-xyz",)))
>>> r.status, r.reason
('missing', 'tool not installed: clusterdx-no-such-tool-xyz')
"""

from __future__ import annotations

import errno
import glob
import os
import shutil
import signal
import selectors
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Iterable, Sequence

from clusterdx.facts.collect.probe import DEFAULT_TIMEOUT_S, Probe, Result

STDERR_KEEP = 2000
#: a probe's output is cut here; a bundle is meant for tickets
MAX_OUTPUT_BYTES = 32 << 20
WORKERS = 8
#: how long the pipes are drained after a probe exits (children it left are killed first)
DRAIN_S = 0.5
POLL_S = 0.2
_DENIED = ("permission denied", "operation not permitted", "must be root", "not permitted")


def _env(probe: Probe) -> dict[str, str]:
    env = dict(os.environ)
    if not probe.keep_env:
        env["LC_ALL"] = "C"
        env["LANG"] = "C"
    return env


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL to the probe's whole process group (its session): children it left behind too."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover - a process in D state
        pass


class _Capture:
    """A probe's pipes read as they fill, each kept up to its cap: nothing goes to disk, and
    memory is the cap. Past the cap of the stream that holds the data, ``cut`` is set."""

    def __init__(self, proc: subprocess.Popen, data_stream: str, limit: int):
        self.sel = selectors.DefaultSelector()
        self.bufs: dict[int, bytearray] = {}
        self.caps: dict[int, int] = {}
        self.cut = False
        self._data_fd = -1
        self.fds: dict[str, int] = {}
        for name, pipe in (("stdout", proc.stdout), ("stderr", proc.stderr)):
            if pipe is None:
                continue
            fd = pipe.fileno()
            self.fds[name] = fd
            os.set_blocking(fd, False)
            self.sel.register(fd, selectors.EVENT_READ)
            self.bufs[fd] = bytearray()
            holds_data = name == data_stream or (data_stream == "both" and name == "stdout")
            self.caps[fd] = limit if holds_data else STDERR_KEEP
            if holds_data:
                self._data_fd = fd

    @property
    def open(self) -> bool:
        return bool(self.sel.get_map())

    def pump(self, wait: float) -> None:
        for key, _ in self.sel.select(max(0.0, wait)):
            fd = key.fd
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                self.sel.unregister(fd)
                continue
            buf, cap = self.bufs[fd], self.caps[fd]
            room = cap - len(buf)
            if room > 0:
                buf += chunk[:room]
            if len(chunk) > room and fd == self._data_fd:
                self.cut = True  # the data stream is full: the probe is stopped, the rest is not kept

    def get(self, name: str) -> bytes:
        return bytes(self.bufs.get(self.fds.get(name, -1), b""))

    def close(self) -> None:
        self.sel.close()


def run_command(probe: Probe, argv: Sequence[str] | None = None, timeout_s: float | None = None,
                max_bytes: int = MAX_OUTPUT_BYTES) -> Result:
    """Run one command probe; see the module docstring. Its whole process group is killed when it
    ends, whichever way (a child it forked must not outlive it and keep writing); its output is
    read from pipes up to ``max_bytes`` and a probe that writes more is stopped there and marked
    ``truncated``."""
    argv = list(argv or probe.argv)
    timeout = probe.timeout_s or timeout_s or DEFAULT_TIMEOUT_S
    command = " ".join(argv)
    exe = shutil.which(argv[0])
    if exe is None:
        return Result(probe, "missing", reason=f"tool not installed: {argv[0]}", command=command)
    start = time.monotonic()
    try:
        proc = subprocess.Popen([exe, *argv[1:]], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT if probe.stream == "both" else subprocess.PIPE,
                                env=_env(probe), start_new_session=True, close_fds=True)
    except PermissionError as exc:
        return Result(probe, "denied", reason=f"cannot run {argv[0]}: {exc.strerror}", command=command,
                      duration_s=round(time.monotonic() - start, 3))
    except OSError as exc:
        return Result(probe, "error", reason=f"cannot run {argv[0]}: {exc.strerror or exc}",
                      command=command, duration_s=round(time.monotonic() - start, 3))
    cap = _Capture(proc, probe.stream, max_bytes)
    end = start + timeout
    timed_out = False
    try:
        while not cap.cut:
            now = time.monotonic()
            if proc.poll() is not None:
                # the probe is done: what its group left running dies now, and what they wrote to
                # the pipes before is drained (briefly: a child outside the group may hold them)
                _kill_group(proc)
                drain_end = now + DRAIN_S
                while cap.open and not cap.cut and time.monotonic() < drain_end:
                    cap.pump(drain_end - time.monotonic())
                break
            if now >= end:
                timed_out = True
                break
            if cap.open:
                cap.pump(min(end - now, POLL_S))
            else:
                time.sleep(min(end - now, POLL_S))
    finally:
        code = proc.poll()
        _kill_group(proc)
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        cap.close()
    duration = round(time.monotonic() - start, 3)
    stdout, stderr = cap.get("stdout"), cap.get("stderr")
    if timed_out:
        return Result(probe, "timeout", exit_code=proc.returncode, command=command, duration_s=duration,
                      stderr=_text(stderr[:STDERR_KEEP]), reason=f"killed after {timeout:g} s (process group)")
    data = stderr if probe.stream == "stderr" else stdout
    err_text = "" if probe.stream == "stderr" else _text(stderr[:STDERR_KEEP])
    if cap.cut:
        return Result(probe, "ok", data=data, exit_code=code, duration_s=duration, stderr=err_text,
                      command=command, truncated=True,
                      reason=f"output cut at {_size(max_bytes)}: the probe was stopped there (process group)")
    code = proc.returncode if code is None else code
    if code in probe.ok_codes:
        return Result(probe, "ok", data=data, exit_code=code, duration_s=duration, stderr=err_text, command=command)
    first = (err_text or _text(data[:STDERR_KEEP])).strip().splitlines()
    why = first[0] if first else "no output"
    status = "denied" if not data.strip() and any(w in why.lower() for w in _DENIED) else "error"
    return Result(probe, status, data=data, exit_code=code, duration_s=duration, stderr=err_text,
                  command=command, reason=f"exit {code}: {why[:200]}")


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 and n % (1 << 20) == 0 else f"{n} bytes"


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _expand(patterns: Iterable[str]) -> list[str]:
    paths: list[str] = []
    for pattern in patterns:
        found = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
        paths.extend(found)
    return paths


def read_files(probe: Probe) -> Result:
    """Read the probe's files in process, rendered in the probe's style."""
    start = time.monotonic()
    chunks: list[bytes] = []
    denied: list[str] = []
    seen = 0
    for path in _expand(probe.files):
        try:
            data = _read(path)
        except FileNotFoundError:
            continue
        except IsADirectoryError:
            continue
        except OSError as exc:
            seen += 1
            if exc.errno in (errno.EACCES, errno.EPERM):
                denied.append(path)
            # other errors (EIO, EINVAL on write-only sysfs attributes) are what grep -s skips too
            continue
        seen += 1
        chunks.append(_render(probe, path, data))
    duration = round(time.monotonic() - start, 3)
    command = probe.command
    if not chunks:
        if denied:
            return Result(probe, "denied", reason=f"permission denied: {', '.join(denied[:3])}",
                          duration_s=duration, command=command)
        why = "not readable" if seen else "not present on this machine"
        return Result(probe, "missing", reason=f"{why}: {' '.join(probe.files)}", duration_s=duration,
                      command=command)
    res = Result(probe, "ok", data=b"".join(chunks), duration_s=duration, command=command)
    if denied:
        res.reason = f"{len(denied)} file(s) not readable without root, e.g. {denied[0]}"
    return res


def _read(path: str, limit: int = MAX_OUTPUT_BYTES) -> bytes:
    # small reads: procfs sysctl handlers allocate the size asked for (ENOMEM on a 32 MiB read)
    chunks, total = [], 0
    with open(path, "rb", buffering=0) as fh:
        while total < limit:
            chunk = fh.read(min(65536, limit - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    return b"".join(chunks)


def _render(probe: Probe, path: str, data: bytes) -> bytes:
    if probe.style == "cat":
        return data
    if probe.style == "sysctl":
        key = path.removeprefix("/proc/sys/").replace("/", ".")
        value = b" ".join(data.split())
        return key.encode() + b" = " + value + b"\n"
    # grep . FILES: one path:line per non-empty line; grep prints no path for a single file
    # without -H, but the parsers want the path, which `grep -H` gives
    return b"".join(path.encode() + b":" + line + b"\n" for line in data.splitlines() if line)


def run_internal(probe: Probe) -> Result:
    start = time.monotonic()
    try:
        data = probe.internal() if probe.internal else b""
    except PermissionError as exc:
        return Result(probe, "denied", reason=str(exc), command=probe.command,
                      duration_s=round(time.monotonic() - start, 3))
    except Exception as exc:  # an internal probe must never cost the collection
        return Result(probe, "error", reason=f"{type(exc).__name__}: {exc}", command=probe.command,
                      duration_s=round(time.monotonic() - start, 3))
    return Result(probe, "ok", data=data, command=probe.command, duration_s=round(time.monotonic() - start, 3))


def run_probe(probe: Probe, timeout_s: float | None = None) -> Result:
    if probe.argv:
        res = run_command(probe, timeout_s=timeout_s)
        if res.status == "missing" and probe.files:
            fallback = read_files(probe)
            fallback.reason = f"{probe.argv[0]} not installed; read {' '.join(probe.files)} directly"
            fallback.command = f"{probe.command} (read from {' '.join(probe.files)})"
            if fallback.status == "ok":
                return fallback
        return res
    if probe.internal is not None:
        return run_internal(probe)
    return read_files(probe)


def _run_group(probes: Sequence[Probe], timeout_s: float | None) -> list[Result]:
    results: list[Result] = []
    hung: Result | None = None
    for probe in probes:
        if hung is not None:
            results.append(Result(probe, "skipped", command=probe.command,
                                  reason=f"{hung.probe.argv[0]} timed out on probe {hung.probe.name}"))
            continue
        if probe.needs_previous and results and results[-1].status != "ok":
            results.append(Result(probe, "skipped", command=probe.command,
                                  reason=f"needs probe {results[-1].probe.name}, which did not succeed"))
            continue
        res = run_probe(probe, timeout_s)
        if res.status == "timeout":
            hung = res
        results.append(res)
    return results


def run_all(probes: Sequence[Probe], timeout_s: float | None = None, workers: int = WORKERS) -> list[Result]:
    """Run every probe; results in the order of ``probes``.

    ``timeout_s`` is the time limit of probes that do not set their own (default 10 s).
    """
    groups: dict[str, list[Probe]] = {}
    for p in probes:
        groups.setdefault(p.group_key, []).append(p)
    by_probe: dict[int, Result] = {}
    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="clusterdx-collect") as pool:
        futures = [pool.submit(_run_group, g, timeout_s) for g in groups.values()]
        for fut in futures:
            for res in fut.result():
                by_probe[id(res.probe)] = res
    return [by_probe[id(p)] for p in probes]
