"""lspci -vvv - Command

Verbose PCI device listing of ``lspci -vvv`` (also ``-vv``, ``-v``, plain ``lspci``, ``-nn``,
``-D``, ``-s <bdf>``, ``-k``), from pciutils 3.x: one block per device, a header line
``[domain:]bus:dev.fn class: vendor device (rev xx)`` and tab-indented details; capability
details are indented two tabs, continuation lines three.

Yields ``pcie.device`` per device, ``pcie.link`` per device with LnkCap/LnkSta, ``pcie.acs``
per ACS capability, ``pcie.ats`` per ATS capability, ``pcie.aer`` per AER capability and one
``pcie.summary``. Link downgrades are taken from the ``(downgraded)`` markers of pciutils 3.6+
and also computed from LnkSta < LnkCap, because pciutils before 3.6 prints no marker and 3.8+
prints none for root and downstream ports. ``Speed unknown`` (a speed newer than the pciutils
build) gives None. Without root, lspci prints ``Capabilities: <access denied>``: the summary
then has ``root`` and ``capabilities_visible`` false, and the missing link/ACS facts mean "not
collected". ``pcilib:`` / ``lspci:`` diagnostics interleaved from stderr are skipped.

Excerpts (``lspci -vvv | grep -i acs``): capability lines without any device header belong to
devices the excerpt does not name; they yield ``pcie.link``/``pcie.acs``/``pcie.ats``/
``pcie.aer`` with ``bdf`` "" and ``kind`` "unknown" (a key seen again starts the next device),
and the summary says ``excerpt`` with ``unnamed_devices``. A loop that prints each device's
address before its capability lines on one line (``0002:01:00.0  LnkCap: Speed 32GT/s, Width x4
LnkSta: Speed 32GT/s, Width x2 (downgraded)``) names the device but not its class: its facts have
that ``bdf`` and ``kind`` "unknown". Facts built from a missing line (ACS
off because ACSCtl is absent, ATS disabled, no AER bits, "every link seen is at capability")
are made only where the document's coverage (the command's filter and cuts) would have shown
that line.

Sample input (tab-indented, abridged)::

    16:01.0 PCI bridge: Broadcom / LSI PEX890xx PCIe Gen 5 Switch (rev b0) (prog-if 00 [Normal decode])
    	NUMA node: 0
    	Capabilities: [68] Express (v2) Downstream Port (Slot+), MSI 00
    		LnkCap:	Port #1, Speed 32GT/s, Width x16, ASPM not supported
    		LnkSta:	Speed 32GT/s, Width x16
    	Capabilities: [f24 v1] Access Control Services
    		ACSCap:	SrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl+ DirectTrans+
    		ACSCtl:	SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-
    	Kernel driver in use: pcieport

    5d:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)
    	NUMA node: 0
    	IOMMU group: 71
    	Capabilities: [78] Express (v2) Endpoint, MSI 00
    		LnkCap:	Port #0, Speed 32GT/s, Width x16, ASPM not supported
    		LnkSta:	Speed 32GT/s, Width x8 (downgraded)
    	Capabilities: [420 v2] Advanced Error Reporting
    		UESta:	DLP- SDES- TLP- FCP- CmpltTO- CmpltAbrt- UnxCmplt- RxOF- MalfTLP- ECRC- UnsupReq- ACSViol-
    		CESta:	RxErr+ BadTLP- BadDLLP+ Rollover- Timeout- AdvNonFatalErr-
    	Kernel driver in use: nvidia

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "lspci-vvv"); parse(doc, ctx)
    >>> [(d.bdf, d.kind, d.vendor, d.device_name, d.iommu_group) for d in ctx.facts if d.fact_type == "pcie.device"]
    [('0000:16:01.0', 'switch_port', 'Broadcom / LSI', 'PEX890xx PCIe Gen 5 Switch', None), ('0000:5d:00.0', 'gpu', 'NVIDIA Corporation', 'GH100 [H100 SXM5 80GB]', 71)]
    >>> gpu = [f for f in ctx.facts if f.fact_type == "pcie.link"][1]
    >>> (gpu.bdf, gpu.cap_width, gpu.sta_width, gpu.downgraded, gpu.width_downgraded, gpu.source.line)
    ('0000:5d:00.0', 16, 8, True, True, 16)
    >>> acs = [f for f in ctx.facts if f.fact_type == "pcie.acs"][0]
    >>> (acs.bdf, acs.ctl_enabled, acs.redirect)
    ('0000:16:01.0', ['SrcValid', 'ReqRedir', 'CmpltRedir', 'UpstreamFwd'], True)
    >>> [f.correctable for f in ctx.facts if f.fact_type == "pcie.aer"]
    [['RxErr', 'BadDLLP']]
    >>> s = ctx.facts[-1]
    >>> (s.devices, s.gpus, s.downgraded_links, s.acs_redirect_ports, s.root, s.capabilities_visible)
    (2, 1, 1, 1, True, True)
    >>> sniff(doc) > 0.9
    True
    >>> doc = Document.from_text("\\t\\tACSCtl:\\tSrcValid+ ReqRedir+ CmpltRedir+\\n", command="lspci -vvv | grep ACSCtl")
    >>> ctx = ParseContext(doc, "lspci-vvv"); parse(doc, ctx)
    >>> [(f.fact_type, f.bdf, f.redirect) for f in ctx.facts if f.fact_type == "pcie.acs"]
    [('pcie.acs', '', True)]
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.coverage import WHOLE, Coverage
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.pcie import PcieAcs, PcieAer, PcieAts, PcieDevice, PcieLink, PcieSummary


SAMPLE = (
    "16:01.0 PCI bridge: Broadcom / LSI PEX890xx PCIe Gen 5 Switch (rev b0) (prog-if 00 [Normal decode])\n"
    "\tNUMA node: 0\n"
    "\tCapabilities: [68] Express (v2) Downstream Port (Slot+), MSI 00\n"
    "\t\tLnkCap:\tPort #1, Speed 32GT/s, Width x16, ASPM not supported\n"
    "\t\tLnkSta:\tSpeed 32GT/s, Width x16\n"
    "\tCapabilities: [f24 v1] Access Control Services\n"
    "\t\tACSCap:\tSrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl+ DirectTrans+\n"
    "\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-\n"
    "\tKernel driver in use: pcieport\n"
    "\n"
    "5d:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)\n"
    "\tNUMA node: 0\n"
    "\tIOMMU group: 71\n"
    "\tCapabilities: [78] Express (v2) Endpoint, MSI 00\n"
    "\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM not supported\n"
    "\t\tLnkSta:\tSpeed 32GT/s, Width x8 (downgraded)\n"
    "\tCapabilities: [420 v2] Advanced Error Reporting\n"
    "\t\tUESta:\tDLP- SDES- TLP- FCP- CmpltTO- CmpltAbrt- UnxCmplt- RxOF- MalfTLP- ECRC- UnsupReq- ACSViol-\n"
    "\t\tCESta:\tRxErr+ BadTLP- BadDLLP+ Rollover- Timeout- AdvNonFatalErr-\n"
    "\tKernel driver in use: nvidia\n"
)

# -- device header and names (shared with lspci_tree) -------------------------------------------

#: ``[domain:]bus:dev.fn class[ [cccc]]: description``
HEADER = lazyre.compile(
    r"^(?:(?P<dom>[0-9a-fA-F]{4,8}):)?(?P<bus>[0-9a-fA-F]{2}):(?P<dev>[0-1][0-9a-fA-F])\.(?P<fn>[0-7])"
    r"\s+(?P<cls>[A-Za-z0-9][A-Za-z0-9 /&,.()+-]{0,80}?)(?:\s*\[(?P<cc>[0-9a-fA-F]{4,6})\])?:\s+(?P<desc>.*?)\s*$"
)
# searched for: (?<!\s) starts each attempt at the beginning of a run of blanks, so a long run
# costs one scan, not one per blank
_PROGIF = lazyre.compile(r"(?<!\s)\s*\(prog-if [0-9a-fA-F]{2}(?: \[[^\]]*\])?\)\s*$")
_REV = lazyre.compile(r"(?<!\s)\s*\(rev ([0-9a-fA-F]{2})\)\s*$")
_IDS = lazyre.compile(r"(?<!\s)\s*\[([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\]\s*$")
_UNNAMED_DEVICE = lazyre.compile(r"^(?P<vendor>(?:.*\S)?)\s*\bDevice(?: (?P<id>[0-9a-fA-F]{4}))?$")
_UNKNOWN_VENDOR = lazyre.compile(r"^Device ([0-9a-fA-F]{4}):([0-9a-fA-F]{4})$")

#: vendor names as pci.ids spells them (longest first when matching)
_VENDORS = sorted([
    "NVIDIA Corporation", "Mellanox Technologies", "Intel Corporation", "Broadcom / LSI",
    "Broadcom Inc. and subsidiaries", "PLX Technology, Inc.", "Advanced Micro Devices, Inc. [AMD]",
    "Advanced Micro Devices, Inc. [AMD/ATI]", "Samsung Electronics Co Ltd", "ASPEED Technology, Inc.",
    "Red Hat, Inc.", "Micron Technology Inc", "Amazon.com, Inc.", "Huawei Technologies Co., Ltd.",
    "Marvell Technology Group Ltd.", "Microsemi / PMC / IDT", "Cisco Systems Inc", "Emulex Corporation",
    "Xilinx Corporation", "Google, Inc.", "Ampere Computing, LLC", "Matrox Electronics Systems Ltd.",
    "Realtek Semiconductor Co., Ltd.", "KIOXIA Corporation", "Seagate Technology PLC", "Sandisk Corp",
    "Solidigm", "Cavium, Inc.", "Microsoft Corporation", "Texas Instruments", "Renesas Technology Corp.",
    "QLogic Corp.", "Chelsio Communications Inc", "Solarflare Communications", "Pensando Systems",
    "Cornelis Networks", "Western Digital", "VMware", "Hewlett-Packard Company", "Hewlett Packard Enterprise",
    "Dell", "Qualcomm Technologies, Inc", "Phison Electronics Corporation", "Toshiba Corporation",
    "Silicon Motion, Inc.", "Marvell Technology Group Ltd", "Aquantia Corp.", "Fungible, Inc.",
], key=len, reverse=True)
_VENDOR_SUFFIX = lazyre.compile(
    r"^(?P<vendor>.+?(?:Corporation|Corp\.?|Inc\.?|Incorporated|Ltd\.?|LLC|Limited|GmbH|AG|PLC|"
    r"Technologies|Technology|Co\.))(?:\s+(?P<device>.*))?$"
)

NVSWITCH_IDS = {"1af1", "22a3"}
_GPU_CLASSES = {"3d controller", "vga compatible controller", "display controller"}
_NET_CLASSES = {"ethernet controller", "infiniband controller", "network controller"}
_NVIDIA_NOT_GPU = lazyre.compile(r"Audio|USB|Serial|UCSI|SMBus|Bridge|bridge|Switch\b", re.I)
_NIC_NAME = lazyre.compile(r"Mellanox|ConnectX|BlueField|Elastic Fabric Adapter", re.I)
_NIC_NOT = lazyre.compile(r"Management Interface|SoC Management|DMA engine|Bridge", re.I)


def split_vendor(desc: str) -> tuple[str, str, str, str]:
    """``vendor device [vvvv:dddd]`` -> (vendor, device name, vendor id, device id).

    >>> split_vendor("NVIDIA Corporation GH100 [H100 SXM5 80GB] [10de:2330]")
    ('NVIDIA Corporation', 'GH100 [H100 SXM5 80GB]', '10de', '2330')
    >>> split_vendor("NVIDIA Corporation Device 2330")
    ('NVIDIA Corporation', 'Device 2330', '', '2330')
    >>> split_vendor("Intel Corporation Device [8086:0d57]")
    ('Intel Corporation', 'Device 0d57', '8086', '0d57')
    >>> split_vendor("Device 1d0f:efa1")
    ('', 'Device 1d0f:efa1', '1d0f', 'efa1')
    """
    vendor_id = device_id = ""
    m = _IDS.search(desc)
    if m:
        vendor_id, device_id = m.group(1).lower(), m.group(2).lower()
        desc = desc[:m.start()]
    desc = desc.strip()
    m = _UNKNOWN_VENDOR.match(desc)
    if m:
        return "", desc, vendor_id or m.group(1).lower(), device_id or m.group(2).lower()
    m = _UNNAMED_DEVICE.match(desc)
    if m and m.group("vendor"):
        did = (m.group("id") or "").lower()
        device_id = device_id or did
        return m.group("vendor"), f"Device {device_id}" if device_id else "Device", vendor_id, device_id
    for v in _VENDORS:
        if desc == v:
            return v, "", vendor_id, device_id
        if desc.startswith(v + " "):
            return v, desc[len(v) + 1:].strip(), vendor_id, device_id
    m = _VENDOR_SUFFIX.match(desc)
    if m:
        return m.group("vendor"), (m.group("device") or "").strip(), vendor_id, device_id
    return "", desc, vendor_id, device_id


def endpoint_kind(class_name: str, vendor: str, device_name: str, vendor_id: str = "",
                  device_id: str = "") -> str:
    """gpu / nic / nvswitch / other for a non-bridge device; ``class_name`` "" when unknown (-t).

    >>> endpoint_kind("3D controller", "NVIDIA Corporation", "GH100 [H100 SXM5 80GB]")
    'gpu'
    >>> endpoint_kind("", "NVIDIA Corporation", "GH100 [H100 NVSwitch]")
    'nvswitch'
    >>> endpoint_kind("Infiniband controller", "Mellanox Technologies", "MT2910 Family [ConnectX-7]")
    'nic'
    >>> endpoint_kind("VGA compatible controller", "ASPEED Technology, Inc.", "ASPEED Graphics Family")
    'other'
    """
    cls = class_name.lower()
    name = f"{vendor} {device_name}"
    nvidia = vendor_id == "10de" or "nvidia" in vendor.lower()
    mellanox = vendor_id == "15b3" or "mellanox" in vendor.lower()
    if nvidia and ("NVSwitch" in name or device_id in NVSWITCH_IDS):
        return "nvswitch"
    if cls:
        if nvidia and cls in _GPU_CLASSES:
            return "gpu"
        if nvidia and cls == "bridge":
            return "nvswitch"
        if cls in _NET_CLASSES and not _NIC_NOT.search(name):
            if cls == "infiniband controller" or mellanox or _NIC_NAME.search(name):
                return "nic"
        return "other"
    # no class (lspci -t): names only
    if (mellanox or _NIC_NAME.search(name)) and not _NIC_NOT.search(name):
        return "nic"
    if nvidia and not _NVIDIA_NOT_GPU.search(device_name):
        return "gpu"
    return "other"


def make_bdf(dom: str | None, bus: str, dev: str, fn: str) -> str:
    return f"{(dom or '0000').lower()}:{bus.lower()}:{dev.lower()}.{fn}"


# -- capability lines ----------------------------------------------------------------------------

_KEY = lazyre.compile(r"^(?P<key>[A-Za-z][A-Za-z0-9 ]{0,40}?):(?:\s|$)")
_CAP = lazyre.compile(r"^Capabilities:\s*(?:\[(?P<off>[0-9a-fA-F]+)(?: v\d+)?\]\s*(?P<name>.*)|(?P<other><.*>.*))$")
_EXPRESS = lazyre.compile(r"^Express\s+(?:\(v\d+\)\s+)?(?P<type>.*?)(?:\s*\(Slot[+-]\))?(?:,\s*(?:MSI|IntMsgNum).*)?$")
_SPEED = lazyre.compile(
    r"Speed\s+(?:(?P<gts>\d+(?:\.\d+)?)\s*(?:GT/s|Gb/s|Gbps)|unknown|[^,(\s]*)\s*(?:\((?P<mark>[a-z]+)\))?", re.I)
_WIDTH = lazyre.compile(r"Width\s+x(?P<w>\d{1,3})\s*(?:\((?P<mark>[a-z]+)\))?")
_TARGET = lazyre.compile(r"Target Link Speed:\s*(?P<gts>\d+(?:\.\d+)?)\s*GT/s")
_FLAG = lazyre.compile(r"(?<![\w<>])([A-Za-z][A-Za-z0-9]*)([+-])(?=[\s,]|$)")
_PAYLOAD = lazyre.compile(r"MaxPayload\s+(\d{1,6})\s*bytes")
_READREQ = lazyre.compile(r"MaxReadReq\s+(\d{1,6})\s*bytes")
_LANES = lazyre.compile(r"LaneErr at lane:\s*(?P<lanes>[\d\s]*)")
_SMALL_INT = lazyre.compile(r"^-?\d{1,9}$")
_DIAG = lazyre.compile(r"^(?:pcilib|lspci|setpci)\s*:", re.I)
_S_OPTION = lazyre.compile(
    r"-\w*s\s*(?:(?P<dom>[0-9a-fA-F]{4,8}):)?(?P<bus>[0-9a-fA-F]{2}):(?P<dev>[0-9a-fA-F]{2})\.(?P<fn>[0-7])\b")
_DETAIL_KEYS = {
    "Subsystem", "Control", "Status", "Latency", "Interrupt", "Capabilities", "Kernel driver in use",
    "Kernel modules", "NUMA node", "IOMMU group", "Physical Slot", "Bus", "BridgeCtl",
    "Secondary status", "Memory behind bridge", "I/O behind bridge", "Prefetchable memory behind bridge",
    "Expansion ROM at", "DeviceName", "Flags",
}
_LINK_KEYS = {"LnkCap", "LnkSta", "LnkCtl", "ACSCtl", "ACSCap", "CESta", "UESta", "DevCap", "DevCtl"}
#: capability detail keys accepted at the top indentation too (``lspci -vv | grep LnkSta`` output)
_CAP_KEYS = {"LnkCap", "LnkSta", "LnkCtl2", "LaneErrStat", "ACSCap", "ACSCtl", "ATSCtl", "CESta", "UESta",
             "DevCap", "DevCtl"}
_HEXDUMP = lazyre.compile(r"^[0-9a-fA-F]{2,3}:(?: [0-9a-fA-F]{2}){1,16}\s*$")
#: ``BDF[:] LnkCap: ... LnkSta: ...``: a loop's label and the capability lines it joined onto one line
_ONE_LINE = lazyre.compile(
    r"^(?:(?P<dom>[0-9a-fA-F]{4,8}):)?(?P<bus>[0-9a-fA-F]{2}):(?P<dev>[0-1][0-9a-fA-F])\.(?P<fn>[0-7])"
    r"[:\s]\s*(?=(?:LnkCap|LnkSta|LnkCtl2|ACSCap|ACSCtl|ATSCtl|CESta|UESta)\s*:)")
_ONE_LINE_KEY = lazyre.compile(r"\b(LnkCap|LnkSta|LnkCtl2|ACSCap|ACSCtl|ATSCtl|CESta|UESta)\s*:")
_PORT_KINDS = {"Root Port": "root_port", "Upstream Port": "switch_port", "Downstream Port": "switch_port"}


@dataclass
class _Dev:
    index: int
    bdf: str
    class_name: str = ""
    class_code: str = ""
    vendor: str = ""
    device_name: str = ""
    vendor_id: str = ""
    device_id: str = ""
    rev: str = ""
    subsystem: str = ""
    port_type: str = ""
    driver: str = ""
    modules: list[str] = field(default_factory=list)
    numa: int | None = None
    iommu: int | None = None
    slot: str = ""
    mps: int | None = None
    mrrs: int | None = None
    mps_cap: int | None = None
    caps_seen: bool = False
    caps_detail: bool = False
    denied: bool = False
    unreachable: bool = False
    end: int = 0
    base_indent: int | None = None
    cap: str = ""
    key: str = ""
    lnkcap: tuple[float | None, int | None] | None = None
    lnkcap_i: int = 0
    lnksta: tuple[float | None, str, int | None, str] | None = None
    lnksta_i: int = 0
    target: float | None = None
    lanes: list[int] = field(default_factory=list)
    acs_cap: list[str] | None = None
    acs_ctl: list[str] | None = None
    acs_i: int = 0
    ats: bool | None = None
    ats_seen: bool = False
    ats_i: int = 0
    aer_seen: bool = False
    aer_i: int = 0
    ce: list[str] = field(default_factory=list)
    ue: list[str] = field(default_factory=list)
    ce_seen: bool = False
    #: no header line: capability lines of a device the excerpt does not name (bdf "")
    anonymous: bool = False
    #: named by a loop's label only (``BDF LnkSta: ...``): no class, so the kind is not known
    labelled: bool = False
    keys_seen: set[str] = field(default_factory=set)

    @property
    def kind(self) -> str:
        if self.labelled:
            return "unknown"
        cls = self.class_name.lower()
        if cls == "pci bridge" or self.class_code.startswith("0604"):
            return _PORT_KINDS.get(self.port_type, "other")
        if self.port_type in _PORT_KINDS and cls in ("", "bridge"):
            return _PORT_KINDS[self.port_type]
        return endpoint_kind(self.class_name, self.vendor, self.device_name, self.vendor_id, self.device_id)


def _int(text: str) -> int | None:
    t = text.strip()
    return int(t) if _SMALL_INT.match(t) else None


def _flags(text: str, sign: str = "+") -> list[str]:
    return [name for name, s in _FLAG.findall(text) if s == sign]


def _speed(text: str) -> tuple[float | None, str]:
    m = _SPEED.search(text)
    if not m:
        return None, ""
    gts = float(m.group("gts")) if m.group("gts") else None
    return gts, (m.group("mark") or "").lower()


def _width(text: str) -> tuple[int | None, str]:
    m = _WIDTH.search(text)
    if not m:
        return None, ""
    return int(m.group("w")), (m.group("mark") or "").lower()


def sniff(doc: Document) -> float:
    headers = details = linkish = other = 0
    for ln in doc.lines[:200]:
        if not ln.strip() or _DIAG.match(ln):
            continue
        if _ONE_LINE.match(ln):
            headers += 1
            linkish += 1
            continue
        if HEADER.match(ln):
            headers += 1
            continue
        if ln[:1] in ("\t", " "):
            m = _KEY.match(ln.strip())
            if m and m.group("key") in _DETAIL_KEYS:
                details += 1
            elif m and m.group("key") in _LINK_KEYS:
                linkish += 1
            continue
        other += 1
    if headers and details + linkish >= 2:
        return 0.95
    if headers and headers >= 2 * other:
        # plain ``lspci`` / ``lspci -nn``: nothing but header lines
        return 0.85 if headers >= 2 else 0.6
    if not headers and linkish >= 2 and other == 0:
        return 0.6
    return 0.0


def parse(doc: Document, ctx: ParseContext) -> None:
    try:
        _parse(doc, ctx)
    except (ValueError, OverflowError) as exc:
        raise ParseError(f"unreadable value: {str(exc)[:120]}") from None


def _parse(doc: Document, ctx: ParseContext) -> None:
    devices: list[_Dev] = []
    cur: _Dev | None = None
    orphan_details = 0
    first_orphan = None
    for i, raw in enumerate(doc.lines):
        line = raw.rstrip()
        if not line.strip():
            if cur is not None:
                cur = None
            continue
        if _DIAG.match(line.lstrip()):
            continue
        om = _ONE_LINE.match(line)
        if om:
            cur = _one_line_device(om, line, i)
            devices.append(cur)
            cur = None
            continue
        m = HEADER.match(line)
        if m:
            cur = _new_device(m, i)
            devices.append(cur)
            continue
        if line[:1] not in ("\t", " "):
            if _HEXDUMP.match(line):
                continue
            ctx.warn(i, f"unrecognised line: {line[:80]!r}")
            cur = None
            continue
        if cur is None or cur.anonymous:
            if cur is None and not devices and doc.command and (sm := _S_OPTION.search(doc.command)):
                cur = _Dev(index=i, bdf=make_bdf(sm.group("dom"), sm.group("bus"), sm.group("dev"), sm.group("fn")))
                devices.append(cur)
            elif not any(not d.anonymous for d in devices):
                # header-less excerpt (``lspci -vvv | grep -i acs``): capability lines of devices
                # we cannot name; a key seen again starts the next device
                km = _KEY.match(line.strip())
                key = km.group("key") if km else ""
                if not key or (cur is None and key not in _CAP_KEYS and key != "Capabilities"):
                    orphan_details += 1
                    first_orphan = i if first_orphan is None else first_orphan
                    continue
                if cur is None or key in cur.keys_seen:
                    cur = _Dev(index=i, bdf="", anonymous=True)
                    devices.append(cur)
                cur.keys_seen.add(key)
            else:
                orphan_details += 1
                if first_orphan is None:
                    first_orphan = i
                continue
        cur.end = i
        _detail(cur, line, i, ctx)

    if not devices:
        if orphan_details:
            ctx.warn(first_orphan, f"{orphan_details} lspci detail line(s) without a device header "
                                   "and without capability values (cut at the start?)")
            ctx.add(PcieSummary, first_orphan or 0, max(0, len(doc.lines) - 1), devices=0,
                    excerpt=True)
            return
        raise NotApplicable("no lspci device header lines")
    if orphan_details:
        ctx.warn(first_orphan, f"{orphan_details} detail line(s) before/between device blocks ignored")
    _emit(devices, ctx, len(doc.lines), doc.coverage or WHOLE)


def _one_line_device(m: re.Match[str], line: str, i: int) -> _Dev:
    """A device named by a loop's label, its capability lines joined after it on one line."""
    d = _Dev(index=i, end=i, bdf=make_bdf(m.group("dom"), m.group("bus"), m.group("dev"), m.group("fn")),
             labelled=True)
    rest = line[m.end():]
    keys = list(_ONE_LINE_KEY.finditer(rest))
    for k, nxt in zip(keys, keys[1:] + [None]):
        _cap_detail(d, k.group(1), rest[k.end():nxt.start() if nxt else len(rest)].strip(), i)
    return d


