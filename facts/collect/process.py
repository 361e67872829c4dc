"""Probes of one running process (``--pid`` / ``--process-name``): what the job really sees.

For each process: its environment as started (``/proc/PID/environ``, NUL-separated, redacted),
its command line (redacted), ``/proc/PID/status`` (``Cpus_allowed_list``,
``Mems_allowed_list``), ``taskset -cp``, its cgroup and the cgroup's cpuset (v1 or v2), and
``numastat -p`` when numastat is installed. Files land under ``process/<pid>/``.

>>> [p.name for p in pid_probes(1)][:3]
['proc-environ', 'proc-cmdline', 'proc-status']
>>> find_pids("clusterdx-no-such-process-name")
[]
"""

from __future__ import annotations

import os
from pathlib import Path

from clusterdx.facts.collect.probe import Probe

MAX_MATCHES = 16


def find_pids(name: str, proc: str = "/proc") -> list[int]:
    """Processes whose name (``comm``) is ``name``, or whose command line's first two words end
    with it (``python train.py`` matches ``train.py``); not this collector itself."""
    me = os.getpid()
    found: list[int] = []
    for entry in sorted(os.listdir(proc), key=lambda s: (len(s), s)):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            comm = Path(proc, entry, "comm").read_text().strip()
            argv = Path(proc, entry, "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        words = [os.path.basename(a.decode(errors="replace")) for a in argv[:2] if a]
        if comm == name or name in words:
            found.append(int(entry))
            if len(found) >= MAX_MATCHES:
                break
    return found


def cpuset_files(pid: int, proc: str = "/proc", cgroup_root: str = "/sys/fs/cgroup") -> tuple[str, ...]:
    """The cpuset files of the process's cgroup (v2 unified, else v1 cpuset controller)."""
    try:
        lines = Path(proc, str(pid), "cgroup").read_text().splitlines()
    except OSError:
        return ()
    files: list[str] = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        path = path.strip()
        if controllers == "":
            base = f"{cgroup_root}{path}".rstrip("/") or cgroup_root
            files += [f"{base}/cpuset.cpus.effective", f"{base}/cpuset.mems.effective"]
        elif "cpuset" in controllers.split(","):
            base = f"{cgroup_root}/cpuset{path}".rstrip("/")
            files += [f"{base}/cpuset.cpus", f"{base}/cpuset.mems"]
    return tuple(files)


def pid_probes(pid: int) -> tuple[Probe, ...]:
    folder = f"process/{pid}"
    group = f"pid:{pid}"
    proc = f"/proc/{pid}"
    return (
        Probe("proc-environ", files=(f"{proc}/environ",), style="cat", format="proc-environ",
              cmd=f"cat {proc}/environ", kb_probe="proc-environ", redact="environ", folder=folder,
              suffix=".bin", group=group),
        Probe("proc-cmdline", files=(f"{proc}/cmdline",), style="cat", redact="argv", folder=folder,
              suffix=".bin", group=group),
        Probe("proc-status", files=(f"{proc}/status",), style="cat", format="proc-status",
              cmd=f"cat {proc}/status", kb_probe="rank-affinity", folder=folder, group=group),
        Probe("taskset", argv=("taskset", "-cp", str(pid)), format="taskset", kb_probe="rank-affinity",
              folder=folder),
        Probe("cgroup", files=(f"{proc}/cgroup",), style="cat", folder=folder, group=group),
        Probe("cgroup-cpuset", files=cpuset_files(pid), folder=folder, group=group),
        Probe("numastat", argv=("numastat", "-p", str(pid)), format="numastat-p", kb_probe="numastat-pid",
              folder=folder),
    )
