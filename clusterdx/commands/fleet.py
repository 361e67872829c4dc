"""`clusterdx fleet`: one bundle per node in, shared and local causes, outliers and drift out."""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import List, Optional

import typer

from clusterdx.cli import ExitStatus, _emit, _fail, _load_kb, _site, app, check_output, kb_dirs, output_format


class FleetFormat(str, enum.Enum):
    text = "text"
    json = "json"
    markdown = "markdown"
    html = "html"


@app.command()
def fleet(
    paths: List[Path] = typer.Argument(..., metavar="BUNDLE",
                                       help="One bundle (folder or archive) or JSON report (diagnose --for-fleet) "
                                            "per node, or one folder holding one per node."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, metavar="N", help="Worker processes (default: CPUs)."),
    fmt: Optional[FleetFormat] = typer.Option(None, "--format", "-f", metavar="text|json|markdown|html", help="Output format."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", metavar="FILE", help="Write the report to this file."),
    timeout: float = typer.Option(1800.0, "--timeout", min=0.0, metavar="SECONDS", help="Seconds the whole fleet may take (0: no "
                                  "limit); past it no node starts and none runs on, each reported as timed out."),
    node_timeout: float = typer.Option(300.0, "--node-timeout", min=1.0, metavar="SECONDS", help="Seconds one node may take before it "
                                                                              "is reported as timed out."),
    no_redact: bool = typer.Option(False, "--no-redact", help="Keep secret-looking values in the output."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="List every node and more evidence."),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bar, even on a terminal."),
    config: Optional[Path] = typer.Option(None, "--config", metavar="FILE", help="Site configuration file."),
    fail_on: Optional[float] = typer.Option(None, "--fail-on", min=0.0, max=1.0, metavar="0..1",
                                            help="Exit 4 when a cause reaches this confidence on any node."),
) -> None:
    """Diagnose a fleet: causes shared by most nodes, causes local to a few, outliers and drift.

    Per-node JSON reports (`clusterdx diagnose BUNDLE --for-fleet -o NODE.json`, made where each
    node was collected) are reduced without reading the bundles again.

    Exit codes: 0 every node diagnosed; 8 a node failed, crashed or timed out (its causes are
    unknown, not absent); 4 with --fail-on, a cause reached the confidence; 2 usage error; 3 the
    knowledge base has errors.
    """
    import orjson

    from clusterdx.engine.fleet import run_fleet
    from clusterdx.facts.deadline import Deadline

    check_output(output)
    fmt = FleetFormat(output_format(fmt.value if fmt is not None else None, output,
                                    tuple(f.value for f in FleetFormat)))
    for p in paths:
        if not p.exists():
            raise _fail(f"no such file or folder: {p}", ExitStatus.USAGE)
    site = _site(config)
    dirs = kb_dirs(None, site, prefer_checkout=False)
    kb = _load_kb(dirs)
    deadline = Deadline(timeout)
    show_progress = sys.stderr.isatty() and not no_progress
    if show_progress:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn, TimeRemainingColumn

        bar = Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                       TimeElapsedColumn(), TimeRemainingColumn(), console=Console(stderr=True), transient=True,
                       auto_refresh=False)  # no refresh thread: workers are forked from this process
        task = bar.add_task("diagnosing nodes", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)
            bar.refresh()

        with bar:
            report = run_fleet(paths, jobs=jobs, kb=kb, kb_dirs=dirs, site=site, redact=not no_redact,
                               task_timeout=node_timeout, progress=progress, deadline=deadline)
    else:
        report = run_fleet(paths, jobs=jobs, kb=kb, kb_dirs=dirs, site=site, redact=not no_redact,
                           task_timeout=node_timeout, deadline=deadline)
    if fmt == FleetFormat.json:
        text = orjson.dumps(report.to_json_dict(), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n"
    elif fmt in (FleetFormat.markdown, FleetFormat.html):
        from clusterdx.explainers import fleet_markdown

        text = (fleet_markdown.render_markdown if fmt == FleetFormat.markdown else fleet_markdown.render_html)(report)
    else:
        from clusterdx.explainers.fleet_text import render

        text = render(report, verbose=verbose, color=output is None and sys.stdout.isatty())
    _emit(text, output)
    undiagnosed = [n.name for n in report.nodes if n.status in ("failed", "crashed", "timeout")]
    if fail_on is not None and any(h.confidence_max >= fail_on for h in report.hypotheses):
        raise typer.Exit(int(ExitStatus.FAIL_ON))
    if undiagnosed:
        more = f" and {len(undiagnosed) - 5} more" if len(undiagnosed) > 5 else ""
        typer.echo(f"clusterdx: {len(undiagnosed)} of {len(report.nodes)} nodes not diagnosed: "
                   f"{', '.join(undiagnosed[:5])}{more}", err=True)
        raise typer.Exit(int(ExitStatus.NODES_FAILED))
