"""Benchmark: `clusterdx fleet` over 250, 500 and 1,000 generated node bundles.

Run on demand (not part of the test suite):

    python tests/bench/bench_fleet.py [--sizes 250,500,1000] [-j 2] [--keep DIR]
    python tests/bench/bench_fleet.py --reports --sizes 1000,10000    # the reduce step alone

With ``--reports`` each node is given as its own JSON report (``clusterdx diagnose -f json``, as
the Slurm and Kubernetes recipes make them on the node): one bundle per kind of node is diagnosed
for real and its report copied per node with that node's names; ``clusterdx fleet`` then reduces
them without parsing an input. Target: 10,000 reports in under 60 s and under 1 GiB.

Each node bundle holds about 15 small files made from the samples in tests/fixtures/formats
(sysctl, lscpu, cpupower, nvidia-smi, topology, NCCL debug log, nccl-tests, Megatron log,
turbostat, ibstat, environment, kernel command line, numactl) and a manifest naming the host.
Planted faults: kernel.numa_balancing = 1 on 3 nodes, governor powersave on 2, half the busbw on
1; drift: another NCCL version on 4 nodes, another kernel command line on 2. The fleet must be
diagnosed in under 60 s with -j 2 on a 2-core machine, every planted fault and drift found, and
the time must grow linearly with the number of nodes. Each run is a fresh `clusterdx fleet`
process, as a user runs it; peak RSS is that of the largest child process (the CLI or a worker),
and CPU is the user+system time of the command and its workers (on a busy machine, CPU / jobs is
what the wall time would be on an idle one).
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).parents[2]
FORMATS = ROOT / "tests" / "fixtures" / "formats"
LIMIT_S = 60.0
#: peak RSS of the fleet command or any of its workers
MEMORY_MB = 1024

NUMA_ON = {7, 311, 902}
POWERSAVE = {45, 678}
SLOW_BUSBW = {500}
NCCL_OLD = {12, 250, 613, 999}
CMDLINE_ODD = {101, 820}

CMDLINE = ("BOOT_IMAGE=/vmlinuz-6.8.0-57-generic root=UUID=3f1c2d9a-7b6e-4c11-9a0e-2f6b8d1e44a7 ro "
           "intel_iommu=on iommu=pt transparent_hugepage=madvise hugepagesz=1G hugepages=64 quiet")
CPUPOWER = """analyzing CPU 37:
  driver: intel_pstate
  CPUs which run at the same hardware frequency: 37
  CPUs which need to have their frequency coordinated by software: 37
  energy performance preference: {epp}
  hardware limits: 800 MHz - 3.80 GHz
  available cpufreq governors: performance powersave
  current policy: frequency should be within 800 MHz and 3.80 GHz.
                  The governor "{gov}" may decide which speed to use
                  within this range.
  current CPU frequency: 3.00 GHz (asserted by call to kernel)
  boost state support:
    Supported: yes
    Active: yes
