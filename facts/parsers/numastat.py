"""numastat -p - Command

Per-NUMA-node memory of processes: ``numastat -p PID`` (one process: rows ``Huge``, ``Heap``,
``Stack``, ``Private``, ``Total``) and ``numastat -p PATTERN`` (several processes: one row per
``PID (comm)``, then ``Total``). Columns are ``Node N`` then ``Total``; ``-c`` drops decimals
and narrows the columns; wide tables wrap into several blocks, each with its own header, which
are joined by row. One ``proc.numa_memory`` per process; memory on a node other than the one
the process's CPUs and GPU sit on is remote-access traffic.

Sample input::

    Per-node process memory usage (in MBs) for PID 2214097 (python3)
                               Node 0          Node 1           Total
                      --------------- --------------- ---------------
    Huge                         0.00            0.00            0.00
    Heap                       412.30            0.00          412.30
    Stack                        0.14            0.00            0.14
    Private                  61248.77         3112.52        64361.29
    ----------------  --------------- --------------- ---------------
    Total                    61661.21         3112.52        64773.73

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "numastat"); parse(doc, ctx)
    >>> [f] = ctx.facts
    >>> f.pid, f.name, f.node_mb, f.total_mb, f.dominant_node, round(f.dominant_share, 3)
    (2214097, 'python3', [61661.21, 3112.52], 64773.73, 0, 0.952)
    >>> f.source.line
    9
    >>> sniff(doc) > 0.5
    True
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.process import NumaMemory


SAMPLE = """\
Per-node process memory usage (in MBs) for PID 2214097 (python3)
                           Node 0          Node 1           Total
                  --------------- --------------- ---------------
