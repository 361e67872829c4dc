"""Target against baseline: the differences that matter, as facts rules can use.

:func:`compare` returns the differences most likely to matter first (:func:`relevance`: measured
results, then communication variables missing on the target, then settings known to cost
throughput, then the rest).

Results compared when both sides have them: the steady-state step time and the logged throughput
(``compare.metric``), and nccl-tests bus bandwidth per collective at the largest message size both
sides measured (:func:`clusterdx.facts.derive.runs.baseline_comparisons`; a target run clearly
slower becomes a ``compare.run_pair``, the same fact two runs inside one ticket make, so the rules
of ``rules/comparison/`` read both). Once the hypotheses are ranked, :func:`rank_differences` moves the
differences that touch the evidence of the top hypotheses (the same input line, or the same
setting) to the front, in hypothesis order.
"""

from __future__ import annotations

from typing import Any, Sequence

from clusterdx.facts.base import Fact
from clusterdx.facts.derive import runs
from clusterdx.facts.derive._common import is_comm_var, of_type
from clusterdx.facts.model.derived import CompareEnvMissing, CompareMetric, CompareSetting


def _first(facts: Sequence[Fact], fact_type: str, **match: Any) -> Fact | None:
    for f in of_type(facts, fact_type):
        if all(getattr(f, k, None) == v for k, v in match.items()):
            return f
    return None


def _settings(facts: Sequence[Fact]) -> dict[str, tuple[str, Fact]]:
    out: dict[str, tuple[str, Fact]] = {}
    for s in of_type(facts, "kernel.sysctl"):
        out[f"sysctl {s.key}"] = (s.value, s)
    for p in of_type(facts, "kernel.page_size"):
        out["page size"] = (str(p.bytes), p)
    for g in of_type(facts, "cpu.governor_summary"):
        out["CPU governors"] = (",".join(g.governors), g)
    for i in of_type(facts, "cpu.idle_summary"):
        out["enabled idle states"] = (str(i.enabled_count), i)
    for c in of_type(facts, "kernel.cmdline"):
        out["kernel command line"] = (c.raw, c)
    for v in of_type(facts, "nccl.version"):
        out["NCCL version"] = (v.version, v)
    for v in of_type(facts, "platform.virtualization"):
        out["virtualization"] = (v.role, v)
    for fam in of_type(facts, "perf.symbol_family"):
        out[f"perf {fam.family} share"] = (f"{fam.share_pct:.1f}%", fam)
    return out


#: settings that most often explain a gap, most relevant first (prefix of the difference's ``what``)
RELEVANT_SETTINGS = (
    "sysctl kernel.numa_balancing", "CPU governors", "enabled idle states", "NCCL version", "virtualization",
    "page size", "kernel command line", "perf ", "sysctl ",
)


#: measured results, in the order they are shown (prefix of the difference's ``what``)
RESULTS = ("step time", "nccl-tests ", "throughput ")


def relevance(diff: dict[str, Any]) -> tuple[int, int]:
    """Sort key of a difference: lower is shown first."""
    what = str(diff.get("what", ""))
    for i, prefix in enumerate(RESULTS):
        if what.startswith(prefix):
            return (0, i)
    if what.startswith("environment "):
        return (1, 0)
    for i, prefix in enumerate(RELEVANT_SETTINGS):
        if what.startswith(prefix):
            return (2, i)
    return (3, 0)


def rank_differences(differences: Sequence[Any], hypotheses: Sequence[Any], top: int = 3) -> list[Any]:
    """``differences`` with those touching the evidence of the ``top`` hypotheses first.

    A difference touches a hypothesis when its source (input line) is the source of a fact in
    the hypothesis's evidence, or when the evidence names the setting the difference is about.
    Works on dicts and on report objects (``what``/``source`` attributes) alike; stable otherwise.
    """
    def get(obj: Any, key: str) -> str:
        return str(obj.get(key, "") if isinstance(obj, dict) else getattr(obj, key, ""))

    touched: list[tuple[set[str], str]] = []
    for h in list(hypotheses)[:top]:
        sources: set[str] = set()
        text = []
        for ev in getattr(h, "evidence", []):
            sources.update(get(f, "source") for f in getattr(ev, "facts", []))
            text.append(get(ev, "message"))
        touched.append((sources, " ".join(text)))

    def key(item: tuple[int, Any]) -> tuple[int, int]:
        i, d = item
        src, what = get(d, "source"), get(d, "what")
        name = what.split(" ", 1)[1] if what.startswith(("sysctl ", "environment ")) else ""
        for rank, (sources, text) in enumerate(touched):
            if (src and src in sources) or (name and name in text):
                return (rank, i)
        return (len(touched), i)

    return [d for _, d in sorted(enumerate(differences), key=key)]


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


