"""Whether a rule or a cause can apply to the node a diagnosis is about.

Decided once here, from facts in hand, so that no explainer has to reason about it: a rule
gated on arm64 cannot apply to an x86 node, a rule about VM guests cannot apply to a node a
probe says is bare metal, a rule that compares nodes cannot apply to a diagnosis of one node.
"Cannot apply" is never "fine": reports keep counting such rules as not evaluated and only
list them apart. When the facts do not tell (no lscpu, role unknown), a rule may apply.
"""

from __future__ import annotations

from typing import Any, Sequence

#: architectures a rule tag ``arch.<name>`` accepts
_ARCH_TAGS = {"arm64": {"arm64", "aarch64"}, "x86": {"x86", "x86_64", "amd64", "i686"}}
#: fewest named nodes for a rule over several nodes (fleet outliers, drift) to have anything to read
MIN_FLEET_NODES = 3
_GENERIC_NODES = {"node", "unknown", "test-node", ""}


def _values(facts: Sequence[Any], fact_type: str, fld: str) -> set[str]:
    return {str(getattr(f, fld)).lower() for f in facts
            if f.fact_type == fact_type and getattr(f, fld, None) not in (None, "")}


def not_applicable_to(gates: dict[str, list[str]], facts: Sequence[Any]) -> str:
    """A reason when facts contradict a cause's ``applies_to`` gates; '' when it may apply or
    nothing tells."""
    for gate, allowed in gates.items():
        allowed_l = {a.lower() for a in allowed}
        if gate == "arch":
            seen = _values(facts, "cpu.info", "arch") | _values(facts, "cpu.info", "isa")
            if seen and not (seen & allowed_l):
                return f"the node's CPU architecture is {', '.join(sorted(seen))}"
        if gate == "virtualization":
            roles = _values(facts, "platform.virtualization", "role")
            hv = (_values(facts, "platform.virtualization", "hypervisor")
                  | _values(facts, "cpu.info", "hypervisor_vendor")) - {"none", "unknown", ""}
            if roles and "guest" in allowed_l and roles <= {"bare-metal"} and not hv:
                return "the node is bare metal (systemd-detect-virt)"
            if allowed_l <= {"bare-metal", "none"} and ("guest" in roles or hv):
                return f"the node is a virtual machine ({', '.join(sorted(hv)) or 'guest'})"
    return ""


def _role(facts: Sequence[Any]) -> str:
    roles = _values(facts, "platform.role", "role") - {"unknown"}
    return next(iter(roles)) if len(roles) == 1 else ""


def _named_nodes(facts: Sequence[Any]) -> int:
    return len({f.node for f in facts if f.node not in _GENERIC_NODES})


def rule_not_applicable(rule: Any, kb: Any, facts: Sequence[Any]) -> str:
    """Why ``rule`` cannot apply to the node the facts describe, or '' when it may."""
    tags = set(rule.tags)
    arch_seen = _values(facts, "cpu.info", "arch") | _values(facts, "cpu.info", "isa")
    wanted = [a for a in _ARCH_TAGS if f"arch.{a}" in tags]
    if arch_seen and wanted and not any(arch_seen & _ARCH_TAGS[a] for a in wanted):
        return f"for {'/'.join(wanted)} CPUs; this node is {', '.join(sorted(arch_seen))}"
    role = _role(facts)
    if role == "bare-metal" and ("env.vm-guest" in tags or "layer.hypervisor" in tags):
        return "for virtual machines and their hosts; this node is bare metal"
    if role in ("vm-guest", "container") and "env.bare-metal" in tags:
        return f"for bare-metal nodes; this node is a {role}"
    needs = {getattr(f, "fact", f) for f in rule.requires.facts}
    if ("tool.fleet" in tags or any(t.startswith("fleet.") for t in needs)) \
            and _named_nodes(facts) < MIN_FLEET_NODES:
        return "compares nodes of a fleet; these inputs describe fewer than 3 nodes"
    nodes = [kb.nodes[e.node] for e in rule.evidence if e.node in kb.nodes]
    reasons = [not_applicable_to(n.applies_to, facts) for n in nodes]
    if nodes and all(reasons):
        return reasons[0]
    return ""
