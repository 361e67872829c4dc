"""`clusterdx kb ...`: lint, test and list the knowledge base."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from clusterdx.cli import ExitStatus, OutputFormat, _emit, _load_kb, kb_app

@kb_app.command("lint")
def kb_lint(
    dirs: List[Path] = typer.Argument(None, help="Knowledge-base folders (default: the shipped one)."),
    fmt: OutputFormat = typer.Option(OutputFormat.text, "--format", "-f"),
) -> None:
    """Report every problem in rules/ and kb/ at once, with codes and file:line:col."""
    import orjson

    from clusterdx.engine.kb import load_kb
    from clusterdx.engine.lint import lint_tests

    kb = load_kb(dirs or None, strict=False)
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


@kb_app.command("test")
def kb_test(
    dirs: List[Path] = typer.Argument(None, help="Knowledge-base folders (default: the shipped one)."),
    k: Optional[str] = typer.Option(None, "-k", help="Only cases whose name contains this."),
) -> None:
    """Run the rule test cases and print failures with the facts and the firing trace."""
    from clusterdx.engine.kb import load_kb
    from clusterdx.engine.ruletest import run_rule_tests

    kb = load_kb(dirs or None, strict=False)
    if kb.errors:
        for p in kb.errors:
            typer.echo(str(p))
        raise typer.Exit(int(ExitStatus.KB_INVALID))
    outcomes = run_rule_tests(kb, select=k)
    failed = [o for o in outcomes if not o.ok]
    for o in failed:
        typer.echo(o.report())
    typer.echo(f"{len(outcomes) - len(failed)} passed, {len(failed)} failed")
    if failed:
        raise typer.Exit(int(ExitStatus.TESTS_FAILED))


@kb_app.command("list")
def kb_list(fmt: OutputFormat = typer.Option(OutputFormat.text, "--format", "-f")) -> None:
    """List root causes and rules."""
    import orjson

    kb = _load_kb()
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
