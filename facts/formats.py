"""The registry of input formats: what each parser reads, which command produces it, what facts it yields.

Every module in ``clusterdx.facts.parsers`` exposes ``FORMATS``, a list of :class:`Format`.
A format knows how confident it is that a document is its kind (``sniff``, 0..1, by content),
which shell commands produce it (so a transcript's ``$ lscpu`` settles the question), and how to
parse it into facts. A format that can parse an input of any size line by line also offers
``stream``, which ingestion uses for big files.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable

from clusterdx.facts.document import Document, ParseContext

Sniffer = Callable[[Document], float]
Parser = Callable[[Document, ParseContext], None]
#: parses a document handed over in batches ``(index of the first line, lines)``, in order, in
#: bounded memory; ``ctx.doc`` then holds only the head of the input (what was sniffed)
Streamer = Callable[[Iterable[tuple[int, list[str]]], ParseContext], None]


@dataclass(frozen=True)
class Format:
    name: str
    #: the exact command a user runs to produce this input
    command: str
    #: fact types the parser can yield
    facts: tuple[str, ...]
    sniff: Sniffer
    parse: Parser
    #: regexes matched against a transcript's command line (``$ lscpu -e`` ...)
    command_patterns: tuple[str, ...] = ()
    description: str = ""
    binary: bool = False
    #: optional: the same parse as ``parse`` over a stream of lines, for inputs too big to hold
    stream: Streamer | None = None
    #: a matching command that printed nothing is still evidence this format reads
    #: (``echo $NCCL_IB_HCA`` printing an empty line: the variable is not set)
    empty_output: bool = False
    #: optional: True for a line that is this format's wherever it appears (a log line): such
    #: lines inside another document (a ticket's text, another tool's output) are parsed by this
    #: format as well (clusterdx.facts.embedded)
    line_test: Callable[[str], bool] | None = None
    _compiled: tuple[re.Pattern[str], ...] = field(default=(), compare=False, repr=False)

    def matches_command(self, command: str) -> bool:
        pats = self._compiled or tuple(re.compile(p) for p in self.command_patterns)
        if not self._compiled:
            object.__setattr__(self, "_compiled", pats)
        return any(p.search(command) for p in pats)


_REGISTRY: dict[str, Format] | None = None


def all_formats() -> dict[str, Format]:
    """Every registered format by name, parsers imported on first use."""
    global _REGISTRY
    if _REGISTRY is None:
        from clusterdx.facts import parsers

        registry: dict[str, Format] = {}
        for info in sorted(pkgutil.iter_modules(parsers.__path__), key=lambda i: i.name):
            if info.name.startswith("_"):
                continue
            module = importlib.import_module(f"{parsers.__name__}.{info.name}")
            for fmt in getattr(module, "FORMATS", ()):
                if fmt.name in registry:
                    raise RuntimeError(f"format {fmt.name!r} registered twice")
                registry[fmt.name] = fmt
        _REGISTRY = registry
    return _REGISTRY


def run_parser(fmt: Format, doc: Document) -> ParseContext:
    """Parse ``doc`` with ``fmt``; ParseError and NotApplicable propagate to the caller."""
    ctx = ParseContext(doc=doc, parser=fmt.name)
    fmt.parse(doc, ctx)
    return ctx
