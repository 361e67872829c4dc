"""Run the compiled rules over one set of facts: each rule ends fired, refuted, silent or not evaluated.

The rule engine is loaded once per process and knowledge-base version (:class:`RuleEngine`);
every call to :meth:`RuleEngine.evaluate` is a fresh session, so a conclusion is a pure function of
the facts given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Sequence

from clusterdx.engine import oracle
from clusterdx.engine.durable import DurableSession, compile_ruleset
from clusterdx.engine.ir import CompiledRule, Emit, Pattern, compile_rule
from clusterdx.engine.kb import KnowledgeBase
from clusterdx.facts.base import Fact

Outcome = Literal["fired", "refuted", "silent", "not_evaluated"]

#: firings kept per rule for evidence (the first ones, in fact order); the count is kept too
MAX_MATCHES = 5


@dataclass
class Match:
    conjunction: int
    bindings: dict[str, Fact]


@dataclass
class RuleResult:
    rule_id: str
    outcome: Outcome
    matches: list[Match] = field(default_factory=list)
    match_count: int = 0
    missing: list[Pattern] = field(default_factory=list)
    evidence: tuple[Emit, ...] = ()
    #: parameter values in force (defaults plus site or test overrides), for messages
    params: dict[str, Any] = field(default_factory=dict)


def describe_requirement(pattern: Pattern) -> str:
    if not pattern.tests:
        return pattern.fact_type
    conds = ", ".join(f"{t.field} {t.op} {t.value!r}" for t in pattern.tests)
    return f"{pattern.fact_type}({conds})"


def enabled_rules(kb: KnowledgeBase, statuses: Sequence[str] = ("stable", "test"),
                  disabled: Sequence[str] = ()) -> list[str]:
    """Rules that run: by status (experimental ones only when a site asks), minus disabled ones."""
    return sorted(r.id for r in kb.rules.values() if r.status in statuses and r.id not in disabled)


def safe_payloads(facts: Sequence[Fact]) -> tuple[list[Fact], list[dict[str, Any]], list[str]]:
    """(facts kept, their payloads, warnings): a fact whose payload cannot be handed to the rule
    engine (a number beyond 64 bits or not finite, made without validation; a payload that does
    not serialise) is dropped with a warning naming it, instead of losing the whole batch."""
    import math

    import orjson

    kept: list[Fact] = []
    payloads: list[dict[str, Any]] = []
    warnings: list[str] = []
    for f in facts:
        try:
            payload = f.payload()
            for value in payload.values():
                for x in value if isinstance(value, list) else (value,):
                    if isinstance(x, bool):
                        continue
                    if isinstance(x, int) and not -(1 << 63) <= x < (1 << 63):
                        raise ValueError("integer outside the signed 64-bit range")
                    if isinstance(x, float) and not math.isfinite(x):
                        raise ValueError("NaN or infinity")
            orjson.dumps(payload)
        except Exception as exc:
            where = getattr(getattr(f, "source", None), "input", "?")
            warnings.append(f"fact {getattr(f, 'fact_type', '?')} from {where} not evaluated: "
                            f"{type(exc).__name__}: {str(exc)[:200]}")
            continue
        kept.append(f)
        payloads.append(payload)
    return kept, payloads, warnings


class RuleEngine:
    def __init__(self, kb: KnowledgeBase, rule_ids: Sequence[str] | None = None,
                 params: dict[str, dict[str, Any]] | None = None):
        self.kb = kb
        ids = list(rule_ids) if rule_ids is not None else enabled_rules(kb)
        params = params or {}
        self.rules: list[CompiledRule] = [compile_rule(kb.rules[i], params.get(i)) for i in ids]
        self._session = DurableSession(compile_ruleset(self.rules))

    def close(self) -> None:
        self._session.close()

    def evaluate(self, facts: Sequence[Fact]) -> tuple[list[RuleResult], list[str]]:
        facts, payloads, dropped = safe_payloads(facts)
        run = self._session.run(payloads)
        run.warnings[:0] = dropped
        by_rule: dict[int, list[Match]] = {}
        counts: dict[int, int] = {}
        for firing in run.firings:
            conj = self.rules[firing.rule_index].conjunctions[firing.conjunction]
            counts[firing.rule_index] = counts.get(firing.rule_index, 0) + 1
            kept = by_rule.setdefault(firing.rule_index, [])
            if len(kept) < MAX_MATCHES:
                kept.append(Match(firing.conjunction,
                                  {p.alias: facts[i] for p, i in zip(conj.positives, firing.facts)}))
        results: list[RuleResult] = []
        by_type = oracle.index_by_type(payloads)
        for ri, rule in enumerate(self.rules):
            missing = oracle.missing_requirements(rule, by_type)
            if missing:
                results.append(RuleResult(rule.id, "not_evaluated", missing=missing))
                continue
            matches = by_rule.get(ri, [])
            count = counts.get(ri, 0)
            # a conjunction of negations only ("no deep idle state exposed") has no rete pattern
            for ci, conj in enumerate(rule.conjunctions):
                if not conj.positives and (ri, ci) not in run.negated:
                    matches.append(Match(ci, {}))
                    count += 1
            if not matches:
                results.append(RuleResult(rule.id, "silent"))
                continue
            matches.sort(key=lambda m: min((f.source.line for f in m.bindings.values()), default=0))
            refutes_only = all(e.effect == "refutes" for e in rule.evidence)
            results.append(RuleResult(rule.id, "refuted" if refutes_only else "fired", matches[:MAX_MATCHES],
                                      count, evidence=rule.evidence, params=dict(rule.params)))
        return results, run.warnings
