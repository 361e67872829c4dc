"""Benchmark: start-up time of `clusterdx --help` and wall time of diagnosing shipped cases.

Run on demand (not part of the test suite):

    python tests/bench/bench_cli.py [--repeat 5]

Targets (issue 2): --help under 0.5 s, diagnosing a shipped case under 2 s, on a 2-core machine.
Each measurement is a fresh process, as a user runs it; the median of the repeats is reported.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).parents[2]


def timed(args: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True, cwd=ROOT)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 4):
        raise SystemExit(f"{' '.join(args)} failed: {proc.stderr[-500:]}")
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    opts = ap.parse_args()
    exe = [sys.executable, "-m", "clusterdx"]
    helps = [timed(exe + ["--help"]) for _ in range(opts.repeat)]
    print(f"clusterdx --help: median {statistics.median(helps):.3f} s (min {min(helps):.3f}, max {max(helps):.3f})")
    cases = sorted(p for p in (ROOT / "kb" / "cases").iterdir() if (p / "input").is_dir())
    worst = 0.0
    for case in cases:
        runs = [timed(exe + ["diagnose", str(case / "input"), "-f", "json"]) for _ in range(max(1, opts.repeat // 2))]
        med = statistics.median(runs)
        worst = max(worst, med)
        print(f"diagnose {case.name}: median {med:.3f} s")
    print(f"slowest case: {worst:.3f} s over {len(cases)} cases")


if __name__ == "__main__":
    main()
