"""virt-detect - Command

Virtualization probes: ``systemd-detect-virt`` (plain, ``--vm``/``-v``, ``--container``/``-c``),
``virt-what``, ``cat /sys/class/dmi/id/{sys_vendor,product_name,bios_vendor,...}`` (also the
``grep . /sys/class/dmi/id/*`` form), ``cat /sys/hypervisor/type`` and
``grep -c hypervisor /proc/cpuinfo``. The input is either the output of one probe (the
command known from the transcript) or a transcript of several probes on one machine, with
``$ cmd`` lines as command boundaries. Yields one ``platform.virtualization`` (role guest,
bare-metal, container or unknown) and, when DMI was read, one ``platform.dmi``.

``systemd-detect-virt`` answers first; then ``virt-what``, ``/sys/hypervisor/type``, DMI
vendor names and the x86 ``hypervisor`` CPU flag. When a container is seen the role is
``container`` whatever the hypervisor; ``hypervisor`` still says whether that container runs
in a VM.

Sample input::

    $ systemd-detect-virt
    kvm
    $ systemd-detect-virt --container
    none
    $ cat /sys/class/dmi/id/sys_vendor /sys/class/dmi/id/product_name /sys/class/dmi/id/bios_vendor
    QEMU
    Standard PC (Q35 + ICH9, 2009)
    SeaBIOS
    $ grep -c hypervisor /proc/cpuinfo
    208

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "virt-detect"); parse(doc, ctx)
    >>> v = ctx.facts[0]; (v.role, v.hypervisor, v.container, v.source.line)
    ('guest', 'kvm', 'none', 2)
    >>> d = ctx.facts[1]; (d.sys_vendor, d.product_name, d.bios_vendor)
    ('QEMU', 'Standard PC (Q35 + ICH9, 2009)', 'SeaBIOS')
    >>> sniff(doc) > 0.8
    True
    >>> sniff(Document.from_text("kvm\\n"))
    0.4
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.platform import Dmi, Virtualization


SAMPLE = """\
$ systemd-detect-virt
kvm
$ systemd-detect-virt --container
none
$ cat /sys/class/dmi/id/sys_vendor /sys/class/dmi/id/product_name /sys/class/dmi/id/bios_vendor
QEMU
Standard PC (Q35 + ICH9, 2009)
SeaBIOS
$ grep -c hypervisor /proc/cpuinfo
208
"""

VM_IDS = frozenset({
    "kvm", "qemu", "amazon", "microsoft", "vmware", "oracle", "xen", "google", "parallels",
    "bhyve", "powervm", "zvm", "apple", "sre", "acrn", "qnx", "bochs", "uml", "vm-other",
})
CONTAINER_IDS = frozenset({
    "docker", "podman", "lxc", "lxc-libvirt", "systemd-nspawn", "openvz", "wsl", "proot",
    "pouch", "rkt", "container-other",
})
# virt-what prints its own vocabulary; map it onto systemd-detect-virt ids
_VIRT_WHAT = {
    "kvm": "kvm", "qemu": "qemu", "aws": "amazon", "hyperv": "microsoft", "vmware": "vmware",
    "virtualbox": "oracle", "xen": "xen", "xen-hvm": "xen", "xen-dom0": "none", "xen-domU": "xen",
    "google_cloud": "google", "parallels": "parallels", "bhyve": "bhyve", "powervm_lx86": "powervm",
    "ibm_power-kvm": "kvm", "ibm_systemz": "zvm", "nutanix_ahv": "kvm", "ovirt": "kvm",
    "rhev": "kvm", "alibaba_cloud": "kvm", "redhat": "kvm", "openstack": "kvm",
}
_VIRT_WHAT_CONTAINERS = {"docker": "docker", "podman": "podman", "lxc": "lxc", "openvz": "openvz",
                         "wsl": "wsl", "systemd-nspawn": "systemd-nspawn"}
_DMI_KEYS = ("sys_vendor", "product_name", "bios_vendor", "board_vendor", "product_version")
_DMI_PATH = lazyre.compile(r"/sys/(?:class/dmi/id|devices/virtual/dmi/id)/(\w+)")
_DMI_GREP = lazyre.compile(r"^/sys/(?:class/dmi/id|devices/virtual/dmi/id)/(\w+):(.*)$")
_PROMPT = lazyre.compile(r"^\s*(?:\[[^\]]*\]\s*)?(?:[\w.@:~/-]*[$#%>])\s+(.*)$")
_COMMAND_WORDS = ("systemd-detect-virt", "virt-what", "cat", "grep", "ls", "sudo", "head",
                  "echo", "dmidecode", "lscpu", "hostnamectl")
_ID_LINE = lazyre.compile(r"^[a-z][a-z0-9-]*$")


def _vm_from_dmi(vendor: str, product: str) -> str:
    """Hypervisor implied by DMI strings; 'none' for hardware vendors, '' when unsure."""
    v, p = vendor.lower(), product.lower()
    if not v and not p:
        return ""
    if v.startswith("qemu") or "kvm" in p or p.startswith("openstack") or v.startswith("openstack"):
        return "kvm"
    if v.startswith("amazon ec2"):
        return "none" if p.endswith(".metal") else "amazon"
    if v.startswith("microsoft") and "virtual machine" in p:
        return "microsoft"
    if v.startswith("vmware"):
        return "vmware"
    if v.startswith("google"):
        return "google"
    if v.startswith("xen"):
        return "xen"
    if v.startswith("innotek"):
        return "oracle"
    if v.startswith("parallels"):
        return "parallels"
    return "none"


@dataclass
class _Segment:
    command: str
    index: int  # line of the command itself, or -1 when the command came from doc.command
    lines: list[tuple[int, str]] = field(default_factory=list)


def _command_of(line: str) -> str | None:
    if line.startswith("$ "):
        return line[2:].strip()
    m = _PROMPT.match(line)
    if m and m.group(1).split(" ", 1)[0] in _COMMAND_WORDS:
        return m.group(1).strip()
    return None


def _segments(doc: Document) -> list[_Segment]:
    segs: list[_Segment] = []
    current = _Segment(command=(doc.command or "").strip(), index=-1)
    for i, line in enumerate(doc.lines):
        if line.startswith("## "):
            continue
        cmd = _command_of(line)
        if cmd is not None:
            if current.command or current.lines:
                segs.append(current)
            current = _Segment(command=cmd, index=i)
            continue
        if line.strip():
            current.lines.append((i, line.strip()))
    if current.command or current.lines:
        segs.append(current)
    return segs


def sniff(doc: Document) -> float:
    head = [ln.strip() for ln in doc.lines[:200] if ln.strip() and not ln.startswith("## ")]
    if not head:
        return 0.0
    cmds = [c for c in (_command_of(ln) for ln in head) if c]
    if any("systemd-detect-virt" in c or "virt-what" in c or "/sys/class/dmi/id" in c
           or "/sys/hypervisor" in c for c in cmds):
        return 0.9
    if sum(1 for ln in head if _DMI_GREP.match(ln)) >= 2:
        return 0.7
    if len(head) == 1 and head[0] in VM_IDS | CONTAINER_IDS | {"none"}:
        return 0.4
    return 0.0


@dataclass
class _State:
    vm: str = ""
    vm_index: int | None = None
    container: str = ""
    container_index: int | None = None
    either: str = ""
    either_index: int | None = None
    virt_what: list[str] = field(default_factory=list)
    virt_what_seen: bool = False
    virt_what_index: int | None = None
    xen_type: str = ""
    xen_index: int | None = None
    cpu_flag: int | None = None
    cpu_flag_index: int | None = None
    dmi: dict[str, str] = field(default_factory=dict)
    dmi_first: int | None = None
    dmi_last: int | None = None


def parse(doc: Document, ctx: ParseContext) -> None:
    try:
        _parse(doc, ctx)
    except (ValueError, OverflowError) as exc:
        # last line of defence for numbers no real tool prints (a 5000-digit count, 1e400 %)
        raise ParseError(f"unreadable value: {str(exc)[:120]}") from None


def _parse(doc: Document, ctx: ParseContext) -> None:
    st = _State()
    for seg in _segments(doc):
        cmd = seg.command
        if "systemd-detect-virt" in cmd or (not cmd and _looks_like_id(seg)):
            _detect_virt(ctx, seg, st)
        elif "virt-what" in cmd:
            _virt_what(ctx, seg, st)
        elif "/sys/hypervisor/type" in cmd:
            for i, text in seg.lines:
                if "No such file" not in text and _ID_LINE.match(text):
                    st.xen_type, st.xen_index = text, i
                    break
        elif "hypervisor" in cmd and "/proc/cpuinfo" in cmd and "-c" in cmd.split():
            for i, text in seg.lines:
                if re.fullmatch(r"[0-9]{1,9}", text):
                    st.cpu_flag, st.cpu_flag_index = int(text), i
                    break
        elif _DMI_PATH.search(cmd) or any(_DMI_GREP.match(t) for _, t in seg.lines):
            _dmi(ctx, seg, st)
    _emit(ctx, st)


def _looks_like_id(seg: _Segment) -> bool:
    return len(seg.lines) >= 1 and seg.lines[0][1] in VM_IDS | CONTAINER_IDS | {"none"}


def _detect_virt(ctx: ParseContext, seg: _Segment, st: _State) -> None:
    try:
        args = shlex.split(seg.command.split(";")[0].split("|")[0]) if seg.command else []
    except ValueError:
        args = seg.command.split()
    mode = "either"
    if any(a in ("--container", "-c") for a in args):
        mode = "container"
    elif any(a in ("--vm", "-v") for a in args):
        mode = "vm"
    for i, text in seg.lines:
        if text.startswith("exit="):
            continue
        if not _ID_LINE.match(text):
            ctx.warn(i, f"unexpected systemd-detect-virt output: {text[:60]!r}")
            continue
        if text not in VM_IDS | CONTAINER_IDS | {"none"}:
            # a newer systemd may know ids we do not; keep them rather than guess
            ctx.warn(i, f"unknown virtualization id {text!r}")
        _record(ctx, st, mode, text, i)
        break


def _record(ctx: ParseContext, st: _State, mode: str, value: str, i: int) -> None:
    if mode == "either" and value in CONTAINER_IDS:
        mode = "container"
    attr = mode
    if mode == "either" and value != "none":
        # unknown ids from a newer systemd are VMs: container ids are a short, stable list
        attr = "vm"
    old = getattr(st, attr)
    if old and old != value:
        ctx.warn(i, f"conflicting answers {old!r} and {value!r}: is this more than one machine?")
        return
    if not old:
        setattr(st, attr, value)
        setattr(st, attr + "_index", i)


def _virt_what(ctx: ParseContext, seg: _Segment, st: _State) -> None:
    st.virt_what_seen = True
    st.virt_what_index = seg.lines[0][0] if seg.lines else (seg.index if seg.index >= 0 else None)
    for i, text in seg.lines:
        if "virt-what" in text and ("must be run as root" in text or "not found" in text):
            st.virt_what_seen, st.virt_what_index = False, None
            ctx.warn(i, text[:80])
            return
        st.virt_what.append(text)


def _dmi(ctx: ParseContext, seg: _Segment, st: _State) -> None:
    grep_form = [(i, _DMI_GREP.match(t)) for i, t in seg.lines]
    if any(m for _, m in grep_form):
        for i, m in grep_form:
            if m and m.group(1) in _DMI_KEYS:
                _dmi_set(st, m.group(1), m.group(2).strip(), i)
        return
    files = _DMI_PATH.findall(seg.command)
    # cat prints one line per readable file, and an error line in its place for a missing one
    queue = list(seg.lines)
    for name in files:
        if not queue:
            ctx.warn(seg.index if seg.index >= 0 else None, f"no output for DMI file {name} (truncated?)")
            break
        i, text = queue.pop(0)
        if text.startswith("cat:") or "No such file" in text or "Permission denied" in text:
            continue
        if name in _DMI_KEYS:
            _dmi_set(st, name, text, i)


def _dmi_set(st: _State, key: str, value: str, i: int) -> None:
    st.dmi.setdefault(key, value)
    st.dmi_first = i if st.dmi_first is None else min(st.dmi_first, i)
    st.dmi_last = i if st.dmi_last is None else max(st.dmi_last, i)


def _emit(ctx: ParseContext, st: _State) -> None:
    evidence: list[str] = []
    hyp, container = "unknown", "unknown"
    # the fact cites the earliest probe line that decided it
    used: list[int] = []

    if st.vm:
        hyp = st.vm
        used.append(st.vm_index)
        evidence.append(f"systemd-detect-virt vm={st.vm}")
    if st.container:
        container = st.container
        used.append(st.container_index)
        evidence.append(f"systemd-detect-virt container={st.container}")
    if st.either == "none":
        # plain systemd-detect-virt printing 'none' rules out both a VM and a container
        hyp = "none" if hyp == "unknown" else hyp
        container = "none" if container == "unknown" else container
        used.append(st.either_index)
        evidence.append("systemd-detect-virt=none")

    if st.virt_what_seen:
        vms = [_VIRT_WHAT[w] for w in st.virt_what if w in _VIRT_WHAT]
        cts = [_VIRT_WHAT_CONTAINERS[w] for w in st.virt_what if w in _VIRT_WHAT_CONTAINERS]
        if hyp == "unknown":
            hyp = next((v for v in vms if v != "none"), "none" if not st.virt_what or vms else hyp)
            used.append(st.virt_what_index)
        if container == "unknown" and cts:
            container = cts[0]
        evidence.append("virt-what=" + (",".join(st.virt_what) or "(empty)"))

    if st.xen_type and hyp == "unknown":
        hyp = st.xen_type
        used.append(st.xen_index)
        evidence.append(f"/sys/hypervisor/type={st.xen_type}")

    vendor, product = st.dmi.get("sys_vendor", ""), st.dmi.get("product_name", "")
    if st.dmi:
        evidence.append(f"dmi sys_vendor={vendor!r} product_name={product!r}")
        guess = _vm_from_dmi(vendor, product)
        if hyp == "unknown" and guess:
            hyp = guess
            used.append(st.dmi_first)
        elif hyp == "none" and guess not in ("", "none"):
            ctx.warn(st.dmi_first, f"DMI says {vendor!r} (a VM) but the probe said no hypervisor")

    if st.cpu_flag is not None:
        evidence.append(f"cpuinfo hypervisor flag on {st.cpu_flag} CPUs")
        # the flag is x86-only: its absence proves nothing on arm64
        if st.cpu_flag > 0 and hyp in ("unknown", "none"):
            if hyp == "none":
                ctx.warn(st.cpu_flag_index, "CPU 'hypervisor' flag set but the probe said no hypervisor")
            else:
                used.append(st.cpu_flag_index)

    lines = [i for i in used if i is not None]
    if not used and not st.dmi and st.cpu_flag is None and not st.virt_what_seen:
        if ctx.warnings:
            # a probe ran but printed something we cannot read: say so rather than step aside
            line, message = ctx.warnings[0]
            raise ParseError(message, line)
        raise NotApplicable("no virtualization probe output")

    if container not in ("unknown", "none"):
        role = "container"
    elif hyp not in ("unknown", "none"):
        role = "guest"
    elif hyp == "unknown" and st.cpu_flag:
        role = "guest"
    elif hyp == "none":
        role = "bare-metal"
    else:
        role = "unknown"

    index = min(lines) if lines else (st.dmi_first if st.dmi_first is not None else st.cpu_flag_index)
    ctx.add(Virtualization, index, role=role, hypervisor=hyp, container=container,
            evidence="; ".join(evidence))
    if st.dmi:
        ctx.add(Dmi, st.dmi_first, st.dmi_last, **{k: st.dmi.get(k, "") for k in _DMI_KEYS})


FORMATS = [
    Format(
        name="virt-detect",
        command="systemd-detect-virt; systemd-detect-virt --container; "
                "cat /sys/class/dmi/id/sys_vendor /sys/class/dmi/id/product_name /sys/class/dmi/id/bios_vendor",
        facts=("platform.virtualization", "platform.dmi"),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\bsystemd-detect-virt\b", r"\bvirt-what\b", r"/sys/class/dmi/id/",
                          r"/sys/devices/virtual/dmi/id/", r"/sys/hypervisor/type",
                          r"grep\s+(?:-\w+\s+)*hypervisor\s+/proc/cpuinfo"),
        description="virtualization probes: systemd-detect-virt, virt-what, DMI ids, /sys/hypervisor, cpuinfo flag",
    )
]
