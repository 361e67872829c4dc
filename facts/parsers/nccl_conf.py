"""nccl.conf - File

NCCL configuration files: ``/etc/nccl.conf``, ``~/.nccl.conf`` or the file named by
``NCCL_CONF_FILE``. One ``NAME=value`` per line (spaces around ``=`` are trimmed), ``#``
comment lines. NCCL reads the file at init and sets each variable *only if it is not already in
the environment*: an exported variable wins over the file. One ``nccl.conf_setting`` per line.

The sniffer claims a file only when its variables are (nearly) all ``NCCL_*`` and something
besides ``NAME=value`` lines says it is a file (comments, ``NAME = value`` spacing): a bare list
of ``NCCL_*=...`` lines is as likely ``env | grep NCCL`` output, which the env parser takes.

Sample input::

    # site defaults
    NCCL_IB_HCA=mlx5_0,mlx5_3
    NCCL_IB_QPS_PER_CONNECTION = 4
    NCCL_SOCKET_IFNAME=bond0

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE, name="nccl.conf")
    >>> ctx = ParseContext(doc, "nccl-conf"); parse(doc, ctx)
    >>> [(f.name, f.value, f.source.line) for f in ctx.facts]
    [('NCCL_IB_HCA', 'mlx5_0,mlx5_3', 2), ('NCCL_IB_QPS_PER_CONNECTION', '4', 3), ('NCCL_SOCKET_IFNAME', 'bond0', 4)]
    >>> ctx.facts[0].file
    'nccl.conf'
    >>> sniff(doc) > 0.9
    True
"""

from __future__ import annotations

import re

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.ncclcfg import NcclConfSetting
from clusterdx.facts.redact import redact_value


SAMPLE = """\
# site defaults
NCCL_IB_HCA=mlx5_0,mlx5_3
NCCL_IB_QPS_PER_CONNECTION = 4
NCCL_SOCKET_IFNAME=bond0
"""

_LINE = lazyre.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")
_FILE_CMD = lazyre.compile(r"\b(?:cat|less|more|head|tail|bat|grep\s+(?:-\S+\s+)*\S+)\s+(?:-\S+\s+)*(\S*nccl\.conf)\b")
MAX_LINES = 2000


def _file(doc: Document) -> str:
    if doc.command:
        m = _FILE_CMD.search(doc.command)
        if m:
            return m.group(1)
    return doc.path or doc.name


def parse(doc: Document, ctx: ParseContext) -> None:
    path = _file(doc)
    for i, line in enumerate(doc.lines[:MAX_LINES]):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        m = _LINE.match(line)
        if not m:
            ctx.warn(i, f"not a NAME=value line: {s[:80]!r}")
            continue
        name, value = m.group(1), m.group(2)
        shown = redact_value(name, value) if doc.redact else value
        ctx.add(NcclConfSetting, i, name=name, value=shown, file=path)
    if len(doc.lines) > MAX_LINES:
        ctx.warn(MAX_LINES, f"more than {MAX_LINES} lines; the rest was ignored")
    if not ctx.facts:
        raise NotApplicable("no NAME=value lines")


def sniff(doc: Document) -> float:
    nccl = other = comments = spaced = junk = 0
    for line in doc.lines[:200]:
        s = line.strip()
        if not s:
            continue
        if s.startswith("#"):
            comments += 1
            continue
        m = _LINE.match(line)
        if not m:
            junk += 1
            continue
        if m.group(1).startswith("NCCL_"):
            nccl += 1
        else:
            other += 1
        if re.match(r"^\s*\w+\s+=|^\s*\w+=\s", line):
            spaced += 1
    if nccl == 0 or junk > 0 or nccl < 0.8 * (nccl + other) or nccl + other > 100:
        return 0.0
    if comments or spaced:
        return 0.97
    return 0.6


FORMATS = [
    Format(
        name="nccl-conf",
        command="cat /etc/nccl.conf",
        facts=("nccl.conf_setting",),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\b(?:cat|less|more|head|tail|bat)\s+(?:-\S+\s+)*\S*nccl\.conf\b",
                          r"\bgrep\b.*\s\S*nccl\.conf\b"),
        description="NCCL configuration file (/etc/nccl.conf, ~/.nccl.conf): NAME=value lines",
    )
]
