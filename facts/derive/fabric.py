"""nccl-tests bus bandwidth against the network line rate the node can use.

The expected number comes from the reference system in force (``kb/reference/systems.yaml``,
chosen with ``--reference`` or inferred from the GPU model): NCCL busbw per rail NIC times the
NICs a node drives. A multi-node run is bounded by the network: 2 x 8 H100 on 8 x NDR reach
about 8 x 47 = 376 GB/s busbw. When the NCCL log shows fewer NICs in use than GPUs, that is the
count (a node with 4 NICs for 8 GPUs cannot beat 4 x 47).
"""

from __future__ import annotations

from typing import Sequence

from clusterdx.facts.base import Fact
from clusterdx.facts.derive._common import of_type
from clusterdx.facts.model.derived import BusbwEfficiency
from clusterdx.facts.reference import Selected, infer

#: only large messages reach the line rate; smaller runs say nothing about the fabric
MIN_SIZE_BYTES = 256 * 1024 * 1024


def _nics_per_node(facts: Sequence[Fact]) -> int | None:
    """NICs NCCL said it uses (NET/IB : Using [0]... [3]...), when a log is there."""
    counts = [n.device_count for n in of_type(facts, "nccl.net") if n.device_count and n.transport != "Socket"]
    return max(counts) if counts else None


def derive(facts: Sequence[Fact], reference: Selected | None = None) -> list[Fact]:
    out: list[Fact] = []
    runs = [r for r in of_type(facts, "nccltests.run") if r.nodes >= 2 and r.nranks >= 2]
    if not runs:
        return out
    ref = reference or infer(facts)
    if ref is None or not ref.nic_busbw_gbs:
        return out
    nics = _nics_per_node(facts)
    for run in runs:
        busbw, size = run.busbw_at_max_size, run.max_size
        if busbw is None or size is None or size < MIN_SIZE_BYTES:
            continue
        per_node = max(1, run.nranks // run.nodes)
        links = min(per_node, nics) if nics else min(per_node, ref.system.nics_per_node)
        expected = ref.nic_busbw_gbs * links
        basis = (f"{ref.system.id} ({ref.basis}): {ref.nic_busbw_gbs:g} GB/s per {ref.system.nic} NIC x {links} "
                 + ("NIC(s) in use per the NCCL log" if nics else "NIC(s) per node"))
        out.append(BusbwEfficiency(node=run.node, scope=run.scope, source=run.source, collective=run.collective,
                                   nodes=run.nodes, nranks=run.nranks, busbw=busbw, size_bytes=size,
                                   expected_busbw=expected, fraction=round(busbw / expected, 4), basis=basis))
    return out
