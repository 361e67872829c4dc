"""Coverage checks on rule tests, for ``clusterdx kb lint``.

Every rule needs a case that fires, one that stays silent, one where its facts are missing
(not evaluated), and for every threshold parameter a boundary pair: a firing case and a silent
case whose compared values sit on either side of the threshold, close to it (within 10% of the
threshold, or 1 unit for small thresholds).
"""

from __future__ import annotations

from clusterdx.engine.kb import KnowledgeBase, _problem_at
from clusterdx.engine.problems import Problem
from clusterdx.engine.ruletest import CaseError, _merge, load_cases


def _close(value: float, threshold: float) -> bool:
    return abs(value - threshold) <= max(abs(threshold) * 0.10, 1.0)


def lint_tests(kb: KnowledgeBase) -> list[Problem]:
    before = len(kb.problems)
    for rule in kb.rules.values():
        path = kb.test_file(rule.id)
        if path is None:
            continue
        try:
            _, given, cases = load_cases(path)
        except CaseError as exc:
            _problem_at(kb, "Rule", rule.id, (), "KB902", str(exc))
            continue
        outcomes = {}
        for name, case in cases.items():
            case = case or {}
            if case.get("todo"):
                continue
            outcomes[name] = ((case.get("expect") or {}).get("outcome"), _merge(given, case), case)
        have = {o for o, _, _ in outcomes.values()}
        for need in ("silent", "not_evaluated"):
            if need not in have:
                _problem_at(kb, "Rule", rule.id, (), "KB902", f"no {need!r} test case")
        if not have & {"fired", "refuted"}:
            _problem_at(kb, "Rule", rule.id, (), "KB902", "no test case where the rule fires")
        for pname, param in rule.params.items():
            if isinstance(param.default, bool) or not isinstance(param.default, (int, float)):
                continue
            uses = [(a, fld, op) for a, pat in rule.match.items() for fld, spec in pat.where.items()
                    if isinstance(spec, dict) for op, v in spec.items() if v == f"${pname}"]
            if not uses:
                continue
            sides: set[str] = set()
            for outcome, facts, case in outcomes.values():
                threshold = (case.get("params") or {}).get(pname, param.default)
                for alias, fld, _ in uses:
                    ftype = rule.match[alias].fact
                    items = facts.get(ftype)
                    for item in items if isinstance(items, list) else [items]:
                        value = (item or {}).get(fld)
                        if isinstance(value, (int, float)) and _close(value, threshold):
                            sides.add("fire" if outcome in ("fired", "refuted") else "quiet" if outcome == "silent" else "")
            if not {"fire", "quiet"} <= sides:
                _problem_at(kb, "Rule", rule.id, ("params", pname), "KB902",
                            f"param {pname!r} lacks a boundary pair (a firing and a silent case near {param.default})")
    return kb.problems[before:]
