"""Rule test cases (``<rule-id>.test.yaml`` beside each rule) and their runner.

Format::

    rule: numa-balancing-on
    given:                       # merged into every case; a type given in a case replaces it
      facts:
        kernel.sysctl: {key: kernel.numa_balancing, value: "1", value_num: 1}
    cases:
      fires_when_enabled:
        expect: {outcome: fired}
      silent_when_disabled:
        facts:
          kernel.sysctl: {key: kernel.numa_balancing, value: "0", value_num: 0}
        expect: {outcome: silent}
      not_evaluated_without_sysctl:
        drop: [kernel.sysctl]
        expect: {outcome: not_evaluated, missing: [kernel.sysctl]}
      from_raw_output:
        artifacts: [fixtures/sysctl-a.txt]     # parsed by the real parsers
        expect: {outcome: fired}
      from_raw_guest_output:                   # a scope the content does not show: say it
        artifacts: [{path: fixtures/sysctl-hv.txt, scope: hypervisor}]
        expect: {outcome: fired}
      future_case:
        todo: "why it does not pass yet"      # strict expected failure
        ...

``expect`` may also hold ``evidence`` (exact list of {node, effect, strength}) and
``message_contains`` (strings the rendered message must contain).

Facts name no host unless a case gives one (``node: gpu-2``), and artifacts are read like a
ticket's files: every node is resolved in one place (:mod:`clusterdx.facts.nodes`), so facts
that name no host join the case's one host, and two hosts are evaluated apart. A fixture's file
name is no evidence of scope: an artifact given as ``{path, scope}`` is read with that scope
(``--scope``), as a ticket's manifest would say it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clusterdx.engine.evaluate import RuleEngine, RuleResult, describe_requirement
from clusterdx.engine.kb import KnowledgeBase
from clusterdx.engine.yamlsafe import load_plain
from clusterdx.facts.base import FACT_TYPES, Fact, Scope, SourceRef


class CaseError(Exception):
    pass


@dataclass
class CaseOutcome:
    rule_id: str
    case: str
    ok: bool
    expected: str
    got: str
    problems: list[str] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    result: RuleResult | None = None
    todo: str = ""

    @property
    def name(self) -> str:
        return f"{self.rule_id}::{self.case}"

    def report(self) -> str:
        lines = [f"FAIL {self.name}: expected {self.expected}, got {self.got}"]
        lines += [f"  {p}" for p in self.problems]
        lines.append("  facts:")
        lines += [f"    {f.describe()}  [{f.source}]" for f in self.facts[:30]]
        if self.result is not None:
            lines.append(f"  trace: outcome={self.result.outcome} matches={self.result.match_count}")
            for m in self.result.matches:
                bound = ", ".join(f"{a}={f.describe()}" for a, f in m.bindings.items())
                lines.append(f"    conjunction {m.conjunction}: {bound}")
            if self.result.missing:
                lines.append("    missing: " + ", ".join(describe_requirement(p) for p in self.result.missing))
        return "\n".join(lines)


def make_facts(spec: dict[str, Any] | None, origin: str) -> list[Fact]:
    facts: list[Fact] = []
    for ftype, items in (spec or {}).items():
        cls = FACT_TYPES.get(ftype)
        if cls is None:
            raise CaseError(f"unknown fact type {ftype!r}")
        for i, item in enumerate(items if isinstance(items, list) else [items]):
            data = dict(item or {})
            data.setdefault("node", "node")  # names no host (see the module docstring)
            if "scope" in data:
                data["scope"] = Scope(data["scope"])
            data["source"] = SourceRef(input=origin, line=i + 1, parser="test")
            try:
                facts.append(cls.model_validate(data, strict=False))
            except Exception as exc:  # pydantic's message names the field
                raise CaseError(f"bad {ftype} fact: {exc}") from None
    return facts


def _merge(given: dict[str, Any], case: dict[str, Any]) -> dict[str, Any]:
    merged = dict(given)
    for ftype in case.get("drop", []) or []:
        merged.pop(ftype, None)
    merged.update(case.get("facts") or {})
    return merged


def _artifact_facts(paths: list[Any], base: Path) -> list[Fact]:
    from clusterdx.facts.ingest import ingest

    facts: list[Fact] = []
    for p in paths:
        scope = None
        if isinstance(p, dict):
            p, scope = p.get("path", ""), p.get("scope")
        path = (base / str(p)).resolve()
        if not path.exists():
            raise CaseError(f"artifact not found: {p}")
        try:
            facts += ingest([path], scope=scope).facts
        except ValueError as exc:  # an unknown scope
            raise CaseError(f"artifact {p}: {exc}") from None
    return facts


def load_cases(path: Path) -> tuple[str, dict[str, Any], dict[str, dict[str, Any]]]:
    data = load_plain(path) or {}
    if not isinstance(data, dict) or "cases" not in data:
        raise CaseError(f"{path}: expected 'rule' and 'cases'")
    return data.get("rule", ""), (data.get("given") or {}).get("facts") or {}, data["cases"] or {}


def run_case(kb: KnowledgeBase, rule_id: str, name: str, case: dict[str, Any], given: dict[str, Any],
             base: Path) -> CaseOutcome:
    from clusterdx.engine.diagnose import render_message
    from clusterdx.facts.derive import derive_all
    from clusterdx.facts.derive import platform as platform_role
    from clusterdx.facts.nodes import resolve

    expect = case.get("expect") or {}
    want = expect.get("outcome", "?")
    try:
        facts = make_facts(_merge(given, case), f"{rule_id}.test.yaml#{name}")
        if case.get("artifacts"):
            facts += derive_all(_artifact_facts(list(case["artifacts"]), base),
                                params={rule_id: case.get("params") or {}})
        facts = resolve(facts).facts
        # the effective platform role, once over the case's facts (unless the case gives one)
        facts = [f for f in facts if f.fact_type != "platform.role" or f.source.parser == "test"]
        facts += platform_role.derive(facts)
        engine = RuleEngine(kb, [rule_id], {rule_id: case.get("params") or {}})
        try:
            results, _ = engine.evaluate(facts)
        finally:
            engine.close()
    except CaseError as exc:
        return CaseOutcome(rule_id, name, False, want, "error", [str(exc)])
    result = results[0]
    problems: list[str] = []
    if result.outcome != want:
        problems.append(f"outcome: expected {want}, got {result.outcome}")
    if "evidence" in expect:
        got_ev = sorted((e.node, e.effect, e.strength) for e in result.evidence)
        want_ev = sorted((e["node"], e.get("effect", "supports"), e["strength"]) for e in expect["evidence"])
        if got_ev != want_ev:
            problems.append(f"evidence: expected {want_ev}, got {got_ev}")
    if "missing" in expect:
        got_missing = sorted(p.fact_type for p in result.missing)
        if got_missing != sorted(expect["missing"]):
            problems.append(f"missing: expected {sorted(expect['missing'])}, got {got_missing}")
    if expect.get("message_contains"):
        rule = kb.rules[rule_id]
        params = {p: v.default for p, v in rule.params.items()}
        params.update(case.get("params") or {})
        msg = render_message(rule.message, result.matches[0].bindings, params) if result.matches else ""
        for s in expect["message_contains"]:
            if str(s) not in msg:
                problems.append(f"message does not contain {s!r}: {msg.strip()!r}")
    ok = not problems
    todo = str(case.get("todo") or "")
    if todo:
        # strict expected failure: a todo case that passes must have its todo removed
        if ok:
            problems = [f"todo case passes now; remove its todo ({todo})"]
        ok = not ok
    return CaseOutcome(rule_id, name, ok, want, result.outcome, problems, facts, result, todo)


def run_rule_tests(kb: KnowledgeBase, select: str | None = None, rules: list[str] | None = None) -> list[CaseOutcome]:
    outcomes: list[CaseOutcome] = []
    for rule_id in sorted(rules or kb.rules):
        path = kb.test_file(rule_id)
        if path is None:
            continue
        try:
            declared, given, cases = load_cases(path)
        except CaseError as exc:
            outcomes.append(CaseOutcome(rule_id, "<file>", False, "loadable", "error", [str(exc)]))
            continue
        if declared and declared != rule_id:
            outcomes.append(CaseOutcome(rule_id, "<file>", False, rule_id, declared, ["test file names another rule"]))
            continue
        for name, case in cases.items():
            full = f"{rule_id}::{name}"
            if select and select not in full:
                continue
            outcomes.append(run_case(kb, rule_id, name, case or {}, given, path.parent))
    return outcomes
