"""Regular expressions compiled on first use.

The parsers hold some 550 module-level patterns, and every parser module is imported on each run
(each format's sniffer scores each input). Compiling them took about 0.2 s of a 0.7 s diagnosis,
half of it for patterns the run never used: a run uses the patterns of the formats its inputs
turn out to be. :func:`compile` returns a stand-in that compiles on first use and from then on
hands out the compiled pattern's own bound methods, kept as instance attributes (a hot loop's
``PAT.match(line)`` pays one attribute lookup more, about 10 ns; the streaming NCCL log parser
keeps plain patterns all the same).

Where an ``re.Pattern`` itself is needed, pass ``.compiled``: to ``re.sub(p.compiled, ...)``, to
``isinstance``, and to compare with a match's pattern (``m.re is PAT.compiled``).
"""

from __future__ import annotations

import re
from typing import Any

_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "scanner")


class LazyPattern:
    """A pattern compiled on first use (see the module docstring)."""

    __slots__ = ("pattern", "_flags", "_compiled", "__dict__")

    def __init__(self, pattern: str | bytes, flags: int = 0) -> None:
        #: the source, as ``re.Pattern.pattern`` (readable before compiling)
        self.pattern = pattern
        self._flags = flags
        self._compiled: re.Pattern | None = None

    @property
    def compiled(self) -> re.Pattern:
        """The compiled pattern; on first use its bound methods replace this class's stand-ins on
        the instance (an instance attribute wins over a plain method of the class)."""
        if self._compiled is None:
            compiled = re.compile(self.pattern, self._flags)
            for name in _METHODS:
                self.__dict__[name] = getattr(compiled, name)
            self._compiled = compiled
        return self._compiled

    @property
    def flags(self) -> int:
        return self.compiled.flags

    @property
    def groups(self) -> int:
        return self.compiled.groups

    @property
    def groupindex(self) -> Any:
        return self.compiled.groupindex

    def __repr__(self) -> str:
        return f"lazyre.compile({self.pattern!r}, {self._flags})"


def _first_call(name: str) -> Any:
    def method(self: LazyPattern, *args: Any, **kwargs: Any) -> Any:
        return getattr(self.compiled, name)(*args, **kwargs)

    method.__name__ = name
    return method


for _name in _METHODS:
    setattr(LazyPattern, _name, _first_call(_name))


def compile(pattern: str | bytes, flags: int = 0) -> LazyPattern:  # noqa: A001 -- re.compile's twin
    return LazyPattern(pattern, flags)
