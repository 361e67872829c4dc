"""End to end: fake tools print recorded outputs, `clusterdx collect` bundles them, and
`clusterdx diagnose BUNDLE` parses every file with the right parser and finds the cause."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from clusterdx.facts.collect.bundle import Manifest

from tests.collect.conftest import FORMATS, cat_tool, make_tool, run_cli, run_process

SECRET = "hf_" + "A1b2C3d4" * 5


def fake_node(bindir: Path, tmp_path: Path) -> None:
    """A GPU node's tool set: H100 topology, cpupower, NUMA balancing on, NCCL env with a token."""
    env = tmp_path / "env.txt"
    env.write_text(FORMATS.joinpath("env-dump.txt").read_text() + f"HF_TOKEN={SECRET}\n"
                   f"PIP_INDEX_URL=https://bob:hunter2@pypi.example.com/simple\n")
    cat_tool(bindir, "nvidia-smi", {"topo -m": FORMATS / "nvidia-smi-topo-h100-8nic.txt",
                                    "-q": FORMATS / "nvidia-smi-q.txt", "-q -x": FORMATS / "nvidia-smi-q.xml"})
    cat_tool(bindir, "cpupower", {"frequency-info": FORMATS / "cpupower-frequency-info.txt",
                                  "idle-info": FORMATS / "cpupower-idle-info.txt"})
    cat_tool(bindir, "sysctl", {"kernel.numa_balancing": "kernel.numa_balancing = 1"})
    cat_tool(bindir, "lscpu", {"": FORMATS / "lscpu-x86-baremetal-hier.txt"})
    cat_tool(bindir, "numactl", {"--hardware": FORMATS / "numactl-hardware-x86.txt"})
    cat_tool(bindir, "ibstat", {"": FORMATS / "ibstat.txt"})
    cat_tool(bindir, "getconf", {"PAGE_SIZE": "4096"})
    cat_tool(bindir, "env", {"": env})
    make_tool(bindir, "systemd-detect-virt", "echo none; exit 1")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> tuple[Path, dict, dict]:
    tmp = tmp_path_factory.mktemp("node")
    bindir = tmp / "bin"
    bindir.mkdir()
    fake_node(bindir, tmp)
    out = tmp / "node.tar.gz"
    start = time.monotonic()
    proc = run_cli("collect", "-o", str(out), path=str(bindir))
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - start < 30
    report = run_cli("diagnose", str(out), "--format", "json")
    assert report.returncode == 0, report.stderr
    with tarfile.open(out) as tar:
        members = {m.name.split("/", 1)[1]: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
    return out, members, json.loads(report.stdout)


def test_manifest_is_valid_and_complete(bundle):
    out, members, _ = bundle
    manifest = Manifest.model_validate_json(members["manifest.json"])
    assert manifest.schema_ == "clusterdx/bundle/v1"
    assert manifest.scope in ("host", "container", "vm-guest") and manifest.host
    assert manifest.clusterdx_version and len(manifest.kb.sha256) == 64 and manifest.kb.rules > 0
    assert manifest.time.endswith("Z")
    by_name = {p.name: p for p in manifest.probes}
    topo = by_name["nvidia-smi-topo"]
    assert (topo.status, topo.exit_code, topo.file, topo.command) == (
        "ok", 0, "commands/nvidia-smi-topo.txt", "nvidia-smi topo -m")
    for p in manifest.probes:
        assert (p.file is not None) == (p.file in members), p.name
        if p.status in ("missing", "denied", "timeout", "skipped"):
            assert p.reason, p.name
    # every file in the bundle is explained by the manifest
    assert set(members) - {"manifest.json"} == {p.file for p in manifest.probes if p.file}
    assert sum(manifest.summary.values()) == len(manifest.probes)


def test_raw_outputs_are_kept_byte_for_byte(bundle):
    _, members, _ = bundle
    assert members["commands/nvidia-smi-topo.txt"] == (FORMATS / "nvidia-smi-topo-h100-8nic.txt").read_bytes()
    assert members["commands/cpupower-frequency-info.txt"] == (FORMATS / "cpupower-frequency-info.txt").read_bytes()
    assert members["commands/sysctl-numa-balancing.txt"] == b"kernel.numa_balancing = 1\n"


def test_secrets_are_redacted_in_the_bundle(bundle):
    _, members, _ = bundle
    env = members["commands/env.txt"].decode()
    assert SECRET not in env and "hunter2" not in env
    assert "HF_TOKEN=<redacted>" in env and "NCCL_IB_HCA=mlx5_0" in env


# formats that need the command to be told apart (tiny outputs): see test_tiny_outputs_parse_with_their_command
_BY_COMMAND_ONLY = {"getconf-page-size", "virt-detect"}


def test_diagnose_parses_every_file_with_its_format(bundle):
    _, members, report = bundle
    manifest = json.loads(members["manifest.json"])
    inputs = {i["path"].split("!/", 1)[1].split("/", 1)[1]: i for i in report["inputs"] if "!/" in i["path"]}
    checked = 0
    for p in manifest["probes"]:
        if not p["file"] or not p["format"] or p["format"] in _BY_COMMAND_ONLY:
            continue
        rec = inputs[p["file"]]
        assert (rec["format"], rec["status"]) in {(p["format"], "parsed"), (p["format"], "partial")}, rec
        assert rec["node"] == manifest["host"] and rec["scope"] == manifest["scope"]
        checked += 1
    assert checked >= 8


def test_tiny_outputs_parse_with_their_command(bundle):
    _, members, report = bundle
    formats = {i["path"].rsplit("/", 1)[-1]: i["format"] for i in report["inputs"]}
    assert formats["getconf-page-size.txt"] == "getconf-page-size"
    assert formats["systemd-detect-virt.txt"] == "virt-detect"


def test_diagnosis_finds_numa_balancing(bundle):
    _, _, report = bundle
    ids = [h["id"] for h in report["hypotheses"]]
    assert "numa-balancing-enabled" in ids, ids


def test_no_redact_keeps_secrets(bindir: Path, tmp_path: Path):
    cat_tool(bindir, "env", {"": f"HF_TOKEN={SECRET}"})
    out = tmp_path / "raw.tar.gz"
    proc = run_cli("collect", "--no-redact", "-q", "-o", str(out), path=str(bindir))
    assert proc.returncode == 0, proc.stderr
    with tarfile.open(out) as tar:
        env = next(tar.extractfile(m).read() for m in tar.getmembers() if m.name.endswith("commands/env.txt"))
        manifest = json.loads(next(tar.extractfile(m).read() for m in tar.getmembers()
                                   if m.name.endswith("manifest.json")))
    assert SECRET.encode() in env
    assert manifest["collector"]["redacted"] is False


def test_pid_captures_the_process_environment_redacted(tmp_path: Path):
    env = {"PATH": os.environ["PATH"], "NCCL_IB_HCA": "mlx5_0,mlx5_1", "WANDB_API_KEY": "s3cr3tvalue"}
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "--token", "abc"],
                            env=env, stdin=subprocess.DEVNULL)
    try:
        out = tmp_path / "pid.tar.gz"
        res = run_cli("collect", "-q", "--pid", str(proc.pid), "-o", str(out))
        assert res.returncode == 0, res.stderr
        with tarfile.open(out) as tar:
            files = {m.name.split("/", 1)[1]: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
    finally:
        proc.kill()
        proc.wait()
    environ = files[f"process/{proc.pid}/proc-environ.bin"]
    assert b"NCCL_IB_HCA=mlx5_0,mlx5_1\0" in environ and b"WANDB_API_KEY=<redacted>\0" in environ
    assert b"s3cr3tvalue" not in environ
    assert b"--token\0<redacted>\0" in files[f"process/{proc.pid}/proc-cmdline.bin"]
    assert b"Cpus_allowed_list:" in files[f"process/{proc.pid}/proc-status.txt"]
    report = json.loads(run_cli("diagnose", str(out), "--format", "json").stdout)
    formats = {i["path"].rsplit("/", 1)[-1]: i["format"] for i in report["inputs"]}
    assert formats["proc-environ.bin"] == "proc-environ" and formats["proc-status.txt"] == "proc-status"


def test_process_name_finds_the_process(tmp_path: Path):
    script = tmp_path / "clusterdx-fake-rank.py"
    script.write_text("import time\ntime.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, str(script)], stdin=subprocess.DEVNULL)
    try:
        time.sleep(0.2)
        out = tmp_path / "name.tar.gz"
        res = run_cli("collect", "-q", "--process-name", script.name, "-o", str(out))
        assert res.returncode == 0, res.stderr
        with tarfile.open(out) as tar:
            names = tar.getnames()
        missing = run_cli("collect", "-q", "--process-name", "clusterdx-nothing-by-this-name",
                          "-o", str(tmp_path / "none.tar.gz"))
    finally:
        proc.kill()
        proc.wait()
    assert any(n.endswith(f"process/{proc.pid}/proc-status.txt") for n in names)
    assert missing.returncode == 0 and "no process named" in missing.stderr


def test_unknown_heavy_probe_is_a_usage_error(tmp_path: Path):
    proc = run_process("collect", "--heavy", "perf-recrod", "-o", str(tmp_path / "x.tar.gz"))
    assert proc.returncode == 2 and "perf-record" in proc.stderr
    assert not (tmp_path / "x.tar.gz").exists()


def test_hung_nvidia_smi_is_killed_and_the_bundle_still_written(bindir: Path, tmp_path: Path):
    make_tool(bindir, "nvidia-smi", "exec /bin/sleep 100000")
    cat_tool(bindir, "lscpu", {"": FORMATS / "lscpu-x86-baremetal-hier.txt"})
    out = tmp_path / "hung.tar.gz"
    start = time.monotonic()
    proc = run_cli("collect", "--timeout", "1", "-o", str(out), path=str(bindir))
    assert time.monotonic() - start < 15
    assert proc.returncode == 0, proc.stderr
    with tarfile.open(out) as tar:
        manifest = json.loads(next(tar.extractfile(m).read() for m in tar.getmembers()
                                   if m.name.endswith("manifest.json")))
    status = {p["name"]: (p["status"], p["reason"]) for p in manifest["probes"]}
    assert status["nvidia-smi-topo"][0] == "timeout" and "killed after 1 s" in status["nvidia-smi-topo"][1]
    assert {status[n][0] for n in ("nvidia-smi-q", "nvidia-smi-q-xml", "nvidia-smi-nvlink-status")} == {"skipped"}
    assert status["lscpu"][0] == "ok"
