"""Robust outlier statistics, drift, difference ordering and the reference gap."""

from __future__ import annotations

from types import SimpleNamespace as NS

from clusterdx.engine import drift, outliers
from clusterdx.engine.diagnose import _gap
from clusterdx.facts.derive.compare import rank_differences, relevance
from clusterdx.facts.model.derived import BusbwEfficiency


def test_identical_peers_do_not_flag_rounding_noise():
    vals = {f"n{i}": {("gpu.sm_clock", "0"): (1980.0, "")} for i in range(6)}
    vals["n6"] = {("gpu.sm_clock", "0"): (1975.0, "")}
    assert outliers.find_outliers(vals) == []
    vals["n6"] = {("gpu.sm_clock", "0"): (1410.0, "")}
    assert [o.node for o in outliers.find_outliers(vals)] == ["n6"]


def test_good_direction_and_few_peers_are_not_outliers():
    vals = {f"n{i}": {("nccltests.busbw", "all_reduce"): (380.0, "")} for i in range(5)}
    vals["fast"] = {("nccltests.busbw", "all_reduce"): (760.0, "")}
    assert outliers.find_outliers(vals) == []
    three = {k: v for k, v in list(vals.items())[:2]} | {"slow": {("nccltests.busbw", "all_reduce"): (10.0, "")}}
    assert outliers.find_outliers(three) == []


def test_unset_counts_only_on_nodes_with_a_complete_environment():
    cfg = {f"n{i}": {"NCCL env": ("", ""), "NCCL env NCCL_IB_QPS_PER_CONNECTION": ("4", "")} for i in range(4)}
    cfg["n4"] = {"NCCL env": ("", "")}
    cfg["n5"] = {}  # no environment dump: says nothing
    [d] = drift.find_drift(cfg)
    assert d.category == "nccl-env" and [(n, v) for n, v, _ in d.differing] == [("n4", "(unset)")]
    assert d.nodes_total == 5


def test_no_majority_blames_nobody():
    cfg = {"a": {"NCCL version": ("1", "")}, "b": {"NCCL version": ("1", "")},
           "c": {"NCCL version": ("2", "")}, "d": {"NCCL version": ("2", "")}}
    assert drift.find_drift(cfg) == []


def test_differences_touching_top_evidence_come_first():
    diffs = [{"what": "kernel command line", "source": "c:1"}, {"what": "sysctl kernel.numa_balancing", "source": "s:1"},
             {"what": "CPU governors", "source": "g:1"}]
    assert [d["what"] for d in sorted(diffs, key=relevance)][0] == "sysctl kernel.numa_balancing"
    top = [NS(evidence=[NS(facts=[NS(source="g:1")], message="governor powersave")])]
    assert [d["what"] for d in rank_differences(diffs, top)] == [
        "CPU governors", "kernel command line", "sysctl kernel.numa_balancing"]


def test_gap_against_the_expected_busbw():
    eff = BusbwEfficiency(collective="all_reduce", nodes=2, nranks=16, busbw=300.0, size_bytes=1 << 33,
                          expected_busbw=376.0, fraction=0.7979, basis="H100 x 8")
    gap = _gap([eff])
    assert gap is not None and gap.basis == "reference" and not gap.meets_bar
    assert gap.gap_pct == 20.21 and gap.metric == "all_reduce busbw (GB/s)"
