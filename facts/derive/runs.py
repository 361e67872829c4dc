"""Runs compared inside one ticket, and the shape of one run's bandwidth curve.

Every pair of multi-rank nccl-tests runs of the same collective (each from its own input or its
own run in one input) becomes a ``compare.run_pair`` saying which is slower, by how much, and
what differs between them. Runs on different node sets with the same node count and software
become one ``compare.node_pair_dependence`` when the bandwidth depends on the node set; so do the
rows of a user's node-pair table (``nccltests.pair_result``, one two-node run each). A run
whose bandwidth falls as messages grow becomes ``nccltests.size_falloff``.

Against a ``--baseline`` (:func:`baseline_comparisons`), each target run is compared with the
baseline's run of the same collective on as many nodes, at the largest message size both measured
(the plateau; smaller sizes are latency-bound); a target run clearly slower becomes a
``compare.run_pair`` with ``against="baseline"``, so the same rules read it.

Thresholds are the rules' (they test ``ratio``); the only numbers here decide what is worth
comparing at all: messages of at least :data:`MIN_SIZE_BYTES` (smaller ones are latency-bound and
say nothing about bandwidth) and a difference of at least :data:`MIN_DIFFERENCE` (run-to-run noise).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Sequence

from clusterdx.facts.base import Fact
from clusterdx.facts.derive._common import of_type
from clusterdx.facts.model.derived_runs import PairDependence, RunPair, SizeFalloff
from clusterdx.facts.versions import compare_versions

MIN_SIZE_BYTES = 64 << 20
#: runs closer than this (slow/fast above 1 - MIN_DIFFERENCE) are the same result
MIN_DIFFERENCE = 0.1
#: at most this many runs are paired (a ticket with hundreds of runs is a fleet, not a comparison)
MAX_RUNS = 40


def _busbw(run: Fact) -> float | None:
    size = getattr(run, "max_size", None)
    bw = getattr(run, "busbw_at_max_size", None)
    if bw is None or size is None or size < MIN_SIZE_BYTES or bw <= 0:
        return None
    return float(bw)


def _hosts(run: Fact) -> tuple[str, ...]:
    hosts = tuple(sorted(set(getattr(run, "hosts", []) or [])))
    return hosts


def _differs(a: Fact, b: Fact, hosts: bool = True) -> list[str]:
    out = []
    ha, hb = _hosts(a), _hosts(b)
    if hosts and ha and hb and ha != hb:
        out.append("hosts")
    va, vb = getattr(a, "nccl_version", ""), getattr(b, "nccl_version", "")
    if va and vb and compare_versions(va, vb) not in (0, None):
        out.append("nccl_version")
    if a.scope != b.scope and "unknown" not in (a.scope.value, b.scope.value):
        out.append("scope")
    if a.nranks != b.nranks:
        out.append("nranks")
    if a.nodes != b.nodes:
        out.append("nodes")
    return out


def _pair(slow: Fact, sbw: float, fast: Fact, fbw: float, against: str = "ticket", size: int = 0) -> Fact:
    differs = _differs(slow, fast, hosts=against != "baseline")
    sv, fv = slow.nccl_version, fast.nccl_version
    newer = (compare_versions(sv, fv) or 0) if sv and fv else 0
    return RunPair(
        node=slow.node, scope=slow.scope, source=slow.source, collective=slow.collective, against=against,
        size_bytes=size, slow_busbw=sbw, fast_busbw=fbw, ratio=round(sbw / fbw, 4), differs=differs,
        n_differs=len(differs), slow_nccl_version=sv, fast_nccl_version=fv, slow_is_newer_nccl=newer,
        slow_scope=slow.scope.value, fast_scope=fast.scope.value,
        slow_hosts=list(_hosts(slow)), fast_hosts=list(_hosts(fast)), nodes=slow.nodes)


def _pairs(runs: list[tuple[Fact, float]]) -> list[Fact]:
    out: list[Fact] = []
    for (a, bwa), (b, bwb) in combinations(runs, 2):
        if a.collective != b.collective:
            continue
        (slow, sbw), (fast, fbw) = sorted(((a, bwa), (b, bwb)), key=lambda t: t[1])
        if sbw / fbw > 1 - MIN_DIFFERENCE:
            continue
        out.append(_pair(slow, sbw, fast, fbw))
    return out


#: the collective named for a user's node-pair table, which does not say which one it ran
PAIR_TABLE = "pairwise"


def _slow_host(slow: list[tuple[Fact, float]], fast: list[tuple[Fact, float]]) -> str:
    """The one host that holds the slow runs back: in every slow run and no fast one; failing that
    (another slow pair beside it), the one host in two or more runs, all slow, whose every partner
    is fast in some other run (each of its peers is fine without it). '' when no single host."""
    in_slow = set.intersection(*(set(_hosts(r)) for r, _ in slow))
    in_fast = set().union(*(set(_hosts(r)) for r, _ in fast))
    common = sorted(in_slow - in_fast)
    if len(common) == 1:
        return common[0]
    if common:
        return ""
    candidates = []
    for host in sorted(set().union(*(set(_hosts(r)) for r, _ in slow)) - in_fast):
        mine = [r for r, _ in slow if host in _hosts(r)]
        partners = set().union(*(set(_hosts(r)) for r in mine)) - {host}
        if len(mine) >= 2 and partners and partners <= in_fast:
            candidates.append(host)
    return candidates[0] if len(candidates) == 1 else ""


def _pair_dependence(runs: list[tuple[Fact, float]], pairs: Sequence[Fact] = ()) -> list[Fact]:
    out: list[Fact] = []
    groups: dict[tuple, list[tuple[Fact, float]]] = {}
    for run, bw in runs:
        if run.nodes < 2 or not _hosts(run):
            continue
        groups.setdefault((run.collective, run.nodes, run.nranks, run.nccl_version), []).append((run, bw))
    # a user's node-pair table: every row is one two-node run of the same test
    for p in pairs:
        if p.value > 0 and len(_hosts(p)) == 2:
            groups.setdefault((PAIR_TABLE, 2, 0, p.source.input + " " + p.unit), []).append((p, p.value))
    for (collective, _, _, _), members in sorted(groups.items(), key=lambda kv: kv[0]):
        host_sets = {_hosts(r) for r, _ in members}
        if len(host_sets) < 2:
            continue
        best = max(bw for _, bw in members)
        slow = [(r, bw) for r, bw in members if bw / best <= 1 - MIN_DIFFERENCE]
        fast = [(r, bw) for r, bw in members if bw / best > 1 - MIN_DIFFERENCE]
        if not slow:
            continue
        common_host = _slow_host(slow, fast)
        first = min(slow, key=lambda t: t[1])[0]
        out.append(PairDependence(
            node=first.node, scope=first.scope, source=first.source, collective=collective,
            runs=len(members), slow_runs=len(slow), fast_runs=len(fast),
            ratio=round(min(bw for _, bw in members) / best, 4),
            common_slow_host=common_host,
            slow_host_sets=sorted("+".join(_hosts(r)) for r, _ in slow),
            fast_host_sets=sorted("+".join(_hosts(r)) for r, _ in fast)))
    return out


def _falloff(facts: Sequence[Fact]) -> list[Fact]:
    out: list[Fact] = []
    rows: dict[tuple[str, int], list[Fact]] = {}
    for r in of_type(facts, "nccltests.result"):
        rows.setdefault((r.source.input, r.run_index), []).append(r)
    for run in of_type(facts, "nccltests.run"):
        mine = [r for r in rows.get((run.source.input, run.run_index), []) if r.size_bytes >= 1 << 20]
        if len(mine) < 4 or run.max_size is None or run.max_size < MIN_SIZE_BYTES:
            continue
        peak = max(mine, key=lambda r: r.oop_busbw)
        last = max(mine, key=lambda r: r.size_bytes)
        if peak.oop_busbw <= 0 or peak.size_bytes * 4 > last.size_bytes:
            continue
        ratio = last.oop_busbw / peak.oop_busbw
        if ratio > 1 - MIN_DIFFERENCE:
            continue
        out.append(SizeFalloff(node=run.node, scope=run.scope, source=run.source, run_index=run.run_index,
                               collective=run.collective, nodes=run.nodes, peak_busbw=peak.oop_busbw,
                               peak_size=peak.size_bytes, busbw_at_max_size=last.oop_busbw,
                               max_size=last.size_bytes, ratio=round(ratio, 4)))
    return out


def derive(facts: Sequence[Fact]) -> list[Fact]:
    runs = [(r, bw) for r in of_type(facts, "nccltests.run")
            if r.nranks >= 2 and (bw := _busbw(r)) is not None][:MAX_RUNS]
    return _pairs(runs) + _pair_dependence(runs, of_type(facts, "nccltests.pair_result")) + _falloff(facts)


@dataclass(frozen=True)
class BaselineComparison:
    """One target run against the baseline run it is compared with, at one message size."""

    target: Fact
    baseline: Fact
    #: the size both figures are taken at (0: each run's largest, when the rows are not in hand)
    size_bytes: int
    target_busbw: float
    baseline_busbw: float

    @property
    def ratio(self) -> float:
        return self.target_busbw / self.baseline_busbw

    @property
    def slower(self) -> bool:
        return self.ratio <= 1 - MIN_DIFFERENCE

    @property
    def faster(self) -> bool:
        return self.baseline_busbw / self.target_busbw <= 1 - MIN_DIFFERENCE


def _rows(facts: Sequence[Fact]) -> dict[tuple[str, int], dict[int, float]]:
    """(input, run) -> size -> out-of-place busbw."""
    out: dict[tuple[str, int], dict[int, float]] = {}
    for r in of_type(facts, "nccltests.result"):
        out.setdefault((r.source.input, r.run_index), {})[r.size_bytes] = r.oop_busbw
    return out


def _at_common_size(t: Fact, b: Fact, t_rows: dict[int, float], b_rows: dict[int, float]
                    ) -> tuple[int, float, float] | None:
    """Both runs' busbw at the largest size both measured (from their rows), else at each run's
    largest size when both reach the comparable sizes."""
    common = [s for s in set(t_rows) & set(b_rows) if s >= MIN_SIZE_BYTES and t_rows[s] > 0 and b_rows[s] > 0]
    if common:
        size = max(common)
        return size, t_rows[size], b_rows[size]
    tbw, bbw = _busbw(t), _busbw(b)
    if tbw is None or bbw is None:
        return None
    return (t.max_size if t.max_size == b.max_size else 0), tbw, bbw


def _baseline_run(run: Fact, candidates: list[Fact]) -> Fact | None:
    """The baseline run to hold ``run`` to: same collective, as many nodes; the same rank count,
    the largest sweep, then the best busbw of those (a baseline is the known-good side)."""
    same = [b for b in candidates if b.collective == run.collective and b.nodes == run.nodes]
    if not same:
        return None
    return max(same, key=lambda b: (b.nranks == run.nranks, b.max_size or 0, b.busbw_at_max_size or 0.0))


def baseline_comparisons(target: Sequence[Fact], baseline: Sequence[Fact]) -> list[BaselineComparison]:
    """Every multi-rank target run against its baseline run (see :func:`_baseline_run`)."""
    t_rows, b_rows = _rows(target), _rows(baseline)
    base_runs = [r for r in of_type(baseline, "nccltests.run") if r.nranks >= 2]
    out: list[BaselineComparison] = []
    for run in [r for r in of_type(target, "nccltests.run") if r.nranks >= 2][:MAX_RUNS]:
        base = _baseline_run(run, base_runs)
        if base is None:
            continue
        got = _at_common_size(run, base, t_rows.get((run.source.input, run.run_index), {}),
                              b_rows.get((base.source.input, base.run_index), {}))
        if got is None:
            continue
        size, tbw, bbw = got
        out.append(BaselineComparison(run, base, size, float(tbw), float(bbw)))
    return out


def baseline_pairs(comparisons: Sequence[BaselineComparison]) -> list[Fact]:
    """A ``compare.run_pair`` for each target run clearly slower than its baseline run."""
    return [_pair(c.target, c.target_busbw, c.baseline, c.baseline_busbw, "baseline", c.size_bytes)
            for c in comparisons if c.slower]
