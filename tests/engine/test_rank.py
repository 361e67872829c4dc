"""Ranking on a small hand-made graph: direct evidence, attenuation, explaining away, absent symptoms."""

from clusterdx.engine.graph import CausalGraph
from clusterdx.engine.rank import EvidenceRef, reportable, score
from clusterdx.engine.schema import Node


def node(id, kind, causes=(), prior=None, cost=(), no_fault=False):
    return Node.model_validate({"schema": "clusterdx/node/v1", "id": id, "kind": kind, "title": id,
                                "prior": prior, "cost_pct": list(cost), "no_fault": no_fault,
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


def _wide_graph(n_causes: int):
    """n causes behind one symptom, and one more cause c0 that also has evidence of its own."""
    nodes = [node(f"c{i}", "root_cause", [("sym", "strong")], "medium" if i == 1 else "low", (5, 20))
             for i in range(n_causes)]
    nodes.append(node("sym", "symptom"))
    return CausalGraph.build({x.id: x for x in nodes})


def test_a_symptom_alone_gives_candidates_not_an_empty_answer():
    from clusterdx.engine.rank import candidates, lift

    g = _wide_graph(40)
    res = score(g, [EvidenceRef(0, "r", "sym", "supports", "moderate")])
    assert reportable(res) == []
    listed = candidates(res)
    # forty causes share one symptom: most are lifted by less than CANDIDATE_MIN_LIFT, yet the list is full
    assert len(listed) == 3 and sum(0 < lift(s) < 0.05 for s in listed) == 2
    assert listed[0].cause == "c1"  # the likelier cause (medium prior) takes the larger share
    # with a cause reportable, the floor is back: no low-lift candidates beside it
    firm = score(g, [EvidenceRef(0, "r", "sym", "supports", "moderate"), EvidenceRef(1, "r", "c5", "supports", "strong")])
    assert all(lift(s) >= 0.05 for s in candidates(firm))


def test_a_supported_cause_refuted_to_below_report_min_joins_the_candidates_by_lift():
    from clusterdx.engine.rank import listing

    g = _wide_graph(6)
    ev = [EvidenceRef(0, "r", "sym", "supports", "strong"),
          EvidenceRef(1, "r2", "c0", "supports", "weak"), EvidenceRef(2, "r3", "c0", "refutes", "moderate")]
    order = listing(score(g, ev))
    ids = [s.cause for s, _ in order]
    status = dict((s.cause, st) for s, st in order)
    assert status["c0"] == "supported" and status["c2"] == "candidate"
    # c0 ended below its prior: the candidates the symptom lifted come first, c1 (lifted to 0.25) first of all
    assert ids[0] == "c1" and ids.index("c2") < ids.index("c0") and ids[-1] == "c0"
    firm = listing(score(g, [EvidenceRef(0, "r", "c0", "supports", "decisive"), EvidenceRef(1, "r", "sym", "supports", "weak")]))
    assert firm[0] == (firm[0][0], "supported") and firm[0][0].cause == "c0"


def _no_fault_graph():
    """``nf`` says nothing is broken (costly: the whole gap); ``f`` and ``g`` are cheap faults."""
    nodes = [node("nf", "root_cause", [("sym", "moderate")], "low", (5, 50), no_fault=True),
             node("f", "root_cause", [("sym", "moderate")], "low", (1, 12)),
             node("g", "root_cause", [("sym", "moderate")], "low", (1, 12)),
             node("sym", "symptom")]
    return CausalGraph.build({x.id: x for x in nodes})


def _ids(ev):
    from clusterdx.engine.rank import listing

    return [s.cause for s, _ in listing(score(_no_fault_graph(), ev))]


def test_a_no_fault_cause_yields_to_a_fault_with_its_own_evidence():
    ev = [EvidenceRef(0, "r", "nf", "supports", "moderate"), EvidenceRef(1, "r2", "f", "supports", "moderate")]
    assert [s.cause for s in score(_no_fault_graph(), ev)][:2] == ["nf", "f"]  # same band: cost alone
    assert _ids(ev)[:2] == ["f", "nf"]
    # in the listing's tail too (both below REPORT_MIN), and even when the no-fault cause is likelier
    assert _ids([EvidenceRef(0, "r", "nf", "supports", "strong"), EvidenceRef(1, "r2", "f", "supports", "weak")])[:2] == ["f", "nf"]
    assert _ids([EvidenceRef(0, "r", "nf", "supports", "weak"), EvidenceRef(1, "r2", "f", "supports", "weak")])[:2] == ["f", "nf"]


def test_a_no_fault_cause_keeps_its_place_without_a_fault_of_its_own_evidence():
    # f is only a candidate (the shared symptom), or its own evidence was refuted below its prior
    assert _ids([EvidenceRef(0, "r", "nf", "supports", "weak"), EvidenceRef(1, "r2", "sym", "supports", "moderate")])[0] == "nf"
    assert _ids([EvidenceRef(0, "r", "nf", "supports", "moderate"), EvidenceRef(1, "r2", "f", "supports", "weak"),
                 EvidenceRef(2, "r3", "f", "refutes", "strong")])[0] == "nf"
    # a confirmed no-fault cause stays first
    assert _ids([EvidenceRef(0, "r", "nf", "supports", "decisive"), EvidenceRef(1, "r2", "f", "supports", "strong")])[0] == "nf"


def test_candidates_lifted_alike_are_ordered_by_confidence_and_apart_by_lift():
    from clusterdx.engine.rank import lift, listing
    from clusterdx.engine.weights import LIFT_NEAR_TIE

    nodes = [node("likely", "root_cause", [("sym", "moderate")], "medium", (5, 20)),
             node("rare", "root_cause", [("sym", "strong")], "low", (5, 20)),
             node("sym", "symptom")]
    g = CausalGraph.build({x.id: x for x in nodes})
    ev = [EvidenceRef(0, "r", "sym", "supports", "weak")]
    # the platform fits "likely" a little less: the symptom lifts "rare" slightly more
    res = score(g, ev, fit={"likely": 0.8})
    by = by_id(res)
    assert lift(by["likely"]) < lift(by["rare"]) < lift(by["likely"]) + LIFT_NEAR_TIE
    assert by["likely"].confidence > by["rare"].confidence
    assert [s.cause for s, _ in listing(res)] == ["likely", "rare"]
    # fitting it much less, the lifts are apart by more than a near tie: lift decides, not the prior
    res = score(g, ev, fit={"likely": 0.3})
    by = by_id(res)
    assert lift(by["rare"]) - lift(by["likely"]) >= LIFT_NEAR_TIE
    assert by["likely"].confidence > by["rare"].confidence
    assert [s.cause for s, _ in listing(res)] == ["rare", "likely"]


def test_confidence_of_one_cause_is_the_rankings_own_number():
    """The next-probe what-if scores one cause (confidence_of): the same float as the full ranking,
    with direct, shared, explained-away and absent-symptom evidence, under site priors; a node that
    is not a root cause has none."""
    from clusterdx.engine.rank import confidence_of

    g = graph()
    cases = [
        [],
        [EvidenceRef(0, "r", "a", "supports", "strong")],
        [EvidenceRef(0, "r", "mech", "supports", "moderate"), EvidenceRef(1, "s", "b", "refutes", "weak")],
        [EvidenceRef(0, "r", "throughput-gap", "refutes", "strong"), EvidenceRef(1, "s", "a", "supports", "decisive")],
        [EvidenceRef(0, "r", "mech", "supports", "strong"), EvidenceRef(1, "s", "mech", "refutes", "strong")],
    ]
    for evidence in cases:
        for priors in (None, {"b": "high"}):
            full = by_id(score(g, evidence, None, priors))
            for cause in ("a", "b"):
                assert confidence_of(g, evidence, cause, priors) == full[cause].confidence
    assert confidence_of(g, cases[2], "mech") == 0.0 and confidence_of(g, [], "nowhere") == 0.0


def _failure_graph():
    """``slow`` (medium prior) can only slow collectives; ``broken`` (low prior) reaches a failure
    node; ``mixed`` reaches one through ``ipc`` but also has a slow-only path (``path``)."""
    nodes = [node("slow", "root_cause", [("path", "strong")], "medium", (5, 90)),
             node("broken", "root_cause", [("crash", "strong")], "low", (2, 40)),
             node("mixed", "root_cause", [("path", "strong"), ("ipc", "moderate")], "medium", (5, 90)),
             node("path", "mechanism", [("throughput-gap", "strong")]),
             Node.model_validate({"schema": "clusterdx/node/v1", "id": "crash", "kind": "observable",
                                  "title": "crash", "fails": True, "causes": [{"node": "throughput-gap", "strength": "weak"}]}),
             Node.model_validate({"schema": "clusterdx/node/v1", "id": "ipc", "kind": "observable",
                                  "title": "ipc", "fails": True, "causes": [{"node": "path", "strength": "strong"}]}),
             node("throughput-gap", "symptom")]
    return CausalGraph.build({x.id: x for x in nodes})


def _listed(ev, complaint):
    from clusterdx.engine.rank import listing

    return [s.cause for s, _ in listing(score(_failure_graph(), ev), complaint)]


def test_a_failure_complaint_puts_the_cause_that_can_fail_first():
    ev = [EvidenceRef(0, "r", "slow", "supports", "moderate"), EvidenceRef(1, "r2", "broken", "supports", "moderate")]
    assert _listed(ev, "")[:2] == ["slow", "broken"]  # by confidence: the higher prior wins
    assert _listed(ev, "fails")[:2] == ["broken", "slow"]
    res = by_id(score(_failure_graph(), ev))
    assert res["broken"].explains_failure and not res["slow"].explains_failure
    assert res["slow"].confidence > res["broken"].confidence  # the order moved, the confidence did not


def test_a_failure_complaint_with_no_cause_that_can_fail_keeps_the_order():
    ev = [EvidenceRef(0, "r", "slow", "supports", "moderate")]
    assert _listed(ev, "fails") == _listed(ev, "") == ["slow"]


def test_via_narrows_a_cause_to_the_path_its_finding_acts_through():
    # "mixed" can fail the job (through ipc), but this finding acts only through the slow path
    narrowed = [EvidenceRef(0, "r", "mixed", "supports", "moderate", via="path"),
                EvidenceRef(1, "r2", "broken", "supports", "moderate")]
    whole = [EvidenceRef(0, "r", "mixed", "supports", "moderate"),
             EvidenceRef(1, "r2", "broken", "supports", "moderate")]
    assert _listed(narrowed, "fails")[:2] == ["broken", "mixed"]
    assert _listed(whole, "fails")[:2] == ["mixed", "broken"]


def test_evidence_on_a_failure_node_explains_the_failure_for_its_causes():
    ev = [EvidenceRef(0, "r", "slow", "supports", "moderate"), EvidenceRef(1, "r2", "ipc", "supports", "moderate")]
    res = by_id(score(_failure_graph(), ev))
    assert res["mixed"].explains_failure and not res["slow"].explains_failure
    assert _listed(ev, "fails")[0] == "mixed"


def _seen_failure_graph():
    """``nf`` says nothing is broken and could fail the job only by blocking peer DMA (``p2p``);
    ``shm`` and ``rdma`` are faults whose only path is the system-call failure (``syserr``) a
    signature shows, ``slow`` a fault that can only slow the job."""
    def fails(id):
        return Node.model_validate({"schema": "clusterdx/node/v1", "id": id, "kind": "observable", "title": id,
                                    "fails": True, "causes": [{"node": "throughput-gap", "strength": "weak"}]})
    nodes = [node("nf", "root_cause", [("throughput-gap", "strong"), ("p2p", "weak")], "low", (5, 50), no_fault=True),
             node("shm", "root_cause", [("syserr", "moderate")], "low", (5, 90)),
             node("rdma", "root_cause", [("syserr", "weak")], "low", (5, 90)),
             node("slow", "root_cause", [("throughput-gap", "moderate")], "low", (5, 90)),
             node("net", "root_cause", [("hang", "moderate")], "low", (5, 90)),
             Node.model_validate({"schema": "clusterdx/node/v1", "id": "hang", "kind": "symptom", "title": "hang",
                                  "fails": True, "causes": [{"node": "throughput-gap", "strength": "weak"}]}),
             fails("p2p"), fails("syserr"), node("throughput-gap", "symptom")]
    return CausalGraph.build({x.id: x for x in nodes})


def _seen(ev, complaint="fails"):
    from clusterdx.engine.rank import listing

    return [s.cause for s, _ in listing(score(_seen_failure_graph(), ev), complaint)]


def test_a_no_fault_cause_yields_to_the_faults_that_reach_the_failure_seen():
    # consumer GPUs (direct, weak) for the no-fault cause; an ncclSystemError signature shared by two faults
    ev = [EvidenceRef(0, "consumer", "nf", "supports", "weak"), EvidenceRef(1, "sig", "syserr", "supports", "moderate")]
    res = by_id(score(_seen_failure_graph(), ev))
    assert res["shm"].seen_failures == {"syserr"} and res["nf"].seen_failures == frozenset()
    assert not res["shm"].has_direct_support  # only the shared observable lifts it
    order = _seen(ev)
    assert order.index("shm") < order.index("nf") and order.index("rdma") < order.index("nf")
    assert res["nf"].confidence == by_id(score(_seen_failure_graph(), ev))["nf"].confidence  # order only


def test_without_a_failure_seen_the_no_fault_cause_keeps_its_place():
    # the same no-fault evidence and a shared slowdown: nothing fails, the step-9 rule as before decides
    ev = [EvidenceRef(0, "consumer", "nf", "supports", "weak"), EvidenceRef(1, "gap", "throughput-gap", "supports", "moderate")]
    order = _seen(ev, "")
    assert order[0] == "nf"


def test_a_failure_the_no_fault_cause_reaches_too_does_not_move_it():
    # the failure seen is the blocked peer DMA the no-fault cause (a board without P2P) can produce
    ev = [EvidenceRef(0, "consumer", "nf", "supports", "weak"), EvidenceRef(1, "hang", "p2p", "supports", "moderate")]
    res = by_id(score(_seen_failure_graph(), ev))
    assert res["nf"].seen_failures == {"p2p"}
    assert _seen(ev)[0] == "nf"


def test_a_hang_in_the_users_words_does_not_move_the_no_fault_cause():
    # a symptom marked fails (a multi-node hang the ticket reports) is no observed failure mechanism
    ev = [EvidenceRef(0, "consumer", "nf", "supports", "strong"), EvidenceRef(1, "said", "hang", "supports", "moderate")]
    res = by_id(score(_seen_failure_graph(), ev))
    assert res["net"].seen_failures == frozenset()
    assert _seen(ev)[0] == "nf"
    # the same weight on the observed system-call failure does move it
    ev = [EvidenceRef(0, "consumer", "nf", "supports", "strong"), EvidenceRef(1, "sig", "syserr", "supports", "moderate")]
    order = _seen(ev)
    assert order.index("shm") < order.index("nf")
