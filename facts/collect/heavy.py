"""Heavier probes, off by default: each is named with ``--heavy`` and runs for ``--duration``.

``perf-record`` (a system-wide profile, then ``perf report`` by symbol), ``perf-stat`` (cycles
versus ref-cycles: the effective busy frequency), ``turbostat`` (busy MHz, C-states, power) and
``nccl-tests`` (a single-node ``all_reduce_perf`` when the binary is installed). They read
counters or add load while they run; perf needs ``perf_event_paranoid`` <= 0 or root, turbostat
needs root and the msr module: without them they fail, and the failure is recorded. perf's data
file goes to a temporary folder that is removed afterwards.

>>> sorted(HEAVY)
['nccl-tests', 'perf-record', 'perf-stat', 'turbostat']
>>> [p.command for p in heavy_probes(["perf-stat"], 5, "/tmp/x")]
['perf stat -a -e cycles,ref-cycles,instructions,task-clock -- sleep 5']
"""

from __future__ import annotations

import os
from typing import Callable, Sequence

from clusterdx.facts.collect.probe import Probe

#: time a heavy probe may take beyond its duration (perf report symbolisation, start-up)
SLACK_S = 60.0


def _perf_record(d: int, tmp: str) -> tuple[Probe, ...]:
    data = os.path.join(tmp, "perf.data")
    return (
        Probe("perf-record", argv=("perf", "record", "-a", "-g", "-o", data, "--", "sleep", str(d)),
              stream="both", timeout_s=d + SLACK_S, folder="heavy", group="perf"),
        Probe("perf-report", argv=("perf", "report", "-i", data, "--no-children", "--sort", "sym", "--stdio"),
              format="perf-report", kb_probe="perf-record-report", timeout_s=SLACK_S * 2, folder="heavy",
              group="perf", needs_previous=True),
    )


def _perf_stat(d: int, tmp: str) -> tuple[Probe, ...]:
    return (Probe("perf-stat", argv=("perf", "stat", "-a", "-e", "cycles,ref-cycles,instructions,task-clock",
                                     "--", "sleep", str(d)),
                  stream="stderr", format="perf-stat", kb_probe="perf-stat-cycles", timeout_s=d + SLACK_S,
                  folder="heavy", group="perf"),)


def _turbostat(d: int, tmp: str) -> tuple[Probe, ...]:
    interval = max(1, d // 2)
    return (Probe("turbostat", argv=("turbostat", "--quiet", "--show",
                                     "Core,CPU,Avg_MHz,Busy%,Bzy_MHz,TSC_MHz,CPU%c6,PkgWatt",
                                     "--interval", str(interval), "--num_iterations", "2"),
                  stream="both", format="turbostat", kb_probe="turbostat", timeout_s=2 * interval + SLACK_S,
                  folder="heavy"),)


def _nccl_tests(d: int, tmp: str) -> tuple[Probe, ...]:
    gpus = _gpu_count()
    return (Probe("nccl-tests-all-reduce", argv=("all_reduce_perf", "-b", "8", "-e", "1G", "-f", "2",
                                                 "-g", str(gpus)),
                  format="nccl-tests", kb_probe="nccl-tests-allreduce", timeout_s=d + SLACK_S, folder="heavy",
                  redact="text"),)


def _gpu_count() -> int:
    try:
        return max(1, len([n for n in os.listdir("/proc/driver/nvidia/gpus")]))
    except OSError:
        return 1


HEAVY: dict[str, Callable[[int, str], tuple[Probe, ...]]] = {
    "perf-record": _perf_record,
    "perf-stat": _perf_stat,
    "turbostat": _turbostat,
    "nccl-tests": _nccl_tests,
}


def heavy_probes(names: Sequence[str], duration_s: int, tmp: str) -> list[Probe]:
    """The probes for ``names`` (validated by the caller against :data:`HEAVY`)."""
    out: list[Probe] = []
    for name in names:
        out.extend(HEAVY[name](duration_s, tmp))
    return out
