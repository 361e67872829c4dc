"""NICs NCCL uses against the rail NICs the node has (for a too-narrow NCCL_IB_HCA)."""

from __future__ import annotations

import re
from typing import Sequence

from clusterdx.facts.base import Fact
from clusterdx.facts.derive._common import of_type
from clusterdx.facts.model.derived import NcclNicUsage

_LOCAL_LINKS = ("PIX", "PXB")


def _dev(name: str) -> str:
    """'mlx5_0:1' -> 'mlx5_0'; '[0]mlx5_0' stays as given."""
    return name.split(":", 1)[0].strip()


def _natural(name: str) -> list:
    """'mlx5_10' after 'mlx5_9': digits compare as numbers."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def derive(facts: Sequence[Fact]) -> list[Fact]:
    nets = [n for n in of_type(facts, "nccl.net") if n.selected and n.transport == "IB" and n.devices]
    if not nets:
        return []
    best = max(nets, key=lambda n: n.device_count)
    used = {_dev(d) for d in best.devices}
    local = sorted({n.device for n in of_type(facts, "topo.nic") if n.device and n.best_gpu_link in _LOCAL_LINKS})
    if local:
        node_nics, basis = local, "topo"
    else:
        ports = sorted({p.device for p in of_type(facts, "ib.port") if p.state.lower() == "active"})
        if not ports:
            return []
        node_nics, basis = ports, "ib-ports"
    node_nics = sorted(node_nics, key=_natural)
    unused = [d for d in node_nics if d not in used]
    hca = ""
    for s in of_type(facts, "nccl.setting"):
        if s.name == "NCCL_IB_HCA":
            hca = s.value
    return [NcclNicUsage(node=best.node, scope=best.scope, source=best.source, nccl_nics=len(used),
                         node_nics=len(node_nics), nics=node_nics, unused=unused, unused_count=len(unused), ib_hca=hca,
                         basis=basis)]