"""
SYSCTL = """kernel.numa_balancing = {numa}
kernel.perf_event_paranoid = 2
kernel.randomize_va_space = 2
vm.max_map_count = 1048576
vm.swappiness = 60
vm.zone_reclaim_mode = 0
"""


def host(i: int) -> str:
    return f"gpu-{i:04d}"


def _scale_busbw(text: str, factor: float) -> str:
    out = []
    for line in text.splitlines(keepends=True):
        cols = line.split()
        if len(cols) >= 13 and cols[0].isdigit() and int(cols[0]) >= 1 << 26:
            for k in (7, 11):
                cols[k] = f"{float(cols[k]) * factor:.2f}"
            line = "  ".join(cols) + "\n"
        out.append(line)
    return "".join(out)


def _base() -> dict[str, str]:
    return {name: (FORMATS / name).read_text() for name in (
        "lscpu-x86-baremetal-hier.txt", "cpupower-idle-info.txt", "nvidia-smi-q.txt", "nvidia-smi-topo-h100-8nic.txt",
        "nccl-debug-info.log", "nccl-tests-allreduce.txt", "megatron-train.log", "turbostat.txt", "ibstat.txt",
        "env-dump.txt", "numactl-hardware-x86.txt")}


def _bundle(d: Path, i: int, h: str, peer: str, base: dict[str, str]) -> None:
    """Node ``i``'s bundle (its planted faults by index), named ``h``, its NCCL peer ``peer``."""
    d.mkdir(parents=True)
    (d / "manifest.json").write_text(json.dumps({"host": h, "scope": "host", "tool": "bench_fleet"}))
    (d / "sysctl-a.txt").write_text(SYSCTL.format(numa=1 if i in NUMA_ON else 0))
    gov = "powersave" if i in POWERSAVE else "performance"
    epp = "power" if i in POWERSAVE else "performance"
    (d / "cpupower-frequency-info.txt").write_text(CPUPOWER.format(gov=gov, epp=epp))
    cmd = CMDLINE + (" pcie_aspm=force" if i in CMDLINE_ODD else "")
    (d / "proc-cmdline.txt").write_text(cmd + "\n")
    nccl = base["nccl-debug-info.log"].replace("gpu-h100-017", h).replace("gpu-h100-018", peer)
    if i in NCCL_OLD:
        nccl = nccl.replace("NCCL version 2.23.4", "NCCL version 2.21.5")
    (d / "nccl-debug.log").write_text(nccl)
    tests = base["nccl-tests-allreduce.txt"].replace("gpu-h100-017", h).replace("gpu-h100-018", peer)
    if i in SLOW_BUSBW:
        tests = _scale_busbw(tests, 0.5)
    (d / "all_reduce_perf.txt").write_text(tests)
    for name in ("lscpu-x86-baremetal-hier.txt", "cpupower-idle-info.txt", "nvidia-smi-q.txt",
                 "nvidia-smi-topo-h100-8nic.txt", "megatron-train.log", "turbostat.txt", "ibstat.txt",
                 "numactl-hardware-x86.txt"):
        (d / name).write_text(base[name])
    (d / "env.txt").write_text(re.sub(r"gpu-node-017", h, base["env-dump.txt"]))


def _planted(n: int) -> dict[str, set[str]]:
    pick = lambda s: {host(i) for i in s if i < n}  # noqa: E731
    return {"numa": pick(NUMA_ON), "powersave": pick(POWERSAVE), "busbw": pick(SLOW_BUSBW),
            "nccl": pick(NCCL_OLD), "cmdline": pick(CMDLINE_ODD)}


#: one representative node index per kind of node (healthy, then each planted fault)
_KINDS = {0: set(), 7: NUMA_ON, 45: POWERSAVE, 500: SLOW_BUSBW, 12: NCCL_OLD, 101: CMDLINE_ODD}
_T_HOST, _T_PEER = "zztemplate-host", "zztemplate-peer"


