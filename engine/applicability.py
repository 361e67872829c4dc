"""Whether a rule or a cause can apply to the node a diagnosis is about.

Decided once here, from facts in hand, so that no explainer has to reason about it: a rule
gated on arm64 cannot apply to an x86 node, a rule about VM guests cannot apply to a node a
probe says is bare metal, a rule that compares nodes cannot apply to a diagnosis of one node.
"Cannot apply" is never "fine": reports keep counting such rules as not evaluated and only
list them apart. When the facts do not tell (no lscpu, role unknown), a rule may apply.

**Fit for the ranking.** A cause's ``applies_to`` (kb/nodes) names the platform roles it occurs on: ``virtualization:
[guest]`` for the VM-only causes, ``[bare-metal]`` for those a hypervisor hides. The node's role
is decided once, from every signal, by the ``platform.role`` deriver (facts/derive/platform.py).
Here the two meet:

- the role is known and allowed: fit 1;
- the role is known and not allowed (a VM-only cause on bare metal): :data:`MISFIT`;
- the role is unknown (nothing says VM, container or bare metal): :data:`UNKNOWN_FIT`, so a
  gated cause still competes for a symptom, weaker, instead of vanishing. A VM is nearly always
  said (the instance type, "our VMs", a hypervisor in lscpu), so when nothing says so, bare metal
  is the likelier platform: the guest-only causes fit less than the bare-metal ones.

The ranking scales a cause's share of the support on downstream nodes by its fit
(engine/rank.py, step 4a); direct evidence is left alone, since the rule behind it checked its
own conditions. The checklist's "not applicable" verdict is the same contradiction, stated.

Examples:

    >>> from types import SimpleNamespace as N
    >>> role = N(fact_type="platform.role", role="bare-metal", guest=False, in_container=False)
    >>> nodes = {"vm-x": N(kind="root_cause", applies_to={"virtualization": ["guest"]}),
    ...          "bm-y": N(kind="root_cause", applies_to={"virtualization": ["bare-metal"]})}
    >>> role_fit(nodes, [role])
    {'vm-x': 0.2, 'bm-y': 1.0}
    >>> role_fit(nodes, [])
    {'vm-x': 0.3, 'bm-y': 0.7}
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from clusterdx.facts.nodes import is_unlabelled

#: architectures a rule tag ``arch.<name>`` accepts
_ARCH_TAGS = {"arm64": {"arm64", "aarch64"}, "x86": {"x86", "x86_64", "amd64", "i686"}}
#: fewest named nodes for a rule over several nodes (fleet outliers, drift) to have anything to read
MIN_FLEET_NODES = 3


#: the fact types the gates read; any other fact matters here only for the node it names
_GATE_TYPES = frozenset({"cpu.info", "platform.virtualization", "platform.role"})


def gate_view(facts: Sequence[Any]) -> list[Any]:
    """The facts the checks below read, for a caller that checks many rules against one set of
    facts: those of the gate types and the first fact of each node. Each check walks its facts,
    so on a log of tens of thousands of facts checking every rule against them all would cost
    more than the diagnosis; the answers are the same."""
    out: list[Any] = []
    nodes: set[Any] = set()
    for f in facts:
        if f.fact_type in _GATE_TYPES:
            out.append(f)
        elif f.node not in nodes:
            nodes.add(f.node)
            out.append(f)
    return out


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
    return len({f.node for f in facts if not is_unlabelled(f.node)})


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
        # short enough for one line of the text report: these inputs describe fewer nodes
        return f"compares {MIN_FLEET_NODES} or more nodes of a fleet"
    nodes = [kb.nodes[e.node] for e in rule.evidence if e.node in kb.nodes]
    reasons = [not_applicable_to(n.applies_to, facts) for n in nodes]
    if nodes and all(reasons):
        return reasons[0]
    return ""


#: a cause whose gates the node's known role contradicts
MISFIT = 0.2
#: a gated cause on a node whose role no input tells, by the role the cause needs
UNKNOWN_FIT = {"guest": 0.3, "bare-metal": 0.7, "container": 0.4}


def _known(facts: Sequence[Any]) -> tuple[bool | None, bool | None]:
    """(is a VM guest, runs in a container) as the platform.role facts say; None: not known."""
    guest: bool | None = None
    container: bool | None = None
    for f in facts:
        if getattr(f, "fact_type", "") != "platform.role":
            continue
        role = getattr(f, "role", "unknown")
        g = getattr(f, "guest", None)
        c = getattr(f, "in_container", None)
        if role == "vm-guest":
            g = True
        if role == "bare-metal":
            g, c = False, False if c is None else c
        if role == "container":
            c = True
        guest = g if guest is None else (guest or bool(g))
        container = c if container is None else (container or bool(c))
    return guest, container


def role_fit(nodes: Mapping[str, Any], facts: Sequence[Any]) -> dict[str, float]:
    """Fit 0..1 of every root cause that has a virtualization gate (others are absent: fit 1)."""
    guest, container = _known(facts)
    state = {"guest": guest, "bare-metal": None if guest is None else not guest, "container": container}
    out: dict[str, float] = {}
    for cid, node in nodes.items():
        if getattr(node, "kind", "") != "root_cause":
            continue
        gates = getattr(node, "applies_to", {}) or {}
        allowed = {a.lower() for a in [*gates.get("virtualization", []), *gates.get("scope", [])]}
        allowed &= set(state)
        if not allowed:
            continue
        fits = []
        for a in allowed:
            known = state[a]
            fits.append(UNKNOWN_FIT[a] if known is None else 1.0 if known else MISFIT)
        out[cid] = max(fits)
    return out
