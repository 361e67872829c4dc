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
import typer.core  # noqa: E402

# typer prints an argument's Python type beside its metavar ('PATH... <list[Path]>'); the
# metavar and the help already say what to give
typer.core.TyperArgument.display_type_rich = lambda self, ctx: ""  # type: ignore[method-assign]

#: an option's Python type, as help shows it, -> the word a user reads instead
_READABLE = {"<path>": "PATH", "<int range>": "N", "<int>": "N", "<float range>": "NUMBER", "<float>": "NUMBER",
             "<str>": "TEXT", "<list[int]>": "N", "<list[str]>": "TEXT", "<list[Path]>": "PATH"}
_option_type = typer.core.TyperOption.display_type_rich


def _readable_option_type(self, ctx):  # type: ignore[no-untyped-def]
    shown = _option_type(self, ctx)
    return _READABLE.get(str(shown), shown) if self.metavar is None else shown


typer.core.TyperOption.display_type_rich = _readable_option_type  # type: ignore[method-assign]


def _usage_name(self):  # type: ignore[no-untyped-def]
    """An argument in the usage line as POSIX usage writes it: ``BUNDLE...`` when required,
    ``[PATH]...`` when optional (typer wraps a required one in braces, ``{BUNDLE}...``)."""
    name = self.display_name_raw if self.required else f"[{self.display_name_raw}]"
    return name + ("..." if self.nargs != 1 else "")


typer.core.TyperArgument._usage_display_name = _usage_name  # type: ignore[method-assign]

#: -h as well as --help everywhere, and room for a command's whole first sentence in listings
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 110}

app = typer.Typer(
    name="clusterdx",
    help="Explain why a GPU training cluster is slower than its reference, and what to change.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    rich_markup_mode=None,
    add_completion=False,
    context_settings=CONTEXT,
)
kb_app = typer.Typer(help="Work on the knowledge base: lint, test, eval, list, show, graph, new.",
                     no_args_is_help=True, rich_markup_mode=None, context_settings=CONTEXT)
app.add_typer(kb_app, name="kb", short_help="Work on the knowledge base: lint, test, eval, list, show, graph, new.")

#: what --scope accepts (facts.base.Scope)
SCOPES = ("host", "container", "vm-guest", "hypervisor", "unknown")
#: output file extension -> report format, when -o is given without -f
EXTENSIONS = {".json": "json", ".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html",
              ".txt": "text"}


def _version(value: bool) -> None:
    if value:
        from clusterdx import __version__

        typer.echo(f"clusterdx {__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit."),
          no_cache: bool = typer.Option(False, "--no-cache",
                                        help="Read the knowledge base from source and store no compiled copy "
                                             "(same as CLUSTERDX_NO_CACHE=1).")) -> None:
    """Explain why a GPU training cluster is slower than its reference, and what to change."""
    if no_cache:
        os.environ["CLUSTERDX_NO_CACHE"] = "1"


class ExitStatus(enum.IntEnum):
    OK = 0
    INTERNAL_ERROR = 1
    USAGE = 2
    KB_INVALID = 3
    FAIL_ON = 4
    TESTS_FAILED = 5
    #: check: an item fails (6), or is warned or not checked under --strict (7)
    CHECK_FAILED = 6
    CHECK_STRICT = 7
    #: fleet: a node could not be diagnosed (failed, crashed or timed out)
    NODES_FAILED = 8


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
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise _fail(f"cannot write {output}: {exc.strerror or exc}", ExitStatus.USAGE) from None
    typer.echo(f"clusterdx: wrote {output}", err=True)


def check_output(output: Optional[Path]) -> None:
    """Refuse an output path that cannot be written before any work is done."""
    if output is None:
        return
    if output.is_dir():
        raise _fail(f"{output} is a folder; give a file name (-o {output / 'report.md'})", ExitStatus.USAGE)
    parent = output.parent if str(output.parent) else Path(".")
    if not parent.is_dir():
        raise _fail(f"cannot write {output}: no folder {parent}", ExitStatus.USAGE)
    if not os.access(parent, os.W_OK):
        raise _fail(f"cannot write {output}: folder {parent} is not writable", ExitStatus.USAGE)


