"""Derived facts, computed once from parsed facts (combiners, in insights-core terms).

``derive_all(facts)`` returns the parsed facts plus every derived fact; ``compare(target,
baseline)`` returns the facts and the human-readable differences of a target/baseline pair.
Each derived fact points at the input line of the fact it was computed from, so evidence built
on it still leads back to the user's file.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from clusterdx.facts.base import Fact
from clusterdx.facts.deadline import Deadline
from clusterdx.facts.derive import compare as _compare
from clusterdx.facts.derive import bench_pairs, cloud, cpu, env, fabric, links, nccl_nics, nvlink, placement, releases, reported, runs
from clusterdx.facts.derive import platform as platform_role
from clusterdx.facts.derive.thresholds import Params
from clusterdx.facts.reference import Selected

DERIVERS = (platform_role.derive, env.derive, fabric.derive, cpu.derive, placement.derive, nccl_nics.derive,
            nvlink.derive, links.derive, runs.derive, releases.derive, cloud.derive, bench_pairs.derive)
#: derivers that take the reference system in force
_WITH_REFERENCE = (fabric.derive, links.derive)
#: derivers that take the rule parameters in force (their cuts are rules' thresholds, see thresholds.py)
_WITH_PARAMS = (fabric.derive,)

#: derived fact type -> the parsed fact types it is computed from (any of them may be the one
#: missing); used to tell which collection would let a derived fact exist
SOURCES: dict[str, frozenset[str]] = {
    "env.propagation": frozenset({"env.dump", "env.var"}),
    "nccl.setting": frozenset({"nccl.env", "env.var"}),
    "nccl.qps_effective": frozenset({"nccl.env", "env.dump"}),
    "nccltests.efficiency": frozenset({"nccltests.run", "reported.metric"}),
    "cpu.freq_shortfall": frozenset({"cpu.turbostat", "cpu.effective_freq", "cpu.info"}),
    "placement.rank_binding": frozenset({"proc.affinity", "topo.gpu"}),
    "compare.metric": frozenset({"train.step_stats"}),
    "compare.env_missing": frozenset({"env.dump", "env.var"}),
    "compare.setting": frozenset(),
    "nccl.nic_usage": frozenset({"nccl.net", "topo.nic", "ib.port"}),
    "nvlink.platform": frozenset({"gpu.device", "gpu.summary", "nccltests.run", "nccltests.device", "gpu.nvlink_summary"}),
    "nvlink.clique_split": frozenset({"nccl.mnnvl", "gpu.fabric"}),
    "nvlink.bridge_bandwidth": frozenset({"nccltests.run", "reported.inventory", "topo.link"}),
    "ib.rate_check": frozenset({"ib.port"}),
    "ib.link_health": frozenset({"ib.port"}),
    "nccl.roce_config": frozenset({"nccl.net"}),
    "proc.thread_load": frozenset({"proc.status"}),
    "compare.run_pair": frozenset({"nccltests.run"}),
    "ucx.perftest_pair": frozenset({"ucx.perftest"}),
    "compare.node_pair_dependence": frozenset({"nccltests.run"}),
    "nccltests.size_falloff": frozenset({"nccltests.run", "nccltests.result"}),
    "nccl.release_issue": frozenset({"nccl.version", "nccltests.run"}),
    "platform.role": frozenset({"platform.virtualization", "cpu.info", "platform.dmi", "env.dump"}),
    # any fact names its node; a device name is the other sign
    "platform.cloud_sign": frozenset({"ib.device", "nccl.plugin", "nccl.net"}),
}


def obtainable(yields: set[str] | frozenset[str]) -> set[str]:
    """Fact types a collection yielding ``yields`` can lead to, derived ones included."""
    out = set(yields)
    for derived, sources in SOURCES.items():
        if sources & out:
            out.add(derived)
    return out


def derive_all(facts: Sequence[Fact], reference: "Selected | None" = None,
               warnings: list[str] | None = None, params: Params | None = None,
               deadline: Deadline | None = None) -> list[Fact]:
    """Parsed facts plus derived ones; ``reference`` is the system the measurements are held to
    (inferred from the facts when None); ``params`` the rule parameters in force (the shipped
    defaults when None).

    A deriver that raises (a value it cannot compute with, a bug) costs its own output only: the
    failure is appended to ``warnings`` (when given) and the other derivers still run. Past
    ``deadline`` the derivers left are not run (and noted in its ledger).
    """
    out = reported.reconcile(facts)
    for fn in DERIVERS:
        if deadline is not None and deadline.passed():
            deadline.not_derived(getattr(fn, "__module__", "?").rsplit(".", 1)[-1] + "." + fn.__name__)
            continue
        out.extend(run_deriver(fn, out, reference, warnings, params))
    return out


def run_deriver(fn: Callable[..., list[Fact]], facts: list[Fact], reference: "Selected | None" = None,
                warnings: list[str] | None = None, params: Params | None = None) -> list[Fact]:
    """One deriver's facts, or none (with a warning) when it raises."""
    try:
        args: list[Any] = [facts, reference] if fn in _WITH_REFERENCE else [facts]
        made = fn(*args, params=params) if fn in _WITH_PARAMS else fn(*args)
    except Exception as exc:  # one bad fact must not cost the report
        if warnings is not None:
            where = getattr(fn, "__module__", "?").rsplit(".", 1)[-1]
            warnings.append(f"derived facts of {where} dropped: {type(exc).__name__}: "
                            f"{str(exc).splitlines()[0][:200] if str(exc) else ''}")
        return []
    return [f for f in made if isinstance(f, Fact)]


def compare(target: Sequence[Fact], baseline: Sequence[Fact],
            warnings: list[str] | None = None) -> tuple[list[Fact], list[dict[str, Any]]]:
    """Comparison facts and differences; nothing (with a warning) when the comparison raises."""
    try:
        return _compare.compare(target, baseline)
    except Exception as exc:  # a bad pair of inputs costs the comparison, not the report
        if warnings is not None:
            warnings.append(f"target/baseline comparison dropped: {type(exc).__name__}: {str(exc)[:200]}")
        return [], []
