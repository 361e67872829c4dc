"""The case library: whole bundles under ``kb/cases/<id>/input`` with their expected diagnosis.

``expect.yaml`` beside each ``input/`` folder says what must rank where::

    description: What the user wrote in the ticket.
    expect:
      top: numa-balancing-enabled        # must rank first
      in_top_3: [rank-numa-misbinding]   # must be among the first three
      not_in_top_3: [...]                # look-alikes that must not rank high
      max_confidence: 0.5                # healthy controls: no hypothesis at or above this
      min_confidence:                    # a cause that must stand at least this high (not refuted away)
        numa-per-socket-layout-mismatch: 0.05
      fixes:                             # remediation id -> commands it must render for this node
        widen-nccl-ib-hca:
          - export NCCL_IB_HCA==mlx5_0,mlx5_3    # a step's or an alternative's command, exactly
          - {command: sysctl -w kernel.numa_balancing=0, needs_root: true}
    written_after_rules: false           # held out from tuning: reported separately

Cases re-created from public threads (``corpus: public``, with ``source:`` the thread's URL and
``first_run:`` the ranking the tool gave before any tuning on them) are the honest measure: they
are reported apart from the library, first run and now, and the randomly frozen fifth of them
(``kb/cases/frozen.yaml``, picked before any tuning and never tuned on) apart again.
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
    #: "library" (written next to the rules) or "public" (re-created from a public thread)
    corpus: str = "library"
    frozen: bool = False
    #: the ranking recorded before any tuning on the case (public cases)
    first_run: dict[str, Any] = field(default_factory=dict)
    #: the seed pattern (DESIGN.md's families) the ticket is an instance of, "" for none
    seed_pattern: str = ""


def case_dirs(root: Path | None = None) -> list[Path]:
    root = root or shipped_dirs()[1] / "cases"
    return sorted(p for p in root.iterdir() if (p / "expect.yaml").exists() and (p / "input").is_dir())


def frozen_cases(root: Path | None = None) -> set[str]:
    """Ids of the public cases frozen out of tuning (``frozen.yaml`` beside the cases)."""
    root = root or shipped_dirs()[1] / "cases"
    path = root / "frozen.yaml"
    if not path.exists():
        return set()
    spec = load_plain(path) or {}
    return {str(c) for c in spec.get("frozen", []) or []}


def case_spec(case_dir: Path) -> dict[str, Any]:
    return load_plain(case_dir / "expect.yaml") or {}


def judge(expect: dict[str, Any], ranking: list[tuple[str, float]]) -> tuple[list[str], bool | None, bool | None]:
    """(problems, top-1 right, top-3 right) of a ranking against a case's expectations."""
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
    confidence = dict(ranking)
    for cause, floor in (expect.get("min_confidence") or {}).items():
        if confidence.get(cause, 0.0) < float(floor):
            problems.append(f"expected {cause} at confidence >= {floor}, got {confidence.get(cause)}")
    if "max_confidence" in expect:
        worst = [(i, c) for i, c in ranking if c >= float(expect["max_confidence"])]
        if worst:
            problems.append(f"healthy control has confident hypotheses: {worst}")
    return problems, top1, top3


def judge_fixes(fixes: dict[str, Any], report: Any) -> list[str]:
    """Problems with the remediation commands rendered for this case's node: each listed command
    must be one a step (or a step's alternative) of that remediation renders, with its root mark."""
    rendered: dict[str, list[Any]] = {}
    for h in report.hypotheses:
        for r in h.remediation:
            for st in r.steps:
                rendered.setdefault(r.id, []).extend([st, *st.alternatives])
    problems = []
    for rem, wanted in (fixes or {}).items():
        if rem not in rendered:
            problems.append(f"fix {rem} is not proposed")
            continue
        for want in wanted or []:
            cmd, root = (want.get("command", ""), want.get("needs_root")) if isinstance(want, dict) else (want, None)
            got = next((st for st in rendered[rem] if st.command == cmd), None)
            if got is None:
                problems.append(f"fix {rem} does not render {cmd!r}; it renders "
                                f"{[st.command for st in rendered[rem] if st.command][:4]}")
            elif root is not None and bool(got.needs_root) != bool(root):
                problems.append(f"fix {rem}: {cmd!r} should {'' if root else 'not '}be marked as needing root")
    return problems


def run_case(kb: KnowledgeBase, case_dir: Path, frozen: set[str] | None = None) -> CaseResult:
    from clusterdx.engine.diagnose import collect_paths, diagnose

    spec = case_spec(case_dir)
    expect = spec.get("expect") or {}
    report = diagnose(collect_paths([case_dir / "input"]), kb=kb)
    ranking = [(h.id, h.confidence) for h in report.hypotheses]
    problems, top1, top3 = judge(expect, ranking)
    problems += judge_fixes(expect.get("fixes") or {}, report)
    errors = [i.path for i in report.inputs if i.status == "error"]
    corpus = "public" if spec.get("corpus") == "public" else "library"
    if errors and corpus == "library":
        problems.append(f"inputs failed to parse: {errors}")
    fired = {r.rule for r in report.rules if r.outcome in ("fired", "refuted")}
    if frozen is None:
        frozen = frozen_cases(case_dir.parent)
    return CaseResult(case_dir.name, not problems, problems, ranking, expect,
                      bool(spec.get("written_after_rules")), top1, top3, fired,
                      corpus=corpus, frozen=case_dir.name in frozen,
                      first_run=dict(spec.get("first_run") or {}),
                      seed_pattern=_seed_pattern(spec))


def _seed_pattern(spec: dict[str, Any]) -> str:
    value = str(spec.get("seed_pattern") or "").strip()
    return "" if value.lower() == "none" else value


