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


def _table(rows: str) -> list:
    from clusterdx.facts.document import Document
    from clusterdx.facts.ingest import ingest_documents

    facts = ingest_documents([Document.from_text(rows, name="pairs.txt")]).facts
    return [f for f in derive_all(facts) if f.fact_type == "compare.node_pair_dependence"]


def test_pair_table_one_host_slow_with_every_peer_beside_another_slow_pair():
    # gn644 is slow with both its peers, each fast with another node; the 284/678 pair is slow too
    [dep] = _table("gn644,gn699  49.4\ngn632,gn641  88.4\ngn284,gn678  49.3\ngn641,gn644  49.3\n"
                   "gn404,gn699  86.8\n")
    assert (dep.collective, dep.common_slow_host, dep.slow_runs, dep.fast_runs) == ("pairwise", "gn644", 3, 2)


def test_pair_table_in_another_notation_names_the_host_of_the_one_slow_pair():
    # the one slow pair's host that is fast nowhere else (node1 is fast with node2)
    [dep] = _table("node1 + node2: 180.2 GB/s\nnode1 + node3: 96.0 GB/s\nnode2 + node4: 181.0 GB/s\n")
    assert dep.common_slow_host == "node3"


def test_pair_table_without_a_single_slow_host():
    # each node fast with some peer: a routing collision, not a node
    [dep] = _table("n1,n2 25.1\nn1,n3 39.0\nn2,n4 39.2\nn3,n4 38.8\n")
    assert dep.common_slow_host == ""
    # two hosts both slow twice with peers fast elsewhere: no single one
    [dep] = _table("n1,n5 20\nn1,n6 20\nn2,n5 20\nn2,n6 20\nn5,n6 80\nn3,n4 80\n")
    assert dep.common_slow_host == ""
