"""The readiness checklist: every root cause in the knowledge base, with one status each.

Statuses, from the same evidence and ranking ``diagnose`` uses:

- **fail**: the cause is confirmed: a strong or decisive rule points at it directly, or direct
  evidence lifts its confidence to ``CHECK_FAIL``;
- **warn**: evidence supports it, short of confirmation;
- **pass**: a rule that rules it out fired (refuting evidence on the cause itself, or on a
  mechanism or observable it strongly produces) and nothing supports it. Absence of evidence is
  never a pass;
- **not checked**: nothing either way; the rules that lacked facts and the probes that would
  collect them are listed;
- **not applicable**: the cause cannot occur on this node, by the cause's ``applies_to`` gates
  and facts that contradict them (a Grace SMMU item on an x86 node, a VM item on bare metal).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Sequence

from clusterdx.engine.applicability import not_applicable_to
from clusterdx.engine.kb import KnowledgeBase
from clusterdx.engine.weights import CHECK_FAIL

Status = Literal["fail", "warn", "pass", "not checked", "not applicable"]
STATUS_ORDER: tuple[str, ...] = ("fail", "warn", "not checked", "pass", "not applicable")
#: refuting evidence on a downstream node counts as ruling a cause out when the cause predicts
#: that node at least this strongly (attenuation along the strongest path)
PREDICTS = 0.8


@dataclass
class Item:
    cause: str
    title: str
    layer: str
    seed: list[str]
    status: Status
    reason: str
    confidence: float | None = None
    evidence: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    probes: list[str] = field(default_factory=list)
    mandatory: bool = False


def build(kb: KnowledgeBase, report: Any, facts: Sequence[Any], mandatory: Sequence[str] = ()) -> list[Item]:
    """One item per root cause from a finished diagnosis (its report and the facts behind it)."""
    assert kb.graph is not None
    by_id = {h.id: h for h in report.hypotheses}
    fired = {r.rule for r in report.rules if r.outcome in ("fired", "refuted")}
    not_eval = {ne.rule: ne for ne in report.not_evaluated}
    evaluated = {r.rule for r in report.rules if r.outcome != "not_evaluated"}
    items: list[Item] = []
    for node in sorted((n for n in kb.nodes.values() if n.kind == "root_cause"), key=lambda n: (n.layer or "", n.id)):
        reach = kb.graph.attenuation.get(node.id, {})
        supports, refutes, firm = [], [], []
        for rid in fired:
            for e in kb.rules[rid].evidence:
                att = 1.0 if e.node == node.id else reach.get(e.node, 0.0)
                if e.effect == "supports" and e.node == node.id:
                    supports.append(rid)
                    if e.strength in ("strong", "decisive"):
                        firm.append(rid)
                elif e.effect == "refutes" and att >= PREDICTS:
                    refutes.append(rid)
        h = by_id.get(node.id)
        waiting = [rid for rid in not_eval if any(e.node == node.id for e in kb.rules[rid].evidence)]
        missing = sorted({m for rid in waiting for m in not_eval[rid].missing})
        probes = sorted({p.command for rid in waiting for p in not_eval[rid].probes})
        na = not_applicable_to(node.applies_to, facts)
        item = Item(node.id, node.title, node.layer or "", list(node.seed), "not checked", "",
                    h.confidence if h else None, sorted(set(supports)), missing, probes, node.id in mandatory)
        if h is not None and supports and (firm or h.confidence >= CHECK_FAIL):
            item.status, item.reason = "fail", f"confirmed (confidence {h.confidence:.2f}) by {', '.join(sorted(set(supports)) or [e.rule for e in h.evidence])}"
        elif h is not None:
            # listed in the ranking at all means evidence supports it
            item.status, item.reason = "warn", f"suspected (confidence {h.confidence:.2f})"
        elif na:
            item.status, item.reason = "not applicable", na
        elif refutes and not supports:
            item.status, item.reason = "pass", f"ruled out by {', '.join(sorted(set(refutes)))}"
            item.evidence = sorted(set(refutes))
        else:
            ran = [r.id for r in kb.rules_for_node(node.id) if r.id in evaluated]
            if missing:
                item.reason = "missing " + ", ".join(missing)
            elif ran:
                item.reason = "no evidence either way (rules ran silent: " + ", ".join(sorted(ran)[:4]) + ")"
            elif kb.rules_for_node(node.id):
                item.reason = "its rules did not run (disabled or not stable)"
            else:
                item.reason = "no rule gives direct evidence for it yet"
        items.append(item)
    return items


def exit_status(items: Sequence[Item], strict: bool) -> int:
    """0 all pass or n/a; 6 any fail; 7 (with strict) any warn, or any not-checked item — only the
    mandatory ones when the site declares mandatory items."""
    if any(i.status == "fail" for i in items):
        return 6
    if strict:
        has_mandatory = any(i.mandatory for i in items)
        if any(i.status == "warn" for i in items):
            return 7
        if any(i.status == "not checked" and (i.mandatory or not has_mandatory) for i in items):
            return 7
    return 0


def coverage(items: Sequence[Item]) -> dict[str, int]:
    applicable = [i for i in items if i.status != "not applicable"]
    checked = [i for i in applicable if i.status != "not checked"]
    mandatory = [i for i in items if i.mandatory]
    return {"applicable": len(applicable), "checked": len(checked),
            "mandatory": len(mandatory), "mandatory_checked": sum(1 for i in mandatory if i.status != "not checked")}
