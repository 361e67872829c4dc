"""Bounds on what one input may cost: facts kept, warnings kept, lines read -- each one counted.

A 100 MiB log must not cost the analyst's machine its memory, nor the run its time limit, and
what a bound leaves out is always said (an input record's warnings and reason), never dropped
silently. Three bounds, all per top-level input (a file, with all its transcript segments):

- **Identical facts** (same type and fields, any line): the first :data:`MAX_REPEATS` are kept,
  the rest counted ("N more identical kernel.sysctl facts, first at line 12"). A log repeating
  one line a million times is one observation.
- **Facts of one type**: the first :data:`MAX_FACTS_PER_TYPE` distinct ones are kept, the rest
  counted with the first line not kept; the record is then ``partial``.
- **Lines**: a document is read up to :data:`MAX_LINES` lines (:func:`cap_lines`); the rest is
  named in the record. Streaming formats (NCCL debug logs) are read whole, in bounded memory.

Warnings per document are kept up to :data:`MAX_KEPT_WARNINGS` (a record shows fewer); the rest
are counted.

    >>> k = Keeper(max_repeats=2, max_per_type=2)
    >>> [k.admit("t", ("t", i % 2), i + 1) for i in range(6)]
    [True, True, True, True, False, False]
    >>> [k.admit("t", ("t", "new"), 7), k.admit("u", ("u", 0), 8)]
    [False, True]
    >>> k.notes()
    [(5, '2 more identical t facts not kept (first 2 kept of each)'), (7, '1 more t facts not kept: limit of 2 per input reached')]
    >>> k.cut_types()
    ['t']
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Hashable

#: copies of one identical fact kept per input
MAX_REPEATS = 100
#: distinct facts of one type kept per input (a real sysctl -a has ~2,000 keys, an 8-GPU
#: lspci -vvv ~300 devices; a 100 MiB dmesg can hold a million events)
MAX_FACTS_PER_TYPE = 20_000
#: lines read per document (not for streaming formats)
MAX_LINES = 200_000
#: warnings kept per document; the rest counted
MAX_KEPT_WARNINGS = 200
#: identical transcript segments (same command, same output) read per input
MAX_SEGMENT_REPEATS = 3


def fact_key(fact_type: str, fields: dict[str, Any]) -> Hashable | None:
    """What makes two facts identical: type and fields (not where they came from); None when a
    field cannot be hashed (such a fact is always kept)."""
    try:
        key = (fact_type, tuple(sorted((k, tuple(v) if isinstance(v, list) else v)
                                       for k, v in fields.items())))
        hash(key)
    except TypeError:
        return None
    return key


@dataclass
class Keeper:
    """Admits facts up to the bounds and counts what it turned away. One per top-level input,
    shared by its documents; :meth:`mark`/:meth:`rollback` undo the facts of a parse whose
    result is thrown away (a format that declined)."""

    # read when a keeper is made, so that a test may lower them
    max_repeats: int = field(default_factory=lambda: MAX_REPEATS)
    max_per_type: int = field(default_factory=lambda: MAX_FACTS_PER_TYPE)
    _copies: dict[Hashable, int] = field(default_factory=dict)
    _per_type: dict[str, int] = field(default_factory=dict)
    #: type -> [count, first line] turned away as identical / over the type limit
    _same: dict[str, list[int]] = field(default_factory=dict)
    _over: dict[str, list[int]] = field(default_factory=dict)
    _journal: list[tuple[str, Hashable | None]] = field(default_factory=list)

    @classmethod
    def unbounded(cls) -> "Keeper":
        return cls(max_repeats=sys.maxsize, max_per_type=sys.maxsize)

    def admit(self, fact_type: str, key: Hashable | None, line: int = 0) -> bool:
        if self.max_repeats == sys.maxsize and self.max_per_type == sys.maxsize:
            return True  # unbounded: nothing to count
        if key is not None:
            n = self._copies.get(key, 0)
            if n >= self.max_repeats:
                _count(self._same, fact_type, line)
                return False
        if key is None or n == 0:
            if self._per_type.get(fact_type, 0) >= self.max_per_type:
                _count(self._over, fact_type, line)
                return False
            self._per_type[fact_type] = self._per_type.get(fact_type, 0) + 1
        if key is not None:
            self._copies[key] = n + 1
        self._journal.append((fact_type, key))
        return True

    def mark(self) -> tuple[int, dict, dict]:
        return (len(self._journal), {t: v[:] for t, v in self._same.items()},
                {t: v[:] for t, v in self._over.items()})

    def rollback(self, mark: tuple[int, dict, dict]) -> None:
        at, same, over = mark
        self.undo_one(at)
        self._same, self._over = same, over

    def mark_one(self) -> int:
        return len(self._journal)

    def undo_one(self, at: int) -> None:
        """Forget the facts admitted since ``mark_one`` returned ``at`` (one that failed
        validation after it was admitted)."""
        for fact_type, key in reversed(self._journal[at:]):
            if key is not None:
                self._copies[key] -= 1
                if self._copies[key]:
                    continue
                del self._copies[key]
            self._per_type[fact_type] -= 1
        del self._journal[at:]

    def notes(self, since: tuple[int, dict, dict] | None = None) -> list[tuple[int, str]]:
        """(first line, message) for every kind of fact turned away (since ``mark``)."""
        same, over = _since(self._same, since[1] if since else {}), _since(self._over, since[2] if since else {})
        out = [(line, f"{n} more identical {t} facts not kept (first {self.max_repeats} kept of each)")
               for t, (n, line) in same.items()]
        out += [(line, f"{n} more {t} facts not kept: limit of {self.max_per_type} per input reached")
                for t, (n, line) in over.items()]
        return out

    def cut_types(self, since: tuple[int, dict, dict] | None = None) -> list[str]:
        """Fact types cut by the type limit (since ``mark``): the input was not read whole."""
        return sorted(_since(self._over, since[2] if since else {}))

    def dropped(self) -> int:
        return sum(n for n, _ in self._same.values()) + sum(n for n, _ in self._over.values())


def _since(now: dict[str, list[int]], then: dict[str, list[int]]) -> dict[str, list[int]]:
    """What was turned away after ``then``: counts minus the earlier counts, and the first line
    of the later ones (the earlier first line when the type was already being turned away)."""
    out = {}
    for t, (n, line) in now.items():
        before = then.get(t, [0, 0])[0]
        if n > before:
            out[t] = [n - before, line]
    return out


def _count(table: dict[str, list[int]], fact_type: str, line: int) -> None:
    entry = table.get(fact_type)
    if entry is None:
        table[fact_type] = [1, line]
    else:
        entry[0] += 1


def cap_lines(text: str, limit: int | None = None) -> tuple[str, int]:
    """``text`` cut after its first ``limit`` (:data:`MAX_LINES`) lines, and how many lines were
    cut (0: none).

    >>> cap_lines("a\\nb\\nc\\n", 2)
    ('a\\nb\\n', 1)
    >>> cap_lines("a\\nb", 5)
    ('a\\nb', 0)
    """
    at = -1
    for _ in range(MAX_LINES if limit is None else limit):
        at = text.find("\n", at + 1)
        if at < 0:
            return text, 0
    rest = text[at + 1:]
    if not rest:
        return text, 0
    return text[:at + 1], rest.count("\n") + (not rest.endswith("\n"))
