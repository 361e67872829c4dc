"""nccl-tests bus bandwidth against the network line rate the GPUs can use."""

from __future__ import annotations

from typing import Sequence

from clusterdx.facts.base import Fact
from clusterdx.facts.derive._common import of_type
from clusterdx.facts.model.derived import BusbwEfficiency

#: GPU model substring -> achievable NCCL busbw per GPU over its rail NIC, GB/s.
#: NDR 400G reaches about 46-48 GB/s in NCCL; XDR 800G about 90-95 (domain.md section 3).
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


def derive(facts: Sequence[Fact]) -> list[Fact]:
    out: list[Fact] = []
    for run in of_type(facts, "nccltests.run"):
        if run.nodes < 2 or run.nranks < 2:
            continue
        busbw, size = run.busbw_at_max_size, run.max_size
        if busbw is None or size is None or size < MIN_SIZE_BYTES:
            continue
        exp = expected_busbw(run.gpu_model)
        if exp is None:
            continue
        out.append(BusbwEfficiency(node=run.node, scope=run.scope, source=run.source, collective=run.collective,
                                   nodes=run.nodes, nranks=run.nranks, busbw=busbw, size_bytes=size,
                                   expected_busbw=exp[0], fraction=round(busbw / exp[0], 4), basis=exp[1]))
    return out
