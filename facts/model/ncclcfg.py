"""NCCL configuration files: topology XML (NCCL_TOPO_FILE / NCCL_TOPO_DUMP_FILE) and nccl.conf."""

from clusterdx.facts.base import Fact


class NcclTopoXml(Fact):
    fact_type = "nccl.topo_xml"
    doc = "Summary of an NCCL topology XML (as dumped by NCCL_TOPO_DUMP_FILE or given by NCCL_TOPO_FILE)."
    version: str = ""
    cpus: int
    gpus: int
    nics: int
    #: net device names in document order (mlx5_0 ...)
    nets: list[str] = []
    #: net speeds in Mb/s, same order as nets
    net_speeds_mbps: list[int] = []
    #: link_width of every <pci> element (16, 8 ...)
    pci_link_widths: list[int] = []
    #: per GPU in document order: 1 when gdr="1", else 0
    gpu_gdr: list[int] = []
    #: NVLink links: sum of <nvlink count=...> over all GPUs
    nvlinks: int = 0
    #: True when GPUs and NICs hang directly under CPUs (no <pci> switch level between a CPU and
    #: its devices): the flattened view of a VM or a faulty topology file
    flattened: bool
    #: the document was cut short (a pasted head of the dump): counts are lower bounds
    truncated: bool = False


class NcclTopoXmlGpu(Fact):
    fact_type = "nccl.topo_xml_gpu"
    doc = "One GPU of an NCCL topology XML: its bus id, NUMA affinity and whether a NIC shares its PCI switch."
    dev: int
    busid: str = ""
    rank: int | None = None
    gdr: int | None = None
    #: numaid of the parent <cpu> ('' when none)
    numa: str = ""
    #: affinity mask of the parent <cpu>
    affinity: str = ""
    #: a NIC sits under the same PCI switch (the GPU's parent <pci> bridge) as this GPU
    nic_local: bool
    #: link_width of the GPU's own <pci> element (None when not given)
    link_width: int | None = None


class NcclConfSetting(Fact):
    fact_type = "nccl.conf_setting"
    doc = "One NAME=value line of an NCCL configuration file (/etc/nccl.conf, ~/.nccl.conf, NCCL_CONF_FILE)."
    name: str
    value: str
    #: the configuration file, from the transcript command or the input name
    file: str = ""
