"""Where each rank may run, against the CPUs local to its GPU."""

from __future__ import annotations

from typing import Sequence

from clusterdx.facts.base import Fact
from clusterdx.facts.derive._common import of_type
from clusterdx.facts.model.derived import RankBinding


def _gpu_local_cpus(facts: Sequence[Fact]) -> dict[int, set[int]]:
    local = {g.gpu: set(g.cpus) for g in of_type(facts, "topo.gpu") if g.cpus}
    return local


def derive(facts: Sequence[Fact]) -> list[Fact]:
    local = _gpu_local_cpus(facts)
    if not local:
        return []
    out: list[Fact] = []
    candidates: list[tuple[int, int | None, list[int], Fact, str]] = []
    for a in of_type(facts, "proc.affinity"):
        gpu = a.local_rank if a.local_rank is not None else None
        if gpu is None and a.rank is not None:
            gpu = a.rank % max(len(local), 1)
        if gpu is not None and a.cpus:
            candidates.append((gpu, a.rank, a.cpus, a, f"{a.method} affinity, GPU = local rank"))
    for gpu, rank, cpus, fact, basis in candidates:
        if gpu not in local:
            continue
        allowed = set(cpus)
        overlap = len(allowed & local[gpu]) / len(allowed)
        out.append(RankBinding(node=fact.node, scope=fact.scope, source=fact.source, gpu=gpu, rank=rank,
                               allowed_cpus=len(allowed), local_overlap=round(overlap, 4),
                               local=overlap >= 0.99, remote=overlap == 0.0, basis=basis))
    return out
