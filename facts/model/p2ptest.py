"""GPU peer-to-peer results of the CUDA sample ``p2pBandwidthLatencyTest``.

``a``/``b`` are the CUDA device ordinals the test prints (``Device: 0, ...``), not nvidia-smi
indices. Bandwidths in GB/s as the test prints them; only off-diagonal cells (two different GPUs)
are summarised, the diagonal is a GPU copying to itself.
"""

from clusterdx.facts.base import Fact


class P2pTestDevice(Fact):
    fact_type = "p2ptest.device"
    doc = "A GPU as listed by p2pBandwidthLatencyTest: ordinal, model and PCI bus number."
    device: int
    name: str = ""
    #: the PCI bus number the test prints in hex without prefix ('pciBusID: 5a'), as an integer
    bus: int | None = None
    domain: int | None = None


class P2pTestAccess(Fact):
    fact_type = "p2ptest.access"
    doc = "Whether the driver reports peer access from one GPU to another (cudaDeviceCanAccessPeer)."
    a: int
    b: int
    can: bool


class P2pTestSummary(Fact):
    fact_type = "p2ptest.summary"
    doc = "One per p2pBandwidthLatencyTest output: GPUs listed, peer-access pairs, the bus spacing of the GPUs."
    devices: int
    #: ordered pairs listed with 'CAN Access Peer' / 'CANNOT Access Peer'
    pairs_can: int = 0
    pairs_cannot: int = 0
    #: smallest difference between the PCI bus numbers of two listed GPUs (None with fewer than two
    #: bus numbers). Buses under one PCIe switch are numbered consecutively, so a large gap means
    #: the two GPUs hang off different root ports
    min_bus_gap: int | None = None


class P2pTestCompare(Fact):
    fact_type = "p2ptest.compare"
    doc = "P2P=Enabled against P2P=Disabled (staged through host memory) copy bandwidth between the same GPU pairs."
    #: 'unidirectional' | 'bidirectional'
    direction: str
    #: off-diagonal cells present in both matrices
    pairs: int
    enabled_median_gbps: float
    disabled_median_gbps: float
    #: enabled median / disabled median
    ratio: float
    #: pairs whose P2P copy is slower than the staged copy
    pairs_slower: int
    #: every pair's P2P copy is slower than its staged copy
    all_slower: bool = False
