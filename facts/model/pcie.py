"""PCI Express devices, links, ACS/ATS/AER state and switch topology (``lspci -vvv``, ``lspci -tv``).

Addresses (``bdf``) are always lowercase with the PCI domain: ``0000:5d:00.0``. Link speeds are in
GT/s (``32.0`` for Gen5), widths in lanes. A field is None when lspci did not print it (``Speed
unknown`` from an old pciutils, capability list hidden without root), never a guessed default.

``kind`` is one of ``gpu`` (NVIDIA 3D/VGA/display controller), ``nic`` (Mellanox/NVIDIA ConnectX
or BlueField network function, any InfiniBand controller, AWS EFA), ``switch_port`` (upstream or
downstream port of a PCIe switch), ``root_port``, ``nvswitch`` or ``other``.
"""

from clusterdx.facts.base import Fact


class PcieDevice(Fact):
    fact_type = "pcie.device"
    doc = "One PCI device from lspci: class, names, role (gpu/nic/switch_port/...), driver, NUMA node, IOMMU group."
    bdf: str
    #: "3D controller", "PCI bridge", "Infiniband controller", "Ethernet controller" ...
    class_name: str = ""
    #: 4-digit class code ("0302") when printed (-nn, or unknown classes)
    class_code: str = ""
    vendor: str = ""
    #: device part of the name ("GH100 [H100 SXM5 80GB]", "Device 2330" when pci.ids lacks it)
    device_name: str = ""
    #: 4 hex digits, from -nn ("[10de:2330]") or an unnamed "Device 2330"; "" when not printed
    vendor_id: str = ""
    device_id: str = ""
    #: revision ("a1"); "ff" means config space reads all ones (device fell off the bus)
    rev: str = ""
    subsystem: str = ""
    #: gpu | nic | switch_port | root_port | nvswitch | other
    kind: str = "other"
    #: PCI Express capability type: "Endpoint", "Root Port", "Upstream Port", "Downstream Port",
    #: "Legacy Endpoint", "Root Complex Integrated Endpoint" ...; "" when not visible
    port_type: str = ""
    #: "Kernel driver in use"; "" when no driver is bound (or not printed)
    driver: str = ""
    kernel_modules: list[str] = []
    numa_node: int | None = None
    iommu_group: int | None = None
    physical_slot: str = ""
    #: DevCtl MaxPayload / MaxReadReq (bytes) and DevCap MaxPayload (what the device supports)
    max_payload_bytes: int | None = None
    max_read_req_bytes: int | None = None
    max_payload_cap_bytes: int | None = None
    #: capability list printed (false for "Capabilities: <access denied>" without root, or no caps)
    capabilities_visible: bool = False
    #: config space unreadable: "(rev ff)" or "!!! Unknown header type 7f" (device lost)
    unreachable: bool = False


class PcieLink(Fact):
    fact_type = "pcie.link"
    doc = "PCIe link capability vs status of a device (LnkCap/LnkSta); downgraded when trained below capability."
    bdf: str
    kind: str = "other"
    port_type: str = ""
    device_name: str = ""
    cap_speed_gts: float | None = None
    cap_width: int | None = None
    sta_speed_gts: float | None = None
    #: 0 = link down (empty slot behind a downstream port); not counted as a downgrade
    sta_width: int | None = None
    #: False when LnkSta shows Width x0 (nothing trained: empty slot behind a port); None if unknown
    link_up: bool | None = None
    #: LnkCtl2 "Target Link Speed" (a BIOS/setpci speed cap shows here)
    target_speed_gts: float | None = None
    #: explicit "(downgraded)" marker, or status below capability when both are known
    downgraded: bool = False
    speed_downgraded: bool = False
    width_downgraded: bool = False
    #: pciutils itself printed "(downgraded)" (3.6+; 3.8+ prints it only for endpoints and upstream
    #: ports, whose capability is their own): False when the downgrade was computed here, or none
    marked: bool = False
    #: lanes named by "LaneErrStat: LaneErr at lane: 9 10 12" (Secondary PCI Express capability)
    lane_errors: list[int] = []