def summarize(results: list[CaseResult]) -> dict[str, Any]:
    def acc(rs: list[CaseResult], attr: str) -> float | None:
        vals = [getattr(r, attr) for r in rs if getattr(r, attr) is not None]
        return round(sum(vals) / len(vals), 4) if vals else None

    library = [r for r in results if r.corpus == "library"]
    held = [r for r in library if r.held_out]
    public = [r for r in results if r.corpus == "public"]
    return {
        "cases": len(library), "passed": sum(r.ok for r in library),
        "top1": acc(library, "top1_ok"), "top3": acc(library, "top3_ok"),
        "held_out": {"cases": len(held), "passed": sum(r.ok for r in held),
                     "top1": acc(held, "top1_ok"), "top3": acc(held, "top3_ok")},
        "public": {
            "all": _public_summary(public),
            "frozen": _public_summary([r for r in public if r.frozen]),
            "tuned": _public_summary([r for r in public if not r.frozen]),
            # the tickets that are instances of a seed pattern, the rest and the frozen apart
            "seed_pattern": {
                "frozen": _public_summary([r for r in public if r.frozen and r.seed_pattern]),
                "tuned": _public_summary([r for r in public if not r.frozen and r.seed_pattern]),
            },
        },
    }


def _first_run_flags(r: CaseResult) -> tuple[bool | None, bool | None]:
    """Top-1/top-3 of the ranking recorded before tuning, judged with today's expectations."""
    ranking = r.first_run.get("ranking")
    if not isinstance(ranking, list):
        return None, None
    if any(isinstance(x, str) for x in ranking):
        # ids without their confidences (some cases recorded only the ids): the flags recorded
        # with them at that run are what is known
        flags = r.first_run.get("top1_ok"), r.first_run.get("top3_ok")
        if all(isinstance(f, bool) for f in flags):
            return flags
        ranking = [[x, 0.0] if isinstance(x, str) else x for x in ranking]
    pairs = [(str(x[0]), float(x[1])) for x in ranking if isinstance(x, (list, tuple)) and len(x) == 2]
    problems, top1, top3 = judge(r.expect, pairs)
    if top1 is None and top3 is None:  # a healthy control: right when nothing confident came out
        ok = not problems
        return ok, ok
    return top1, top3


def _public_summary(rs: list[CaseResult]) -> dict[str, Any]:
    def frac(vals: list[bool | None]) -> dict[str, Any]:
        known = [bool(v) for v in vals if v is not None]
        return {"right": sum(known), "of": len(known),
                "rate": round(sum(known) / len(known), 4) if known else None}

    def now(r: CaseResult, which: str) -> bool | None:
        flag = r.top1_ok if which == "top1" else r.top3_ok
        if flag is None:  # healthy control
            return r.ok
        return flag

    first = [_first_run_flags(r) for r in rs]
    return {
        "cases": len(rs),
        "first_run": {"top1": frac([f[0] for f in first]), "top3": frac([f[1] for f in first])},
        "now": {"top1": frac([now(r, "top1") for r in rs]), "top3": frac([now(r, "top3") for r in rs])},
        # a ticket that expects a cause (first or among three) and got an empty list
        "no_answer": sum(1 for r in rs if expected_causes(r.expect) and not r.ranking),
    }


#: confidence bins of the reliability table: [lo, hi)
CALIBRATION_BINS = ((0.0, 0.2), (0.2, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 1.01))


def calibration(results: list[CaseResult]) -> dict[str, Any]:
    """Reliability of the confidences on the public corpus.

    Every listed hypothesis of every public case is one prediction "this cause is present", right
    when the cause is one the case expects. Per confidence bin: how many, their mean confidence,
    the fraction right; the expected calibration error is the count-weighted mean gap between
    the two. Healthy controls (no expected cause) count every hypothesis as wrong, and their
    highest confidence is reported on its own.
    """
    public = [r for r in results if r.corpus == "public"]
    preds: list[tuple[float, bool]] = []
    controls: list[float] = []
    for r in public:
        expected = expected_causes(r.expect)
        for cause, conf in r.ranking:
            preds.append((conf, cause in expected))
        if not expected:
            controls.append(max((c for _, c in r.ranking), default=0.0))
    rows = []
    ece = 0.0
    for lo, hi in CALIBRATION_BINS:
        inside = [(c, ok) for c, ok in preds if lo <= c < hi]
        if not inside:
            rows.append({"bin": [lo, min(hi, 1.0)], "n": 0, "mean_confidence": None, "right": None})
            continue
        mean = sum(c for c, _ in inside) / len(inside)
        right = sum(ok for _, ok in inside) / len(inside)
        ece += len(inside) / len(preds) * abs(mean - right)
        rows.append({"bin": [lo, min(hi, 1.0)], "n": len(inside), "mean_confidence": round(mean, 4),
                     "right": round(right, 4)})
    return {"predictions": len(preds), "bins": rows, "ece": round(ece, 4) if preds else None,
            "controls": len(controls), "control_max_confidence": round(max(controls), 4) if controls else None}


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
    dirs = dirs if dirs is not None else case_dirs()
    frozen = frozen_cases(dirs[0].parent) if dirs else set()
    results = [run_case(kb, d, frozen) for d in dirs]
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
        "calibration": calibration(results),
        "public_cases": {r.case_id: {"frozen": r.frozen, "expected": sorted(expected_causes(r.expect)),
                                     "ranking": r.ranking[:3], "ok": r.ok}
                         for r in results if r.corpus == "public"},
        "per_cause": dict(sorted(per_cause.items())),
        "per_rule": dict(sorted(per_rule.items())),
        "failures": {r.case_id: r.problems for r in results if not r.ok and r.corpus == "library"},
    }