#: throughput fields of train.step_stats: (field, metric name, what the difference says)
THROUGHPUT = (("tokens_per_s_median", "tokens_per_s", "throughput (tokens/s per GPU, median)"),
              ("tflops_per_gpu_median", "tflops_per_gpu", "throughput (TFLOP/s per GPU, median)"))


def _training(target: Sequence[Fact], baseline: Sequence[Fact]) -> tuple[list[Fact], list[dict[str, Any]]]:
    """Step time and throughput; ``ratio`` is target over baseline (above 1 is slower for step time,
    below 1 is slower for throughput)."""
    facts: list[Fact] = []
    diffs: list[dict[str, Any]] = []
    t_step = _first(target, "train.step_stats")
    b_step = _first(baseline, "train.step_stats")
    if t_step is None or b_step is None:
        return facts, diffs
    pairs = [("window_median_ms", "step_time_ms", "step time (median of steady-state window, ms)")] + list(THROUGHPUT)
    for field, metric, what in pairs:
        tv, bv = getattr(t_step, field, None), getattr(b_step, field, None)
        if tv is None or bv is None or bv <= 0:
            continue
        facts.append(CompareMetric(node=t_step.node, scope=t_step.scope, source=t_step.source, metric=metric,
                                   target=tv, baseline=bv, ratio=round(tv / bv, 4)))
        diffs.append({"what": what, "target": f"{tv:g}", "baseline": f"{bv:g}", "source": str(t_step.source)})
    return facts, diffs


def _bandwidth(target: Sequence[Fact], baseline: Sequence[Fact]) -> tuple[list[Fact], list[dict[str, Any]]]:
    """nccl-tests busbw per collective and node count: the run-pair facts of slower target runs, and
    one difference each, for the target's slowest run against its baseline run."""
    comparisons = runs.baseline_comparisons(target, baseline)
    worst: dict[tuple[str, int], runs.BaselineComparison] = {}
    for c in comparisons:
        key = (c.target.collective, c.target.nodes)
        if key not in worst or c.ratio < worst[key].ratio:
            worst[key] = c
    diffs = []
    for (collective, nodes), c in sorted(worst.items()):
        at = f"at {_size(c.size_bytes)}" if c.size_bytes else "at each run's largest size"
        diffs.append({"what": f"nccl-tests {collective} busbw over {nodes} node(s) {at} (GB/s)",
                      "target": f"{c.target_busbw:g} ({c.ratio:.0%})", "baseline": f"{c.baseline_busbw:g}",
                      "source": str(c.target.source)})
    return runs.baseline_pairs(comparisons), diffs


def compare(target: Sequence[Fact], baseline: Sequence[Fact]) -> tuple[list[Fact], list[dict[str, Any]]]:
    facts: list[Fact] = []
    diffs: list[dict[str, Any]] = []
    for part in (_training, _bandwidth):
        made, said = part(target, baseline)
        facts += made
        diffs += said
    t_dumps = [d for d in of_type(target, "env.dump") if d.complete]
    b_vars = {v.name: v for v in of_type(baseline, "env.var") if is_comm_var(v.name)}
    b_complete = any(d.complete for d in of_type(baseline, "env.dump"))
    if t_dumps and b_complete:
        t_names = {v.name for v in of_type(target, "env.var")}
        anchor = t_dumps[0]
        for name in sorted(set(b_vars) - t_names):
            facts.append(CompareEnvMissing(node=anchor.node, scope=anchor.scope, source=anchor.source, name=name,
                                           baseline_value=b_vars[name].value))
            diffs.append({"what": f"environment {name}", "target": "(unset)", "baseline": b_vars[name].value,
                          "source": str(b_vars[name].source)})
    t_set, b_set = _settings(target), _settings(baseline)
    for what in sorted(set(t_set) & set(b_set)):
        (tv, tf), (bv, _) = t_set[what], b_set[what]
        if tv != bv:
            facts.append(CompareSetting(node=tf.node, scope=tf.scope, source=tf.source, what=what, target=tv,
                                        baseline=bv))
            diffs.append({"what": what, "target": tv, "baseline": bv, "source": str(tf.source)})
    diffs.sort(key=relevance)
    return facts, diffs
