"""dmesg - Command

Kernel log as printed by ``dmesg`` (plain, ``-T``, ``--time-format iso``, ``-x``, ``-r``,
``CONFIG_PRINTK_CALLER``), ``journalctl -k`` and syslog files. Yields the IOMMU setup
(``iommu.mode``), each Arm SMMU instance (``iommu.smmu``), notable events (``dmesg.event``:
NVIDIA Xid/SXid, PCIe AER, link training and hot-plug, mlx5 module and link, SMMU command-queue
errors, IOMMU faults), the kernel release (``kernel.version``) and a ``dmesg.summary`` saying the
log was read, so that "no Xid in the log" is a finding and not a gap.

Excerpts (``dmesg | grep -i iommu``): every line proves what it says on its own: the domain
type line, ``DMAR:``/``AMD-Vi:``/``arm-smmu-v3`` lines (the IOMMU driver), the boot parameters
of a ``Command line:`` line (``iommu=pt``, ``iommu.passthrough=``, ``iommu.strict=``, used when
the kernel's own line is not in the excerpt) and ``Hypervisor detected: KVM``
(``platform.virtualization`` guest). An SMMU's ``cmdqv`` is False ("no CMDQV") only where the
document's coverage would have shown a CMDQV line; otherwise None.

Event codes: ``xid``/``sxid`` -> the Xid number; ``aer`` -> ``correctable``,
``uncorrectable-nonfatal`` or ``uncorrectable-fatal``; ``pcie_link`` -> ``limited`` or ``ok``;
``pcie_hotplug`` -> ``link_down``, ``link_up``, ``card_not_present``, ``card_present``;
``mlx5`` -> ``module_error``, ``cable_unplugged``, ``cable_plugged``, ``link_down``,
``link_up``, ``insufficient_power``, ``health_fatal``, ``cmd_error``; ``smmu_event`` ->
``cmd_sync_timeout``, ``cmdq_error``, ``gerror``, ``evtq_overflow`` or the event id
(``0x10``); ``iommu_fault`` -> the fault reason or AMD event name.

Sample input::

    [    0.000000] Linux version 6.8.0-1021-nvidia-64k (buildd@bos03) (gcc 13.3.0) #22-Ubuntu SMP
    [    1.904530] iommu: Default domain type: Translated (set via kernel command line)
    [    1.904534] iommu: DMA domain TLB invalidation policy: lazy mode (set via kernel command line)
    [    6.811960] arm-smmu-v3 arm-smmu-v3.0.auto: ias 48-bit, oas 48-bit (features 0x001e1fbf)
    [    6.812637] arm-smmu-v3 arm-smmu-v3.0.auto: allocated 524288 entries for cmdq
    [81234.557113] NVRM: Xid (PCI:0000:9a:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "dmesg"); parse(doc, ctx)
    >>> by = {f.fact_type: f for f in ctx.facts}
    >>> (by["kernel.version"].release, by["kernel.version"].page_size_hint)
    ('6.8.0-1021-nvidia-64k', '64k')
    >>> m = by["iommu.mode"]; (m.default_domain, m.policy, m.iommu, m.set_on_cmdline)
    ('translated', 'lazy', 'smmu', True)
    >>> s = by["iommu.smmu"]; (s.device, s.cmdqv, s.msi, s.cmdq_entries, "ats" in s.features)
    ('arm-smmu-v3.0.auto', False, True, 524288, True)
    >>> e = by["dmesg.event"]; (e.kind, e.device, e.code, e.uptime_s, e.source.line)
    ('xid', '0000:9a:00.0', '79', 81234.557113, 6)
    >>> sniff(doc) > 0.8
    True
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.coverage import WHOLE
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.iommu import DmesgEvent, DmesgSummary, IommuMode, Smmu
from clusterdx.facts.model.platform import KernelVersion, Virtualization


SAMPLE = """\
[    0.000000] Linux version 6.8.0-1021-nvidia-64k (buildd@bos03) (gcc 13.3.0) #22-Ubuntu SMP
[    1.904530] iommu: Default domain type: Translated (set via kernel command line)
[    1.904534] iommu: DMA domain TLB invalidation policy: lazy mode (set via kernel command line)
[    6.811960] arm-smmu-v3 arm-smmu-v3.0.auto: ias 48-bit, oas 48-bit (features 0x001e1fbf)
[    6.812637] arm-smmu-v3 arm-smmu-v3.0.auto: allocated 524288 entries for cmdq
[81234.557113] NVRM: Xid (PCI:0000:9a:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
"""

# --- line prefixes -------------------------------------------------------------------------
_MONO = r"\[\s*(\d+\.\d+)\]"
_CALLER = r"(?:\[\s*[TC]\d+\])?"
_PREFIXES = [
    # dmesg -x: 'kern  :warn  : '
    re.compile(r"^[a-z]+\s*:[a-z]+\s*:\s+"),
    # dmesg -r: '<4>'
    re.compile(r"^<\d{1,3}>"),
]
_P_MONO = lazyre.compile(rf"^{_MONO}{_CALLER}\s?")
_P_CTIME = lazyre.compile(r"^\[([A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})\]" + _CALLER + r"\s?")
_P_ISO = lazyre.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[,.]\d+)?(?:[+-]\d\d:?\d\d|Z)?)\s+")
_P_SYSLOG = lazyre.compile(r"^([A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d)\s+\S+\s+kernel:\s?")
_P_ISO_HOST = lazyre.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[,.]\d+)?(?:[+-]\d\d:?\d\d|Z)?)\s+\S+\s+kernel:\s?")
_PERMISSION = lazyre.compile(r"^dmesg: read kernel buffer failed:")


def strip_prefix(line: str) -> tuple[str, str, float | None, bool]:
    """(message, timestamp text, seconds since boot, had a kernel-log prefix).

    >>> strip_prefix("kern  :warn  : [81234.557113] NVRM: x")
    ('NVRM: x', '81234.557113', 81234.557113, True)
    >>> strip_prefix("Jun 17 02:41:09 gpu-node-017 kernel: [    6.131703] pci x")[1:]
    ('6.131703', 6.131703, True)
    """
    text = line.strip()
    stamp, mono, known = "", None, False
    for pat in _PREFIXES:
        m = pat.match(text)
        if m:
            text, known = text[m.end():], True
    for pat in (_P_SYSLOG, _P_ISO_HOST, _P_CTIME, _P_ISO):
        m = pat.match(text)
        if m:
            stamp, text, known = m.group(1), text[m.end():], True
            break
    m = _P_MONO.match(text)
    if m:
        stamp, text, known = m.group(1), text[m.end():], True
        mono = float(m.group(1)) if len(m.group(1)) < 24 else None
    return text.strip(), stamp, mono, known


def page_size_hint(release: str) -> str:
    """'64k' for ``6.8.0-1021-nvidia-64k``; '' when the release does not say.

    >>> page_size_hint("6.8.0-1021-nvidia-64k"), page_size_hint("6.8.0-57-generic")
    ('64k', '')
    """
    m = re.search(r"[-+_.](4k|16k|64k)$", release.strip().lower())
    return m.group(1) if m else ""


# --- message patterns ------------------------------------------------------------------------
_BANNER = lazyre.compile(r"^Linux version (\S+)")
_BOOT_IMAGE = lazyre.compile(r"(?:Kernel )?[Cc]ommand line:.*?BOOT_IMAGE=\S*?vmlinu[xz]-(\S+)")
_DOMAIN = lazyre.compile(r"^iommu: Default domain type:\s*(.*?)\s*$")
_POLICY = lazyre.compile(r"^iommu: DMA domain TLB invalidation policy:\s*(\w+) mode(.*)$")
_SMMU = lazyre.compile(r"^arm-smmu(?:-v3)?\s+(\S+?):\s*(.*)$")
_SMMU_IAS = lazyre.compile(r"ias (\d{1,4})-bit, oas (\d{1,4})-bit \(features (0x[0-9a-fA-F]+)\)")
_SMMU_Q = lazyre.compile(r"allocated (\d{1,12}) entries for cmdq")
_SMMU_OPT = lazyre.compile(r"option mask (0x[0-9a-fA-F]+)")
_CMDQV = lazyre.compile(r"cmdqv|vcmdq|tegra241", re.I)
_HYPERVISOR = lazyre.compile(r"^Hypervisor detected:\s*(\S.{0,40}?)\s*$")
_CMDLINE = lazyre.compile(r"^(?:Kernel )?[Cc]ommand line:\s*(.*)$")
#: boot parameters that set the IOMMU default domain or invalidation policy
_CMDLINE_IOMMU = lazyre.compile(r"(?:^|\s)(iommu|iommu\.passthrough|iommu\.strict)=(\S+)")
#: what a filtered excerpt must keep for "no CMDQV line" to mean "no CMDQV"
_SAMPLE_CMDQV = "tegra241_cmdqv NVDA200C:00: VINTF0: allocated 1 LVCMDQs"
_XID = lazyre.compile(r"^NVRM: Xid \(PCI:([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})(?:\.(\d))?\):\s*(\d+)\s*,?\s*(.*)$")
_SXID = lazyre.compile(r"^nvidia-nvswitch\d*: SXid \(PCI:([0-9a-fA-F:.]+)\):\s*(\d+)\s*,?\s*(.*)$")
_DEV = lazyre.compile(r"^(\S+)\s+([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])(?:\s+([\w.-]+))?:\s*(.*)$")
_AER_HDR = lazyre.compile(r"AER:\s*(Multiple\s+)?(Corrected|Correctable|Uncorrected|Uncorrectable)\s*(\([^)]*\))?\s*error"
                      r"(?: message)? received(?: from|:)\s*([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])")
_AER_BUS = lazyre.compile(r"PCIe Bus Error: severity=([^,]+),\s*type=([^,]+),\s*(.*)$")
_AER_BIT = lazyre.compile(r"^\[\s*(\d+)\]\s+(\S+)")
_RATELIMIT = lazyre.compile(r"^aer_ratelimit: (\d+) callbacks suppressed")
_LINK = lazyre.compile(r"available PCIe bandwidth")
_LINK_AT = lazyre.compile(r"limited by .*? link at ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])")
_HOTPLUG = lazyre.compile(r"pciehp: Slot\(([^)]*)\): (Link Down|Link Up|Card not present|Card present)")
_MLX_MODULE = lazyre.compile(r"Port module event(\[error\])?: module (\d+), (.*)$")
_INTEL_FAULT = lazyre.compile(r"DMAR: \[(DMA \w+|INTR-REMAP)[^\]]*\] Request device \[([0-9a-fA-F:.]+)\].*?"
                          r"(?:\[fault reason (0x[0-9a-fA-F]+)\]|fault reason (0x[0-9a-fA-F]+))\s*(.*)$")
_AMD_FAULT = lazyre.compile(r"Event logged \[(\w+)(?:\s+device=([0-9a-fA-F:.]+))?([^\]]*)\]")
_AMD_DEV = lazyre.compile(r"(?:device=|^amd_iommu\S* )([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])")
_SMMU_EVT = lazyre.compile(r"event (0x[0-9a-fA-F]+) received")

_SEVERITY = {
    "corrected": "correctable",
    "correctable": "correctable",
    "uncorrected (non-fatal)": "uncorrectable-nonfatal",
    "uncorrectable (non-fatal)": "uncorrectable-nonfatal",
    "uncorrected (fatal)": "uncorrectable-fatal",
    "uncorrectable (fatal)": "uncorrectable-fatal",
}

#: arm-smmu-v3.h feature bits (stable since 4.x; bits 21+ were added in 6.x)
_SMMU_FEATURES = [
    "2_lvl_strtab", "2_lvl_cdtab", "tt_le", "tt_be", "pri", "ats", "sev", "msi", "coherency",
    "trans_s1", "trans_s2", "stalls", "hyp", "stall_force", "vax", "range_inv", "btm", "sva",
    "e2h", "nesting", "attr_types_ovr", "ha", "hd", "s2fwb", "bbml2",
]


def smmu_features(mask: int) -> list[str]:
    """Decode an arm-smmu-v3 feature mask.

    >>> smmu_features(0x8305)
    ['2_lvl_strtab', 'tt_le', 'coherency', 'trans_s1', 'range_inv']
    """
    out = []
    for bit in range(32):
        if mask >> bit & 1:
            out.append(_SMMU_FEATURES[bit] if bit < len(_SMMU_FEATURES) else f"bit{bit}")
    return out


@dataclass
class _SmmuState:
    first: int
    last: int
    cmdqv: bool = False
    features: list[str] = field(default_factory=list)
    mask: str = ""
    msi: bool | None = None
    wired: bool = False
    cmdq: int | None = None
    ias: int | None = None
    oas: int | None = None
    options: str = ""


def sniff(doc: Document) -> float:
    lines = [ln for ln in doc.lines[:200] if ln.strip()]
    if not lines:
        return 0.0
    if any(_PERMISSION.match(ln) for ln in lines[:3]):
        return 0.8
    prefixed = sum(1 for ln in lines if strip_prefix(ln)[3])
    keyed = sum(1 for ln in lines if _is_kernel_message(strip_prefix(ln)[0]))
    share = prefixed / len(lines)
    if share >= 0.6:
        return 0.9
    if share >= 0.3 and keyed:
        return 0.7
    if keyed / len(lines) >= 0.5:
        return 0.6
    return 0.0


_KERNEL_WORDS = lazyre.compile(
    r"^(?:NVRM: |nvidia-nvswitch\d*: |iommu: |DMAR(?:-IR)?: |AMD-Vi: |arm-smmu|aer_ratelimit:|"
    r"(?:pci|pcieport|nvidia|mlx5_core|nvme) [0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]: )"
)


def _is_kernel_message(msg: str) -> bool:
    return bool(_KERNEL_WORDS.match(msg))


def _bdf(text: str) -> str:
    return text.lower()


def parse(doc: Document, ctx: ParseContext) -> None:
    try:
        _parse(doc, ctx)
    except (ValueError, OverflowError) as exc:
        # last line of defence for numbers no real tool prints (a 5000-digit count, 1e400 %)
        raise ParseError(f"unreadable value: {str(exc)[:120]}") from None


def _parse(doc: Document, ctx: ParseContext) -> None:
    lines = doc.lines
    if any(_PERMISSION.match(ln.strip()) for ln in lines[:5]) and not any(
        strip_prefix(ln)[3] for ln in lines[:50]
    ):
        raise NotApplicable("dmesg could not read the kernel buffer (permission denied; "
                            "run as root or set kernel.dmesg_restrict=0)")

    msgs = [strip_prefix(ln) for ln in lines]
    recognised = sum(1 for m in msgs if m[3] or _is_kernel_message(m[0]))
    if recognised == 0:
        raise NotApplicable("no kernel log lines")

    release = release_origin = ""
    release_index = 0
    domain = policy = iommu = ""
    on_cmdline = False
    mode_index: int | None = None
    domain_index: int | None = None
    smmus: dict[str, _SmmuState] = {}
    cmdqv_global: int | None = None
    has_boot = False
    hypervisor: tuple[int, str] | None = None
    cmdline_domain: str | None = None
    cmdline_policy = ""
    cmdline_index: int | None = None
    events = 0
    counts = {"xid": 0, "aer": 0, "smmu_event": 0}
    aer: dict | None = None

    def flush_aer() -> None:
        nonlocal aer, events
        if aer is None:
            return
        ctx.add(DmesgEvent, aer["index"], aer["end"], kind="aer", device=aer["device"],
                code=aer["code"], message=aer["message"], details=aer["bits"],
                timestamp=aer["stamp"], uptime_s=aer["mono"])
        events += 1
        counts["aer"] += 1
        aer = None

    def event(i: int, kind: str, stamp: str, mono: float | None, **kw) -> None:
        nonlocal events
        ctx.add(DmesgEvent, i, kind=kind, timestamp=stamp, uptime_s=mono, **kw)
        events += 1
        if kind in counts:
            counts[kind] += 1

    for i, (msg, stamp, mono, _known) in enumerate(msgs):
        if not msg:
            continue
        if mono == 0.0:
            has_boot = True

        dev = _DEV.match(msg)
        # AER bit lines and the status line continue the record opened by 'PCIe Bus Error'
        if aer is not None:
            if dev and _bdf(dev.group(2)) == aer["device"]:
                rest = dev.group(4)
                b = _AER_BIT.match(rest)
                if b:
                    aer["bits"].append(b.group(2))
                    aer["end"] = i
                    continue
                if rest.startswith(("device [", "TLP Header", "Error of this Agent")):
                    aer["end"] = i
                    continue
            flush_aer()

        if m := _BANNER.match(msg):
            release, release_origin, release_index, has_boot = m.group(1), "banner", i, True
            continue
        if not release and (m := _BOOT_IMAGE.search(msg)):
            release, release_origin, release_index = m.group(1), "boot_image", i
            continue
        if m := _HYPERVISOR.match(msg):
            hypervisor = (i, m.group(1))
            continue
        if (m := _CMDLINE.match(msg)) and cmdline_domain is None:
            cmdline_domain, cmdline_policy = _cmdline_iommu(m.group(1))
            if cmdline_domain or cmdline_policy:
                cmdline_index = i
        if m := _DOMAIN.match(msg):
            text = m.group(1)
            on_cmdline = on_cmdline or "command line" in text
            domain = re.sub(r"\s*\(set via.*$", "", text).strip().lower()
            # the domain-type line is the one a reader wants to see cited
            domain_index = i
            continue
        if m := _POLICY.match(msg):
            policy = m.group(1).lower()
            on_cmdline = on_cmdline or "command line" in m.group(2)
            mode_index = i if mode_index is None else mode_index
            continue
        if msg.startswith(("DMAR:", "DMAR-IR:")):
            if (m := _INTEL_FAULT.search(msg)):
                event(i, "iommu_fault", stamp, mono, device=_norm_dev(m.group(2)),
                      code=m.group(3) or m.group(4) or "", message=msg)
            iommu = iommu or "intel"
            mode_index = i if mode_index is None else mode_index
            continue
        if msg.startswith(("AMD-Vi:", "amd_iommu")) or "AMD-Vi" in msg[:40]:
            iommu = iommu or "amd"
            mode_index = i if mode_index is None else mode_index
            if (m := _AMD_FAULT.search(msg)):
                d = _AMD_DEV.search(msg)
                event(i, "iommu_fault", stamp, mono, device=_bdf(d.group(1)) if d else "",
                      code=m.group(1), message=msg)
            continue
        if m := _SMMU.match(msg):
            name, rest = m.group(1), m.group(2)
            iommu = iommu or "smmu"
            st = smmus.setdefault(name, _SmmuState(first=i, last=i))
            st.last = i
            if (x := _SMMU_IAS.search(rest)):
                st.ias, st.oas, st.mask = int(x.group(1)), int(x.group(2)), x.group(3).lower()
                st.features = smmu_features(int(x.group(3), 16))
            elif (x := _SMMU_Q.search(rest)):
                st.cmdq = int(x.group(1))
            elif (x := _SMMU_OPT.search(rest)):
                st.options = x.group(1).lower()
            elif "msi_domain absent" in rest or "falling back to wired irqs" in rest:
                st.wired = True
            if _CMDQV.search(rest):
                st.cmdqv = True
            kind_code = _smmu_event_code(rest)
            if kind_code:
                event(i, "smmu_event", stamp, mono, device=name, code=kind_code, message=rest)
            continue
        if _CMDQV.search(msg):
            cmdqv_global = i if cmdqv_global is None else cmdqv_global
            continue
        if msg.startswith("NVRM: Xid"):
            m = _XID.match(msg)
            if not m:
                ctx.warn(i, f"unreadable Xid line: {msg[:80]!r}")
                continue
            device = f"{m.group(1).lower()}.{m.group(2) or '0'}"
            text, process = _xid_text(m.group(4))
            event(i, "xid", stamp, mono, device=device, code=m.group(3), message=text, process=process)
            continue
        if m := _SXID.match(msg):
            event(i, "sxid", stamp, mono, device=_norm_dev(m.group(1)), code=m.group(2),
                  message=m.group(3))
            continue
        if m := _RATELIMIT.match(msg):
            event(i, "aer_ratelimit", stamp, mono, code=m.group(1), message=msg)
            continue
        if not dev:
            continue
        driver, bdf, iface, rest = dev.group(1), _bdf(dev.group(2)), dev.group(3) or "", dev.group(4)
        if m := _AER_BUS.search(rest):
            code = _SEVERITY.get(m.group(1).strip().lower(), m.group(1).strip().lower())
            aer = {"index": i, "end": i, "device": bdf, "code": code, "bits": [],
                   "message": f"severity={m.group(1).strip()}, type={m.group(2).strip()}, {m.group(3).strip()}",
                   "stamp": stamp, "mono": mono}
            continue
        if m := _AER_HDR.search(rest):
            source = _bdf(m.group(4))
            if not _bus_error_follows(msgs, i, source):
                sev = m.group(2).lower() + (f" {m.group(3).lower()}" if m.group(3) else "")
                code = _SEVERITY.get(sev, sev)
                event(i, "aer", stamp, mono, device=source, code=code, message=rest)
            continue
        if _LINK.search(rest):
            at = _LINK_AT.search(rest)
            event(i, "pcie_link", stamp, mono, device=_bdf(at.group(1)) if at else bdf,
                  code="limited" if "limited by" in rest else "ok", message=rest)
            continue
        if m := _HOTPLUG.search(rest):
            event(i, "pcie_hotplug", stamp, mono, device=bdf, code=m.group(2).lower().replace(" ", "_"),
                  message=rest)
            continue
        if driver.startswith("mlx5"):
            code = _mlx5_code(rest)
            if code:
                event(i, "mlx5", stamp, mono, device=bdf, code=code, message=rest, interface=iface)
    flush_aer()

    if release:
        ctx.add(KernelVersion, release_index, release=release, page_size_hint=page_size_hint(release),
                origin=release_origin)
    # a boot parameter (iommu=pt, iommu.passthrough=, iommu.strict=) proves the mode when the
    # line the kernel prints about it is not in the excerpt
    if not domain and cmdline_domain:
        domain, on_cmdline = cmdline_domain, True
        domain_index = cmdline_index if domain_index is None else domain_index
    if not policy and cmdline_policy:
        policy, on_cmdline = cmdline_policy, True
    if mode_index is None and cmdline_index is not None:
        mode_index = cmdline_index
    if mode_index is not None or smmus or domain_index is not None:
        idx = mode_index if mode_index is not None else (
            domain_index if domain_index is not None else min(s.first for s in smmus.values()))
        if domain_index is not None:
            idx = domain_index
        ctx.add(IommuMode, idx, default_domain=domain, policy=policy, iommu=iommu,
                set_on_cmdline=on_cmdline)
    if hypervisor is not None:
        hyp = hypervisor[1].strip().lower().replace(" ", "-")
        ctx.add(Virtualization, hypervisor[0], role="guest", hypervisor=_HYPERVISORS.get(hyp, hyp),
                evidence=f"kernel log: Hypervisor detected: {hypervisor[1]}")
    # "no CMDQV" is believed only where the excerpt would have shown a CMDQV line
    cmdqv_absent = (doc.coverage or WHOLE).believes_absence(_SAMPLE_CMDQV)
    for name, st in smmus.items():
        msi = False if st.wired else (True if "msi" in st.features else None)
        cmdqv = True if (st.cmdqv or cmdqv_global is not None) else (False if cmdqv_absent else None)
        ctx.add(Smmu, st.first, st.last, device=name, cmdqv=cmdqv,
                features=st.features, features_mask=st.mask, msi=msi, cmdq_entries=st.cmdq,
                ias_bits=st.ias, oas_bits=st.oas, options_mask=st.options)
    if cmdqv_global is not None and not smmus:
        ctx.add(Smmu, cmdqv_global, device="", cmdqv=True)
    ctx.add(DmesgSummary, 0, max(len(lines) - 1, 0), lines=len(lines), events=events,
            xid_events=counts["xid"], aer_events=counts["aer"], smmu_events=counts["smmu_event"],
            has_boot=has_boot)


_HYPERVISORS = {"kvm": "kvm", "vmware": "vmware", "microsoft-hyper-v": "microsoft", "xen-hvm": "xen",
                "xen-pv": "xen", "acrn": "acrn", "jailhouse": "jailhouse"}


def _cmdline_iommu(text: str) -> tuple[str, str]:
    """(default domain, policy) set by the boot parameters of a 'Command line:' log line.

    >>> _cmdline_iommu("ro intel_iommu=on iommu=pt quiet")
    ('passthrough', '')
    >>> _cmdline_iommu("iommu.passthrough=0 iommu.strict=1")
    ('translated', 'strict')
    >>> _cmdline_iommu("root=/dev/sda1 ro")
    ('', '')
    """
    domain = policy = ""
    for m in _CMDLINE_IOMMU.finditer(text[:8192]):
        key, value = m.group(1), m.group(2).lower()
        if key == "iommu" and "pt" in value.split(","):
            domain = "passthrough"
        elif key == "iommu" and "nopt" in value.split(","):
            domain = "translated"
        elif key == "iommu.passthrough" and value in ("1", "0", "y", "n", "on", "off"):
            domain = "passthrough" if value in ("1", "y", "on") else "translated"
        elif key == "iommu.strict" and value in ("1", "0", "y", "n", "on", "off"):
            policy = "strict" if value in ("1", "y", "on") else "lazy"
    return domain, policy


def _norm_dev(text: str) -> str:
    """Intel fault and SXid device fields come without domain or function: make them full BDFs."""
    t = text.lower()
    if re.fullmatch(r"[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", t):
        return "0000:" + t
    if re.fullmatch(r"[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}", t):
        return t[-10:] + ".0"
    return t


def _xid_text(rest: str) -> tuple[str, str]:
    """Drop the optional pid=/name= fields; return (free text, process name)."""
    process = ""
    m = re.match(r"pid=('?<?[^,]*>?'?)\s*,\s*", rest)
    if m:
        rest = rest[m.end():]
    m = re.match(r"name=([^,]*)\s*,\s*", rest)
    if m:
        name = m.group(1).strip().strip("'")
        process = "" if name in ("<unknown>", "<n/a>") else name
        rest = rest[m.end():]
    return rest.strip(), process


def _bus_error_follows(msgs: list, i: int, source: str) -> bool:
    for msg, *_ in msgs[i + 1:i + 4]:
        d = _DEV.match(msg)
        if not d:
            continue
        if _AER_HDR.search(d.group(4)):
            return False
        if _bdf(d.group(2)) == source and "PCIe Bus Error" in d.group(4):
            return True
    return False


def _smmu_event_code(rest: str) -> str:
    low = rest.lower()
    if "cmd_sync timeout" in low:
        return "cmd_sync_timeout"
    if "cmdq error" in low:
        return "cmdq_error"
    if "gerror" in low and "0x" in low:
        return "gerror"
    if "overflow" in low and ("evtq" in low or "event queue" in low):
        return "evtq_overflow"
    m = _SMMU_EVT.search(rest)
    return m.group(1).lower() if m else ""


def _mlx5_code(rest: str) -> str:
    m = _MLX_MODULE.search(rest)
    if m:
        if m.group(1):
            return "module_error"
        text = m.group(3).lower()
        if "unplugged" in text:
            return "cable_unplugged"
        if "plugged" in text:
            return "cable_plugged"
        return "module_error" if "error" in text else ""
    low = rest.lower()
    if low.startswith("link down"):
        return "link_down"
    if low.startswith("link up"):
        return "link_up"
    if "insufficient power" in low:
        return "insufficient_power"
    if re.search(r"fatal error \d+ detected", low):
        return "health_fatal"
    if "mlx5_cmd_out_err" in low or ("failed" in low and "status" in low and "syndrome" in low):
        return "cmd_error"
    return ""


FORMATS = [
    Format(
        name="dmesg",
        command="dmesg",
        facts=("iommu.mode", "iommu.smmu", "dmesg.event", "dmesg.summary", "kernel.version",
               "platform.virtualization"),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"^\s*(?:sudo\s+)?dmesg\b", r"\bjournalctl\b.*(?:\s-k\b|--dmesg)",
                          r"/var/log/(?:kern\.log|syslog|messages)"),
        description="kernel log: dmesg (any timestamp style), journalctl -k, syslog",
    )
]
