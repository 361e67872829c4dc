"""The ``--format markdown`` report (and the engineer's notes of ``triage --notes``), with a Mermaid
causal path. The reply sent to the customer is explainers/reply.py.

Every string that may come from the inputs is made inert: inline text has Markdown and HTML
metacharacters backslash-escaped or turned into entities, commands sit in code spans or fenced
blocks whose fence is longer than any backtick run inside, and quoted attachment lines are
always in fenced blocks. Long evidence is trimmed with a marker; a conclusion never is.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from clusterdx.explainers.common import (LEADING, causal_graph, safe, pct, probe_why, quote, share_cell, share_header,
                                         share_text, status_text, summary, trim_marker)

#: not_evaluated rules listed one per line; the rest are named on one line
NOT_EVALUATED_DETAIL = 15
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def text(s: Any) -> str:
    """Inline text: one line, control characters shown as \\xNN, Markdown metacharacters escaped,
    HTML tags inert."""
    s = " ".join(safe(s).split())
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = _MD_SPECIAL.sub(r"\\\1", s)
    return "\\" + s if s and s[0] in "#+-=" else s


def code(s: Any) -> str:
    """An inline code span that no backtick inside can close; pipes escaped for tables."""
    s = " ".join(safe(s).split())
    longest = max((len(r) for r in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or not s.strip() else ""
    return f"{fence}{pad}{s}{pad}{fence}".replace("|", "\\|")


def fenced(lines: Sequence[str], lang: str = "text", indent: str = "") -> list[str]:
    """A fenced block longer than any backtick run in ``lines``."""
    lines = [safe(ln, False) for ln in lines]
    longest = max((len(r) for ln in lines for r in re.findall(r"`+", ln)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{indent}{fence}{lang}", *(f"{indent}{ln}" for ln in lines), f"{indent}{fence}"]


def _ranking(report: Any) -> list[str]:
    out = [f"| # | root cause | confidence | {share_header(report)} | layer |",
           "| ---: | --- | ---: | ---: | --- |"]
    for h in report.hypotheses:
        out.append(f"| {h.rank} | {text(h.title)} ({code(h.id)}){status_text(h)} | {h.confidence:.2f} | "
                   f"{share_cell(h)} | {text(h.layer)} |")
    return out


def _evidence(h: Any, redact: bool, quote_lines: bool) -> list[str]:
    out: list[str] = []
    for ev in h.evidence:
        out.append(f"- **{text(ev.strength)}**: {text(ev.message)} (rule {code(ev.rule)})"
                   + (" *(reported by the user)*" if getattr(ev, "reported", False) else ""))
        for f in ev.facts[:3]:
            out.append(f"  - {code(f.source)}: {text(f.summary)}")
            q = quote(f.source, redact) if quote_lines else None
            if q is not None:
                lines = q.lines + ([trim_marker(q)] if q.trimmed else [])
                out += fenced(lines, indent="    ")
        if len(ev.facts) > 3:
            out.append(f"  - … {len(ev.facts) - 3} more facts trimmed")
    for ev in h.refuting_evidence:
        out.append(f"- counts against (**{text(ev.strength)}**): {text(ev.message)} (rule {code(ev.rule)})"
                   + (" *(reported by the user)*" if getattr(ev, "reported", False) else ""))
    return out


def _fixes(h: Any) -> list[str]:
    out: list[str] = []
    if h.remediation:
        out += ["", "**Remediation**", ""]
        for r in h.remediation:
            out.append(f"- {text(r.title)} (risk {text(r.risk)}, disruption {text(r.disruption)})")
            for i, st in enumerate(r.steps, 1):
                root = " *(as root)*" if getattr(st, "needs_root", False) and st.command else ""
                out.append(f"  {i}. {text(st.text)}{root}")
                if st.command:
                    out += fenced([st.command], "sh", indent="     ")
                for alt in getattr(st, "alternatives", []) or []:
                    out.append(f"     {text(alt.text)}{' *(as root)*' if alt.needs_root else ''}:")
                    out += fenced([alt.command], "sh", indent="     ")
            if r.tradeoff:
                out.append(f"  Trade-off: {text(r.tradeoff)}")
            if r.rollback:
                out.append(f"  Rollback: {text(r.rollback)}")
    if h.verification:
        out += ["", "**Verify the fix**", ""]
        for v in h.verification:
            out.append(f"- {text(v.check)}")
            if v.command:
                out += fenced([v.command], "sh", indent="  ")
            out.append(f"  Expect: {text(v.expect)}")
    return out


def _hypotheses(report: Any, quote_lines: bool, leading: int) -> list[str]:
    out: list[str] = []
    for h in report.hypotheses:
        out += ["", f"### {h.rank}. {text(h.title)} ({code(h.id)})", ""]
        out.append(f"Confidence {h.confidence:.2f} (prior {h.prior:.2f}){status_text(h)}; {share_text(h)}.")
        out.append(f"Causal path: {' → '.join(code(n) for n in h.causal_path)}.")
        out += ["", "**Evidence**", ""]
        out += _evidence(h, report.redacted, quote_lines)
        if h.rank <= leading:
            out += _fixes(h)
        elif h.remediation:
            out += ["", f"Remediation: see {code('clusterdx explain ' + h.id)}."]
    return out


def _mermaid(report: Any) -> list[str]:
    from clusterdx.explainers.graph import to_mermaid

    if not report.hypotheses:
        return []
    g, titles, path = causal_graph(report, limit=1)
    top = report.hypotheses[0]
    body = to_mermaid(g, titles, focus=top.id, path=path).rstrip("\n").splitlines()
    return ["", "## Causal path of the leading hypothesis", "", *fenced(body, "mermaid")]


def _not_evaluated(report: Any) -> list[str]:
    out = ["", "## What we could not check", ""]
    if not report.not_evaluated:
        return out + ["Every rule had the facts it needs."]
    out.append("These checks need facts that were not in the attachments; they are not known to be fine.")
    out.append("")
    for ne in report.not_evaluated[:NOT_EVALUATED_DETAIL]:
        line = f"- {text(ne.title)} ({code(ne.rule)}): missing {', '.join(code(m) for m in ne.missing)}"
        if ne.probes:
            line += f"; collect with {code(ne.probes[0].command)}"
        out.append(line)
    rest = report.not_evaluated[NOT_EVALUATED_DETAIL:]
    if rest:
        out.append(f"- and {len(rest)} more: {', '.join(code(ne.rule) for ne in rest)}")
    return out


def _probes(report: Any) -> list[str]:
    out = ["", "## Please run these and attach the output", ""]
    if not report.next_probes:
        return out + ["Nothing more to collect: no probe would change this ranking."]
    for i, p in enumerate(report.next_probes, 1):
        root = "needs root" if p.needs_root else "no root needed"
        disturb = "; disturbs the running job" if p.disturbs_workload else ""
        out.append(f"{i}. {text(p.title)}: run on {', '.join(text(w) for w in p.where)} ({root}{disturb}; "
                   f"about {p.duration_s:g} s)")
        why = probe_why(p)
        if why:
            out.append(f"   Why: {text(why)}.")
        out += fenced([p.command], "sh", indent="   ")
    return out


def _inputs(report: Any) -> list[str]:
    out = ["", "## Inputs", "", "| status | input | format | facts | note |", "| --- | --- | --- | ---: | --- |"]
    for i in report.inputs:
        side = " (baseline)" if i.side == "baseline" else ""
        out.append(f"| {text(i.status)} | {code(i.path)}{side} | {text(i.format or '-')} | {i.facts} | "
                   f"{text(i.reason)} |")
    return out


def _differences(report: Any) -> list[str]:
    if not report.differences:
        return []
    out = ["", "## Differences from the baseline", ""]
    for d in report.differences[:40]:
        out.append(f"- {text(d.what)}: target {code(d.target)}, baseline {code(d.baseline)}")
    if len(report.differences) > 40:
        out.append(f"- … {len(report.differences) - 40} more differences trimmed")
    return out


def render(report: Any, *, quote_lines: bool = True, leading: int = LEADING, **_: Any) -> str:
    out: list[str] = []
    top = report.hypotheses[0] if report.hypotheses else None
    title = f": {text(top.title)}" if top else ""
    out.append(f"# clusterdx diagnosis{title}")
    out += ["", f"**Summary.** {text(summary(report))}"]
    out += ["", "## Ranked hypotheses", ""]
    if report.hypotheses:
        out += _ranking(report)
        out += _hypotheses(report, quote_lines, leading)
    else:
        out.append("No root cause is supported by the evidence collected so far; see what we could not check.")
    out += _mermaid(report)
    out += _differences(report)
    out += _not_evaluated(report)
    out += _probes(report)
    out += _inputs(report)
    if report.warnings:
        out += ["", "## Warnings", ""] + [f"- {text(w)}" for w in report.warnings]
    out += ["", f"<sub>clusterdx {text(report.tool.version)}, report schema {text(report.schema_)}"
                f"{'; secrets redacted' if report.redacted else '; NOT redacted'}.</sub>"]
    return "\n".join(out) + "\n"
