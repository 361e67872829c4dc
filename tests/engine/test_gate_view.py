"""gate_view: checking many rules against its reduced facts gives the answers the full facts give."""

from types import SimpleNamespace as N

from clusterdx.engine.applicability import _named_nodes, gate_view, not_applicable_to, rule_not_applicable


def fact(fact_type, node, **fields):
    return N(fact_type=fact_type, node=node, **fields)


def facts_of(nodes, per_node=50, role="bare-metal", arch="x86_64"):
    out = []
    for n in nodes:
        out += [fact("nccl.channel", n, peers=2) for _ in range(per_node)]
    out.append(fact("cpu.info", nodes[0], arch=arch, isa="", hypervisor_vendor=""))
    out.append(fact("platform.role", nodes[0], role=role, guest=False, in_container=False))
    out.append(fact("platform.virtualization", nodes[-1], role=role, hypervisor=""))
    return out


def rule(tags=(), needs=(), evidence=()):
    return N(tags=list(tags), requires=N(facts=[N(fact=t) for t in needs]), evidence=list(evidence))


def test_view_keeps_gate_facts_and_one_fact_per_node():
    facts = facts_of(["a", "b", "c", "d"])
    view = gate_view(facts)
    assert len(view) == 4 + 3
    assert {f.fact_type for f in view} == {"nccl.channel", "cpu.info", "platform.role", "platform.virtualization"}
    assert _named_nodes(view) == _named_nodes(facts) == 4


def test_same_answers_as_the_full_facts():
    kb = N(nodes={"vm-x": N(applies_to={"virtualization": ["guest"]}),
                  "bm-y": N(applies_to={"virtualization": ["bare-metal"]})})
    rules = [rule(tags=["arch.arm64"]), rule(tags=["env.vm-guest"]), rule(tags=["env.bare-metal"]),
             rule(needs=["fleet.outlier"]), rule(evidence=[N(node="vm-x")]), rule(evidence=[N(node="bm-y")])]
    for nodes in (["a"], ["a", "b"], ["a", "b", "c"]):
        for role, arch in (("bare-metal", "x86_64"), ("vm-guest", "aarch64")):
            facts = facts_of(nodes, role=role, arch=arch)
            view = gate_view(facts)
            got = [rule_not_applicable(r, kb, view) for r in rules]
            assert got == [rule_not_applicable(r, kb, facts) for r in rules]
            assert any(got) and not all(got)
            gates = {"virtualization": ["guest"]}
            assert not_applicable_to(gates, view) == not_applicable_to(gates, facts)


def test_view_of_no_facts_is_empty():
    assert gate_view([]) == []
