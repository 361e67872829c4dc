"""clusterdx fleet from per-node JSON reports: the same answer as from the bundles, no re-parse."""

from __future__ import annotations

import json
from pathlib import Path

from clusterdx.engine import fleet
from clusterdx.engine.fleet import run_fleet, split_bundles
from clusterdx.engine.fleet_reports import read_report, report_node


def _report_of(bundle: Path, kb, out: Path) -> Path:
    from clusterdx.engine.diagnose import collect_paths, run_diagnosis

    report = run_diagnosis(collect_paths([bundle]), kb=kb, next_probes=False).report
    out.write_text(json.dumps(report.to_json_dict()))
    return out


def _fleet(tmp_path, make_node, *, drifted: str = "gpu-3"):
    nodes = []
    for i in range(5):
        host = f"gpu-{i}"
        nodes.append(make_node(host, numa=1 if host == drifted else 0,
                               nccl="2.21.5" if host == drifted else "2.23.4", tests=True,
                               busbw=0.5 if host == drifted else 1.0))
    return nodes


def test_reports_reduce_to_the_answer_the_bundles_give(tmp_path, make_node, kb, monkeypatch):
    bundles = _fleet(tmp_path, make_node)
    reports = tmp_path / "reports"
    reports.mkdir()
    for b in bundles:
        _report_of(b, kb, reports / f"{b.name}.json")
    from_bundles = run_fleet([tmp_path / "fleet"], jobs=1, kb=kb)

    def no_ingest(*a, **k):
        raise AssertionError("a report must not be parsed again")

    monkeypatch.setattr(fleet, "_ingest_bundle", no_ingest)
    from_reports = run_fleet([reports], jobs=1, kb=kb)
    assert [n.name for n in from_reports.nodes] == [n.name for n in from_bundles.nodes if n.name != "gpu-peer"]
    assert all(n.from_report and n.status == "ok" for n in from_reports.nodes)
    local = {h.id: h.nodes for h in from_reports.hypotheses if h.extent == "local"}
    assert local.get("numa-balancing-enabled") == ["gpu-3"]
    # outliers and drift come from the reports' digests, as from the bundles
    assert {(o.node, o.metric) for o in from_reports.outliers} == {(o.node, o.metric) for o in from_bundles.outliers}
    assert ("gpu-3", "nccltests.busbw") in {(o.node, o.metric) for o in from_reports.outliers}
    assert any(d.what == "NCCL version" and [x.node for x in d.differing] == ["gpu-3"] for d in from_reports.drift)
    # ... and the rules on outliers run on the report node (without its own facts), and the report says so
    assert any("not together with their own facts" in w for w in from_reports.warnings)
    straggler = {h.id: h.nodes for h in from_reports.hypotheses}.get("single-degraded-node-straggler")
    assert straggler == ["gpu-3"]


def test_a_report_beside_its_bundle_stands_for_it(tmp_path, make_node, kb):
    bundles = _fleet(tmp_path, make_node)
    _report_of(bundles[0], kb, tmp_path / "fleet" / "gpu-0-report.json")
    report = run_fleet([tmp_path / "fleet"], jobs=1, kb=kb)
    names = [n.name for n in report.nodes]
    assert names.count("gpu-0") == 1 and not any("@" in n for n in names)
    assert next(n for n in report.nodes if n.name == "gpu-0").from_report
    assert any("not diagnosed again" in w for w in report.warnings)


def test_a_report_is_known_by_content_not_name(tmp_path, make_node, kb):
    b = make_node("gpu-7")
    named_like = tmp_path / "report.json"
    named_like.write_text('{"schema": "something-else/1", "nodes": ["x"]}')
    assert read_report(named_like) is None
    odd = tmp_path / "gpu7.txt"
    _report_of(b, kb, odd)
    data = read_report(odd)
    assert data is not None and report_node(data, "fallback") == "gpu-7"
    assert [x.report for x in split_bundles([odd, named_like])] == [True, True]
    # the look-alike goes back to being an input: it is read, and listed, not dropped
    rep = run_fleet([odd, named_like], jobs=1, kb=kb)
    assert {n.name for n in rep.nodes} >= {"gpu-7"}
    assert any(i.path.endswith("report.json") for n in rep.nodes for i in n.inputs)


def test_a_damaged_report_costs_its_bad_parts_only(tmp_path, make_node, kb):
    b = make_node("gpu-9")
    p = _report_of(b, kb, tmp_path / "r.json")
    data = json.loads(p.read_text())
    data["hypotheses"].append({"id": 5, "confidence": "x"})
    data["hypotheses"].append({"id": "made-up", "confidence": "nan", "impact_pct": 1e400})
    data["fleet"]["metrics"].append({"metric": "nccltests.busbw", "value": "not a number"})
    data["gap"] = {"what": "nonsense"}
    p.write_text(json.dumps(data).replace("Infinity", "1e999"))
    other = make_node("gpu-8")
    rep = run_fleet([p, other], jobs=1, kb=kb)
    node = next(n for n in rep.nodes if n.name == "gpu-9")
    assert node.status == "ok" and node.from_report
    made_up = next(h for h in node.hypotheses if h.id == "made-up")
    assert made_up.confidence == 0.0 and made_up.impact_pct == 0.0


