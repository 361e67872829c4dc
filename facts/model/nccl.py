"""NCCL runtime facts, read from NCCL_DEBUG=INFO/WARN logs.

Every type carries ``rank`` (global rank of the process that printed the line: its rank in the
largest communicator that process joined, None when the log never says), ``pid`` and
``cuda_dev`` (the ``[N]`` CUDA ordinal of the line prefix). Facts that aggregate many lines
(``nccl.transport_summary``, ``nccl.p2p_unavailable``) leave them None. ``node`` is the hostname
from the line prefix when the line has one.
"""

from pydantic import model_validator

from clusterdx.facts.base import Fact


class _NcclFact(Fact):
    rank: int | None = None
    pid: int | None = None
    cuda_dev: int | None = None


class NcclVersion(_NcclFact):
    fact_type = "nccl.version"
    doc = "NCCL library version and the CUDA toolkit it was built for (one per node and version)."
    version: str
    version_num: int
    cuda: str = ""


class NcclCudaDriver(_NcclFact):
    fact_type = "nccl.cuda_driver"
    doc = "CUDA driver API version NCCL reports (cudaDriverVersion 12060 -> '12.6')."
    version_num: int
    version: str


class NcclEnv(_NcclFact):
    fact_type = "nccl.env"
    doc = "An NCCL parameter NCCL saw set (origin 'environment', 'plugin' when a net plugin set it, else the 'set by' text)."
    name: str
    value: str
    origin: str = "environment"


class NcclBootstrap(_NcclFact):
    fact_type = "nccl.bootstrap"
    doc = "Interface and address NCCL uses for bootstrap/out-of-band traffic."
    interface: str
    address: str = ""


class NcclNet(_NcclFact):
    fact_type = "nccl.net"
    doc = "Network NCCL uses ('IB', 'Socket', or a plugin's name) with the devices it listed."
    net: str
    #: 'IB', 'Socket' (also a net plugin whose libfabric provider is tcp/sockets/udp), or ''
    transport: str = ""
    selected: bool = True
    devices: list[str] = []
    device_count: int = 0
    roce: bool = False
    relaxed_ordering: bool = False
    sharp: bool = False
    oob_if: str = ""


class NcclIbUnavailable(_NcclFact):
    fact_type = "nccl.ib_unavailable"
    doc = "NCCL could not use InfiniBand/RoCE verbs (reason 'no_device', 'libibverbs_missing' or 'other')."
    reason: str
    message: str


class NcclPlugin(_NcclFact):
    fact_type = "nccl.plugin"
    doc = "Outcome of loading an NCCL plugin (kind net/coll/tuner/profiler; status loaded/not_found/failed)."
    kind: str
    name: str
    loaded: bool
    status: str
    plugin_version: str = ""
    message: str = ""


class NcclChannels(_NcclFact):
    fact_type = "nccl.channels"
    doc = ("Channel counts of communicators on a node (None where the line does not say); count: the ranks "
           "of the node that printed these counts, the first's pid, cuda_dev and line kept.")
    count: int = 1
    coll: int | None = None
    collnet: int | None = None
    nvls: int | None = None
    p2p: int | None = None
    p2p_per_peer: int | None = None


class NcclTransportSummary(Fact):
    fact_type = "nccl.transport_summary"
    doc = "Peer connections of one node by transport (NET/IB, NET/Socket, P2P/CUMEM, SHM, NVLS ...)."
    transport: str
    connections: int
    gdr_connections: int = 0
    pxn_connections: int = 0
    nics: list[str] = []
    net_names: list[str] = []
    modes: list[str] = []
    processes: int = 0
    rank: int | None = None
    pid: int | None = None
    cuda_dev: int | None = None
    #: connections without GPUDirect RDMA (filled from the two counts when not given)
    plain_connections: int | None = None

    @model_validator(mode="before")
    @classmethod
    def _plain(cls, data):
        if isinstance(data, dict) and data.get("plain_connections") is None:
            try:
                data = {**data, "plain_connections": max(0, int(data["connections"]) - int(data.get("gdr_connections") or 0))}
            except (KeyError, TypeError, ValueError):
                pass
        return data


class NcclP2pUnavailable(Fact):
    fact_type = "nccl.p2p_unavailable"
    doc = "NCCL could not enable P2P between GPU pairs of one node (pairs as 'busA-busB')."
    pairs: int
    bus_pairs: list[str] = []
    rank: int | None = None
    pid: int | None = None
    cuda_dev: int | None = None


class NcclRingConnected(_NcclFact):
    fact_type = "nccl.ring_connected"
    doc = "Rings connected; PXN / GDR use when the version prints them (count = identical lines on the node)."
    pxn: int | None = None
    gdr: int | None = None
    count: int = 1


