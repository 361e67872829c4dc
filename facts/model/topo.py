"""GPU/NIC topology from ``nvidia-smi topo -m``."""

from clusterdx.facts.base import Fact


class TopoGpu(Fact):
    fact_type = "topo.gpu"
    doc = "A GPU's CPU and NUMA affinity as printed by nvidia-smi topo -m."
    gpu: int
    cpus: list[int] = []
    #: first node of 'NUMA Affinity' (the PCIe attachment node); None when N/A or not printed
    numa_node: int | None = None
    #: all nodes of 'NUMA Affinity' ('0,3-9' on Grace)
    numa_nodes: list[int] = []
    #: 'GPU NUMA ID': NUMA node of the GPU memory on coherent systems; None when N/A or not printed
    gpu_numa_id: int | None = None


class TopoLink(Fact):
    fact_type = "topo.link"
    doc = "Connection class between two devices of the topology matrix (one fact per unordered pair)."
    #: GPU label first for gpu-nic pairs ('GPU0'); NICs as labelled in the matrix ('NIC3' or 'mlx5_3')
    a: str
    b: str
    #: 'gpu-gpu' | 'gpu-nic' | 'nic-nic'
    kind: str
    #: 'NV18' | 'PIX' | 'PXB' | 'PHB' | 'NODE' | 'SYS'
    link: str
    #: RDMA device of the NIC end ('mlx5_3') for gpu-nic pairs, '' otherwise or when unknown
    nic_device: str = ""
    #: gpu-gpu pairs: both GPUs list the same single NUMA node in the matrix's NUMA Affinity column;
    #: None when a side has none (older drivers, NIC pairs)
    same_numa: bool | None = None


class TopoNic(Fact):
    fact_type = "topo.nic"
    doc = "A NIC of the topology matrix, its RDMA device and the GPUs that reach it through PCIe switches only."
    nic: str
    #: RDMA device name from the NIC Legend ('mlx5_0'); the label itself on old drivers; '' if unknown
    device: str = ""
    #: GPUs with a PIX or PXB link to this NIC
    closest_gpus: list[int] = []
    #: best link class to any GPU, in order PIX < PXB < PHB < NODE < SYS ('' when no GPU column)
    best_gpu_link: str = ""
