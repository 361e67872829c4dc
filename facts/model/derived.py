"""Derived facts: arithmetic and cross-input comparisons computed once, so rules never redo them."""

from clusterdx.facts.base import Fact


class EnvPropagation(Fact):
    fact_type = "env.propagation"
    doc = "Host versus container environment (complete dumps on both sides): what did not reach the container."
    host_input: str
    container_input: str
    host_vars: int
    container_vars: int
    missing: list[str] = []
    missing_count: int = 0
    differing: list[str] = []
    differing_count: int = 0


class NcclSetting(Fact):
    fact_type = "nccl.setting"
    doc = "An NCCL_* setting in force (from the NCCL ENV log lines or a complete environment dump)."
    name: str
    value: str
    value_num: float | None = None
    origin: str = ""
    #: 'launcher' when the ticket says a framework or launcher forces this variable on the job
    #: (a ``reported.setting`` with ``by: launcher`` of the same name), else ''
    forced_by: str = ""


class NcclQpsEffective(Fact):
    fact_type = "nccl.qps_effective"
    doc = "Queue pairs per connection NCCL uses: NCCL_IB_QPS_PER_CONNECTION, or its default of 1 when unset."
    qps: int
    explicit: bool
    basis: str


class BusbwEfficiency(Fact):
    fact_type = "nccltests.efficiency"
    doc = "Bus bandwidth of a multi-node nccl-tests run as a fraction of the per-GPU network line rate."
    collective: str
    nodes: int
    nranks: int
    busbw: float
    size_bytes: int
    expected_busbw: float
    fraction: float
    basis: str
    #: the busbw is the user's word ("only gives 12 GB/s busbw"), not an nccl-tests output
    stated: bool = False


class CpuFreqShortfall(Fact):
    fact_type = "cpu.freq_shortfall"
    doc = "Observed busy CPU clock versus the CPU's maximum (turbo) clock."
    observed_mhz: float
    max_mhz: float
    ratio: float
    basis: str


class RankBinding(Fact):
    fact_type = "placement.rank_binding"
    doc = "A rank's allowed CPUs versus the CPUs local to its GPU (from nvidia-smi topo -m or NUMA layout)."
    gpu: int
    rank: int | None = None
    allowed_cpus: int
    local_overlap: float
    local: bool
    remote: bool
    basis: str


class CompareMetric(Fact):
    fact_type = "compare.metric"
    doc = "A measured number on the target and on the baseline, and their ratio (target / baseline)."
    metric: str
    target: float
    baseline: float
    ratio: float


class CompareEnvMissing(Fact):
    fact_type = "compare.env_missing"
    doc = "A communication-related variable set on the baseline (complete dump) but absent on the target."
    name: str
    baseline_value: str


class CompareSetting(Fact):
    fact_type = "compare.setting"
    doc = "A node setting that differs between target and baseline."
    what: str
    target: str
    baseline: str


class NcclNicUsage(Fact):
    fact_type = "nccl.nic_usage"
    doc = ("NICs NCCL's network transport uses versus the GPU-local (PIX/PXB) NICs nvidia-smi topo -m "
           "shows, or the active RDMA ports when no topology was given.")
    #: NICs in NCCL's 'NET/IB : Using [...]' list (largest list on the node)
    nccl_nics: int
    #: GPU-local NICs from nvidia-smi topo -m (PIX/PXB to some GPU), or active RDMA ports
    node_nics: int
    #: the node's NICs counted in ``node_nics``, by device name in natural order (mlx5_0, mlx5_3, mlx5_10)
    nics: list[str] = []
    #: node NICs absent from NCCL's list, by device name (mlx5_7 ...)
    unused: list[str] = []
    unused_count: int = 0
    #: NCCL_IB_HCA in force ('' when not set or not seen)
    ib_hca: str = ""
    #: 'topo' (GPU-local NICs) or 'ib-ports' (active ports)
    basis: str


class UcxPerftestPair(Fact):
    fact_type = "ucx.perftest_pair"
    doc = ("A ucx_perftest client connecting to its own host, pinned with -c, and where its server runs: "
           "the server's core when its line is shown, else the client's (a server takes the same options).")
    test: str = ""
    client_cpu: int
    #: the server's core as its command line pins it; None when no server line is shown or it is unpinned
    server_cpu: int | None = None
    server_shown: bool = False
    #: both processes on one core
    shared_core: bool

