"""nccl-tests bus bandwidth against the network line rate the node can use.

The expected number comes from the reference system in force (``kb/reference/systems.yaml``,
chosen with ``--reference`` or inferred from the GPU model): NCCL busbw per rail NIC times the
NICs a node drives. A multi-node run is bounded by the network: 2 x 8 H100 on 8 x NDR reach
about 8 x 47 = 376 GB/s busbw. When the NCCL log shows fewer NICs in use than GPUs, that is the
count (a node with 4 NICs for 8 GPUs cannot beat 4 x 47). Where neither the log nor a chosen
reference says, a NIC inventory the user reported (``8x ConnectX-7 400G``, or a cloud instance
type expanded through ``kb/gazetteers``) sets the count and rate, and the efficiency fact is
marked ``provenance="reported"`` (evidence on it is weighed one level lower). A ticket with no
nccl-tests output but a sentence with a multi-node busbw is held to the same figure (:func:`_stated`).

Only runs that reach the size the rule ``nccltests-small-max-size`` asks of a bandwidth claim are
held to the line rate (its ``min_bytes``, site overrides included): smaller ones say nothing about
the fabric.
"""

from __future__ import annotations

import re
from typing import Sequence

from clusterdx.facts import lazyre
from clusterdx.facts.base import Fact
from clusterdx.facts.derive._common import of_type
from clusterdx.facts.model.derived import BusbwEfficiency
from clusterdx.facts.derive.thresholds import SMALL_MESSAGE_BYTES, Params, value
from clusterdx.facts.reference import Selected, infer, shipped


def _nics_per_node(facts: Sequence[Fact]) -> int | None:
    """NICs NCCL said it uses (NET/IB : Using [0]... [3]...), when a log is there."""
    counts = [n.device_count for n in of_type(facts, "nccl.net") if n.device_count and n.transport != "Socket"]
    return max(counts) if counts else None


def _reported_nics(facts: Sequence[Fact]) -> Fact | None:
    """The GPU NICs the user reported (count and rate, e.g. from a cloud instance type)."""
    said = [f for f in of_type(facts, "reported.inventory") if f.item == "nic" and f.count and f.gbps]
    return said[0] if said else None


def _reported_gpus(facts: Sequence[Fact]) -> int | None:
    counts = [f.count for f in of_type(facts, "reported.inventory") if f.item == "gpu" and f.count]
    return counts[0] if counts else None


def _busbw_per_nic(gbps: float) -> float:
    """NCCL busbw one NIC of this line rate reaches: the reference table's figure for a link of that
    rate, else the rate scaled by the NDR link's busbw-per-line-rate ratio (47 of 50 GB/s)."""
    table = shipped()
    for link in table.links.values():
        if link.gbps == gbps and link.nccl_busbw_gbs:
            return link.nccl_busbw_gbs
    ndr = table.links["ndr-400g"]
    return gbps / 8.0 * (ndr.nccl_busbw_gbs or 0.0) / ((ndr.gbps or 400.0) / 8.0)


#: a number stated as a bound or a target, not as what was measured: "busbw exceeds 100Gbps",
#: "should reach 370 GB/s", "up to 50 GB/s"
_BOUND_WORDS = lazyre.compile(r"\b(?:exceed\w{0,3}|above|beyond|more\s+than|higher\s+than|greater\s+than|up\s+to|"
                          r"expect\w{0,3}|should|theoretical\w{0,2}|peak|line[\s-]rate|target|nominal)\b", re.I)


