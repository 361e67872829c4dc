"""A remediation's steps for one diagnosis: commands filled with values the evidence supplied.

A step's command may name values (``export NCCL_IB_HCA={rail_nics}``); the values come from the
``data`` of the rules whose evidence supports the cause, so the rule decides what a value is and
this module only substitutes it. A value no evidence supplied stays a visible placeholder
(``<rail NICs>``), never a guess. Only names the step declares are substituted, so shell braces
(``'{{json .Config}}'``, ``awk '{print $1}'``) pass through untouched.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

from clusterdx.engine.report import AlternativeOut, StepOut, VerificationOut
from clusterdx.facts.nodes import is_unlabelled

#: ``{name}`` a value, a list comma-joined; ``{name|}`` a list space-joined (``unset A B``);
#: ``{name|-e}`` each item after the flag (``-e A -e B``, ``-x A -x B``)
_NAME = re.compile(r"\{([a-z_][a-z0-9_]*)(\|(?:-{1,2}[a-z][a-z-]{0,30})?)?\}")


#: values the diagnosis supplies to every remediation, beside the rules' data: ``node``, the one
#: named machine the supporting evidence came from (a drain command names it); ``gpu_cpus`` and
#: ``gpu_numa``, the node's GPU-local CPUs and NUMA nodes; ``roce_netdevs``, the network interfaces
#: of its RoCE ports; ``default_power_w``, its GPUs' default power limit; ``cores_per_rank`` and
#: ``omp_threads``, its physical cores per GPU and that less two (:func:`node_command_values`)
ENGINE_VALUES = frozenset({"node", "gpu_cpus", "gpu_numa", "roce_netdevs", "default_power_w", "cores_per_rank",
                           "omp_threads"})


def names_in(command: str) -> set[str]:
    """The value names a command template uses, in any of the forms of :data:`_NAME`."""
    return {m.group(1) for m in _NAME.finditer(command)}


def evidence_values(evidence: Iterable[Any]) -> dict[str, Any]:
    """Named values from the supporting evidence's rule data; the first rule to supply a name wins.

    ``node`` (:data:`ENGINE_VALUES`) is the machine the evidence's facts name when they name one
    only; evidence from several hosts, or from unlabelled input, leaves it a placeholder."""
    out: dict[str, Any] = {}
    hosts: set[str] = set()
    for ev in evidence:
        for key, value in (getattr(ev, "data", None) or {}).items():
            if value not in (None, "", [], {}) and key not in out:
                out[key] = value
        hosts |= {f.node for f in getattr(ev, "facts", None) or () if not is_unlabelled(f.node)}
    if len(hosts) == 1 and "node" not in out:
        out["node"] = hosts.pop()
    return out


def node_command_values(facts: Iterable[Any]) -> dict[str, Any]:
    """Values a command can take from the node itself, each from its own source (:data:`_NODE_SOURCES`);
    a value its source cannot pin to one node is absent."""
    facts = list(facts)
    out: dict[str, Any] = {}
    for source in _NODE_SOURCES:
        out.update(source(facts))
    return out


def _gpu_affinity(facts: list[Any]) -> dict[str, Any]:
    """Each GPU's local CPUs and NUMA node in GPU order, space-separated for a shell array a launcher
    indexes by local rank (``cpus=({gpu_cpus})``), only for one node whose topo -m lists GPUs 0..n-1
    with their affinity."""
    from clusterdx.facts.parsers._util import cpu_ranges

    by_node: dict[str, dict[int, Any]] = {}
    for f in facts:
        if f.fact_type == "topo.gpu":
            by_node.setdefault(f.node, {})[f.gpu] = f
    gpus = next(iter(by_node.values())) if len(by_node) == 1 else {}
    if not gpus or sorted(gpus) != list(range(len(gpus))):
        return {}
    ordered = [gpus[i] for i in range(len(gpus))]
    out: dict[str, Any] = {}
    if all(g.cpus for g in ordered):
        out["gpu_cpus"] = " ".join(cpu_ranges(g.cpus) for g in ordered)
    if all(g.numa_node is not None for g in ordered):
        out["gpu_numa"] = " ".join(str(g.numa_node) for g in ordered)
    return out


def _core_budget(facts: list[Any]) -> dict[str, Any]:
    """One rank per GPU: a rank's share of the physical cores (lscpu), two left for NCCL and the
    runtime, when lscpu and the GPUs are of one node."""
    cpu = [f for f in facts if f.fact_type == "cpu.info" and f.sockets and f.cores_per_socket]
    gpu_ids = {(f.node, f.gpu) for f in facts if f.fact_type in ("gpu.device", "topo.gpu")}
    if len({f.node for f in cpu}) != 1 or len({n for n, _ in gpu_ids}) != 1 or cpu[0].node != next(iter(gpu_ids))[0]:
        return {}
    per = cpu[0].sockets * cpu[0].cores_per_socket // len(gpu_ids)
    return {"cores_per_rank": str(per), "omp_threads": str(max(1, per - 2))} if per >= 1 else {}


def _default_power(facts: list[Any]) -> dict[str, Any]:
    """The GPUs' default power limit (nvidia-smi -q), when one node's GPUs share one: one default to
    restore."""
    limits = {(f.node, f.default_power_limit_w) for f in facts
              if f.fact_type == "gpu.device" and getattr(f, "default_power_limit_w", None)}
    return {"default_power_w": f"{next(iter(limits))[1]:g}"} if len(limits) == 1 else {}


def _roce_netdevs(facts: list[Any]) -> dict[str, Any]:
    """The netdevs of one node's RoCE ports. The link layer (ibstat, sysfs) and the netdev
    (ibdev2netdev) often come from different tools, so they are joined by (node, device)."""
    roce = {(f.node, f.device) for f in facts if f.fact_type == "ib.port" and f.link_layer == "Ethernet"}
    netdev = {(f.node, f.device): f.netdev for f in facts
              if f.fact_type in ("ib.port", "net.netdev_map") and getattr(f, "netdev", "")}
    named = {netdev[k] for k in roce if k in netdev}
    if named and len({n for n, _ in roce}) == 1 and all(k in netdev for k in roce):
        return {"roce_netdevs": sorted(named, key=_natural)}
    return {}


#: where each node value comes from; :data:`ENGINE_VALUES` names what they supply
_NODE_SOURCES = (_gpu_affinity, _core_budget, _default_power, _roce_netdevs)


def _natural(name: str) -> tuple:
    """ens1f0 < ens2f0 < ens10f0: names in the order a person reads them."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))


