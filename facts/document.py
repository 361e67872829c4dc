"""A piece of text handed to a parser, and the context a parser writes facts through.

Inputs reach parsers as a :class:`Document`: decoded lines (no line ends, carriage returns
dropped) plus the 1-based line number of the first one in the original input, so that a command
cut out of a pasted transcript still points at the right line of the user's file. ``command`` is
the shell command that produced the text when the transcript said so (``$ lscpu``).

``coverage`` says what part of the tool's output the document can hold, from that command
(``lspci -vvv | grep -i acs``, ``dmesg | tail -50``; see :mod:`clusterdx.facts.coverage`): a
parser builds a fact from the *absence* of a line only where ``coverage.believes_absence(line)``.
``label``/``label_kind`` carry what a loop or a parallel shell printed before the output
(``== mlx5_0`` -> device, ``node12:`` -> node, ``[1,3]<stdout>:`` -> rank; see
:mod:`clusterdx.facts.labels`); ``line_map`` keeps true line numbers for lines gathered from
several places (per-line prefixes).

Parsers build facts through :class:`ParseContext` so every fact gets its node, scope and source
without the parser repeating them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from clusterdx.facts.base import Fact, Scope, SourceRef
from clusterdx.facts.bounds import MAX_KEPT_WARNINGS, Keeper, fact_key
from clusterdx.facts.coverage import Coverage, coverage_of


@dataclass
class Document:
    name: str
    lines: list[str]
    first_line: int = 1
    command: str | None = None
    node: str = "unknown"
    scope: Scope = Scope.unknown
    #: raw bytes for binary formats (NUL-separated environ, SQLite); None for text
    raw: bytes | None = None
    path: str | None = None
    #: redact secret-looking values (tokens, passwords, credentials in URLs) in facts
    redact: bool = True
    #: what part of the tool's output this document can hold (``| grep``, ``| head``): parsers
    #: build a fact from absence only where ``coverage.believes_absence(line)``; computed from
    #: ``command`` when not given (see clusterdx.facts.coverage)
    coverage: Coverage | None = None
    #: a label printed before this output by a loop or a parallel shell (``== mlx5_0``,
    #: ``node12: ...``, ``[1,0]<stdout>: ...``, ``==> file <==``); see clusterdx.facts.labels
    label: str | None = None
    #: what the label names: 'device' | 'node' | 'rank' | 'file' | 'label'
    label_kind: str = ""
    #: 1-based input line of each of ``lines`` when they were not contiguous (lines gathered
    #: by a per-line prefix); None: ``first_line + index``
    line_map: list[int] | None = None

    def __post_init__(self) -> None:
        if self.coverage is None:
            self.coverage = coverage_of(self.command)

    @classmethod
    def from_text(cls, text: str, name: str = "<text>", **kw: Any) -> "Document":
        return cls(name=name, lines=split_lines(text), **kw)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def lineno(self, index: int) -> int:
        """1-based line number in the original input of ``lines[index]``."""
        if self.line_map is not None and 0 <= index < len(self.line_map):
            return self.line_map[index]
        return self.first_line + index


def split_lines(text: str) -> list[str]:
    """Lines without their ends; Windows and old-Mac line ends are both accepted."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


#: warnings per document checked for quoted secrets (an input record keeps fewer; see ingest)
MASKED_WARNINGS = MAX_KEPT_WARNINGS


@dataclass
class ParseContext:
    doc: Document
    parser: str
    facts: list[Fact] = field(default_factory=list)
    warnings: list[tuple[int, str]] = field(default_factory=list)
    #: the bounds on facts kept (identical ones, per type); shared by the documents of one
    #: input (see clusterdx.facts.bounds)
    #: (no bounds unless given: a parser on its own sees everything; ingest gives one per input)
    keeper: Keeper = field(default_factory=Keeper.unbounded, repr=False, compare=False)
    #: warnings past MAX_KEPT_WARNINGS, counted only
    warnings_dropped: int = 0
    #: the document's secrets, found when the first warning is made (see warn)
    _secrets: list[str] | None = field(default=None, repr=False, compare=False)

    def src(self, index: int | None = None, end: int | None = None) -> SourceRef:
        if index is None:
            return SourceRef(input=self.doc.name, parser=self.parser)
        line = self.doc.lineno(index)
        end_line = self.doc.lineno(end) if end is not None and end > index else line
        return SourceRef(input=self.doc.name, line=line, end_line=end_line, parser=self.parser)

    def add(self, fact_cls: type[Fact], index: int | None = None, end: int | None = None,
            **fields: Any) -> Fact | None:
        """Create a fact from ``lines[index]`` (or ``index..end``) and keep it.

        A value the fact model refuses (an integer beyond 64 bits, NaN, a wrong type) costs that
        one fact, not the input: it is dropped with a located warning and None is returned.
        A fact past the input's bounds (:class:`~clusterdx.facts.bounds.Keeper`: too many
        identical copies, too many of its type) is counted there and None is returned; it is
        turned away before it is built, which is what keeps a huge input cheap.
        """
        fields.setdefault("node", self.doc.node)
        fields.setdefault("scope", self.doc.scope)
        if self.doc.redact:
            fields = _redacted(fields)
        kind = fact_cls.fact_type or fact_cls.__name__
        line = self.doc.lineno(index) if index is not None else 0
        mark = self.keeper.mark_one()
        if not self.keeper.admit(kind, fact_key(kind, fields), line):
            return None
        try:
            fact = fact_cls(source=self.src(index, end), **fields)
        except (ValidationError, ValueError, TypeError) as exc:
            self.keeper.undo_one(mark)
            self.warn(index, f"{kind} fact dropped: {_why(exc)}")
            return None
        self.facts.append(fact)
        return fact

    def warn(self, index: int | None, message: str) -> None:
        """Record a problem with one line; the input is then reported as partly parsed. A
        message quoting a cut of a line that holds a secret has the secret's remnant masked (the
        redactor, later, sees only the cut and may not know it for one)."""
        if len(self.warnings) >= MAX_KEPT_WARNINGS:
            self.warnings_dropped += 1  # a record shows at most 50: the rest are only counted
            return
        if self.doc.redact and len(self.warnings) < MASKED_WARNINGS:
            from clusterdx.facts.redact import mask_tokens, secret_tokens

            # a message may quote any line (a statement's start, sqlite's 'near "..."'), cut
            # anywhere: every secret of the document, and its prefixes, is masked in it
            if self._secrets is None:
                self._secrets = secret_tokens(self.doc.lines)
            message = mask_tokens(message, self._secrets)
        self.warnings.append((self.doc.lineno(index) if index is not None else 0, message))


def _why(exc: Exception) -> str:
    """One line for a refused fact: the fields and what was wrong with them."""
    if isinstance(exc, ValidationError):
        parts = []
        for err in exc.errors()[:3]:
            loc = ".".join(str(x) for x in err.get("loc", ()))
            msg = str(err.get("msg", "")).removeprefix("Value error, ")
            parts.append(f"{loc}: {msg}" if loc else msg)
        return "; ".join(parts)[:300]
    return f"{type(exc).__name__}: {exc}"[:300]


def _redacted(fields: dict[str, Any]) -> dict[str, Any]:
    """String fields (and lists of strings) through the one redactor: whatever a parser keeps
    from an input, a credential in it does not reach a fact."""
    from clusterdx.facts.redact import redact_field

    out = {}
    for key, value in fields.items():
        if type(value) is str:
            value = redact_field(value)
        elif type(value) is list and any(type(v) is str for v in value):
            value = [redact_field(v) if type(v) is str else v for v in value]
        out[key] = value
    return out
