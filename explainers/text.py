"""Terminal output (rich): the ranking first, then evidence, fixes and what could not be checked."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console
from rich.markup import escape as _markup_escape

from clusterdx.facts.base import printable


def escape(text: str) -> str:
    """Markup escaped, and control characters (ESC sequences from a file name or a log line)
    shown as ``\\xNN`` so they never reach the terminal."""
    return _markup_escape(printable(str(text)))
from rich.table import Table

from clusterdx.explainers.common import share_cell, share_header, share_text, status_text

STATUS_STYLE = {"parsed": "green", "partial": "yellow", "unrecognized": "magenta", "error": "red", "skipped": "dim"}


def _label(word: str) -> str:
    """A bracketed label (``[strong]``, ``[lscpu]``) as rich markup that prints its brackets."""
    return escape(f"[{word}]")


def _pct(x: float) -> str:
    return f"{x:.1f}%"


def render(report: Any, *, width: int | None = None, color: bool = False, verbose: bool = False, **_: Any) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=color, color_system="standard" if color else None,
                      highlight=False, soft_wrap=False)
    p = console.print
    p(f"[bold]clusterdx {escape(report.tool.version)}[/] diagnosis of {escape(', '.join(report.target))}"
      + (f"  (baseline: {escape(', '.join(report.baseline))})" if report.baseline else ""))
    if report.gap is not None:
        g = report.gap
        bar = "meets" if g.meets_bar else "misses"
        p(f"Measured gap: {g.gap_pct:.1f}% ({escape(g.metric)} {g.measured:g} vs {g.basis} {g.reference:g}; "
          f"ratio {g.ratio:.3f}, {bar} the {g.bar:.0%} bar). Explained by the hypotheses below: "
          f"{g.explained_pct:.1f}%, unexplained: {g.unexplained_pct:.1f}%.")
    p()
    if not report.hypotheses:
        p("[bold]No root cause is supported by the evidence collected.[/] "
          "See 'Not evaluated' below for what could not be checked.")
    else:
        table = Table(title="Ranked hypotheses", show_lines=False, expand=False)
        table.add_column("#", justify="right")
        table.add_column("root cause")
        table.add_column("confidence", justify="right")
        table.add_column(share_header(report), justify="right")
        table.add_column("layer")
        for h in report.hypotheses:
            name = escape(h.id) + (" (candidate)" if h.status == "candidate" else "")
            table.add_row(str(h.rank), name, f"{h.confidence:.2f}", share_cell(h), escape(h.layer))
        p(table)
    for h in report.hypotheses:
        p()
        p(f"[bold]{h.rank}. {escape(h.title)}[/] [dim]({escape(h.id)})[/]{escape(status_text(h))}")
        p(f"   confidence {h.confidence:.2f} (prior {h.prior:.2f}), {share_text(h)}")
        p(f"   causal path: {escape(' -> '.join(h.causal_path))}")
        p("   [underline]Evidence[/]")
        for ev in h.evidence:
            p(f"   + {_label(ev.strength)} {escape(ev.message)}"
              + (" [italic](reported by the user)[/]" if getattr(ev, "reported", False) else ""))
            p(f"     rule {escape(ev.rule)} -> {escape(ev.node)}")
            for f in ev.facts[: (10 if verbose else 3)]:
                p(f"     · {escape(f.source)}  {escape(f.summary)}")
        for ev in h.refuting_evidence:
            p(f"   - {_label(ev.strength)} {escape(ev.message)} [dim](rule {escape(ev.rule)}, counts against)[/]"
              + (" [italic](reported by the user)[/]" if getattr(ev, "reported", False) else ""))
        if h.remediation:
            p("   [underline]Remediation[/]")
            for r in h.remediation:
                p(f"   * {escape(r.title)} [dim](risk {r.risk}, disruption {r.disruption})[/]")
                for i, st in enumerate(r.steps, 1):
                    p(f"     {i}. {escape(st.text)}")
                    if st.command:
                        p(f"        $ {escape(st.command)}")
        if h.verification:
            p("   [underline]Verify the fix[/]")
            for v in h.verification:
                line = f"   ✓ {escape(v.check)}"
                if v.command:
                    line += f": $ {escape(v.command)}"
                p(line)
                p(f"     expect: {escape(v.expect)}")
        if verbose:
            p("   [underline]Score[/]")
            for t in h.score:
                lowered = (f" lowered from {t.rule_strength}: reported by the user"
                           if getattr(t, "reported", False) and getattr(t, "rule_strength", "") else "")
                p(f"     {t.delta_logit:+.2f}  {escape(t.rule)} {t.effect} {escape(t.node)} ({t.strength}{lowered}, "
                  f"attenuation {t.attenuation:.2f}, share {t.share:.2f})")
    if report.differences:
        p()
        p("[bold]Differences from the baseline[/]")
        for d in report.differences[:40]:
            p(f"   {escape(d.what)}: target {escape(d.target)!s} / baseline {escape(d.baseline)!s}")
    if report.next_probes:
        p()
        p("[bold]Best next probes[/] (what would most change this ranking, per unit of cost)")
        for i, pr in enumerate(report.next_probes, 1):
            why = ""
            if len(pr.separates) == 2:
                why = f"separates {pr.separates[0]} from {pr.separates[1]}"
            elif pr.bears_on:
                why = f"bears on {', '.join(pr.bears_on)}"
            root = ", needs root" if pr.needs_root else ""
            p(f"   {i}. $ {escape(pr.command)}  [dim]({', '.join(pr.where)}{root}; ~{pr.duration_s:g} s)[/]")
            if why:
                p(f"      {escape(why)}; evaluates {escape(', '.join(pr.unlocks[:4]))}")
    if report.not_evaluated:
        p()
        p("[bold]Not evaluated[/] (the facts these rules need were not in the inputs)")
        for ne in report.not_evaluated:
            p(f"   {escape(ne.rule)}: missing {escape(', '.join(ne.missing))}")
            for pr in ne.probes[:2]:
                p(f"      collect with: $ {escape(pr.command)}")
    p()
    p("[bold]Inputs[/]")
    for i in report.inputs:
        style = STATUS_STYLE.get(i.status, "")
        fmt = i.format or "-"
        extra = f"  {escape(i.reason)}" if i.reason else ""
        side = " " + _label("baseline") if i.side == "baseline" else ""
        p(f"   [{style}]{i.status:<12}[/] {escape(i.path)}{side}  {_label(fmt)} {i.facts} facts{extra}")
        for w in i.warnings[: (20 if verbose else 3)]:
            p(f"      line {w.line}: {escape(w.message)}")
    for w in report.warnings:
        p(f"[yellow]warning:[/] {escape(w)}")
    return buf.getvalue()
