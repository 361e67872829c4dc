"""The case library: every bundle diagnosed end to end, and the accuracy bars over all of them."""

from __future__ import annotations

import pytest

from clusterdx.engine.cases import case_dirs, run_case, summarize
from clusterdx.engine.kb import load_kb

KB = load_kb()
CASES = case_dirs()
RESULTS = {}


@pytest.mark.parametrize("case_dir", CASES, ids=[c.name for c in CASES])
def test_case(case_dir):
    result = run_case(KB, case_dir)
    RESULTS[case_dir.name] = result
    assert result.ok, "\n".join(result.problems)


def test_library_has_cases_for_each_seed_cause_and_controls():
    ids = [c.name for c in CASES]
    assert any(i.startswith("healthy") or "healthy" in i for i in ids)
    assert len(ids) >= 20


def test_accuracy_bars():
    results = [RESULTS.get(c.name) or run_case(KB, c) for c in CASES]
    summary = summarize(results)
    assert summary["top3"] is not None and summary["top3"] >= 0.95, summary
    assert summary["top1"] is not None and summary["top1"] >= 0.85, summary
