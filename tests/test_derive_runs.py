"""Runs compared inside one ticket: pair dependence, one slow host, NCCL version, container, size falloff."""

from __future__ import annotations

import doctest
from pathlib import Path

from clusterdx.engine.diagnose import collect_paths, diagnose
from clusterdx.facts import versions
from clusterdx.facts.base import Scope, SourceRef
from clusterdx.facts.derive import derive_all
from clusterdx.facts.ingest import ingest
from clusterdx.facts.model.nccltests import NcclTestsRun

RUNS = Path(__file__).parent / "fixtures" / "runs"


def _derived(*names: str, kind: str) -> list:
    facts = ingest([RUNS / n for n in names]).facts
    return [f for f in derive_all(facts) if f.fact_type == kind]


def test_versions_doctests():
    assert doctest.testmod(versions).failed == 0


def test_version_order_is_numeric_not_lexical():
    assert versions.compare_versions("2.9.6", "2.10.3") == -1
    assert versions.compare_versions("2.27.3+cuda12.9", "2.27.3") == 0
    assert versions.compare_versions("x", "2.1") is None
    assert versions.in_range("2.19.3", ">=2.19", "<2.20")
    assert not versions.in_range("2.2.13", ">=2.19")
    assert not versions.in_range("unknown", ">=2.19")


def test_pair_without_common_host_is_routing_like():
    [dep] = _derived("pair-a-b.txt", "pair-a-c.txt", "pair-b-c.txt", kind="compare.node_pair_dependence")
    assert dep.common_slow_host == ""
    assert dep.slow_host_sets == ["node-a+node-b"] and dep.ratio < 0.7


def test_one_host_in_every_slow_run_is_named():
    [dep] = _derived("pair-a-b.txt", "pair-a-c.txt", "pair-b-c-slow.txt", kind="compare.node_pair_dependence")
    assert dep.common_slow_host == "node-b"


def test_equal_runs_make_no_comparison():
    assert _derived("pair-a-c.txt", "pair-b-c.txt", kind="compare.node_pair_dependence") == []
    assert _derived("pair-a-c.txt", "pair-b-c.txt", kind="compare.run_pair") == []


def test_falloff_found_and_plateau_not():
    [f] = _derived("falling.txt", kind="nccltests.size_falloff")
    assert f.peak_busbw == 22.0 and f.ratio < 0.4
    assert _derived("pair-a-c.txt", kind="nccltests.size_falloff") == []


def _run(version: str, busbw: float, scope: Scope = Scope.host, hosts=("a", "b")) -> NcclTestsRun:
    return NcclTestsRun(node="a", scope=scope, source=SourceRef(input=f"{version}-{busbw}.txt"), run_index=0,
                        collective="sendrecv", nranks=8, nodes=2, hosts=list(hosts), nccl_version=version,
                        max_size=1 << 29, busbw_at_max_size=busbw)


def test_run_pair_names_the_only_difference():
    facts = derive_all([_run("2.19.4", 24.2), _run("2.20.5", 18.3)])
    [pair] = [f for f in facts if f.fact_type == "compare.run_pair"]
    assert pair.differs == ["nccl_version"] and pair.slow_is_newer_nccl == 1
    assert pair.slow_nccl_version == "2.20.5"


def test_run_pair_in_container():
    facts = derive_all([_run("2.19.4", 24.2), _run("2.19.4", 3.1, Scope.container)])
    [pair] = [f for f in facts if f.fact_type == "compare.run_pair"]
    assert pair.differs == ["scope"] and pair.slow_scope == "container"


def test_fast_run_does_not_cancel_slow_run(kb):
    """The fast pairs reach line rate; that must not refute what the slow pair shows."""
    report = diagnose(collect_paths([RUNS / "pair-a-b.txt", RUNS / "pair-a-c.txt", RUNS / "pair-b-c.txt"]), kb=kb)
    top = report.hypotheses[0]
    assert top.id == "ib-adaptive-routing-sl-mismatch"
    assert all(t.delta_logit >= 0 for t in top.score), top.score
    straggler = diagnose(collect_paths([RUNS / "pair-a-b.txt", RUNS / "pair-a-c.txt", RUNS / "pair-b-c-slow.txt"]), kb=kb)
    assert straggler.hypotheses[0].id == "single-degraded-node-straggler"
