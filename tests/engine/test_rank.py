"""Ranking on a small hand-made graph: direct evidence, attenuation, explaining away, absent symptoms."""

from clusterdx.engine.graph import CausalGraph
from clusterdx.engine.rank import EvidenceRef, reportable, score
from clusterdx.engine.schema import Node


def node(id, kind, causes=(), prior=None, cost=()):
    return Node.model_validate({"schema": "clusterdx/node/v1", "id": id, "kind": kind, "title": id,
                                "prior": prior, "cost_pct": list(cost),
                                "causes": [{"node": c, "strength": s} for c, s in causes]})


def graph():
    nodes = [
        node("a", "root_cause", [("mech", "strong")], "low", (4, 10)),
        node("b", "root_cause", [("mech", "strong")], "low", (2, 4)),
        node("mech", "mechanism", [("throughput-gap", "strong")]),
        node("throughput-gap", "symptom"),
    ]
    return CausalGraph.build({n.id: n for n in nodes})


def by_id(results):
    return {s.cause: s for s in results}


def test_no_evidence_stays_at_prior_and_is_not_reported():
    res = score(graph(), [])
    assert abs(by_id(res)["a"].confidence - 0.05) < 1e-6
    assert reportable(res) == []


def test_direct_evidence_raises_only_its_cause():
    res = by_id(score(graph(), [EvidenceRef(0, "r", "a", "supports", "strong")]))
    assert res["a"].confidence > 0.5 > res["b"].confidence
    assert res["b"].confidence == res["b"].prior or abs(res["b"].confidence - 0.05) < 1e-6


def test_shared_mechanism_supports_both_attenuated():
    res = by_id(score(graph(), [EvidenceRef(0, "r", "mech", "supports", "strong")]))
    assert 0.05 < res["a"].confidence < 0.5
    assert abs(res["a"].logit - res["b"].logit) < 1e-9
    assert res["a"].terms[0].attenuation == 0.85


def test_explaining_away_lowers_the_rival():
    shared = EvidenceRef(0, "r", "mech", "supports", "strong")
    alone = by_id(score(graph(), [shared]))
    explained = by_id(score(graph(), [shared, EvidenceRef(1, "r2", "a", "supports", "decisive")]))
    assert explained["b"].confidence < alone["b"].confidence


def test_absent_symptom_counts_against():
    res = by_id(score(graph(), [EvidenceRef(0, "r", "a", "supports", "moderate"),
                                EvidenceRef(1, "r2", "mech", "refutes", "strong")]))
    only = by_id(score(graph(), [EvidenceRef(0, "r", "a", "supports", "moderate")]))
    assert res["a"].confidence < only["a"].confidence


def test_rank_by_expected_share_bounded_by_gap():
    ev = [EvidenceRef(0, "r", "a", "supports", "decisive"), EvidenceRef(1, "r", "b", "supports", "decisive")]
    res = score(graph(), ev)
    assert [s.cause for s in res] == ["a", "b"]  # a costs more
    capped = score(graph(), ev, gap_pct=2.0)
    assert all(s.expected_pct <= 2.0 for s in capped)
