"""The run's time limit: a partial report that says what was not finished, never a hang or nothing."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from clusterdx.engine import backstop
from clusterdx.engine.backstop import Outcome, supervised
from clusterdx.engine.diagnose import collect_paths, run_diagnosis
from clusterdx.engine.report import Report
from clusterdx.facts.deadline import Deadline
from clusterdx.facts.ingest import ingest

CASE = Path(__file__).parents[1] / "kb" / "cases" / "cp-stacked-cstates-numa-balancing" / "input"
FORK = pytest.mark.skipif(not hasattr(os, "fork"), reason="the backstop forks")


def after(checks: int, seconds: float = 10.0) -> Deadline:
    """A deadline that passes at its ``checks``-th look: a run stopped part-way, on cue."""
    calls = [-1]  # the first look is the deadline's own, when it is made

    def clock() -> float:
        calls[0] += 1
        return 0.0 if calls[0] <= checks else seconds + 1

    return Deadline(seconds, clock=clock)


def folder(tmp_path: Path, n: int) -> Path:
    d = tmp_path / "ticket"
    d.mkdir()
    for i in range(n):
        (d / f"sysctl{i:02d}.txt").write_text(f"vm.swappiness = {i}\n")
    return d


def test_no_limit_never_passes():
    d = Deadline(0)
    assert not d.passed() and d.remaining() is None and not d.incomplete


def test_passed_deadline_reads_nothing_but_accounts_for_every_input(tmp_path):
    d = folder(tmp_path, 5)
    dl = after(0)
    res = ingest([d], deadline=dl)
    assert len(res.inputs) == 5 and not res.facts
    assert {r.status for r in res.inputs} == {"skipped"}
    assert all("time limit" in r.reason and "--timeout" in r.reason for r in res.inputs)
    assert sorted(dl.inputs_not_read) == sorted(r.path for r in res.inputs)
    assert dl.stage == "reading inputs"


def test_deadline_mid_folder_keeps_what_was_read(tmp_path):
    d = folder(tmp_path, 6)
    dl = after(3)
    res = ingest([d], deadline=dl)
    statuses = [r.status for r in res.inputs]
    assert len(statuses) == 6
    assert "parsed" in statuses and "skipped" in statuses
    assert statuses.index("skipped") > 0 and statuses[statuses.index("skipped"):] == ["skipped"] * statuses.count("skipped")
    assert len(dl.inputs_not_read) == statuses.count("skipped")


def test_names_not_read_are_shown_escaped_and_the_report_is_still_json(tmp_path):
    # the hostile bench's case: a file whose name is not UTF-8, left unread by the deadline
    d = tmp_path / "ticket"
    d.mkdir()
    bad = os.fsdecode(b"env-\xff\xfe.txt")
    (d / bad).write_text("vm.swappiness = 60\n")
    dl = after(0)
    target = collect_paths([d], deadline=dl)
    shown = [r.path for r in target.inputs]
    assert dl.inputs_not_read == shown and len(shown) == 1 and shown[0].endswith("env-\\xff\\xfe.txt")
    diag = run_diagnosis(target, deadline=dl)
    from clusterdx.explainers.json_out import render
    assert json.loads(render(diag.report))["incomplete"]["inputs_not_read"] == shown


def test_deadline_reaches_transcript_segments():
    from clusterdx.facts.document import Document
    from clusterdx.facts.ingest import ingest_documents

    dl = after(0)
    res = ingest_documents([Document.from_text("vm.swappiness = 60\n", name="a.txt"),
                            Document.from_text("vm.swappiness = 10\n", name="b.txt")], deadline=dl)
    assert [r.status for r in res.inputs] == ["skipped", "skipped"]
    assert dl.inputs_not_read == ["a.txt", "b.txt"]


def test_diagnosis_past_its_deadline_is_partial_and_says_so(kb):
    target = collect_paths([CASE])
    dl = after(0)  # passed before derivation starts
    report = run_diagnosis(target, kb=kb, deadline=dl).report
    assert report.incomplete is not None
    assert report.incomplete.stage == "deriving facts"
    assert report.incomplete.derivers_not_run and report.incomplete.nodes_not_evaluated
    assert "next probes" in report.incomplete.stages_skipped and report.next_probes == []
    assert any(w.startswith("partial report") for w in report.warnings)
    assert {r.outcome for r in report.rules} == {"not_evaluated"}
    jsonschema.validate(report.to_json_dict(), Report.model_json_schema(by_alias=True))
    # a finished run says nothing of the kind
    done = run_diagnosis(target, kb=kb, deadline=Deadline(300)).report
    assert done.incomplete is None and done.hypotheses


def test_deadline_between_rule_sessions(kb):
    target = collect_paths([CASE], node="n1")
    other = collect_paths([CASE], node="n2")
    both = type(target)(target.inputs + other.inputs, target.facts + other.facts, target.paths)
    from clusterdx.facts.derive import DERIVERS

    # derivers: one check each for the target; the engine's first session runs, the second not
    dl = after(len(DERIVERS) + 1)
    report = run_diagnosis(both, kb=kb, deadline=dl, next_probes=False).report
    assert report.incomplete is not None and report.incomplete.stage == "evaluating rules"
    assert report.incomplete.nodes_not_evaluated == ["n2"]
    assert any(r.outcome != "not_evaluated" for r in report.rules)


# -- the hard backstop ------------------------------------------------------------------------


@FORK
def test_backstop_returns_the_work_when_it_finishes():
    out = supervised(lambda: Outcome("report\n", 4, ""), lambda why: Outcome("fallback"), Deadline(30))
    assert (out.text, out.exit_code) == ("report\n", 4)


@FORK
def test_backstop_stops_a_hung_run_and_its_children(tmp_path):
    pidfile = tmp_path / "child.pid"

    def hang() -> Outcome:
        pid = os.fork()
        if pid == 0:  # a worker of the run: must die with it
            time.sleep(60)
            os._exit(0)
        pidfile.write_text(str(pid))
        time.sleep(60)
        return Outcome("never")

    start = time.monotonic()
    out = supervised(hang, lambda why: Outcome(f"partial: {why}"), Deadline(0.5), grace=0.5)
    assert time.monotonic() - start < 10
    assert out.text.startswith("partial: the run was stopped")
    pid = int(pidfile.read_text())
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        pytest.fail("the run's child outlived the backstop")


@FORK
def test_backstop_reports_a_run_that_died():
    out = supervised(lambda: os._exit(3), lambda why: Outcome(why), Deadline(30))
    assert "ended without a result" in out.text


@FORK
def test_backstop_hands_back_exit_codes_and_messages():
    import typer

    def fail() -> Outcome:
        typer.echo("clusterdx: bad thing", err=True)
        raise typer.Exit(2)

    out = supervised(fail, lambda why: Outcome(why), Deadline(30))
    assert out.exit_code == 2 and "bad thing" in out.stderr

    def boom() -> Outcome:
        raise ValueError("bug")

    out = supervised(boom, lambda why: Outcome(why), Deadline(30))
    assert out.exit_code == 1 and out.error == "ValueError: bug" and "raise ValueError" in out.traceback


def _hang(*args, **kwargs):
    time.sleep(120)


@FORK
@pytest.mark.parametrize("command", ["diagnose", "triage", "check"])
def test_cli_hang_ends_in_a_partial_report(command, monkeypatch):
    from typer.testing import CliRunner

    from clusterdx import cli

    cli._register_commands()
    monkeypatch.setattr("clusterdx.facts.ingest.ingest", _hang)
    monkeypatch.setattr(backstop, "grace_s", lambda d: 0.5)
    args = [command, str(CASE), "--timeout", "1"] + (["-f", "json"] if command != "triage" else [])
    start = time.monotonic()
    result = CliRunner().invoke(cli.app, args)
    assert time.monotonic() - start < 30
    if command == "diagnose":
        assert result.exit_code == 0, result.output
        report = json.loads(result.stdout)
        assert report["incomplete"]["stage"] == "stopped"
        # each file of the folder is accounted for, not the folder alone
        files = sorted(str(f) for f in CASE.rglob("*") if f.is_file())
        assert sorted(i["path"] for i in report["inputs"]) == files and len(files) > 1
        assert {i["status"] for i in report["inputs"]} == {"skipped"}
    elif command == "check":
        report = json.loads(result.stdout)
        assert result.exit_code == 7 and report["incomplete"]["stage"] == "stopped"
        assert {i["status"] for i in report["items"]} == {"not checked"}
    else:
        assert result.exit_code == 0 and "not finished within its time limit" in result.stdout


def test_fleet_past_its_deadline_starts_no_node(tmp_path, kb):
    from clusterdx.engine.fleet import run_fleet

    root = tmp_path / "fleet"
    for n in ("a", "b", "c"):
        (root / n).mkdir(parents=True)
        (root / n / "sysctl.txt").write_text("kernel.numa_balancing = 1\n")
    report = run_fleet([root], jobs=1, kb=kb, deadline=Deadline(1e-6))
    assert {n.status for n in report.nodes} == {"timeout"}
    assert len(report.nodes) == 3 and all("not started" in n.error for n in report.nodes)
    assert any("partial fleet report" in w and "3 nodes not started" in w for w in report.warnings)


def test_a_stopped_run_lists_files_not_links_and_counts_past_the_cap(tmp_path, monkeypatch):
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "secret.txt").write_text("x")
    given = tmp_path / "ticket"
    (given / "sub").mkdir(parents=True)
    for name in ("a.log", "sub/b.txt", "sub/c.txt"):
        (given / name).write_text("x")
    (given / "link").symlink_to(outside, target_is_directory=True)
    shown = dict(backstop._files_given(str(given)))
    assert set(shown) == {str(given / n) for n in ("a.log", "link", "sub/b.txt", "sub/c.txt")}
    monkeypatch.setattr(backstop, "_LIST_CAP", 2)
    listed = backstop._files_given(str(given))
    assert len(listed) == 3 and listed[-1] == (str(given), 2)
