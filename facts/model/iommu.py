"""IOMMU/SMMU configuration and kernel log events (dmesg)."""

from clusterdx.facts.base import Fact


class Smmu(Fact):
    fact_type = "iommu.smmu"
    doc = "One Arm SMMU instance seen in the kernel log, with its command-queue virtualization (CMDQV) status."
    device: str
    #: CMDQV/VCMDQ/tegra241-cmdqv mentioned in the log (hardware-virtualized command queues);
    #: None when an excerpt (``dmesg | grep ...``) could not have shown such a line
    cmdqv: bool | None = False
    #: feature bits decoded with the mainline arm-smmu-v3.h layout, e.g. ['2_lvl_strtab', 'msi', 'ats']
    features: list[str] = []
    #: raw mask as printed, e.g. '0x001e1fbf'; '' when not printed
    features_mask: str = ""
    #: False after 'msi_domain absent - falling back to wired irqs'; True if the MSI feature bit is set; else None
    msi: bool | None = None
    cmdq_entries: int | None = None
    ias_bits: int | None = None
    oas_bits: int | None = None
    #: 'option mask 0x..' as printed
    options_mask: str = ""


class IommuMode(Fact):
    fact_type = "iommu.mode"
    doc = "Kernel IOMMU setup: default DMA domain type, invalidation policy, and which IOMMU driver."
    #: 'translated' | 'passthrough' | 'lazy' | ... lowercased from 'Default domain type:'; '' if not printed
    default_domain: str = ""
    #: 'strict' | 'lazy' from 'DMA domain TLB invalidation policy'; '' if not printed
    policy: str = ""
    #: 'intel' | 'amd' | 'smmu' | ''
    iommu: str = ""
    #: the domain type or policy line said '(set via kernel command line)'
    set_on_cmdline: bool = False


class DmesgEvent(Fact):
    fact_type = "dmesg.event"
    doc = "One notable kernel log event: Xid, PCIe AER, link training, mlx5 port/module, SMMU or IOMMU fault."
    #: 'xid' | 'sxid' | 'aer' | 'aer_ratelimit' | 'pcie_link' | 'pcie_hotplug' | 'mlx5' | 'smmu_event' | 'iommu_fault'
    kind: str
    #: PCI BDF 'dddd:bb:dd.f' lowercase (Xid prints no function: '.0' is assumed), or the SMMU device name
    device: str = ""
    #: xid: '79'; aer: 'correctable' | 'uncorrectable-nonfatal' | 'uncorrectable-fatal'; others see parser docs
    code: str = ""
    message: str = ""
    #: AER error bit names (['RxErr', 'BadDLLP']) for aer events; empty otherwise
    details: list[str] = []
    #: network interface for mlx5 netdev events
    interface: str = ""
    #: Xid process name ('' when '<unknown>' or not printed)
    process: str = ""
    #: the log line's time as printed ('81234.557113', 'Tue Jun 17 02:41:09 2025', ...)
    timestamp: str = ""
    #: seconds since boot when the line carries a dmesg monotonic stamp
    uptime_s: float | None = None


class DmesgSummary(Fact):
    fact_type = "dmesg.summary"
    doc = "A kernel log was read: how many lines and events, and whether the boot messages are still in it."
    lines: int
    events: int = 0
    xid_events: int = 0
    aer_events: int = 0
    smmu_events: int = 0
    #: the log starts at boot (a [0.000000] line or the 'Linux version' banner): absent boot-time lines are meaningful
    has_boot: bool = False
