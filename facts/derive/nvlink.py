"""NVLink platform capabilities and NVLink-domain (clique) spread of a job.

``nvlink.platform`` says whether the GPU model seen (nvidia-smi, nccl-tests device lines, nvlink -s
headers) sits on NVSwitch and so supports NVLink SHARP, and whether it is an NVL72 tray whose NVLink
spans trays. ``nvlink.clique_split`` counts the NVLink domains the job's nodes belong to, from NCCL's
``MNNVL busId ... cliqueId 0x.. state N`` lines (one host per node) or from the nvidia-smi fabric
information of several nodes (``-q`` Fabric section or ``--query-gpu=fabric.*``). A GPU whose fabric
registration is not complete (NCCL state other than 3, nvidia-smi state not ``Completed``, or an
all-zero cluster UUID) belongs to no clique and is counted as unregistered instead.
"""

from __future__ import annotations

import math
import re
from typing import Sequence

from clusterdx.facts import lazyre
from clusterdx.facts.base import Fact
from clusterdx.facts.derive._common import of_type
from clusterdx.facts.model.derived_nvlink import NvlinkCliqueSplit, NvlinkPlatform


#: trays in one NVL72 rack (NVLink domain): 18 trays x 4 GPUs
TRAYS_PER_DOMAIN = 18
#: NVML GPU fabric state COMPLETED as NCCL prints it
NCCL_STATE_COMPLETED = 3

_NOT_SXM = lazyre.compile(r"PCIe|\bNVL\b|\bNVL\d|GH200|\bMIG\b", re.IGNORECASE)
_MNNVL = lazyre.compile(r"\bGB[23]00\b", re.IGNORECASE)
_NVLS = lazyre.compile(r"\b(?:H100|H200|H800|H20|B200|B300|GB200|GB300)\b", re.IGNORECASE)


def _models(facts: Sequence[Fact]) -> list[tuple[str, Fact]]:
    out: list[tuple[str, Fact]] = []
    for f in facts:
        t = f.fact_type
        if t == "gpu.device" and f.name:
            out.append((f.name, f))
        elif t == "gpu.summary":
            out.extend((m, f) for m in f.models or [])
        elif t in ("nccltests.run", "nccltests.device") and getattr(f, "gpu_model", ""):
            out.append((f.gpu_model, f))
        elif t == "gpu.nvlink_summary" and f.name:
            out.append((f.name, f))
    return out


def _platform(facts: Sequence[Fact]) -> list[Fact]:
    models = _models(facts)
    if not models:
        return []
    # an NVL72 model wins over a generic one (GB200 over B200), a capable one over an incapable one
    def rank(item: tuple[str, Fact]) -> tuple[int, int]:
        name = item[0]
        return (1 if _MNNVL.search(name) else 0, 1 if _NVLS.search(name) and not _NOT_SXM.search(name) else 0)

    name, src = max(models, key=rank)
    mnnvl = bool(_MNNVL.search(name))
    nvls = bool(_NVLS.search(name)) and not _NOT_SXM.search(name)
    links = 18 if nvls else None
    basis = f"GPU model {name!r} from {src.fact_type}"
    return [NvlinkPlatform(node=src.node, scope=src.scope, source=src.source, model=name, nvls_capable=nvls,
                           mnnvl_capable=mnnvl, links_per_gpu=links, basis=basis)]


def _zero_uuid(uuid: str) -> bool:
    return not uuid or not uuid.strip("0-x.")


def _split(groups: dict[str, set[str]], unregistered: int, basis: str, anchor: Fact) -> Fact | None:
    nodes = {n for n, cl in groups.items() if cl}
    cliques = sorted({c for cl in groups.values() for c in cl})
    if len(nodes) < 2 and len(cliques) < 2:
        return None
    needed = max(1, math.ceil(len(nodes) / TRAYS_PER_DOMAIN))
    return NvlinkCliqueSplit(node=anchor.node, scope=anchor.scope, source=anchor.source, cliques=len(cliques),
                             clique_ids=cliques, nodes=len(nodes), needed=needed,
                             excess=max(0, len(cliques) - needed), unregistered=unregistered, basis=basis)


def _from_nccl(facts: Sequence[Fact]) -> Fact | None:
    lines = of_type(facts, "nccl.mnnvl")
    if not lines:
        return None
    groups: dict[str, set[str]] = {}
    bad = 0
    for m in lines:
        groups.setdefault(m.node, set())
        if m.state != NCCL_STATE_COMPLETED or _zero_uuid(m.fabric_uuid):
            bad += 1
            continue
        groups[m.node].add(f"{m.fabric_uuid}/{m.clique_id}")
    return _split(groups, bad, "nccl", lines[0])


def _from_smi(facts: Sequence[Fact]) -> Fact | None:
    fabrics = [f for f in of_type(facts, "gpu.fabric") if f.state or f.clique_id]
    if not fabrics:
        return None
    # one tray per nvidia-smi document: the input file names the node when host names are not known
    hosts = {f.node for f in fabrics}
    groups: dict[str, set[str]] = {}
    bad = 0
    for f in fabrics:
        key = f.node if len(hosts) > 1 else f.source.input
        groups.setdefault(key, set())
        if f.state != "Completed" or _zero_uuid(f.cluster_uuid):
            bad += 1
            continue
        groups[key].add(f"{f.cluster_uuid}/{f.clique_id}")
    return _split(groups, bad, "nvidia-smi", fabrics[0])


def derive(facts: Sequence[Fact]) -> list[Fact]:
    out = _platform(facts)
    for fn in (_from_nccl, _from_smi):
        fact = fn(facts)
        if fact is not None:
            out.append(fact)
    return out
