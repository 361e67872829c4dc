"""What one collection step is (:class:`Probe`) and what became of it (:class:`Result`).

A probe is either a command (an argument list, never a shell string), a set of files read in
process (``/proc``, ``/sys``), or a small in-process reading (limits, ``statvfs``). Its
``command`` is the line a user would type to get the same bytes; ingestion uses it to pick the
parser (it matches that parser's ``command_patterns``), and the manifest shows it.

Statuses: ``ok``; ``missing`` (tool not installed, file absent); ``denied`` (permission);
``timeout`` (killed at its time limit); ``error`` (ran, failed); ``skipped`` (not run, e.g. the
same tool hung on an earlier probe).

>>> p = Probe("lscpu", argv=("lscpu",), format="lscpu", kb_probe="lscpu")
>>> p.command, p.kind, p.file
('lscpu', 'command', 'commands/lscpu.txt')
>>> Probe("proc-cmdline", files=("/proc/cmdline",), style="cat").command
'cat /proc/cmdline'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Literal

Status = Literal["ok", "missing", "denied", "timeout", "error", "skipped"]
#: how collected bytes are redacted in the bundle: variable-aware env/environ, free text, or not at all
Redaction = Literal["env", "environ", "argv", "text", "none"]
#: how file probes render what they read: ``grep . FILES`` (``path:value``), ``cat`` (raw bytes,
#: one file after the other), ``sysctl`` (``key = value`` for /proc/sys files)
Style = Literal["grep", "cat", "sysctl"]

DEFAULT_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Probe:
    name: str
    argv: tuple[str, ...] = ()
    #: globs read in process instead of running a command (or, with argv, when argv[0] is missing)
    files: tuple[str, ...] = ()
    style: Style = "grep"
    #: a function returning the bytes (limits, statvfs, device listings)
    internal: Callable[[], bytes] | None = None
    #: the command a user would run; derived from argv / files when empty
    cmd: str = ""
    #: the parser that reads the output, when there is one (a name from ``clusterdx formats``)
    format: str | None = None
    kb_probe: str | None = None
    #: its own time limit; None: the collection's default (DEFAULT_TIMEOUT_S unless --timeout)
    timeout_s: float | None = None
    #: exit codes that are not failures (systemd-detect-virt exits 1 with "none")
    ok_codes: frozenset[int] = frozenset({0})
    #: where the output is: stdout, stderr (perf stat) or both interleaved (turbostat)
    stream: Literal["stdout", "stderr", "both"] = "stdout"
    redact: Redaction = "none"
    #: run in the caller's locale and environment (env); others run with LC_ALL=C
    keep_env: bool = False
    folder: str = ""
    suffix: str = ".txt"
    #: probes of one group run one after the other; after a timeout the rest of it is skipped
    group: str = ""
    #: runs after the one before it in its group succeeded (perf report after perf record)
    needs_previous: bool = False

    @property
    def kind(self) -> str:
        if self.argv:
            return "command"
        return "internal" if self.internal is not None else "file"

    @property
    def command(self) -> str:
        if self.cmd:
            return self.cmd
        if self.argv:
            return " ".join(self.argv)
        if self.files:
            verb = {"grep": "grep .", "cat": "cat", "sysctl": "sysctl"}[self.style]
            return f"{verb} {' '.join(self.files)}"
        return f"(clusterdx internal: {self.name})"

    @property
    def file(self) -> str:
        folder = self.folder or {"command": "commands", "file": "files", "internal": "files"}[self.kind]
        return f"{folder}/{self.name}{self.suffix}"

    @property
    def group_key(self) -> str:
        return self.group or (self.argv[0] if self.argv else f"file:{self.name}")


@dataclass
class Result:
    probe: Probe
    status: Status
    data: bytes = b""
    exit_code: int | None = None
    duration_s: float = 0.0
    stderr: str = ""
    reason: str = ""
    #: what actually ran (a fallback may read files instead of running the tool)
    command: str = ""
    redacted: bool = False
    #: the output was cut at the size cap (the probe stopped there); the manifest says so
    truncated: bool = False
    extra: dict = field(default_factory=dict)

    @property
    def has_output(self) -> bool:
        return self.status in ("ok", "error") and bool(self.data)