class NcclAffinity(_NcclFact):
    fact_type = "nccl.affinity"
    doc = ("CPU set NCCL binds its threads to for a node's GPUs (empty: process mask and GPU-local CPUs "
           "disjoint); count: the processes of the node given this set, gpu and the line the first's.")
    count: int = 1
    gpu: int
    affinity: str
    cpus: list[int] = []
    empty: bool = False
    gpu_affinity: str = ""
    cpu_affinity: str = ""


class NcclGdrHca(_NcclFact):
    fact_type = "nccl.gdr_hca"
    doc = "GPUDirect RDMA capability of one NIC as NCCL's net transport sees it."
    hca: str
    hca_index: int
    enabled: bool
    net: str = ""


class NcclGdrGpu(_NcclFact):
    fact_type = "nccl.gdr_gpu"
    doc = ("GPUDirect RDMA decision for one GPU/NIC pair (distance = PCI path class vs the GDR level; "
           "gpu_bus is the bus id, the CUDA device number in 2.4-2.5's 'GPU 0[0]' form); count: the "
           "processes of the node that printed the same decision and distances, gpu_bus, hca_index and the line "
           "the first's.")
    count: int = 1
    gpu_bus: str
    hca_index: int
    enabled: bool
    distance: int | None = None
    max_distance: int | None = None
    read: int | None = None


class NcclNvls(_NcclFact):
    fact_type = "nccl.nvls"
    doc = ("Whether NVLink SHARP (NVLS multicast) is available on a node's devices; count: the processes "
           "that said so, dev and the line the first's.")
    count: int = 1
    available: bool
    dev: int


class NcclMnnvl(_NcclFact):
    fact_type = "nccl.mnnvl"
    doc = "Multi-node NVLink fabric state of one GPU (state / health_mask as NCCL prints them)."
    bus_id: str
    fabric_uuid: str
    clique_id: str
    state: int
    health_mask: str


class NcclComm(_NcclFact):
    fact_type = "nccl.comm"
    doc = ("Shape of communicators on a node (comm ... nRanks nNodes localRanks ...): count processes of the "
           "node printed this shape; comm_rank, local_rank, pid, cuda_dev and the line are the first's.")
    count: int = 1
    comm_rank: int
    nranks: int
    nnodes: int | None = None
    local_ranks: int | None = None
    local_rank: int | None = None
    mnnvl: bool | None = None


class NcclTopoFile(_NcclFact):
    fact_type = "nccl.topo_file"
    doc = "A topology XML NCCL loaded or failed to load (error holds the failure message)."
    path: str
    loaded: bool
    error: str = ""


class NcclGraphSystem(_NcclFact):
    fact_type = "nccl.graph_system"
    doc = "Detected topology bandwidths (=== System : maxBw totalBw ===, older maxWidth/totalWidth), GB/s (None where the version does not print it)."
    max_bw: float
    total_bw: float | None = None


class NcclGraph(_NcclFact):
    fact_type = "nccl.graph"
    doc = "One topology search result (pattern, channels, intra/inter bw GB/s and path types; 'speed' in NCCL < 2.13)."
    pattern: int
    cross_nic: int
    nchannels: int
    bw_intra: float
    bw_inter: float
    type_intra: str
    type_inter: str
    same_channels: int | None = None


class NcclInitComplete(_NcclFact):
    fact_type = "nccl.init_complete"
    doc = ("Communicators of nranks ranks finished init: count Init COMPLETE lines (started: Init START "
           "lines) from nodes hosts in comms communicators; node, rank, bus_id and comm_id are the first's.")
    comm_rank: int
    nranks: int
    bus_id: str = ""
    comm_id: str = ""
    count: int = 1
    started: int = 0
    nodes: int = 1
    comms: int = 0


class NcclInitTimings(_NcclFact):
    fact_type = "nccl.init_timings"
    doc = ("Init time breakdown in seconds of one rank of a communicator of nranks (NCCL 2.23+). With count > 1 "
           "the slowest of count ranks that timed init (median_total, min_total over them all; first_line: "
           "the first timing's line); count 1: one of the next slowest, or the only one.")
    count: int = 1
    median_total: float | None = None
    min_total: float | None = None
    first_line: int | None = None
    comm_rank: int
    nranks: int
    total: float
    kernels: float | None = None
    alloc: float | None = None
    bootstrap: float | None = None
    allgathers: float | None = None
    topo: float | None = None
    graphs: float | None = None
    connections: float | None = None
    rest: float | None = None


class NcclDataDirect(_NcclFact):
    fact_type = "nccl.data_direct"
    doc = "NCCL detected a Data Direct DMA interface (ConnectX-8 DirectNIC) for a device."
    device: str


class NcclWarn(_NcclFact):
    fact_type = "nccl.warn"
    doc = "An NCCL WARN (category net/topo/env/cuda/bootstrap/proxy/init/other; count = repeats on the node)."
    message: str
    category: str
    code_location: str = ""
    function: str = ""
    timestamp: str = ""
    result: int | None = None
    ib_wc_status: int | None = None
    hca: str = ""
    hint: str = ""
    count: int = 1


