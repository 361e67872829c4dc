"""`clusterdx collect`: a read-only snapshot of this node into one .tar.gz bundle."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from clusterdx.cli import ExitStatus, _fail, app


@app.command()
def collect(
    output: Optional[Path] = typer.Option(None, "--output", "-o",
                                          help="Bundle to write (default: clusterdx-<host>-<UTC time>.tar.gz)."),
    pid: Optional[List[int]] = typer.Option(None, "--pid", help="Also capture this process's environment, "
                                            "affinity, cgroup cpuset and NUMA memory (repeatable)."),
    process_name: Optional[List[str]] = typer.Option(None, "--process-name",
                                                     help="Like --pid, for every process with this name."),
    heavy: Optional[str] = typer.Option(None, "--heavy", help="Heavier probes to add, comma-separated: "
                                        "perf-record, perf-stat, turbostat, nccl-tests."),
    duration: int = typer.Option(10, "--duration", min=1, max=600, help="Seconds each heavy probe runs."),
    timeout: float = typer.Option(10.0, "--timeout", min=0.1, help="Time limit of each command, in seconds."),
    no_redact: bool = typer.Option(False, "--no-redact", help="Keep secret-looking values in the bundle."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only the bundle's path."),
) -> None:
    """Collect this node's state (read-only, time-bounded, no root needed) into one bundle."""
    from clusterdx.facts.collect import HEAVY_NAMES, CollectOptions, collect as run, write_bundle
    from clusterdx.facts.collect.process import find_pids

    heavy_names = [h.strip() for h in (heavy or "").split(",") if h.strip()]
    unknown = [h for h in heavy_names if h not in HEAVY_NAMES]
    if unknown:
        raise _fail(f"unknown heavy probe {', '.join(unknown)}; choose from {', '.join(HEAVY_NAMES)}",
                    ExitStatus.USAGE)
    if output is not None and output.is_dir():
        raise _fail(f"{output} is a folder; give a file name such as {output}/node.tar.gz", ExitStatus.USAGE)
    pids = list(dict.fromkeys(pid or []))
    notes: list[str] = []
    for p in pids:
        if not Path(f"/proc/{p}").exists():
            notes.append(f"no process with pid {p}")
    for name in process_name or []:
        found = find_pids(name)
        if not found:
            notes.append(f"no process named {name!r}")
        pids += [p for p in found if p not in pids]
    for n in notes:
        typer.echo(f"clusterdx: warning: {n}", err=True)
    opts = CollectOptions(pids=pids, heavy=heavy_names, duration_s=duration, timeout_s=timeout,
                          redact=not no_redact, argv=["clusterdx", *sys.argv[1:]], notes=notes)
    col = run(opts)
    try:
        path = write_bundle(col, output)
    except OSError as exc:
        raise _fail(f"cannot write the bundle: {exc.strerror or exc}", ExitStatus.USAGE) from None
    if quiet:
        typer.echo(str(path))
        return
    counts = ", ".join(f"{n} {s}" for s, n in sorted(col.summary().items()))
    typer.echo(f"wrote {path} ({len(col.results)} probes: {counts}; scope {col.scope}; "
               f"{col.duration_s:.1f} s)")
    for r in col.results:
        if r.status != "ok":
            typer.echo(f"  {r.status:<8} {r.probe.name:<26} {r.reason}", err=True)
