"""`clusterdx triage`: a reply a support engineer would send the customer.

Each test reads the reply as the customer would: nothing of ours they cannot use (ids, reprs,
our paths, our tool), nothing of theirs quoted back, a fix and its check for each cause, and a
short list of what to send next.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from clusterdx.explainers import reply

from .conftest import CASES, ROOT

SAMPLE_CASE = "cp-stacked-cstates-numa-balancing"
SAMPLE = ROOT / "docs" / "sample-triage-reply.md"


def _triage(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clusterdx", "triage", *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def _report(kb, *paths):
    from clusterdx.engine.diagnose import collect_paths, diagnose

    return diagnose(collect_paths(list(paths)), kb=kb)


def _internal_ids(report) -> set[str]:
    ids = {h.id for h in report.hypotheses} | {ne.rule for ne in report.not_evaluated}
    ids |= {ev.rule for h in report.hypotheses for ev in h.evidence + h.refuting_evidence}
    ids |= {r.id for h in report.hypotheses for r in h.remediation}
    return ids


def test_sample_reply_is_current(tmp_path):
    """docs/sample-triage-reply.md is what triage writes for the shipped case today."""
    out = tmp_path / "reply.md"
    proc = _triage(f"kb/cases/{SAMPLE_CASE}/input", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert out.read_text() == SAMPLE.read_text(), \
        f"docs/sample-triage-reply.md is stale: regenerate with clusterdx triage kb/cases/{SAMPLE_CASE}/input -o {SAMPLE}"


def test_reply_on_shipped_case_with_a_description(tmp_path):
    """The docker case, plus a description with a secret and a login banner, plus a line of base64."""
    case = CASES / "td-env-docker-missing"
    expect = yaml.safe_load((case / "expect.yaml").read_text())
    desc = tmp_path / "description.txt"
    desc.write_text("Last login: Mon Jan  6 10:00:00 2025 from 10.0.0.1\nSubject: slow in docker\n\n"
                    + expect["description"] + "\nHF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123456789\n")
    blob = tmp_path / "blob.txt"
    blob.write_text("TWFueSBoYW5kcyBtYWtlIGxpZ2h0IHdvcmsuIE1hbnkgaGFuZHMgbWFrZSBsaWdodCB3b3JrLiBNYW55IGhhbmRz\n")
    out, notes = tmp_path / "reply.md", tmp_path / "notes.md"
    proc = _triage(str(case / "input"), str(desc), str(blob), "-o", str(out), "--notes", str(notes))
    assert proc.returncode == 0, proc.stderr
    md = out.read_text()
    assert md.startswith("Hello,")
    # nothing the customer wrote comes back to them, and no secret at all
    for theirs in ("Last login", "Subject: slow in docker", "Llama 70B runs 30% slower", "TWFueSBo", "hf_abcdef",
                   "HF_TOKEN"):
        assert theirs not in md, theirs
    # the expected top cause leads, by its title
    from clusterdx.engine.kb import load_kb

    top = next(n for n in load_kb(cache=True).nodes.values() if n.id == expect["expect"]["top"])
    found = md.split("## What we found")[1]
    assert found.index(f"### 1. {top.title}") < found.index("### 2.")
    # what the customer reported counts, without being quoted back
    assert "What you describe points the same way (in `description.txt" in md
    # the engineer keeps the full report, rule ids and quoted lines included, in the notes
    full = notes.read_text()
    assert expect["expect"]["top"] in full and "## Inputs" in full and "hf_abcdef" not in full


def test_no_ids_reprs_or_local_paths(kb, tmp_path):
    """Inputs named as the customer sent them; no rule or cause id, no fact repr, no path of ours."""
    case = CASES / "td-env-docker-missing" / "input"
    report = _report(kb, case)
    md = reply.render(report)
    assert str(CASES) not in md and "kb/cases" not in md
    assert "`container/docker-env.txt, lines 2-13`" in md
    # a document inside a file is still that file to the customer
    assert "docker-env.txt#" not in md
    for ident in _internal_ids(report):
        assert not re.search(rf"(?<![\w-]){re.escape(ident)}(?![\w-])", md), ident
    # fact summaries are reprs: type(key=value, ...)
    for h in report.hypotheses:
        for ev in h.evidence:
            for f in ev.facts:
                assert f.summary not in md
    assert not re.search(r"\w+\.\w+\(\w+=", md)
    # a Python list in a rule's message reads as a list
    assert "['" not in md and "NCCL\\_IB\\_GID\\_INDEX, NCCL\\_IB\\_HCA" in md


def test_file_attachment_named_by_file_name(kb, tmp_path):
    """A file given by absolute path is named by its file name, its folder is ours."""
    src = CASES / "cp-stacked-cstates-numa-balancing" / "input"
    d = tmp_path / "home" / "engineer" / "tickets" / "4711"
    d.mkdir(parents=True)
    for f in src.iterdir():
        (d / f.name).write_text(f.read_text())
    md = reply.render(_report(kb, *sorted(d.iterdir())))
    assert str(tmp_path) not in md and "engineer" not in md
    assert "`sysctl.txt, line 2`" in md


def test_no_pointer_to_our_tool_and_fix_with_check(kb):
    report = _report(kb, CASES / "td-env-docker-missing" / "input")
    md = reply.render(report)
    assert "clusterdx" not in md
    supported = [h for h in report.hypotheses if h.status == "supported"]
    assert len(supported) > reply_leading()  # the causes below the leading ones still get a fix
    sections = md.split("\n### ")[1:]
    assert len(sections) == len(supported)
    for h, sec in zip(supported, sections):
        assert "How to fix it" in sec and "How to check the fix worked" in sec, h.id
        first = next(st for st in h.remediation[0].steps if st.command)
        assert first.command in sec
        assert h.verification[0].command in sec


def reply_leading() -> int:
    from clusterdx.explainers.common import LEADING

    return LEADING


def test_share_of_gap_only_when_measured_and_within_it(kb):
    # no gap measured: no share of the gap, the typical cost instead
    docker = _report(kb, CASES / "td-env-docker-missing" / "input")
    assert docker.gap is None
    md = reply.render(docker)
    assert "gap" not in md.lower() and "typically costs" in md
    # a measured gap: each share in points of that gap, never more than it
    measured = _report(kb, CASES / "fb-roce-gid0-no-tc" / "input")
    g = measured.gap
    assert g is not None and any(h.gap_share_pct is not None for h in measured.hypotheses)
    md = reply.render(measured)
    assert f"a gap of {g.gap_pct:.1f}%" in md
    shares = [(float(a), float(b)) for a, b in re.findall(r"about ([\d.]+) of the ([\d.]+) points", md)]
    assert shares and all(b == round(g.gap_pct, 1) and a <= b for a, b in shares)
    assert "% of the gap" not in md and "of the measured gap." in md


def test_a_gap_on_the_customers_own_number_is_theirs_not_our_measurement(kb):
    words = _report(kb, CASES / "fb-internode-busbw-told-in-words" / "input")
    assert words.gap is not None and words.gap.reported
    md = reply.render(words)
    assert "You report all" in md and "We measured" not in md
    assert "Thank you for the description" in md and "None of the files" not in md
    # a gap on nccl-tests output the customer attached is one we measured
    measured = _report(kb, CASES / "fb-roce-gid0-no-tc" / "input")
    assert measured.gap is not None and not measured.gap.reported and "We measured" in reply.render(measured)


def test_share_is_bounded_by_a_small_gap(kb):
    """An 18% gap and a cause whose share the report bounded by it: the reply says so, in points."""
    report = _report(kb, CASES / "fb-roce-gid0-no-tc" / "input")
    report.gap.gap_pct = 18.0
    h = next(h for h in report.hypotheses if h.gap_share_pct is not None)
    h.gap_share_pct = 18.0
    md = reply.render(report)
    assert "about 18.0 of the 18.0 points" in md and "34.8" not in md


def test_unchecked_counted_and_three_probes_asked(kb):
    report = _report(kb, CASES / "td-env-docker-missing" / "input")
    md = reply.render(report)
    unchecked = [ne for ne in report.not_evaluated if not ne.not_applicable]
    assert len(unchecked) > 20
    asks = md.split("## What we need from you next")[1]
    assert f"{len(unchecked)} checks could not be made" in asks
    assert "Please send us the output of" in asks
    numbered = re.findall(r"^(\d+)\. ", asks, re.M)
    assert numbered == [str(i) for i in range(1, min(3, len(report.next_probes)) + 1)]
    for p in report.next_probes[:3]:
        assert p.command in asks
    for p in report.next_probes[3:]:
        assert p.command not in asks
    # no list of unchecked rules, by id or by title
    assert sum(ne.title in md for ne in unchecked) < 3


def test_candidates_below_supported_with_the_command_that_separates(kb):
    report = _report(kb, CASES / "fb-roce-gid0-no-tc" / "input")
    cands = [h for h in report.hypotheses if h.status == "candidate"]
    assert cands
    md = reply.render(report)
    found, rest = md.split("## It could also be one of these")
    assert "## What we found" in found
    for h in cands:
        assert h.title in rest.split("## What we need")[0] and h.title not in found
    # every supported cause sits above, as its own section; none below
    assert "### " not in rest.split("## What we need")[0]
    ids = {h.id for h in cands}
    probe = next((p for p in report.next_probes if ids & set(p.separates) or ids & set(p.bears_on)), None)
    part = rest.split("## What we need")[0]
    if probe is not None:
        assert "This command tells them apart" in part and probe.command in part
    else:  # no probe left that would separate them (their outputs are attached): none is claimed
        assert "This command tells them apart" not in part


def test_nothing_found_says_what_was_checked_and_fine(kb):
    report = _report(kb, CASES / "healthy-x86-tuned" / "input")
    assert not [h for h in report.hypotheses if h.status == "supported"]
    md = reply.render(report)
    assert "## What we found" not in md and "No root cause" not in md
    fine = md.split("## What we checked and found fine")[1].split("## What we need")[0]
    passed = [r for r in report.rules if r.passed and r.title]
    assert passed
    for r in passed[:5]:
        assert reply.text(r.title) in fine
    # what was not checked is still said, never reported as fine
    assert "could not be made" in md.split("## What we need from you next")[1]
    for ne in report.not_evaluated:
        assert reply.text(ne.title) not in fine


@pytest.mark.parametrize("case", ["healthy-x86-tuned", "fb-roce-gid0-no-tc", "hw-mnnvl-gb200-imex-cuda800",
                                  "cp-stacked-cstates-numa-balancing"])
def test_reply_reads_clean_on_shipped_cases(kb, case):
    report = _report(kb, CASES / case / "input")
    md = reply.render(report)
    assert "kb/cases" not in md and "clusterdx" not in md and "rule `" not in md
    assert md.rstrip().endswith("Best regards,")


def test_triage_missing_path_is_usage_error(tmp_path):
    proc = _triage(str(tmp_path / "nope"))
    assert proc.returncode == 2 and "no such file or folder" in proc.stderr


def test_reported_evidence_is_addressed_to_its_author():
    from clusterdx.explainers.reply import _to_customer

    assert _to_customer("The ticket's GPUs are RTX 4090 (notes.md:1): consumer boards") == \
        "Your GPUs are RTX 4090 (notes.md:1): consumer boards"
    assert _to_customer("The ticket measures busbw (12%, a:3).") == "You measured busbw (12%, a:3)."
    assert _to_customer("NCCL loads f although the ticket says X is not set") == "NCCL loads f although you say X is not set"
    assert _to_customer('The ticket says: "slow" (n:1).') == 'You wrote: "slow" (n:1).'
    # only the phrase, not a word that starts like it
    assert _to_customer("The ticketing system says so") == "The ticketing system says so"


def test_reply_orders_cited_lines_naturally():
    from clusterdx.explainers.reply import _natural

    assert sorted(["log.txt, line 11", "log.txt, line 9", "log.txt, line 13"], key=_natural) == \
        ["log.txt, line 9", "log.txt, line 11", "log.txt, line 13"]
