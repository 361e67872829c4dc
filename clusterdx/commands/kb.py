"""`clusterdx kb ...`: lint, test and list the knowledge base."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from clusterdx.cli import ExitStatus, OutputFormat, _emit, _load_kb, _site, kb_app, kb_dirs

@kb_app.command("lint", short_help="Every problem in rules/ and kb/, with codes and file:line:col.")
def kb_lint(
    dirs: List[Path] = typer.Argument(None, help="Knowledge-base folders (default: the shipped one)."),
    fmt: OutputFormat = typer.Option(OutputFormat.text, "--format", "-f"),
) -> None:
    """Report every problem in rules/ and kb/ at once, with codes and file:line:col."""
    import orjson

    from clusterdx.engine.kb import load_kb
    from clusterdx.engine.lint import lint_tests

    kb = load_kb(kb_dirs(dirs, _site(None), prefer_checkout=True), strict=False)
    lint_tests(kb)
    problems = kb.problems
    if fmt == OutputFormat.json:
        _emit(orjson.dumps([p.as_dict() for p in problems], option=orjson.OPT_INDENT_2).decode() + "\n", None)
    else:
        for p in problems:
            typer.echo(str(p))
        errors = sum(1 for p in problems if p.severity == "error")
        typer.echo(f"{len(problems)} problems ({errors} errors, {len(problems) - errors} warnings) in "
                   f"{len(kb.rules)} rules, {len(kb.nodes)} nodes, {len(kb.remediations)} remediations, "
                   f"{len(kb.probes)} probes")
    if any(p.severity == "error" for p in problems):
        raise typer.Exit(int(ExitStatus.KB_INVALID))


@kb_app.command("test", short_help="Run the rule test cases and the case-library bundles.")
def kb_test(
    dirs: List[Path] = typer.Argument(None, help="Extra knowledge-base folders loaded on top (default: none)."),
    k: Optional[str] = typer.Option(None, "-k", help="Only rule cases and case bundles whose name contains this."),
    cases: bool = typer.Option(True, "--cases/--no-cases", help="Also run the case-library bundles."),
) -> None:
    """Run the rule test cases and the case-library bundles; print failures with facts and trace."""
    from clusterdx.engine.cases import case_dirs, case_spec, run_case
    from clusterdx.engine.kb import load_kb
    from clusterdx.engine.ruletest import run_rule_tests

    kb = load_kb(kb_dirs(dirs, _site(None), prefer_checkout=True), strict=False)
    if kb.errors:
        for p in kb.errors:
            typer.echo(str(p))
        raise typer.Exit(int(ExitStatus.KB_INVALID))
    outcomes = run_rule_tests(kb, select=k)
    failed = [o for o in outcomes if not o.ok]
    for o in failed:
        typer.echo(o.report())
    passed = len(outcomes) - len(failed)
    if cases:
        roots = [r / "cases" for r in kb.roots if (r / "cases").is_dir()] + \
                [Path(d) / "cases" for d in (dirs or []) if (Path(d) / "cases").is_dir()]
        seen = set()
        for root in roots:
            for case in case_dirs(root):
                if case.resolve() in seen or (k and k not in case.name):
                    continue
                seen.add(case.resolve())
                if case_spec(case).get("corpus") == "public":
                    continue  # measured as a corpus by `kb eval`, not a pass/fail test
                result = run_case(kb, case)
                if result.ok:
                    passed += 1
                else:
                    failed.append(result)
                    typer.echo(f"FAIL case {case.name}: " + "; ".join(result.problems))
    typer.echo(f"{passed} passed, {len(failed)} failed")
    if failed:
        raise typer.Exit(int(ExitStatus.TESTS_FAILED))


@kb_app.command("list")
def kb_list(fmt: OutputFormat = typer.Option(OutputFormat.text, "--format", "-f")) -> None:
    """List root causes and rules."""
    import orjson

    kb = _load_kb(kb_dirs(None, _site(None), prefer_checkout=True), cache=False)
    causes = [{"id": n.id, "layer": n.layer, "seed": n.seed, "prior": n.prior, "title": n.title}
              for n in sorted(kb.nodes.values(), key=lambda n: (n.layer or "", n.id)) if n.kind == "root_cause"]
    rules = [{"id": r.id, "status": r.status, "title": r.title, "nodes": [e.node for e in r.evidence]}
             for r in sorted(kb.rules.values(), key=lambda r: r.id)]
    if fmt == OutputFormat.json:
        _emit(orjson.dumps({"causes": causes, "rules": rules}, option=orjson.OPT_INDENT_2).decode() + "\n", None)
        return
    typer.echo("Root causes:")
    for c in causes:
        typer.echo(f"  {c['id']:<48} {c['layer'] or '':<12} {c['title']}")
    typer.echo("Rules:")
    for r in rules:
        typer.echo(f"  {r['id']:<48} {r['status']:<12} -> {', '.join(r['nodes'])}")


@kb_app.command("show")
def kb_show(
    item: str = typer.Argument(..., metavar="ID", help="A root cause, node, rule, remediation or probe id."),
    fmt: OutputFormat = typer.Option(OutputFormat.text, "--format", "-f"),
) -> None:
    """Show one knowledge-base item in full, with what points at it."""
    import orjson
    import yaml

    from clusterdx.cli import _fail
    from clusterdx.engine.problems import did_you_mean

    kb = _load_kb(kb_dirs(None, _site(None), prefer_checkout=True), cache=False)
    for kind, table in (("node", kb.nodes), ("rule", kb.rules), ("remediation", kb.remediations),
                        ("probe", kb.probes)):
        if item in table:
            data = table[item].model_dump(mode="json", by_alias=True, exclude_defaults=True)
            related: dict = {}
            if kind == "node":
                related["rules"] = sorted(r.id for r in kb.rules_for_node(item))
                related["caused_by"] = sorted(n.id for n in kb.nodes.values() if any(e.node == item for e in n.causes))
            if kind == "rule":
                related["test_file"] = str(kb.test_file(item) or "")
            out = {"kind": kind, "item": data, "related": related}
            if fmt == OutputFormat.json:
                _emit(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode() + "\n", None)
            else:
                typer.echo(f"# {kind} {item}")
                typer.echo(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100).rstrip())
                for key, val in related.items():
                    typer.echo(f"# {key}: {', '.join(val) if isinstance(val, list) else val}")
            return
    known = list(kb.nodes) + list(kb.rules) + list(kb.remediations) + list(kb.probes)
    raise _fail(f"nothing named {item!r}; {did_you_mean(item, known)}".rstrip("; "), ExitStatus.USAGE)


@kb_app.command("graph", short_help="The causal graph as DOT, Mermaid or SVG.")
def kb_graph(
    focus: Optional[str] = typer.Option(None, "--focus", help="Only the neighbourhood of this node."),
    radius: int = typer.Option(2, "--radius", min=1, max=10),
    graph_format: str = typer.Option("dot", "--format", "-f", help="dot, mermaid or svg (needs Graphviz)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o"),
) -> None:
    """The causal graph as DOT, Mermaid or SVG, optionally around one node."""
    import shutil
    import subprocess

    from clusterdx.cli import _fail
    from clusterdx.engine.problems import did_you_mean
    from clusterdx.explainers.graph import to_dot, to_mermaid

    kb = _load_kb(kb_dirs(None, _site(None), prefer_checkout=True), cache=False)
    assert kb.graph is not None
    graph = kb.graph.graph
    if focus:
        if focus not in kb.nodes:
            raise _fail(f"unknown node {focus!r}; {did_you_mean(focus, kb.nodes)}".rstrip("; "), ExitStatus.USAGE)
        graph = kb.graph.neighbourhood(focus, radius)
    titles = {n.id: n.title for n in kb.nodes.values()}
    if graph_format == "mermaid":
        _emit(to_mermaid(graph, titles, focus), output)
    elif graph_format == "dot":
        _emit(to_dot(graph, titles, focus), output)
    elif graph_format == "svg":
        dot = shutil.which("dot")
        if dot is None:
            raise _fail("SVG needs Graphviz ('dot' on PATH); use --format dot or mermaid", ExitStatus.USAGE)
        proc = subprocess.run([dot, "-Tsvg"], input=to_dot(graph, titles, focus), capture_output=True,
                              text=True, timeout=60, check=False)
        if proc.returncode != 0:
            raise _fail(f"dot failed: {proc.stderr.strip()[:200]}", ExitStatus.INTERNAL_ERROR)
        _emit(proc.stdout, output)
    else:
        raise _fail(f"unknown graph format {graph_format!r} (dot, mermaid, svg)", ExitStatus.USAGE)


@kb_app.command("new")
def kb_new(
    what: str = typer.Argument(..., help="'rule' or 'cause'."),
    name: str = typer.Argument(..., help="rule: LAYER/ID; cause: ID (or LAYER/ID)."),
    root: Optional[Path] = typer.Option(None, "--root", help="Folder holding rules/ and kb/ (default: this checkout)."),
) -> None:
    """Scaffold a rule and its test file, or a cause with its remediation."""
    from clusterdx.cli import _fail, checkout_dirs
    from clusterdx.engine.scaffold import ScaffoldError, new_cause, new_rule

    base = root
    if base is None:
        dirs = checkout_dirs()
        base = dirs[0].parent if dirs else Path.cwd()
    try:
        created = new_rule(base, name) if what == "rule" else new_cause(base, name) if what == "cause" else None
    except ScaffoldError as exc:
        raise _fail(str(exc), ExitStatus.USAGE) from None
    if created is None:
        raise _fail(f"unknown kind {what!r}: use 'rule' or 'cause'", ExitStatus.USAGE)
    for p in created:
        typer.echo(f"created {p}")


def _frac(row: dict) -> str:
    return f"{row['right']}/{row['of']}" if row["of"] else "-"


@kb_app.command("eval", short_help="Accuracy over the case library, per cause and per rule.")
def kb_eval(
    fmt: OutputFormat = typer.Option(OutputFormat.text, "--format", "-f"),
    cases: Optional[Path] = typer.Option(None, "--cases", help="A folder of case bundles (default: kb/cases)."),
) -> None:
    """Run the whole case library: top-1/top-3 accuracy per cause and overall, precision/recall per rule."""
    import orjson

    from clusterdx.engine.cases import case_dirs, evaluate_library

    kb = _load_kb(kb_dirs(None, _site(None), prefer_checkout=True), cache=False)
    dirs = case_dirs(cases) if cases else None
    result = evaluate_library(kb, dirs)
    if fmt == OutputFormat.json:
        _emit(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n", None)
        return
    s = result["summary"]
    ho = s["held_out"]
    typer.echo(f"cases: {s['cases']}, passed: {s['passed']}, top-1: {s['top1']}, top-3: {s['top3']}")
    typer.echo(f"held out (written after the rules): {ho['cases']} cases, passed {ho['passed']}, "
               f"top-1 {ho['top1']}, top-3 {ho['top3']}")
    pub = s["public"]
    if pub["all"]["cases"]:
        typer.echo("\npublic-thread corpus (first run before tuning -> now):")
        for label, key in (("frozen fifth (never tuned on)", "frozen"), ("the rest", "tuned"),
                           ("all", "all")):
            row = pub[key]
            fr, nw = row["first_run"], row["now"]
            typer.echo(f"  {label:<30} {row['cases']:>3} cases  top-1 {_frac(fr['top1'])} -> {_frac(nw['top1'])}"
                       f"  top-3 {_frac(fr['top3'])} -> {_frac(nw['top3'])}  no answer: {row['no_answer']}")
        for label, key in (("seed patterns, frozen", "frozen"), ("seed patterns, the rest", "tuned")):
            row = pub["seed_pattern"][key]
            nw = row["now"]
            typer.echo(f"  {label:<30} {row['cases']:>3} cases  top-1 {_frac(nw['top1'])}  top-3 {_frac(nw['top3'])}"
                       f"  no answer: {row['no_answer']}")
        cal = result["calibration"]
        typer.echo(f"\ncalibration on the public corpus ({cal['predictions']} hypotheses; "
                   f"expected calibration error {cal['ece']}):")
        typer.echo("  confidence     n  mean conf  fraction right")
        for b in cal["bins"]:
            lo, hi = b["bin"]
            mean = "-" if b["mean_confidence"] is None else f"{b['mean_confidence']:.2f}"
            right = "-" if b["right"] is None else f"{b['right']:.2f}"
            typer.echo(f"  [{lo:.1f}, {hi:.1f}) {b['n']:>5}  {mean:>9}  {right:>14}")
        if cal["controls"]:
            typer.echo(f"  healthy controls: {cal['controls']}, highest confidence on any: "
                       f"{cal['control_max_confidence']}")
    typer.echo("\nper root cause (cases, top-1, top-3):")
    for cause, row in result["per_cause"].items():
        typer.echo(f"  {cause:<48} {row['cases']:>3} {row['top1']:>3} {row['top3']:>3}")
    typer.echo("\nper rule (precision, recall; tp/fp/fn):")
    for rid, row in result["per_rule"].items():
        typer.echo(f"  {rid:<48} {str(row['precision']):>6} {str(row['recall']):>6}  {row['tp']}/{row['fp']}/{row['fn']}")
    for case, problems in result["failures"].items():
        typer.echo(f"FAIL {case}: {'; '.join(problems)}")
    if result["failures"]:
        raise typer.Exit(int(ExitStatus.TESTS_FAILED))
