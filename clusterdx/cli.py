"""The command line: wiring only. Heavy modules are imported inside commands so --help stays fast."""

from __future__ import annotations

import enum
import os
import sys
from pathlib import Path
from typing import List, Optional

# Plain click help: typer's rich help pulls in markdown rendering and triples start-up time.
# The text report still uses rich, imported only when a report is rendered.
os.environ.setdefault("TYPER_USE_RICH", "0")

import typer  # noqa: E402

app = typer.Typer(
    name="clusterdx",
    help="Explain why a GPU training cluster is slower than its reference, and what to change.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    rich_markup_mode=None,
    add_completion=False,
)
kb_app = typer.Typer(help="Work on the knowledge base: lint, test, list.", no_args_is_help=True,
                     rich_markup_mode=None)
app.add_typer(kb_app, name="kb")


class ExitStatus(enum.IntEnum):
    OK = 0
    INTERNAL_ERROR = 1
    USAGE = 2
    KB_INVALID = 3
    FAIL_ON = 4
    TESTS_FAILED = 5


class OutputFormat(str, enum.Enum):
    text = "text"
    json = "json"


class ReportFormat(str, enum.Enum):
    """Formats of a diagnosis report (``diagnose --format``); see clusterdx.explainers.FORMATS."""

    text = "text"
    json = "json"
    markdown = "markdown"
    html = "html"


def _emit(text: str, output: Optional[Path]) -> None:
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")


#: --timeout of diagnose, triage and check (seconds; 0: no limit); see clusterdx.facts.deadline
TIMEOUT_HELP = ("Seconds the whole run may take (0: no limit); past it the report is partial and says "
                "what was not finished.")


def _finish(outcome, output: Optional[Path]) -> None:
    """Print a supervised run's outcome (see clusterdx.engine.backstop) and exit with its code."""
    if outcome.stderr:
        sys.stderr.write(outcome.stderr)
    if outcome.text:
        _emit(outcome.text, output)
    if outcome.exit_code:
        raise typer.Exit(outcome.exit_code)


def _fail(message: str, status: ExitStatus) -> "typer.Exit":
    typer.echo(f"clusterdx: {message}", err=True)
    return typer.Exit(int(status))


def _site(config: Optional[Path]):
    from clusterdx.engine.site import SiteConfigError, load_site

    try:
        return load_site(config)
    except SiteConfigError as exc:
        raise _fail(str(exc), ExitStatus.USAGE) from None


def checkout_dirs(start: Optional[Path] = None) -> Optional[List[Path]]:
    """rules/ and kb/ of the clusterdx checkout the command runs in, if any."""
    here = (start or Path.cwd()).resolve()
    for folder in [here, *here.parents]:
        pyproject = folder / "pyproject.toml"
        if (folder / "rules").is_dir() and (folder / "kb").is_dir() and pyproject.is_file():
            if 'name = "clusterdx"' in pyproject.read_text(errors="replace"):
                return [folder / "rules", folder / "kb"]
    return None


def kb_dirs(explicit: Optional[List[Path]], site, prefer_checkout: bool) -> Optional[List[Path]]:
    """Folders to load, later ones on top of earlier ones: the shipped KB, the checkout's rules/
    and kb/ (for kb commands run inside one), folders given as arguments, the site's folders."""
    from clusterdx.engine.kb import shipped_dirs

    layers: List[Path] = list(shipped_dirs())
    if prefer_checkout:
        layers += checkout_dirs() or []
    layers += list(explicit or [])
    layers += site.extra_kb_dirs() if site is not None else []
    out: List[Path] = []
    for p in layers:
        if p.resolve() not in [q.resolve() for q in out]:
            out.append(p)
    return out


def _load_kb(dirs: Optional[List[Path]] = None):
    from clusterdx.engine.kb import load_kb
    from clusterdx.engine.problems import KBLoadError

    try:
        return load_kb(dirs or None)
    except KBLoadError as exc:
        raise _fail(str(exc), ExitStatus.KB_INVALID) from None


