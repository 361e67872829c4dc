"""Derived NVLink facts: what the node's GPUs support (NVLS, multi-node NVLink) and how many NVLink
domains (cliques) the inputs of one job span. Computed by :mod:`clusterdx.facts.derive.nvlink`."""

from clusterdx.facts.base import Fact


class NvlinkPlatform(Fact):
    fact_type = "nvlink.platform"
    doc = ("What the GPU model seen in the inputs supports: NVLink SHARP (NVSwitch multicast, NVLS) and "
           "multi-node NVLink (GB200/GB300 NVL72 trays).")
    #: the GPU model name the decision is based on ('NVIDIA H100 80GB HBM3', 'NVIDIA GB200')
    model: str
    #: Hopper/Blackwell SXM GPUs on NVSwitch (HGX/DGX H100/H200/H800/H20/B200/B300, GB200/GB300):
    #: NCCL can use NVLS there; False for PCIe/NVL-bridge cards, A100 and older, GH200
    nvls_capable: bool
    #: GB200/GB300 NVL72 compute trays: NVLink spans trays (MNNVL through IMEX)
    mnnvl_capable: bool
    #: NVLinks per GPU when all are up (18 on NVLink 4/5 SXM parts), None when unknown
    links_per_gpu: int | None = None
    #: the GPUs sit on NVSwitch chips (HGX/DGX 8-GPU boards, NVL72 trays): CUDA waits for the fabric
    #: manager there; False for PCIe/NVL cards and parts without NVSwitch boards; None when the
    #: GPU count seen does not tell
    nvswitch: bool | None = None
    #: GPUs on the node as the inputs give them, None when not known
    gpus: int | None = None
    basis: str = ""


class NvlinkCliqueSplit(Fact):
    fact_type = "nvlink.clique_split"
    doc = ("NVLink domains (fabric cluster UUID + clique id) spanned by the nodes of one job, from NCCL "
           "'MNNVL ... cliqueId' lines or nvidia-smi fabric info of several nodes; a job that fits in one "
           "NVL72 rack but spans several cliques is fragmented.")
    #: distinct registered cliques among the job's nodes
    cliques: int
    #: 'clusterUUID/cliqueId' of each clique, sorted
    clique_ids: list[str] = []
    #: nodes (hosts, or input files when host names are not known) with a registered clique
    nodes: int
    #: cliques the nodes would need if packed (ceil(nodes / 18) for NVL72 trays)
    needed: int = 1
    #: cliques beyond the needed ones (0 when packed)
    excess: int = 0
    #: GPUs seen whose fabric registration is not complete (not counted in any clique)
    unregistered: int = 0
    #: 'nccl' (MNNVL log lines) or 'nvidia-smi' (fabric section / query)
    basis: str


class NvlinkBridgeBandwidth(Fact):
    fact_type = "nvlink.bridge_bandwidth"
    doc = ("Bus bandwidth of a two-GPU nccl-tests run on NVLink-bridged PCIe cards, in links' worth: the "
           "peak busbw over one link's line rate (kb/gazetteers/gpus.yaml nvlink_link_gbs).")
    #: the gazetteer model of the cards
    model: str
    #: NVLink links per GPU by design for the bridged form
    links_by_design: int
    #: one link's line rate, GB/s each way
    link_gbs: float
    collective: str
    busbw: float
    size_bytes: int
    #: busbw / link_gbs: what the run moved in units of one link's line rate
    links_worth: float
    #: 'reported' (the ticket says the cards are bridged) or 'topo' (nvidia-smi topo shows NV#)
    bridge_seen: str
    basis: str
