"""``clusterdx collect``: a read-only, time-bounded snapshot of one node, as one bundle.

:func:`collect` runs the default probes (:mod:`.catalogue`), the per-process ones for
``pids`` (:mod:`.process`) and any named heavy ones (:mod:`.heavy`) through :mod:`.runner`,
redacts what may hold secrets (:mod:`.secrets`), decides the scope (:mod:`.scope`) and returns a
:class:`Collection`; :func:`write_bundle` writes it (:mod:`.bundle`). ``clusterdx diagnose``
without a path uses the same collection in memory (:mod:`clusterdx.facts.live`).

Nothing here changes the system: commands are read-only queries, files are only read, and the
only file written is the bundle (perf's data file, for ``--heavy perf-record``, goes to a
temporary folder that is removed).
"""

from __future__ import annotations

import os
import platform
import shlex
import socket
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

from clusterdx.facts.collect.probe import DEFAULT_TIMEOUT_S, Probe, Result

__all__ = ["CollectOptions", "Collection", "collect", "write_bundle", "HEAVY_NAMES"]

HEAVY_NAMES = ("perf-record", "perf-stat", "turbostat", "nccl-tests")


@dataclass
class CollectOptions:
    pids: Sequence[int] = ()
    heavy: Sequence[str] = ()
    duration_s: int = 10
    timeout_s: float = DEFAULT_TIMEOUT_S
    redact: bool = True
    #: the probes to run instead of the default catalogue (tests, live diagnosis)
    probes: Sequence[Probe] | None = None
    #: what the collector was started as, for the manifest (redacted there)
    argv: Sequence[str] = ()
    notes: Sequence[str] = ()


@dataclass
class Collection:
    host: str
    environment: "object"
    started: float
    duration_s: float
    results: list[Result] = field(default_factory=list)
    options: CollectOptions = field(default_factory=CollectOptions)

    @property
    def scope(self) -> str:
        return self.environment.scope  # type: ignore[attr-defined]

    @property
    def stamp(self) -> str:
        return datetime.fromtimestamp(self.started, timezone.utc).strftime("%Y%m%dT%H%M%SZ")

    def summary(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for r in self.results:
            counts[r.status] = counts.get(r.status, 0) + 1
        return counts


def collect(options: CollectOptions | None = None) -> Collection:
    from clusterdx.facts.collect import catalogue, heavy, process, runner, scope
    from clusterdx.facts.collect.secrets import redact_bytes

    opts = options or CollectOptions()
    unknown = [h for h in opts.heavy if h not in heavy.HEAVY]
    if unknown:
        raise ValueError(f"unknown heavy probe(s): {', '.join(unknown)}; known: {', '.join(heavy.HEAVY)}")
    started = time.time()
    t0 = time.monotonic()
    probes: list[Probe] = list(catalogue.default_probes() if opts.probes is None else opts.probes)
    for pid in opts.pids:
        probes.extend(process.pid_probes(pid))
    results = runner.run_all(probes, timeout_s=opts.timeout_s)
    if opts.heavy:
        # after the snapshot, so the snapshot does not see the heavy probes' load
        with tempfile.TemporaryDirectory(prefix="clusterdx-heavy-") as tmp:
            results += runner.run_all(heavy.heavy_probes(opts.heavy, opts.duration_s, tmp), timeout_s=opts.timeout_s)
    for res in results:
        if opts.redact and res.probe.redact != "none" and res.data:
            res.data = redact_bytes(res.data, res.probe.redact)
            res.redacted = True
        if opts.redact and (res.stderr or res.reason):
            from clusterdx.facts.redact import redact_text

            # the reason quotes the first line of stderr ("exit 3: PGPASSWORD=... psql")
            res.stderr = redact_text(res.stderr)
            res.reason = redact_text(res.reason)
    env = scope.detect({r.probe.name: r.data for r in results if r.status == "ok"})
    return Collection(host=socket.gethostname(), environment=env, started=started,
                      duration_s=round(time.monotonic() - t0, 3), results=results, options=opts)


def manifest(col: Collection):
    from clusterdx import __version__
    from clusterdx.facts.collect import bundle, catalogue
    from clusterdx.facts.redact import redact_text

    opts = col.options
    line = shlex.join(opts.argv)
    line = redact_text(line) if opts.redact else line
    return bundle.Manifest(
        host=col.host, scope=col.scope, environment=col.environment.as_dict(),  # type: ignore[attr-defined]
        time=datetime.fromtimestamp(col.started, timezone.utc).isoformat().replace("+00:00", "Z"),
        duration_s=col.duration_s, clusterdx_version=__version__, kb=bundle.kb_version(),
        collector={"command_line": line, "uid": os.getuid(), "euid": os.geteuid(), "python": sys.version.split()[0],
                   "platform": platform.platform(), "redacted": opts.redact, "pids": list(opts.pids),
                   "heavy": list(opts.heavy), "duration_s": opts.duration_s, "timeout_s": opts.timeout_s,
                   "notes": list(opts.notes)},
        summary=col.summary(),
        probes=[bundle.entry(r) for r in col.results],
        kb_probes=catalogue.kb_coverage(tuple(r.probe for r in col.results)),
    )


def write_bundle(col: Collection, path: Path | None = None) -> Path:
    from clusterdx.facts.collect import bundle

    path = Path(path) if path is not None else Path(bundle.default_name(col.host, col.stamp))
    bundle.write(path, manifest(col), col.results, col.started)
    return path
