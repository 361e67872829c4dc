"""Benchmark: peak memory of ``clusterdx diagnose`` on one ~100 MiB input per input family.

Run on demand (not part of the test suite), niced and one family at a time:

    nice python tests/bench/bench_memory.py [--size-mib 100] [--family dmesg ...] [--keep DIR]

Target (issue 13): peak resident memory under 1 GiB for any input under 100 MiB, end to end
(``clusterdx diagnose <folder> -f json > /dev/null`` in a child process; its peak RSS is the
child's own ``ru_maxrss`` from ``os.wait4``).

Each family's file is built from real lines (``tests/fixtures``) repeated up to the size, with
the fields a real log varies varied per repetition (timestamps, bus numbers, interface and
device names, process ids), so that the file is not just one block that deduplicates away:

- ``nccl-debug``: an NCCL_DEBUG=INFO log, the pid and host varied per block (streamed)
- ``nccl-tests``: all_reduce_perf output, runs concatenated
- ``dmesg``: the XID / AER / mlx5 ring, timestamps moving on per block
- ``lspci``: ``lspci -vvv``, bus numbers varied per block (a very wide machine)
- ``sysctl``: ``sysctl -a`` with per-interface keys for many interfaces
- ``env``: an environment dump, the same names with varied values
- ``session``: a pasted shell session repeating two commands (``lscpu``, ``sysctl -a``)
- ``nsys``: ``nsys stats`` CSV (cuda_gpu_kern_sum), kernel names varied
- ``ibstat``: an ``ibstat`` dump, CA names varied

Prints one line per family: size, peak RSS in MiB, seconds, exit status, and what the report's
``inputs`` say of the file (status, reason, facts, warnings); exits 1 when a family passes the
target or the run failed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator

MiB = 1 << 20
TARGET_MIB = 1024
ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures"


def _text(rel: str) -> str:
    return (FIX / rel).read_text(encoding="utf-8", errors="replace")


def _nccl_debug() -> Iterator[str]:
    base = _text("formats/nccl-debug-info.log")
    for i in range(10 ** 9):
        # a new job per block: other pids, another pair of hosts
        yield (base.replace(":481203:", f":{481203 + i}:").replace(":1190442:", f":{1190442 + i}:")
               .replace("gpu-h100-017", f"gpu-h100-{i % 500:03d}"))


def _nccl_tests() -> Iterator[str]:
    base = _text("formats/nccl-tests-allreduce.txt")
    while True:
        yield base


def _dmesg() -> Iterator[str]:
    import re

    lines = _text("formats/dmesg-xid-aer-mlx5.txt").splitlines()
    stamp = re.compile(r"^\[\s*(\d+)\.(\d+)\]")
    for i in range(10 ** 9):
        out = []
        for ln in lines:
            m = stamp.match(ln)
            if m:
                ln = f"[{int(m.group(1)) + i * 100:>6}.{m.group(2)}]" + ln[m.end():]
            out.append(ln)
        yield "\n".join(out) + "\n"


def _lspci() -> Iterator[str]:
    import re

    base = _text("formats/lspci-vvv.txt")
    bus = re.compile(r"^([0-9a-f]{2}):", re.M)
    for i in range(10 ** 9):
        yield bus.sub(lambda m: f"{i % 65536:04x}:{m.group(1)}:", base)


def _sysctl() -> Iterator[str]:
    keys = [("net.ipv4.conf.{i}.rp_filter", "1"), ("net.ipv4.conf.{i}.accept_local", "0"),
            ("net.ipv4.conf.{i}.arp_ignore", "0"), ("net.ipv6.conf.{i}.disable_ipv6", "0"),
            ("net.ipv4.neigh.{i}.gc_stale_time", "60"), ("net.ipv6.conf.{i}.mtu", "9000")]
    fixed = ("kernel.numa_balancing = 1\nvm.swappiness = 60\nnet.core.rmem_max = 212992\n"
             "net.ipv4.tcp_rmem = 4096\t131072\t6291456\nvm.nr_hugepages = 0\n"
             "kernel.perf_event_paranoid = 2\nvm.zone_reclaim_mode = 0\n")
    yield fixed
    for i in range(10 ** 9):
        yield "".join(f"{k.format(i=f'veth{i:x}')} = {v}\n" for k, v in keys)


def _env() -> Iterator[str]:
    lines = _text("formats/env-dump.txt").splitlines()
    for i in range(10 ** 9):
        yield "".join((ln.replace("=", f"=x{i}", 1) if i and "=" in ln else ln) + "\n" for ln in lines)


def _session() -> Iterator[str]:
    one = ("[root@gpu-node-017 ~]# lscpu\n" + _text("formats/lscpu-x86-baremetal-hier.txt")
           + "[root@gpu-node-017 ~]# sysctl -a\n"
           + "".join(block for block, _ in zip(_sysctl(), range(40))))
    while True:
        yield one


def _nsys() -> Iterator[str]:
    lines = _text("formats/nsys-stats-cuda_gpu_kern_sum.csv").splitlines()
    yield lines[0] + "\n"
    for i in range(10 ** 9):
        yield "".join(ln.replace(",sm90", f",k{i}_sm90").replace(',"void ', f',"void k{i}_') + "\n"
                      for ln in lines[1:])


def _ibstat() -> Iterator[str]:
    base = _text("formats/ibstat.txt")
    for i in range(10 ** 9):
        yield base.replace("CA 'mlx5_", f"CA 'mlx5_{i}")


FAMILIES: dict[str, tuple[str, Callable[[], Iterator[str]]]] = {
    "nccl-debug": ("nccl-debug.log", _nccl_debug),
    "nccl-tests": ("allreduce.txt", _nccl_tests),
    "dmesg": ("dmesg.txt", _dmesg),
    "lspci": ("lspci-vvv.txt", _lspci),
    "sysctl": ("sysctl-a.txt", _sysctl),
    "env": ("env.txt", _env),
    "session": ("session.txt", _session),
    "nsys": ("kern_sum.csv", _nsys),
    "ibstat": ("ibstat.txt", _ibstat),
}


def build(family: str, folder: Path, size: int) -> Path:
    """The family's file in ``folder``, written block by block up to ``size`` bytes."""
    name, gen = FAMILIES[family]
    path = folder / name
    written = 0
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for block in gen():
            if written >= size:
                break
            fh.write(block)
            written += len(block.encode("utf-8"))
    return path


