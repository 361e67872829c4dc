"""A run's time limit (``--timeout``), checked between units of work, and what it left undone.

One :class:`Deadline` travels through a run: ingestion checks it between inputs, derivation
between derivers, the rule engine between sessions (one per node), the diagnosis before the
next-probe search. Past the deadline each stage stops taking new work and says what it left:
the inputs it did not read (each still recorded, ``skipped``), the derivers it did not run, the
nodes whose rule sessions did not run, the stages skipped. The report is then partial, never
missing. A unit already started runs to its end; the hard backstop for a unit that never ends
is :mod:`clusterdx.engine.backstop`.

It lives in ``facts`` because ingestion, the lowest layer that checks it, must not import
``engine``.

    >>> d = Deadline(None)
    >>> d.passed(), d.incomplete
    (False, False)
    >>> t = [0.0]
    >>> d = Deadline(10, clock=lambda: t[0])
    >>> d.passed()
    False
    >>> t[0] = 11.0
    >>> d.passed()
    True
    >>> d.not_read("a.log", "reading inputs"); d.stage, d.inputs_not_read
    ('reading inputs', ['a.log'])
"""

from __future__ import annotations

import time
from typing import Callable

from clusterdx.facts.base import printable

#: the default of every command's ``--timeout``, in seconds
DEFAULT_TIMEOUT_S = 300.0


class Deadline:
    """``seconds`` None or 0: no limit (it never passes)."""

    def __init__(self, seconds: float | None, clock: Callable[[], float] = time.monotonic):
        self.seconds = float(seconds) if seconds else None
        self._clock = clock
        self._end = clock() + self.seconds if self.seconds else None
        #: the stage in which the deadline was first seen passed ("" while it has not been)
        self.stage = ""
        self.inputs_not_read: list[str] = []
        self.derivers_not_run: list[str] = []
        self.nodes_not_evaluated: list[str] = []
        self.stages_skipped: list[str] = []

    def fresh(self) -> "Deadline":
        """The same limit with an empty ledger (one part of a run that reports on its own)."""
        out = Deadline(None, self._clock)
        out.seconds, out._end = self.seconds, self._end
        return out

    def passed(self) -> bool:
        return self._end is not None and self._clock() >= self._end

    def remaining(self) -> float | None:
        return None if self._end is None else max(0.0, self._end - self._clock())

    @property
    def incomplete(self) -> bool:
        return bool(self.stage)

    def _hit(self, stage: str) -> None:
        if not self.stage:
            self.stage = stage

    def not_read(self, path: str, stage: str = "reading inputs") -> None:
        self._hit(stage)
        # a name read with surrogateescape (not UTF-8) must stay writable as JSON
        self.inputs_not_read.append(printable(path))

    def not_derived(self, name: str) -> None:
        self._hit("deriving facts")
        self.derivers_not_run.append(name)

    def not_evaluated(self, node: str) -> None:
        self._hit("evaluating rules")
        self.nodes_not_evaluated.append(node)

    def skipped(self, stage: str) -> None:
        self._hit(stage)
        if stage not in self.stages_skipped:
            self.stages_skipped.append(stage)

    def reason(self) -> str:
        """The ``reason`` of an input left unread."""
        return f"not read: the run's time limit ({self.seconds:g} s, --timeout) had passed"

    def summary(self) -> str:
        """One line for a report's warnings."""
        parts = []
        if self.inputs_not_read:
            parts.append(f"{len(self.inputs_not_read)} inputs not read")
        if self.derivers_not_run:
            parts.append(f"{len(self.derivers_not_run)} derivers not run")
        if self.nodes_not_evaluated:
            parts.append(f"rules not evaluated on {len(self.nodes_not_evaluated)} nodes")
        parts += [f"{s} skipped" for s in self.stages_skipped]
        what = "; ".join(parts) or "nothing left undone"
        return (f"partial report: the run's time limit ({self.seconds or 0:g} s, --timeout) passed while "
                f"{self.stage}: {what}")


NO_DEADLINE = Deadline(None)
