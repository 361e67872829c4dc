"""Bounds per input (facts/bounds.py): what a bound leaves out is counted and said in the input's
record, never dropped silently; under the bound nothing is left out and nothing is said."""

import doctest
import json

from clusterdx.facts import bounds
from clusterdx.facts.document import Document
from clusterdx.facts.ingest import MAX_WARNINGS, ingest, ingest_documents


def test_doctests():
    assert doctest.testmod(bounds).failed == 0


def _sysctl(n: int, start: int = 0) -> str:
    return "".join(f"net.ipv4.conf.veth{i}.rp_filter = 1\n" for i in range(start, start + n))


def test_facts_of_one_type_past_the_limit_are_counted_and_the_input_is_partial(monkeypatch):
    monkeypatch.setattr(bounds, "MAX_FACTS_PER_TYPE", 40)
    res = ingest_documents([Document.from_text(_sysctl(47), name="s.txt")])
    rec = res.inputs[0]
    assert len([f for f in res.facts if f.fact_type == "kernel.sysctl"]) == 40
    assert rec.status == "partial" and "not read whole" in rec.reason and "kernel.sysctl" in rec.reason
    notes = [w for w in rec.warnings if "limit of 40 per input" in w.message]
    assert [(w.line, w.message.split()[0]) for w in notes] == [(41, "7")]  # first line not kept, count


def test_facts_of_one_type_at_the_limit_are_all_kept_and_nothing_is_said(monkeypatch):
    monkeypatch.setattr(bounds, "MAX_FACTS_PER_TYPE", 40)
    res = ingest_documents([Document.from_text(_sysctl(40), name="s.txt")])
    rec = res.inputs[0]
    assert len(res.facts) == 40 and rec.status == "parsed" and rec.reason == "" and not rec.warnings


def test_identical_facts_are_counted_with_their_first_dropped_line(monkeypatch):
    monkeypatch.setattr(bounds, "MAX_REPEATS", 3)
    text = "kernel.numa_balancing = 1\n" * 10 + "vm.swappiness = 60\n"
    res = ingest_documents([Document.from_text(text, name="s.txt")])
    rec = res.inputs[0]
    kept = [f.source.line for f in res.facts if f.fact_type == "kernel.sysctl" and f.key == "kernel.numa_balancing"]
    assert kept == [1, 2, 3]
    assert any(f.key == "vm.swappiness" for f in res.facts)
    assert [(w.line, w.message) for w in rec.warnings] == [
        (4, "7 more identical kernel.sysctl facts not kept (first 3 kept of each)")]
    # repeats are one observation, not a gap: the input was still read whole
    assert rec.status == "parsed"


def test_identical_facts_across_transcript_segments_share_one_count(monkeypatch, tmp_path):
    monkeypatch.setattr(bounds, "MAX_REPEATS", 2)
    # the same fact from different commands (outputs differ, so no segment is skipped)
    text = "".join(f"$ sysctl -a  # run {i}\nvm.swappiness = 60\nvm.x{i} = 1\n" for i in range(5))
    (tmp_path / "session.txt").write_text(text)
    res = ingest([tmp_path / "session.txt"])
    assert len([f for f in res.facts if getattr(f, "key", "") == "vm.swappiness"]) == 2
    # each segment says what it left out: one copy each, after the first two segments
    said = [(r.path.rsplit("#", 1)[1], w.message) for r in res.inputs for w in r.warnings]
    assert said == [(str(k), "1 more identical kernel.sysctl facts not kept (first 2 kept of each)")
                    for k in (3, 4, 5)]
    assert len([f for f in res.facts if getattr(f, "key", "").startswith("vm.x")]) == 5


def test_lines_past_the_limit_are_named_as_not_read(monkeypatch, tmp_path):
    monkeypatch.setattr(bounds, "MAX_LINES", 30)
    (tmp_path / "s.txt").write_text(_sysctl(45))
    rec = ingest([tmp_path / "s.txt"]).inputs[0]
    assert rec.status == "partial" and "lines 31-45 not read: limit of 30 lines per input" in rec.reason
    (tmp_path / "s.txt").write_text(_sysctl(30))
    rec = ingest([tmp_path / "s.txt"]).inputs[0]
    assert rec.status == "parsed" and "not read" not in rec.reason


def test_parser_warnings_past_those_kept_are_still_counted(monkeypatch):
    monkeypatch.setattr("clusterdx.facts.document.MAX_KEPT_WARNINGS", 60)
    bad = "".join(f"\t Link {i}: ??? {i}\n" for i in range(90))
    text = "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0d3c)\n\t Link 0: 26.562 GB/s\n" + bad
    rec = ingest_documents([Document.from_text(text, name="nvlink.txt")]).inputs[0]
    assert rec.format == "nvidia-smi-nvlink-status" and rec.status == "partial"
    assert "90 parser warning(s)" in rec.reason  # 60 kept, 30 only counted
    assert len(rec.warnings) == MAX_WARNINGS + 1
    assert rec.warnings[-1].message == f"{90 - MAX_WARNINGS} more warnings"


def test_a_session_repeating_two_commands_reads_each_a_few_times_and_lists_the_rest(tmp_path):
    one = "$ sysctl vm.swappiness\nvm.swappiness = 60\n$ sysctl kernel.numa_balancing\nkernel.numa_balancing = 1\n"
    (tmp_path / "session.txt").write_text(one * 20 + "$ sysctl vm.nr_hugepages\nvm.nr_hugepages = 0\n")
    res = ingest([tmp_path / "session.txt"])
    read = [r for r in res.inputs if r.status != "skipped"]
    skipped = [r for r in res.inputs if r.status == "skipped"]
    assert len(read) == 2 * bounds.MAX_SEGMENT_REPEATS + 1
    assert len(skipped) == 1
    n = 40 - 2 * bounds.MAX_SEGMENT_REPEATS
    assert skipped[0].reason.startswith(f"{n} transcript segments not read again")
    # every line of the file is accounted for by some record
    covered = set()
    for r in res.inputs:
        covered.update(range(r.line_start, r.line_end + 1))
    assert covered == set(range(1, 83))
    assert any(getattr(f, "key", "") == "vm.nr_hugepages" for f in res.facts)


def test_a_session_running_one_command_with_changing_output_reads_every_run(tmp_path):
    text = "".join(f"$ cat /proc/sys/vm/swappiness\n{i}\n" for i in range(12))
    (tmp_path / "session.txt").write_text(text)
    res = ingest([tmp_path / "session.txt"])
    assert len(res.inputs) == 12 and not any(r.status == "skipped" for r in res.inputs)


def test_a_cut_input_is_said_in_the_json_report(monkeypatch, tmp_path):
    from typer.testing import CliRunner

    from clusterdx.cli import app

    monkeypatch.setattr(bounds, "MAX_FACTS_PER_TYPE", 25)
    (tmp_path / "s.txt").write_text(_sysctl(30))
    out = CliRunner().invoke(app, ["diagnose", str(tmp_path), "-f", "json"])
    assert out.exit_code == 0, out.output
    rep = json.loads(out.stdout)
    [rec] = rep["inputs"]
    assert rec["status"] == "partial" and "not read whole" in rec["reason"]
    assert any("5 more kernel.sysctl facts not kept" in w["message"] for w in rec["warnings"])
