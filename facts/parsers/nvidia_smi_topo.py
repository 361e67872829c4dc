"""nvidia-smi topo -m - Command

The GPU/NIC topology matrix of ``nvidia-smi topo -m``: a tab-separated matrix with one row and
column per GPU and NIC (``NIC0`` with a ``NIC Legend`` in recent drivers, ``mlx5_0`` directly
in old ones), then ``CPU Affinity``, ``NUMA Affinity`` and ``GPU NUMA ID`` cells on GPU rows.
Yields ``topo.gpu`` per GPU, ``topo.link`` per unordered device pair and ``topo.nic`` per NIC.

Matrix cells are aligned by header position after splitting on tabs; the affinity cells that
follow are taken in order with empty cells dropped, because drivers print an empty cell
between ``NUMA Affinity`` and ``GPU NUMA ID``. Pastes where tabs became spaces are split on
whitespace instead.

Sample input (tab-separated)::

    	GPU0	GPU1	NIC0	NIC1	CPU Affinity	NUMA Affinity	GPU NUMA ID
    GPU0	 X 	NV18	PIX	SYS	0-55,112-167	0		N/A
    GPU1	NV18	 X 	SYS	PIX	56-111,168-223	1		N/A
    NIC0	PIX	SYS	 X 	SYS
    NIC1	SYS	PIX	SYS	 X 

    Legend:

      X    = Self
      NV#  = Connection traversing a bonded set of # NVLinks

    NIC Legend:

      NIC0: mlx5_0
      NIC1: mlx5_3

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "nvidia-smi-topo"); parse(doc, ctx)
    >>> g = [f for f in ctx.facts if f.fact_type == "topo.gpu"][1]
    >>> (g.gpu, g.cpus[:2], g.numa_node, g.gpu_numa_id, g.source.line)
    (1, [56, 57], 1, None, 3)
    >>> [(l.a, l.b, l.kind, l.link) for l in ctx.facts if l.fact_type == "topo.link"][:2]
    [('GPU0', 'GPU1', 'gpu-gpu', 'NV18'), ('GPU0', 'NIC0', 'gpu-nic', 'PIX')]
    >>> [(n.nic, n.device, n.closest_gpus) for n in ctx.facts if n.fact_type == "topo.nic"]
    [('NIC0', 'mlx5_0', [0]), ('NIC1', 'mlx5_3', [1])]
    >>> sniff(doc) > 0.9
    True
"""

from __future__ import annotations

import re

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.topo import TopoGpu, TopoLink, TopoNic
from clusterdx.facts.parsers._util import cpu_list


SAMPLE = (
    "\tGPU0\tGPU1\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
    "GPU0\t X \tNV18\tPIX\tSYS\t0-55,112-167\t0\t\tN/A\n"
    "GPU1\tNV18\t X \tSYS\tPIX\t56-111,168-223\t1\t\tN/A\n"
    "NIC0\tPIX\tSYS\t X \tSYS\n"
    "NIC1\tSYS\tPIX\tSYS\t X \n"
    "\n"
    "Legend:\n"
    "\n"
    "  X    = Self\n"
    "  NV#  = Connection traversing a bonded set of # NVLinks\n"
    "\n"
    "NIC Legend:\n"
    "\n"
    "  NIC0: mlx5_0\n"
    "  NIC1: mlx5_3\n"
)

_AFFINITY = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
#: GPUs, NICs and NVSwitches of one node: a few dozen; more means a mangled header
_MAX_DEVICES = 1024
_LINK = lazyre.compile(r"^(?:SYS|NODE|PHB|PXB|PIX|NV\d+|X)$")
_RANK = {"PIX": 0, "PXB": 1, "PHB": 2, "NODE": 3, "SYS": 4}
_GPU = lazyre.compile(r"^GPU([0-9]{1,6})$")
_NIC_LEGEND = lazyre.compile(r"^\s*(NIC\d+)\s*:\s*(\S+)\s*$")
_HEADER = lazyre.compile(r"^[ \t]+GPU0(?:[ \t]|$)")
#: a row may be indented when the whole matrix was pasted into a ticket as a block (four spaces)
_ROW = lazyre.compile(r"^[ \t]{0,8}(?:GPU\d+|NIC\d+|mlx5_\d+)\s+(?:X|SYS|NODE|PHB|PXB|PIX|NV\d+)(?:\s|$)")


def sniff(doc: Document) -> float:
    head = doc.lines[:200]
    header = next((i for i, ln in enumerate(head) if _HEADER.match(ln)), None)
    if header is None:
        return 0.0
    rows = sum(1 for ln in head[header + 1:] if _ROW.match(ln))
    legend = any(ln.strip() == "Legend:" for ln in doc.lines[:300])
    if rows and ("\t" in head[header] or legend):
        return 0.95
    if rows:
        return 0.8
    return 0.3 if legend else 0.1


def _cells(line: str, tabbed: bool) -> list[str]:
    if tabbed:
        return line.split("\t")
    text = line
    for name in _AFFINITY:
        text = text.replace(name, name.replace(" ", "_"))
    out = text.split()
    return [c.replace("_", " ") if c.replace("_", " ") in _AFFINITY else c for c in out]


