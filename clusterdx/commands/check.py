"""`clusterdx check`: a readiness checklist per node or per fleet, with exit codes to gate on."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import List, Optional

import typer

from clusterdx.cli import (TIMEOUT_HELP, ExitStatus, _fail, _finish, _load_kb, _site, app, check_output, kb_dirs,
                           output_format)


class CheckFormat(str, enum.Enum):
    text = "text"
    json = "json"
    markdown = "markdown"
    html = "html"


@app.command()
def check(
    paths: List[Path] = typer.Argument(None, metavar="BUNDLE", help="Bundles (none: this machine). With --fleet, what "
                                                                    "`clusterdx fleet` takes: a bundle or report per "
                                                                    "node, or a folder of them."),
    fleet: bool = typer.Option(False, "--fleet", help="Check every node (as `clusterdx fleet` finds them); counts "
                                                      "per item."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, metavar="N",
                                       help="Worker processes with --fleet (default: CPUs)."),
    strict: bool = typer.Option(False, "--strict", help="Exit 7 on warn or not-checked items."),
    fmt: Optional[CheckFormat] = typer.Option(None, "--format", "-f", metavar="text|json|markdown|html",
                                              help="Output format (default: from the -o extension, else text)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", metavar="FILE", help="Write the checklist to this file."),
    config: Optional[Path] = typer.Option(None, "--config", metavar="FILE",
                                          help="Site configuration file (mandatory items)."),
    no_redact: bool = typer.Option(False, "--no-redact", help="Keep secret-looking values in the output."),
    timeout: float = typer.Option(300.0, "--timeout", min=0.0, metavar="SECONDS", help=TIMEOUT_HELP),
) -> None:
    """Every known root cause, checked: fail, warn, pass, not checked or not applicable.

    Exit codes: 0 every item passes or does not apply; 6 an item fails; 7 (with --strict) an
    item is warned or not checked (only mandatory ones count as not checked when the site
    declares mandatory items), and always when a fleet node could not be checked; 2 usage
    error; 3 the knowledge base has errors.
    """
    from clusterdx.engine.backstop import Outcome, supervised
    from clusterdx.engine.checkrun import run_check, stopped_check
    from clusterdx.explainers import check_text
    from clusterdx.facts.deadline import Deadline

    check_output(output)
    fmt_name = output_format(fmt.value if fmt is not None else None, output, tuple(f.value for f in CheckFormat))
    for p in paths or []:
        if not p.exists():
            raise _fail(f"no such file or folder: {p}", ExitStatus.USAGE)
    site = _site(config)
    kb = _load_kb(kb_dirs(None, site, prefer_checkout=False))
    render = {"text": check_text.render_text, "json": check_text.render_json,
              "markdown": check_text.render_markdown, "html": check_text.render_html}[fmt_name]
    deadline = Deadline(timeout)

    def work() -> Outcome:
        report = run_check(kb, list(paths or []), fleet=fleet or len(paths or []) > 1, strict=strict, site=site,
                           redact=not no_redact, deadline=deadline, jobs=jobs)
        return Outcome(render(report), report.exit_code)

    def stopped(why: str) -> Outcome:
        report = stopped_check(kb, [str(p) for p in paths or []], strict, site, deadline, why)
        return Outcome(render(report), report.exit_code)

    _finish(supervised(work, stopped, deadline), output)
