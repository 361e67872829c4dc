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
   A symptom seen in one run and absent in another (the slow and the fast run of one ticket) was
   seen: when any evidence supports ``N``, refutations of ``N`` count zero (their terms are kept
   with share 0), so two runs never cancel each other out.
6. ``confidence = sigmoid(log-odds)``. The expected recoverable share of the gap is
   ``confidence * midpoint(cost_pct)``, bounded by the measured gap when one is known.
7. Order: by confidence first. Cost decides only between causes of similar confidence, that is
   causes in the same confidence band: every cause at or above
   :data:`~clusterdx.engine.weights.CONFIRMED` (0.8) is in the top band (all of them are very
   likely present, so the one worth more is fixed first); below it the bands are
   :data:`~clusterdx.engine.weights.CONFIDENCE_BAND` (0.2) wide: 0.6-0.8, 0.4-0.6, 0.2-0.4,
   0-0.2. Inside a band the larger expected share comes first, then the higher confidence, then
   the id. So a broad, expensive cause at 0.3 never outranks a cheap one at 0.9.
8. Reported causes (:func:`reportable`) have direct support, or reach
   :data:`~clusterdx.engine.weights.REPORT_MIN` and at least twice their prior through downstream
   evidence. The other causes the evidence lifted (a symptom or shared mechanism they could
   produce, such as low bus bandwidth or a hang on PCIe GPUs) are listed below the reported ones,
   most lifted first, marked as *candidates* (:func:`candidates`); a supported cause whose
   confidence ended below REPORT_MIN joins them in that order (:func:`listing`): the answer is then "one of
   these, and this probe separates them", never an empty list, and a cheap lead that a supported
   but broad cause would hide stays visible. Lifts closer than
   :data:`~clusterdx.engine.weights.LIFT_NEAR_TIE` are near ties, ordered by confidence: evidence
   that moved two causes alike does not separate them, and their priors then do. Once a cause
   with its own evidence reaches :data:`~clusterdx.engine.weights.CONFIRMED`, it explains the
   symptoms and no candidates are listed.
