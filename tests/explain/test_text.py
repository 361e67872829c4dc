"""The terminal report: the answer first and last, what was not checked counted and grouped,
bracketed labels kept, the terminal's width."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from clusterdx.engine.diagnose import collect_paths, diagnose
from clusterdx.explainers.text import render

CASES = Path(__file__).resolve().parents[2] / "kb" / "cases"
CASE = CASES / "cp-stacked-cstates-numa-balancing" / "input"


@pytest.fixture(scope="module")
def cp_report(kb):
    return diagnose(collect_paths([CASE]), kb=kb)


def test_bracketed_labels_survive_rich_markup(cp_report):
    text = render(cp_report, width=100)
    assert "[strong]" in text or "[moderate]" in text or "[decisive]" in text
    # the inputs' format labels are listed with -v (by default only inputs that need a look are)
    verbose = render(cp_report, width=100, verbose=True)
    assert "[sysctl]" in verbose or "[lscpu]" in verbose or "[cpupower" in verbose


def test_default_width_is_the_consoles(monkeypatch, cp_report):
    monkeypatch.setenv("COLUMNS", "80")
    text = render(cp_report)
    # every line wraps at the console width (80 here), not the old fixed 110
    assert max(len(line) for line in text.splitlines()) <= 80


def test_answer_opens_and_closes_the_report(cp_report):
    lines = render(cp_report, width=80).splitlines()
    top = cp_report.hypotheses[0]
    first_not_eval = next(i for i, ln in enumerate(lines) if ln.startswith("Not evaluated"))
    answer = next(i for i, ln in enumerate(lines) if ln.startswith("Answer"))
    assert answer < 3
    head = "\n".join(lines[:first_not_eval])
    assert top.title.split(",")[0] in head
    assert "supported" in head and f"{top.confidence:.2f}" in head
    assert "fix:" in head and "verify:" in head
    # the last lines printed restate the top answer, not a list of rule ids
    tail = " ".join(lines[-4:])
    assert "In short" in tail and top.title.split(",")[0] in tail


def test_single_node_case_fits_one_screen(cp_report):
    before = 418  # the lower bound the issue measured for a single-node diagnosis
    n = len(render(cp_report, width=80).splitlines())
    assert n < 60 < before


def test_not_evaluated_is_counted_and_grouped_never_hidden(cp_report):
    total = len(cp_report.not_evaluated)
    assert total > 0
    text = render(cp_report, width=200)
    assert f"{total} rules" in text
    # default: no rule id of the not-evaluated list is printed one per line
    assert not any(line.strip().startswith(ne.rule + ":") for ne in cp_report.not_evaluated
                   for line in text.splitlines())
    full = render(cp_report, width=200, show_all=True)
    counted = sum(int(m) for m in re.findall(r"^\s+(\d+) rules: ", full, re.M))
    apart = re.search(r"^\s+(\d+) more cannot apply", full, re.M)
    assert counted + (int(apart.group(1)) if apart else 0) == total
    for ne in cp_report.not_evaluated:
        assert ne.rule in full


def test_arm64_rules_are_set_apart_on_an_x86_node(cp_report):
    arm = [ne for ne in cp_report.not_evaluated if ne.rule.startswith(("grace-", "arm64-"))]
    assert arm, "the KB has arm64 rules that lack facts on this node"
    assert all(ne.not_applicable for ne in arm)
    assert "cannot apply to this node" in render(cp_report, width=120)
    # rules that may apply stay in the groups
    assert any(not ne.not_applicable for ne in cp_report.not_evaluated)


def test_verbose_shows_every_step_rollback_and_facts(cp_report):
    text = render(cp_report, width=400, verbose=True)
    for h in cp_report.hypotheses:
        for r in h.remediation:
            for st in r.steps:
                if st.command:
                    assert st.command in text
            if r.rollback:
                assert r.rollback.split("\n")[0][:40] in text
    assert "rollback:" in text and "Score" in text


def test_healthy_report_says_what_was_checked_and_passed(kb, tmp_path):
    (tmp_path / "sysctl.txt").write_text("kernel.numa_balancing = 0\nkernel.perf_event_paranoid = 2\n")
    report = diagnose(collect_paths([tmp_path]), kb=kb)
    passed = [r for r in report.rules if r.passed]
    assert passed, "a rule had its facts and found nothing wrong"
    text = render(report, width=200)
    assert "Checked and found fine" in text
    assert passed[0].title in text
    # and what was not checked is still counted
    assert f"Not evaluated: {len(report.not_evaluated)} rules" in text


#: single-node cases whose default output ran longest before the summary was trimmed
LONGEST = ["kn-p2p-container-split-docker", "td-env-docker-missing", "pt-nccltests-115", "gv-baremetal-grace-smmu-hot",
           "rs-reported-shm-env-vs-governor", "cp-stacked-cstates-numa-balancing"]


@pytest.mark.parametrize("case", LONGEST)
def test_longest_single_node_cases_fit_under_60_lines(kb, case):
    report = diagnose(collect_paths([CASES / case / "input"]), kb=kb)
    text = render(report, width=80)
    assert len(text.splitlines()) < 60, text
    # the answer is still there: the closing line restates the top cause
    if report.hypotheses:
        assert "In short: " in text and report.hypotheses[0].title[:30] in text.replace("\n  ", " ")


@pytest.mark.slow  # diagnoses every shipped single-node case but the frozen ones (about a minute)
def test_every_shipped_single_node_case_fits_under_60_lines(kb):
    from clusterdx.engine.cases import case_dirs, frozen_cases

    frozen = frozen_cases()
    long = []
    for d in case_dirs():
        if d.name in frozen:
            continue  # never run one by one
        report = diagnose(collect_paths([d / "input"]), kb=kb)
        if len(report.nodes) > 1:
            continue
        n = len(render(report, width=80).splitlines())
        if n >= 60:
            long.append((d.name, n))
    assert not long


def test_the_answers_next_probe_is_not_printed_again(kb):
    # a library case, whose first probe also leads a not-evaluated group (public cases move as
    # the rules are tuned)
    report = diagnose(collect_paths([CASES / "ct-docker-ib-does-not-work" / "input"]), kb=kb)
    first = report.next_probes[0].command
    text = render(report, width=400)
    # once in the answer; the probes list and the not-evaluated groups point back at it
    assert text.count(first) == 1, text
    assert "1. the next probe above" in text and "rules: next probe 1 above" in text
    # verbose output prints every command in full
    verbose = render(report, width=400, verbose=True)
    assert verbose.count(first) >= 2 and "the next probe above" not in verbose


def test_a_crowded_report_folds_the_fixs_cost_to_a_pointer(cp_report, monkeypatch):
    from clusterdx.explainers import text

    roomy = render(cp_report, width=80)
    assert "cost:   " in roomy and "cost, undo: -v" not in roomy  # one screen: the cost in full
    monkeypatch.setattr(text, "SCREEN_LINES", 20)  # a report longer than the screen is drawn again
    tight = render(cp_report, width=80)
    assert "cost, undo: -v" in tight and "cost:   " not in tight and "undo:   " not in tight
    assert len(tight.splitlines()) < len(roomy.splitlines())
    assert "cost:   " in render(cp_report, width=80, verbose=True)  # -v is never folded
