"""Per-node reports as fleet input: reduce what each node diagnosed where it was collected.

At scale each node diagnoses itself (the Slurm recipe's ``srun`` step, the Kubernetes Job) and
writes its JSON report (``clusterdx diagnose BUNDLE -f json -o NODE.report.json``) next to its
bundle. ``clusterdx fleet`` then reads the reports instead of the bundles: no input is parsed
again and no rule runs again; each report gives the node's hypotheses, gap, inputs and the
values a fleet compares (the report's ``fleet`` digest: outlier metrics and drift settings).

A file is a report by its content, never by its name: a JSON object whose ``schema`` is
``clusterdx.report/1``. Reports are read one at a time and only the small per-node result is
kept, so memory stays flat in the number of reports.

What a report cannot give: its node's facts. Outliers and drift are found and listed for report
nodes as for bundles, but the node is not diagnosed again with them (that needs the bundle); the
fleet report says so in a warning.

A report whose ``target`` is a bundle also given to the same fleet stands for that bundle: the
bundle is not diagnosed again (two views of one node are not two nodes claiming one host).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from clusterdx.engine.fleet_report import NodeHypothesis, NodeInput
from clusterdx.engine.report import REPORT_SCHEMA, Gap

#: a report larger than this is not read as one (a single node's report is well under 10 MiB)
MAX_REPORT_BYTES = 64 << 20
#: evidence messages kept per node and cause (as for diagnosed bundles)
EVIDENCE_PER_NODE = 2
#: node names that mean "not attributed"
_GENERIC = frozenset({"", "node", "unknown"})


def read_report(path: Path) -> dict[str, Any] | None:
    """The report in ``path``, or None when the file is not a clusterdx report (by content)."""
    import orjson

    try:
        if not path.is_file() or path.is_symlink() or path.stat().st_size > MAX_REPORT_BYTES:
            return None
        with open(path, "rb") as fh:
            head = fh.read(4096)
            if not head.lstrip().startswith(b"{"):
                return None
            raw = head + fh.read()
    except OSError:
        return None
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        try:  # numbers past a double (1e999) are valid JSON that orjson refuses
            data = json.loads(raw)
        except (ValueError, RecursionError):
            return None
    if not isinstance(data, dict) or data.get("schema") != REPORT_SCHEMA:
        return None
    return data


def report_node(data: dict[str, Any], fallback: str) -> str:
    """The node a report describes, as a fleet names a bundle's own node: the node most of its
    inputs went to (a collect bundle's manifest host), else its one named node, else ``fallback``."""
    counts: dict[str, int] = {}
    for rec in data.get("inputs") or []:
        node = rec.get("node") if isinstance(rec, dict) else None
        if isinstance(node, str) and node not in _GENERIC:
            counts[node] = counts.get(node, 0) + 1
    if counts:
        return max(sorted(counts), key=lambda n: counts[n])
    named = [n for n in data.get("nodes") or [] if isinstance(n, str) and n not in _GENERIC]
    return named[0] if len(named) == 1 else fallback


def report_targets(data: dict[str, Any]) -> set[str]:
    """The bundle paths the report diagnosed, resolved, to match against the bundles given."""
    out = set()
    for t in data.get("target") or []:
        if isinstance(t, str) and t:
            try:
                out.add(os.path.realpath(t))
            except (OSError, ValueError):
                continue
    return out


def _num(value: Any, default: float = 0.0) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return default
    return x if x == x and abs(x) != float("inf") else default


def result_parts(data: dict[str, Any]) -> dict[str, Any]:
    """The per-node result fields a fleet keeps of a report (see engine.fleet.NodeResult).

    Malformed parts of a hand-edited or truncated report are skipped one by one, never the node."""
    hyps = []
    for h in data.get("hypotheses") or []:
        if not isinstance(h, dict) or not isinstance(h.get("id"), str):
            continue
        ev = [e.get("message", "") for e in (h.get("evidence") or [])[:EVIDENCE_PER_NODE] if isinstance(e, dict)]
        # model_construct: every field is coerced to its type here (validation per field is the
        # reduce step's main cost at 10,000 reports)
        hyps.append(NodeHypothesis.model_construct(
            id=h["id"], title=str(h.get("title", h["id"])), layer=str(h.get("layer", "")),
            confidence=min(1.0, max(0.0, _num(h.get("confidence")))), impact_pct=_num(h.get("impact_pct")),
            evidence=[str(m) for m in ev]))
    inputs = []
    for i in data.get("inputs") or []:
        if not isinstance(i, dict) or i.get("status") not in ("parsed", "partial", "unrecognized", "error", "skipped"):
            continue
        fmt = i.get("format")
        inputs.append(NodeInput.model_construct(
            path=str(i.get("path", "")), format=fmt if isinstance(fmt, str) else None, status=i["status"],
            reason=str(i.get("reason", "")), facts=int(_num(i.get("facts")))))
    gap = None
    if isinstance(data.get("gap"), dict):
        try:
            gap = Gap.model_validate(data["gap"])
        except ValueError:
            gap = None
    digest = data.get("fleet") if isinstance(data.get("fleet"), dict) else {}
    metrics: dict[tuple[str, str], tuple[float, str]] = {}
    for m in digest.get("metrics") or []:
        if isinstance(m, dict) and isinstance(m.get("metric"), str):
            metrics[(m["metric"], str(m.get("key", "")))] = (_num(m.get("value")), str(m.get("source", "")))
    config: dict[str, tuple[str, str]] = {}
    for s in digest.get("settings") or []:
        if isinstance(s, dict) and isinstance(s.get("what"), str):
            config[s["what"]] = (str(s.get("value", "")), str(s.get("source", "")))
    incomplete = data.get("incomplete")
    failed = [i for i in inputs if i.status == "error"]
    status = "ok"
    error = ""
    if incomplete or failed:
        status = "partial"
        error = "; ".join([f"{i.path}: {i.reason}" for i in failed[:3]]
                          + (["the node's own run passed its time limit"] if incomplete else []))
    if not inputs and not hyps:
        status, error = "failed", "the report holds no input and no hypothesis"
    return {"status": status, "error": error, "inputs": inputs, "facts": sum(i.facts for i in inputs),
            "hypotheses": hyps, "gap": gap, "metrics": metrics, "config": config, "has_digest": bool(digest)}