def _new_device(m: re.Match[str], i: int) -> _Dev:
    desc = m.group("desc")
    desc = _PROGIF.sub("", desc)
    rev = ""
    rm = _REV.search(desc)
    if rm:
        rev = rm.group(1).lower()
        desc = desc[:rm.start()]
    vendor, name, vid, did = split_vendor(desc)
    d = _Dev(index=i, end=i, bdf=make_bdf(m.group("dom"), m.group("bus"), m.group("dev"), m.group("fn")),
             class_name=m.group("cls").strip(), class_code=(m.group("cc") or "").lower(),
             vendor=vendor, device_name=name, vendor_id=vid, device_id=did, rev=rev)
    d.unreachable = rev == "ff"
    return d


def _indent(line: str) -> int:
    n = 0
    for ch in line:
        if ch == "\t":
            n += 8
        elif ch == " ":
            n += 1
        else:
            break
    return n


def _detail(d: _Dev, line: str, i: int, ctx: ParseContext) -> None:
    text = line.strip()
    indent = _indent(line)
    if d.base_indent is None:
        d.base_indent = indent
    top = indent <= d.base_indent
    if text.startswith("!!!"):
        if "Unknown header type" in text:
            d.unreachable = True
        return
    km = _KEY.match(text)
    key = km.group("key") if km else ""
    value = text[km.end():].strip() if km else text
    if key == "Capabilities" and top:
        d.key = ""
        cm = _CAP.match(text)
        if not cm:
            ctx.warn(i, f"unreadable capability line: {text[:80]!r}")
            d.cap = ""
            return
        if cm.group("other") is not None:
            if "access denied" in cm.group("other"):
                d.denied = True
            d.cap = ""
            return
        d.caps_seen = True
        name = (cm.group("name") or "").strip()
        d.cap = name
        em = _EXPRESS.match(name)
        if em and not d.port_type:
            d.port_type = em.group("type").strip()
        if name.startswith("Access Control Services"):
            d.acs_i = i
        elif name.startswith("Address Translation Service"):
            d.ats_seen = True
            d.ats_i = i
        elif name.startswith("Advanced Error Reporting"):
            d.aer_seen = True
            d.aer_i = i
        return
    if top and key not in _CAP_KEYS:
        # a device-level line ends the capability list (driver lines come after it)
        d.cap = d.key = ""
        _top_level(d, key, value, i, ctx)
        return
    if d.cap:
        d.caps_detail = True
    if key:
        d.key = key
        _cap_detail(d, key, value, i)
    else:
        _cap_detail(d, d.key, text, i)