9. A no-fault explanation (a node marked ``no_fault``: the expected figure is beyond what the
   hardware can deliver, nothing is broken) is a diagnosis of exclusion (:func:`exclusion_last`).
   It explains any shortfall, so a shortfall is no evidence for it over a fault; what its own
   evidence shows (no NVLink, fewer NICs than GPUs) is that the reference may be too high, not that
   nothing else is wrong. Unless it is confirmed, it is listed below every fault that has evidence
   of its own (direct support, net of refutations above the fault's prior) and explains a symptom
   it explains too, and below every fault the evidence lifted that reaches a failure the evidence
   shows (a supported observable marked ``fails``, such as an ncclSystemError; a hang in the user's
   words is a symptom, not one) which it cannot produce:
   that nothing is broken does not explain a failure seen; the others keep their order. Its cost, the whole gap, otherwise puts it first
   among its band whenever a specific fault is about as likely; checked first, the fault is fixed
   or ruled out, and only then is the reference recomputed.
10. A ticket that complains only that the job fails (it hangs, crashes, stops with an error;
   nothing about speed: :mod:`clusterdx.engine.complaint`) is answered by a cause that can fail
   it: one whose lifting evidence reaches a node marked ``fails`` in the graph, through the
   evidence's ``via`` when the rule names the one path its finding acts through
   (:func:`failures_first`). Those are listed first; a cause that can only slow the job down
   follows them, its confidence unchanged (it may well be present; it is not the answer).

Every term that moves a score is kept (:class:`Term`) so an explainer can show the arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from clusterdx.engine.graph import CausalGraph
from clusterdx.engine.schema import Node
from clusterdx.engine.weights import (ABSENT_SYMPTOM_FACTOR, CANDIDATE_MAX, CANDIDATE_MIN_LIFT, CONFIDENCE_BAND,
                                      SYMPTOM_ONLY_MAX, SYMPTOM_ONLY_MIN_LIFT,
                                      CONFIRMED, LIFT_NEAR_TIE, PRIOR_P, REPORT_MIN, logit, sigmoid,
                                      strength_llr)


@dataclass(frozen=True)
class EvidenceRef:
    """One rule's evidence on one graph node, as the ranking sees it."""

    key: int
    rule_id: str
    node: str
    effect: str
    strength: str
    #: the rule's ``via`` (:class:`~clusterdx.engine.schema.EvidenceSpec`): the path its finding acts through
    via: str = ""


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
    #: the cause says nothing is broken (the node's ``no_fault``): a diagnosis of exclusion, step 9
    no_fault: bool = False
    #: the graph nodes downstream of the cause: the symptoms it can explain (step 9)
    reaches: frozenset[str] = frozenset()
    #: some evidence that lifted the cause acts through a path that can fail the job (step 10)
    explains_failure: bool = False
    #: the failures the evidence shows (supported observables marked ``fails``) that the cause reaches (step 9)
    seen_failures: frozenset[str] = frozenset()

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
          priors: dict[str, str] | None = None, fit: dict[str, float] | None = None) -> list[Scored]:
    """Score every root cause; return them best first. ``priors`` are site overrides (words).

    ``fit`` (step 4a): how well each cause's platform gates fit the node, 0..1
    (:func:`clusterdx.engine.applicability.role_fit`); it scales the cause's share of support on
    downstream nodes, so a VM-only cause takes little of a symptom seen on bare metal and a part
    of it when the role is unknown. Direct evidence is not scaled (its rule decided)."""
    fit = fit or {}
    nodes = graph.nodes
    causes = graph.root_causes()
    direct = {cause: _direct(graph, cause, evidence, priors, fit) for cause in causes}
    seen = {ev.node for ev in evidence if ev.effect == "supports"}
    # an observed failure mechanism (an ncclSystemError signature), not a symptom in the user's words
    # (a hang), which any cause that stalls a collective can be behind
    failed = frozenset(n for n in seen if getattr(nodes.get(n), "fails", False) and nodes[n].kind == "observable")
    by_key = {ev.key: ev for ev in evidence}
    results: list[Scored] = []
    for cause in causes:
        prior = _prior(nodes[cause], priors)
        terms: list[Term] = []
        lo = _cause_logit(graph, cause, evidence, direct, seen, prior, terms)
        conf = sigmoid(lo)
        cost = nodes[cause].cost_pct or [0.0, 0.0]
        mid = (cost[0] + cost[1]) / 2
        expected = conf * mid
        if gap_pct is not None and gap_pct >= 0:
            expected = min(expected, gap_pct)
        reaches = frozenset(n for n in graph.attenuation.get(cause, {}) if n != cause)
        results.append(Scored(cause, prior, conf, lo, terms, expected, mid,
                              no_fault=nodes[cause].no_fault, reaches=reaches,
                              seen_failures=failed & (reaches | {cause}),
                              explains_failure=any(t.delta > 0 and graph.can_fail(by_key[t.evidence].via or t.node)
                                                   for t in terms)))
    results.sort(key=order_key)
    return results


def confidence_of(graph: CausalGraph, evidence: list[EvidenceRef], cause: str,
                  priors: dict[str, str] | None = None, fit: dict[str, float] | None = None) -> float:
    """One cause's confidence as :func:`score` gives it (the same arithmetic in the same order,
    so the same float), 0.0 for a node that is not a root cause. It works out only the direct
    confidences the cause's shares need: what a next-probe what-if asks, for one cause at a time."""
    nodes = graph.nodes
    node = nodes.get(cause)
    if node is None or node.kind != "root_cause":
        return 0.0
    fit = fit or {}
    direct = _LazyDirect(graph, evidence, priors, fit)
    seen = {ev.node for ev in evidence if ev.effect == "supports"}
    return sigmoid(_cause_logit(graph, cause, evidence, direct, seen, _prior(node, priors), None))


