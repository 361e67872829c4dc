"""The checklist as a compact terminal table, a Markdown table, or JSON."""

from __future__ import annotations

from typing import Any

import orjson

MARK = {"fail": "FAIL", "warn": "WARN", "pass": "pass", "not checked": "----", "not applicable": "n/a"}

def _unchecked(report: Any) -> list[str]:
    return list(getattr(report, "unchecked_nodes", []) or [])


def headline(report: Any) -> str:
    """The first line: how much was checked and what failed, so a node where most items could not
    be checked never reads as ready."""
    c = report.coverage
    counts: dict[str, int] = {}
    for it in report.items:
        counts[it.status] = counts.get(it.status, 0) + 1
    text = f"{c.checked} of {c.applicable} applicable items checked"
    if c.applicable and c.checked * 2 < c.applicable:
        text += f" (most could not be checked: {c.applicable - c.checked} are not known to be fine)"
    verdict = ", ".join(f"{counts[s]} {s}" for s in ("fail", "warn", "pass") if counts.get(s))
    return text + (f"; {verdict}" if verdict else "; nothing failed, nothing passed")


def _nodes(report: Any, shown: int = 3) -> str:
    names = list(report.nodes)
    if not names:
        return "this node"
    more = f", +{len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def render_text(report: Any, **_: Any) -> str:
    lines = [f"clusterdx check ({_nodes(report)}): {headline(report)}"]
    if _unchecked(report):
        lines.append(f"NOT CHECKED: {len(_unchecked(report))} nodes could not be diagnosed:")
        lines += [f"  {u}" for u in _unchecked(report)[:20]]
        if len(_unchecked(report)) > 20:
            lines.append(f"  ... and {len(_unchecked(report)) - 20} more (JSON lists them all)")
    layer = None
    for it in report.items:
        if it.layer != layer:
            layer = it.layer
            lines.append(f"\n[{layer}]")
        seed = f" [{','.join(it.seed)}]" if it.seed else ""
        star = "*" if it.mandatory else " "
        counts = ""
        if it.counts:
            counts = "  (" + ", ".join(f"{k} {v}" for k, v in it.counts.items() if v) + ")"
            if it.failing_nodes:
                counts += f" failing: {', '.join(it.failing_nodes[:8])}"
        lines.append(f" {MARK[it.status]:<5}{star}{it.cause:<46}{seed:<8} {it.reason}{counts}")
    c = report.coverage
    lines.append(f"\ncoverage: {c.checked} of {c.applicable} applicable items checked"
                 + (f"; mandatory {c.mandatory_checked}/{c.mandatory}" if c.mandatory else ""))
    lines.append(f"exit code {report.exit_code} (0 ok, 6 a fail, 7 warn/not checked with --strict)")
    return "\n".join(lines) + "\n"


def render_json(report: Any, **_: Any) -> str:
    return orjson.dumps(report.to_json_dict(), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n"


def render_markdown(report: Any, **_: Any) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    out = [f"# Readiness checklist ({cell(_nodes(report))})", "", cell(headline(report)), ""]
    if _unchecked(report):
        out += [f"**Not checked:** {len(_unchecked(report))} nodes could not be diagnosed:", ""]
        out += [f"- {cell(u)}" for u in _unchecked(report)] + [""]
    out += ["| status | root cause | layer | seed | reason |", "| --- | --- | --- | --- | --- |"]
    for it in report.items:
        reason = it.reason + (f" (failing: {', '.join(it.failing_nodes)})" if it.failing_nodes else "")
        out.append(f"| {MARK[it.status]} | `{it.cause}`{' (mandatory)' if it.mandatory else ''} | {it.layer} | "
                   f"{', '.join(it.seed)} | {cell(reason)} |")
    c = report.coverage
    out += ["", f"Coverage: {c.checked} of {c.applicable} applicable items checked."]
    return "\n".join(out) + "\n"


def render_html(report: Any, **_: Any) -> str:
    import html

    rows = []
    for it in report.items:
        rows.append(f"<tr class='{it.status.replace(' ', '-')}'><td>{html.escape(MARK[it.status])}</td>"
                    f"<td><code>{html.escape(it.cause)}</code></td><td>{html.escape(it.layer)}</td>"
                    f"<td>{html.escape(', '.join(it.seed))}</td><td>{html.escape(it.reason)}"
                    + (f"<br><small>failing: {html.escape(', '.join(it.failing_nodes))}</small>"
                       if getattr(it, "failing_nodes", None) else "") + "</td></tr>")
    unchecked = "".join(f"<li>{html.escape(u)}</li>" for u in _unchecked(report))
    c = report.coverage
    return ("<!doctype html><html><head><meta charset='utf-8'><title>clusterdx check</title><style>"
            "body{font-family:sans-serif;margin:2em}td,th{padding:4px 8px;border-bottom:1px solid #ddd}"
            ".fail{background:#fdd}.warn{background:#ffe9a8}.pass{background:#dfd}</style></head><body>"
            f"<h1>Readiness checklist</h1><p>{html.escape(_nodes(report))}</p>"
            f"<p><strong>{html.escape(headline(report))}</strong></p>"
            + (f"<p><strong>Not checked:</strong> {len(_unchecked(report))} nodes could not be diagnosed</p>"
               f"<ul>{unchecked}</ul>" if unchecked else "") + "<table>"
            "<tr><th>status</th><th>root cause</th><th>layer</th><th>seed</th><th>reason</th></tr>"
            + "".join(rows) + f"</table><p>Coverage: {c.checked} of {c.applicable} applicable items checked.</p>"
            "</body></html>\n")
