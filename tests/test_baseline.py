"""--baseline: a container run against the same job on the host. The differences become facts
(step-time ratio, variables present on one side only, differing settings), the gap is stated
and shared among the hypotheses."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.clirun import cli

ROOT = Path(__file__).parents[1]
FORMATS = ROOT / "tests" / "fixtures" / "formats"


def _slow_log(text: str, factor: float) -> str:
    return re.sub(r"elapsed time per iteration \(ms\): ([\d.]+)",
                  lambda m: f"elapsed time per iteration (ms): {float(m.group(1)) * factor:.1f}", text)


def _bundle(root: Path, *, factor: float, env: str, sysctl: str) -> Path:
    root.mkdir(parents=True)
    (root / "train.log").write_text(_slow_log((FORMATS / "megatron-train.log").read_text(), factor))
    (root / "env.txt").write_text(env)
    (root / "sysctl.txt").write_text(sysctl)
    return root


HOST_ENV = "PATH=/usr/bin\nHOME=/root\nNCCL_IB_HCA=mlx5_0,mlx5_3\nNCCL_IB_QPS_PER_CONNECTION=4\nNCCL_SOCKET_IFNAME=ens10f0np0\n"
CONTAINER_ENV = "PATH=/usr/local/bin:/usr/bin\nHOME=/root\nNCCL_SOCKET_IFNAME=ens10f0np0\n"


def test_container_against_host_baseline(tmp_path):
    target = _bundle(tmp_path / "container-run", factor=1.12, env=CONTAINER_ENV, sysctl="kernel.numa_balancing = 1\n")
    base = _bundle(tmp_path / "host-run", factor=1.0, env=HOST_ENV, sysctl="kernel.numa_balancing = 0\n")
    proc = subprocess.run([sys.executable, "-m", "clusterdx", "diagnose", str(target), "--baseline", str(base),
                           "-f", "json"], capture_output=True, text=True, cwd=ROOT, timeout=120)  # the real process
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    gap = report["gap"]
    assert gap["basis"] == "baseline" and not gap["meets_bar"]
    assert 9.0 < gap["gap_pct"] < 12.0
    assert gap["explained_pct"] + gap["unexplained_pct"] <= gap["gap_pct"] + 0.01
    whats = {d["what"] for d in report["differences"]}
    assert "environment NCCL_IB_HCA" in whats and "sysctl kernel.numa_balancing" in whats
    assert any(w.startswith("step time") for w in whats)
    outcomes = {r["rule"]: r["outcome"] for r in report["rules"]}
    assert outcomes["step-time-above-baseline"] == "fired"
    ids = [h["id"] for h in report["hypotheses"]]
    assert "container-nccl-env-not-propagated" in ids[:3] and "numa-balancing-enabled" in ids[:3]
    sides = {i["side"] for i in report["inputs"]}
    assert sides == {"target", "baseline"}
    assert sum(h["impact_pct"] for h in report["hypotheses"]) >= gap["explained_pct"] - 0.01


def test_same_run_as_baseline_shows_no_gap(tmp_path):
    a = _bundle(tmp_path / "a", factor=1.0, env=HOST_ENV, sysctl="kernel.numa_balancing = 0\n")
    b = _bundle(tmp_path / "b", factor=1.0, env=HOST_ENV, sysctl="kernel.numa_balancing = 0\n")
    proc = cli("diagnose", str(a), "--baseline", str(b), "-f", "json", cwd=ROOT)  # in this process
    report = json.loads(proc.stdout)
    assert report["gap"]["gap_pct"] == 0.0 and report["gap"]["meets_bar"]
    assert report["differences"] == [d for d in report["differences"] if not d["what"].startswith("environment")]
    assert {r["rule"]: r["outcome"] for r in report["rules"]}["step-time-above-baseline"] == "silent"
