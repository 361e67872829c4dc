"""Run the compiled rules over one set of facts: each rule ends fired, refuted, silent or not evaluated.

The rule engine is loaded once per process and knowledge-base version (:class:`RuleEngine`);
every call to :meth:`RuleEngine.evaluate` runs fresh sessions, so a conclusion is a pure function
of the facts given.

**One session per node.** The rules are compiled once; the facts are split into sessions
(:func:`split_sessions`) and each runs in its own fresh durable session, so a rule never joins
facts of two machines. The facts' nodes were resolved in one place before
(:mod:`clusterdx.facts.nodes`). A ticket that names at most one host is one session. In a
multi-host ticket each host's session holds that host's facts plus the *job-level* facts: those
that name no host (a file the ticket does not place) and those that describe the whole job
(:data:`JOB_LEVEL_TYPES`: an nccl-tests run, a training job's step times). That is the job-wide
session joined with each host: a rule that matches only job-level facts matches the same facts
in every host session and is counted once; a rule that joins a host fact with a job-level fact
fires on that host. A rule's results across sessions merge into one :class:`RuleResult`: fired
(or refuted) when any session fired it, with the matches of all sessions, silent when some
session could evaluate it and none fired it, and *not evaluated* only when no session had the
facts it requires (its ``missing`` is that of the session that came closest).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Sequence

from clusterdx.engine import oracle
from clusterdx.engine.durable import DurableSession
from clusterdx.engine.ir import CompiledRule, Emit, Pattern
from clusterdx.engine.kb import KnowledgeBase
from clusterdx.engine.rulesetcache import compiled_rules
from clusterdx.facts.base import Fact
from clusterdx.facts.deadline import Deadline
from clusterdx.facts.nodes import is_unlabelled

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


#: fact types that describe the whole job rather than one machine: in a multi-host ticket they
#: join every host's session (see the module docstring)
JOB_LEVEL_TYPES = frozenset({
    "nccltests.run", "nccltests.result", "nccltests.efficiency",
    "train.job", "train.timer", "train.step_stats", "compare.metric",
})


def split_sessions(facts: Sequence[Fact]) -> list[tuple[str, list[int]]]:
    """(session name, fact indexes) per session: one per host, each with the job-level facts; a
    single session of every fact when at most one host is named.

    >>> from clusterdx.facts.base import SourceRef
    >>> from clusterdx.facts.model.kernel import Sysctl
    >>> s = lambda n: Sysctl(node=n, source=SourceRef(input="x", line=1, parser="t"), key="k", value="1")
    >>> split_sessions([s("a"), s("node"), s("b"), s("a")])
    [('a', [0, 1, 3]), ('b', [1, 2])]
    >>> split_sessions([s("a"), s("node")])
    [('a', [0, 1])]
    """
    hosts: dict[str, list[int]] = {}
    shared: list[int] = []
    for i, f in enumerate(facts):
        if is_unlabelled(f.node) or f.fact_type in JOB_LEVEL_TYPES:
            shared.append(i)
        else:
            hosts.setdefault(f.node, []).append(i)
    if len(hosts) <= 1:
        name = next(iter(hosts), "job")
        return [(name, list(range(len(facts))))]
    return [(h, sorted(idx + shared)) for h, idx in sorted(hosts.items())]


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
        self.rules: list[CompiledRule]
        self.rules, ruleset = compiled_rules(kb, ids, params)
        self._session = DurableSession(ruleset)

    def close(self) -> None:
        self._session.close()

    def evaluate(self, facts: Sequence[Fact], deadline: Deadline | None = None
                 ) -> tuple[list[RuleResult], list[str]]:
        """Past ``deadline`` the sessions left (one per node) are not run, and noted in its
        ledger; rules evaluable in no session that ran are then ``not_evaluated``."""
        facts, payloads, dropped = safe_payloads(facts)
        by_rule: dict[int, list[Match]] = {}
        neg_only: dict[int, list[Match]] = {}
        counts: dict[int, int] = {}
        seen: dict[int, set[tuple[int, tuple[int, ...]]]] = {}
        evaluable: set[int] = set()
        closest: dict[int, list[Pattern]] = {}
        warnings: list[str] = list(dropped)
        for _name, idx in split_sessions(facts):
            if deadline is not None and deadline.passed():
                deadline.not_evaluated(_name)
                continue
            sub = [payloads[i] for i in idx]
            run = self._session.run(sub)  # compiled once; every run is a fresh session
            warnings += [w for w in run.warnings if w not in warnings]
            by_type = oracle.index_by_type(sub)
            live: set[int] = set()
            for ri, rule in enumerate(self.rules):
                missing = oracle.missing_requirements(rule, by_type)
                if missing:
                    if ri not in closest or len(missing) < len(closest[ri]):
                        closest[ri] = missing
                    continue
                live.add(ri)
                evaluable.add(ri)
                # a conjunction of negations only ("no deep idle state exposed") has no rete pattern
                for ci, conj in enumerate(rule.conjunctions):
                    if not conj.positives and (ri, ci) not in run.negated:
                        key = (ci, ())
                        if key not in seen.setdefault(ri, set()):
                            seen[ri].add(key)
                            neg_only.setdefault(ri, []).append(Match(ci, {}))
            for firing in run.firings:
                if firing.rule_index not in live:
                    continue
                ids = tuple(idx[i] for i in firing.facts)
                key = (firing.conjunction, ids)
                got = seen.setdefault(firing.rule_index, set())
                if key in got:
                    continue  # the same job-level facts, matched again in another host's session
                got.add(key)
                counts[firing.rule_index] = counts.get(firing.rule_index, 0) + 1
                kept = by_rule.setdefault(firing.rule_index, [])
                if len(kept) < MAX_MATCHES:
                    conj = self.rules[firing.rule_index].conjunctions[firing.conjunction]
                    kept.append(Match(firing.conjunction, {p.alias: facts[i] for p, i in zip(conj.positives, ids)}))
        results: list[RuleResult] = []
        for ri, rule in enumerate(self.rules):
            if ri not in evaluable:
                results.append(RuleResult(rule.id, "not_evaluated", missing=closest.get(ri, [])))
                continue
            matches = by_rule.get(ri, []) + neg_only.get(ri, [])
            if not matches:
                results.append(RuleResult(rule.id, "silent"))
                continue
            count = counts.get(ri, 0) + len(neg_only.get(ri, []))
            matches.sort(key=lambda m: min((f.source.line for f in m.bindings.values()), default=0))
            refutes_only = all(e.effect == "refutes" for e in rule.evidence)
            results.append(RuleResult(rule.id, "refuted" if refutes_only else "fired", matches[:MAX_MATCHES],
                                      count, evidence=rule.evidence, params=dict(rule.params)))
        return results, warnings
