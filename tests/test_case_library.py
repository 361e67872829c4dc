"""The case library: every bundle diagnosed end to end, and the accuracy bars over all of them."""

from __future__ import annotations

import pytest

from clusterdx.engine.cases import case_spec, run_case, summarize
from tests.caselist import library_cases, public_cases

#: cases written next to the rules must each pass; public-thread cases are measured as a corpus
CASES = library_cases()
PUBLIC = public_cases()
RESULTS = {}


@pytest.mark.parametrize("case_dir", CASES, ids=[c.name for c in CASES])
def test_case(kb, case_dir):
    result = run_case(kb, case_dir)
    RESULTS[case_dir.name] = result
    assert result.ok, "\n".join(result.problems)


def test_library_has_cases_for_each_seed_cause_and_controls():
    ids = [c.name for c in CASES]
    assert any(i.startswith("healthy") or "healthy" in i for i in ids)
    assert len(ids) >= 20


def test_accuracy_bars(kb):
    results = [RESULTS.get(c.name) or run_case(kb, c) for c in CASES]
    summary = summarize(results)
    assert summary["top3"] is not None and summary["top3"] >= 0.95, summary
    assert summary["top1"] is not None and summary["top1"] >= 0.85, summary


#: the public-thread corpus's top-3 rate may not fall below what it reached when this bar was set
#: (a regression guard, not a target: the target is in the closing note and in `kb eval`)
PUBLIC_TOP3_FLOOR = 0.70  # 78 of 103 (0.757) when set, 2026-12-02


def test_public_corpus_records_source_and_first_run():
    for c in PUBLIC:
        spec = case_spec(c)
        assert str(spec.get("source", "")).startswith("http"), c.name
        assert isinstance((spec.get("first_run") or {}).get("ranking"), list), c.name
        assert (c / "input" / "notes.md").exists() or any((c / "input").iterdir()), c.name


@pytest.mark.slow  # diagnoses the whole public-ticket corpus (about 7 s)
def test_public_corpus_floor(kb):
    if not PUBLIC:
        pytest.skip("no public-thread cases in kb/cases")
    results = [run_case(kb, c) for c in PUBLIC]
    summary = summarize(results)["public"]["all"]
    rate = summary["now"]["top3"]["rate"] or 0.0
    assert rate >= PUBLIC_TOP3_FLOOR, summary


def test_min_confidence_expectation_both_sides():
    from clusterdx.engine.cases import judge
    ranking = [("a", 0.2), ("b", 0.004)]
    assert judge({"min_confidence": {"b": 0.05}}, ranking)[0]
    assert judge({"min_confidence": {"a": 0.05}}, ranking)[0] == []
    assert judge({"min_confidence": {"c": 0.05}}, ranking)[0]


def test_public_summary_counts_empty_answers_and_seed_patterns_apart():
    from clusterdx.engine.cases import CaseResult, judge
    def case(name, expect, ranking, *, frozen=False, seed=""):
        problems, top1, top3 = judge(expect, ranking)
        return CaseResult(name, not problems, problems, ranking, expect, True, top1, top3,
                          corpus="public", frozen=frozen, seed_pattern=seed)
    rs = [case("a", {"top": "x"}, []),                                  # empty, expects first
          case("b", {"in_top_3": ["x", "y"]}, []),                      # empty, expects among three
          case("c", {"in_top_3": ["x"]}, [("x", 0.3)], seed="TD"),
          case("d", {"max_confidence": 0.5}, []),                       # a healthy control, quiet
          case("e", {"top": "x"}, [("y", 0.2)], frozen=True, seed="HW")]
    pub = summarize(rs)["public"]
    assert pub["tuned"]["no_answer"] == 2 and pub["frozen"]["no_answer"] == 0
    seed = pub["seed_pattern"]
    assert (seed["tuned"]["cases"], seed["tuned"]["now"]["top3"]["right"]) == (1, 1)
    assert (seed["frozen"]["cases"], seed["frozen"]["now"]["top3"]["right"]) == (1, 0)
