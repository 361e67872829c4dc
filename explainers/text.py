"""Terminal output (rich): the answer first, then why, what to run next and what was not
checked, and the answer again on the last lines, where the terminal leaves the reader.

The default fits one screen for a single node; ``verbose`` adds every remediation step, the
facts behind each piece of evidence and the score terms, and ``show_all`` lists every rule
that was not evaluated. The count of rules not evaluated is always printed: not checked is
never shown as fine.
"""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console
from rich.markup import escape as _markup_escape
from rich.padding import Padding
from rich.text import Text

from clusterdx.explainers.common import (
    first_fix, input_counts, safe, not_evaluated_groups, passed_by_layer, share_text, short_path, shorten_paths,
)

STATUS_STYLE = {"parsed": "green", "partial": "yellow", "unrecognized": "magenta", "error": "red", "skipped": "dim"}
#: causes in the opening summary, and how many of them with their evidence and verification
SUMMARY_CAUSES = 3
SUMMARY_FULL = 2
#: a cause after the first is shown in full from this confidence on
FULL_CONFIDENCE = 0.5
#: characters of the leading evidence quoted in the summary (the rest: --verbose, JSON)
WHY_CHARS = 120
#: characters of the leading fix's trade-off and rollback in the summary
AFTER_FIX_CHARS = 100
#: longest verification command shown in the summary
VERIFY_CHARS = 110
#: evidence lines per cause by default
EVIDENCE_LINES = 2
#: next probes by default
PROBES = 2
#: probe groups of the not-evaluated rules by default
GROUPS = 2
#: checks that passed named by default up to this many; beyond it they are counted by layer
HEALTHY_NAMED = 6
#: inputs listed one per line by default (unrecognized and failed ones are always listed)
INPUTS = 6
#: the default report fits one screen: past this many lines it is drawn again more tightly
SCREEN_LINES = 60


def escape(text: str) -> str:
    """Markup escaped, and control characters (ESC sequences from a file name or a log line)
    shown as ``\\xNN`` so they never reach the terminal."""
    return _markup_escape(safe(text))


def _label(word: str) -> str:
    """A bracketed label (``[strong]``, ``[lscpu]``) as rich markup that prints its brackets."""
    return escape(f"[{word}]")


def _root(step: Any) -> str:
    return " [bold](as root)[/]" if getattr(step, "needs_root", False) else ""


