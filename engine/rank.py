"""Ranking: from rule evidence on the causal graph to one posterior and one expected share per cause.

The method, with its numbers in :mod:`clusterdx.engine.weights`:

1. Causes are not mutually exclusive. Each root cause ``R`` keeps its own log-odds, starting at
   ``logit(prior(R))``.
2. Evidence directly on ``R`` adds ``±log(LR(strength))`` (supports/refutes).
3. Evidence on a downstream node ``N`` (a mechanism, observable or symptom) reaches every cause
   upstream of it, attenuated by the strongest path: ``a(R, N)`` = product of edge weights.
4. Evidence on a downstream node needs one explanation, not one per cause: its support is shared
   among the causes upstream by their responsibility ``r(R) = a(R, N) * p_direct(R) / sum over
   R' of a(R', N) * p_direct(R')``, where ``p_direct`` is the confidence from the cause's own
   direct evidence. A cause already established by its own rules takes most of it; this is the
   explaining away, and it keeps a symptom every cause can produce (a longer step time) from
   lifting forty causes at once. The change is ``log(LR) * a(R, N) * r(R)``.
5. A symptom that was checked and found absent (``refutes`` on ``N``) lowers every cause that
   predicts it, in proportion to how strongly it predicts it: ``-log(LR) * a(R, N) * ABSENT_SYMPTOM_FACTOR``.
6. ``confidence = sigmoid(log-odds)``. The expected recoverable share of the gap is
   ``confidence * midpoint(cost_pct)``, bounded by the measured gap when one is known; the list is
   ordered by it, confidence breaking ties.

Every term that moves a score is kept (:class:`Term`) so an explainer can show the arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from clusterdx.engine.graph import CausalGraph
from clusterdx.engine.schema import Node
from clusterdx.engine.weights import ABSENT_SYMPTOM_FACTOR, PRIOR_P, REPORT_MIN, logit, sigmoid, strength_llr


@dataclass(frozen=True)
class EvidenceRef:
    """One rule's evidence on one graph node, as the ranking sees it."""

    key: int
    rule_id: str
    node: str
    effect: str
    strength: str


@dataclass
class Term:
    evidence: int
    rule_id: str
    node: str
    effect: str
    strength: str
    attenuation: float
    share: float
    delta: float


@dataclass
class Scored:
    cause: str
    prior: float
    confidence: float
    logit: float
    terms: list[Term] = field(default_factory=list)
    expected_pct: float = 0.0
    cost_mid: float = 0.0

    @property
    def has_direct_support(self) -> bool:
        return any(t.node == self.cause and t.effect == "supports" for t in self.terms)

    @property
    def supported(self) -> bool:
        return any(t.delta > 0 for t in self.terms)


def _prior(node: Node, overrides: dict[str, str] | None = None) -> float:
    word = (overrides or {}).get(node.id) or node.prior or "low"
    return PRIOR_P[word]


def score(graph: CausalGraph, evidence: list[EvidenceRef], gap_pct: float | None = None,
          priors: dict[str, str] | None = None) -> list[Scored]:
    """Score every root cause; return them best first. ``priors`` are site overrides (words)."""
    nodes = graph.nodes
    causes = graph.root_causes()
    direct: dict[str, float] = {}
    for cause in causes:
        lo = logit(_prior(nodes[cause], priors))
        for ev in evidence:
            if ev.node == cause:
                lo += strength_llr(ev.strength) * (1 if ev.effect == "supports" else -1)
        direct[cause] = sigmoid(lo)

    results: list[Scored] = []
    for cause in causes:
        prior = _prior(nodes[cause], priors)
        lo = logit(prior)
        terms: list[Term] = []
        reach = graph.attenuation.get(cause, {})
        for ev in evidence:
            att = reach.get(ev.node, 0.0)
            if att <= 0.0:
                continue
            llr = strength_llr(ev.strength)
            if ev.node == cause:
                delta, share = (llr if ev.effect == "supports" else -llr), 1.0
            elif ev.effect == "supports":
                upstream = graph.causes_of(ev.node)
                total = sum(direct[r] * a for r, a in upstream.items())
                share = (direct[cause] * att / total) if total > 0 else 0.0
                delta = llr * att * share
            else:
                share = ABSENT_SYMPTOM_FACTOR
                delta = -llr * att * share
            lo += delta
            terms.append(Term(ev.key, ev.rule_id, ev.node, ev.effect, ev.strength, round(att, 4),
                              round(share, 4), round(delta, 4)))
        conf = sigmoid(lo)
        cost = nodes[cause].cost_pct or [0.0, 0.0]
        mid = (cost[0] + cost[1]) / 2
        expected = conf * mid
        if gap_pct is not None and gap_pct >= 0:
            expected = min(expected, gap_pct)
        results.append(Scored(cause, prior, conf, lo, terms, expected, mid))
    results.sort(key=lambda s: (-s.expected_pct, -s.confidence, s.cause))
    return results


def reportable(scored: list[Scored]) -> list[Scored]:
    """Causes worth listing: supported by some evidence and not negligible."""
    return [s for s in scored if s.supported and (s.has_direct_support or s.confidence >= REPORT_MIN)]
