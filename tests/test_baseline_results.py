"""--baseline compares results as well as settings: nccl-tests busbw per collective at the largest
size both sides measured, and the step time and throughput of training logs."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterdx.engine.diagnose import collect_paths, run_diagnosis
from clusterdx.engine.evaluate import RuleEngine
from clusterdx.facts.base import Scope, SourceRef
from clusterdx.facts.derive import compare
from clusterdx.facts.model.nccltests import NcclTestsResult, NcclTestsRun
from clusterdx.facts.model.train import StepStats

SIZES = [1 << 20, 1 << 26, 1 << 28, 1 << 30, 1 << 33]


def _run(side: str, curve: list[float], *, version: str = "2.19.4", nodes: int = 2, collective: str = "all_reduce",
         scope: Scope = Scope.host, sizes: list[int] = SIZES) -> list:
    src = SourceRef(input=f"{side}-{collective}-{nodes}.txt")
    rows = [NcclTestsResult(node=side, scope=scope, source=src, run_index=0, collective=collective, nranks=8 * nodes,
                            size_bytes=s, count=s // 4, dtype="float", oop_time_us=1.0, oop_algbw=bw, oop_busbw=bw)
            for s, bw in zip(sizes, curve)]
    run = NcclTestsRun(node=side, scope=scope, source=src, run_index=0, collective=collective, nranks=8 * nodes,
                       nodes=nodes, hosts=[f"{side}{i}" for i in range(nodes)], nccl_version=version,
                       max_size=sizes[len(curve) - 1], busbw_at_max_size=curve[-1], completed=True)
    return [run] + rows


PLATEAU = [40.0, 300.0, 360.0, 370.0, 370.0]


def _pairs(target: list, baseline: list) -> list:
    facts, _ = compare(target, baseline)
    return [f for f in facts if f.fact_type == "compare.run_pair"]


def _diff(target: list, baseline: list, prefix: str) -> list[dict]:
    _, diffs = compare(target, baseline)
    return [d for d in diffs if d["what"].startswith(prefix)]


def test_slower_target_becomes_a_run_pair_at_the_largest_common_size():
    [p] = _pairs(_run("t", [40.0, 300.0, 300.0, 190.0, 185.0]), _run("b", PLATEAU))
    assert p.against == "baseline" and p.size_bytes == 1 << 33
    assert (p.slow_busbw, p.fast_busbw) == (185.0, 370.0) and p.ratio == 0.5
    assert p.differs == [] and p.n_differs == 0  # other host names are the premise of a baseline


def test_largest_sizes_decide_not_the_small_ones():
    # slower only at the latency-bound sizes: no comparison fact
    assert _pairs(_run("t", [10.0, 150.0, 355.0, 368.0, 369.0]), _run("b", PLATEAU)) == []
    # the target sweep stops at 1 GiB: compared at 1 GiB, the largest size both measured
    [p] = _pairs(_run("t", [40.0, 300.0, 300.0, 250.0]), _run("b", PLATEAU))
    assert p.size_bytes == 1 << 30 and p.fast_busbw == 370.0


def test_noise_and_faster_targets_make_no_pair_but_are_shown():
    assert _pairs(_run("t", PLATEAU[:-1] + [340.0]), _run("b", PLATEAU)) == []  # 0.92: run-to-run noise
    assert _pairs(_run("t", PLATEAU[:-1] + [330.0]), _run("b", PLATEAU))  # 0.89: a difference
    assert _pairs(_run("t", PLATEAU), _run("b", PLATEAU[:-1] + [200.0])) == []  # the baseline is the slow one
    [d] = _diff(_run("t", PLATEAU), _run("b", PLATEAU[:-1] + [200.0]), "nccl-tests ")
    assert d["what"] == "nccl-tests all_reduce busbw over 2 node(s) at 8 GiB (GB/s)"
    assert d["target"].startswith("370") and d["baseline"] == "200"


def test_only_like_runs_are_compared():
    small = [1 << 20, 1 << 24]  # below the sizes worth comparing
    assert _pairs(_run("t", [40.0, 100.0], sizes=small), _run("b", [40.0, 300.0], sizes=small)) == []
    assert _pairs(_run("t", [40.0, 300.0, 300.0, 190.0, 185.0], nodes=1), _run("b", PLATEAU)) == []
    assert _pairs(_run("t", [40.0, 300.0, 300.0, 190.0, 185.0], collective="all_gather"), _run("b", PLATEAU)) == []


def test_per_collective_differences():
    target = _run("t", [40.0, 300.0, 300.0, 190.0, 185.0]) + _run("t", PLATEAU, collective="all_gather")
    baseline = _run("b", PLATEAU) + _run("b", PLATEAU, collective="all_gather")
    whats = [d["what"] for d in _diff(target, baseline, "nccl-tests ")]
    assert whats == ["nccl-tests all_gather busbw over 2 node(s) at 8 GiB (GB/s)",
                     "nccl-tests all_reduce busbw over 2 node(s) at 8 GiB (GB/s)"]
    assert [p.collective for p in _pairs(target, baseline)] == ["all_reduce"]


def _engine(kb, rule: str) -> RuleEngine:
    return RuleEngine(kb, [rule], {})


@pytest.mark.parametrize("busbw, fires", [(310.0, True), (318.0, False)])  # 0.838 and 0.859 of 370, rule at 0.85
def test_newer_nccl_on_the_target_reaches_the_version_rule(kb, busbw, fires):
    target = _run("t", PLATEAU[:-1] + [busbw], version="2.20.5")
    facts, _ = compare(target, _run("b", PLATEAU, version="2.19.4"))
    [p] = [f for f in facts if f.fact_type == "compare.run_pair"]
    assert p.differs == ["nccl_version"] and p.slow_is_newer_nccl == 1
    engine = _engine(kb, "runs-slower-after-nccl-change")
    try:
        results, _ = engine.evaluate(facts)
    finally:
        engine.close()
    assert results[0].outcome == ("fired" if fires else "silent")


def test_container_target_against_host_baseline_reaches_the_container_rule(kb):
    facts, _ = compare(_run("t", PLATEAU[:-1] + [120.0], scope=Scope.container), _run("b", PLATEAU))
    engine = _engine(kb, "runs-slower-only-in-container")
    try:
        results, _ = engine.evaluate(facts)
    finally:
        engine.close()
    assert results[0].outcome == "fired"


def _steps(side: str, ms: float, tokens: float | None) -> StepStats:
    return StepStats(node=side, scope=Scope.host, source=SourceRef(input=f"{side}.log"), framework="nemo",
                     iterations=50, first_iter=1, last_iter=50, warmup_excluded=5, median_ms=ms, mean_ms=ms,
                     p95_ms=ms, max_ms=ms, max_iter=10, cv=0.01, window_median_ms=ms, tokens_per_s_median=tokens)


def test_step_time_and_throughput_both_compared():
    facts, diffs = compare([_steps("t", 1150.0, 2800.0)], [_steps("b", 1000.0, 3200.0)])
    metrics = {f.metric: f.ratio for f in facts if f.fact_type == "compare.metric"}
    assert metrics == {"step_time_ms": 1.15, "tokens_per_s": 0.875}
    assert [d["what"].split(" (")[0] for d in diffs] == ["step time", "throughput"]
    # throughput only where both sides logged it
    facts, _ = compare([_steps("t", 1150.0, None)], [_steps("b", 1000.0, 3200.0)])
    assert [f.metric for f in facts if f.fact_type == "compare.metric"] == ["step_time_ms"]


TEMPLATE = """$ mpirun -np 2 -H {a},{b} ./build/all_reduce_perf -b 1M -e 8G -f 4
# nccl-tests version 2.13.8 nccl-headers={code} nccl-library={code}
# nThread 1 nGpus 1 minBytes 1048576 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid  41022 on {a} device  0 [0x07] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid  39811 on {b} device  0 [0x07] NVIDIA H100 80GB HBM3
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
{rows}# Out of bounds values : 0 OK
# Avg bus bandwidth    : 30.0
#
"""


def _file(path: Path, code: int, hosts: tuple[str, str], curve: list[float]) -> Path:
    rows = "".join(f"{s:>12} {s // 4:>13}     float     sum      -1   100.0  {bw:6.2f}  {bw:6.2f}      0   100.0  "
                   f"{bw:6.2f}  {bw:6.2f}      0\n" for s, bw in zip(SIZES, curve))
    path.write_text(TEMPLATE.format(code=code, a=hosts[0], b=hosts[1], rows=rows))
    return path


def test_diagnose_with_baseline_shows_busbw_and_blames_the_upgrade(kb, tmp_path):
    slow = _file(tmp_path / "after-upgrade.txt", 22005, ("gpu-a", "gpu-b"), [8.0, 21.0, 23.0, 18.0, 17.5])
    good = _file(tmp_path / "before-upgrade.txt", 21904, ("gpu-c", "gpu-d"), [8.0, 21.0, 23.5, 24.0, 24.1])
    report = run_diagnosis(collect_paths([slow]), collect_paths([good]), kb).report
    [d] = [d for d in report.differences if d.what.startswith("nccl-tests ")]
    assert d.what == "nccl-tests all_reduce busbw over 2 node(s) at 8 GiB (GB/s)"
    assert d.baseline == "24.1" and d.target.startswith("17.5")
    outcomes = {r.rule: r.outcome for r in report.rules}
    assert outcomes["runs-slower-after-nccl-change"] == "fired"
    assert "nccl-version-regression" in [h.id for h in report.hypotheses[:3]]