def measure(folder: Path, timeout: float) -> dict:
    """One ``diagnose <folder> -f json`` in a child: peak RSS (MiB), seconds, exit status and
    what the report's inputs say."""
    exe = shutil.which("clusterdx", path=str(Path(sys.executable).parent)) or "clusterdx"
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(["timeout", "-s", "KILL", str(int(timeout)), "nice", exe, "diagnose", str(folder), "-f", "json"], stdout=out,
                                stderr=subprocess.PIPE)
        # reading stderr to its end cannot deadlock on a full pipe; the child's own rusage comes
        # from wait4 (timeout waits for diagnose, so it is included), not the RUSAGE_CHILDREN
        # maximum over every child so far
        try:
            err = proc.stderr.read()
        finally:
            proc.stderr.close()
        _, status, ru = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - t0
        out.seek(0)
        raw = out.read()
    row = dict(rss_mib=ru.ru_maxrss / 1024, seconds=seconds, rc=proc.returncode,
               report_kib=len(raw) / 1024, stderr=err.decode(errors="replace")[-400:])
    try:
        rep = json.loads(raw)
        ins = rep.get("inputs", [])
        row["inputs"] = [dict(path=r.get("path"), status=r.get("status"), reason=r.get("reason", "")[:160],
                              facts=r.get("facts"), warnings=len(r.get("warnings", [])))
                         for r in ins[:5]]
        row["n_inputs"] = len(ins)
        row["complete"] = rep.get("complete", rep.get("incomplete"))
    except ValueError:
        row["inputs"] = None
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mib", type=float, default=100)
    ap.add_argument("--family", action="append", choices=sorted(FAMILIES))
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--keep", type=Path, help="build the files here and keep them")
    ap.add_argument("--json", action="store_true", help="one JSON object per family")
    args = ap.parse_args(argv)
    bad = 0
    for family in args.family or list(FAMILIES):
        base = args.keep or Path(tempfile.mkdtemp(prefix="cdx-mem-"))
        folder = base / family
        folder.mkdir(parents=True, exist_ok=True)
        try:
            path = build(family, folder, int(args.size_mib * MiB))
            size = path.stat().st_size
            row = measure(folder, args.timeout)
        finally:
            if not args.keep:
                shutil.rmtree(base, ignore_errors=True)
        row.update(family=family, size_mib=size / MiB)
        ok = row["rc"] == 0 and row["rss_mib"] < TARGET_MIB
        bad += not ok
        if args.json:
            print(json.dumps(row), flush=True)
        else:
            first = (row.get("inputs") or [{}])[0]
            print(f"{family:11} {row['size_mib']:6.1f} MiB  peak {row['rss_mib']:7.1f} MiB  "
                  f"{row['seconds']:6.1f} s  rc={row['rc']}  {'ok' if ok else 'OVER'}  "
                  f"report={row['report_kib']:.0f}KiB inputs={row.get('n_inputs')} "
                  f"[{first.get('status')}: {first.get('reason')}; facts={first.get('facts')} "
                  f"warnings={first.get('warnings')}]", flush=True)
            if row["rc"] != 0:
                print("   stderr: " + row["stderr"].replace("\n", "\n   "), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
