"""`clusterdx triage`: a ticket's attachments in, a Markdown reply out."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from clusterdx.cli import (TIMEOUT_HELP, ExitStatus, _fail, _finish, _load_kb, _site, app, check_output, kb_dirs,
                           reference_error)


@app.command()
def triage(
    paths: List[Path] = typer.Argument(..., metavar="ATTACHMENT", help="The ticket's attachments: files, folders, archives, "
                                       "a pasted description."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", metavar="FILE", help="Write the reply to this file."),
    notes: Optional[Path] = typer.Option(None, "--notes", metavar="FILE",
                                         help="Also write the engineer's notes (full report: rule ids, quoted lines, "
                                              "causal path) to this Markdown file."),
    baseline: Optional[List[Path]] = typer.Option(None, "--baseline", "-b", metavar="PATH",
                                                  help="A known-good bundle of the same job to compare with."),
    no_redact: bool = typer.Option(False, "--no-redact", help="Keep secret-looking values in the reply."),
    node: Optional[str] = typer.Option(None, "--node", metavar="NAME",
                                       help="Name of the node the attachments come from."),
    config: Optional[Path] = typer.Option(None, "--config", metavar="FILE", help="Site configuration file."),
    reference: Optional[str] = typer.Option(None, "--reference", metavar="NAME|FILE",
                                            help="Reference system id (e.g. dgx-h100-8x400g) or a YAML file."),
    timeout: float = typer.Option(300.0, "--timeout", min=0.0, metavar="SECONDS", help=TIMEOUT_HELP),
) -> None:
    """Read a ticket's attachments and print a Markdown reply ready to paste into the ticket."""
    from clusterdx.engine.backstop import Outcome, fallback_report, supervised
    from clusterdx.engine.diagnose import collect_paths, diagnose
    from clusterdx.explainers import markdown, reply
    from clusterdx.facts.deadline import Deadline

    import yaml

    from clusterdx.facts.reference import ReferenceError

    redact = not no_redact
    check_output(output)
    check_output(notes)
    for p in list(paths) + list(baseline or []):
        if not p.exists():
            raise _fail(f"no such file or folder: {p}", ExitStatus.USAGE)
    site = _site(config)
    kb = _load_kb(kb_dirs(None, site, prefer_checkout=False))
    deadline = Deadline(timeout)

    def work() -> Outcome:
        target = collect_paths(paths, node=node, redact=redact, deadline=deadline)
        base = collect_paths(baseline, redact=redact, deadline=deadline) if baseline else None
        try:
            report = diagnose(target, base, kb=kb, redact=redact, site=site, reference=reference, deadline=deadline)
        except (ReferenceError, yaml.YAMLError) as exc:
            raise reference_error(exc) from None
        # the reply goes to the customer; what only the engineer can use (ids, reprs, paths) goes to the notes
        told = ""
        if notes is not None:
            try:
                notes.write_text(markdown.render(report), encoding="utf-8")
            except OSError as exc:
                raise _fail(f"cannot write {notes}: {exc.strerror or exc}", ExitStatus.USAGE) from None
            told = f"clusterdx: wrote {notes}\n"
        return Outcome(reply.render(report), stderr=told)

    def stopped(why: str) -> Outcome:
        report = fallback_report(kb, [str(p) for p in paths], [str(p) for p in baseline or []], deadline, why,
                                 redact)
        return Outcome(reply.render(report))

    _finish(supervised(work, stopped, deadline), output)