def _cli(*args):
    import os
    import subprocess
    import sys

    env = dict(os.environ, TYPER_USE_RICH="0")
    return subprocess.run([sys.executable, "-m", "clusterdx", *args], capture_output=True, text=True, env=env)


def test_fleet_exit_codes_fail_on_and_failed_nodes(tmp_path, make_node, kb):
    for i in range(3):
        make_node(f"gpu-{i}", numa=1 if i == 0 else 0)
    root = tmp_path / "fleet"
    ok = _cli("fleet", str(root), "-j", "1", "-f", "json")
    assert ok.returncode == 0, ok.stderr
    top = max(h["confidence_max"] for h in json.loads(ok.stdout)["hypotheses"])
    assert _cli("fleet", str(root), "-j", "1", "--fail-on", str(top)).returncode == 4
    assert _cli("fleet", str(root), "-j", "1", "--fail-on", str(min(1.0, top + 0.01))).returncode == 0
    bad = root / "gpu-broken"
    bad.mkdir()
    (bad / "garbage.bin").write_bytes(b"\x00\x01\x02 not any format\n")
    failed = _cli("fleet", str(root), "-j", "1", "-f", "json")
    assert failed.returncode == 8, failed.stderr
    assert any(n["status"] == "failed" and n["name"] == "gpu-broken" for n in json.loads(failed.stdout)["nodes"])


def test_check_fleet_takes_a_folder_of_nodes_and_names_the_unchecked(tmp_path, make_node, kb):
    from clusterdx.engine.checkrun import run_check
    from clusterdx.engine.site import SiteConfig
    from clusterdx.explainers import check_text

    for i in range(3):
        make_node(f"gpu-{i}", numa=1 if i == 2 else 0)
    root = tmp_path / "fleet"
    report = run_check(kb, [root], fleet=True, strict=False, site=SiteConfig(), jobs=2)
    assert {"gpu-0", "gpu-1", "gpu-2"} <= set(report.nodes)  # the folder is split into its nodes
    numa = next(i for i in report.items if i.cause == "numa-balancing-enabled")
    assert numa.status == "fail" and numa.failing_nodes == ["gpu-2"] and report.exit_code == 6
    assert not report.unchecked_nodes
    bad = root / "gpu-broken"
    bad.mkdir()
    (bad / "x.bin").write_bytes(b"\x00\x01 nothing here\n")
    report = run_check(kb, [root], fleet=True, strict=False, site=SiteConfig(), jobs=1)
    assert [u.split(":")[0] for u in report.unchecked_nodes] == ["gpu-broken"]
    text = check_text.render_text(report)
    assert "NOT CHECKED: 1 nodes" in text.splitlines()[1] and "gpu-broken" in text
    assert "gpu-broken" in check_text.render_html(report) and "gpu-2" in check_text.render_html(report)


def test_drift_text_shows_where_long_values_differ():
    import doctest

    from clusterdx.explainers import fleet_text

    assert doctest.testmod(fleet_text).failed == 0
    common = "BOOT_IMAGE=/vmlinuz-6.8.0 root=UUID=0f1e " + "console=ttyS0 " * 12
    shown = fleet_text.around_difference(common + "intel_iommu=on iommu=pt", common + "intel_iommu=on", 60)
    assert "iommu=pt" in shown and len(shown) == 60 and shown.startswith("…")
    assert fleet_text.around_difference("x" * 10, "y" * 10) == "x" * 10


def test_for_fleet_report_is_compact_says_so_and_reduces_alike(tmp_path, make_node, kb):
    b = make_node("gpu-5", numa=1, tests=True)
    full = _cli("diagnose", str(b), "-f", "json")
    compact = _cli("diagnose", str(b), "--for-fleet", "-o", str(tmp_path / "gpu-5.json"))
    assert full.returncode == 0 and compact.returncode == 0, compact.stderr
    assert "wrote" in compact.stderr
    small = json.loads((tmp_path / "gpu-5.json").read_text())
    big = json.loads(full.stdout)
    assert big["rules"] and big["not_evaluated"] and not small["rules"] and not small["not_evaluated"]
    assert any("--for-fleet" in w and "left out" in w for w in small["warnings"])
    assert [h["id"] for h in small["hypotheses"]] == [h["id"] for h in big["hypotheses"]]
    assert small["fleet"] == big["fleet"]
    assert _cli("diagnose", str(b), "--for-fleet", "-f", "text").returncode == 2
    (tmp_path / "full.json").write_text(full.stdout)
    rep = run_fleet([tmp_path / "gpu-5.json", tmp_path / "full.json"], jobs=1, kb=kb)
    assert len(rep.nodes) == 2 and all(n.from_report for n in rep.nodes)
    assert [n.hypotheses for n in rep.nodes][0] == [n.hypotheses for n in rep.nodes][1]
