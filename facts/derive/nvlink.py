"""NVLink platform capabilities and NVLink-domain (clique) spread of a job.

``nvlink.platform`` says whether the GPU model seen (nvidia-smi, nccl-tests device lines, nvlink -s
headers) sits on NVSwitch and so supports NVLink SHARP, and whether it is an NVL72 tray whose NVLink
spans trays. ``nvswitch`` says whether the node's GPUs hang off NVSwitch chips, so that CUDA needs
the fabric manager before it can start: an SXM part of an NVSwitch generation
(``nvswitch_gpus`` in kb/gazetteers/gpus.yaml) on a board with that many GPUs, or named as its DGX
("DGX A100"); PCIe and NVL cards and parts without NVSwitch boards never; None when the GPU count
does not say (fewer GPUs seen may be a container's share of an 8-GPU board). ``nvlink.clique_split`` counts the NVLink domains the job's nodes belong to, from NCCL's
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
from clusterdx.facts.gazetteer import GpuRow, gazetteers
from clusterdx.facts.model.derived_nvlink import NvlinkBridgeBandwidth, NvlinkCliqueSplit, NvlinkPlatform


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
    nvswitch, gpus = _nvswitch(name, facts)
    return [NvlinkPlatform(node=src.node, scope=src.scope, source=src.source, model=name, nvls_capable=nvls,
                           mnnvl_capable=mnnvl, links_per_gpu=links, nvswitch=nvswitch, gpus=gpus, basis=basis)]


def _row(name: str) -> GpuRow | None:
    """The gazetteer row whose name stands as a word in a tool's product name ('NVIDIA A100-SXM4-80GB')."""
    found: tuple[int, GpuRow] | None = None
    for row in gazetteers().gpus:
        for n in row.names:
            if re.search(r"(?<![\w])" + re.escape(n) + r"(?![\w])", name, re.I) and (found is None or len(n) > found[0]):
                found = (len(n), row)
    return found[1] if found else None


def _gpu_count(facts: Sequence[Fact]) -> int | None:
    counts = [f.attached_gpus or f.gpus for f in of_type(facts, "gpu.summary")]
    counts += [f.count for f in of_type(facts, "reported.inventory") if f.item == "gpu"]
    counts.append(len({(f.node, f.gpu) for f in of_type(facts, "gpu.device")}))
    counts = [c for c in counts if c]
    return max(counts) if counts else None


def _nvswitch(name: str, facts: Sequence[Fact]) -> tuple[bool | None, int | None]:
    row = _row(name)
    gpus = _gpu_count(facts)
    stated = [f for f in of_type(facts, "reported.inventory") if f.item == "gpu" and f.model == (row.model if row else None)]
    if _MNNVL.search(name) and not _NOT_SXM.search(name):
        return True, gpus  # an NVL72 compute tray: its GPUs reach each other through the switch trays
    if row is None:
        return None, gpus
    if not row.nvswitch_gpus or _NOT_SXM.search(name) or any(f.form in ("PCIe", "NVL") for f in stated):
        return False, gpus
    if any(f.interconnect == "NVSwitch" for f in stated) or (gpus or 0) >= row.nvswitch_gpus:
        return True, gpus
    return None, gpus


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


#: a result below this size is still climbing towards the plateau a link's rate is compared with
_PLATEAU_BYTES = 16 << 20
_NV_LINK = lazyre.compile(r"^NV\d{1,2}$")


def _bridge_bandwidth(facts: Sequence[Fact]) -> list[Fact]:
    """Two bridged cards' nccl-tests busbw in links' worth. Only two ranks on one host: with more GPUs
    the ring also crosses PCIe between bridge pairs, and the slowest hop sets the busbw."""
    said = [f for f in of_type(facts, "reported.inventory") if f.item == "gpu" and f.interconnect == "NVLink"]
    topo = any(f.kind == "gpu-gpu" and _NV_LINK.match(f.link or "") for f in of_type(facts, "topo.link"))
    if not said and not topo:
        return []
    out: list[Fact] = []
    for run in of_type(facts, "nccltests.run"):
        if run.nranks != 2 or run.nodes > 1 or not run.peak_busbw or (run.peak_busbw_size or 0) < _PLATEAU_BYTES:
            continue
        row = _row(run.gpu_model) if run.gpu_model else None
        if row is None and said:
            row = next((r for r in gazetteers().gpus if r.model == said[0].model), None)
        links = row.links_for("PCIe") if row else None
        if row is None or not row.nvlink_link_gbs or not links:
            continue
        worth = round(run.peak_busbw / row.nvlink_link_gbs, 2)
        out.append(NvlinkBridgeBandwidth(
            node=run.node, scope=run.scope, source=run.source, model=row.model, links_by_design=links,
            link_gbs=row.nvlink_link_gbs, collective=run.collective, busbw=run.peak_busbw,
            size_bytes=run.peak_busbw_size or 0, links_worth=worth, bridge_seen="reported" if said else "topo",
            basis=f"{run.peak_busbw} GB/s {run.collective} busbw over {row.nvlink_link_gbs} GB/s per link "
                  f"({row.model}, {links} links by design)"))
    return out


def derive(facts: Sequence[Fact]) -> list[Fact]:
    out = _platform(facts) + _bridge_bandwidth(facts)
    for fn in (_from_nccl, _from_smi):
        fact = fn(facts)
        if fact is not None:
            out.append(fact)
    return out
