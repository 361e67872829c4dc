"""The case library: whole bundles under ``kb/cases/<id>/input`` with their expected diagnosis.

``expect.yaml`` beside each ``input/`` folder says what must rank where::

    description: What the user wrote in the ticket.
    expect:
      top: numa-balancing-enabled        # must rank first
      in_top_3: [rank-numa-misbinding]   # must be among the first three
      not_in_top_3: [...]                # look-alikes that must not rank high
      max_confidence: 0.5                # healthy controls: no hypothesis at or above this
    written_after_rules: false           # held out from tuning: reported separately
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clusterdx.engine.kb import KnowledgeBase, shipped_dirs
from clusterdx.engine.yamlsafe import load_plain


@dataclass
class CaseResult:
    case_id: str
    ok: bool
    problems: list[str]
    ranking: list[tuple[str, float]]
    expect: dict[str, Any]
    held_out: bool
    top1_ok: bool | None = None
    top3_ok: bool | None = None
    fired: set[str] = field(default_factory=set)


def case_dirs(root: Path | None = None) -> list[Path]:
    root = root or shipped_dirs()[1] / "cases"
    return sorted(p for p in root.iterdir() if (p / "expect.yaml").exists() and (p / "input").is_dir())


def run_case(kb: KnowledgeBase, case_dir: Path) -> CaseResult:
    from clusterdx.engine.diagnose import collect_paths, diagnose

    spec = load_plain(case_dir / "expect.yaml") or {}
    expect = spec.get("expect") or {}
    report = diagnose(collect_paths([case_dir / "input"]), kb=kb)
    ranking = [(h.id, h.confidence) for h in report.hypotheses]
    ids = [r[0] for r in ranking]
    problems: list[str] = []
    top1 = top3 = None
    if "top" in expect:
        top1 = bool(ids) and ids[0] == expect["top"]
        top3 = expect["top"] in ids[:3]
        if not top1:
            problems.append(f"expected {expect['top']} first, got {ids[:3]}")
    for cause in expect.get("in_top_3", []) or []:
        if cause not in ids[:3]:
            problems.append(f"expected {cause} in the top 3, got {ids[:3]}")
            top3 = False
        elif top3 is None:
            top3 = True
    for cause in expect.get("not_in_top_3", []) or []:
        if cause in ids[:3]:
            problems.append(f"{cause} should not be in the top 3: {ids[:3]}")
    if "max_confidence" in expect:
        worst = [(i, c) for i, c in ranking if c >= float(expect["max_confidence"])]
        if worst:
            problems.append(f"healthy control has confident hypotheses: {worst}")
    errors = [i.path for i in report.inputs if i.status == "error"]
    if errors:
        problems.append(f"inputs failed to parse: {errors}")
    fired = {r.rule for r in report.rules if r.outcome in ("fired", "refuted")}
    return CaseResult(case_dir.name, not problems, problems, ranking, expect,
                      bool(spec.get("written_after_rules")), top1, top3, fired)


def summarize(results: list[CaseResult]) -> dict[str, Any]:
    def acc(rs: list[CaseResult], attr: str) -> float | None:
        vals = [getattr(r, attr) for r in rs if getattr(r, attr) is not None]
        return round(sum(vals) / len(vals), 4) if vals else None

    held = [r for r in results if r.held_out]
    return {
        "cases": len(results), "passed": sum(r.ok for r in results),
        "top1": acc(results, "top1_ok"), "top3": acc(results, "top3_ok"),
        "held_out": {"cases": len(held), "passed": sum(r.ok for r in held),
                     "top1": acc(held, "top1_ok"), "top3": acc(held, "top3_ok")},
    }


def expected_causes(expect: dict[str, Any]) -> set[str]:
    out = set(expect.get("in_top_3", []) or [])
    if expect.get("top"):
        out.add(expect["top"])
    return out


def evaluate_library(kb: KnowledgeBase, dirs: list[Path] | None = None) -> dict[str, Any]:
    """Run every case; accuracy per root cause and overall, precision and recall per rule.

    A rule "should fire" on a case when it supports a cause the case expects in its top three
    (directly or through the graph), and should stay silent otherwise. Refuting rules are scored
    the other way round: they should fire where their cause is not expected.
    """
    results = [run_case(kb, d) for d in (dirs if dirs is not None else case_dirs())]
    per_cause: dict[str, dict[str, Any]] = {}
    for r in results:
        for cause in sorted(expected_causes(r.expect)):
            row = per_cause.setdefault(cause, {"cases": 0, "top1": 0, "top3": 0})
            ids = [c for c, _ in r.ranking]
            row["cases"] += 1
            row["top1"] += int(bool(ids) and ids[0] == cause and r.expect.get("top") == cause)
            row["top3"] += int(cause in ids[:3])
    for cause, row in per_cause.items():
        row["top3_acc"] = round(row["top3"] / row["cases"], 4)
    assert kb.graph is not None
    per_rule: dict[str, dict[str, Any]] = {}
    for rule in kb.rules.values():
        supports = {c for e in rule.evidence if e.effect == "supports" for c in kb.graph.causes_of(e.node)}
        refutes = {c for e in rule.evidence if e.effect == "refutes" for c in kb.graph.causes_of(e.node)}
        tp = fp = fn = tn = 0
        for r in results:
            expected = expected_causes(r.expect)
            should = bool(supports & expected) if supports else not (refutes & expected)
            fired = rule.id in r.fired
            tp += fired and should
            fp += fired and not should
            fn += (not fired) and should
            tn += (not fired) and not should
        per_rule[rule.id] = {
            "tp": tp, "fp": fp, "fn": fn, "tn": tn,
            "precision": round(tp / (tp + fp), 4) if tp + fp else None,
            "recall": round(tp / (tp + fn), 4) if tp + fn else None,
        }
    return {
        "summary": summarize(results),
        "per_cause": dict(sorted(per_cause.items())),
        "per_rule": dict(sorted(per_rule.items())),
        "failures": {r.case_id: r.problems for r in results if not r.ok},
    }
