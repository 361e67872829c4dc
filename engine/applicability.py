"""How well a root cause's platform gates fit the node: one owner for "can this cause occur here?".

A cause's ``applies_to`` (kb/nodes) names the platform roles it occurs on: ``virtualization:
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

#: a cause whose gates the node's known role contradicts
MISFIT = 0.2
#: a gated cause on a node whose role no input tells, by the role the cause needs
UNKNOWN_FIT = {"guest": 0.3, "bare-metal": 0.7}


def _roles(facts: Sequence[Any]) -> set[str]:
    """The node's roles in the words of ``applies_to`` ('guest', 'bare-metal', 'container')."""
    out: set[str] = set()
    for f in facts:
        if getattr(f, "fact_type", "") != "platform.role":
            continue
        role = getattr(f, "role", "unknown")
        if role == "vm-guest" or getattr(f, "guest", None):
            out.add("guest")
        if role == "container" or getattr(f, "in_container", None):
            out.add("container")
        if role == "bare-metal":
            out.add("bare-metal")
        if role == "container" and getattr(f, "guest", None) is False:
            out.add("bare-metal")  # a container on a machine a probe said is not a VM
    return out


def role_fit(nodes: Mapping[str, Any], facts: Sequence[Any]) -> dict[str, float]:
    """Fit 0..1 of every root cause that has a virtualization gate (others are absent: fit 1)."""
    roles = _roles(facts)
    out: dict[str, float] = {}
    for cid, node in nodes.items():
        if getattr(node, "kind", "") != "root_cause":
            continue
        allowed = {a.lower() for a in (getattr(node, "applies_to", {}) or {}).get("virtualization", [])}
        if not allowed:
            continue
        machine = roles - {"container"}
        if not machine:
            out[cid] = max(UNKNOWN_FIT.get(a, 0.5) for a in allowed)
        elif machine & allowed:
            out[cid] = 1.0
        else:
            out[cid] = MISFIT
    return out
