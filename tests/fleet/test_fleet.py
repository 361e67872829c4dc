"""clusterdx fleet: splitting into nodes, shared and local causes, outliers, drift, failures, parity."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from clusterdx.engine import fleet
from clusterdx.engine.fleet import Bundle, group_facts, run_fleet, split_bundles
from clusterdx.engine.fleet_report import FleetReport
from tests.fleet.conftest import FORMATS

ROOT = Path(__file__).parents[2]


def _hyp(report: FleetReport, cause: str):
    return next((h for h in report.hypotheses if h.id == cause), None)


def test_folder_with_a_subfolder_per_node_is_split(tmp_path, make_node, kb):
    for i in range(3):
        make_node(f"gpu-{i}")
    (tmp_path / "fleet" / "job-notes.txt").write_text("kernel.numa_balancing = 0\n")
    bundles = split_bundles([tmp_path / "fleet"])
    assert [b.name for b in bundles] == ["gpu-0", "gpu-1", "gpu-2", "fleet"]
    report = run_fleet([tmp_path / "fleet"], jobs=1, kb=kb)
    names = [n.name for n in report.nodes]
    assert {"gpu-0", "gpu-1", "gpu-2"} <= set(names)
    node = next(n for n in report.nodes if n.name == "gpu-1")
    assert node.status == "ok" and node.bundles == ["gpu-1"]
    assert {Path(i.path).name for i in node.inputs} >= {"sysctl-a.txt", "cpupower.txt", "nccl.log"}


def test_separate_paths_are_one_node_each(make_node, kb):
    paths = [make_node(f"n{i}") for i in range(2)]
    assert [b.name for b in split_bundles(paths)] == ["n0", "n1"]
    (paths[0] / "commands").mkdir()
    (paths[0] / "files").mkdir()
    assert split_bundles([paths[0]]) == [Bundle("n0", (str(paths[0]),))]  # an extracted collect bundle


def test_per_rank_nccl_log_over_two_hosts_names_both(tmp_path, kb):
    log = tmp_path / "job-nccl.log"
    log.write_text((FORMATS / "nccl-debug-info.log").read_text())
    report = run_fleet([log], jobs=1, kb=kb)
    names = {n.name for n in report.nodes}
    assert {"gpu-h100-017", "gpu-h100-018"} <= names
    assert all(n.status == "ok" for n in report.nodes if n.name.startswith("gpu-h100"))


def test_rank_only_facts_follow_the_host_of_their_rank():
    from clusterdx.facts.model.env import EnvVar
    from clusterdx.facts.model.nccl import NcclVersion

    facts = [NcclVersion(node="hostb", rank=9, version="2.23.4", version_num=22304),
             EnvVar(node="node", rank=9, name="NCCL_DEBUG", value="INFO"),
             EnvVar(node="node", name="HOME", value="/root")]
    groups = group_facts(facts, "bundle")
    assert [f.name for f in groups["hostb"] if f.fact_type == "env.var"] == ["NCCL_DEBUG"]
    assert [f.name for f in groups["bundle"]] == ["HOME"]


def test_cluster_wide_and_local_causes(make_node, kb):
    for i in range(6):
        d = make_node(f"gpu-{i}", governor="powersave", numa=1 if i == 3 else 0, peer=f"gpu-{(i + 1) % 6}")
    report = run_fleet([d.parent], jobs=1, kb=kb)
    gov = _hyp(report, "cpu-governor-epp-powersave")
    numa = _hyp(report, "numa-balancing-enabled")
    assert gov is not None and gov.extent == "cluster-wide" and gov.node_count == 6
    assert numa is not None and numa.extent == "local" and numa.nodes == ["gpu-3"]
    assert report.hypotheses[0].extent == "cluster-wide"


def test_half_the_busbw_among_eight_is_an_outlier(make_node, kb):
    for i in range(8):
        d = make_node(f"gpu-{i}", tests=True, busbw=0.5 if i == 5 else 1.0 + i * 0.002, peer=f"gpu-{(i + 1) % 8}")
    report = run_fleet([d.parent], jobs=1, kb=kb)
    busbw = [o for o in report.outliers if o.metric == "nccltests.busbw"]
    assert [(o.node, o.direction) for o in busbw] == [("gpu-5", "low")]
    assert busbw[0].deviation_pct == pytest.approx(-50.0, abs=1.0)
    straggler = _hyp(report, "single-degraded-node-straggler")
    assert straggler is not None and straggler.nodes == ["gpu-5"] and straggler.extent == "local"
    assert next(n for n in report.nodes if n.name == "gpu-5").outliers == 1


def test_nccl_version_drift_on_one_of_five(make_node, kb):
    for i in range(5):
        d = make_node(f"gpu-{i}", nccl="2.18.3" if i == 2 else "2.23.4", peer=f"gpu-{(i + 1) % 5}")
    report = run_fleet([d.parent], jobs=1, kb=kb)
    drift = {x.what: x for x in report.drift}
    nccl = drift["NCCL version"]
    assert nccl.majority_value == "2.23.4" and nccl.majority_nodes == 4 and nccl.nodes_total == 5
    assert [(x.node, x.value) for x in nccl.differing] == [("gpu-2", "2.18.3")]
    soft = _hyp(report, "node-software-drift")
    assert soft is not None and soft.nodes == ["gpu-2"]


def _crash_or_raise(real):
    def fake(bundle: Bundle, redact: bool, *rest):
        if bundle.name == "crash":
            os._exit(3)
        if bundle.name == "raise":
            raise RuntimeError("parser blew up")
        if bundle.name == "hang":
            time.sleep(60)
        return real(bundle, redact, *rest)
    return fake


@pytest.mark.slow  # waits out a hung worker's timeout (about 5 s)
@pytest.mark.skipif(sys.platform != "linux", reason="the fault injection relies on fork")
def test_broken_bundles_are_reported_while_the_others_finish(tmp_path, make_node, kb, monkeypatch):
    for i in range(4):
        make_node(f"gpu-{i}", peer=f"gpu-{(i + 1) % 4}")
    root = tmp_path / "fleet"
    for bad in ("crash", "raise", "hang"):
        (root / bad).mkdir()
        (root / bad / "sysctl.txt").write_text("kernel.numa_balancing = 0\n")
    (root / "junk").mkdir()
    (root / "junk" / "blob.bin").write_bytes(b"\x00\x01garbage" * 50)
    monkeypatch.setattr(fleet, "_ingest_bundle", _crash_or_raise(fleet._ingest_bundle))
    report = run_fleet([root], jobs=2, kb=kb, task_timeout=4.0)
    status = {n.name: n.status for n in report.nodes}
    assert status == {"gpu-0": "ok", "gpu-1": "ok", "gpu-2": "ok", "gpu-3": "ok", "crash": "crashed",
                      "raise": "failed", "hang": "timeout", "junk": "failed"}
    errors = {n.name: n.error for n in report.nodes}
    assert "parser blew up" in errors["raise"] and "no input yielded facts" in errors["junk"]
    assert report.summary.diagnosed == 4 and report.summary.failed == 4


def _stable(report: FleetReport) -> dict:
    data = report.to_json_dict()
    data["summary"].pop("seconds")
    data["summary"].pop("jobs")
    for n in data["nodes"]:
        n.pop("seconds")
    return data


def test_two_workers_give_the_same_report_as_one(make_node, kb):
    for i in range(6):
        d = make_node(f"gpu-{i}", numa=1 if i == 1 else 0, nccl="2.21.5" if i == 4 else "2.23.4", tests=True,
                      busbw=0.5 if i == 0 else 1.0, peer=f"gpu-{(i + 1) % 6}")
    one = run_fleet([d.parent], jobs=1, kb=kb)
    two = run_fleet([d.parent], jobs=2, kb=kb)
    assert two.summary.jobs == 2
    assert _stable(one) == _stable(two)


def test_json_output_validates_against_the_published_schema(make_node):
    for i in range(4):
        d = make_node(f"gpu-{i}", nccl="2.18.3" if i == 0 else "2.23.4", peer=f"gpu-{(i + 1) % 4}")
    from tests.clirun import cli

    def run(*args: str) -> str:  # in this process: the slow test below runs the real processes
        ran = cli(*args, cwd=ROOT, env={"TYPER_USE_RICH": "0"})
        assert ran.returncode == 0, ran.stderr
        return ran.stdout

    schema = json.loads(run("schema", "fleet"))
    report = json.loads(run("fleet", str(d.parent), "-j", "2", "--format", "json"))
    jsonschema.validate(report, schema)
    assert report["schema"] == "clusterdx.fleet/1"
    assert {n["name"] for n in report["nodes"]} >= {f"gpu-{i}" for i in range(4)}
    assert all("inputs" in n and "status" in n for n in report["nodes"])
    assert all(isinstance(h["nodes"], list) for h in report["hypotheses"])
    text = run("fleet", str(d.parent), "-j", "1")
    assert "Configuration drift" in text and "gpu-0: 2.18.3" in text


def test_committed_fleet_schema_is_current():
    committed = json.loads((ROOT / "docs" / "fleet.schema.json").read_text())
    assert committed == json.loads(json.dumps(FleetReport.model_json_schema(by_alias=True)))


@pytest.mark.slow  # two fleet runs as subprocesses, with workers (about 6 s)
def test_markdown_and_html_output_name_the_drifted_node_and_escape_inputs(make_node):
    for i in range(4):
        d = make_node(f"gpu-{i}", nccl="2.18.3" if i == 0 else "2.23.4", peer=f"gpu-{(i + 1) % 4}")
    env = dict(os.environ, TYPER_USE_RICH="0")
    run = lambda *a: subprocess.run([sys.executable, "-m", "clusterdx", *a], capture_output=True, text=True,  # noqa: E731
                                    cwd=ROOT, env=env, check=True).stdout
    md = run("fleet", str(d.parent), "-j", "1", "--format", "markdown")
    assert md.startswith("# Fleet diagnosis: 4 nodes")
    assert "## Configuration drift" in md and "gpu-0: 2.18.3" in md
    page = run("fleet", str(d.parent), "-j", "1", "--format", "html")
    assert page.startswith("<!doctype html>") and "gpu-0: 2.18.3" in page
    assert "<script" not in page


def test_nic_names_moved_in_the_topo_legend_are_drift():
    from clusterdx.engine.drift import find_drift, node_config
    from tests.parsers.helpers import parse_text

    text = (FORMATS / "nvidia-smi-topo-h100-8nic.txt").read_text()
    # the first and the fifth rail NIC swap names (cards re-enumerated after a repair)
    swapped = text.replace("NIC0: mlx5_0", "NIC0: mlx5_X").replace("NIC4: mlx5_6", "NIC4: mlx5_0").replace(
        "NIC0: mlx5_X", "NIC0: mlx5_6")
    assert swapped != text
    configs = {f"n{i}": node_config(parse_text("nvidia-smi-topo", swapped if i == 0 else text).facts)
               for i in range(4)}
    drifts = find_drift(configs)
    assert any(d.what == "GPU/NIC topology" and [x[0] for x in d.differing] == ["n0"] for d in drifts)


def test_two_bundles_claiming_one_host_are_both_kept_and_reported(tmp_path, kb):
    """Before, 16 folders in gave 14 nodes out with no word: bundles that name the same host were
    merged. Now both are kept, each diagnosed on its own, and the report says so."""
    from tests.fleet.conftest import write_node

    root = tmp_path / "fleet"
    write_node(root, "gpu-0")
    a = write_node(root, "gpu-1", numa=1)
    b = write_node(root, "gpu-1-copy", numa=0)
    (b / "manifest.json").write_text('{"host": "gpu-1", "scope": "host"}')  # a mislabelled bundle
    report = run_fleet([root], jobs=1, kb=kb)
    names = sorted(n.name for n in report.nodes if n.name != "gpu-peer")  # the NCCL logs' peer
    assert names == ["gpu-0", "gpu-1@gpu-1", "gpu-1@gpu-1-copy"]
    claimed = {n.name: n for n in report.nodes if n.host}
    assert {n.host for n in claimed.values()} == {"gpu-1"}
    assert all(n.status == "ok" and len(n.bundles) == 1 for n in claimed.values())
    assert "gpu-1-copy" in claimed["gpu-1@gpu-1"].conflict
    assert any("claim host gpu-1" in w and "never merged" in w for w in report.warnings)
    # each claim keeps its own evidence: numa balancing is on in one bundle only
    on = [n.name for n in report.nodes for h in n.hypotheses if h.id == "numa-balancing-enabled"]
    assert on == ["gpu-1@gpu-1"]
    assert a.name == "gpu-1"


def test_distinct_hosts_raise_no_conflict(make_node, kb):
    paths = [make_node(f"n{i}") for i in range(2)]
    report = run_fleet(paths, jobs=1, kb=kb)
    assert not any("claim host" in w for w in report.warnings)
    assert all(n.host == "" and n.conflict == "" for n in report.nodes)