def _direct(graph: CausalGraph, cause: str, evidence: list[EvidenceRef], priors: dict[str, str] | None,
            fit: dict[str, float]) -> float:
    """Step 4's ``p_direct``: the cause's confidence from its own direct evidence, scaled by fit."""
    lo = logit(_prior(graph.nodes[cause], priors))
    for ev in evidence:
        if ev.node == cause:
            lo += strength_llr(ev.strength) * (1 if ev.effect == "supports" else -1)
    return sigmoid(lo) * fit.get(cause, 1.0)


class _LazyDirect(dict):
    """``p_direct`` of a root cause, worked out when a share first asks for it."""

    def __init__(self, graph: CausalGraph, evidence: list[EvidenceRef], priors: dict[str, str] | None,
                 fit: dict[str, float]) -> None:
        super().__init__()
        self._args = (graph, evidence, priors, fit)

    def __missing__(self, cause: str) -> float:
        graph, evidence, priors, fit = self._args
        value = self[cause] = _direct(graph, cause, evidence, priors, fit)
        return value


def _cause_logit(graph: CausalGraph, cause: str, evidence: list[EvidenceRef], direct: dict[str, float],
                 seen: set[str], prior: float, terms: list[Term] | None) -> float:
    """Steps 1-5 for one cause: its log-odds, each term appended to ``terms`` when given."""
    lo = logit(prior)
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
            share = 0.0 if ev.node in seen else ABSENT_SYMPTOM_FACTOR
            delta = -llr * att * share
        lo += delta
        if terms is not None:
            terms.append(Term(ev.key, ev.rule_id, ev.node, ev.effect, ev.strength, round(att, 4),
                              round(share, 4), round(delta, 4)))
    return lo


def band(confidence: float) -> int:
    """The confidence band a cause falls in (see step 7 of the method)."""
    if confidence >= CONFIRMED:
        return int(CONFIRMED / CONFIDENCE_BAND) + 1
    return int(confidence / CONFIDENCE_BAND)


def order_key(s: Scored) -> tuple:
    return (-band(s.confidence), -s.expected_pct, -s.confidence, s.cause)


def reportable(scored: list[Scored]) -> list[Scored]:
    """Causes worth listing as supported: evidence of their own, or lifted to :data:`REPORT_MIN`
    by downstream evidence (a share of a symptom) well above their prior. A cause whose
    confidence is mostly its prior (a common cause nudged by a symptom anyone could explain) is
    a candidate, not a finding."""
    return [s for s in scored if s.supported and (
        s.has_direct_support or (s.confidence >= REPORT_MIN and s.confidence >= 2 * s.prior))]


def lift(s: Scored) -> float:
    """How far the evidence moved a cause above its prior, in log-odds."""
    return s.logit - logit(s.prior)


def candidates(scored: list[Scored]) -> list[Scored]:
    """Causes the evidence lifted, though not enough to report: listed as unconfirmed candidates.

    Step 8 of the method: those lifted by at least :data:`CANDIDATE_MIN_LIFT` log-odds, most lifted first (then higher
    confidence), at most :data:`CANDIDATE_MAX`. Causes already reportable are not candidates.
    """
    listed = reportable(scored)
    if any(s.has_direct_support and s.confidence >= CONFIRMED for s in listed):
        return []  # a confirmed cause explains the symptoms: the others are explained away
    shown = {s.cause for s in listed}
    # with nothing reportable, every lifted cause may be listed: a symptom shared by forty causes
    # lifts each only a little, and the answer is then "one of these", never an empty list
    floor, most = (CANDIDATE_MIN_LIFT, CANDIDATE_MAX) if listed else (SYMPTOM_ONLY_MIN_LIFT, SYMPTOM_ONLY_MAX)
    rest = [s for s in scored if s.cause not in shown and s.supported and lift(s) >= floor]
    rest.sort(key=lambda s: (-round(lift(s), 6), -s.confidence, s.cause))
    return rest[:most]


