"""ucx_perftest - Command

The UCX micro-benchmark ``ucx_perftest``: its command lines (``VAR=value`` prefixes such as
``UCX_TLS=...`` understood) and its results table (``| # iterations | typical | average |
overall | ...`` in 1.8-1.10, a ``Stage`` column with ``[thread N]`` and ``Final:`` rows from 1.11;
the last row is the run's figure, bandwidth in MB/s). One ``ucx.perftest`` per command line:
``role`` ``client`` for one naming the server to connect to, ``server`` for one without a host;
a results table alone gives one with role ``server`` and no options.

A client that connects to its own host (`` `hostname` ``, ``$(hostname)``, ``localhost``,
``127.0.0.1``) runs against a server on the same machine (``loopback``); ``-c N`` pins a process
to core N. Where the two halves of such a pair run is judged across the ticket's inputs
(:mod:`clusterdx.facts.derive.bench_pairs`).

Sample input::

    UCX_TLS=tcp,sockcm,sm ucx_perftest `hostname` -t tag_bw -m host -s 1000000 -n 100 -c 0
    +--------------+-----------------------------+---------------------+-----------------------+
    |              |       latency (usec)        |   bandwidth (MB/s)  |  message rate (msg/s) |
    +--------------+---------+---------+---------+----------+----------+-----------+-----------+
    | # iterations | typical | average | overall |  average |  overall |   average |   overall |
    +--------------+---------+---------+---------+----------+----------+-----------+-----------+
                 100     0.000 31855.297 31855.297      29.94      29.94          31          31

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE); ctx = ParseContext(doc, "ucx-perftest"); parse(doc, ctx)
    >>> r = ctx.facts[0]
    >>> (r.role, r.test, r.mem_type, r.size_bytes, r.cpu, r.loopback, r.tls, r.bw_avg_mbps)
    ('client', 'tag_bw', 'host', 1000000, 0, True, 'tcp,sockcm,sm', 29.94)
    >>> sniff(doc) > 0.5
    True
"""

from __future__ import annotations

import re
import shlex

from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.net import UcxPerftest

SAMPLE = """\
UCX_TLS=tcp,sockcm,sm ucx_perftest `hostname` -t tag_bw -m host -s 1000000 -n 100 -c 0
+--------------+-----------------------------+---------------------+-----------------------+
|              |       latency (usec)        |   bandwidth (MB/s)  |  message rate (msg/s) |
+--------------+---------+---------+---------+----------+----------+-----------+-----------+
| # iterations | typical | average | overall |  average |  overall |   average |   overall |
+--------------+---------+---------+---------+----------+----------+-----------+-----------+
             100     0.000 31855.297 31855.297      29.94      29.94          31          31
"""

_INVOCATION = re.compile(r"(?:^|[\s;|&(])(?:\S*/)?ucx_perftest(?:\s|$)")
_HEADER = re.compile(r"\|\s*(?:Stage\s*\|\s*)?# iterations\s*\|")
_BW_HEAD = re.compile(r"bandwidth \((?:MB|MiB)/s\)")
#: a results row: [thread N] / Final: / nothing, then iterations and seven numbers
_ROW_LEAD = re.compile(r"(?:\[thread \d{1,6}\]|Final:)")
_INT = re.compile(r"[0-9]{1,20}")
_NUM = re.compile(r"[0-9]{1,20}(?:\.[0-9]{0,20})?|\.[0-9]{1,20}")


def _row(line: str) -> list[float] | None:
    """The seven figures of a results row (``Final:``/``[thread N]``, the iteration count, then
    latency, bandwidth and message rate columns), split on blanks: a regex of seven repeated
    number groups backtracks without end on a long line of digits."""
    words = line[:4096].split()
    if words and _ROW_LEAD.fullmatch(words[0]):
        words = words[1:]
    elif len(words) > 1 and words[0] == "[thread" and words[1].rstrip("]").isdecimal():
        words = words[2:]
    if len(words) != 8 or not _INT.fullmatch(words[0]) or not all(_NUM.fullmatch(w) for w in words[1:]):
        return None
    return [float(x) for x in words[1:]]
