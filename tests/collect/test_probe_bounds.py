"""A probe's end is its whole process group's end; its output is read to the cap, never past it,
and a cut output is marked in the result, the manifest and the report."""

from __future__ import annotations

import io
import json
import os
import resource
import tarfile
import time
from pathlib import Path

from clusterdx.facts.collect import runner
from clusterdx.facts.collect.bundle import entry
from clusterdx.facts.collect.probe import Probe
from clusterdx.facts.collect.runner import run_probe

from tests.collect.conftest import make_tool


def _gone(pid: int, wait_s: float = 3.0) -> bool:
    end = time.monotonic() + wait_s
    while time.monotonic() < end:
        stat = Path(f"/proc/{pid}/stat")
        if not stat.exists() or stat.read_text().split()[2] == "Z":
            return True
        time.sleep(0.05)
    return False


def test_a_child_left_behind_by_a_finished_probe_is_killed(bindir: Path, tmp_path: Path, monkeypatch):
    pids, marks = tmp_path / "pids", tmp_path / "marks"
    # the probe exits at once and well; its child sleeps, then would write on (the audit's case)
    make_tool(bindir, "lscpu", f"(sleep 2; echo late >> {marks}) & echo $! > {pids}\necho 'CPU(s): 4'")
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    start = time.monotonic()
    r = run_probe(Probe("lscpu", argv=("lscpu",)))
    assert time.monotonic() - start < 2, "the probe waited for its child"
    assert r.status == "ok" and r.data == b"CPU(s): 4\n" and not r.truncated
    assert _gone(int(pids.read_text()))
    time.sleep(2.5)
    assert not marks.exists(), "the probe's child outlived collect and kept writing"


def test_a_probe_that_prints_forever_stops_at_the_cap_and_says_so(bindir: Path, monkeypatch):
    make_tool(bindir, "dmesg", "exec yes 'kernel: the same line again'")
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    cap = 1 << 20
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.monotonic()
    r = runner.run_command(Probe("dmesg", argv=("dmesg",), timeout_s=20), max_bytes=cap)
    assert time.monotonic() - start < 10, "the probe ran to its time limit instead of stopping at the cap"
    assert r.status == "ok" and r.truncated and len(r.data) == cap
    assert "cut at 1 MiB" in r.reason
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 64 << 10  # KiB: bounded by the cap
    e = entry(r)
    assert e.truncated and e.bytes == cap and "cut at" in e.reason


def test_output_is_not_spooled_to_disk(bindir: Path, monkeypatch, tmp_path: Path):
    # temporary files would land in TMPDIR: nothing may appear there
    spool = tmp_path / "spool"
    spool.mkdir()
    monkeypatch.setenv("TMPDIR", str(spool))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    make_tool(bindir, "numactl", "head -c 3000000 /dev/zero | tr '\\0' x")
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    r = runner.run_command(Probe("numactl", argv=("numactl", "-H")), max_bytes=1 << 20)
    assert r.truncated and len(r.data) == 1 << 20
    assert list(spool.iterdir()) == []


def test_stderr_probe_keeps_its_data_and_a_chatty_stdout_is_capped_small(bindir: Path, monkeypatch):
    make_tool(bindir, "perf", "head -c 100000 /dev/zero | tr '\\0' o\necho 'counted' >&2")
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    r = run_probe(Probe("perf-stat", argv=("perf", "stat"), stream="stderr"))
    assert r.status == "ok" and r.data == b"counted\n" and not r.truncated


def test_a_cut_file_in_a_bundle_is_read_as_truncated(tmp_path: Path):
    from clusterdx.facts.ingest import ingest

    manifest = {"schema": "clusterdx/bundle/v1", "host": "n1", "scope": "host",
                "probes": [{"name": "sysctl", "kind": "command", "command": "sysctl -a",
                            "file": "commands/sysctl.txt", "status": "ok", "truncated": True,
                            "reason": "output cut at 32 MiB: the probe was stopped there (process group)"}]}
    path = tmp_path / "b.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name, data in (("b/manifest.json", json.dumps(manifest).encode()),
                           ("b/commands/sysctl.txt", b"vm.swappiness = 60\nkernel.numa_bal")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    res = ingest([path])
    rec = next(r for r in res.inputs if r.path.endswith("sysctl.txt"))
    assert rec.status == "partial" and "cut by the collector" in rec.reason, rec
