"""Numeric version comparison: the one place where versions are compared.

Versions are compared as tuples of integers, never as strings or by regex: ``2.10`` is newer
than ``2.9``. Text after the numeric part (``+cuda12.6``, ``-1``, ``a0``) is ignored.

    >>> parse_version("2.23.4+cuda12.6")
    (2, 23, 4)
    >>> parse_version("v2.27.7-1")
    (2, 27, 7)
    >>> parse_version("NCCL") is None
    True
    >>> compare_versions("2.10.3", "2.9.9")
    1
    >>> version_at_least("2.4.8", "2.6")
    False
    >>> version_at_least("2.6", "2.6.0")
    True
    >>> version_at_least("unknown", "2.6") is None
    True
"""

from __future__ import annotations

_MAX_PARTS = 6
_MAX_DIGITS = 9


def parse_version(text: str) -> tuple[int, ...] | None:
    """The leading ``N.N.N`` of ``text`` (an optional ``v`` first) as integers, or None."""
    s = text.strip()
    if s[:1] in ("v", "V"):
        s = s[1:]
    parts: list[int] = []
    i, n = 0, len(s)
    while i < n and len(parts) < _MAX_PARTS:
        j = i
        while j < n and s[j].isdigit() and s[j].isascii():
            j += 1
        if j == i or j - i > _MAX_DIGITS:
            break
        parts.append(int(s[i:j]))
        if j < n and s[j] == ".":
            i = j + 1
        else:
            break
    return tuple(parts) if parts else None


def _padded(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    width = max(len(a), len(b))
    return a + (0,) * (width - len(a)), b + (0,) * (width - len(b))


def compare_versions(a: str | tuple[int, ...], b: str | tuple[int, ...]) -> int | None:
    """-1, 0 or 1 as ``a`` is older than, equal to or newer than ``b`` (missing parts are 0);
    None when either is unreadable."""
    ta = parse_version(a) if isinstance(a, str) else a
    tb = parse_version(b) if isinstance(b, str) else b
    if not ta or not tb:
        return None
    pa, pb = _padded(ta, tb)
    return (pa > pb) - (pa < pb)


def version_at_least(version: str | tuple[int, ...], minimum: str | tuple[int, ...]) -> bool | None:
    """Whether ``version`` >= ``minimum``; None when either is unreadable."""
    c = compare_versions(version, minimum)
    return None if c is None else c >= 0


def version_key(text: str) -> tuple[int, ...]:
    """The numeric part of a version string for sorting, trailing zeros dropped (2.18.0 is 2.18);
    () when there is none.

    >>> version_key("2.18.0+cuda12.2"), version_key("x")
    ((2, 18), ())
    """
    parts = list(parse_version(text) or ())
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


_OPS = (">=", "<=", "==", ">", "<")


def in_range(version: str, *bounds: str) -> bool:
    """Whether ``version`` satisfies every bound (``">=2.19"``, ``"<2.20"``); False if unreadable.

    >>> in_range("2.19.3", ">=2.19", "<2.20"), in_range("2.2.13", ">=2.19"), in_range("?", "<3")
    (True, False, False)
    """
    for bound in bounds:
        b = bound.strip()
        op = next((o for o in _OPS if b.startswith(o)), None)
        if op is None or parse_version(b[len(op):]) is None:
            raise ValueError(f"bad version bound {bound!r}")
        c = compare_versions(version, b[len(op):].strip())
        if c is None:
            return False
        if not {">=": c >= 0, "<=": c <= 0, ">": c > 0, "<": c < 0, "==": c == 0}[op]:
            return False
    return True