_SELF = re.compile(r"^(?:`hostname(?: -[sf])?`|\$\(hostname(?: -[sf])?\)|localhost|127\.\d+\.\d+\.\d+|::1)$")
#: options that take a value (ucx_perftest -h)
_WITH_VALUE = set("tnsHwODimcTMrxdpbWeRIkLaAgNzuU")
_ENV = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")


def sniff(doc: Document) -> float:
    score = 0.0
    for line in doc.lines[:200]:
        if "ucx_perftest" in line and _INVOCATION.search(line):
            score = max(score, 0.8)
        if _HEADER.search(line):
            score = max(score, 0.85)
        elif _BW_HEAD.search(line) and line.lstrip().startswith("|"):
            score = max(score, 0.7)
    return score


def _invocation(line: str) -> dict | None:
    m = _INVOCATION.search(line)
    if m is None:
        return None
    prefix, rest = line[:m.start()], line[m.end():]
    try:
        words = shlex.split(rest, posix=True)
    except ValueError:
        words = rest.split()
    # the command ends at a shell operator (a server sent to the background with '&', a pipe)
    for n, w in enumerate(words):
        if w in ("&", "&&", ";", "|", "||") or w.startswith((">", "2>", "1>")):
            words = words[:n]
            break
    if words and words[-1].endswith("&"):
        words[-1] = words[-1].rstrip("&")
    env = {}
    for w in prefix.split():
        if (e := _ENV.match(w)) is not None:
            env[e.group(1)] = e.group(2)
    out: dict = {"server": "", "cpu": None, "test": "", "mem_type": "", "size_bytes": None,
                 "tls": env.get("UCX_TLS", "")}
    # the raw words keep the backticks that shlex leaves in place anyway
    k = 0
    while k < len(words):
        w = words[k]
        if w.startswith("-") and len(w) >= 2 and w[1] != "-":
            flag, inline = w[1], w[2:]
            value = inline or (words[k + 1] if flag in _WITH_VALUE and k + 1 < len(words) else "")
            if flag in _WITH_VALUE and not inline:
                k += 1
            if flag == "t":
                out["test"] = value
            elif flag == "m":
                out["mem_type"] = value.split(",")[0]
            elif flag == "s" and re.fullmatch(r"[0-9]{1,15}", value.split(",")[0]):
                out["size_bytes"] = int(value.split(",")[0])
            elif flag == "c" and re.match(r"\d{1,5}", value):
                out["cpu"] = int(re.match(r"\d{1,5}", value).group(0))
        elif not out["server"] and not w.startswith("-"):
            out["server"] = w
        k += 1
    return out


def parse(doc: Document, ctx: ParseContext) -> None:
    calls: list[tuple[int, dict]] = []
    rows: list[tuple[int, list[float]]] = []
    for i, line in enumerate(doc.lines):
        if "ucx_perftest" in line and (inv := _invocation(line[:4096])) is not None:
            calls.append((i, inv))
            continue
        if (row := _row(line)) is not None:
            rows.append((i, row))
    if doc.command and not calls and (inv := _invocation(doc.command)) is not None:
        calls.append((0, inv))
    if not calls and not rows:
        raise NotApplicable("no ucx_perftest command line or results table")
    if not calls:
        calls = [(rows[0][0], {"server": "", "cpu": None, "test": "", "mem_type": "", "size_bytes": None, "tls": ""})]
    for n, (i, c) in enumerate(calls):
        # a table belongs to the command line above it
        end = calls[n + 1][0] if n + 1 < len(calls) else len(doc.lines)
        mine = [(k, v) for k, v in rows if i <= k < end]
        ctx.add(UcxPerftest, i, mine[-1][0] if mine else None, role="client" if c["server"] else "server",
                test=c["test"], mem_type=c["mem_type"], size_bytes=c["size_bytes"], cpu=c["cpu"],
                server=c["server"], loopback=bool(_SELF.match(c["server"])), tls=c["tls"],
                bw_avg_mbps=mine[-1][1][3] if mine else None)


FORMATS = [
    Format(
        name="ucx-perftest",
        command="ucx_perftest <server> -t tag_bw -m host -s 1048576 -n 1000 -c 1",
        facts=("ucx.perftest",),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"(?:^|[\s;|&(])(?:\S*/)?ucx_perftest\b",),
        # a server started in the background prints nothing before its client connects
        empty_output=True,
        description="ucx_perftest command lines and results (test, memory type, size, pinned core, MB/s)",
    )
]
