"""Small helpers shared by parsers (number and CPU-list parsing, prompt stripping)."""

from __future__ import annotations

import re

from clusterdx.facts import lazyre
from clusterdx.facts.base import ParseError


_PROMPT = lazyre.compile(r"^\s*(?:\[[^\]]*\]\s*)?(?:[\w.@:~/-]*[$#%>]\s+)")


def cpu_list(text: str) -> list[int]:
    """Expand a Linux CPU list such as ``0-3,8,10-11`` (also ``0-55:2`` strides).

    >>> cpu_list("0-3,8,10-11")
    [0, 1, 2, 3, 8, 10, 11]
    >>> cpu_list("")
    []
    """
    out: list[int] = []
    text = text.strip()
    if not text:
        return out
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        stride = 1
        if ":" in part:
            part, s = part.split(":", 1)
            stride = int(s)
        if "-" in part:
            a, b = part.split("-", 1)
            lo, hi = int(a), int(b)
            if hi < lo or hi - lo > 65_536:
                raise ParseError(f"bad CPU range {part!r}")
            out.extend(range(lo, hi + 1, stride))
        else:
            out.append(int(part))
    return out


def cpu_ranges(cpus: list[int] | set[int]) -> str:
    """The inverse of :func:`cpu_list`: the compact list numactl and taskset take.

    >>> cpu_ranges([0, 1, 2, 3, 8, 10, 11, 64])
    '0-3,8,10-11,64'
    >>> cpu_ranges([])
    ''
    """
    parts: list[str] = []
    run: list[int] = []
    for c in sorted(set(cpus)):
        if run and c != run[-1] + 1:
            parts.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
            run = []
        run.append(c)
    if run:
        parts.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(parts)


def hex_mask_cpus(mask: str) -> list[int]:
    """CPUs set in a hex affinity mask (``ff,ffffffff`` or ``0xff``).

    >>> hex_mask_cpus("f0")
    [4, 5, 6, 7]
    """
    m = mask.strip().lower().removeprefix("0x").replace(",", "")
    value = int(m, 16)
    return [i for i in range(value.bit_length()) if value >> i & 1]


def to_number(text: str) -> float | int:
    """``'1,234.5'`` -> 1234.5, ``'42'`` -> 42; raises ValueError otherwise."""
    t = text.strip().replace(",", "")
    if re.fullmatch(r"[+-]?\d+", t):
        return int(t)
    return float(t)