@app.command()
def diagnose(
    paths: List[Path] = typer.Argument(None, help="Files, folders or archives of one node (none: this machine)."),
    baseline: Optional[List[Path]] = typer.Option(None, "--baseline", "-b",
                                                  help="A known-good bundle of the same job to compare with."),
    fmt: ReportFormat = typer.Option(ReportFormat.text, "--format", "-f", help="Output format."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the report to this file."),
    node: Optional[str] = typer.Option(None, "--node", help="Name of the node the inputs come from."),
    scope: Optional[str] = typer.Option(None, "--scope", help="host, container, vm-guest or hypervisor."),
    no_redact: bool = typer.Option(False, "--no-redact", help="Keep secret-looking values in the output."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show every score term and warning."),
    fail_on: Optional[float] = typer.Option(None, "--fail-on", min=0.0, max=1.0,
                                            help="Exit 4 when a hypothesis reaches this confidence."),
    config: Optional[Path] = typer.Option(None, "--config", help="Site configuration file."),
    reference: Optional[str] = typer.Option(None, "--reference",
                                            help="Reference system id (e.g. dgx-h100-8x400g) or a YAML file."),
    interactive: bool = typer.Option(False, "--interactive", "-i",
                                     help="Guided session: propose probes and questions, re-rank after each answer."),
    resume: Optional[Path] = typer.Option(None, "--resume", help="Continue an interactive session saved with 's'."),
    timeout: float = typer.Option(300.0, "--timeout", min=0.0, help=TIMEOUT_HELP + " Not used with --interactive."),
) -> None:
    """Diagnose one node (or a pair, with --baseline) and print ranked root causes."""
    from clusterdx.engine.backstop import Outcome, fallback_report, supervised
    from clusterdx.engine.diagnose import collect_live, collect_paths, diagnose as run
    from clusterdx.explainers import renderer
    from clusterdx.facts.deadline import Deadline

    redact = not no_redact
    if (interactive or resume is not None) and not sys.stdin.isatty():
        raise _fail("--interactive needs a terminal on stdin; for scripts run diagnose without it "
                    "(add --format json or markdown)", ExitStatus.USAGE)
    for p in list(paths or []) + list(baseline or []) + ([resume] if resume is not None else []):
        if not p.exists():
            raise _fail(f"no such file or folder: {p}", ExitStatus.USAGE)
    site = _site(config)
    kb = _load_kb(kb_dirs(None, site, prefer_checkout=False))
    if interactive or resume is not None:
        from clusterdx.interactive import Session, SessionError, run_session

        try:
            session = Session.load(resume) if resume is not None else Session(
                paths=[str(p) for p in paths or []], baseline=[str(p) for p in baseline or []], node=node,
                scope=scope, redact=redact, reference=reference)
        except SessionError as exc:
            raise _fail(str(exc), ExitStatus.USAGE) from None
        raise typer.Exit(run_session(session, kb=kb, site=site))
    from clusterdx.facts.reference import ReferenceError

    deadline = Deadline(timeout)
    options = {"verbose": verbose}
    if fmt == ReportFormat.text and output is None:
        options["color"] = sys.stdout.isatty()

    def work() -> Outcome:
        target = (collect_paths(paths, node=node, scope=scope, redact=redact, deadline=deadline) if paths
                  else collect_live(redact=redact, deadline=deadline))
        base = collect_paths(baseline, redact=redact, deadline=deadline) if baseline else None
        try:
            report = run(target, base, kb=kb, redact=redact, site=site, reference=reference, deadline=deadline)
        except ReferenceError as exc:
            raise _fail(str(exc), ExitStatus.USAGE) from None
        failed = fail_on is not None and any(h.confidence >= fail_on for h in report.hypotheses)
        return Outcome(renderer(fmt.value)(report, **options), int(ExitStatus.FAIL_ON) if failed else 0)

    def stopped(why: str) -> Outcome:
        report = fallback_report(kb, [str(p) for p in paths or []], [str(p) for p in baseline or []], deadline,
                                 why, redact)
        return Outcome(renderer(fmt.value)(report, **options))

    _finish(supervised(work, stopped, deadline), output)


@app.command()
def formats(fmt: OutputFormat = typer.Option(OutputFormat.text, "--format", "-f")) -> None:
    """List every supported input format, the command that produces it and the facts it yields."""
    import orjson

    from clusterdx.facts.formats import all_formats

    rows = [{"name": f.name, "command": f.command, "facts": list(f.facts), "description": f.description}
            for f in all_formats().values()]
    if fmt == OutputFormat.json:
        _emit(orjson.dumps(rows, option=orjson.OPT_INDENT_2).decode() + "\n", None)
        return
    for r in rows:
        typer.echo(f"{r['name']:<22} $ {r['command']}")
        typer.echo(f"{'':<22}   facts: {', '.join(r['facts'])}")


@app.command()
def explain(item: str = typer.Argument(..., help="A root cause, rule, remediation or probe id.")) -> None:
    """Print a root cause, rule, remediation or probe from the knowledge base in full."""
    import yaml

    from clusterdx.engine.problems import did_you_mean

    kb = _load_kb()
    for table in (kb.nodes, kb.rules, kb.remediations, kb.probes):
        if item in table:
            data = table[item].model_dump(mode="json", by_alias=True, exclude_defaults=True)
            typer.echo(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100))
            return
    known = list(kb.nodes) + list(kb.rules) + list(kb.remediations) + list(kb.probes)
    raise _fail(f"nothing named {item!r} in the knowledge base; {did_you_mean(item, known)}".rstrip("; "),
                ExitStatus.USAGE)


@app.command()
def schema(which: str = typer.Argument("report", help="report (diagnose) or fleet")) -> None:
    """Print the JSON Schema of a report (diagnose: report; clusterdx fleet: fleet), generated from its models."""
    import orjson

    if which == "report":
        from clusterdx.engine.report import Report as model
    elif which == "fleet":
        from clusterdx.engine.fleet_report import FleetReport as model  # type: ignore[assignment]
    else:
        raise _fail(f"unknown schema {which!r}; choose report or fleet", ExitStatus.USAGE)
    _emit(orjson.dumps(model.model_json_schema(by_alias=True), option=orjson.OPT_INDENT_2).decode() + "\n", None)


def _register_commands() -> None:
    import importlib

    from clusterdx.commands import COMMAND_MODULES

    for name in COMMAND_MODULES:
        importlib.import_module(f"clusterdx.commands.{name}")


def main() -> None:
    _register_commands()
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