def _top_level(d: _Dev, key: str, value: str, i: int, ctx: ParseContext) -> None:
    if key == "Subsystem":
        d.subsystem = value
    elif key == "Physical Slot":
        d.slot = value
    elif key == "NUMA node":
        d.numa = _int(value)
        if d.numa is None:
            ctx.warn(i, f"unreadable NUMA node {value[:40]!r}")
    elif key == "IOMMU group":
        d.iommu = _int(value)
        if d.iommu is None:
            ctx.warn(i, f"unreadable IOMMU group {value[:40]!r}")
    elif key == "Kernel driver in use":
        d.driver = value
    elif key == "Kernel modules":
        d.modules = [m.strip() for m in value.split(",") if m.strip()]


def _cap_detail(d: _Dev, key: str, text: str, i: int) -> None:
    cap = d.cap
    if key == "DevCap" and cap.startswith("Express"):
        pm = _PAYLOAD.search(text)
        if pm and d.mps_cap is None:
            d.mps_cap = int(pm.group(1))
    elif key == "DevCtl" and cap.startswith("Express"):
        pm = _PAYLOAD.search(text)
        if pm:
            d.mps = int(pm.group(1))
        rm = _READREQ.search(text)
        if rm:
            d.mrrs = int(rm.group(1))
    elif key == "LnkCap" and "Speed" in text and d.lnkcap is None:
        d.lnkcap = (_speed(text)[0], _width(text)[0])
        d.lnkcap_i = i
    elif key == "LnkSta" and "Speed" in text and d.lnksta is None:
        gts, smark = _speed(text)
        w, wmark = _width(text)
        d.lnksta = (gts, smark, w, wmark)
        d.lnksta_i = i
    elif key == "LnkCtl2":
        tm = _TARGET.search(text)
        if tm:
            d.target = float(tm.group("gts"))
    elif key == "LaneErrStat":
        lm = _LANES.search(text)
        if lm:
            d.lanes = [int(x) for x in lm.group("lanes").split() if len(x) <= 3]
    elif key == "ACSCap":
        d.acs_cap = _flags(text)
        d.acs_i = d.acs_i or i
    elif key == "ACSCtl":
        d.acs_ctl = _flags(text)
        d.acs_i = i
    elif key == "ATSCtl":
        d.ats = bool(re.search(r"\bEnable\+", text))
        d.ats_seen = True
        d.ats_i = i
    elif key == "CESta":
        d.ce = _flags(text)
        d.aer_seen = d.ce_seen = True
        d.aer_i = i
    elif key == "UESta":
        d.ue = _flags(text)
        d.aer_seen = d.ce_seen = True
        d.aer_i = d.aer_i or i


