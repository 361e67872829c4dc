"""The fleet report as Markdown (a ticket or wiki page) and as one self-contained HTML page."""

from __future__ import annotations

import html
from typing import Any


def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;").replace("\n", " ")


def render_markdown(report: Any, **_: Any) -> str:
    s = report.summary
    out = [f"# Fleet diagnosis: {s.nodes} nodes", "",
           f"{s.diagnosed} diagnosed, {s.failed} failed, in {s.seconds:.1f} s with {s.jobs} worker(s).", ""]
    out += ["## Causes", "", "| cause | extent | nodes | confidence (max) | share of gap (median) |",
            "| --- | --- | --- | --- | --- |"]
    for h in report.hypotheses:
        nodes = ", ".join(h.nodes[:8]) + (f" (+{len(h.nodes) - 8})" if len(h.nodes) > 8 else "")
        out.append(f"| `{h.id}` {_md(h.title)} | {h.extent} | {h.node_count}: {_md(nodes)} | "
                   f"{h.confidence_max:.2f} | {h.impact_pct_median:.1f}% |")
    if not report.hypotheses:
        out.append("| (none supported by the evidence) | | | | |")
    for h in report.hypotheses[:5]:
        out += ["", f"### {_md(h.title)} (`{h.id}`)", ""]
        for ev in h.evidence[:5]:
            out.append(f"- {_md(ev.node)}: {_md(ev.message)}")
        for r in h.remediation:
            out.append(f"- remediation: `{r.id}` {_md(r.title)}")
    if report.outliers:
        out += ["", "## Outliers against their peers", "", "| node | metric | value | median | deviation |",
                "| --- | --- | --- | --- | --- |"]
        for o in report.outliers:
            out.append(f"| {_md(o.node)} | {_md(o.metric)} {_md(o.key)} | {o.value:g} {_md(o.unit)} | {o.median:g} | "
                       f"{o.deviation_pct:+.1f}% |")
    if report.drift:
        out += ["", "## Configuration drift", "", "| setting | majority | differing nodes |", "| --- | --- | --- |"]
        for d in report.drift:
            diff = "; ".join(f"{x.node}: {x.value}" for x in d.differing[:6])
            out.append(f"| {_md(d.what)} | {_md(d.majority_value)} ({d.majority_nodes}/{d.nodes_total}) | {_md(diff)} |")
    failed = [n for n in report.nodes if n.status not in ("ok", "partial")]
    if failed:
        out += ["", "## Nodes not diagnosed", ""]
        out += [f"- {_md(n.name)}: {n.status} {_md(n.error)}" for n in failed]
    return "\n".join(out) + "\n"


def render_html(report: Any, **_: Any) -> str:
    e = html.escape
    s = report.summary
    rows = "".join(
        f"<tr><td><code>{e(h.id)}</code><br>{e(h.title)}</td><td>{e(h.extent)}</td>"
        f"<td>{h.node_count}: {e(', '.join(h.nodes[:12]))}</td><td>{h.confidence_max:.2f}</td>"
        f"<td>{h.impact_pct_median:.1f}%</td></tr>" for h in report.hypotheses)
    outl = "".join(f"<tr><td>{e(o.node)}</td><td>{e(o.metric)} {e(o.key)}</td><td>{o.value:g} {e(o.unit)}</td>"
                   f"<td>{o.median:g}</td><td>{o.deviation_pct:+.1f}%</td></tr>" for o in report.outliers)
    drift = "".join(f"<tr><td>{e(d.what)}</td><td>{e(d.majority_value)}</td>"
                    f"<td>{e('; '.join(f'{x.node}: {x.value}' for x in d.differing[:8]))}</td></tr>"
                    for d in report.drift)
    return ("<!doctype html><html><head><meta charset='utf-8'>"
            "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            "<title>clusterdx fleet</title><style>body{font-family:sans-serif;margin:2em}"
            "td,th{padding:4px 8px;border-bottom:1px solid #ddd;vertical-align:top}</style></head><body>"
            f"<h1>Fleet diagnosis: {s.nodes} nodes</h1><p>{s.diagnosed} diagnosed, {s.failed} failed.</p>"
            "<h2>Causes</h2><table><tr><th>cause</th><th>extent</th><th>nodes</th><th>confidence</th>"
            f"<th>share of gap</th></tr>{rows}</table>"
            "<h2>Outliers</h2><table><tr><th>node</th><th>metric</th><th>value</th><th>median</th>"
            f"<th>deviation</th></tr>{outl}</table>"
            f"<h2>Drift</h2><table><tr><th>setting</th><th>majority</th><th>differing</th></tr>{drift}</table>"
            "</body></html>\n")
