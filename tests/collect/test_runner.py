"""The runner: argument lists, time limits that kill the process group, statuses, stdin closed."""

from __future__ import annotations

import os
import time
from pathlib import Path

from clusterdx.facts.collect.probe import Probe
from clusterdx.facts.collect.runner import run_all, run_probe

from tests.collect.conftest import make_tool


def test_missing_tool_is_recorded_not_fatal():
    r = run_probe(Probe("x", argv=("clusterdx-no-such-tool",)))
    assert (r.status, r.data, r.exit_code) == ("missing", b"", None)
    assert "clusterdx-no-such-tool" in r.reason


def test_hung_tool_and_its_children_are_killed_at_the_timeout(bindir: Path, tmp_path: Path, monkeypatch):
    pids = tmp_path / "pids"
    # a child that would outlive its parent if only the parent were killed
    make_tool(bindir, "nvidia-smi", f"sleep 1000 & echo $! > {pids}\nwhile :; do sleep 1; done")
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    start = time.monotonic()
    r = run_probe(Probe("nvidia-smi-topo", argv=("nvidia-smi", "topo", "-m"), timeout_s=1.0))
    assert time.monotonic() - start < 5
    assert r.status == "timeout" and "1 s" in r.reason
    child = int(pids.read_text())
    for _ in range(50):
        if not Path(f"/proc/{child}").exists() or "Z" in Path(f"/proc/{child}/stat").read_text().split()[2]:
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the hung tool's child survived")


def test_after_a_timeout_the_rest_of_that_tools_probes_are_skipped(bindir: Path, monkeypatch):
    make_tool(bindir, "nvidia-smi", "exec sleep 1000")
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    probes = [Probe("a", argv=("nvidia-smi", "-q")), Probe("b", argv=("nvidia-smi", "topo", "-m")),
              Probe("c", files=("/proc/cmdline",), style="cat")]
    start = time.monotonic()
    a, b, c = run_all(probes, timeout_s=0.5)
    assert time.monotonic() - start < 4
    assert (a.status, b.status, c.status) == ("timeout", "skipped", "ok")
    assert "timed out" in b.reason


def test_stdin_is_closed_exit_code_stderr_and_duration_recorded(bindir: Path, monkeypatch):
    make_tool(bindir, "ibstat", "cat; echo out; echo 'ibpanic: something broke' >&2; exit 3")
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    r = run_probe(Probe("ibstat", argv=("ibstat",), timeout_s=5))
    assert r.status == "error" and r.exit_code == 3
    assert r.data == b"out\n"
    assert "ibpanic" in r.stderr and r.reason.startswith("exit 3: ibpanic")
    assert 0 <= r.duration_s < 5


def test_permission_denied_and_ok_exit_codes(bindir: Path, monkeypatch):
    make_tool(bindir, "dmesg", "echo 'dmesg: read kernel buffer failed: Operation not permitted' >&2; exit 1")
    make_tool(bindir, "systemd-detect-virt", "echo none; exit 1")
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    assert run_probe(Probe("dmesg", argv=("dmesg",))).status == "denied"
    r = run_probe(Probe("v", argv=("systemd-detect-virt",), ok_codes=frozenset({0, 1})))
    assert (r.status, r.data, r.exit_code) == ("ok", b"none\n", 1)


def test_commands_run_without_a_shell(bindir: Path, monkeypatch, tmp_path: Path):
    make_tool(bindir, "echoargs", 'for a in "$@"; do echo "[$a]"; done')
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    r = run_probe(Probe("e", argv=("echoargs", "$(touch x)", "a b;c")))
    assert r.data == b"[$(touch x)]\n[a b;c]\n"
    assert not (tmp_path / "x").exists()


def test_file_probes_grep_cat_and_sysctl_shapes(tmp_path: Path):
    (tmp_path / "cpu0").mkdir()
    (tmp_path / "cpu0" / "scaling_governor").write_text("performance\n")
    (tmp_path / "cpu0" / "empty").write_text("")
    grep = run_probe(Probe("g", files=(f"{tmp_path}/cpu*/*",)))
    assert grep.data == f"{tmp_path}/cpu0/scaling_governor:performance\n".encode()
    cat = run_probe(Probe("c", files=(f"{tmp_path}/cpu0/scaling_governor",), style="cat"))
    assert cat.data == b"performance\n"
    missing = run_probe(Probe("m", files=(f"{tmp_path}/nope/*",)))
    assert missing.status == "missing" and "not present" in missing.reason


def test_sysctl_falls_back_to_proc_sys_when_the_tool_is_missing(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    r = run_probe(Probe("s", argv=("sysctl", "kernel.numa_balancing"), files=("/proc/sys/kernel/numa_balancing",),
                        style="sysctl"))
    assert r.status == "ok"
    assert r.data.startswith(b"kernel.numa_balancing = ")
    assert "not installed" in r.reason