def _kind(label: str) -> str:
    return "gpu" if _GPU.match(label) else "nic"


def _int_or_none(text: str) -> int | None:
    t = text.strip()
    return int(t) if re.fullmatch(r"[0-9]{1,9}", t) else None


def parse(doc: Document, ctx: ParseContext) -> None:
    try:
        _parse(doc, ctx)
    except (ValueError, OverflowError) as exc:
        # last line of defence for numbers no real tool prints (a 5000-digit count, 1e400 %)
        raise ParseError(f"unreadable value: {str(exc)[:120]}") from None


def _parse(doc: Document, ctx: ParseContext) -> None:
    lines = doc.lines
    header_i = next((i for i, ln in enumerate(lines) if _HEADER.match(ln)), None)
    if header_i is None:
        rows = [i for i, ln in enumerate(lines) if _ROW.match(ln)]
        if rows:
            _headerless(doc, ctx, rows)
            return
        if any(ln.strip() == "Legend:" for ln in lines):
            legend_i = next(i for i, ln in enumerate(lines) if ln.strip() == "Legend:")
            ctx.warn(legend_i, "topology legend without the matrix (truncated?): no topology facts")
            return
        raise NotApplicable("no nvidia-smi topo -m matrix header")
    tabbed = "\t" in lines[header_i]
    head = _cells(lines[header_i], tabbed)
    if tabbed:
        head = head[1:]
    head = [h.strip() for h in head]
    while head and not head[-1]:
        head.pop()
    devices: list[str] = []
    for h in head:
        if h in _AFFINITY or not h:
            break
        devices.append(h)
    aff_cols = [h for h in head[len(devices):] if h]
    if not devices:
        raise ParseError("topology header has no device columns", doc.lineno(header_i))
    if len(devices) > _MAX_DEVICES:
        # the matrix is walked pair by pair: tens of thousands of columns take hours
        raise ParseError(f"topology header has {len(devices)} device columns (a mangled line?)",
                         doc.lineno(header_i))

    legend: dict[str, str] = {}
    for ln in lines[header_i + 1:]:
        m = _NIC_LEGEND.match(ln)
        if m:
            legend[m.group(1)] = m.group(2)

    seen_rows: dict[str, int] = {}
    matrix: dict[tuple[str, str], tuple[str, int]] = {}
    gpus: list[tuple[int, int, list[str]]] = []
    end = len(lines)
    for i in range(header_i + 1, len(lines)):
        line = lines[i]
        if not line.strip():
            end = i
            break
        cells = _cells(line, tabbed)
        label = cells[0].strip()
        if label not in devices:
            ctx.warn(i, f"row {label[:20]!r} is not a device of the header")
            continue
        values = [c.strip() for c in cells[1:1 + len(devices)]]
        if len(values) < len(devices):
            ctx.warn(i, f"row {label} has {len(values)} of {len(devices)} cells (truncated?)")
        seen_rows[label] = i
        for col, value in zip(devices, values):
            if col == label:
                continue
            if not _LINK.match(value):
                if value:
                    ctx.warn(i, f"unknown link value {value[:12]!r} between {label} and {col}")
                continue
            matrix[(label, col)] = (value, i)
        if _kind(label) == "gpu":
            extra = [c.strip() for c in cells[1 + len(devices):] if c.strip()]
            gpus.append((i, int(_GPU.match(label).group(1)), extra))
            if aff_cols and len(extra) > len(aff_cols):
                ctx.warn(i, f"{label}: more affinity cells than header columns")

    missing = [d for d in devices if d not in seen_rows]
    if missing:
        ctx.warn(end - 1 if end > header_i + 1 else header_i,
                 f"matrix rows missing for {', '.join(missing[:6])} (truncated?)")

    numa_of: dict[str, list[int]] = {}
    for i, gpu, extra in gpus:
        values = dict(zip(aff_cols, extra))
        cpus: list[int] = []
        cpu_text = values.get("CPU Affinity", "")
        if cpu_text and cpu_text != "N/A":
            try:
                cpus = cpu_list(cpu_text)
            except (ValueError, ParseError):
                ctx.warn(i, f"GPU{gpu}: unreadable CPU Affinity {cpu_text[:40]!r}")
        nodes: list[int] = []
        numa_text = values.get("NUMA Affinity", "")
        if numa_text and numa_text != "N/A":
            try:
                nodes = cpu_list(numa_text)
            except (ValueError, ParseError):
                ctx.warn(i, f"GPU{gpu}: unreadable NUMA Affinity {numa_text[:40]!r}")
        ctx.add(TopoGpu, i, gpu=gpu, cpus=cpus, numa_node=nodes[0] if nodes else None,
                numa_nodes=nodes, gpu_numa_id=_int_or_none(values.get("GPU NUMA ID", "")))
        numa_of[f"GPU{gpu}"] = nodes

    def nic_device(label: str) -> str:
        if label in legend:
            return legend[label]
        return "" if re.match(r"^NIC\d+$", label) else label

    done: set[frozenset[str]] = set()
    for a in devices:
        for b in devices:
            if a == b or frozenset((a, b)) in done or (a, b) not in matrix:
                continue
            done.add(frozenset((a, b)))
            link, i = matrix[(a, b)]
            back = matrix.get((b, a))
            if back and back[0] != link:
                ctx.warn(back[1], f"asymmetric matrix: {a}-{b} is {link} but {b}-{a} is {back[0]}")
            ka, kb = _kind(a), _kind(b)
            if ka == "nic" and kb == "gpu":
                a, b, ka, kb = b, a, kb, ka
            kind = f"{ka}-{kb}"
            na, nb = numa_of.get(a, []), numa_of.get(b, [])
            same = (len(na) == 1 and na == nb) if kind == "gpu-gpu" and na and nb else None
            ctx.add(TopoLink, i, a=a, b=b, kind=kind, link=link,
                    nic_device=nic_device(b) if kind == "gpu-nic" else "", same_numa=same)

    nics = [d for d in devices if _kind(d) == "nic"]
    if any(re.match(r"^NIC\d+$", n) for n in nics) and not legend:
        ctx.warn(end - 1 if end > 0 else 0, "NIC Legend missing (truncated?): NIC devices unknown")
    gpu_labels = [d for d in devices if _kind(d) == "gpu"]
    for nic in nics:
        links = {}
        for g in gpu_labels:
            cell = matrix.get((g, nic)) or matrix.get((nic, g))
            if cell:
                links[g] = cell[0]
        closest = sorted(int(_GPU.match(g).group(1)) for g, v in links.items() if v in ("PIX", "PXB"))
        ranked = [v for v in links.values() if v in _RANK]
        best = min(ranked, key=_RANK.__getitem__) if ranked else ""
        index = seen_rows.get(nic, header_i)
        ctx.add(TopoNic, index, nic=nic, device=nic_device(nic), closest_gpus=closest,
                best_gpu_link=best)


