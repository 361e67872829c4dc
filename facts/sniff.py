"""Which format is this document? Rank every registered format by confidence.

A shell command from a transcript (``$ lscpu``) that matches a format's ``command_patterns``
settles the question: those formats get :data:`COMMAND_CONFIDENCE` and rank above every content
guess; when several match, their content sniffers break the tie. Otherwise each format's content
sniffer scores the document (0..1). A winner needs :data:`MIN_CONFIDENCE`.

Binary documents (``raw`` set) are offered only to formats with ``binary=True``, text documents
only to the others. A sniffer that raises or returns something other than a number in 0..1 is a
bug in that sniffer: it is recorded in ``warnings`` and scored 0, and ranking goes on.

Examples:

    >>> from clusterdx.facts.document import Document
    >>> doc = Document.from_text("kernel.numa_balancing = 1\\nvm.swappiness = 60\\n")
    >>> [(f.name, round(s, 2)) for f, s in rank_formats(doc)][:1]
    [('sysctl', 0.9)]
    >>> doc.command = "sysctl -a"
    >>> [(f.name, s) for f, s in rank_formats(doc)][:1]
    [('sysctl', 0.97)]
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping

from clusterdx.facts.document import Document
from clusterdx.facts.formats import Format, all_formats

COMMAND_CONFIDENCE = 0.97
MIN_CONFIDENCE = 0.5

FormatsArg = Mapping[str, Format] | Iterable[Format] | None


def format_list(formats: FormatsArg = None) -> list[Format]:
    """The formats to consider, in registry (name) order."""
    if formats is None:
        formats = all_formats()
    if isinstance(formats, Mapping):
        return list(formats.values())
    return list(formats)


def _command_matches(fmt: Format, command: str, warnings: list[str]) -> bool:
    try:
        return bool(fmt.matches_command(command))
    except Exception as exc:  # a broken pattern is a bug in that format, not in the input
        warnings.append(f"format {fmt.name}: command pattern failed: {type(exc).__name__}: {exc}")
        return False


def _content_score(fmt: Format, doc: Document, warnings: list[str]) -> float:
    try:
        score = fmt.sniff(doc)
    except RecursionError as exc:
        warnings.append(f"format {fmt.name}: sniffer raised RecursionError: {exc}")
        return 0.0
    except Exception as exc:
        warnings.append(f"format {fmt.name}: sniffer raised {type(exc).__name__}: {exc}")
        return 0.0
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        warnings.append(f"format {fmt.name}: sniffer returned {type(score).__name__}, not a number")
        return 0.0
    score = float(score)
    if math.isnan(score):
        warnings.append(f"format {fmt.name}: sniffer returned NaN")
        return 0.0
    return min(1.0, max(0.0, score))


def rank_formats(doc: Document, formats: FormatsArg = None,
                 warnings: list[str] | None = None) -> list[tuple[Format, float]]:
    """Every candidate format with its confidence, best first (ties: by name).

    ``warnings`` (optional) receives one message per misbehaving sniffer.
    """
    sink: list[str] = warnings if warnings is not None else []
    binary = doc.raw is not None
    scored: list[tuple[bool, float, str, Format, float]] = []
    for fmt in format_list(formats):
        if bool(fmt.binary) != binary:
            continue
        content = _content_score(fmt, doc, sink)
        by_command = bool(doc.command) and _command_matches(fmt, doc.command or "", sink)
        confidence = COMMAND_CONFIDENCE if by_command else content
        scored.append((by_command, content, fmt.name, fmt, confidence))
    scored.sort(key=lambda t: (not t[0], -t[1], t[2]))
    return [(fmt, conf) for _, _, _, fmt, conf in scored]


def best_format(doc: Document, formats: FormatsArg = None) -> tuple[Format | None, float]:
    """The winning format and its confidence, or (None, best score) when nothing reaches 0.5."""
    ranked = rank_formats(doc, formats)
    if ranked and ranked[0][1] >= MIN_CONFIDENCE:
        return ranked[0]
    return None, (ranked[0][1] if ranked else 0.0)