def output_format(fmt: Optional[str], output: Optional[Path], choices: "tuple[str, ...]", default: str = "text") -> str:
    """-f when given, else the format the output file's extension names, else ``default``."""
    if fmt is not None:
        return fmt
    if output is not None:
        guessed = EXTENSIONS.get(output.suffix.lower())
        if guessed in choices:
            return guessed
    return default


def check_scope(scope: Optional[str]) -> None:
    if scope is not None and scope not in SCOPES:
        raise _fail(f"unknown scope {scope!r}; choose one of {', '.join(SCOPES)}", ExitStatus.USAGE)


def reference_error(exc: Exception) -> "typer.Exit":
    """A --reference that names no known system or a file that is not valid YAML, in one line."""
    mark = getattr(exc, "problem_mark", None)
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return _fail(f"bad --reference: {problem}{where}", ExitStatus.USAGE)


#: --timeout of diagnose, triage and check (seconds; 0: no limit); see clusterdx.facts.deadline
TIMEOUT_HELP = ("Seconds the whole run may take (0: no limit); past it the report is partial and says "
                "what was not finished.")


def _finish(outcome, output: Optional[Path]) -> None:
    """Print a supervised run's outcome (see clusterdx.engine.backstop) and exit with its code."""
    if outcome.stderr:
        sys.stderr.write(outcome.stderr)
    if outcome.error:  # as main() reports an unexpected error: one line, the traceback on request
        if os.environ.get("CLUSTERDX_DEBUG"):
            sys.stderr.write(outcome.traceback)
        typer.echo(f"clusterdx: internal error: {outcome.error} (set CLUSTERDX_DEBUG=1 for the traceback)", err=True)
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


def _load_kb(dirs: Optional[List[Path]] = None, *, cache: bool = True):
    """The knowledge base for a command; ``cache=False`` for commands that work on the KB itself,
    which must see the source (see clusterdx.engine.kbcache)."""
    from clusterdx.engine.kb import load_kb
    from clusterdx.engine.problems import KBLoadError

    try:
        return load_kb(dirs or None, cache=cache)
    except KBLoadError as exc:
        raise _fail(str(exc), ExitStatus.KB_INVALID) from None