#: lines a filter must keep for the absence of their kind to mean something
_SAMPLE_ACSCTL = "\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-"
_SAMPLE_LNKSTA = "\t\tLnkSta:\tSpeed 32GT/s, Width x16"
_SAMPLE_ATSCTL = "\t\tATSCtl:\tEnable+, Smallest Translation Unit (STU): 0"
_SAMPLE_CESTA = "\t\tCESta:\tRxErr- BadTLP- BadDLLP- Rollover- Timeout- AdvNonFatalErr-"


def _emit(devices: list[_Dev], ctx: ParseContext, nlines: int, cov: Coverage = WHOLE) -> None:
    counts = {"gpu": 0, "nic": 0, "nvswitch": 0, "switch_port": 0, "root_port": 0}
    links = downgraded = redirects = hidden = 0
    any_caps = any_detail = False
    anonymous = 0
    # an excerpt (``| grep``, ``| head``) shows a missing ACSCtl/LnkSta/ATSCtl/CESta line only if
    # its filter would have kept one: otherwise "absent" is "not collected" and no fact says more
    sees = {name: cov.believes_absence(sample) for name, sample in (
        ("acs", _SAMPLE_ACSCTL), ("link", _SAMPLE_LNKSTA), ("ats", _SAMPLE_ATSCTL), ("aer", _SAMPLE_CESTA))}
    for d in devices:
        if d.anonymous:
            anonymous += 1
            _emit_anonymous(d, ctx)
            continue
        kind = d.kind
        if kind in counts:
            counts[kind] += 1
        hidden += d.denied
        any_caps = any_caps or d.caps_seen
        any_detail = any_detail or d.caps_detail
        ctx.add(PcieDevice, d.index, d.end, bdf=d.bdf, class_name=d.class_name, class_code=d.class_code,
                vendor=d.vendor, device_name=d.device_name, vendor_id=d.vendor_id, device_id=d.device_id,
                rev=d.rev, subsystem=d.subsystem, kind=kind, port_type=d.port_type, driver=d.driver,
                kernel_modules=d.modules, numa_node=d.numa, iommu_group=d.iommu, physical_slot=d.slot,
                max_payload_bytes=d.mps, max_read_req_bytes=d.mrrs, max_payload_cap_bytes=d.mps_cap,
                capabilities_visible=d.caps_seen and not d.denied, unreachable=d.unreachable)
        common = {"bdf": d.bdf, "kind": kind, "device_name": d.device_name}
        if d.lnksta is not None or d.lnkcap is not None:
            links += 1
            link = _link(d)
            # pciutils marks a device of unknown class only when the capability is its own
            if link["downgraded"] and (kind in ("gpu", "nic", "nvswitch") or d.port_type == "Upstream Port"
                                       or (kind == "unknown" and link["marked"])):
                downgraded += 1
            idx = d.lnksta_i if d.lnksta is not None else d.lnkcap_i
            if d.lnksta is None and sees["link"]:
                ctx.warn(d.lnkcap_i, f"{d.bdf}: LnkCap without LnkSta (truncated?)")
            ctx.add(PcieLink, idx, port_type=d.port_type, **common, **link)
        if d.acs_ctl is not None or (d.acs_cap is not None and sees["acs"]):
            ctl = d.acs_ctl or []
            redirect = "ReqRedir" in ctl or "CmpltRedir" in ctl
            if redirect and (kind in ("switch_port", "root_port") or d.class_name.lower() == "pci bridge"):
                redirects += 1
            ctx.add(PcieAcs, d.acs_i, port_type=d.port_type, cap=d.acs_cap or [], ctl_enabled=ctl,
                    any_enabled=bool(ctl), redirect=redirect, **common)
        if d.ats_seen and (d.ats is not None or sees["ats"]):
            ctx.add(PcieAts, d.ats_i, enabled=bool(d.ats), **common)
        if d.aer_seen and (d.ce_seen or sees["aer"]):
            ctx.add(PcieAer, d.aer_i, correctable=d.ce, uncorrectable=d.ue, has_errors=bool(d.ce or d.ue),
                    **common)
    root = any_caps and hidden == 0
    # "no downgraded link, no ACS redirect" is believed only where the excerpt would have shown both
    whole = sees["acs"] and sees["link"] and anonymous == 0
    ctx.add(PcieSummary, 0, max(0, nlines - 1), devices=len(devices) - anonymous, gpus=counts["gpu"],
            nics=counts["nic"], nvswitches=counts["nvswitch"], switch_ports=counts["switch_port"],
            root_ports=counts["root_port"], links=links, downgraded_links=downgraded,
            acs_redirect_ports=redirects, hidden_devices=hidden, root=root,
            capabilities_visible=root and any_detail and whole,
            excerpt=not cov.complete or anonymous > 0 or any(d.labelled for d in devices),
            unnamed_devices=anonymous)


