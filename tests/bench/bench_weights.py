"""Benchmark: how much each ranking weight matters to the case library.

Run on demand (not part of the test suite):

    python tests/bench/bench_weights.py [--factor 0.5] [-k rs-] [--json out.json]

Every number of :mod:`clusterdx.engine.weights` (the likelihood ratio of each strength word, the
prior of each prior word, the edge weights, the absent-symptom factor, the band width, the
reporting and candidate bars) is moved down and up by ``--factor`` (50 % by default), one at a
time, and so is the one-level weakening of evidence that rests on what a user reported (off, and
two levels). For each change the table says how many library cases change their first cause, how
many change their top three (as a set), and how many turn from passing to failing their
``expect.yaml`` or back. A weight that moves nothing is not constrained by the library.

Only the library is run (``kb/cases`` without the public-ticket corpus ``pt-*``, which is the blind
measure and is never tuned on). Ingestion, derived facts and rule evaluation do not depend on the
weights, so they run once per case and are reused; each change re-runs the ranking and the report
as ``clusterdx diagnose`` builds them (:func:`clusterdx.engine.diagnose.run_diagnosis`).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterator

ROOT = Path(__file__).parents[2]


@contextlib.contextmanager
def patched(name: str, value: Any) -> Iterator[None]:
    """Set the scalar ``weights.<name>`` and every module's copy imported from it."""
    from clusterdx.engine import weights

    original = getattr(weights, name)
    mods = [m for n, m in list(sys.modules.items())
            if n.startswith("clusterdx") and getattr(m, name, None) is original]
    for m in mods:
        setattr(m, name, value)
    try:
        yield
    finally:
        for m in mods:
            setattr(m, name, original)


@contextlib.contextmanager
def patched_entry(table: dict, key: str, value: Any, after: Callable[[], None] | None = None) -> Iterator[None]:
    """Set one entry of a weights table (mutated in place, so every importer sees it)."""
    original = table[key]
    table[key] = value
    if after:
        after()
    try:
        yield
    finally:
        table[key] = original
        if after:
            after()


def perturbations(kb: Any, factor: float) -> list[tuple[str, Callable[[], contextlib.AbstractContextManager]]]:
    from clusterdx.engine import diagnose, weights
    from clusterdx.engine.graph import CausalGraph

    def rebuild() -> None:  # edge weights are read when the graph is built
        kb.graph = CausalGraph.build(kb.nodes)

    out: list[tuple[str, Callable[[], contextlib.AbstractContextManager]]] = []
    for sign, f in (("-", 1 - factor), ("+", 1 + factor)):
        for word, lr in weights.STRENGTH_LR.items():
            out.append((f"strength {word} LR {lr:g} -> {lr * f:g}",
                        lambda w=word, v=lr * f: patched_entry(weights.STRENGTH_LR, w, v)))
        for word, p in weights.PRIOR_P.items():
            out.append((f"prior {word} {p:g} -> {min(p * f, 0.99):g}",
                        lambda w=word, v=min(p * f, 0.99): patched_entry(weights.PRIOR_P, w, v)))
        for word, w in weights.EDGE_WEIGHT.items():
            out.append((f"edge {word} {w:g} -> {min(w * f, 1.0):g}",
                        lambda k=word, v=min(w * f, 1.0): patched_entry(weights.EDGE_WEIGHT, k, v, rebuild)))
        for name in ("ABSENT_SYMPTOM_FACTOR", "CONFIDENCE_BAND", "CONFIRMED", "REPORT_MIN", "CANDIDATE_MIN_LIFT",
                     "LIFT_NEAR_TIE"):
            v = getattr(weights, name)
            out.append((f"{name} {v:g} -> {v * f:g}", lambda n=name, x=v * f: patched(n, x)))
        v = weights.CANDIDATE_MAX
        out.append((f"CANDIDATE_MAX {v} -> {max(1, round(v * f))}",
                    lambda x=max(1, round(v * f)): patched("CANDIDATE_MAX", x)))
    levels = dict(diagnose.WEAKER)
    twice = {k: levels[levels[k]] for k in levels}
    out.append(("reported evidence not weakened", lambda: _table(diagnose.WEAKER, {k: k for k in levels})))
    out.append(("reported evidence two levels weaker", lambda: _table(diagnose.WEAKER, twice)))
    return out


@contextlib.contextmanager
def _table(table: dict, values: dict) -> Iterator[None]:
    original = dict(table)
    table.clear()
    table.update(values)
    try:
        yield
    finally:
        table.clear()
        table.update(original)


