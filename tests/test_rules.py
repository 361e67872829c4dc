"""Every rule's test cases (``rules/**/<id>.test.yaml``), one pytest case per rule.

The rule ids come from the test files' names, so collection runs nothing; the cases of all rules
run once, in the first test that needs them, and each rule's test reports its own cases.
"""

from __future__ import annotations

import functools

import pytest

from clusterdx.engine.kb import load_kb, shipped_dirs
from clusterdx.engine.lint import lint_tests
from clusterdx.engine.ruletest import run_rule_tests

TESTED = sorted({p.name.removesuffix(".test.yaml") for p in shipped_dirs()[0].rglob("*.test.yaml")})


@functools.lru_cache(maxsize=1)
def _outcomes():
    by_rule: dict[str, list] = {}
    for o in run_rule_tests(load_kb(cache=True)):
        by_rule.setdefault(o.rule_id, []).append(o)
    return by_rule


@pytest.mark.parametrize("rule_id", TESTED)
def test_rule_cases(rule_id):
    outcomes = _outcomes().get(rule_id, [])
    assert outcomes, f"{rule_id}.test.yaml has no cases, or no rule {rule_id!r} is loaded"
    failed = [o.report() for o in outcomes if not o.ok]
    assert not failed, "\n".join(failed)


def test_every_rule_has_tests():
    assert _outcomes(), "no rule tests found"
    assert set(_outcomes()) == set(load_kb(cache=True).rules)


def test_rule_test_coverage_lint_is_clean():
    problems = lint_tests(load_kb())
    assert [str(p) for p in problems if p.severity == "error"] == []