def _emit_anonymous(d: _Dev, ctx: ParseContext) -> None:
    """Facts the capability lines of an unnamed device prove (bdf "", kind "unknown")."""
    common = {"bdf": "", "kind": "unknown", "device_name": ""}
    if d.lnksta is not None or d.lnkcap is not None:
        ctx.add(PcieLink, d.lnksta_i if d.lnksta is not None else d.lnkcap_i, **common, **_link(d))
    if d.acs_ctl is not None:
        ctl = d.acs_ctl
        ctx.add(PcieAcs, d.acs_i, cap=d.acs_cap or [], ctl_enabled=ctl, any_enabled=bool(ctl),
                redirect="ReqRedir" in ctl or "CmpltRedir" in ctl, **common)
    if d.ats is not None:
        ctx.add(PcieAts, d.ats_i, enabled=d.ats, **common)
    if d.ce_seen:
        ctx.add(PcieAer, d.aer_i, correctable=d.ce, uncorrectable=d.ue, has_errors=bool(d.ce or d.ue),
                **common)


def _link(d: _Dev) -> dict:
    cap_gts, cap_w = d.lnkcap if d.lnkcap is not None else (None, None)
    sta_gts, smark, sta_w, wmark = d.lnksta if d.lnksta is not None else (None, "", None, "")
    link_up = None if sta_w is None else sta_w > 0
    # a port with nothing trained behind it (Width x0) idles at 2.5GT/s: down, not downgraded
    speed_down = smark == "downgraded" or (
        link_up is not False and cap_gts is not None and sta_gts is not None and sta_gts < cap_gts and smark != "ok")
    width_down = wmark == "downgraded" or (
        cap_w is not None and sta_w is not None and 0 < sta_w < cap_w and wmark != "ok")
    return {"link_up": link_up, "cap_speed_gts": cap_gts, "cap_width": cap_w, "sta_speed_gts": sta_gts,
            "sta_width": sta_w, "target_speed_gts": d.target, "downgraded": speed_down or width_down,
            "speed_downgraded": speed_down, "width_downgraded": width_down, "lane_errors": d.lanes,
            "marked": "downgraded" in (smark, wmark)}


FORMATS = [
    Format(
        name="lspci-vvv",
        command="lspci -vvv",
        facts=("pcie.device", "pcie.link", "pcie.acs", "pcie.ats", "pcie.aer", "pcie.summary"),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\blspci\b(?![^|;&]*\s-[a-zA-Z]*t)",),
        description="lspci -vvv device blocks: PCIe link state, ACS, ATS, AER, NUMA node, IOMMU group",
    )
]