def generate_reports(root: Path, n: int) -> dict[str, set[str]]:
    """Write ``n`` per-node JSON reports under ``root``, as each node's own ``clusterdx diagnose
    --for-fleet`` would: one bundle per kind of node is diagnosed for real, and its report is copied
    per node with the node's names in it; return the planted nodes per fault."""
    from clusterdx.engine.diagnose import collect_paths, run_diagnosis
    from clusterdx.engine.kb import load_kb

    kb = load_kb(cache=True)
    base = _base()
    texts: dict[int, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for rep in _KINDS:
            d = Path(tmp) / f"kind-{rep}"
            _bundle(d, rep, _T_HOST, _T_PEER, base)
            report = run_diagnosis(collect_paths([d]), kb=kb, next_probes=False).report.for_fleet()
            texts[rep] = json.dumps(report.to_json_dict()).replace(str(d), "/shared/diag/" + _T_HOST)
    root.mkdir(parents=True)
    for i in range(n):
        kind = next((rep for rep, members in _KINDS.items() if i in members), 0)
        text = texts[kind].replace(_T_HOST, host(i)).replace(_T_PEER, host((i + 1) % n))
        (root / f"{host(i)}.json").write_text(text)
    return _planted(n)


def generate(root: Path, n: int) -> dict[str, set[str]]:
    """Write ``n`` node bundles under ``root``; return the planted nodes per fault."""
    base = _base()
    for i in range(n):
        _bundle(root / host(i), i, host(i), host((i + 1) % n), base)
    return _planted(n)


def check(report: dict, planted: dict[str, set[str]]) -> list[str]:
    """What the report missed or got wrong."""
    problems = []
    hyps = {h["id"]: set(h["nodes"]) for h in report["hypotheses"]}
    for key, cause in (("numa", "numa-balancing-enabled"), ("powersave", "cpu-governor-epp-powersave")):
        got = hyps.get(cause, set())
        if not planted[key] <= got:
            problems.append(f"{cause}: planted on {sorted(planted[key])}, found on {sorted(got)[:10]}")
    slow = {o["node"] for o in report["outliers"] if o["metric"] == "nccltests.busbw"}
    if planted["busbw"] and slow != planted["busbw"]:
        problems.append(f"busbw outliers {sorted(slow)}, planted {sorted(planted['busbw'])}")
    if planted["busbw"] and not planted["busbw"] <= hyps.get("single-degraded-node-straggler", set()):
        problems.append("single-degraded-node-straggler not raised on the slow-busbw node")
    drift = {d["what"]: {x["node"] for x in d["differing"]} for d in report["drift"]}
    for key, what in (("nccl", "NCCL version"), ("cmdline", "kernel command line")):
        if planted[key] and drift.get(what, set()) != planted[key]:
            problems.append(f"drift {what}: planted {sorted(planted[key])}, found {sorted(drift.get(what, set()))}")
    bad = [n["name"] for n in report["nodes"] if n["status"] != "ok"]
    if bad:
        problems.append(f"{len(bad)} nodes not ok: {bad[:5]}")
    return problems


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run(root: Path, jobs: int) -> tuple[float, float, dict]:
    """(wall seconds, CPU seconds of the command and its workers, report)."""
    cpu0 = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "clusterdx", "fleet", str(root), "-j", str(jobs), "-f", "json"],
                          capture_output=True, text=True, cwd=ROOT)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"clusterdx fleet failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return elapsed, _children_cpu() - cpu0, json.loads(proc.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="250,500,1000")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--keep", type=Path, default=None, help="generate here and keep the bundles")
    ap.add_argument("--reports", action="store_true",
                    help="per-node JSON reports instead of bundles (the reduce step; try --sizes 10000)")
    opts = ap.parse_args()
    sizes = [int(s) for s in opts.sizes.split(",")]
    work = opts.keep or Path(tempfile.mkdtemp(prefix="clusterdx-fleet-bench-"))
    rows = []
    ok = True
    try:
        for n in sizes:
            root = work / f"fleet-{n}"
            if root.exists():
                shutil.rmtree(root)
            t0 = time.perf_counter()
            planted = (generate_reports if opts.reports else generate)(root, n)
            gen_s = time.perf_counter() - t0
            files = sum(1 for _ in root.rglob("*") if _.is_file())
            elapsed, cpu_s, report = run(root, opts.jobs)
            rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            problems = check(report, planted)
            ok &= not problems and elapsed < LIMIT_S and rss_mb < MEMORY_MB or n < max(sizes)
            rows.append((n, elapsed, rss_mb))
            print(f"{n:>5} nodes ({files} files, generated in {gen_s:.1f} s): {elapsed:6.1f} s, "
                  f"{elapsed / n * 1000:.1f} ms/node, CPU {cpu_s:.1f} s ({cpu_s / n * 1000:.0f} ms/node), "
                  f"peak RSS {rss_mb:.0f} MiB, "
                  f"{'all planted faults and drift found' if not problems else 'PROBLEMS'}")
            for p in problems:
                print(f"      {p}")
                ok = False
            if n == max(sizes) and elapsed >= LIMIT_S:
                print(f"      over the {LIMIT_S:g} s limit")
            if n == max(sizes) and rss_mb >= MEMORY_MB:
                print(f"      over the {MEMORY_MB} MiB limit")
    finally:
        if opts.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    if len(rows) >= 2:
        (n0, t0_, _), (n1, t1, _) = rows[0], rows[-1]
        print(f"scaling: x{n1 / n0:.1f} nodes -> x{t1 / t0_:.2f} time")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