class PcieAcs(Fact):
    fact_type = "pcie.acs"
    doc = "Access Control Services capability and control bits of a port; redirect forces P2P through the root complex."
    bdf: str
    kind: str = "other"
    port_type: str = ""
    device_name: str = ""
    #: ACSCap flags set: SrcValid, TransBlk, ReqRedir, CmpltRedir, UpstreamFwd, EgressCtrl, DirectTrans
    cap: list[str] = []
    #: ACSCtl flags set (same names)
    ctl_enabled: list[str] = []
    #: any ACSCtl flag set
    any_enabled: bool = False
    #: ReqRedir+ or CmpltRedir+ in ACSCtl
    redirect: bool = False


class PcieAts(Fact):
    fact_type = "pcie.ats"
    doc = "Address Translation Service capability of a device and whether it is enabled (ATSCtl Enable+)."
    bdf: str
    kind: str = "other"
    device_name: str = ""
    enabled: bool = False


class PcieAer(Fact):
    fact_type = "pcie.aer"
    doc = "Advanced Error Reporting status of a device: correctable (CESta) and uncorrectable (UESta) bits set."
    bdf: str
    kind: str = "other"
    device_name: str = ""
    #: CESta bits set: RxErr, BadTLP, BadDLLP, Rollover, Timeout, AdvNonFatalErr ...
    correctable: list[str] = []
    #: UESta bits set: DLP, SDES, TLP, FCP, CmpltTO, ... ACSViol
    uncorrectable: list[str] = []
    #: any bit set in either list
    has_errors: bool = False


class PcieSummary(Fact):
    fact_type = "pcie.summary"
    doc = "Per-document lspci totals, and whether capability blocks (links, ACS, AER) were visible at all."
    devices: int = 0
    gpus: int = 0
    nics: int = 0
    nvswitches: int = 0
    switch_ports: int = 0
    root_ports: int = 0
    #: pcie.link facts emitted (0 with lspci -v, without root, or in VMs without PCIe capabilities)
    links: int = 0
    #: downgraded links of GPUs, NICs, NVSwitches and switch upstream ports (the ends pciutils
    #: itself judges; root/downstream ports below a slower device are not counted)
    downgraded_links: int = 0
    #: switch/root ports (bridges) with ACSCtl ReqRedir+ or CmpltRedir+
    acs_redirect_ports: int = 0
    #: devices printed with "Capabilities: <access denied>"
    hidden_devices: int = 0
    #: run with root privileges: capability lists printed and none denied
    root: bool = False
    #: capability details (LnkSta, ACSCtl, CESta ...) readable for every device (root and -vv);
    #: when false, absent downgrade/ACS facts mean "not collected", not "healthy"; also false for
    #: an excerpt whose filter would not have shown LnkSta and ACSCtl lines
    capabilities_visible: bool = False
    #: the document was an excerpt (``lspci -vvv | grep ...``, ``| head``, no device headers)
    excerpt: bool = False
    #: capability lines (LnkSta, ACSCtl ...) of devices without a header line: their facts have bdf ""
    unnamed_devices: int = 0


class PcieTreeNode(Fact):
    fact_type = "pcie.tree_node"
    doc = "One device of the lspci -t tree with its parent bridge and depth."
    bdf: str
    #: bridge above this device; "" for devices on a root bus
    parent_bdf: str = ""
    #: bridges between the root bus and this device
    depth: int = 0
    #: "vendor device" as printed by -tv ("" without -v, and always "" for bridges)
    name: str = ""
    kind: str = "other"
    #: has a secondary bus ("-[sec]-" or "-[sec-sub]-")
    bridge: bool = False
    #: "upstream" | "downstream" for switch ports, "" otherwise
    switch_role: str = ""
    vendor_id: str = ""
    device_id: str = ""


class PcieSwitchGroup(Fact):
    fact_type = "pcie.switch_group"
    doc = "A PCIe switch (by its upstream port) and the GPUs, NICs and NVSwitches below it (lspci -t)."
    #: bdf of the switch's upstream port
    switch_bdf: str
    #: root port above the switch ("" when the switch hangs off something else)
    root_port_bdf: str = ""
    #: bridges above the upstream port (1 directly under a root port; 3 for a switch below a switch)
    depth: int = 0
    gpus: list[str] = []
    nics: list[str] = []
    nvswitches: list[str] = []
    downstream_ports: int = 0
    #: at least one GPU and one NIC below this switch (GPUDirect RDMA stays inside it when ACS allows)
    gpu_nic_shared: bool = False
