"""numactl --hardware - Command

Output of ``numactl --hardware`` (``numactl -H``): per node its CPUs, memory size and free memory
in MB, then the distance matrix. CPU-less nodes (GH200/GB200 GPU memory, empty HBM nodes) print
``node N cpus:`` with nothing after the colon. numactl 2.0.19 widened the matrix columns; older
versions let 3-digit distances touch their neighbours, so rows are split on whitespace.
Yields one ``numa.node`` per node, at its ``cpus`` line.

Sample input::

    available: 2 nodes (0-1)
    node 0 cpus: 0 1 2 3
    node 0 size: 1031711 MB
    node 0 free: 912407 MB
    node 1 cpus:
    node 1 size: 97280 MB
    node 1 free: 96211 MB
    node distances:
    node     0    1
       0:   10   80
       1:   80   10

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "numactl-hardware"); parse(doc, ctx)
    >>> [(f.node_id, f.cpus, f.size_mb, f.free_mb, f.distances) for f in ctx.facts]
    [(0, [0, 1, 2, 3], 1031711.0, 912407.0, [10, 80]), (1, [], 97280.0, 96211.0, [80, 10])]
    >>> [f.source.line for f in ctx.facts]
    [2, 5]
    >>> sniff(doc) > 0.9
    True
"""

from __future__ import annotations

import re

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable
from clusterdx.facts.coverage import WHOLE
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.numa import NumaNode


SAMPLE = """\
available: 2 nodes (0-1)
node 0 cpus: 0 1 2 3
node 0 size: 1031711 MB
node 0 free: 912407 MB
node 1 cpus:
node 1 size: 97280 MB
node 1 free: 96211 MB
node distances:
node     0    1
   0:   10   80
   1:   80   10
"""

# digit counts are bounded so a corrupted number cannot overflow a float or int conversion
_AVAILABLE = lazyre.compile(r"^\s*available:\s*(\d{1,6})\s+nodes?\b")
_NODE = lazyre.compile(r"^\s*node\s+(\d{1,6})\s+(cpus|size|free):\s*(.*?)\s*$")
_MB = lazyre.compile(r"^(\d{1,15}(?:\.\d{1,6})?)\s*(MB|GB|kB)?$")
_HEADER = lazyre.compile(r"^\s*node(?:\s+\d{1,6})+\s*$")
_ROW = lazyre.compile(r"^\s*(\d{1,6}):((?:\s+\d{1,6})+)\s*$")
_PROMPT = lazyre.compile(r"^\s*(?:\[[^\]]*\]\s*)?\S*[$#%>]\s*(?:sudo\s+)?numactl\b")


def sniff(doc: Document) -> float:
    head = doc.lines[:200]
    available = any(_AVAILABLE.match(ln) for ln in head[:10])
    nodes = sum(1 for ln in head if _NODE.match(ln))
    if available and nodes:
        return 0.95
    if nodes >= 3 or (available and any(ln.strip() == "node distances:" for ln in head)):
        return 0.8
    return 0.0


def parse(doc: Document, ctx: ParseContext) -> None:
    nodes: dict[int, dict] = {}
    expected: int | None = None
    header: list[int] | None = None
    in_matrix = False
    for i, line in enumerate(doc.lines):
        if not line.strip():
            continue
        if m := _AVAILABLE.match(line):
            expected = int(m.group(1))
            continue
        if m := _NODE.match(line):
            _node_line(nodes, int(m.group(1)), m.group(2), m.group(3), i, ctx)
            continue
        if line.strip() == "node distances:":
            in_matrix = True
            continue
        if in_matrix and _HEADER.match(line):
            header = [int(t) for t in line.split()[1:]]
            continue
        if in_matrix and (m := _ROW.match(line)):
            row = [int(t) for t in m.group(2).split()]
            node = nodes.setdefault(int(m.group(1)), {"line": i})
            if header is not None and len(row) != len(header):
                ctx.warn(i, f"distance row has {len(row)} values for {len(header)} nodes (truncated?)")
            node["distances"] = row
            continue
        if _PROMPT.match(line) and not nodes:
            continue
        if "No NUMA available" in line:
            raise NotApplicable("numactl: No NUMA available on this system")
        ctx.warn(i, f"unexpected line: {line.strip()[:80]!r}")

    if not nodes:
        raise NotApplicable("no 'node N cpus/size/free' lines")
    cov = doc.coverage or WHOLE
    # an empty CPU list means a memory-only node: believed only where the excerpt shows cpus lines
    cpus_shown = cov.believes_absence("node 0 cpus: 0 1 2 3")
    skipped = []
    for node_id in sorted(nodes):
        node = nodes[node_id]
        if "cpus" not in node and not cpus_shown:
            skipped.append(node_id)
            continue
        cpus = node.get("cpus", [])
        ctx.add(
            NumaNode, node["line"], node_id=node_id, cpus=cpus, cpu_count=len(cpus),
            size_mb=node.get("size"), free_mb=node.get("free"), distances=node.get("distances", []),
        )
    last = len(doc.lines) - 1
    if skipped:
        ctx.warn(last, f"node(s) {', '.join(map(str, skipped))} without their cpus line in an excerpt "
                       "that could not show it: not reported")
    if expected is not None and len(nodes) < expected and cov.believes_absence("node 0 cpus: 0 1 2 3"):
        ctx.warn(last, f"'available: {expected} nodes' but only {len(nodes)} shown (truncated?)")
    if (header is None or any("distances" not in n for n in nodes.values())) and \
            cov.believes_absence("node   0   1") and cov.believes_absence("  0:  10  21"):
        ctx.warn(last, "distance matrix missing or incomplete (truncated?)")


def _node_line(nodes: dict[int, dict], node_id: int, key: str, value: str, i: int, ctx: ParseContext) -> None:
    node = nodes.setdefault(node_id, {"line": i})
    if key == "cpus":
        node["line"] = i
        tokens = value.split()
        if all(re.fullmatch(r"[0-9]{1,7}", t) for t in tokens):
            node["cpus"] = [int(t) for t in tokens]
        else:
            ctx.warn(i, f"bad CPU list {value[:80]!r}")
        return
    m = _MB.match(value)
    if not m:
        ctx.warn(i, f"bad memory size {value[:80]!r}")
        return
    scale = {"GB": 1024.0, "kB": 1 / 1024}.get(m.group(2) or "MB", 1.0)
    node[key] = float(m.group(1)) * scale


FORMATS = [
    Format(
        name="numactl-hardware",
        command="numactl --hardware",
        facts=("numa.node",),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\bnumactl\s+(?:-H\b|--hardware\b)",),
        description="numactl --hardware: NUMA nodes, their CPUs, memory and distances",
    )
]