class _Out:
    """Lines with a hanging indent: a wrapped line continues under its own text, not at column 0."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def __call__(self, markup: str = "", indent: int = 0, hang: int = 0) -> None:
        if not markup:
            self.console.print()
            return
        text = Text.from_markup(markup)
        if hang:
            # first line at ``indent``, continuation lines at ``indent + hang``
            lines = text.wrap(self.console, max(20, self.console.width - indent - hang))
            for k, line in enumerate(lines):
                self.console.print(Padding(line, (0, 0, 0, indent if k == 0 else indent + hang), expand=False))
            return
        self.console.print(Padding(text, (0, 0, 0, indent), expand=False))


def _clip(text: str, chars: int = 0) -> str:
    chars = chars or AFTER_FIX_CHARS
    return text if len(text) <= chars else text[:chars].rsplit(" ", 1)[0] + " … (-v)"


def _cause_line(h: Any) -> str:
    status = "supported" if h.status == "supported" else "candidate, unconfirmed"
    return f"[bold]{h.rank}. {escape(h.title)}[/] ({status}, {h.confidence:.2f}; {escape(share_text(h))})"


def _summary(p: _Out, report: Any, causes: list[Any], tight: bool = False) -> None:
    p("[bold]Answer[/]")
    if not causes:
        p("No root cause is supported by the evidence collected; what was checked and found fine is "
          "listed below.", 2, 2)
    elif causes[0].status == "candidate":
        p("No cause is confirmed; these candidates fit the evidence only weakly.", 2, 2)
    for k, h in enumerate(causes):
        p(_cause_line(h), 2, 3)
        # the first cause in full; the next only when it is likely too (a weak runner-up, or an
        # unconfirmed candidate, by name and score: its evidence and fix are one -v away)
        full = k == 0 or (k < SUMMARY_FULL and h.status == "supported" and h.confidence >= FULL_CONFIDENCE)
        if h.evidence and full:
            ev = h.evidence[0]
            user = " (reported by the user)" if getattr(ev, "reported", False) else ""
            more = f" (+{len(h.evidence) - 1} more)" if len(h.evidence) > 1 else ""
            msg = shorten_paths(ev.message, report.target)
            if len(msg) > WHY_CHARS:
                msg = msg[:WHY_CHARS].rsplit(" ", 1)[0] + " … (-v shows all)"
            p(f"why:    {_label(ev.strength)} {escape(msg)}{user}[dim]{more}[/]", 5, 8)
        r, st = first_fix(h)
        if r is not None and full:
            cmd = f": $ {escape(st.command)}{_root(st)}" if st.command else ""
            p(f"fix:    {escape(r.title)}{cmd}", 5, 8)
        if r is not None and k == 0 and h.status == "supported":
            # what the fix costs and how to take it back, before anyone runs it (full text: -v, JSON);
            # on a crowded screen a pointer to them, so the reader still knows there is a cost
            if tight and (r.tradeoff or r.rollback):
                p("cost, undo: -v", 5, 8)
            else:
                if r.tradeoff:
                    p(f"cost:   {escape(_clip(r.tradeoff))}", 5, 8)
                if r.rollback:
                    p(f"undo:   {escape(_clip(r.rollback))}", 5, 8)
        if h.verification and full:
            # the step that states this node's own expected value, when the tool knows one
            v = next((v for v in h.verification if getattr(v, "values", None)), h.verification[0])
            # a long command goes to --verbose; its check and expected value stay here
            cmd = f" $ {escape(v.command)}" if v.command and len(v.command) <= VERIFY_CHARS \
                else f" {escape(v.check)}" + (" [dim](-v: command)[/]" if v.command else "")
            p(f"verify:{cmd}; expect {escape(v.expect)}", 5, 8)
    g = report.gap
    if g is not None:
        bar = "meets" if g.meets_bar else "misses"
        said = " as the user reports it" if g.reported else ""
        p(f"Gap:    {g.gap_pct:.1f}% ({escape(g.metric)} {g.measured:g}{said} vs {g.basis} {g.reference:g}; {bar} the "
          f"{g.bar:.0%} bar); explained {g.explained_pct:.1f}%, unexplained {g.unexplained_pct:.1f}%", 2, 8)
    else:
        p("Gap:    not measured (needs a baseline run or --reference)", 2, 8)
    unread = [i for i in report.inputs if i.status in ("unrecognized", "error")]
    read = input_counts(report) + ("" if unread else "; nothing unrecognized")
    p(f"Read:   {escape(read)}", 2, 8)
    groups, apart = not_evaluated_groups(report)
    total = len(report.not_evaluated)
    if total:
        p(f"Not checked: {total} rules ({total - len(apart)} could apply here, {len(apart)} cannot); see below",
          2, 8)
    else:
        p("Not checked: none; every rule had its facts", 2, 8)
    if report.next_probes:
        pr = report.next_probes[0]
        p(f"Next probe: $ {escape(pr.command)}{' (as root)' if pr.needs_root else ''}", 2, 8)


def _why(p: _Out, h: Any, verbose: bool, targets: Any) -> None:
    p(f"[bold]{h.rank}. {escape(h.title)}[/]: why [dim]({escape(h.id)})[/]", 0, 3)
    if verbose:
        p(f"causal path: {escape(' -> '.join(h.causal_path))}", 3, 2)
    shown = h.evidence if verbose else h.evidence[:EVIDENCE_LINES]
    for ev in shown:
        user = " [italic](reported by the user)[/]" if getattr(ev, "reported", False) else ""
        p(f"+ {_label(ev.strength)} {escape(shorten_paths(ev.message, targets))}{user}", 3, 2)
        if verbose:
            p(f"[dim]rule {escape(ev.rule)} -> {escape(ev.node)}[/]", 5)
            for f in ev.facts[:10]:
                p(f"· {escape(f.source)}  {escape(f.summary)}", 5, 2)
    if len(h.evidence) > len(shown):
        p(f"[dim]+ {len(h.evidence) - len(shown)} more supporting (--verbose)[/]", 3)
    for ev in h.refuting_evidence[: (None if verbose else 1)]:
        p(f"- {_label(ev.strength)} {escape(shorten_paths(ev.message, targets))} [dim](counts against)[/]", 3, 2)
    if not verbose:
        return
    for r in h.remediation:
        p(f"[underline]Fix[/]: {escape(r.title)} [dim](risk {r.risk}, disruption {r.disruption})[/]", 3, 2)
        for i, st in enumerate(r.steps, 1):
            p(f"{i}. {escape(st.text)}", 5, 3)
            if st.command:
                p(f"$ {escape(st.command)}{_root(st)}", 8, 2)
            for alt in getattr(st, "alternatives", []) or []:
                p(f"or: $ {escape(alt.command)}{_root(alt)}  [dim]{escape(alt.text)}[/]", 8, 4)
        if r.tradeoff:
            p(f"trade-off: {escape(r.tradeoff)}", 5, 2)
        if r.rollback:
            p(f"rollback: {escape(r.rollback)}", 5, 2)
    for v in h.verification:
        line = f"✓ {escape(v.check)}" + (f": $ {escape(v.command)}" if v.command else "")
        p(line, 3, 2)
        p(f"expect: {escape(v.expect)}", 5, 2)
    p("[underline]Score[/]", 3)
    for t in h.score:
        lowered = (f" lowered from {t.rule_strength}: reported by the user"
                   if getattr(t, "reported", False) and getattr(t, "rule_strength", "") else "")
        p(f"{t.delta_logit:+.2f}  {escape(t.rule)} {t.effect} {escape(t.node)} ({t.strength}{lowered}, "
          f"attenuation {t.attenuation:.2f}, share {t.share:.2f})", 5, 2)


def _healthy(p: _Out, report: Any, verbose: bool) -> None:
    layers = passed_by_layer(report)
    n = sum(len(v) for v in layers.values())
    p()
    if not n:
        p("[bold]Checked and found fine[/]: nothing; no rule had the facts it needs and found nothing wrong.")
        return
    p(f"[bold]Checked and found fine[/] ({n} rules had their facts and found nothing wrong)")
    if not verbose and n > HEALTHY_NAMED:
        # by layer, counted; -v names every check (one screen is the budget of the default)
        p("by layer: " + ", ".join(f"{escape(layer)} {len(rules)}" for layer, rules in layers.items())
          + " [dim](-v names each check)[/]", 2, 4)
        return
    for layer, rules in layers.items():
        # a quiet detector is named by the problem it looks for: say that problem was not seen
        titles = [r.title or r.rule if r.outcome == "refuted" else f"not seen: {r.title or r.rule}" for r in rules]
        p(f"{escape(layer)}: {escape('; '.join(titles))}", 2, 4)


def _not_evaluated(p: _Out, report: Any, show_all: bool, listed: dict[str, int] | None = None) -> None:
    total = len(report.not_evaluated)
    if not total:
        return
    groups, apart = not_evaluated_groups(report)
    p()
    p(f"[bold]Not evaluated[/]: {total} rules lacked the facts they need (not checked, not fine)")
    shown = groups if show_all else groups[:GROUPS]
    for g in shown:
        what = f"$ {escape(g.command)}" + (" (as root)" if g.needs_root else "") if g.command \
            else f"no probe collects {escape(g.missing)}; attach it"
        if g.command and not show_all and listed and g.command in listed:
            what = f"next probe {listed[g.command]} above"  # the command is printed there
        p(f"{len(g.rules):>3} rules: {what}", 2, 11)
        if show_all:
            p(escape(", ".join(g.rules)), 13, 0)
    rest = groups[len(shown):]
    if rest:
        p(f"+ {sum(len(g.rules) for g in rest)} rules in {len(rest)} more groups", 2, 2)
    if apart:
        reasons = sorted({ne.not_applicable for ne in apart})
        p(f"{len(apart)} more cannot apply to this node ({escape('; '.join(reasons[:2]))}"
          f"{'; ...' if len(reasons) > 2 else ''})", 2, 2)
        if show_all:
            for ne in apart:
                p(f"{escape(ne.rule)}: {escape(ne.not_applicable)}", 4, 2)
    if not show_all:
        p("[dim]--all lists every rule and what it needs[/]", 2)


def _inputs(p: _Out, report: Any, verbose: bool) -> None:
    p()
    p(f"[bold]Inputs[/]: {escape(input_counts(report))}")
    # the Read line above names every format; by default only the inputs that need a look are listed
    listed = report.inputs if verbose else \
        [i for i in report.inputs if i.status in ("unrecognized", "error", "partial") or i.warnings][:INPUTS]
    for i in listed:
        style = STATUS_STYLE.get(i.status, "")
        fmt = i.format or "-"
        extra = f"  {escape(i.reason)}" if i.reason else ""
        side = " " + _label("baseline") if i.side == "baseline" else ""
        p(f"[{style}]{i.status}[/] {escape(short_path(i.path, report.target))}{side}  {_label(fmt)} "
          f"{i.facts} facts{extra}", 2, 4)
        for w in i.warnings[: (20 if verbose else 2)]:
            p(f"line {w.line}: {escape(w.message)}", 6, 2)
    if len(listed) < len(report.inputs):
        p(f"[dim]{len(report.inputs) - len(listed)} {'more ' if listed else ''}parsed without warnings "
          "(--verbose lists them)[/]", 2)


def _closing(p: _Out, report: Any, causes: list[Any]) -> None:
    p()
    if not causes:
        n = len(report.not_evaluated)
        p(f"[bold]In short[/]: no cause found in what was read; {n} rules could not be checked. "
          + (f"Run next: $ {escape(report.next_probes[0].command)}" if report.next_probes else ""), 0, 2)
        return
    h = causes[0]
    r, st = first_fix(h)
    fix = f"; fix: $ {escape(st.command)}{_root(st)}" if st is not None and st.command else \
        (f"; fix: {escape(r.title)}" if r is not None else "")
    lead = "leading candidate, unconfirmed: " if h.status == "candidate" else ""
    p(f"[bold]In short[/]: {lead}{escape(h.title)} (confidence {h.confidence:.2f}){fix}", 0, 2)
    if len(causes) > 1:
        more = f"; +{len(causes) - 2} more above" if len(causes) > 2 else ""
        p(f"also: {escape(causes[1].title)} ({causes[1].confidence:.2f}){more}", 2, 2)


def render(report: Any, *, width: int | None = None, color: bool = False, verbose: bool = False,
           show_all: bool = False, **_: Any) -> str:
    text = _render(report, width=width, color=color, verbose=verbose, show_all=show_all, tight=False)
    if not (verbose or show_all) and text.count("\n") >= SCREEN_LINES:
        text = _render(report, width=width, color=color, verbose=verbose, show_all=show_all, tight=True)
    return text


def _render(report: Any, *, width: int | None, color: bool, verbose: bool, show_all: bool, tight: bool) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=color, color_system="standard" if color else None,
                      highlight=False, soft_wrap=False)
    p = _Out(console)
    show_all = show_all or verbose
    p(f"[bold]clusterdx {escape(report.tool.version)}[/]: {escape(', '.join(report.target))}"
      + (f"  (baseline: {escape(', '.join(report.baseline))})" if report.baseline else ""), 0, 2)
    supported = [h for h in report.hypotheses if h.status == "supported"]
    # no supported cause: the leading candidates are the answer, marked unconfirmed
    causes = (supported or report.hypotheses)[:SUMMARY_CAUSES]
    _summary(p, report, causes, tight)
    detail = report.hypotheses if verbose else []
    for h in detail:
        p()
        _why(p, h, verbose, report.target)
    candidates = [h for h in report.hypotheses if h not in detail and h not in causes]
    if candidates:
        p()
        shown = candidates if verbose else candidates[:3]
        more = f"; +{len(candidates) - len(shown)} more (-v)" if len(candidates) > len(shown) else ""
        p("[bold]Also considered[/] (unconfirmed): "
          + "; ".join(f"{escape(h.title)} ({h.confidence:.2f})" for h in shown) + more, 0, 2)
    if not supported:
        _healthy(p, report, verbose)
    if report.differences:
        p()
        p("[bold]Differences from the baseline[/]")
        for d in report.differences[: (40 if verbose else 8)]:
            p(f"{escape(d.what)}: target {escape(d.target)} / baseline {escape(d.baseline)}", 2, 2)
    if report.next_probes:
        p()
        p("[bold]Next probes[/] (what would most change this ranking, per unit of cost)")
        for i, pr in enumerate(report.next_probes[: (None if verbose else PROBES)], 1):
            # the first probe's command is in the answer already: not printed twice
            cmd = "the next probe above" if i == 1 and not verbose else f"$ {escape(pr.command)}"
            why = ""
            if len(pr.separates) == 2:
                why = f"separates {pr.separates[0]} from {pr.separates[1]}"
            elif pr.bears_on:
                why = f"bears on {', '.join(pr.bears_on)}"
            root = ", as root" if pr.needs_root else ""
            why = f"; {escape(why)}" if why else ""
            p(f"{i}. {cmd}  [dim](~{pr.duration_s:g} s{root}{why})[/]", 2, 5)
    listed = {pr.command: i for i, pr in enumerate(report.next_probes[: (None if verbose else PROBES)], 1)}
    _not_evaluated(p, report, show_all, listed)
    _inputs(p, report, verbose)
    for w in report.warnings[: (None if verbose else 5)]:
        p(f"[yellow]warning:[/] {escape(w)}", 0, 2)
    if len(report.warnings) > 5 and not verbose:
        p(f"[dim]{len(report.warnings) - 5} more warnings (--verbose)[/]")
    _closing(p, report, causes)
    # a wrapped line keeps the space it broke at; a reader (and a diff) should not see it
    return "".join(line.rstrip() + "\n" for line in buf.getvalue().splitlines())
