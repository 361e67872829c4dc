"""nccl-tests bus bandwidth against the network line rate the GPUs can use."""

from __future__ import annotations

from typing import Sequence

from clusterdx.facts.base import Fact
from clusterdx.facts.derive._common import of_type
from clusterdx.facts.model.derived import BusbwEfficiency

#: GPU model substring -> achievable NCCL busbw per GPU over its rail NIC, GB/s.
#: NDR 400G reaches about 46-48 GB/s in NCCL; XDR 800G about 90-95 (domain.md section 3).
#: A multi-node run is bounded by the network: with one rail NIC per GPU, a node moves
#: GPUs-per-node times that (2 x 8 H100 on 8 x NDR: about 8 x 47 = 376 GB/s busbw).
NIC_BUSBW_PER_GPU = (
    ("GB300", 92.0), ("B300", 92.0),
    ("GB200", 47.0), ("B200", 47.0), ("H200", 47.0), ("H100", 47.0), ("H800", 47.0),
    ("A100", 23.0),
)

#: only large messages reach the line rate; smaller runs say nothing about the fabric
MIN_SIZE_BYTES = 256 * 1024 * 1024


def expected_busbw(gpu_model: str) -> tuple[float, str] | None:
    for key, bw in NIC_BUSBW_PER_GPU:
        if key.lower() in gpu_model.lower():
            return bw, f"{key}: one rail NIC per GPU, {bw:g} GB/s busbw"
    return None


def _nics_per_node(facts: Sequence[Fact]) -> int | None:
    """NICs NCCL said it uses (NET/IB : Using [0]... [3]...), when a log is there."""
    counts = [n.device_count for n in of_type(facts, "nccl.net") if n.device_count and n.transport != "Socket"]
    return max(counts) if counts else None


def derive(facts: Sequence[Fact]) -> list[Fact]:
    out: list[Fact] = []
    nics = _nics_per_node(facts)
    for run in of_type(facts, "nccltests.run"):
        if run.nodes < 2 or run.nranks < 2:
            continue
        busbw, size = run.busbw_at_max_size, run.max_size
        if busbw is None or size is None or size < MIN_SIZE_BYTES:
            continue
        exp = expected_busbw(run.gpu_model)
        if exp is None:
            continue
        per_node = max(1, run.nranks // run.nodes)
        # the node's network is the bottleneck: one NIC per GPU unless the NCCL log shows fewer
        links = min(per_node, nics) if nics else per_node
        expected = exp[0] * links
        basis = f"{exp[1]} x {links} NIC(s) per node" + (" (from the NCCL log)" if nics else " (one per GPU assumed)")
        out.append(BusbwEfficiency(node=run.node, scope=run.scope, source=run.source, collective=run.collective,
                                   nodes=run.nodes, nranks=run.nranks, busbw=busbw, size_bytes=size,
                                   expected_busbw=expected, fraction=round(busbw / expected, 4), basis=basis))
    return out
