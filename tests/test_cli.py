"""The command line as a user runs it: help, diagnose on files, bad inputs, JSON schema, live mode."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from tests.clirun import cli as run_here

ROOT = Path(__file__).parents[1]
FORMATS = ROOT / "tests" / "fixtures" / "formats"


def process(*args: str, timeout: float = 120, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``python -m clusterdx ARGS`` as a real process."""
    return subprocess.run([sys.executable, "-m", "clusterdx", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd or ROOT)


def cli(*args: str, timeout: float = 120, cwd: Path | None = None):
    """The same command run in this process (tests/clirun.py): the tests below are about what
    the commands print and return, not about the process, which test_help_lists_commands and
    the slow tests keep."""
    return run_here(*args, timeout=timeout, cwd=cwd or ROOT)


def test_help_lists_commands():
    proc = process("--help")
    assert proc.returncode == 0
    for word in ("diagnose", "formats", "explain", "kb"):
        assert word in proc.stdout


@pytest.mark.slow  # subprocesses and a full JSON Schema validation (about 6 s)
def test_json_report_validates_against_generated_schema(tmp_path):
    schema = json.loads(process("schema", "report").stdout)
    bundle = tmp_path / "ticket"
    bundle.mkdir()
    for name in ("lscpu-x86-baremetal-hier.txt", "sysfs-cpufreq-cpuidle.txt", "nccl-debug-info.log",
                 "perf-report-smmu.txt"):
        (bundle / name).write_bytes((FORMATS / name).read_bytes())
    (bundle / "sysctl.txt").write_text("kernel.numa_balancing = 1\n")
    proc = process("diagnose", str(bundle), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    jsonschema.validate(report, schema)
    assert report["schema"] == "clusterdx.report/1"
    assert len(report["inputs"]) == 5
    ids = [h["id"] for h in report["hypotheses"]]
    assert "numa-balancing-enabled" in ids
    ranks = [h["rank"] for h in report["hypotheses"]]
    assert ranks == sorted(ranks)
    for h in report["hypotheses"]:
        assert 0 <= h["confidence"] <= 1
        for key in ("id", "title", "rank", "impact_pct", "evidence", "remediation", "verification", "references"):
            assert key in h
    ev = report["hypotheses"][ids.index("numa-balancing-enabled")]["evidence"][0]
    assert ev["facts"][0]["source"].endswith("sysctl.txt:1")


def test_bad_inputs_never_abort_the_report(tmp_path):
    (tmp_path / "junk.bin").write_bytes(bytes(range(256)) * 40)
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "notes.txt").write_text("the job got slower after the upgrade\n")
    text = (FORMATS / "nccl-tests-allreduce.txt").read_text()
    (tmp_path / "truncated.txt").write_text(text[: len(text) // 2])
    (tmp_path / "sysctl.txt").write_text("kernel.numa_balancing = 1\r\n")
    proc = cli("diagnose", str(tmp_path), "-f", "json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    status = {Path(i["path"]).name: i["status"] for i in report["inputs"]}
    assert status["junk.bin"] == "unrecognized"
    assert status["empty.txt"] == "unrecognized"
    # a statement is read as the user's own words (reported facts), not left unrecognized
    assert status["notes.txt"] == "parsed"
    assert {Path(i["path"]).name: i["format"] for i in report["inputs"]}["notes.txt"] == "prose"
    assert status["sysctl.txt"] == "parsed"
    assert status["truncated.txt"] in ("parsed", "partial")
    assert any(h["id"] == "numa-balancing-enabled" for h in report["hypotheses"])


def test_missing_path_is_a_usage_error():
    proc = cli("diagnose", "/nonexistent/path")
    assert proc.returncode == 2
    assert "no such file" in proc.stderr


def test_live_diagnosis_of_this_machine_completes():
    proc = cli("diagnose", "-f", "json", timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["target"] == ["<this machine>"]
    assert any(i["path"].startswith("live:") for i in report["inputs"])
    # nvidia-smi is absent here: reported, not fatal
    assert any("nvidia-smi" in i["path"] and i["status"] in ("skipped", "error", "parsed") for i in report["inputs"])


def test_secrets_redacted_unless_asked(tmp_path):
    (tmp_path / "env.txt").write_text("NCCL_IB_HCA=mlx5_0\nHF_TOKEN=hf_abcdefghijklmnop\nPATH=/usr/bin\n")
    shown = cli("diagnose", str(tmp_path), "-f", "json", "-v")
    assert "hf_abcdefghijklmnop" not in shown.stdout
    kept = cli("diagnose", str(tmp_path), "-f", "json", "--no-redact")
    assert kept.returncode == 0
    assert json.loads(kept.stdout)["redacted"] is False


def test_formats_lists_every_parser_with_its_command():
    proc = cli("formats", "-f", "json")
    rows = json.loads(proc.stdout)
    names = {r["name"] for r in rows}
    assert {"lscpu", "sysctl", "nccl-debug", "nccl-tests", "perf-report"} <= names
    assert all(r["command"] and r["facts"] for r in rows)


def test_explain_unknown_id_suggests():
    proc = cli("explain", "numa-balancing-enable")
    assert proc.returncode == 2
    assert "numa-balancing-enabled" in proc.stderr


def test_import_engine_from_outside_repo_fails(tmp_path):
    proc = subprocess.run([sys.executable, "-c", "import engine"], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode != 0
    proc = subprocess.run([sys.executable, "-c", "import clusterdx.engine.durable"], capture_output=True, text=True,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_committed_schema_is_current():
    committed = json.loads((ROOT / "docs" / "report.schema.json").read_text())
    assert committed == json.loads(cli("schema", "report").stdout)


def test_version_and_short_help():
    proc = cli("--version")
    assert proc.returncode == 0 and proc.stdout.startswith("clusterdx ")
    for args in (["-h"], ["diagnose", "-h"], ["kb", "-h"], ["kb", "lint", "-h"], ["triage", "-h"], ["check", "-h"]):
        assert cli(*args).returncode == 0, args


def test_help_shows_no_python_types_and_every_kb_subcommand():
    for args in (["diagnose", "-h"], ["triage", "-h"], ["fleet", "-h"], ["collect", "-h"], ["check", "-h"],
                 ["kb", "graph", "-h"]):
        out = cli(*args).stdout
        for word in ("<list[", "<path>", "<str>", "<float", "<int"):
            assert word not in out, (args, word)
    kb = cli("kb", "-h").stdout
    for sub in ("lint", "test", "eval", "list", "show", "graph", "new"):
        assert f"  {sub} " in kb
    assert "..." not in kb.split("Commands:")[1]


BUNDLE = ROOT / "kb" / "cases" / "cp-stacked-cstates-numa-balancing" / "input"


@pytest.mark.parametrize("args, words", [
    (["diagnose", str(BUNDLE), "-o", "/nonexistent-dir/r.md"], "no folder"),
    (["triage", str(BUNDLE), "-o", "/nonexistent-dir/r.md"], "no folder"),
    (["check", str(BUNDLE), "-o", "/nonexistent-dir/r.md"], "no folder"),
    (["fleet", str(BUNDLE), "-o", "/nonexistent-dir/r.md"], "no folder"),
    (["diagnose", str(BUNDLE), "--scope", "foo"], "unknown scope"),
    (["diagnose", str(BUNDLE), "--reference", "no-such-system"], "bad --reference"),
])
def test_user_errors_are_one_line_and_exit_2(args, words):
    proc = cli(*args)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and words in lines[0]


def test_malformed_reference_yaml_is_a_usage_error(tmp_path):
    bad = tmp_path / "ref.yaml"
    bad.write_text("name: x\nbusbw: [1, 2\n")
    for cmd in ("diagnose", "triage"):
        proc = cli(cmd, str(BUNDLE), "--reference", str(bad))
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert proc.stderr.startswith("clusterdx: bad --reference")


def test_output_format_follows_the_extension_and_says_where(tmp_path):
    for name, check in (("r.html", lambda t: t.lstrip().startswith("<!DOCTYPE html")),
                        ("r.json", lambda t: json.loads(t)["schema"] == "clusterdx.report/1"),
                        ("r.md", lambda t: t.startswith("#") or "**" in t)):
        out = tmp_path / name
        proc = cli("diagnose", str(BUNDLE), "-o", str(out))
        assert proc.returncode == 0, proc.stderr
        assert check(out.read_text()), name
        assert f"wrote {out}" in proc.stderr
    # -f still wins over the extension
    out = tmp_path / "forced.html"
    cli("diagnose", str(BUNDLE), "-f", "json", "-o", str(out))
    assert json.loads(out.read_text())["schema"] == "clusterdx.report/1"