class Library:
    """The library cases with their weight-independent work done once."""

    def __init__(self, kb: Any, select: str = "") -> None:
        from clusterdx.engine.cases import case_dirs, case_spec
        from clusterdx.engine.diagnose import collect_paths

        self.kb = kb
        self.dirs = [d for d in case_dirs() if not d.name.startswith("pt-") and select in d.name]
        self.expect = {d.name: (case_spec(d).get("expect") or {}) for d in self.dirs}
        self.collected = {d.name: collect_paths([d / "input"]) for d in self.dirs}
        self._memo: dict[tuple[str, str], Any] = {}
        self._current = ""

    @contextlib.contextmanager
    def _reuse(self) -> Iterator[None]:
        """Derived facts, cross-node facts and rule results of the case being ranked, computed once."""
        import clusterdx.facts.derive as derive
        from clusterdx.engine import diagnose

        engine = diagnose.engine_for(self.kb)
        saved = (derive.derive_all, diagnose.cross_node_facts, engine.evaluate)

        def memo(tag: str, fn: Callable) -> Callable:
            def wrapped(*a: Any, **kw: Any) -> Any:
                key = (self._current, tag)
                if key not in self._memo:
                    self._memo[key] = fn(*a, **kw)
                return self._memo[key]
            return wrapped

        derive.derive_all = memo("derive", saved[0])
        diagnose.cross_node_facts = memo("cross", saved[1])
        engine.evaluate = memo("rules", saved[2])
        try:
            yield
        finally:
            derive.derive_all, diagnose.cross_node_facts = saved[0], saved[1]
            engine.evaluate = saved[2]

    def rank(self) -> dict[str, tuple[list[tuple[str, float]], bool]]:
        """case -> (ranking, passes its expectations)."""
        from clusterdx.engine.cases import judge
        from clusterdx.engine.diagnose import run_diagnosis

        out = {}
        with self._reuse():
            for name, collected in self.collected.items():
                self._current = name
                report = run_diagnosis(collected, kb=self.kb, next_probes=False).report
                ranking = [(h.id, h.confidence) for h in report.hypotheses]
                problems, _, _ = judge(self.expect[name], ranking)
                out[name] = (ranking, not problems)
        return out


def changes(base: dict, now: dict) -> dict[str, Any]:
    def top1(r: list) -> str:
        return r[0][0] if r else ""

    def top3(r: list) -> frozenset:
        return frozenset(c for c, _ in r[:3])

    moved1 = sorted(n for n in base if top1(base[n][0]) != top1(now[n][0]))
    moved3 = sorted(n for n in base if top3(base[n][0]) != top3(now[n][0]))
    broke = sorted(n for n in base if base[n][1] and not now[n][1])
    fixed = sorted(n for n in base if not base[n][1] and now[n][1])
    return {"top1": moved1, "top3": moved3, "broke": broke, "fixed": fixed}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--factor", type=float, default=0.5)
    ap.add_argument("-k", default="", help="only library cases whose name contains this")
    ap.add_argument("--json", type=Path, help="write the table as JSON here")
    ap.add_argument("--names", action="store_true", help="name the cases that changed")
    opts = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from clusterdx.engine.kb import load_kb

    started = time.perf_counter()
    kb = load_kb()
    lib = Library(kb, opts.k)
    base = lib.rank()
    passing = sum(ok for _, ok in base.values())
    print(f"{len(base)} library cases, {passing} pass with the shipped weights "
          f"(set up in {time.perf_counter() - started:.1f} s)")
    print(f"{'change':<48} {'top-1':>6} {'top-3':>6} {'broke':>6} {'fixed':>6}")
    rows = []
    for label, make in perturbations(kb, opts.factor):
        with make():
            now = lib.rank()
        c = changes(base, now)
        rows.append({"change": label, **c})
        print(f"{label:<48} {len(c['top1']):>6} {len(c['top3']):>6} {len(c['broke']):>6} {len(c['fixed']):>6}")
        if opts.names and (c["top1"] or c["broke"]):
            print(f"    top-1 moved: {', '.join(c['top1'])}; broke: {', '.join(c['broke'])}")
    print(f"total {time.perf_counter() - started:.1f} s")
    if opts.json:
        import json

        opts.json.write_text(json.dumps({"cases": len(base), "passing": passing, "factor": opts.factor,
                                         "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