def listing(scored: list[Scored], complaint: str = "") -> list[tuple[Scored, str]]:
    """What the report lists, in order, with each cause's status ("supported" or "candidate").

    Supported causes at :data:`REPORT_MIN` or above come first, in :func:`order_key` order. A cause
    with evidence of its own that ended below REPORT_MIN (refuted about as much as supported) is no
    more certain than a candidate: it is listed among the candidates, all ordered by how far the
    evidence lifted them (:func:`lift`, the candidates' own order), so a 0.02 'supported' cause
    never stands above a candidate the evidence moved more. Ordering that tail by confidence
    instead lets the priors decide it (measured on the public corpus: 10 fewer right first); they
    decide only between lifts closer than :data:`LIFT_NEAR_TIE`. Last, a no-fault cause moves below
    the faults with evidence of their own (:func:`exclusion_last`, step 9)."""
    supported = reportable(scored)
    firm = [s for s in supported if s.confidence >= REPORT_MIN]
    rest = [(s, "supported") for s in supported if s.confidence < REPORT_MIN] + \
           [(s, "candidate") for s in candidates(scored)]
    rest.sort(key=lambda sv: (-round(lift(sv[0]), 6), sv[1] != "supported", sv[0].cause))
    rest = [sv for run in _near_ties(rest, lambda sv: lift(sv[0]), LIFT_NEAR_TIE)
            for sv in sorted(run, key=lambda sv: (-sv[0].confidence, sv[0].cause))]
    return failures_first(exclusion_last([(s, "supported") for s in firm] + rest), complaint)


def failures_first(items: list[tuple[Scored, str]], complaint: str) -> list[tuple[Scored, str]]:
    """Step 10 of the method: on a ticket that complains of a failure only (``complaint`` is
    ``'fails'``, :func:`clusterdx.engine.complaint.complaint`), the listed causes whose evidence can
    fail the job come first, each group in the order it had. What lifted a cause that cannot (a
    forced protocol, a governor) may well be present, but it does not answer a hang or a crash."""
    if complaint != "fails" or not any(s.explains_failure for s, _ in items):
        return items
    return [it for it in items if it[0].explains_failure] + [it for it in items if not it[0].explains_failure]


def _near_ties(items: list, value: Callable[[Any], float], near: float) -> list[list]:
    """``items`` (sorted by ``value``, highest first) cut into runs of near ties: an item joins the
    run before it when its value is less than ``near`` below the previous item's."""
    runs: list[list] = []
    for it in items:
        if runs and value(runs[-1][-1]) - value(it) < near:
            runs[-1].append(it)
        else:
            runs.append([it])
    return runs


def _fault_with_evidence(s: Scored) -> bool:
    return not s.no_fault and s.has_direct_support and lift(s) > 0


def _explains_seen_failure_instead(fault: Scored, no_fault: Scored) -> bool:
    """The fault, lifted by the evidence, reaches a failure the evidence shows (an ncclSystemError,
    a failed CUDA init) that the no-fault cause cannot produce: nothing being broken is no
    explanation of that failure, whatever else the no-fault cause's own evidence says."""
    return not fault.no_fault and lift(fault) > 0 and bool(fault.seen_failures - no_fault.seen_failures)


def exclusion_last(items: list[tuple[Scored, str]]) -> list[tuple[Scored, str]]:
    """Step 9 of the method: an unconfirmed no-fault cause moves below the last fault that has
    evidence of its own, net of refutations, and explains a symptom the no-fault cause explains
    too, or that reaches a failure the evidence shows and the no-fault cause does not; the order
    among the others is kept."""
    out = list(items)
    for k in reversed(range(len(out))):
        s = out[k][0]
        if not s.no_fault or s.confidence >= CONFIRMED:
            continue
        rivals = [j for j in range(k + 1, len(out))
                  if (_fault_with_evidence(out[j][0]) and out[j][0].reaches & s.reaches)
                  or _explains_seen_failure_instead(out[j][0], s)]
        if rivals:
            out.insert(rivals[-1], out.pop(k))  # after the pop, index rivals[-1] is just past that rival
    return out
