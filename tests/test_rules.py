"""Every rule's test cases (``rules/**/<id>.test.yaml``), one pytest case each."""

from __future__ import annotations

import pytest

from clusterdx.engine.kb import load_kb
from clusterdx.engine.lint import lint_tests
from clusterdx.engine.ruletest import run_rule_tests

KB = load_kb()
OUTCOMES = run_rule_tests(KB)


@pytest.mark.parametrize("outcome", OUTCOMES, ids=[o.name for o in OUTCOMES])
def test_rule_case(outcome):
    assert outcome.ok, outcome.report()


def test_every_rule_has_tests():
    assert OUTCOMES, "no rule tests found"
    tested = {o.rule_id for o in OUTCOMES}
    assert tested == set(KB.rules)


def test_rule_test_coverage_lint_is_clean():
    problems = lint_tests(load_kb())
    assert [str(p) for p in problems if p.severity == "error"] == []
