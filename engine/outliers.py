"""Nodes that are outliers against their peers: robust statistics across a fleet.

Identical nodes should measure alike. For each metric of :data:`METRICS` (a fact type, a field,
the fields that name what was measured within a node, and which direction is bad) every node
contributes one value per key; across nodes the median and the median absolute deviation (MAD)
give a robust centre and spread, and a node is flagged when

* its robust z-score ``0.6745 * (x - median) / MAD`` reaches ``z_limit`` in the bad direction
  (MAD is floored at ``mad_floor_rel * |median|`` or ``mad_floor_abs`` so identical peers do not
  turn a rounding difference into an infinite score), and
* it differs from the median by at least ``min_rel`` (relative) or ``min_abs`` (when the median is 0),
* and at least ``min_peers`` nodes report the metric.

``z_limit`` and ``min_peers`` are the parameters ``min_score`` and ``min_peers`` of the rule
``fleet-throughput-outlier`` (Iglewicz and Hoaglin's 3.5, four nodes): one number each, so a site
that overrides them changes which nodes are outliers, not only which outliers the rule reads.

Each node's values are extracted in the worker that diagnosed it (:func:`node_metrics`, small and
cheap to send back); :func:`find_outliers` compares them. Fact types a fleet did not collect are
simply skipped: the table is generic and new parsers (``pcie.link``, ``ib.port``) join it by name.

Examples:

    >>> vals = {f"n{i}": {("nccltests.busbw", "all_reduce"): (380.0 + i, "x")} for i in range(7)}
    >>> vals["n7"] = {("nccltests.busbw", "all_reduce"): (190.0, "x")}
    >>> [(o.node, o.metric, o.direction) for o in find_outliers(vals)]
    [('n7', 'nccltests.busbw', 'low')]
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping, Sequence

from clusterdx.facts.base import Fact
from clusterdx.facts.derive.thresholds import OUTLIER_PEERS, OUTLIER_SCORE, Params, value


@dataclass(frozen=True)
class Metric:
    name: str
    fact_type: str
    #: field name, or a function of the fact returning a number (None: no value)
    field: str | Callable[[Any], float | None]
    #: fields naming what was measured within a node (a GPU, a port, a collective)
    keys: tuple[str, ...] = ()
    bad: Literal["low", "high"] = "low"
    #: how several values for one key on one node combine ('min', 'max', 'median')
    agg: Literal["min", "max", "median"] = "median"
    unit: str = ""
    #: only facts whose fields have these values
    where: Mapping[str, Any] = field(default_factory=dict)
    min_rel: float = 0.05
    min_abs: float = 0.0
    mad_floor_rel: float = 0.01
    mad_floor_abs: float = 1e-9


def _throttle_count(f: Any) -> float:
    return float(len([r for r in f.active if r not in ("idle", "applications_clocks_setting")]))


#: what is compared across nodes: link speeds and widths, GPU clocks and throttle reasons, busbw,
#: iteration times, CPU frequency
METRICS: tuple[Metric, ...] = (
    Metric("pcie.link.speed", "pcie.link", "sta_speed_gts", ("bdf",), "low", "min", "GT/s",
           where={"link_up": True}),
    Metric("pcie.link.width", "pcie.link", "sta_width", ("bdf",), "low", "min", "lanes",
           where={"link_up": True}),
    Metric("gpu.pcie.gen", "gpu.pcie", "gen_current", ("gpu",), "low", "min", ""),
    Metric("gpu.pcie.width", "gpu.pcie", "width_current", ("gpu",), "low", "min", "lanes"),
    Metric("ib.port.rate", "ib.port", "rate_gbps", ("device", "port"), "low", "min", "Gb/s",
           where={"state": "Active"}),
    Metric("gpu.sm_clock", "gpu.clocks", "sm_mhz", ("gpu",), "low", "min", "MHz"),
    Metric("gpu.throttle_reasons", "gpu.throttle", _throttle_count, ("gpu",), "high", "max", "reasons",
           min_abs=1.0, mad_floor_abs=0.1),
    Metric("nccltests.busbw", "nccltests.run", "busbw_at_max_size", ("collective",), "low", "min", "GB/s"),
    Metric("train.step_time", "train.step_stats", "window_median_ms", (), "high", "max", "ms", min_rel=0.03),
    Metric("cpu.freq_ratio", "cpu.freq_shortfall", "ratio", (), "low", "min", ""),
    Metric("cpu.busy_mhz", "cpu.turbostat", "bzy_mhz", (), "low", "median", "MHz", where={"summary": True}),
)

#: fact types the table reads (the worker keeps only these)
FACT_TYPES = frozenset(m.fact_type for m in METRICS)

#: (metric name, key) -> (value, source of the fact it came from)
NodeValues = dict[tuple[str, str], tuple[float, str]]


@dataclass(frozen=True)
class Outlier:
    node: str
    metric: str
    key: str
    value: float
    median: float
    mad: float
    score: float
    direction: str
    deviation_pct: float
    peers: int
    unit: str
    source: str


def _value(m: Metric, f: Any) -> float | None:
    v = m.field(f) if callable(m.field) else getattr(f, m.field, None)
    if v is None or isinstance(v, bool):
        return None
    return float(v)


def node_metrics(facts: Sequence[Fact]) -> NodeValues:
    """One value per (metric, key) for one node's facts."""
    by_type: dict[str, list[Fact]] = {}
    for f in facts:
        if f.fact_type in FACT_TYPES:
            by_type.setdefault(f.fact_type, []).append(f)
    out: NodeValues = {}
    for m in METRICS:
        groups: dict[str, list[tuple[float, str]]] = {}
        for f in by_type.get(m.fact_type, ()):
            if any(getattr(f, k, None) != v for k, v in m.where.items()):
                continue
            v = _value(m, f)
            if v is None:
                continue
            key = "/".join(str(getattr(f, k, "")) for k in m.keys)
            groups.setdefault(key, []).append((v, str(f.source)))
        for key, vals in groups.items():
            if m.agg == "min":
                out[(m.name, key)] = min(vals)
            elif m.agg == "max":
                out[(m.name, key)] = max(vals)
            else:
                med = statistics.median_low([v for v, _ in vals])
                out[(m.name, key)] = next(x for x in vals if x[0] == med)
    return out


