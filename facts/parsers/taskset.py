"""taskset - Command

``taskset -p PID`` (hex mask), ``taskset -cp PID`` (CPU list), ``taskset -a -cp PID`` (one line
per thread) and the ``new affinity`` lines printed when taskset sets a mask. Several outputs
may sit in one pasted transcript; per-rank listings are recognised from ``srun --label``
prefixes (``3: pid ...`` -> rank 3) or from a rank printed just before the taskset line
(``RANK=3``, ``SLURM_PROCID=3``, ``rank 3``; ``LOCAL_RANK=3``, ``SLURM_LOCALID=3``, ``local_rank 3``),
e.g. ``srun -l bash -c 'echo SLURM_LOCALID=$SLURM_LOCALID; taskset -cp $$'``.

One ``proc.affinity`` (method ``taskset``) per process; the same process shown as a mask and
as a list with the same CPUs yields one fact.

Sample input::

    $ taskset -p 2214097
    pid 2214097's current affinity mask: ffffffffffffff00000000000000ffffffffffffff
    $ taskset -cp 2214097
    pid 2214097's current affinity list: 0-55,112-167
    $ taskset -cp 2214095
    pid 2214095's current affinity list: 0-223

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "taskset"); parse(doc, ctx)
    >>> [(f.pid, len(f.cpus), f.cpus[-1], f.source.line) for f in ctx.facts]
    [(2214097, 112, 167, 2), (2214095, 224, 223, 6)]
    >>> sniff(doc) > 0.5
    True
"""

from __future__ import annotations

import re

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.process import ProcAffinity
from clusterdx.facts.parsers._util import cpu_list, hex_mask_cpus


SAMPLE = """\
$ taskset -p 2214097
pid 2214097's current affinity mask: ffffffffffffff00000000000000ffffffffffffff
$ taskset -cp 2214097
pid 2214097's current affinity list: 0-55,112-167
$ taskset -cp 2214095
pid 2214095's current affinity list: 0-223
"""

_LABEL = lazyre.compile(r"^\s*(\d{1,6}):\s?(.*)$")
_AFF = lazyre.compile(r"pid\s+(\d+)'s\s+(current|new)\s+affinity\s+(mask|list):\s*(\S*)\s*$")
_ERR = lazyre.compile(r"^\s*taskset:\s*(.*)$")
_RANK = lazyre.compile(r"(?:\b(?:SLURM_PROCID|OMPI_COMM_WORLD_RANK|PMIX_RANK|RANK)\s*[=:]\s*|\b(?<!_)rank\s*[=:]?\s*)(\d+)\b")
_LOCAL = lazyre.compile(r"\b(?:SLURM_LOCALID|LOCAL_RANK|OMPI_COMM_WORLD_LOCAL_RANK|local_rank|localid)\s*[=:]?\s*(\d+)\b", re.I)
_PROMPT = lazyre.compile(r"^\s*\$\s")


def parse(doc: Document, ctx: ParseContext) -> None:
    # rank context per srun label (None = unlabelled text)
    rank: dict[int | None, int | None] = {}
    local: dict[int | None, int | None] = {}
    seen: set[tuple[int, tuple[int, ...], int | None]] = set()
    found = False
    for i, line in enumerate(doc.lines):
        if _PROMPT.match(line) or line.startswith("## "):
            # a new command: rank context printed for the previous one no longer applies
            rank.pop(None, None)
            local.pop(None, None)
            continue
        m = _LABEL.match(line)
        label, text = (int(m.group(1)), m.group(2)) if m else (None, line)
        a = _AFF.search(text)
        if not a:
            e = _ERR.match(text)
            if e:
                ctx.warn(i, f"taskset error: {e.group(1)[:100]}")
                continue
            if r := _LOCAL.search(text):
                local[label] = int(r.group(1))
            # strip local-rank mentions so LOCAL_RANK=3 is not also read as RANK=3
            if r := _RANK.search(_LOCAL.sub(" ", text)):
                rank[label] = int(r.group(1))
            continue
        pid, kind, value = int(a.group(1)), a.group(3), a.group(4)
        try:
            cpus = cpu_list(value) if kind == "list" else hex_mask_cpus(value)
        except (ValueError, ParseError):
            ctx.warn(i, f"cannot read affinity {kind} {value[:60]!r}")
            continue
        if not cpus:
            ctx.warn(i, f"empty affinity {kind} for pid {pid}: output truncated?")
            continue
        found = True
        the_rank = rank.get(label, label)
        key = (pid, tuple(cpus), the_rank)
        if key in seen:
            continue
        seen.add(key)
        ctx.add(ProcAffinity, i, pid=pid, cpus=cpus, method="taskset", rank=the_rank,
                local_rank=local.get(label))
    if not found:
        raise NotApplicable("no taskset affinity lines")


def sniff(doc: Document) -> float:
    hits = other = 0
    for line in doc.lines[:200]:
        if not line.strip() or _PROMPT.match(line) or line.startswith("## "):
            continue
        if _AFF.search(line):
            hits += 1
        else:
            other += 1
    if not hits:
        return 0.0
    # the phrase is taskset's own; a transcript with other tools' output still deserves a fair score
    return min(1.0, 0.6 + 0.4 * hits / (hits + other))


FORMATS = [
    Format(
        name="taskset",
        command="taskset -cp <pid>",
        facts=("proc.affinity",),
        sniff=sniff,
        parse=parse,
        # only the query forms: "taskset -c 0-55 prog" runs a program whose output is not taskset's
        command_patterns=(r"\btaskset\b(?:\s+-\S+)*?\s+(?:-[a-z]*p[a-z]*|--pid)(?:\s|$)",),
        description="CPU affinity of a process from taskset -p / -cp (mask or list, one line per thread with -a)",
    )
]
