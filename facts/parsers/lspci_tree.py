"""lspci -tv - Command

The PCI bus tree of ``lspci -tv`` (also ``-t``, ``-tvnn``, ``-tvv`` with address lines, and the
``-t -s <bdf>`` form whose lines start with ``DDDD:BB:``). pciutils draws it with a fixed
algorithm (``ls-tree.c``): root buses ``[DDDD:BB]``, ``+-`` for a non-last child, ``\\-`` for
the last one, ``--`` for an only child; a bridge prints ``dd.f-[sec]-`` or ``dd.f-[sec-sub]-``
followed by its bus; ``-v`` appends ``  vendor device`` to non-bridge devices (bridges never get
a name). Continuation lines repeat ``|`` under each ``+``, so a child's connector column names
its bus.

Yields ``pcie.tree_node`` per device and ``pcie.switch_group`` per PCIe switch (an upstream
port: a bridge below another bridge that itself has bridges below it), listing the GPUs, NICs
and NVSwitches beneath it, so that a rule can tell whether a GPU and its NIC share a switch.
Endpoint kinds come from the names only (no class is printed): NVIDIA devices other than
NVSwitches, audio and USB functions are GPUs; Mellanox/ConnectX/BlueField/EFA devices are NICs.

Sample input::

    -+-[0000:00]-+-00.0  Intel Corporation Ice Lake Memory Map/VT-d
     |           \\-1c.0-[01-02]----00.0-[02]----00.0  ASPEED Technology, Inc. ASPEED Graphics Family
     \\-[0000:14]-+-00.0  Intel Corporation Ice Lake Memory Map/VT-d
                 \\-01.0-[15-1a]----00.0-[16-1a]--+-00.0-[17]----00.0  Mellanox Technologies MT2910 Family [ConnectX-7]
                                                 +-01.0-[18]----00.0  NVIDIA Corporation GH100 [H100 SXM5 80GB]
                                                 \\-03.0-[1a]--

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "lspci-tv"); parse(doc, ctx)
    >>> nodes = {f.bdf: f for f in ctx.facts if f.fact_type == "pcie.tree_node"}
    >>> g = nodes["0000:18:00.0"]
    >>> (g.parent_bdf, g.depth, g.kind, g.name, g.source.line)
    ('0000:16:01.0', 3, 'gpu', 'NVIDIA Corporation GH100 [H100 SXM5 80GB]', 5)
    >>> [(n.bdf, n.kind, n.switch_role) for n in nodes.values() if n.bridge]
    [('0000:00:1c.0', 'root_port', ''), ('0000:01:00.0', 'other', ''), ('0000:14:01.0', 'root_port', ''), ('0000:15:00.0', 'switch_port', 'upstream'), ('0000:16:00.0', 'switch_port', 'downstream'), ('0000:16:01.0', 'switch_port', 'downstream'), ('0000:16:03.0', 'switch_port', 'downstream')]
    >>> [(s.switch_bdf, s.root_port_bdf, s.gpus, s.nics, s.gpu_nic_shared) for s in ctx.facts if s.fact_type == "pcie.switch_group"]
    [('0000:15:00.0', '0000:14:01.0', ['0000:18:00.0'], ['0000:17:00.0'], True)]
    >>> sniff(doc) > 0.9
    True
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.pcie import PcieSwitchGroup, PcieTreeNode
from clusterdx.facts.parsers.lspci_vvv import endpoint_kind, split_vendor


SAMPLE = (
    "-+-[0000:00]-+-00.0  Intel Corporation Ice Lake Memory Map/VT-d\n"
    " |           \\-1c.0-[01-02]----00.0-[02]----00.0  ASPEED Technology, Inc. ASPEED Graphics Family\n"
    " \\-[0000:14]-+-00.0  Intel Corporation Ice Lake Memory Map/VT-d\n"
    "             \\-01.0-[15-1a]----00.0-[16-1a]--+-00.0-[17]----00.0  Mellanox Technologies MT2910 Family [ConnectX-7]\n"
    "                                             +-01.0-[18]----00.0  NVIDIA Corporation GH100 [H100 SXM5 80GB]\n"
    "                                             \\-03.0-[1a]--\n"
)

_BUS_TOK = lazyre.compile(r"\[(?:(?P<dom>[0-9a-fA-F]{4,8}):)?(?P<bus>[0-9a-fA-F]{2})\]")
_DEV_TOK = lazyre.compile(
    r"(?P<dev>[0-1][0-9a-fA-F])\.(?P<fn>[0-7])(?:-\[(?P<sec>[0-9a-fA-F]{2})(?:-(?P<sub>[0-9a-fA-F]{2}))?\])?")
_FILTER_PREFIX = lazyre.compile(r"^(?P<dom>[0-9a-fA-F]{4,8}):(?P<bus>[0-9a-fA-F]{2}):(?=[0-1][0-9a-fA-F]\.[0-7])")
_ROOT_LINE = lazyre.compile(r"^(?:-\[|-\+-\[| [+\\]-\[)[0-9a-fA-F]{0,8}:?[0-9a-fA-F]{2}\]-")
_CHILD = lazyre.compile(r"(?:[+\\]-|--)[0-1][0-9a-fA-F]\.[0-7](?:-\[|  |$)")
_DIAG = lazyre.compile(r"^(?:pcilib|lspci|setpci)\s*:", re.I)
_BASES = lazyre.compile(r"^\s*(?:Region \d+: |Memory at |I/O ports at |\[virtual\] |\[enhanced\] )")


@dataclass
class _Bus:
    domain: str
    #: bus number; None for a slot that opens buses (``+-[DDDD:BB]-`` under a host or bridge)
    bus: str | None
    parent: str
    depth: int


@dataclass
class _Node:
    index: int
    bdf: str
    parent: str
    depth: int
    name: str = ""
    bridge: bool = False
    vendor_id: str = ""
    device_id: str = ""
    kind: str = "other"
    role: str = ""
    children: list[str] = field(default_factory=list)


def sniff(doc: Document) -> float:
    head = [ln for ln in doc.lines[:200] if ln.strip() and not _DIAG.match(ln)]
    if not head:
        return 0.0
    roots = sum(1 for ln in head if _ROOT_LINE.match(ln))
    children = sum(1 for ln in head if _CHILD.search(ln))
    if roots and children:
        return 0.95
    if children and children >= len(head) // 2 and any(_FILTER_PREFIX.match(ln) for ln in head):
        return 0.7
    return 0.0


def parse(doc: Document, ctx: ParseContext) -> None:
    try:
        _parse(doc, ctx)
    except (ValueError, OverflowError) as exc:
        raise ParseError(f"unreadable value: {str(exc)[:120]}") from None


def _parse(doc: Document, ctx: ParseContext) -> None:
    nodes: dict[str, _Node] = {}
    slots: dict[int, _Bus] = {}
    host = _Bus("0000", None, "", 0)
    tree_lines = 0
    for i, raw in enumerate(doc.lines):
        line = raw.rstrip()
        if not line.strip() or _DIAG.match(line):
            continue
        if _line(line, i, nodes, slots, host, ctx):
            tree_lines += 1
    if not nodes:
        if tree_lines:
            raise ParseError("lspci tree without any device", doc.lineno(0))
        raise NotApplicable("no lspci -t tree lines")
    _classify(nodes)
    for n in nodes.values():
        ctx.add(PcieTreeNode, n.index, bdf=n.bdf, parent_bdf=n.parent, depth=n.depth, name=n.name, kind=n.kind,
                bridge=n.bridge, switch_role=n.role, vendor_id=n.vendor_id, device_id=n.device_id)
    _switch_groups(nodes, ctx)


def _line(line: str, i: int, nodes: dict[str, _Node], slots: dict[int, _Bus], host: _Bus,
          ctx: ParseContext) -> bool:
    """Parse one drawn line; False when it is not part of the tree."""
    n = len(line)
    pos = 0
    here: _Bus | None = None
    fm = _FILTER_PREFIX.match(line)
    if fm:
        here = _Bus(fm.group("dom").lower(), fm.group("bus").lower(), "", 0)
        pos = fm.end()
    else:
        while pos < n and line[pos] in " |":
            pos += 1
    first = True
    while pos < n:
        start = pos
        conn: int | None = None
        while pos < n and line[pos] in "-+\\":
            if line[pos] in "+\\":
                conn = pos
            pos += 1
        if pos >= n:
            return True  # an empty bus ends the line with dashes
        if first and start == pos and here is None:
            if not _BASES.match(line[pos:]):
                ctx.warn(i, f"not a tree line: {line[:80]!r}")
            return False
        first = False
        ch = line[pos]
        if ch == "[":
            m = _BUS_TOK.match(line, pos)
            if not m:
                ctx.warn(i, f"unreadable bus at column {pos + 1}")
                return True
            level = here or (slots.get(conn) if conn is not None else None) or host
            if conn is not None:
                _set_slot(slots, conn, _Bus(level.domain, None, level.parent, level.depth))
            dom = (m.group("dom") or level.domain).lower()
            here = _Bus(dom, m.group("bus").lower(), level.parent, level.depth)
            pos = m.end()
            continue
        m = _DEV_TOK.match(line, pos)
        if not m:
            rest = line[pos:]
            ctx.warn(i, f"unreadable tree entry at column {pos + 1}: {rest[:40]!r}")
            return True
        bus = here if here is not None and here.bus is not None else (slots.get(conn) if conn is not None else None)
        if bus is None or bus.bus is None:
            ctx.warn(i, f"device at column {pos + 1} has no bus above it (cut tree?)")
            return True
        if conn is not None:
            _set_slot(slots, conn, bus)
        bdf = f"{bus.domain}:{bus.bus}:{m.group('dev').lower()}.{m.group('fn')}"
        node = _Node(index=i, bdf=bdf, parent=bus.parent, depth=bus.depth)
        if bdf in nodes:
            ctx.warn(i, f"{bdf} listed twice")
        nodes[bdf] = node
        if bus.parent in nodes:
            nodes[bus.parent].children.append(bdf)
        pos = m.end()
        if m.group("sec"):
            node.bridge = True
            here = _Bus(bus.domain, m.group("sec").lower(), bdf, bus.depth + 1)
            continue
        rest = line[pos:]
        if rest.startswith("  "):
            name = rest.strip()
            if name.endswith("...") and len(line) >= 1000:
                ctx.warn(i, "line cut at 1024 bytes by lspci; name truncated")
            vendor, dev_name, vid, did = split_vendor(name)
            node.vendor_id, node.device_id = vid, did
            node.name = _strip_ids(name)
            node.kind = endpoint_kind("", vendor, dev_name, vid, did)
        elif rest.strip():
            ctx.warn(i, f"unexpected text after {bdf}: {rest[:40]!r}")
        return True
    return True


def _strip_ids(name: str) -> str:
    return re.sub(r"\s*\[[0-9a-fA-F]{4}:[0-9a-fA-F]{4}\]\s*$", "", name)


def _set_slot(slots: dict[int, _Bus], col: int, bus: _Bus) -> None:
    for c in [c for c in slots if c > col]:
        del slots[c]
    slots[col] = bus


def _classify(nodes: dict[str, _Node]) -> None:
    """Bridge roles, top-down (parents are listed before their children)."""
    for n in nodes.values():
        if not n.bridge:
            continue
        parent = nodes.get(n.parent)
        if not n.parent:
            n.kind = "root_port"
        elif parent is not None and parent.role == "upstream":
            n.kind, n.role = "switch_port", "downstream"
        elif parent is not None and parent.bridge and any(nodes[c].bridge for c in n.children if c in nodes):
            n.kind, n.role = "switch_port", "upstream"


def _below(nodes: dict[str, _Node], bdf: str) -> list[_Node]:
    out: list[_Node] = []
    stack = list(reversed(nodes[bdf].children))
    seen: set[str] = set()
    while stack:
        c = stack.pop()
        if c in seen or c not in nodes:
            continue
        seen.add(c)
        out.append(nodes[c])
        stack.extend(reversed(nodes[c].children))
    return out


def _switch_groups(nodes: dict[str, _Node], ctx: ParseContext) -> None:
    for n in nodes.values():
        if n.role != "upstream":
            continue
        below = _below(nodes, n.bdf)
        root = ""
        p = nodes.get(n.parent)
        hops = 0
        while p is not None and hops < 64:
            if p.kind == "root_port":
                root = p.bdf
                break
            p = nodes.get(p.parent)
            hops += 1
        gpus = [b.bdf for b in below if b.kind == "gpu"]
        nics = [b.bdf for b in below if b.kind == "nic"]
        ctx.add(PcieSwitchGroup, n.index, switch_bdf=n.bdf, root_port_bdf=root, depth=n.depth, gpus=gpus,
                nics=nics, nvswitches=[b.bdf for b in below if b.kind == "nvswitch"],
                downstream_ports=sum(1 for c in n.children if c in nodes and nodes[c].role == "downstream"),
                gpu_nic_shared=bool(gpus and nics))


FORMATS = [
    Format(
        name="lspci-tv",
        command="lspci -tv",
        facts=("pcie.tree_node", "pcie.switch_group"),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\blspci\b[^|;&]*\s-[a-zA-Z]*t",),
        description="lspci -tv PCI tree: parent bridge of every device, GPUs and NICs sharing a PCIe switch",
    )
]
