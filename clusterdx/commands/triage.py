"""`clusterdx triage`: a ticket's attachments in, a Markdown reply out."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, List, Optional

import typer

from clusterdx.cli import (TIMEOUT_HELP, ExitStatus, _fail, _finish, _load_kb, _site, app, check_output, kb_dirs,
                           reference_error)

#: lines of the ticket description quoted at the top of the reply
DESCRIPTION_LINES = 8
_DESCRIPTION_NAME = re.compile(r"desc|ticket|issue|readme|summary|problem|notes|report|case", re.IGNORECASE)


def description_lines(inputs: List[Any], redact: bool = True) -> List[str]:
    """The first lines of the pasted description: an input no tool parser recognised (unrecognized,
    or read only as the user's own words by the prose reader), preferring one
    whose name says so (description.txt, ticket.md). Empty when there is none."""
    candidates = [i for i in inputs if (i.status == "unrecognized" or i.format == "prose")
                  and i.side == "target" and not i.reason.startswith("binary")]
    candidates.sort(key=lambda i: not _DESCRIPTION_NAME.search(Path(i.path.split("!/")[-1]).name))
    if not candidates:
        return []
    chosen = candidates[0]
    lines: List[str] = []
    path = Path(chosen.path)
    if "!/" not in chosen.path and "#" not in chosen.path and path.is_file() and path.stat().st_size < 1 << 20:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.strip():
                lines.append(line.rstrip()[:300])
            if len(lines) >= DESCRIPTION_LINES:
                break
    elif chosen.first_line:
        lines = [chosen.first_line]
    if redact:
        from clusterdx.facts.redact import redact_text

        lines = [redact_text(ln) for ln in lines]
    return lines


@app.command()
def triage(
    paths: List[Path] = typer.Argument(..., metavar="ATTACHMENT...", help="The ticket's attachments: files, folders, archives, "
                                       "a pasted description."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", metavar="FILE", help="Write the reply to this file."),
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
    from clusterdx.explainers.markdown import render
    from clusterdx.facts.deadline import Deadline

    import yaml

    from clusterdx.facts.reference import ReferenceError

    redact = not no_redact
    check_output(output)
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
        return Outcome(render(report, reply=True, ticket=description_lines(report.inputs, redact)))

    def stopped(why: str) -> Outcome:
        report = fallback_report(kb, [str(p) for p in paths], [str(p) for p in baseline or []], deadline, why,
                                 redact)
        return Outcome(render(report, reply=True, ticket=[]))

    _finish(supervised(work, stopped, deadline), output)
