"""Version numbers compared as numbers: the one place that says whether 2.18.3 is older than 2.9.

NCCL prints ``2.18.3+cuda12.2`` (and ``2.4.8-1``, ``2.27.3``), kernels ``5.15.0-105-generic`` or
``6.8.0-1013-nvidia-64k``, drivers ``550.54.15``. :func:`version_key` keeps the leading run of
dot-separated numbers and ignores the rest (build metadata, distribution suffixes), so ranges in
the knowledge base compare numerically, never as strings or by regex.

    >>> version_key("2.18.3+cuda12.2"), version_key("v2.4.8-1"), version_key("6.8.0-1013-nvidia-64k")
    ((2, 18, 3), (2, 4, 8), (6, 8))
    >>> compare_versions("2.9.6", "2.18.1"), compare_versions("2.18", "2.18.0"), compare_versions("x", "2.1")
    (-1, 0, 0)
    >>> in_range("2.19.3", ">=2.19", "<2.20")
    True
"""

from __future__ import annotations

import re

_LEADING = re.compile(r"v?(\d{1,6}(?:\.\d{1,6}){0,5})")


def version_key(text: str) -> tuple[int, ...]:
    """The numeric part of a version string, trailing zeros dropped (2.18.0 is 2.18); () when none."""
    m = _LEADING.search(text.strip()[:64]) if text else None
    if not m:
        return ()
    parts = [int(p) for p in m.group(1).split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def compare_versions(a: str, b: str) -> int:
    """-1, 0 or 1 as ``a`` is older than, equal to or newer than ``b``; 0 when either is unreadable."""
    ka, kb = version_key(a), version_key(b)
    if not ka or not kb:
        return 0
    return (ka > kb) - (ka < kb)


_BOUND = re.compile(r"^\s*(>=|<=|>|<|==)\s*(\S+)\s*$")


def in_range(version: str, *bounds: str) -> bool:
    """Whether ``version`` satisfies every bound (``">=2.19"``, ``"<2.20"``); False if unreadable."""
    if not version_key(version):
        return False
    for bound in bounds:
        m = _BOUND.match(bound)
        if not m:
            raise ValueError(f"bad version bound {bound!r}")
        op, ref = m.groups()
        c = compare_versions(version, ref)
        if not version_key(ref):
            raise ValueError(f"bad version bound {bound!r}")
        ok = {">=": c >= 0, "<=": c <= 0, ">": c > 0, "<": c < 0, "==": c == 0}[op]
        if not ok:
            return False
    return True