def _stated(facts: Sequence[Fact], reference: Selected | None) -> list[Fact]:
    """A multi-node busbw the user states in words ("all_reduce_perf between two nodes only gives
    12 GB/s busbw"): the number and the node count from one sentence, held against the NICs the
    ticket reports or the reference its GPUs imply. Reported, so weighed one level lower; the size
    is not known, so it is 0."""
    work = {(w.source.input, w.source.line): w for w in of_type(facts, "reported.workload") if w.nodes and w.nodes >= 2}
    said = [(m, work[(m.source.input, m.source.line)]) for m in of_type(facts, "reported.metric")
            if m.metric == "busbw" and m.value_norm > 0 and (m.source.input, m.source.line) in work
            and not _BOUND_WORDS.search(m.text)]
    if not said:
        return []
    metric, w = min(said, key=lambda mw: mw[0].value_norm)
    nics = _reported_nics(facts)
    ref = reference or infer(facts)
    gpus = _reported_gpus(facts) or (ref.system.gpus_per_node if ref else None)
    if nics is not None and gpus:
        links = max(1, min(nics.count, gpus))
        per_nic = _busbw_per_nic(nics.gbps)
        basis = (f"reported by the user: {nics.count}x {nics.model or 'NIC'} at {nics.gbps:g} Gb/s for {gpus} GPUs; "
                 f"{per_nic:g} GB/s busbw per NIC x {links} NIC(s)")
    elif ref is not None and ref.nic_busbw_gbs and gpus:
        links, per_nic = min(gpus, ref.system.nics_per_node), ref.nic_busbw_gbs
        basis = f"{ref.system.id} ({ref.basis}): {per_nic:g} GB/s per {ref.system.nic} NIC x {links} NIC(s) per node"
    else:
        return []
    expected = round(per_nic * links, 2)
    return [BusbwEfficiency(node=metric.node, scope=metric.scope, source=metric.source,
                            collective=w.collective or "all_reduce", nodes=w.nodes, nranks=w.nodes * gpus,
                            busbw=metric.value_norm, size_bytes=0, expected_busbw=expected,
                            fraction=round(metric.value_norm / expected, 4), basis=basis, provenance="reported",
                            stated=True)]


def derive(facts: Sequence[Fact], reference: Selected | None = None, params: Params | None = None) -> list[Fact]:
    out: list[Fact] = []
    min_size = value(SMALL_MESSAGE_BYTES, params)
    runs = [r for r in of_type(facts, "nccltests.run") if r.nodes >= 2 and r.nranks >= 2]
    if not runs:
        return _stated(facts, reference)
    ref = reference or infer(facts)
    nics = _nics_per_node(facts)
    # a reported NIC inventory stands in only where no measurement (NCCL's NIC list) and no
    # reference the user chose (--reference) says how many NICs there are
    said = _reported_nics(facts) if nics is None and (reference is None or not reference.basis.startswith("given")) else None
    if said is None and (ref is None or not ref.nic_busbw_gbs):
        return out
    for run in runs:
        busbw, size = run.busbw_at_max_size, run.max_size
        if busbw is None or size is None or size < min_size:
            continue
        per_node = max(1, run.nranks // run.nodes)
        if said is not None:
            gpus = _reported_gpus(facts) or (ref.system.gpus_per_node if ref else per_node)
            per_nic = _busbw_per_nic(said.gbps)
            # the NICs the ranks of one node drive: their share of the node's NICs, at least one
            links = max(1, min(said.count, said.count * per_node // max(1, gpus)))
            expected = round(per_nic * links, 2)
            basis = (f"reported by the user: {said.count}x {said.model} at {said.gbps:g} Gb/s"
                     + (f" ({said.instance_type})" if said.instance_type else "")
                     + f" for {gpus} GPUs; {per_nic:g} GB/s busbw per NIC x {links} NIC(s) for {per_node} rank(s) per node")
            out.append(BusbwEfficiency(node=run.node, scope=run.scope, source=run.source, collective=run.collective,
                                       nodes=run.nodes, nranks=run.nranks, busbw=busbw, size_bytes=size,
                                       expected_busbw=expected, fraction=round(busbw / expected, 4), basis=basis,
                                       provenance="reported"))
            continue
        if ref is None or not ref.nic_busbw_gbs:
            continue
        links = min(per_node, nics) if nics else min(per_node, ref.system.nics_per_node)
        expected = ref.nic_busbw_gbs * links
        basis = (f"{ref.system.id} ({ref.basis}): {ref.nic_busbw_gbs:g} GB/s per {ref.system.nic} NIC x {links} "
                 + ("NIC(s) in use per the NCCL log" if nics else "NIC(s) per node"))
        out.append(BusbwEfficiency(node=run.node, scope=run.scope, source=run.source, collective=run.collective,
                                   nodes=run.nodes, nranks=run.nranks, busbw=busbw, size_bytes=size,
                                   expected_busbw=expected, fraction=round(busbw / expected, 4), basis=basis))
    return out
