"""Counted summaries of NCCL's per-rank init lines (Init START/COMPLETE, Init timings).

Every rank of every communicator prints these, so a 1,024-rank job that builds its world,
data-parallel and tensor-parallel groups a few times prints tens of thousands of them; kept one
fact each they would swamp the rule engine with facts that differ only by rank. Per communicator
size (``nranks``) they are summarised instead:

- ``nccl.init_complete``: how many ranks started and completed init, on how many hosts, in how
  many communicators; the fact points at the first COMPLETE line (and spans to the last).
- ``nccl.init_timings``: how many ranks timed init, the fastest and median total; the fact is the
  slowest rank's (its host, rank, breakdown and line), with the line of the first timing kept.
  The next slowest ranks (:data:`SLOWEST_KEPT` in all) stay facts of their own (count 1), so a
  straggler and its runner-ups are visible without any threshold deciding what is slow.

Lines handled (NCCL 2.23+ for the timings)::

    gpu-h100-017:481203:481321 [0] NCCL INFO ncclCommInitRank comm 0x55f0a8e3c2a0 rank 0 nranks 16 cudaDev 0 nvmlDev 0 busId 18000 commId 0x9d2e4f61a7c8b013 - Init COMPLETE
    gpu-h100-017:481203:481321 [0] NCCL INFO Init timings - ncclCommInitRank: rank 0 nranks 16 total 2.31 (kernels 0.19, alloc 0.07, bootstrap 0.42, allgathers 0.03, topo 0.66, graphs 0.05, connections 0.84, rest 0.05)

Memory is bounded whatever the log's length: per communicator size a few counters, capped sets
of hosts and communicator ids, a histogram of totals (to the centisecond, capped) and a heap of
the slowest ranks.

    >>> s = InitSummary()
    >>> for i, t in enumerate((2.0, 2.1, 41.0, 2.0)):
    ...     s.timed(i, ("h%d" % i, 100 + i, 0, "h%d" % i), i, 4, t, {})
    >>> [(f["comm_rank"], f["total"], f.get("count", 1), f.get("median_total")) for _, i, _, f, _ in s.entries()]
    [(2, 41.0, 4, 2.05), (1, 2.1, 1, None), (0, 2.0, 1, None)]
"""

from __future__ import annotations

import heapq
from typing import Any, Callable

from clusterdx.facts.model import nccl as m

#: ranks per communicator size whose init timing stays a fact of its own (the slowest first)
SLOWEST_KEPT = 3
#: distinct hosts, communicator ids and centisecond totals remembered per communicator size
_MAX_DISTINCT = 4096


class _Size:
    """What the init lines of the communicators of one size said."""

    __slots__ = ("started", "done", "first", "last", "hosts", "comms", "timed", "t_first",
                 "t_last", "hist", "slowest")

    def __init__(self) -> None:
        self.started = self.done = self.timed = 0
        self.first: tuple | None = None  # (index, proc, rank, bus, commId) of the first COMPLETE
        self.last = self.t_first = self.t_last = -1
        self.hosts: set[str] = set()
        self.comms: set[str] = set()
        self.hist: dict[float, int] = {}
        # min-heap of (total, -index, index, proc, rank, parts): the SLOWEST_KEPT slowest, ties to the earliest
        self.slowest: list[tuple] = []


class InitSummary:
    """Feed the init lines in order (:meth:`started`, :meth:`completed`, :meth:`timed`), then
    take :meth:`entries`. ``proc`` is the printing process,
    ``(host, pid, cuda_dev, node)``, handed back with the entries; ``index`` the line's index in the document."""

    def __init__(self) -> None:
        self.sizes: dict[int, _Size] = {}

    def _size(self, nranks: int) -> _Size:
        s = self.sizes.get(nranks)
        if s is None:
            s = self.sizes[nranks] = _Size()
        return s

    def started(self, nranks: int) -> None:
        self._size(nranks).started += 1

    def completed(self, index: int, proc: tuple, rank: int, nranks: int, bus: str, comm_id: str) -> None:
        s = self._size(nranks)
        s.done += 1
        if s.first is None:
            s.first = (index, proc, rank, bus, comm_id)
        s.last = index
        if len(s.hosts) < _MAX_DISTINCT:
            s.hosts.add(proc[0])
        if comm_id and len(s.comms) < _MAX_DISTINCT:
            s.comms.add(comm_id)

    def timed(self, index: int, proc: tuple, rank: int, nranks: int, total: float,
              parts: dict[str, float]) -> None:
        s = self._size(nranks)
        s.timed += 1
        if s.t_first < 0:
            s.t_first = index
        s.t_last = index
        key = round(total, 2)
        if key in s.hist or len(s.hist) < _MAX_DISTINCT:
            s.hist[key] = s.hist.get(key, 0) + 1
        item = (total, -index, index, proc, rank, parts)
        if len(s.slowest) < SLOWEST_KEPT:
            heapq.heappush(s.slowest, item)
        elif item[:2] > s.slowest[0][:2]:
            heapq.heapreplace(s.slowest, item)

    def entries(self, lineno: Callable[[int], int] = lambda i: i + 1) -> list[list[Any]]:
        """The summaries as the parser queues facts: ``[cls, index, end, fields, proc]``;
        ``lineno`` turns a line index into the line number facts cite."""
        out: list[list[Any]] = []
        for nranks, s in sorted(self.sizes.items()):
            if s.first is not None:
                index, proc, rank, bus, cid = s.first
                out.append([m.NcclInitComplete, index, s.last if s.last != index else None, dict(
                    comm_rank=rank, nranks=nranks, bus_id=bus, comm_id=cid, count=s.done,
                    started=s.started, nodes=len(s.hosts), comms=len(s.comms)), proc])
            if s.slowest:
                ranked = sorted(s.slowest, key=lambda e: (-e[0], e[2]))
                for k, (total, _, index, proc, rank, parts) in enumerate(ranked):
                    fields = dict(comm_rank=rank, nranks=nranks, total=total, **parts)
                    if k == 0:
                        fields.update(count=s.timed, median_total=_median(s.hist),
                                      min_total=min(s.hist) if s.hist else None, first_line=lineno(s.t_first))
                    out.append([m.NcclInitTimings, index, None, fields, proc])
        return out


def _median(hist: dict[float, int]) -> float | None:
    """The median of a histogram {value: count} (the mean of the two middle values when even)."""
    n = sum(hist.values())
    if not n:
        return None
    lo, hi = (n - 1) // 2, n // 2
    seen = 0
    a = b = None
    for value in sorted(hist):
        seen += hist[value]
        if a is None and seen > lo:
            a = value
        if seen > hi:
            b = value
            break
    return round((a + b) / 2, 3)