def node_values(facts: Iterable[Any], gap: Any = None) -> dict[str, str]:
    """Values a verification step can state for this node, as it prints them, with where each came
    from: the CPU's max turbo (lscpu), the busbw the reference implies (``--reference``), the
    width a degraded PCIe link should train at (LnkCap, nvidia-smi's max width). A value the
    inputs do not give is absent, so its step keeps its generic words."""
    out: dict[str, str] = {}
    mhz = [f.max_mhz for f in facts if f.fact_type == "cpu.info" and getattr(f, "max_mhz", None)]
    if mhz:
        out["cpu_max_mhz"] = f"{max(mhz):g} MHz (lscpu's CPU max MHz)"
    widths = sorted({w for f in facts for w in (
        [f.cap_width] if f.fact_type == "pcie.link" and getattr(f, "width_downgraded", False) else
        [f.width_max] if f.fact_type == "gpu.pcie" and getattr(f, "width_downgraded", False) else []) if w})
    if widths:
        out["link_width"] = "/".join(f"x{w}" for w in widths)
    if gap is not None and gap.basis == "reference" and gap.reference:
        out["reference_busbw"] = (f"at least {gap.reference * gap.bar:.4g} GB/s ({gap.bar:.0%} of the "
                                  f"reference's {gap.reference:g} GB/s)")
    elif gap is not None and gap.basis == "baseline" and gap.reference:
        out["reference_busbw"] = f"within {1 - gap.bar:.0%} of the baseline's {gap.reference:g} ({gap.metric})"
    return out


def render_verification(v: Any, values: Mapping[str, Any]) -> VerificationOut:
    """A verification step with the values this node supplied; an unknown one keeps its words."""
    command, used = fill(v.command, v.values, values)
    expect, used_e = fill(v.expect, v.values, values)
    return VerificationOut(check=v.check, command=command, expect=expect, recovery_pct=list(v.recovery_pct),
                           values={**used, **used_e})


def as_text(value: Any, join: str | None = None) -> str:
    """A value as a command takes it: a list comma-joined (NCCL, taskset and numactl lists), or
    with ``join`` (``|`` and an optional flag, see :data:`_NAME`) one word per item."""
    items = list(value) if isinstance(value, (list, tuple, set)) else [value]
    words = ["1" if v is True else "0" if v is False else str(v) for v in items]
    if join is None:
        return ",".join(words)
    flag = join[1:]
    return " ".join(f"{flag} {w}" if flag else w for w in words)


def fill(template: str, declared: Mapping[str, str], values: Mapping[str, Any]) -> tuple[str, dict[str, str]]:
    """(the command, the values used): declared names replaced by their value or placeholder."""
    used: dict[str, str] = {}

    def sub(m: re.Match[str]) -> str:
        name, join = m.group(1), m.group(2)
        if name not in declared:
            return m.group(0)
        if name in values:
            used[name] = as_text(values[name])
            return as_text(values[name], join)
        return declared[name] or f"<{name}>"

    return _NAME.sub(sub, template), used


def render_step(step: Any, values: Mapping[str, Any]) -> StepOut:
    command, needs_root = step.command, step.needs_root
    for variant in step.variants:
        if all(name in values and as_text(values[name]) == want for name, want in variant.when.items()):
            command = variant.command
            if variant.needs_root is not None:
                needs_root = variant.needs_root
            break
    text, used = fill(command, step.values, values)
    alternatives = []
    for alt in step.alternatives:
        alt_cmd, alt_used = fill(alt.command, step.values, values)
        used.update(alt_used)
        alternatives.append(AlternativeOut(text=alt.text.strip(), command=alt_cmd, needs_root=alt.needs_root))
    return StepOut(text=step.text.strip(), command=text, needs_root=needs_root, values=used,
                   alternatives=alternatives)
