"""HTML report: one self-contained page (inline CSS and SVG; no scripts, no network).

Every string is passed through :func:`html.escape` before it reaches the page, so a log line
holding ``<script>`` shows as text. The causal graph is drawn here as inline SVG with a layered
layout (column = depth in the graph), so no Graphviz is needed to make or view the page.
"""

from __future__ import annotations

import html
import textwrap
from typing import Any, Sequence

import networkx as nx

from clusterdx.explainers.common import (LEADING, causal_graph, safe, pct, probe_why, quote, share_cell, share_header,
                                         share_text, status_text, summary, trim_marker)

CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;margin:0;color:#1d232a;
background:#f6f7f9;line-height:1.45}
main{max-width:1100px;margin:0 auto;padding:24px 28px 60px;background:#fff;min-height:100vh}
h1{font-size:1.55em;margin:.2em 0 .4em}h2{font-size:1.2em;border-bottom:1px solid #dde1e6;padding-bottom:4px;
margin-top:1.8em}h3{font-size:1.05em;margin:1.4em 0 .3em}
table{border-collapse:collapse;width:100%;font-size:.93em}th,td{border:1px solid #dde1e6;padding:4px 8px;
text-align:left;vertical-align:top}th{background:#eef1f4}td.num{text-align:right;font-variant-numeric:tabular-nums}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.88em}
code{background:#f0f2f4;padding:1px 4px;border-radius:3px;overflow-wrap:anywhere}
pre{background:#f4f5f7;border:1px solid #e1e4e8;padding:8px 10px;overflow-x:auto;white-space:pre-wrap;
overflow-wrap:anywhere;margin:.3em 0 .6em}
.summary{background:#eef6ff;border-left:4px solid #3b82f6;padding:10px 14px}
.bar{display:inline-block;height:9px;background:#3b82f6;border-radius:2px;vertical-align:middle}
.hyp{border:1px solid #dde1e6;border-radius:6px;padding:4px 16px 12px;margin:14px 0}
.hyp.lead{border-color:#f0b429;box-shadow:0 0 0 2px #fff3c4}
.ev{margin:.4em 0}.strength{font-weight:600;text-transform:uppercase;font-size:.78em;padding:1px 5px;
border-radius:3px;background:#dbeafe}.against{background:#fee2e2}
.muted{color:#5b6570;font-size:.9em}.trim{color:#8a6d00;font-style:italic}
.graph{overflow-x:auto;border:1px solid #e1e4e8;border-radius:6px;padding:6px;background:#fcfcfd}
li{margin:.2em 0}
"""

KIND_FILL = {"root_cause": "#fde68a", "mechanism": "#e0e7ff", "symptom": "#fecaca", "observable": "#d1fae5"}
NODE_W, NODE_H, COL_GAP, ROW_GAP, PAD = 172, 54, 44, 22, 16


def e(s: Any) -> str:
    return html.escape(safe(s), quote=True)


def _layers(g: nx.DiGraph) -> dict[str, int]:
    depth: dict[str, int] = {}
    for n in nx.topological_sort(g) if nx.is_directed_acyclic_graph(g) else sorted(g):
        depth[n] = max((depth.get(p, 0) + 1 for p in g.predecessors(n) if p in depth), default=0)
    return depth


def svg_graph(g: nx.DiGraph, titles: dict[str, str], focus: str | None, path: Sequence[str]) -> str:
    """Inline SVG of a small causal graph, columns by depth, the leading path drawn bold."""
    if g.number_of_nodes() == 0:
        return ""
    depth = _layers(g)
    columns: dict[int, list[str]] = {}
    for n in sorted(g, key=lambda n: (n not in path, n)):
        columns.setdefault(depth[n], []).append(n)
    rows = max(len(c) for c in columns.values())
    width = PAD * 2 + len(columns) * NODE_W + (len(columns) - 1) * COL_GAP
    height = PAD * 2 + rows * NODE_H + (rows - 1) * ROW_GAP
    pos: dict[str, tuple[float, float]] = {}
    for d, names in columns.items():
        offset = (rows - len(names)) * (NODE_H + ROW_GAP) / 2
        for i, n in enumerate(names):
            pos[n] = (PAD + d * (NODE_W + COL_GAP), PAD + offset + i * (NODE_H + ROW_GAP))
    on_path = set(zip(path, path[1:]))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" style="max-width:100%;height:auto" '
             'font-family="Helvetica,Arial,sans-serif" font-size="11">',
             "<title>Causal path of the leading hypothesis</title>",
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" '
             'markerWidth="10" markerHeight="10" orient="auto-start-reverse">'
             '<path d="M0,0 L10,5 L0,10 z" fill="#475569"/></marker></defs>']
    for a, b in sorted(g.edges()):
        (ax, ay), (bx, by) = pos[a], pos[b]
        x1, y1, x2, y2 = ax + NODE_W, ay + NODE_H / 2, bx, by + NODE_H / 2
        bold = (a, b) in on_path
        mid = (x1 + x2) / 2
        parts.append(f'<path d="M{x1:.0f},{y1:.0f} C{mid:.0f},{y1:.0f} {mid:.0f},{y2:.0f} {x2 - 2:.0f},{y2:.0f}" '
                     f'fill="none" stroke="{"#b45309" if bold else "#94a3b8"}" '
                     f'stroke-width="{3 if bold else 1.3}" marker-end="url(#arrow)"/>')
    for n in g:
        x, y = pos[n]
        kind = g.nodes[n].get("kind", "mechanism")
        fill = "#fbbf24" if n == focus else KIND_FILL.get(kind, "#e5e7eb")
        stroke = "#b45309" if n in path else "#64748b"
        label = titles.get(n, n)
        wrapped = textwrap.wrap(label, 27) or [n]
        lines = wrapped[:3]
        if len(wrapped) > 3:
            lines[-1] += " …"
        parts.append(f'<g><title>{e(n)}: {e(label)}</title>'
                     f'<rect x="{x:.0f}" y="{y:.0f}" width="{NODE_W}" height="{NODE_H}" rx="8" fill="{fill}" '
                     f'stroke="{stroke}" stroke-width="{2 if n in path else 1}"/>')
        top = y + NODE_H / 2 - (len(lines) - 1) * 6.5 + 4
        for i, ln in enumerate(lines):
            parts.append(f'<text x="{x + NODE_W / 2:.0f}" y="{top + i * 13:.0f}" text-anchor="middle">{e(ln)}</text>')
        parts.append("</g>")
    parts.append("</svg>")
    return "\n".join(parts)


def _code(s: Any) -> str:
    return f"<code>{e(s)}</code>"


def _pre(lines: Sequence[str]) -> str:
    return "<pre>" + e("\n".join(lines)) + "</pre>"


def _evidence(h: Any, redact: bool) -> list[str]:
    out = ["<h4>Evidence</h4>"]
    for ev in h.evidence:
        said = ' <em class="muted">(reported by the user)</em>' if getattr(ev, "reported", False) else ""
        out.append(f'<div class="ev"><span class="strength">{e(ev.strength)}</span> {e(ev.message)} '
                   f'<span class="muted">(rule {_code(ev.rule)})</span>{said}<ul>')
        for f in ev.facts[:3]:
            out.append(f"<li>{_code(f.source)} <span class=\"muted\">{e(f.summary)}</span>")
            q = quote(f.source, redact)
            if q is not None:
                out.append(_pre(q.lines))
                if q.trimmed:
                    out.append(f'<div class="trim">{e(trim_marker(q))}</div>')
            out.append("</li>")
        if len(ev.facts) > 3:
            out.append(f'<li class="trim">… {len(ev.facts) - 3} more facts trimmed</li>')
        out.append("</ul></div>")
    for ev in h.refuting_evidence:
        out.append(f'<div class="ev"><span class="strength against">{e(ev.strength)} against</span> '
                   f'{e(ev.message)} <span class="muted">(rule {_code(ev.rule)})</span></div>')
    return out


def _fixes(h: Any) -> list[str]:
    out: list[str] = []
    if h.remediation:
        out.append("<h4>Remediation</h4><ul>")
        for r in h.remediation:
            out.append(f"<li><strong>{e(r.title)}</strong> <span class=\"muted\">(risk {e(r.risk)}, "
                       f"effort {e(r.effort)}, disruption {e(r.disruption)})</span><ol>")
            for st in r.steps:
                root = " <em>(as root)</em>" if getattr(st, "needs_root", False) and st.command else ""
                alts = "".join(f"<div>{e(a.text)}{' <em>(as root)</em>' if a.needs_root else ''}:</div>"
                               + _pre([a.command]) for a in getattr(st, "alternatives", []) or [])
                out.append(f"<li>{e(st.text)}{root}" + (_pre([st.command]) if st.command else "") + alts + "</li>")
            out.append("</ol>")
            if r.tradeoff:
                out.append(f"<div class=\"muted\">Trade-off: {e(r.tradeoff)}</div>")
            if r.rollback:
                out.append(f"<div class=\"muted\">Rollback: {e(r.rollback)}</div>")
            if r.verify:
                out.append(f"<div class=\"muted\">Verify: {e(r.verify)}</div>")
            out.append("</li>")
        out.append("</ul>")
    if h.verification:
        out.append("<h4>Verify the fix</h4><ul>")
        for v in h.verification:
            out.append(f"<li>{e(v.check)}" + (_pre([v.command]) if v.command else "")
                       + f"<div>Expect: {e(v.expect)}</div></li>")
        out.append("</ul>")
    return out


def render(report: Any, *, leading: int = LEADING, title: str | None = None, **_: Any) -> str:
    top = report.hypotheses[0] if report.hypotheses else None
    heading = title or (f"clusterdx diagnosis: {top.title}" if top else "clusterdx diagnosis")
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
           "img-src data:\">",
           f"<title>{e(heading)}</title><style>{CSS}</style></head><body><main>",
           f"<h1>{e(heading)}</h1>",
           f'<p class="muted">Target: {e(", ".join(report.target))}'
           + (f"; baseline: {e(', '.join(report.baseline))}" if report.baseline else "") + "</p>",
           f'<p class="summary" id="summary">{e(summary(report))}</p>',
           '<h2 id="ranking">Ranked hypotheses</h2>']
    if report.hypotheses:
        out.append(f"<table><thead><tr><th>#</th><th>root cause</th><th>confidence</th><th>{e(share_header(report))}</th>"
                   "<th>layer</th></tr></thead><tbody>")
        for h in report.hypotheses:
            out.append(f'<tr><td class="num">{h.rank}</td><td>{e(h.title)}<br>{_code(h.id)}</td>'
                       f'<td class="num"><span class="bar" style="width:{int(h.confidence * 60)}px"></span> '
                       f'{h.confidence:.2f}</td><td class="num">{e(share_cell(h))}</td><td>{e(h.layer)}</td></tr>')
        out.append("</tbody></table>")
        g, titles, path = causal_graph(report)
        out.append('<h2 id="graph">Causal path of the leading hypothesis</h2>')
        out.append('<p class="muted">Root causes (left) lead through mechanisms to the measured symptom (right); '
                   "the leading hypothesis and its path are highlighted.</p>")
        out.append(f'<div class="graph">{svg_graph(g, titles, top.id if top else None, path)}</div>')
        for h in report.hypotheses:
            cls = "hyp lead" if h.rank == 1 else "hyp"
            out.append(f'<section class="{cls}" id="h-{e(h.id)}"><h3>{h.rank}. {e(h.title)} {_code(h.id)}</h3>')
            out.append(f"<p>Confidence {h.confidence:.2f} (prior {h.prior:.2f}){e(status_text(h))}; "
                       f"{e(share_text(h))}.<br>Causal path: {e(' → '.join(h.causal_path))}</p>")
            out += _evidence(h, report.redacted)
            if h.rank <= leading:
                out += _fixes(h)
            out.append("</section>")
    else:
        out.append("<p>No root cause is supported by the evidence collected so far.</p>")
    if report.differences:
        out.append('<h2 id="differences">Differences from the baseline</h2><table><tr><th>what</th><th>target</th>'
                   "<th>baseline</th></tr>")
        out += [f"<tr><td>{e(d.what)}</td><td>{_code(d.target)}</td><td>{_code(d.baseline)}</td></tr>"
                for d in report.differences]
        out.append("</table>")
    out.append('<h2 id="not-evaluated">What we could not check</h2>')
    if report.not_evaluated:
        out.append("<p>These checks need facts that were not in the inputs; they are not known to be fine.</p><ul>")
        for ne in report.not_evaluated:
            cmd = f" — collect with {_code(ne.probes[0].command)}" if ne.probes else ""
            out.append(f"<li>{e(ne.title)} {_code(ne.rule)}: missing "
                       f"{', '.join(_code(m) for m in ne.missing)}{cmd}</li>")
        out.append("</ul>")
    else:
        out.append("<p>Every rule had the facts it needs.</p>")
    out.append('<h2 id="next-probes">Next probes</h2>')
    if report.next_probes:
        out.append("<ol>")
        for p in report.next_probes:
            root = "needs root" if p.needs_root else "no root needed"
            why = probe_why(p)
            out.append(f"<li><strong>{e(p.title)}</strong> <span class=\"muted\">(on {e(', '.join(p.where))}; "
                       f"{root}; about {p.duration_s:g} s)</span>{_pre([p.command])}"
                       + (f"<div class=\"muted\">{e(why)}</div>" if why else "") + "</li>")
        out.append("</ol>")
    else:
        out.append("<p>No probe would change this ranking.</p>")
    out.append('<h2 id="inputs">Inputs</h2><table><thead><tr><th>status</th><th>input</th><th>format</th>'
               "<th>facts</th><th>note</th></tr></thead><tbody>")
    for i in report.inputs:
        side = " (baseline)" if i.side == "baseline" else ""
        note = i.reason or (f"first line: {i.first_line}" if i.status == "unrecognized" else "")
        warn = "".join(f"<div class=\"muted\">line {w.line}: {e(w.message)}</div>" for w in i.warnings[:3])
        out.append(f"<tr><td>{e(i.status)}</td><td>{_code(i.path)}{side}</td><td>{e(i.format or '-')}</td>"
                   f'<td class="num">{i.facts}</td><td>{e(note)}{warn}</td></tr>')
    out.append("</tbody></table>")
    if report.warnings:
        out.append('<h2 id="warnings">Warnings</h2><ul>' + "".join(f"<li>{e(w)}</li>" for w in report.warnings)
                   + "</ul>")
    out.append(f'<p class="muted">clusterdx {e(report.tool.version)}, report schema {e(report.schema_)}; '
               f"{'secrets redacted' if report.redacted else 'secrets NOT redacted'}.</p>")
    out.append("</main></body></html>")
    return "\n".join(out) + "\n"
