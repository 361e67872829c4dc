"""What this process can see and use: devices, shared memory, limits, sysfs visibility.

Inside a container these differ from the host, and each explains a classic slowdown: no
``/dev/infiniband`` (NCCL falls back to sockets), a 64 MiB ``/dev/shm`` (NCCL's shared-memory
transport fails), a small memlock limit (RDMA memory registration fails), a ``/sys`` without
the PCI or InfiniBand tree (NCCL cannot see the topology). Each function returns the bytes of
one bundle file, ``key: value`` lines (``ulimit``, ``df`` and ``ls`` need no shell this way).

>>> b"RLIMIT_MEMLOCK" in rlimits()
True
"""

from __future__ import annotations

import os
import resource
import stat

SYS_PATHS = ("/sys/class/infiniband", "/sys/class/net", "/sys/bus/pci/devices", "/sys/class/dmi/id",
             "/sys/devices/system/cpu/cpu0/cpufreq", "/sys/devices/system/cpu/cpu0/cpuidle",
             "/sys/devices/system/node", "/sys/kernel/mm/transparent_hugepage",
             "/sys/fs/cgroup", "/proc/driver/nvidia/gpus")


def _limit(v: int) -> str:
    return "unlimited" if v == resource.RLIM_INFINITY else str(v)


def rlimits() -> bytes:
    lines = []
    for name in ("RLIMIT_MEMLOCK", "RLIMIT_NOFILE", "RLIMIT_NPROC", "RLIMIT_STACK", "RLIMIT_CORE"):
        if not hasattr(resource, name):
            continue
        soft, hard = resource.getrlimit(getattr(resource, name))
        lines.append(f"{name}: soft={_limit(soft)} hard={_limit(hard)}")
    return ("\n".join(lines) + "\n").encode()


def dev_shm(path: str = "/dev/shm") -> bytes:
    st = os.statvfs(path)
    size, free = st.f_frsize * st.f_blocks, st.f_frsize * st.f_bavail
    return (f"path: {path}\nsize_bytes: {size}\navailable_bytes: {free}\n"
            f"used_bytes: {size - st.f_frsize * st.f_bfree}\n").encode()


def dev_infiniband(path: str = "/dev/infiniband") -> bytes:
    if not os.path.isdir(path):
        return f"{path}: absent\n".encode()
    lines = [f"{path}: present"]
    for name in sorted(os.listdir(path)):
        full = os.path.join(path, name)
        try:
            st = os.stat(full)
        except OSError as exc:
            lines.append(f"{full}: {exc.strerror}")
            continue
        kind = "char" if stat.S_ISCHR(st.st_mode) else "dir" if stat.S_ISDIR(st.st_mode) else "other"
        dev = f" {os.major(st.st_rdev)}:{os.minor(st.st_rdev)}" if kind == "char" else ""
        access = "rw" if os.access(full, os.R_OK | os.W_OK) else "r" if os.access(full, os.R_OK) else "-"
        lines.append(f"{full}: {kind}{dev} mode={stat.filemode(st.st_mode)} access={access}")
    return ("\n".join(lines) + "\n").encode()


def sys_visibility() -> bytes:
    lines = []
    for path in SYS_PATHS:
        if not os.path.exists(path):
            lines.append(f"absent {path}")
            continue
        try:
            entries = len(os.listdir(path)) if os.path.isdir(path) else 1
        except OSError as exc:
            lines.append(f"unreadable {path} ({exc.strerror})")
            continue
        lines.append(f"visible {path} ({entries} entries)")
    return ("\n".join(lines) + "\n").encode()