_BY_NAME = {m.name: m for m in METRICS}


def find_outliers(values: Mapping[str, NodeValues], *, params: Params | None = None) -> list[Outlier]:
    """Outliers among ``values`` (node -> its metric values), ordered by metric, key, score;
    ``params`` the rule parameters in force (the shipped defaults when None)."""
    z_limit = float(value(OUTLIER_SCORE, params))
    min_peers = int(value(OUTLIER_PEERS, params))
    series: dict[tuple[str, str], dict[str, tuple[float, str]]] = {}
    for node, vals in values.items():
        for mk, v in vals.items():
            series.setdefault(mk, {})[node] = v
    out: list[Outlier] = []
    for (name, key), per_node in sorted(series.items()):
        m = _BY_NAME.get(name)
        if m is None or len(per_node) < min_peers:
            continue
        xs = [v for v, _ in per_node.values()]
        med = statistics.median(xs)
        mad = statistics.median(abs(x - med) for x in xs)
        floor = max(abs(med) * m.mad_floor_rel, m.mad_floor_abs)
        spread = max(mad, floor)
        for node, (x, src) in sorted(per_node.items()):
            z = 0.6745 * (x - med) / spread
            bad = z <= -z_limit if m.bad == "low" else z >= z_limit
            if not bad:
                continue
            dev = abs(x - med)
            if med != 0 and dev / abs(med) < m.min_rel:
                continue
            if med == 0 and dev < max(m.min_abs, 1e-9):
                continue
            out.append(Outlier(node=node, metric=name, key=key, value=round(x, 4), median=round(med, 4),
                               mad=round(mad, 4), score=round(z, 2), direction=m.bad,
                               deviation_pct=round((x - med) / abs(med) * 100, 2) if med else 0.0,
                               peers=len(per_node), unit=m.unit, source=src))
    return out


def outlier_facts(outliers: Sequence[Outlier]) -> dict[str, list[Fact]]:
    """``fleet.outlier`` facts per node."""
    from clusterdx.facts.base import Scope, SourceRef
    from clusterdx.facts.model.fleet import FleetOutlier

    out: dict[str, list[Fact]] = {}
    for o in outliers:
        out.setdefault(o.node, []).append(FleetOutlier(
            node=o.node, scope=Scope.unknown, source=SourceRef(input=o.source or "<fleet>", parser="fleet"),
            metric=o.metric, key=o.key, value=o.value, median=o.median, mad=o.mad, score=o.score,
            severity=abs(o.score),
            direction=o.direction, deviation_pct=o.deviation_pct, peers=o.peers, unit=o.unit))
    return out
