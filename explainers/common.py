"""Building blocks the Markdown and HTML reports share: the summary sentence, quoted attachment
lines, the causal graph of the report's hypotheses. No reasoning: everything comes from the report.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clusterdx.facts.nodes import is_unlabelled

if TYPE_CHECKING:  # networkx costs a tenth of a second to import; only graph output needs it
    import networkx as nx


def safe(s: Any, keep_newlines: bool = True) -> str:
    """Any name or line from the inputs (a file name, an archive member, a manifest host, a log
    line) with control characters (ESC, BEL, NUL) and undecodable bytes shown as ``\\xNN``: the
    one place every explainer passes untrusted text through before its own escaping."""
    from clusterdx.facts.base import printable

    return printable(str(s), keep_newlines)


#: lines quoted per fact source before the rest is trimmed (with a marker)
QUOTE_LINES = 6
#: characters kept of one quoted line
QUOTE_WIDTH = 200
#: hypotheses whose remediation and verification are shown in full
LEADING = 2
#: refuse to read attachments bigger than this when quoting
_MAX_READ = 64 * 1024 * 1024

_SOURCE = re.compile(r"^(?P<path>.+?)(?:#\d+)?(?::(?P<a>\d+)(?:-(?P<b>\d+))?)?$")


@dataclass
class Quote:
    source: str
    lines: list[str] = field(default_factory=list)
    #: lines of the span left out of ``lines``
    trimmed: int = 0


def _clip(line: str, width: int = QUOTE_WIDTH) -> str:
    if len(line) <= width:
        return line
    return f"{line[:width]} … [{len(line) - width} more characters trimmed]"


def quote(source: str, redact: bool = True, max_lines: int = QUOTE_LINES) -> Quote | None:
    """The lines a fact came from (``file:12-20``, ``file#3:4``), read back from the attachment.

    None when the lines cannot be read back (an archive member, a live collection, a file that
    moved). Secret-looking values are redacted unless the report was made with ``--no-redact``.
    """
    m = _SOURCE.match(source)
    if not m or not m.group("a") or "!/" in source:
        return None
    path = Path(m.group("path"))
    try:
        if not path.is_file() or path.stat().st_size > _MAX_READ:
            return None
        start = int(m.group("a"))
        end = int(m.group("b") or start)
        wanted: list[str] = []
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            for no, line in enumerate(fh, 1):
                if no > end:
                    break
                if no >= start:
                    wanted.append(line.rstrip("\r\n"))
    except (OSError, ValueError):
        return None
    if not wanted:
        return None
    if redact:
        from clusterdx.facts.redact import redact_text

        wanted = [redact_text(w) for w in wanted]
    shown = [_clip(w) for w in wanted[:max_lines]]
    return Quote(source=source, lines=shown, trimmed=len(wanted) - len(shown))


def trim_marker(q: Quote) -> str:
    return f"… {q.trimmed} more line{'s' if q.trimmed != 1 else ''} trimmed (see {q.source})"


def pct(x: float) -> str:
    return f"{x:.1f}%"


def share_text(h: Any) -> str:
    """A cause's weight in words: its share of the measured gap when a gap was measured, else only
    its typical cost (there is no "share of the gap" without a gap)."""
    if getattr(h, "gap_share_pct", None) is not None:
        return f"{pct(h.gap_share_pct)} of the measured gap"
    return f"typical cost {h.cost_pct[0]:g}-{h.cost_pct[1]:g}%"


def share_cell(h: Any) -> str:
    """The table cell for :func:`share_text`: a percent of the gap, or the typical cost range."""
    if getattr(h, "gap_share_pct", None) is not None:
        return pct(h.gap_share_pct)
    return f"{h.cost_pct[0]:g}-{h.cost_pct[1]:g}%"


def share_header(report: Any) -> str:
    return "share of gap" if any(getattr(h, "gap_share_pct", None) is not None for h in report.hypotheses) \
        else "typical cost"


def status_text(h: Any) -> str:
    return " (candidate, unconfirmed)" if getattr(h, "status", "supported") == "candidate" else ""


def summary(report: Any) -> str:
    """One paragraph, plain text (the caller escapes it for its format)."""
    counts: dict[str, int] = {}
    for i in report.inputs:
        counts[i.status] = counts.get(i.status, 0) + 1
    parts = [f"{n} {s}" for s, n in sorted(counts.items())]
    # "node" is ingestion's name for a file that names no machine, not a host to show
    named = [n for n in report.nodes if not is_unlabelled(n)]
    nodes = ", ".join(named) if named else "unknown nodes"
    if named and len(named) < len(report.nodes):
        nodes += " (and inputs that name no host)"
    text = f"We read {len(report.inputs)} inputs ({', '.join(parts) or 'none'}) from {nodes}."
    g = report.gap
    if g is not None:
        said = ", a number the user reports" if g.reported else ""
        text += (f" The measured gap is {g.gap_pct:.1f}% ({g.metric} {g.measured:g}{said}, against the {g.basis} "
                 f"{g.reference:g}).")
    hs = report.hypotheses
    if not hs:
        text += " No root cause is supported by the evidence collected so far."
    else:
        h = hs[0]
        if h.status == "candidate":
            text += (f" No cause is confirmed; the evidence fits several candidates, first {h.title} ({h.id}), "
                     f"confidence {h.confidence:.2f}.")
        elif h.gap_share_pct is not None:
            text += (f" The most likely cause is {h.title} ({h.id}), with confidence {h.confidence:.2f}, "
                     f"expected to account for about {pct(h.gap_share_pct)} of the gap.")
        else:
            text += (f" The most likely cause is {h.title} ({h.id}), with confidence {h.confidence:.2f} "
                     f"(typical cost {h.cost_pct[0]:g}-{h.cost_pct[1]:g}%).")
        if len(hs) > 1:
            others = ", ".join(f"{o.id} ({o.confidence:.2f})" for o in hs[1:4])
            text += f" Also in the running: {others}."
    if g is not None and hs:
        text += f" Together they explain {pct(g.explained_pct)}; {pct(g.unexplained_pct)} remains unexplained."
    if report.not_evaluated:
        text += f" {len(report.not_evaluated)} checks could not be run for want of data"
        text += "; the probes below would collect it." if report.next_probes else "."
    return text


def probe_why(probe: Any) -> str:
    if len(probe.separates) == 2:
        return f"separates {probe.separates[0]} from {probe.separates[1]}"
    if probe.bears_on:
        return f"bears on {', '.join(probe.bears_on)}"
    if probe.unlocks:
        return f"evaluates {', '.join(probe.unlocks[:4])}"
    return ""


def causal_graph(report: Any, limit: int = 5) -> tuple[nx.DiGraph, dict[str, str], list[str]]:
    """The causal paths of the leading hypotheses as one graph: (graph, titles, leading path).

    Node kinds: the first node of a path is its root cause, the last the top symptom, the ones
    between mechanisms. Edges are the paths' consecutive pairs, all of them edges of the KB graph.
    """
    import networkx as nx

    g = nx.DiGraph()
    titles: dict[str, str] = {}
    leading: list[str] = []
    for k, h in enumerate(report.hypotheses[:limit]):
        path = list(h.causal_path) or [h.id]
        if k == 0:
            leading = path
        titles[h.id] = h.title
        for i, n in enumerate(path):
            kind = "root_cause" if i == 0 else ("symptom" if i == len(path) - 1 else "mechanism")
            if n not in g or (kind == "root_cause" and g.nodes[n].get("kind") != "root_cause"):
                g.add_node(n, kind=kind)
        for a, b in zip(path, path[1:]):
            g.add_edge(a, b, strength="strong" if (a in leading and b in leading) else "moderate")
    return g, titles, leading


@dataclass
class ProbeGroup:
    """Not-evaluated rules that one collection would let run (or, without a probe in the KB,
    that wait on one missing fact type)."""

    #: the command to run, or '' when no probe collects what the rules lack
    command: str
    #: what the rules lack, when there is no command
    missing: str
    rules: list[str] = field(default_factory=list)
    needs_root: bool = False


def not_evaluated_groups(report: Any) -> tuple[list[ProbeGroup], list[Any]]:
    """(groups of the rules that could apply, biggest first; the rules that cannot apply here).

    Each rule sits in one group, its first probe's, so the counts add up to the rules listed.
    """
    groups: dict[str, ProbeGroup] = {}
    apart: list[Any] = []
    for ne in report.not_evaluated:
        if getattr(ne, "not_applicable", ""):
            apart.append(ne)
            continue
        if ne.probes:
            pr = ne.probes[0]
            key = "probe:" + pr.id
            g = groups.setdefault(key, ProbeGroup(pr.command, "", needs_root=pr.needs_root))
        else:
            missing = ne.missing[0].split("(", 1)[0] if ne.missing else "?"
            g = groups.setdefault("fact:" + missing, ProbeGroup("", missing))
        g.rules.append(ne.rule)
    ordered = sorted(groups.values(), key=lambda g: (-len(g.rules), not g.command, g.command or g.missing))
    return ordered, apart


def passed_by_layer(report: Any) -> dict[str, list[Any]]:
    """Rules that had their facts and found nothing wrong, by layer (layers in name order)."""
    out: dict[str, list[Any]] = {}
    for r in report.rules:
        if getattr(r, "passed", False):
            out.setdefault(getattr(r, "layer", "") or "other", []).append(r)
    return dict(sorted(out.items()))


def input_counts(report: Any) -> str:
    """'4 inputs: 4 parsed (lscpu, sysctl); 1 unrecognized' in one line."""
    counts: dict[str, int] = {}
    formats: list[str] = []
    for i in report.inputs:
        counts[i.status] = counts.get(i.status, 0) + 1
        if i.status in ("parsed", "partial") and i.format and i.format not in formats:
            formats.append(i.format)
    order = ["parsed", "partial", "unrecognized", "error", "skipped"]
    parts = [f"{counts[s]} {s}" for s in order if counts.get(s)]
    shown = ", ".join(formats[:6]) + (f", +{len(formats) - 6} more" if len(formats) > 6 else "")
    text = f"{len(report.inputs)} input{'s' if len(report.inputs) != 1 else ''}"
    if parts:
        text += ": " + ", ".join(parts)
    if shown:
        text += f" ({shown})"
    return text


def first_fix(h: Any) -> tuple[Any, Any] | tuple[None, None]:
    """The remediation to lead with (the KB lists a cause's remediations best first) and its
    first step: the KB writes the action itself first, checks and persistence after it."""
    if h.remediation and h.remediation[0].steps:
        return h.remediation[0], h.remediation[0].steps[0]
    return None, None


def shorten_paths(text: str, targets: Any) -> str:
    """``text`` with the given folders' prefixes cut from the paths it names (a rule's message
    quotes its source's full path; the reader knows which folder they gave)."""
    for t in targets:
        t = str(t).rstrip("/")
        if t and "<" not in t:
            text = text.replace(t + "/", "").replace(t + "!/", "")
    return text


def short_path(path: str, targets: Any) -> str:
    """An input's path relative to the folder or archive it was found in, when it is inside one."""
    for t in targets:
        t = str(t).rstrip("/")
        if t and path.startswith(t + "/"):
            return path[len(t) + 1:]
        if t and path.startswith(t + "!/"):
            return path[len(t) + 2:]
    return path