def _headerless(doc: Document, ctx: ParseContext, rows: list[int]) -> None:
    """Matrix rows without their header (``nvidia-smi topo -m | grep ^GPU``).

    Each row names its own column by its ``X`` cell, so links are known between devices whose
    rows are in the excerpt; a GPU row's affinity cells follow its link cells. No ``topo.nic``
    (its closest GPUs need every GPU column).
    """
    parsed: list[tuple[int, str, list[str], list[str]]] = []
    columns: dict[int, str] = {}
    for i in rows:
        line = doc.lines[i]
        cells = [c.strip() for c in _cells(line, "\t" in line)]
        label, rest = cells[0], cells[1:]
        links: list[str] = []
        for c in rest:
            if not _LINK.match(c):
                break
            links.append(c)
        extra = [c for c in rest[len(links):] if c]
        if links.count("X") != 1:
            ctx.warn(i, f"row {label[:20]!r} without exactly one X cell")
            continue
        k = links.index("X")
        if columns.get(k, label) != label:
            ctx.warn(i, f"rows {columns[k]} and {label} both claim column {k}")
            continue
        columns[k] = label
        parsed.append((i, label, links, extra))
    ctx.warn(rows[0], "topology rows without the header line: devices named by their X cells only")
    done: set[frozenset[str]] = set()
    for i, label, links, extra in parsed:
        if _kind(label) == "gpu":
            cpus: list[int] = []
            nodes: list[int] = []
            try:
                if extra and extra[0] != "N/A":
                    cpus = cpu_list(extra[0])
                if len(extra) > 1 and extra[1] != "N/A":
                    nodes = cpu_list(extra[1])
            except (ValueError, ParseError):
                ctx.warn(i, f"{label}: unreadable affinity cells {' '.join(extra)[:40]!r}")
            ctx.add(TopoGpu, i, gpu=int(_GPU.match(label).group(1)), cpus=cpus,
                    numa_node=nodes[0] if nodes else None, numa_nodes=nodes,
                    gpu_numa_id=_int_or_none(extra[2]) if len(extra) > 2 else None)
        for j, value in enumerate(links):
            other = columns.get(j)
            if other is None or other == label or value == "X" or frozenset((label, other)) in done:
                continue
            done.add(frozenset((label, other)))
            a, b = label, other
            ka, kb = _kind(a), _kind(b)
            if ka == "nic" and kb == "gpu":
                a, b, ka, kb = b, a, kb, ka
            ctx.add(TopoLink, i, a=a, b=b, kind=f"{ka}-{kb}", link=value,
                    nic_device=b if kb == "nic" and not re.match(r"^NIC\d+$", b) else "")


FORMATS = [
    Format(
        name="nvidia-smi-topo",
        command="nvidia-smi topo -m",
        facts=("topo.gpu", "topo.link", "topo.nic"),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\bnvidia-smi\s+topo\s+(?:-m\w*|--matrix\w*)",),
        description="nvidia-smi topo -m GPU/NIC topology matrix with CPU/NUMA affinity",
    )
]
