"""Runs compared inside one ticket, and the shape of one run's bandwidth curve.

Every pair of multi-rank nccl-tests runs of the same collective (each from its own input or its
own run in one input) becomes a ``compare.run_pair`` saying which is slower, by how much, and
what differs between them. Runs on different node sets with the same node count and software
become one ``compare.node_pair_dependence`` when the bandwidth depends on the node set. A run
whose bandwidth falls as messages grow becomes ``nccltests.size_falloff``.

Thresholds are the rules' (they test ``ratio``); the only numbers here decide what is worth
comparing at all: messages of at least :data:`MIN_SIZE_BYTES` (smaller ones are latency-bound and
say nothing about bandwidth) and a difference of at least :data:`MIN_DIFFERENCE` (run-to-run noise).
"""

from __future__ import annotations

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


def _differs(a: Fact, b: Fact) -> list[str]:
    out = []
    ha, hb = _hosts(a), _hosts(b)
    if ha and hb and ha != hb:
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


def _pairs(runs: list[tuple[Fact, float]]) -> list[Fact]:
    out: list[Fact] = []
    for (a, bwa), (b, bwb) in combinations(runs, 2):
        if a.collective != b.collective:
            continue
        (slow, sbw), (fast, fbw) = sorted(((a, bwa), (b, bwb)), key=lambda t: t[1])
        ratio = sbw / fbw
        if ratio > 1 - MIN_DIFFERENCE:
            continue
        differs = _differs(slow, fast)
        sv, fv = slow.nccl_version, fast.nccl_version
        newer = (compare_versions(sv, fv) or 0) if sv and fv else 0
        out.append(RunPair(
            node=slow.node, scope=slow.scope, source=slow.source, collective=slow.collective,
            slow_busbw=sbw, fast_busbw=fbw, ratio=round(ratio, 4), differs=differs, n_differs=len(differs),
            slow_nccl_version=sv, fast_nccl_version=fv, slow_is_newer_nccl=newer,
            slow_scope=slow.scope.value, fast_scope=fast.scope.value,
            slow_hosts=list(_hosts(slow)), fast_hosts=list(_hosts(fast)), nodes=slow.nodes))
    return out


def _pair_dependence(runs: list[tuple[Fact, float]]) -> list[Fact]:
    out: list[Fact] = []
    groups: dict[tuple, list[tuple[Fact, float]]] = {}
    for run, bw in runs:
        if run.nodes < 2 or not _hosts(run):
            continue
        groups.setdefault((run.collective, run.nodes, run.nranks, run.nccl_version), []).append((run, bw))
    for (collective, _, _, _), members in sorted(groups.items(), key=lambda kv: kv[0]):
        host_sets = {_hosts(r) for r, _ in members}
        if len(host_sets) < 2:
            continue
        best = max(bw for _, bw in members)
        slow = [(r, bw) for r, bw in members if bw / best <= 1 - MIN_DIFFERENCE]
        fast = [(r, bw) for r, bw in members if bw / best > 1 - MIN_DIFFERENCE]
        if not slow:
            continue
        in_slow = set.intersection(*(set(_hosts(r)) for r, _ in slow))
        in_fast = set().union(*(set(_hosts(r)) for r, _ in fast))
        common = sorted(in_slow - in_fast)
        first = min(slow, key=lambda t: t[1])[0]
        out.append(PairDependence(
            node=first.node, scope=first.scope, source=first.source, collective=collective,
            runs=len(members), slow_runs=len(slow), fast_runs=len(fast),
            ratio=round(min(bw for _, bw in members) / best, 4),
            common_slow_host=common[0] if len(common) == 1 else "",
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
    return _pairs(runs) + _pair_dependence(runs) + _falloff(facts)
