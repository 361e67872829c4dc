"""pair_table - File

A user's own table of two-node results, one row per node pair: the two host names (joined by a
comma, ``+``, ``<->``, ``-`` between spaces or whitespace) and the bandwidth the pair reached,
optionally a unit and a ``#`` comment. Users paste these after testing pairs by hand to show that
the result depends on the pair. Yields one ``nccltests.pair_result`` per row; which hosts the slow
rows share is decided by the run-grouping deriver (:mod:`clusterdx.facts.derive.runs`), as for
nccl-tests runs on different node sets. Needs three or more such rows making up most of the
document, each naming two different hosts that hold a digit (a host name, not a word).

Sample input::

    se02gn644,se02gn699     49.36
    se02gn632,se02gn641     88.36
    se02gn284,se02gn678     49.28  # crossing TOR

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE); ctx = ParseContext(doc, "node-pair-table"); parse(doc, ctx)
    >>> [(f.hosts, f.value, f.note) for f in ctx.facts][2]
    (['se02gn284', 'se02gn678'], 49.28, 'crossing TOR')
    >>> sniff(doc)
    0.6
    >>> sniff(Document.from_text("a,b 1\\nc,d 2\\ne,f 3\\n"))
    0.0
"""

from __future__ import annotations

import re

from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.nccltests import NodePairResult

SAMPLE = """\
se02gn644,se02gn699     49.36
se02gn632,se02gn641     88.36
se02gn284,se02gn678     49.28  # crossing TOR
"""

_HOST = r"([A-Za-z][\w.-]{0,62}?\d[\w.-]{0,62}?|\d[\w-]{0,62}?[A-Za-z][\w.-]{0,62}?)"
_ROW = re.compile(r"^\s{0,8}(?:[-*|]\s{1,3})?" + _HOST + r"\s{0,3}(?:,|\+|<->|<=>|\s-\s|\s{1,3}(?:and|&)\s{1,3})\s{0,3}" + _HOST
                  + r"\s{0,3}[:|=]?\s{1,20}(\d{1,6}(?:\.\d{1,4})?)\s{0,3}(GB/s|GBps|Gb/s|Gbps)?\s{0,3}\|?\s{0,3}(?:#\s{0,3}(.{0,80}))?$",
                  re.I)
MIN_ROWS = 3


def _rows(doc: Document) -> tuple[list[tuple[int, list[str], float, str, str]], int]:
    rows: list[tuple[int, list[str], float, str, str]] = []
    other = 0
    for i, line in enumerate(doc.lines[:2000]):
        text = line[:300].rstrip()
        if not text.strip():
            continue
        m = _ROW.match(text)
        if m is None or m.group(1).lower() == m.group(2).lower():
            other += 1
            continue
        rows.append((i, [m.group(1), m.group(2)], float(m.group(3)), m.group(4) or "", (m.group(5) or "").strip()))
    return rows, other


def sniff(doc: Document) -> float:
    rows, other = _rows(doc)
    return 0.6 if len(rows) >= MIN_ROWS and len(rows) >= 3 * other else 0.0


def parse(doc: Document, ctx: ParseContext) -> None:
    rows, other = _rows(doc)
    if len(rows) < MIN_ROWS or len(rows) < 3 * other:
        raise NotApplicable("fewer than three node-pair result rows")
    for k, (line, hosts, value, unit, note) in enumerate(rows):
        ctx.add(NodePairResult, line, line, node=hosts[0], row=k, hosts=hosts, value=value, unit=unit, note=note)


FORMATS = [
    Format(
        name="node-pair-table",
        command="(a user's table of two-node results, one row per node pair)",
        facts=("nccltests.pair_result",),
        sniff=sniff,
        parse=parse,
        description="one row per node pair with the bandwidth it reached: which hosts the slow pairs share",
    )
]