@app.command()
def diagnose(
    paths: List[Path] = typer.Argument(None, metavar="PATH",
                                       help="Files, folders or archives of one node (none: this machine)."),
    baseline: Optional[List[Path]] = typer.Option(None, "--baseline", "-b", metavar="PATH",
                                                  help="A known-good bundle of the same job to compare with."),
    fmt: Optional[ReportFormat] = typer.Option(None, "--format", "-f", metavar="text|json|markdown|html",
                                               help="Output format (default: from the -o extension, else text)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", metavar="FILE",
                                          help="Write the report to this file."),
    node: Optional[str] = typer.Option(None, "--node", metavar="NAME", help="Name of the node the inputs come from."),
    scope: Optional[str] = typer.Option(None, "--scope", metavar="SCOPE",
                                        help="host, container, vm-guest or hypervisor."),
    no_redact: bool = typer.Option(False, "--no-redact", help="Keep secret-looking values in the output."),
    verbose: bool = typer.Option(False, "--verbose", "-v",
                                 help="Show every remediation step, fact, score term and warning."),
    show_all: bool = typer.Option(False, "--all", "-a",
                                  help="List every rule that was not evaluated, with what it needs."),
    fail_on: Optional[float] = typer.Option(None, "--fail-on", min=0.0, max=1.0, metavar="0..1",
                                            help="Exit 4 when a hypothesis reaches this confidence."),
    config: Optional[Path] = typer.Option(None, "--config", metavar="FILE", help="Site configuration file."),
    reference: Optional[str] = typer.Option(None, "--reference", metavar="NAME|FILE",
                                            help="Reference system id (e.g. dgx-h100-8x400g) or a YAML file."),
    interactive: bool = typer.Option(False, "--interactive", "-i",
                                     help="Guided session: propose probes and questions, re-rank after each answer."),
    resume: Optional[Path] = typer.Option(None, "--resume", metavar="FILE",
                                          help="Continue an interactive session saved with 's'."),
    timeout: float = typer.Option(300.0, "--timeout", min=0.0, metavar="SECONDS",
                                  help=TIMEOUT_HELP + " Not used with --interactive."),
    for_fleet: bool = typer.Option(False, "--for-fleet",
                                   help="Write the compact JSON report `clusterdx fleet` reduces (no per-rule "
                                        "lists, no next probes); implies --format json."),
) -> None:
    """Diagnose one node (or a pair, with --baseline) and print ranked root causes."""
    from clusterdx.engine.backstop import Outcome, fallback_report, supervised
    from clusterdx.engine.diagnose import collect_live, collect_paths, diagnose as run
    from clusterdx.explainers import renderer
    from clusterdx.facts.deadline import Deadline

    redact = not no_redact
    check_scope(scope)
    check_output(output)
    fmt_name = output_format(fmt.value if fmt is not None else None, output, tuple(f.value for f in ReportFormat))
    if for_fleet:
        if fmt is not None and fmt.value != "json":
            raise _fail("--for-fleet writes JSON (the report clusterdx fleet reads); drop --format "
                        f"{fmt.value}", ExitStatus.USAGE)
        fmt_name = "json"
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
    import yaml

    from clusterdx.facts.reference import ReferenceError

    deadline = Deadline(timeout)
    options = {"verbose": verbose, "show_all": show_all}
    if fmt_name == "text" and output is None:
        options["color"] = sys.stdout.isatty()

    def work() -> Outcome:
        target = (collect_paths(paths, node=node, scope=scope, redact=redact, deadline=deadline) if paths
                  else collect_live(redact=redact, deadline=deadline))
        base = collect_paths(baseline, redact=redact, deadline=deadline) if baseline else None
        try:
            report = run(target, base, kb=kb, redact=redact, site=site, reference=reference, deadline=deadline,
                         for_fleet=for_fleet)
        except (ReferenceError, yaml.YAMLError) as exc:
            raise reference_error(exc) from None
        failed = fail_on is not None and any(h.confidence >= fail_on for h in report.hypotheses)
        return Outcome(renderer(fmt_name)(report, **options), int(ExitStatus.FAIL_ON) if failed else 0)

    def stopped(why: str) -> Outcome:
        report = fallback_report(kb, [str(p) for p in paths or []], [str(p) for p in baseline or []], deadline,
                                 why, redact)
        return Outcome(renderer(fmt_name)(report, **options))

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
def explain(item: str = typer.Argument(..., metavar="ID", help="A root cause, rule, remediation or probe id.")) -> None:
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
    # a listing shows each command's whole first sentence, never one cut with '...'
    for typer_app in (app, kb_app):
        for info in typer_app.registered_commands:
            doc = (info.help or (info.callback.__doc__ if info.callback else "") or "").strip()
            if info.short_help is None and doc:
                info.short_help = doc.split("\n\n")[0].replace("\n", " ").split(". ")[0].rstrip(".") + "."


def main() -> None:
    _register_commands()
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:  # the one error exit: no traceback reaches a user
        if os.environ.get("CLUSTERDX_DEBUG"):
            raise
        first = (str(exc).splitlines() or [""])[0][:200]
        typer.echo(f"clusterdx: internal error: {type(exc).__name__}: {first} "
                   "(set CLUSTERDX_DEBUG=1 for the traceback)", err=True)
        sys.exit(int(ExitStatus.INTERNAL_ERROR))


if __name__ == "__main__":
    main()
