"""HTML report: one self-contained page (inline CSS and SVG; no scripts, no network).

Every string is passed through :func:`html.escape` before it reaches the page, so a log line
holding ``<script>`` shows as text. The causal graph is drawn here as inline SVG with a layered
layout (column = depth in the graph), so no Graphviz is needed to make or view the page.
"""

from __future__ import annotations

import html
import textwrap
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:  # networkx costs ~70 ms to import: loaded when a graph is laid out, not with the module
    import networkx as nx

from clusterdx.explainers.common import (LEADING, causal_graph, first_fix, not_evaluated_groups, passed_by_layer, safe,
                                         shorten_paths,
                                         pct, probe_why, quote, share_cell, share_header, share_text, status_text,
                                         summary, trim_marker)

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
nav.toc{font-size:.92em;background:#f8fafc;border:1px solid #e1e4e8;border-radius:6px;padding:6px 14px;margin:10px 0}
nav.toc a{margin-right:14px;white-space:nowrap}
.answer{border:2px solid #f0b429;border-radius:6px;padding:4px 16px 10px;margin:14px 0;background:#fffdf5}
details{margin:.5em 0}summary{cursor:pointer;font-weight:600}
"""
#: list items shown before the rest folds into <details>
FOLD = 6

KIND_FILL = {"root_cause": "#fde68a", "mechanism": "#e0e7ff", "symptom": "#fecaca", "observable": "#d1fae5"}
NODE_W, NODE_H, COL_GAP, ROW_GAP, PAD = 172, 54, 44, 22, 16


def e(s: Any) -> str:
    return html.escape(safe(s), quote=True)


def _layers(g: nx.DiGraph) -> dict[str, int]:
    import networkx as nx

    depth: dict[str, int] = {}
    for n in nx.topological_sort(g) if nx.is_directed_acyclic_graph(g) else sorted(g):
        depth[n] = max((depth.get(p, 0) + 1 for p in g.predecessors(n) if p in depth), default=0)
    return depth


def layout(g: nx.DiGraph, path: Sequence[str]) -> tuple[dict[str, tuple[float, float]],
                                                        dict[tuple[str, str], list[tuple[float, float]]], int, int]:
    """(box corner per node, polyline per edge, width, height): a layered layout in which an edge that
    skips columns takes a free slot in each column it crosses (a dummy node), so no edge is ever
    drawn under a box it does not join. Each polyline runs centre-right of its source, through its
    slots, to centre-left of its target; between columns it stays in the gap."""
    depth = _layers(g)
    columns: dict[int, list[str]] = {}
    for n in sorted(g, key=lambda n: (n not in path, n)):
        columns.setdefault(depth[n], []).append(n)
    dummies: dict[tuple[str, str], list[str]] = {}
    on_path = set(zip(path, path[1:]))
    for a, b in sorted(g.edges(), key=lambda ab: (ab not in on_path, ab)):
        chain = []
        for d in range(depth[a] + 1, depth[b]):
            slot = f"\0{a}->{b}#{d}"
            columns.setdefault(d, []).append(slot)
            chain.append(slot)
        dummies[(a, b)] = chain
    rows = max(len(c) for c in columns.values())
    ncols = max(columns) + 1
    width = PAD * 2 + ncols * NODE_W + (ncols - 1) * COL_GAP
    height = PAD * 2 + rows * NODE_H + (rows - 1) * ROW_GAP
    pos: dict[str, tuple[float, float]] = {}
    for d, names in columns.items():
        offset = (rows - len(names)) * (NODE_H + ROW_GAP) / 2
        for i, n in enumerate(names):
            pos[n] = (PAD + d * (NODE_W + COL_GAP), PAD + offset + i * (NODE_H + ROW_GAP))
    lines: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for (a, b), chain in dummies.items():
        (ax, ay), (bx, by) = pos[a], pos[b]
        pts = [(ax + NODE_W, ay + NODE_H / 2)]
        for slot in chain:
            sx, sy = pos[slot]
            pts += [(sx, sy + NODE_H / 2), (sx + NODE_W, sy + NODE_H / 2)]
        pts.append((bx, by + NODE_H / 2))
        lines[(a, b)] = pts
    return {n: xy for n, xy in pos.items() if n in g}, lines, width, height


def svg_graph(g: nx.DiGraph, titles: dict[str, str], focus: str | None, path: Sequence[str]) -> str:
    """Inline SVG of a small causal graph, columns by depth, the leading path drawn bold."""
    if g.number_of_nodes() == 0:
        return ""
    pos, lines, width, height = layout(g, path)
    on_path = set(zip(path, path[1:]))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" style="max-width:100%;height:auto" '
             'font-family="Helvetica,Arial,sans-serif" font-size="11">',
             "<title>Causal path of the leading hypothesis</title>",
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" '
             'markerWidth="10" markerHeight="10" orient="auto-start-reverse">'
             '<path d="M0,0 L10,5 L0,10 z" fill="#475569"/></marker></defs>']
    # the highlighted path last, so no other edge is drawn over it
    for a, b in sorted(lines, key=lambda ab: (ab in on_path, ab)):
        pts = lines[(a, b)]
        bold = (a, b) in on_path
        d = f"M{pts[0][0]:.0f},{pts[0][1]:.0f}"
        for k, ((x1, y1), (x2, y2)) in enumerate(zip(pts, pts[1:])):
            if k % 2:  # through a free slot: straight across it
                d += f" L{x2:.0f},{y2:.0f}"
                continue
            mid = (x1 + x2) / 2  # across a gap between columns: a curve that stays in the gap
            end = x2 - 2 if k == len(pts) - 2 else x2
            d += f" C{mid:.0f},{y1:.0f} {mid:.0f},{y2:.0f} {end:.0f},{y2:.0f}"
        parts.append(f'<path d="{d}" fill="none" stroke="{"#b45309" if bold else "#94a3b8"}" '
                     f'stroke-width="{3 if bold else 1.3}" marker-end="url(#arrow)"/>')
    for n in g:
        x, y = pos[n]
        kind = g.nodes[n].get("kind", "mechanism")
        fill = "#fbbf24" if n == focus else KIND_FILL.get(kind, "#e5e7eb")
        stroke = "#b45309" if n in path else "#64748b"
        label = titles.get(n, n)
        wrapped = textwrap.wrap(label, 27) or [n]
        lines_ = wrapped[:3]
        if len(wrapped) > 3:
            lines_[-1] += " …"
        parts.append(f'<g><title>{e(n)}: {e(label)}</title>'
                     f'<rect x="{x:.0f}" y="{y:.0f}" width="{NODE_W}" height="{NODE_H}" rx="8" fill="{fill}" '
                     f'stroke="{stroke}" stroke-width="{2 if n in path else 1}"/>')
        top = y + NODE_H / 2 - (len(lines_) - 1) * 6.5 + 4
        for i, ln in enumerate(lines_):
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


def _answer(report: Any) -> list[str]:
    """The causes to act on, each with its first fix step and the check that says it worked."""
    supported = [h for h in report.hypotheses if h.status == "supported"]
    causes = (supported or report.hypotheses)[:LEADING]
    out = ['<section class="answer" id="answer"><h2 style="border:0;margin-top:.6em">Answer</h2>']
    if not causes:
        out.append("<p>No root cause is supported by the evidence collected; what was checked and found fine "
                   'is listed under <a href="#checked">Checked and found fine</a>.</p>')
    elif causes[0].status == "candidate":
        out.append("<p>No cause is confirmed; these candidates fit the evidence only weakly.</p>")
    out.append("<ol>")
    for h in causes:
        out.append(f'<li><strong>{e(h.title)}</strong> <span class="muted">(confidence {h.confidence:.2f}'
                   f'{e(status_text(h))}; {e(share_text(h))})</span>')
        if h.evidence:
            out.append(f"<div>Why: {e(shorten_paths(h.evidence[0].message, report.target))}</div>")
        r, st = first_fix(h)
        if r is not None:
            root = " <em>(as root)</em>" if st.command and st.needs_root else ""
            out.append(f"<div>Fix: {e(r.title)}{root}</div>" + (_pre([st.command]) if st.command else ""))
            if r.tradeoff:
                out.append(f'<div class="muted">Trade-off: {e(r.tradeoff)}</div>')
            if r.rollback:
                out.append(f'<div class="muted">Rollback: {e(r.rollback)}</div>')
        if h.verification:
            v = next((v for v in h.verification if v.values), h.verification[0])
            out.append(f"<div>Verify: {e(v.check)}</div>" + (_pre([v.command]) if v.command else "")
                       + f"<div>Expect: {e(v.expect)}</div>")
        out.append(f'<div class="muted"><a href="#h-{e(h.id)}">evidence and every step</a></div></li>')
    out.append("</ol></section>")
    return out


def _fold(items: list[str], label: str, shown: int = FOLD) -> list[str]:
    """A list whose items past ``shown`` fold into a <details> the reader opens."""
    out = ["<ul>"] + items[:shown] + ["</ul>"]
    if len(items) > shown:
        out += [f"<details><summary>{e(label.format(n=len(items) - shown))}</summary><ul>"] + items[shown:] \
            + ["</ul></details>"]
    return out


def _probes(report: Any) -> list[str]:
    out = ['<h2 id="next-probes">Next probes</h2>']
    if not report.next_probes:
        return out + ["<p>No probe would change this ranking.</p>"]
    out.append("<ol>")
    for p in report.next_probes:
        root = "needs root" if p.needs_root else "no root needed"
        why = probe_why(p)
        out.append(f"<li><strong>{e(p.title)}</strong> <span class=\"muted\">(on {e(', '.join(p.where))}; "
                   f"{root}; about {p.duration_s:g} s)</span>{_pre([p.command])}"
                   + (f"<div class=\"muted\">{e(why)}</div>" if why else "") + "</li>")
    out.append("</ol>")
    return out


def _not_checked(report: Any) -> list[str]:
    out = ['<h2 id="not-evaluated">What we could not check</h2>']
    if not report.not_evaluated:
        return out + ["<p>Every rule had the facts it needs.</p>"]
    groups, apart = not_evaluated_groups(report)
    out.append(f"<p>{len(report.not_evaluated)} checks need facts that were not in the inputs; they are not known "
               f"to be fine. {len(apart)} of them cannot apply to this node. Grouped by what would collect the "
               "facts, biggest group first:</p>")
    by_rule = {ne.rule: ne for ne in report.not_evaluated}
    for g in groups:
        what = f"collect with {_code(g.command)}" if g.command else f"no probe collects {_code(g.missing)}; attach it"
        root = " <em>(as root)</em>" if g.needs_root else ""
        items = [f"<li>{e(by_rule[r].title)} {_code(r)}: missing {', '.join(_code(m) for m in by_rule[r].missing)}</li>"
                 for r in g.rules]
        out.append(f"<details><summary>{len(g.rules)} rules: {what}{root}</summary><ul>"
                   + "".join(items) + "</ul></details>")
    if apart:
        items = "".join(f"<li>{_code(ne.rule)}: {e(ne.not_applicable)}</li>" for ne in apart)
        out.append(f"<details><summary>{len(apart)} rules cannot apply to this node</summary><ul>{items}</ul></details>")
    return out


def _checked(report: Any) -> list[str]:
    layers = passed_by_layer(report)
    n = sum(len(v) for v in layers.values())
    out = ['<h2 id="checked">Checked and found fine</h2>']
    if not n:
        return out + ["<p>Nothing: no rule had the facts it needs and found nothing wrong.</p>"]
    out.append(f"<p>{n} rules had their facts and found nothing wrong.</p>")
    for layer, rules in layers.items():
        items = "".join(f"<li>{e(r.title or r.rule) if r.outcome == 'refuted' else 'not seen: ' + e(r.title or r.rule)}"
                        f" {_code(r.rule)}</li>" for r in rules)
        out.append(f"<details><summary>{e(layer)}: {len(rules)}</summary><ul>{items}</ul></details>")
    return out


def render(report: Any, *, leading: int = LEADING, title: str | None = None, **_: Any) -> str:
    top = report.hypotheses[0] if report.hypotheses else None
    heading = title or (f"clusterdx diagnosis: {top.title}" if top else "clusterdx diagnosis")
    toc = [("answer", "Answer"), ("next-probes", "Next probes"), ("ranking", "Ranked hypotheses")]
    if report.hypotheses:
        toc += [("graph", "Causal graph"), ("details", "Evidence and fixes")]
    if report.differences:
        toc.append(("differences", "Differences from the baseline"))
    toc += [("checked", "Checked and found fine"), ("not-evaluated", "Not checked"), ("inputs", "Inputs")]
    if report.warnings:
        toc.append(("warnings", "Warnings"))
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
           "img-src data:\">",
           f"<title>{e(heading)}</title><style>{CSS}</style></head><body><main>",
           f"<h1>{e(heading)}</h1>",
           f'<p class="muted">Target: {e(", ".join(report.target))}'
           + (f"; baseline: {e(', '.join(report.baseline))}" if report.baseline else "") + "</p>",
           '<nav class="toc" aria-label="Contents">' + "".join(f'<a href="#{i}">{t}</a>' for i, t in toc) + "</nav>",
           f'<p class="summary" id="summary">{e(summary(report))}</p>']
    out += _answer(report)
    out += _probes(report)
    out.append('<h2 id="ranking">Ranked hypotheses</h2>')
    if report.hypotheses:
        out.append(f"<table><thead><tr><th>#</th><th>root cause</th><th>confidence</th><th>{e(share_header(report))}</th>"
                   "<th>layer</th></tr></thead><tbody>")
        for h in report.hypotheses:
            out.append(f'<tr><td class="num">{h.rank}</td><td><a href="#h-{e(h.id)}">{e(h.title)}</a><br>{_code(h.id)}</td>'
                       f'<td class="num"><span class="bar" style="width:{int(h.confidence * 60)}px"></span> '
                       f'{h.confidence:.2f}</td><td class="num">{e(share_cell(h))}</td><td>{e(h.layer)}</td></tr>')
        out.append("</tbody></table>")
        g, titles, path = causal_graph(report)
        out.append('<h2 id="graph">Causal path of the leading hypothesis</h2>')
        out.append('<p class="muted">Root causes (left) lead through mechanisms to the measured symptom (right); '
                   "the leading hypothesis and its path are highlighted.</p>")
        out.append(f'<div class="graph">{svg_graph(g, titles, top.id if top else None, path)}</div>')
        out.append('<h2 id="details">Evidence and fixes</h2>')
        for h in report.hypotheses:
            cls = "hyp lead" if h.rank == 1 else "hyp"
            body = [f"<p>Confidence {h.confidence:.2f} (prior {h.prior:.2f}){e(status_text(h))}; "
                    f"{e(share_text(h))}.<br>Causal path: {e(' → '.join(h.causal_path))}</p>"]
            body += _evidence(h, report.redacted)
            if h.rank <= leading:
                body += _fixes(h)
            head = f"<h3>{h.rank}. {e(h.title)} {_code(h.id)}</h3>"
            if h.rank <= leading:
                out.append(f'<section class="{cls}" id="h-{e(h.id)}">{head}' + "\n".join(body) + "</section>")
            else:
                # the rest fold: their evidence is one click away, not four screens down
                out.append(f'<section class="{cls}" id="h-{e(h.id)}"><details><summary>{h.rank}. {e(h.title)} '
                           f'({h.confidence:.2f})</summary>' + "\n".join(body) + "</details></section>")
    else:
        out.append("<p>No root cause is supported by the evidence collected so far.</p>")
    if report.differences:
        out.append('<h2 id="differences">Differences from the baseline</h2><table><tr><th>what</th><th>target</th>'
                   "<th>baseline</th></tr>")
        out += [f"<tr><td>{e(d.what)}</td><td>{_code(d.target)}</td><td>{_code(d.baseline)}</td></tr>"
                for d in report.differences]
        out.append("</table>")
    out += _checked(report)
    out += _not_checked(report)
    out.append('<h2 id="inputs">Inputs</h2>')
    rows = []
    for i in report.inputs:
        side = " (baseline)" if i.side == "baseline" else ""
        note = i.reason or (f"first line: {i.first_line}" if i.status == "unrecognized" else "")
        warn = "".join(f"<div class=\"muted\">line {w.line}: {e(w.message)}</div>" for w in i.warnings[:3])
        rows.append(f"<tr><td>{e(i.status)}</td><td>{_code(i.path)}{side}</td><td>{e(i.format or '-')}</td>"
                    f'<td class="num">{i.facts}</td><td>{e(note)}{warn}</td></tr>')
    table = ("<table><thead><tr><th>status</th><th>input</th><th>format</th><th>facts</th><th>note</th></tr></thead>"
             "<tbody>" + "".join(rows) + "</tbody></table>")
    out.append(table if len(rows) <= FOLD else f"<details><summary>{len(rows)} inputs</summary>{table}</details>")
    if report.warnings:
        items = [f"<li>{e(w)}</li>" for w in report.warnings]
        out.append('<h2 id="warnings">Warnings</h2>')
        out += _fold(items, "{n} more warnings")
    out.append(f'<p class="muted">clusterdx {e(report.tool.version)}, report schema {e(report.schema_)}; '
               f"{'secrets redacted' if report.redacted else 'secrets NOT redacted'}.</p>")
    out.append("</main></body></html>")
    return "\n".join(out) + "\n"
