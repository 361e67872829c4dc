"""rank_times - File

A script's own per-rank printout of how long one operation took: one line per rank, a rank label
(``local_rank 3``, ``rank 3``, ``[rank3]``, ``rank=3``), optionally a node label (``node_id 1``,
``node 1``, ``host gpu-07``), and a duration with its unit at the end (``0.4391 sec``, ``277.1
ms``). Users paste these to show that some ranks are slower than others. Yields one
``train.rank_times``: per node the local ranks are sorted by time and cut at the widest gap
between neighbours; the ranks above the gap are the slow group, and ``slow_ratio`` is the slow
group's fastest time over the rest's slowest. The same slow ranks on every node (``consistent``)
point at something per GPU index, such as two GPUs that share one NIC. Needs four or more such
lines making up most of the document.

Sample input::

    node_id 0 local_rank 0 5313036288 bytes: 0.43919867515563965 sec
    node_id 0 local_rank 1 5313036288 bytes: 0.43919461727142334 sec
    node_id 0 local_rank 2 5313036288 bytes: 0.2772217226028442 sec
    node_id 0 local_rank 3 5313036288 bytes: 0.27647966384887696 sec
    node_id 1 local_rank 0 5313036288 bytes: 0.439218635559082 sec
    node_id 1 local_rank 1 5313036288 bytes: 0.4392137575149536 sec
    node_id 1 local_rank 2 5313036288 bytes: 0.27723480224609376 sec
    node_id 1 local_rank 3 5313036288 bytes: 0.276490592956543 sec

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE); ctx = ParseContext(doc, "rank-times"); parse(doc, ctx)
    >>> t = ctx.facts[0]
    >>> (t.nodes, t.ranks_per_node, t.slow_local_ranks, round(t.slow_ratio, 2), t.consistent)
    (2, 4, [0, 1], 1.58, True)
    >>> sniff(doc)
    0.7
"""

from __future__ import annotations

import re
from statistics import median

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.train import RankTimes


SAMPLE = """\
node_id 0 local_rank 0 5313036288 bytes: 0.43919867515563965 sec
node_id 0 local_rank 1 5313036288 bytes: 0.43919461727142334 sec
node_id 0 local_rank 2 5313036288 bytes: 0.2772217226028442 sec
node_id 0 local_rank 3 5313036288 bytes: 0.27647966384887696 sec
node_id 1 local_rank 0 5313036288 bytes: 0.439218635559082 sec
node_id 1 local_rank 1 5313036288 bytes: 0.4392137575149536 sec
node_id 1 local_rank 2 5313036288 bytes: 0.27723480224609376 sec
node_id 1 local_rank 3 5313036288 bytes: 0.276490592956543 sec
"""

_RANK = lazyre.compile(r"\b(?:local_rank|local rank|rank)\s{0,2}[:=#]?\s{0,2}(\d{1,4})\b", re.I)
_NODE = lazyre.compile(r"\b(?:node_id|node|host|nodename)\s{0,2}[:=#]?\s{0,2}([\w.-]{1,64})", re.I)
_TIME = lazyre.compile(r"(\d{1,9}(?:\.\d{1,20})?)\s{0,2}(sec|secs|seconds|s|ms|msec)\s*[.,]?\s*$", re.I)
_LOG = lazyre.compile(r"NCCL (?:INFO|WARN)|iteration\s+\d|elapsed time", re.I)
MIN_LINES = 4


def _rows(doc: Document, give_up: bool = False) -> tuple[list[tuple[int, str, int, float]], int]:
    """The per-rank duration lines and the count of other lines. ``give_up``: stop (returning what
    was read) once the other lines are too many for the rows ever to be four times as many, which
    settles the sniff of a document of another kind after its first fifth."""
    rows: list[tuple[int, str, int, float]] = []
    other = 0
    lines = doc.lines[:20000]
    for i, line in enumerate(lines):
        text = line[:1000].strip()
        if not text:
            continue
        r, t = _RANK.search(text), _TIME.search(text)
        if r is None or t is None or _LOG.search(text):
            other += 1
            if give_up and 4 * other > len(rows) + len(lines) - i - 1:
                break
            continue
        n = _NODE.search(text[:r.start()] + " " + text[r.end():t.start()])
        ms = float(t.group(1)) * (1.0 if t.group(2).lower().startswith("ms") else 1000.0)
        rows.append((i, n.group(1) if n else "", int(r.group(1)), ms))
    return rows, other


def sniff(doc: Document) -> float:
    rows, other = _rows(doc, give_up=True)
    return 0.7 if len(rows) >= MIN_LINES and len(rows) >= 4 * other else 0.0


def _split(times: dict[int, float]) -> tuple[list[int], float]:
    order = sorted(times, key=lambda r: times[r])
    gaps = [(times[order[k + 1]] / times[order[k]] if times[order[k]] > 0 else 0.0, k)
            for k in range(len(order) - 1)]
    ratio, k = max(gaps)
    return sorted(order[k + 1:]), ratio


def parse(doc: Document, ctx: ParseContext) -> None:
    rows, other = _rows(doc)
    if len(rows) < MIN_LINES or len(rows) < 4 * other:
        raise NotApplicable("fewer than four per-rank duration lines")
    per_node: dict[str, dict[int, float]] = {}
    for _, node, rank, ms in rows:
        per_node.setdefault(node, {})[rank] = ms
    splits = [(_split(t)) for t in per_node.values() if len(t) >= 2]
    if not splits:
        raise NotApplicable("one rank per node: nothing to compare")
    slow_sets = {tuple(s) for s, _ in splits}
    slow, _ = splits[0]
    ctx.add(RankTimes, rows[0][0], rows[-1][0], nodes=len(per_node),
            ranks_per_node=max(len(t) for t in per_node.values()), slow_local_ranks=slow, slow_count=len(slow),
            slow_ratio=round(min(r for _, r in splits), 4), consistent=len(slow_sets) == 1,
            median_ms=round(median(ms for *_, ms in rows), 3))


FORMATS = [
    Format(
        name="rank-times",
        command="(a script's per-rank timing printout)",
        facts=("train.rank_times",),
        sniff=sniff,
        parse=parse,
        description="one line per rank with a duration: which local ranks are slower than the rest",
    )
]
