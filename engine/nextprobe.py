"""Next probes: which collection would most change the ranking, per unit of cost.

For every probe in the knowledge base whose facts are not all in hand yet, the rules it would make
evaluable are the ones now ``not_evaluated`` for want of a fact type the probe yields. Each such
rule, once evaluated, either fires (its evidence joins the ranking) or stays silent. Its chance of
firing is read off the current ranking: for supporting evidence on node N, the largest
``confidence(R) * attenuation(R, N)`` over causes R upstream of N (the rule fires when one of
them is present); for refuting evidence, one minus that.

For each cause a probe bears on, its outcome is one of two: the unlocked rules that support the
cause fire (with the cause's current confidence as the chance, raised to at least a coin flip
when the facts in hand already match the rule's other patterns — an arm64 Grace node for a Grace
rule), or the ones that refute it fire. Each outcome is scored with the same
arithmetic :func:`clusterdx.engine.rank.score` ranks with (:func:`~clusterdx.engine.rank.confidence_of`:
that one cause, not a re-ranking of every cause), and the expected drop in the cause's binary
entropy is its information gain. Rules whose collected patterns cannot match (an x86 node for a
Grace rule) are left out. A probe's gain is its largest weighted gain on one cause plus a quarter
of the others (a broad dump should not win on breadth alone), weighted 3 for the two
leading suspects (the most confident causes with evidence; in a report of candidates only, whose
confidence is mostly prior, the first two it lists), 1.5 for other causes with evidence,
1 for causes whose unlocked rules already match the collected facts in part, 0.3 for causes
whose rules look at something collected, and 0.1 for causes nothing points at yet (fishing),
divided by its cost: one unit, plus its duration in minutes, plus 0.5 when it needs root, 1 when
it runs only on the hypervisor and 3 when it disturbs the running job. The list starts with the collection that would settle each of the
two leading suspects best, whatever its cost (what an expert would ask for next), then the rest
by value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from clusterdx.engine.evaluate import RuleResult
from clusterdx.engine.kb import KnowledgeBase
from clusterdx.engine.rank import EvidenceRef, Scored, confidence_of, score

TOP_K = 8


@dataclass
class Suggestion:
    probe_id: str
    gain: float
    cost: float
    value: float
    unlocks: list[str] = field(default_factory=list)
    bears_on: list[str] = field(default_factory=list)
    separates: tuple[str, str] | None = None
    #: weighted gain per cause, for picking the best probe for each leading suspect
    per_cause: dict[str, float] = field(default_factory=dict)


def _entropy(scored: list[Scored], focus: set[str]) -> float:
    h = 0.0
    for s in scored:
        if s.cause not in focus:
            continue
        p = min(max(s.confidence, 1e-9), 1 - 1e-9)
        h -= p * math.log2(p) + (1 - p) * math.log2(1 - p)
    return h


def _p_fire(kb: KnowledgeBase, conf: dict[str, float], node: str, effect: str) -> float:
    assert kb.graph is not None
    upstream = kb.graph.causes_of(node)
    p = max((conf.get(c, 0.0) * a for c, a in upstream.items()), default=0.0)
    return p if effect == "supports" else 1.0 - p


def _feasibility(rule_id: str, engine_rules: dict, payloads: list[dict], present: set[str]) -> float:
    """How the facts in hand bear on a rule that is not evaluated yet.

    0 when every conjunction has a pattern on a collected fact type that no fact satisfies (the
    rule cannot fire whatever the probe shows), 1 when some conjunction has a pattern already
    satisfied by collected facts (the context matches: an arm64 Grace node for a Grace rule),
    0.5 when nothing collected bears on it either way.
    """
    from clusterdx.engine.oracle import pattern_holds

    rule = engine_rules.get(rule_id)
    if rule is None:
        return 0.5
    best = 0.0
    for conj in rule.conjunctions:
        on_present = [p for p in conj.positives if p.fact_type in present]
        if not all(any(pattern_holds(p, f) for f in payloads) for p in on_present):
            continue
        best = max(best, 1.0 if on_present else 0.5)
    return best


def probe_cost(kb: KnowledgeBase, probe_id: str) -> float:
    p = kb.probes[probe_id]
    # a probe that runs only on the hypervisor needs access to another machine than the one diagnosed
    elsewhere = 1.0 if set(p.where) == {"hypervisor"} else 0.0
    return (1.0 + p.duration_s / 60.0 + (0.5 if p.needs_root else 0.0) + (3.0 if p.disturbs_workload else 0.0)
            + elsewhere)


def _h(p: float) -> float:
    p = min(max(p, 1e-9), 1 - 1e-9)
    return -(p * math.log2(p) + (1 - p) * math.log2(1 - p))


def suggest(kb: KnowledgeBase, results: list[RuleResult], refs: list[EvidenceRef], present_types: set[str],
            gap_pct: float | None = None, priors: dict[str, str] | None = None, limit: int = 5,
            payloads: list[dict] | None = None, engine_rules: dict | None = None,
            attached: set[str] | None = None, listed: list[str] | None = None) -> list[Suggestion]:
    """``attached``: formats of the inputs that were read; a probe producing one of them is not
    proposed (its output is in the ticket already, even where it held fewer facts than it can).
    ``listed``: when the report holds candidates only, the order it lists them in (most lifted by the
    evidence first); its first two are the leading suspects. Without it, the two most confident
    supported causes are."""
    from clusterdx.facts.derive import obtainable

    assert kb.graph is not None
    payloads = payloads or []
    engine_rules = engine_rules or {}
    base = score(kb.graph, refs, gap_pct, priors)
    conf = {s.cause: s.confidence for s in base}
    leading = {s.cause for s in base if s.supported}
    # the two leading suspects are what the next probe should tell apart
    # (the report's own order when given: a candidate listed first because the evidence lifted it
    # most is a leading suspect even when a rival with a higher prior is more confident)
    if listed:
        top_two = set(listed[:2])
    else:
        top_two = {s.cause for s in sorted((s for s in base if s.supported), key=lambda s: (-s.confidence, s.cause))[:2]}
    # a cause is in context when something collected is what its rules look at (lscpu for the
    # CPU-power causes): the user was already looking there
    in_context: set[str] = set()
    for rule in engine_rules.values():
        looked_at = {p.fact_type for c in rule.conjunctions for p in c.positives} | {p.fact_type for p in rule.requires}
        if looked_at & present_types:
            for e in rule.evidence:
                in_context.update(kb.graph.causes_of(e.node) if e.node not in kb.graph.causes_of(e.node) else [e.node])
    waiting = [r for r in results if r.outcome == "not_evaluated"]
    feasible = {r.rule_id: _feasibility(r.rule_id, engine_rules, payloads, present_types) for r in waiting}
    # each feasible waiting rule with the fact types it misses: a probe unlocks it when it yields
    # one of them and, with what is in hand, all of them
    waiting_types = [(r, {m.fact_type for m in r.missing}) for r in waiting if feasible[r.rule_id] > 0]
    next_key = max((r.key for r in refs), default=-1) + 1
    out: list[Suggestion] = []
    # what-if confidences by the evidence added: a what-if asks about one cause only, so only that
    # cause is scored (confidence_of: the ranking's own arithmetic, not a re-ranking of all ~60);
    # each probe that unlocks the same rules asks the same question, answered once
    whatifs: dict[tuple[tuple[EvidenceRef, ...], str], float] = {}

    def whatif(extra: list[EvidenceRef], cause: str) -> float:
        key = (tuple(extra), cause)
        found = whatifs.get(key)
        if found is None:
            found = whatifs[key] = confidence_of(kb.graph, refs + extra, cause, priors)
        return found

    from clusterdx.facts.formats import all_formats

    formats = all_formats()
    attached = attached or set()
    for probe in kb.probes.values():
        if probe.format and probe.format in attached:
            continue
        # what the probe's output parses into: its declared facts and its format's
        declared = set(probe.yields) | set(formats[probe.format].facts if probe.format in formats else ())
        gives = obtainable(declared)
        if gives <= present_types:
            continue
        reachable = gives | present_types
        unlocked = [r for r, wanted in waiting_types if wanted & gives and wanted <= reachable]
        if not unlocked:
            continue
        # per cause: what the unlocked rules would say for it (support side, refute side)
        sides: dict[str, dict[str, list[EvidenceRef]]] = {}
        context: dict[str, bool] = {}
        for r in unlocked:
            for i, e in enumerate(kb.rules[r.rule_id].evidence):
                ref = EvidenceRef(next_key + i, r.rule_id, e.node, e.effect, e.strength, e.via)
                for cause in kb.graph.causes_of(e.node):
                    sides.setdefault(cause, {"supports": [], "refutes": []})[e.effect].append(ref)
                    if e.effect == "supports" and feasible[r.rule_id] == 1.0:
                        context[cause] = True
        moved: dict[str, float] = {}
        for cause, by_effect in sides.items():
            p = conf.get(cause, 0.0)
            if context.get(cause):
                p = 0.5 + 0.5 * p
            post_s = post_r = conf.get(cause, 0.0)
            if by_effect["supports"]:
                post_s = whatif(by_effect["supports"], cause)
            if by_effect["refutes"]:
                post_r = whatif(by_effect["refutes"], cause)
            eig = max(_h(p) - (p * _h(post_s) + (1 - p) * _h(post_r)), 0.0)
            if cause in top_two:
                weight = 3.0
            elif cause in leading:
                weight = 1.5
            elif context.get(cause):
                weight = 1.0
            elif cause in in_context:
                weight = 0.3
            else:
                weight = 0.1
            moved[cause] = weight * eig
        # a probe is worth what it settles about the cause it bears on most; what it says about
        # others counts a quarter, so a broad dump does not win on breadth alone
        best = max(moved.values(), default=0.0)
        gain = best + 0.25 * (sum(moved.values()) - best)
        bears = [c for c, d in sorted(moved.items(), key=lambda kv: (-kv[1], kv[0])) if d > 0.005][:3]
        cost = probe_cost(kb, probe.id)
        separates = (bears[0], bears[1]) if len(bears) >= 2 else None
        out.append(Suggestion(probe.id, round(gain, 4), round(cost, 3), round(gain / cost, 4),
                              sorted(r.rule_id for r in unlocked), bears, separates, moved))
    out.sort(key=lambda s: (-s.value, s.probe_id))
    # for each of the two leading suspects, the collection that would settle it best, whatever it
    # costs, comes first: that is the command an expert would ask for; cheaper ones follow
    first: list[Suggestion] = []
    # equal confidences are ordered by id: a set's order follows the hash seed, and the next probe
    # must not change from one run to the next
    leaders = [c for c in listed if c in top_two] if listed else sorted(top_two, key=lambda c: (-conf.get(c, 0.0), c))
    for cause in leaders:
        # ties go to the more specific collection (fewer other rules), then the cheaper one
        best = max(out, key=lambda s: (round(s.per_cause.get(cause, 0.0), 6), -len(s.unlocks), -s.cost),
                   default=None)
        if best is not None and best.per_cause.get(cause, 0.0) > 0.01 and best not in first:
            first.append(best)
    rest = [s for s in out if s not in first]
    return (first + rest)[:limit]