Huge                         0.00            0.00            0.00
Heap                       412.30            0.00          412.30
Stack                        0.14            0.00            0.14
Private                  61248.77         3112.52        64361.29
----------------  --------------- --------------- ---------------
Total                    61661.21         3112.52        64773.73
"""

_TITLE = lazyre.compile(r"Per-node process memory usage \(in MBs\)(?: for PID (\d+) \((.*)\))?\s*$")
_MAX_NODE = 4095
_HEADER = lazyre.compile(r"^\s*(?:PID\s+)?((?:Node\s+\d+\s*)+)(Total)?\s*$")
_DASHES = lazyre.compile(r"^[\s-]+$")
_NUM = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)"
_NUM_TOKEN = lazyre.compile(_NUM)
_PROC_HEAD = lazyre.compile(r"^\s*(\d+)\s+\(")
_TOKEN = lazyre.compile(r"\S+")


def _row(line: str) -> tuple[str, str] | None:
    """(label, numbers) of a table row: the trailing run of numeric words, and what precedes it.
    Done on words, not with one regex: a label and a number run both of unbounded length
    backtrack quadratically on a long line.

    >>> _row("Huge   0.00   1.50   1.50"), _row("12345 (python3)  1.0  2.0"), _row("no numbers")
    (('Huge', '0.00   1.50   1.50'), ('12345 (python3)', '1.0  2.0'), None)
    """
    spans = [(m.start(), m.end()) for m in _TOKEN.finditer(line)]
    k = len(spans)
    while k > 0 and _NUM_TOKEN.fullmatch(line, *spans[k - 1]):
        k -= 1
    if k == 0 or k == len(spans):
        return None
    return line[spans[0][0]:spans[k - 1][1]], line[spans[k][0]:spans[-1][1]]


def _proc_row(line: str) -> tuple[str, str, str] | None:
    """(pid, name, numbers) of a per-process row ``PID (name)  n n n``.

    >>> _proc_row("  4242 (python3 -u)   10.5  0.0"), _proc_row("Huge 1 2")
    (('4242', 'python3 -u', '10.5  0.0'), None)
    """
    m = _PROC_HEAD.match(line)
    row = _row(line) if m else None
    if row is None or not row[0].endswith(")"):
        return None
    label = row[0]
    return m.group(1), label[label.index("(") + 1:-1], row[1]
_PROMPT = lazyre.compile(r"^\s*\$\s")


@dataclass
class _Table:
    pid: int | None
    name: str
    title_line: int
    # row key -> node -> MB; row key -> line index of its last appearance
    rows: dict[str, dict[int, float]] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    ended: bool = False


def _tables(doc: Document, ctx: ParseContext) -> list[_Table]:
    tables: list[_Table] = []
    table: _Table | None = None
    nodes: list[int] = []
    has_total = False
    for i, line in enumerate(doc.lines):
        if _PROMPT.match(line):
            table = None
            continue
        t = _TITLE.search(line)
        if t:
            table = _Table(int(t.group(1)) if t.group(1) else None, t.group(2) or "", i)
            tables.append(table)
            nodes = []
            continue
        if table is None or not line.strip():
            continue
        h = _HEADER.match(line)
        if h:
            nodes = [int(n) for n in re.findall(r"Node\s+(\d+)", h.group(1))]
            has_total = bool(h.group(2))
            if max(nodes) > _MAX_NODE:
                # Linux has at most 1024 NUMA nodes (MAX_NUMNODES); rows are indexed by node
                ctx.warn(i, f"NUMA node {max(nodes)} out of range; table skipped")
                nodes = []
                table = None
            continue
        if _DASHES.match(line):
            continue
        if not nodes:
            ctx.warn(i, f"numastat row before any 'Node N' header: {line.strip()[:60]!r}")
            continue
        p = _proc_row(line)
        r = p or _row(line)
        if not r:
            ctx.warn(i, f"not a numastat row: {line.strip()[:60]!r}")
            continue
        if p:
            key, name, numbers = p
            table.names[key] = name
        else:
            key, numbers = r
        values = [float(v) for v in numbers.split()]
        if len(values) != len(nodes) + has_total:
            ctx.warn(i, f"{len(values)} numbers for {len(nodes)} nodes: row cut or misaligned")
            continue
        table.rows.setdefault(key, {}).update(zip(nodes, values))
        table.lines[key] = i
    return tables


def _emit(ctx: ParseContext, pid: int, name: str, per_node: dict[int, float], line: int) -> None:
    node_mb = [0.0] * (max(per_node) + 1)
    for node, mb in per_node.items():
        node_mb[node] = mb
    total = round(sum(node_mb), 2)
    dominant = max(range(len(node_mb)), key=lambda n: node_mb[n])
    share = node_mb[dominant] / total if total > 0 else 0.0
    ctx.add(NumaMemory, line, pid=pid, name=name, node_mb=node_mb, total_mb=total,
            dominant_node=dominant, dominant_share=min(1.0, share))


def parse(doc: Document, ctx: ParseContext) -> None:
    tables = _tables(doc, ctx)
    if not tables:
        raise NotApplicable("no 'Per-node process memory usage' table")
    for table in tables:
        if table.pid is not None:
            per_node = table.rows.get("Total")
            if per_node is None and table.rows:
                # cut before the Total row: the categories add up to it
                ctx.warn(max(table.lines.values()), "no Total row: table truncated, summing the rows shown")
                per_node = {}
                for row in table.rows.values():
                    for node, mb in row.items():
                        per_node[node] = per_node.get(node, 0.0) + mb
            if not per_node:
                ctx.warn(table.title_line, f"no rows for PID {table.pid}: output truncated?")
                continue
            _emit(ctx, table.pid, table.name, per_node, table.lines.get("Total", table.title_line))
            continue
        procs = [k for k in table.rows if k.isdecimal()]
        if not procs:
            ctx.warn(table.title_line, "no process rows: output truncated?")
            continue
        if "Total" not in table.rows:
            ctx.warn(max(table.lines.values()), "no Total row: table truncated?")
        for key in procs:
            _emit(ctx, int(key), table.names.get(key, ""), table.rows[key], table.lines[key])


def sniff(doc: Document) -> float:
    title = header = 0
    for line in doc.lines[:200]:
        if _TITLE.search(line):
            title += 1
        elif _HEADER.match(line):
            header += 1
    if title and header:
        return 0.95
    return 0.5 if title else 0.0


FORMATS = [
    Format(
        name="numastat-p",
        command="numastat -p <pid>",
        facts=("proc.numa_memory",),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\bnumastat\b.*\s-[a-zA-Z]*p(?:\s|$)",),
        description="numastat -p: per-NUMA-node memory of one or several processes",
    )
]