class NcclChannel(_NcclFact):
    fact_type = "nccl.channel"
    doc = ("Network connections of a node's processes by direction and NIC (Channel/Ring ... via NET/...): "
           "connections = lines, peers = distinct peer ranks (communicator ranks as printed, first 64 in "
           "peer_ranks), proxy_rank the PXN proxy; nic is NCCL's net device index, "
           "nic_name its name from the process's NET/<x> : Using list when printed; processes: how many "
           "processes of the node use the NIC so (pid, cuda_dev: the first's).")
    processes: int = 1
    direction: str  # send, receive, or "" (not printed)
    transport: str
    nic: str
    nic_name: str = ""
    proxy_rank: int | None = None
    gdr: bool = False
    shared: bool = False
    connections: int = 0
    peers: int = 0
    peer_ranks: list[int] = []


class NcclTopoIgnored(_NcclFact):
    fact_type = "nccl.topo_ignored"
    doc = ("Something NCCL's topology detection could not read and ignored or replaced by a default "
           "(reason no_real_path / unreadable / not_pci / no_speed / xml_ignored / kv_fallback / "
           "search_fallback / env_ignored / ignored).")
    what: str
    reason: str
    message: str = ""
    count: int = 1


class NcclTopoNode(_NcclFact):
    fact_type = "nccl.topo_node"
    doc = ("One node of the topology tree NCCL printed (NCCL_DEBUG_SUBSYS=GRAPH): type GPU/PCI/NVS/"
           "CPU/NIC/NET, the link that reaches it and its bandwidth in GB/s; gpu_rank for GPUs, "
           "net_bw (GB/s) for NETs, under_cpu the CPU (NUMA) root it was printed under.")
    node_type: str
    node_id: str
    link_type: str = ""
    link_bw: float | None = None
    detail: str = ""
    gpu_rank: int | None = None
    net_bw: float | None = None
    under_cpu: str = ""


class NcclEce(_NcclFact):
    fact_type = "nccl.ece"
    doc = ("Enhanced Connection Establishment state NCCL read (query) or set on IB QPs, per IB device "
           "and port (count = QP lines).")
    ib_dev: int
    port: int
    kind: str  # query or set
    supported: bool
    vendor_id: str = ""
    options: str = ""
    comp_mask: str = ""
    count: int = 1


class NcclIbQp(_NcclFact):
    fact_type = "nccl.ib_qp"
    doc = ("IB queue pairs NCCL created, per IB device/port and path MTU (mtu = IB enum 1..5, "
           "mtu_bytes = 256..4096); addressing LID (IB) or GID (RoCE) with the GID index.")
    ib_dev: int
    port: int
    mtu: int
    mtu_bytes: int
    addressing: str
    gid_index: int | None = None
    count: int = 1


class NcclAlgoSelection(_NcclFact):
    fact_type = "nccl.algo_selection"
    doc = ("Algorithm and protocol NCCL chose for a collective (NCCL_DEBUG_SUBSYS=TUNING, rank 0), "
           "counted over sizes min_bytes..max_bytes.")
    function: str
    algo: str
    proto: str
    count: int = 1
    min_bytes: int = 0
    max_bytes: int = 0
    kernel: str = ""


class NcclAlgoEnabled(_NcclFact):
    fact_type = "nccl.algo_enabled"
    doc = "One row of the 'Enabled NCCL Func/Proto/Algo Matrix' (which protocols and algorithms a function may use)."
    function: str
    protocols: list[str] = []
    protocols_off: list[str] = []
    algorithms: list[str] = []
    algorithms_off: list[str] = []


class NcclTrees(_NcclFact):
    fact_type = "nccl.trees"
    doc = "Trees line of a communicator: number of tree channels printed (one per node and count)."
    channels: int


class NcclCc(_NcclFact):
    fact_type = "nccl.cc"
    doc = "Confidential-computing state NCCL reports (CC On/Off, Multi-GPU CC On/Off where printed)."
    enabled: bool
    multi_gpu: bool | None = None


class NcclTopoPaths(_NcclFact):
    fact_type = "nccl.topo_paths"
    doc = ("Path classes NCCL computed from one GPU or NET to the GPUs and NETs of the node "
           "(GRAPH subsystem, 'GPU/0-18000 :GPU/0-18000 (0/5000.0/LOC) ... NET/0-0 (5/24.0/PXB)'): "
           "targets as 'NET/0-0' -> class (LOC, NVL, NVB, C2C, PIX, PXB, PXN, P2C, PHB, SYS, NET) and "
           "bandwidth in GB/s; best_net_path the closest class to any NET.")
    src_type: str
    src_id: str
    paths: dict[str, str] = {}
    bw: dict[str, float] = {}
    best_net_path: str = ""
