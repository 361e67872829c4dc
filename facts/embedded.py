"""Tool lines inside another document: NCCL log lines in a ticket's text or in nccl-tests output.

A ticket's description quotes two NCCL lines; an nccl-tests run with ``NCCL_DEBUG=INFO`` mixes
NCCL's log into the benchmark's table; a pasted excerpt of channel lines ends with the
benchmark's summary. The document then has one format (prose, nccl-tests) while some of its lines
belong to another. A format that can tell one of its lines standing alone (``Format.line_test``,
log formats such as nccl-debug) also reads the lines of other documents that pass its test and
that no fact of the document's own parser came from.

Such a set of lines is an excerpt: the sub-document's coverage is opaque, so no parser builds a
fact from what is *absent* from it. Line numbers stay those of the input (``Document.line_map``).

Sample (a ticket's words with two quoted lines)::

    only one node uses GDRDMA, for example:
    9[1a000] -> 2[6b000] [send] via NET/IB/0/GDRDMA
    9[1a000] -> 2[6b000] [receive] via NET/IB/1
"""

from __future__ import annotations

import dataclasses
from typing import Iterable, Sequence

from clusterdx.facts import lazyre
from clusterdx.facts.base import Fact, NotApplicable
from clusterdx.facts.coverage import Coverage
from clusterdx.facts.document import Document, ParseContext


#: lines looked at per document (a longer document is a log, read by its own format)
MAX_LINES = 20000


def cited_lines(facts: Iterable[Fact]) -> set[int]:
    """Input line numbers some fact came from."""
    cited: set[int] = set()
    for f in facts:
        src = f.source
        if src.line > 0:
            cited.update(range(src.line, max(src.line, src.end_line) + 1))
    return cited


def embedded_facts(doc: Document, primary: str | None, cited: set[int],
                   formats: Sequence) -> tuple[list[Fact], list[tuple[int, str]], list[str]]:
    """Facts of line formats other than ``primary`` from the uncited lines of ``doc``.

    Returns the facts, the parsers' warnings (line, message) and the names of the formats that
    found something. A parser failing on the excerpt costs its facts only.
    """
    if doc.raw is not None or not doc.lines:
        return [], [], []
    facts: list[Fact] = []
    warnings: list[tuple[int, str]] = []
    used: list[str] = []
    for fmt in formats:
        test = getattr(fmt, "line_test", None)
        if test is None or fmt.name == primary:
            continue
        picked = [i for i, ln in enumerate(doc.lines[:MAX_LINES])
                  if doc.lineno(i) not in cited and _passes(test, _unquoted(ln))]
        if not picked:
            continue
        sub = dataclasses.replace(
            doc, lines=[_unquoted(doc.lines[i]) for i in picked], line_map=[doc.lineno(i) for i in picked],
            coverage=Coverage(command=doc.command, complete=False, opaque=True,
                              notes=("lines picked out of another document",)))
        ctx = ParseContext(doc=sub, parser=fmt.name)
        try:
            fmt.parse(sub, ctx)
        except NotApplicable:
            continue
        except Exception as exc:  # an excerpt the parser cannot take costs its facts, nothing else
            warnings.append((sub.lineno(0), f"{fmt.name} on the lines it recognised: "
                                            f"{type(exc).__name__}: {exc}"))
            continue
        got = [f for f in ctx.facts if isinstance(f, Fact)]
        if got:
            facts.extend(got)
            used.append(fmt.name)
        warnings.extend(ctx.warnings)
    return facts, warnings, used


def _unquoted(line: str) -> str:
    """A line quoted in Markdown without its quoting: inline code (`` `ERROR: ...` ``) without its
    backticks, a blockquote (``> 3: host:1:1 [3] NCCL INFO ...``, nested ``> >``) without its markers.

    >>> _unquoted("> 3: ip-10-1-2-3:9:9 [3] NCCL INFO x"), _unquoted("> > `NCCL WARN y`"), _unquoted("a > b")
    ('3: ip-10-1-2-3:9:9 [3] NCCL INFO x', 'NCCL WARN y', 'a > b')
    """
    if line.lstrip().startswith(">"):
        line = _QUOTE.sub("", line, count=1)
    return _TICKS.sub("", line) if "`" in line else line


_TICKS = lazyre.compile(r"^\s{0,8}`{1,3}|`{1,3}\s*$")
#: Markdown blockquote markers at the start of a line (up to three spaces before each, as CommonMark)
_QUOTE = lazyre.compile(r"^(?:[ ]{0,3}>[ ]?){1,8}")


def _passes(test, line: str) -> bool:
    try:
        return bool(test(line))
    except Exception:
        return False


#: code blocks of one document read as tool output (a ticket pastes a few; more is a log)
MAX_BLOCKS = 40


def code_spans(lines: Sequence[str]) -> list[tuple[int, int]]:
    """(first, end) line indices of the content of each fenced or indented code block.

    A ticket's Markdown pastes tool output in code blocks (```` ``` ```` fences, four-space
    indents); markdown-it finds them, so fences inside lists and unclosed last fences are read
    as Markdown reads them. The fence lines themselves are not content.
    """
    # an indent is looked for before stripping it: a stripped line never starts with one
    if not any(ln.lstrip().startswith(("```", "~~~")) or ln.startswith(("    ", "\t")) for ln in lines[:MAX_LINES]):
        return []
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark").disable("inline")
    try:
        tokens = md.parse("\n".join(lines[:MAX_LINES]))
    except Exception:
        return []
    spans: list[tuple[int, int]] = []
    for tok in tokens:
        if tok.type not in ("fence", "code_block") or not tok.map:
            continue
        a, b = tok.map
        if tok.type == "fence":
            a += 1
            if b - 1 > a and lines[b - 1].lstrip().startswith(("```", "~~~")):
                b -= 1
        if b > a:
            spans.append((a, b))
    return spans[:MAX_BLOCKS]
