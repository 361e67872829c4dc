"""Shared helpers for parser tests: run a format on text or a fixture file."""

from __future__ import annotations

from pathlib import Path

from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import all_formats

FORMATS = Path(__file__).parents[1] / "fixtures" / "formats"


def parse_text(fmt_name: str, text: str, command: str | None = None, name: str = "<test>") -> ParseContext:
    fmt = all_formats()[fmt_name]
    doc = Document.from_text(text, name=name, command=command)
    ctx = ParseContext(doc=doc, parser=fmt.name)
    fmt.parse(doc, ctx)
    return ctx


def parse_fixture(fmt_name: str, filename: str, command: str | None = None) -> ParseContext:
    path = FORMATS / filename
    text = path.read_bytes().decode("utf-8", errors="replace")
    return parse_text(fmt_name, text, command=command, name=filename)


def of_type(ctx: ParseContext, fact_type: str) -> list:
    return [f for f in ctx.facts if f.fact_type == fact_type]


def sample_files(*dirs: Path) -> list[Path]:
    """Every fixture file in ``dirs``, sorted: the population a sniffer must score correctly."""
    return [p for d in dirs for p in sorted(d.iterdir()) if p.is_file()]


def sniff_file(sniff, path: Path) -> float:
    return sniff(Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name))


def parse_or_refuse(fmt_name: str, text: str) -> None:
    """The parser contract: facts, or its own ParseError/NotApplicable, never anything else."""
    from clusterdx.facts.base import NotApplicable, ParseError

    try:
        parse_text(fmt_name, text)
    except (ParseError, NotApplicable):
        pass
