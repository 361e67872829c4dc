"""Terminal output of a fleet report (rich): shared causes, local causes, outliers, drift, nodes."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console
from rich.markup import escape as _markup_escape

from clusterdx.explainers.common import safe



def around_difference(value: str, other: str, width: int = 100) -> str:
    """``value`` cut to ``width`` characters around where it first differs from ``other``, so a
    long kernel command line shows its differing part, not its shared start.

    >>> around_difference("a" * 150 + " iommu=pt", "a" * 150, 30)
    '…aaaaaaaaaaaaaaaaaaaa iommu=pt'
    >>> around_difference("short", "shirt")
    'short'
    """
    if len(value) <= width:
        return value
    at = next((k for k, (x, y) in enumerate(zip(value, other)) if x != y), min(len(value), len(other)))
    start = max(0, min(at - width // 3, len(value) - width + 1))
    cut = value[start:start + width - (1 if start else 0) - (1 if start + width < len(value) else 0)]
    return ("…" if start else "") + cut + ("…" if start + width < len(value) else "")

def escape(text: str) -> str:
    """Markup escaped, and control characters (ESC sequences from a file name or a log line)
    shown as ``\\xNN`` so they never reach the terminal."""
    return _markup_escape(safe(text))
from rich.table import Table

STATUS_STYLE = {"ok": "green", "partial": "yellow", "failed": "red", "crashed": "red", "timeout": "red"}
#: node names listed inline before "and N more"
MAX_NAMES = 8


def _names(nodes: list[str], limit: int = MAX_NAMES) -> str:
    shown = ", ".join(nodes[:limit])
    return shown + (f" and {len(nodes) - limit} more" if len(nodes) > limit else "")


def render(report: Any, *, width: int = 110, color: bool = False, verbose: bool = False, **_: Any) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=color, color_system="standard" if color else None,
                      highlight=False, soft_wrap=False)
    p = console.print
    s = report.summary
    p(f"[bold]clusterdx {escape(report.tool.version)}[/] fleet of {s.nodes} nodes "
      f"({s.diagnosed} diagnosed, {s.failed} not; {s.jobs} worker(s), {s.seconds:.1f} s)")
    wide = [h for h in report.hypotheses if h.extent == "cluster-wide"]
    local = [h for h in report.hypotheses if h.extent == "local"]
    p()
    p("[bold]Cluster-wide causes[/] (on most nodes: a setting or condition shared by the fleet)")
    if not wide:
        p("   none")
    for h in wide:
        p(f"   [bold]{escape(h.id)}[/]: {escape(h.title)}")
        p(f"      on {h.node_count} of {s.diagnosed} nodes ({h.share:.0%}); confidence up to {h.confidence_max:.2f}, "
          f"expected share of the gap {h.impact_pct_median:.1f}% (median)")
        for ev in h.evidence[:1]:
            p(f"      e.g. {escape(ev.node)}: {escape(ev.message)}")
        if h.remediation:
            p(f"      fix: {escape(h.remediation[0].title)} [dim]({escape(h.remediation[0].id)})[/]")
    p()
    p("[bold]Local causes[/] (on a few nodes)")
    if not local:
        p("   none")
    for h in local:
        p(f"   [bold]{escape(h.id)}[/] on {escape(_names(h.nodes))}: {escape(h.title)}")
        p(f"      confidence up to {h.confidence_max:.2f}, expected share of the gap {h.impact_pct_median:.1f}% (median)")
        for ev in h.evidence[: (3 if verbose else 1)]:
            p(f"      {escape(ev.node)}: {escape(ev.message)}")
        if h.remediation:
            p(f"      fix: {escape(h.remediation[0].title)} [dim]({escape(h.remediation[0].id)})[/]")
    p()
    p("[bold]Outliers against their peers[/] (median and MAD across nodes)")
    if not report.outliers:
        p("   none")
    else:
        table = Table(show_lines=False, expand=False)
        for col, just in (("node", "left"), ("metric", "left"), ("key", "left"), ("value", "right"),
                          ("median", "right"), ("dev.", "right"), ("z", "right"), ("peers", "right")):
            table.add_column(col, justify=just)  # type: ignore[arg-type]
        for o in report.outliers:
            table.add_row(escape(o.node), escape(o.metric), escape(o.key), f"{o.value:g} {escape(o.unit)}".strip(),
                          f"{o.median:g}", f"{o.deviation_pct:+.1f}%", f"{o.score:+.1f}", str(o.peers))
        p(table)
    p()
    p("[bold]Configuration drift[/] (nodes that differ from the majority)")
    if not report.drift:
        p("   none")
    for d in report.drift:
        groups: dict[str, list[str]] = {}
        for n in d.differing:
            groups.setdefault(n.value, []).append(n.node)
        first = next(iter(groups), "")
        p(f"   [bold]{escape(d.what)}[/]: {d.majority_nodes} of {d.nodes_total} nodes have "
          f"{escape(around_difference(d.majority_value, first))!s}")
        for value, names in groups.items():
            p(f"      {escape(_names(names))}: {escape(around_difference(value, d.majority_value))}")
    bad = [n for n in report.nodes if n.status != "ok"]
    p()
    p(f"[bold]Nodes[/] ({len(report.nodes)}; {len(bad)} with problems)")
    for n in report.nodes if verbose else bad:
        style = STATUS_STYLE.get(n.status, "")
        top = ", ".join(h.id for h in n.hypotheses[:3]) or "-"
        p(f"   [{style}]{n.status:<8}[/] {escape(n.name)}  ({len(n.inputs)} inputs, {n.facts} facts) {escape(top)}")
        if n.error:
            p(f"            {escape(n.error)}")
    if not verbose and len(bad) < len(report.nodes):
        p(f"   [dim]{len(report.nodes) - len(bad)} nodes ok (--verbose lists them)[/]")
    for w in report.warnings:
        p(f"[yellow]warning:[/] {escape(w)}")
    return buf.getvalue()
