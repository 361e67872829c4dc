"""Collect from the machine clusterdx runs on: read-only, without root, without GPU tools required.

Each probe is a command run without a shell (an argument list) under a timeout, or a file read.
A missing tool, a permission error or a timeout becomes a note in the report's inputs, never an
abort. What is collected is handed to the normal sniff-and-parse path, with the command recorded,
so a live diagnosis and a diagnosis of the same outputs pasted into a ticket agree.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

from clusterdx.facts.base import Scope
from clusterdx.facts.document import Document, split_lines

TIMEOUT_S = 10.0


@dataclass(frozen=True)
class LiveProbe:
    name: str
    argv: tuple[str, ...] = ()
    files: str = ""  # a glob of files to read instead of a command (sysfs, /proc)


PROBES = (
    LiveProbe("lscpu", ("lscpu",)),
    LiveProbe("numactl --hardware", ("numactl", "--hardware")),
    LiveProbe("cat /proc/cmdline", files="/proc/cmdline"),
    LiveProbe("getconf PAGE_SIZE", ("getconf", "PAGE_SIZE")),
    LiveProbe("sysctl kernel.numa_balancing", ("sysctl", "kernel.numa_balancing")),
    LiveProbe("systemd-detect-virt", ("systemd-detect-virt",)),
    LiveProbe("grep . /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor",
              files="/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor"),
    LiveProbe("grep . /sys/devices/system/cpu/cpu0/cpuidle/state*/*",
              files="/sys/devices/system/cpu/cpu0/cpuidle/state*/*"),
    LiveProbe("cpupower frequency-info", ("cpupower", "frequency-info")),
    LiveProbe("cpupower idle-info", ("cpupower", "idle-info")),
    LiveProbe("nvidia-smi topo -m", ("nvidia-smi", "topo", "-m")),
    LiveProbe("env", ("env",)),
)


def _note(path: str, reason: str, status: str = "skipped"):
    from clusterdx.facts.ingest import InputRecord

    return InputRecord(path=path, format=None, confidence=0.0, status=status, reason=reason,  # type: ignore[arg-type]
                       node=socket.gethostname(), scope="host")


def _read_files(pattern: str) -> str | None:
    paths = sorted(glob.glob(pattern))
    if not paths:
        return None
    if len(paths) == 1 and "*" not in pattern:
        return Path(paths[0]).read_text(errors="replace")
    # the `grep . FILES` shape, which the sysfs parser reads: path:value per line
    lines = []
    for p in paths:
        try:
            for value in Path(p).read_text(errors="replace").splitlines():
                lines.append(f"{p}:{value}")
        except OSError:
            continue
    return "\n".join(lines) + "\n"


def collect_documents(redact: bool = True, probes: tuple[LiveProbe, ...] = PROBES):
    """Run every probe; return (documents, notes for what could not be collected)."""
    host = socket.gethostname()
    scope = Scope.container if Path("/.dockerenv").exists() or os.environ.get("container") else Scope.host
    docs: list[Document] = []
    notes = []
    for probe in probes:
        name = f"live:{probe.name}"
        try:
            if probe.files:
                text = _read_files(probe.files)
                if text is None:
                    notes.append(_note(name, f"not present on this machine: {probe.files}"))
                    continue
            else:
                if shutil.which(probe.argv[0]) is None:
                    notes.append(_note(name, f"tool not installed: {probe.argv[0]}"))
                    continue
                proc = subprocess.run(list(probe.argv), capture_output=True, timeout=TIMEOUT_S, check=False,
                                      stdin=subprocess.DEVNULL)
                text = proc.stdout.decode("utf-8", errors="replace")
                if proc.returncode != 0 and not text.strip():
                    err = proc.stderr.decode("utf-8", errors="replace").strip().splitlines()
                    notes.append(_note(name, f"exit {proc.returncode}: {err[0] if err else 'no output'}", "error"))
                    continue
        except subprocess.TimeoutExpired:
            notes.append(_note(name, f"timed out after {TIMEOUT_S:g} s", "error"))
            continue
        except OSError as exc:
            notes.append(_note(name, f"cannot run: {exc}", "error"))
            continue
        docs.append(Document(name=name, lines=split_lines(text), command=probe.name, node=host, scope=scope,
                             redact=redact))
    return docs, notes
