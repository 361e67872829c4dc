"""Fleet recipes: the Kubernetes manifests against the Kubernetes schema, the Slurm script with a
fake srun (two fake nodes) on PATH."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

from tests.collect.conftest import ROOT, make_tool

K8S = sorted((ROOT / "deploy" / "k8s").glob("*.yaml"))
SLURM = ROOT / "deploy" / "slurm" / "collect.sh"


@pytest.mark.parametrize("path", K8S, ids=lambda p: p.name)
@pytest.mark.parametrize("version", ["1.28.0", "1.37.0"])
def test_k8s_manifest_validates_strictly(path: Path, version: str):
    import kubernetes_validate  # imported by the test, not at collection (its schemas cost ~40 ms)

    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    assert docs
    for doc in docs:
        kubernetes_validate.validate(doc, version, strict=True)


@pytest.mark.parametrize("path", K8S, ids=lambda p: p.name)
def test_k8s_manifest_privileges_are_minimal(path: Path):
    doc = yaml.safe_load(path.read_text())
    pod = doc["spec"]["template"]["spec"]
    assert not pod.get("hostNetwork") and not pod.get("hostIPC")
    for c in pod["containers"]:
        sc = c["securityContext"]
        assert sc["privileged"] is False and sc["allowPrivilegeEscalation"] is False
        assert sc["readOnlyRootFilesystem"] is True and sc["capabilities"] == {"drop": ["ALL"]}
        assert "resources" in c and "nvidia.com/gpu" not in str(c["resources"])
        host_mounts = {v["name"] for v in pod["volumes"] if "hostPath" in v}
        for m in c["volumeMounts"]:
            if m["name"] in host_mounts:
                assert m.get("readOnly") is True, m
    for word in ("hostPID", "runAsUser 0", "hostPath /sys", "no GPU is requested", "no hostNetwork"):
        assert word in (ROOT / "deploy" / "k8s" / "collect-daemonset.yaml").read_text()


@pytest.fixture
def fake_slurm(tmp_path: Path) -> tuple[Path, Path]:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "srun.log"
    # srun: log the arguments, then run the command once per fake node, as srun would per task
    make_tool(bindir, "srun", f"""echo "$@" >> {log}
while [ $# -gt 0 ]; do case "$1" in -N) shift 2 ;; -*) shift ;; *) break ;; esac; done
for node in $FAKE_NODES; do FAKE_HOSTNAME=$node "$@" || exit $?; done""")
    make_tool(bindir, "hostname", 'echo "$FAKE_HOSTNAME"')
    make_tool(bindir, "clusterdx", f'exec {sys.executable} -m clusterdx "$@"')
    return bindir, log


def _run(bindir: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}", FAKE_NODES="gpu-001 gpu-002",
               SLURM_JOB_ID="4242", SLURM_JOB_NUM_NODES="2", SLURM_NNODES="2", PYTHONPATH=str(ROOT))
    return subprocess.run(["bash", str(SLURM), *args], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=60)


@pytest.mark.slow  # the Slurm recipe through a fake srun, one collection per node (about 3 s)
def test_slurm_recipe_collects_one_bundle_per_node(fake_slurm, tmp_path: Path):
    bindir, log = fake_slurm
    out = tmp_path / "shared" / "bundles"
    proc = _run(bindir, tmp_path, "-o", str(out), "--", "--timeout", "5")
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["gpu-001.tar.gz", "gpu-002.tar.gz"]
    for p in out.iterdir():
        with tarfile.open(p) as tar:
            assert any(n.endswith("/manifest.json") for n in tar.getnames())
    args = log.read_text()
    assert "--ntasks-per-node=1" in args and "--overlap" in args and "-N 2" in args
    assert "collect --quiet -o" in args and "--timeout 5" in args


@pytest.mark.slow  # the Slurm recipe through a fake srun, one collection per node (about 4 s)
def test_slurm_recipe_inside_the_jobs_pyxis_container(fake_slurm, tmp_path: Path):
    bindir, log = fake_slurm
    out = tmp_path / "out"
    proc = _run(bindir, tmp_path, "-o", str(out), "--container-image", "nvcr.io/nvidia/pytorch:25.01-py3",
                "--jobid", "777")
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["gpu-001-container.tar.gz", "gpu-002-container.tar.gz"]
    args = log.read_text()
    assert "--container-image=nvcr.io/nvidia/pytorch:25.01-py3" in args
    assert f"--container-mounts={out}:{out}" in args and "--jobid=777 --overlap" in args


def test_slurm_recipe_help_and_bad_option(tmp_path: Path, fake_slurm):
    bindir, _ = fake_slurm
    assert "--container-image" in _run(bindir, tmp_path, "--help").stdout
    assert _run(bindir, tmp_path, "--bogus").returncode == 2


@pytest.mark.slow  # collect and diagnose on two fake nodes, then the fleet from the reports (about 15 s)
def test_slurm_recipe_diagnoses_on_each_node_and_fleet_reads_the_reports(fake_slurm, tmp_path: Path):
    import json

    bindir, log = fake_slurm
    out = tmp_path / "shared" / "bundles"
    proc = _run(bindir, tmp_path, "-o", str(out), "--diagnose", "--", "--timeout", "5")
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in out.iterdir())
    assert names == ["gpu-001.report.json", "gpu-001.tar.gz", "gpu-002.report.json", "gpu-002.tar.gz"]
    for host in ("gpu-001", "gpu-002"):
        report = json.loads((out / f"{host}.report.json").read_text())
        assert report["schema"] == "clusterdx.report/1" and "fleet" in report
    env = dict(os.environ, PYTHONPATH=str(ROOT), TYPER_USE_RICH="0")
    fleet = subprocess.run([sys.executable, "-m", "clusterdx", "fleet", str(out), "-j", "1", "-f", "json"],
                           capture_output=True, text=True, env=env, timeout=120)
    assert fleet.returncode in (0, 8), fleet.stderr
    nodes = json.loads(fleet.stdout)["nodes"]
    # the fake nodes are this machine, so both bundles name its host: two claims, kept apart
    assert sum(n["from_report"] for n in nodes) == 2
    assert all(n["from_report"] for n in nodes), "a bundle with a report beside it was diagnosed again"
