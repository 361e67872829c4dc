"""getconf PAGE_SIZE - Command

``getconf PAGE_SIZE`` (or ``PAGESIZE``) prints the base page size in bytes: 4096 on x86 and
most arm64 kernels, 65536 on arm64 ``-64k`` kernels (the usual Grace setup), 16384 on some
arm64 builds. ``getconf -a`` lists every variable, ``PAGESIZE`` and ``PAGE_SIZE`` among them.
A bare number says little by itself, so content alone only hints at this format; the command
line settles it. Yields one ``kernel.page_size``.

Sample input::

    65536

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE, command="getconf PAGE_SIZE")
    >>> ctx = ParseContext(doc, "getconf-page-size"); parse(doc, ctx)
    >>> ctx.facts[0].bytes, ctx.facts[0].source.line
    (65536, 1)
    >>> sniff(doc)
    0.35
    >>> sniff(Document.from_text("4097\\n"))
    0.0
"""

from __future__ import annotations

import re

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.kernel import PageSize


SAMPLE = "65536\n"

_SIZES = {"4096", "8192", "16384", "65536"}
_ALL_LINE = lazyre.compile(r"^\s*(PAGE_?SIZE)\s+([0-9]{1,12})\s*$")
_ANY_ALL = lazyre.compile(r"^[A-Z_][A-Z0-9_]*(?:\s+\S.*)?$")
_PROMPT = lazyre.compile(r"^\s*(?:\[[^\]]*\]\s*)?\S*[$#%>]\s*(?:sudo\s+)?getconf\b")


def _content(doc: Document) -> list[tuple[int, str]]:
    return [(i, ln.strip()) for i, ln in enumerate(doc.lines) if ln.strip() and not _PROMPT.match(ln)]


def sniff(doc: Document) -> float:
    lines = _content(doc)[:200]
    if len(lines) == 1 and lines[0][1] in {"4096", "16384", "65536"}:
        return 0.35
    # getconf -a: hundreds of upper-case variables, PAGESIZE among them
    if len(lines) > 20 and any(_ALL_LINE.match(s) for _, s in lines):
        if sum(1 for _, s in lines if _ANY_ALL.match(s)) >= 0.9 * len(lines):
            return 0.8
    return 0.0


def parse(doc: Document, ctx: ParseContext) -> None:
    lines = _content(doc)
    if not lines:
        raise NotApplicable("empty")
    for i, s in lines:
        if m := _ALL_LINE.match(s):
            _add(ctx, i, m.group(2))
            return
    if len(lines) == 1 and re.fullmatch(r"[0-9]{1,12}", lines[0][1]):
        _add(ctx, lines[0][0], lines[0][1])
        return
    if doc.command and re.search(r"\bgetconf\s+PAGE_?SIZE\b", doc.command):
        raise ParseError(f"expected one number, got {lines[0][1][:40]!r}", doc.lineno(lines[0][0]))
    raise NotApplicable("no page size")


def _add(ctx: ParseContext, i: int, value: str) -> None:
    size = int(value)
    if value not in _SIZES:
        ctx.warn(i, f"unusual page size {size}")
    ctx.add(PageSize, i, bytes=size)


FORMATS = [
    Format(
        name="getconf-page-size",
        command="getconf PAGE_SIZE",
        facts=("kernel.page_size",),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\bgetconf\s+(?:PAGE_?SIZE|-a)\b",),
        description="base page size in bytes (getconf PAGE_SIZE / PAGESIZE / -a)",
    )
]
