"""Run the checklist over one node or a fleet of bundles (one per node)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from clusterdx import __version__
from clusterdx.engine.check_report import CheckItemOut, CheckReport, Coverage
from clusterdx.engine.checklist import STATUS_ORDER, Item, build, coverage, exit_status
from clusterdx.engine.diagnose import collect_live, collect_paths, run_diagnosis
from clusterdx.engine.kb import KnowledgeBase
from clusterdx.engine.site import SiteConfig


def _node_items(kb: KnowledgeBase, paths: Sequence[Path], site: SiteConfig, redact: bool):
    target = collect_paths(paths, redact=redact) if paths else collect_live(redact=redact)
    diag = run_diagnosis(target, kb=kb, site=site, redact=redact)
    items = build(kb, diag.report, diag.facts, site.mandatory)
    name = ", ".join(diag.report.nodes) if diag.report.nodes else (str(paths[0]) if paths else "this machine")
    return name, items, diag.report


def _out(item: Item) -> CheckItemOut:
    return CheckItemOut(cause=item.cause, title=item.title, layer=item.layer, seed=item.seed, status=item.status,
                        reason=item.reason, confidence=item.confidence, evidence=item.evidence, missing=item.missing,
                        probes=item.probes, mandatory=item.mandatory)


def run_check(kb: KnowledgeBase, paths: list[Path], *, fleet: bool, strict: bool, site: SiteConfig,
              redact: bool = True) -> CheckReport:
    if not fleet:
        name, items, report = _node_items(kb, paths, site, redact)
        inputs = [{"path": i.path, "format": i.format, "status": i.status, "reason": i.reason} for i in report.inputs]
        return CheckReport(version=__version__, nodes=[name], items=[_out(i) for i in items],
                           coverage=Coverage(**coverage(items)), exit_code=exit_status(items, strict), strict=strict,
                           site=site.summary() if site.path else None, inputs=inputs)
    per_node: dict[str, list[Item]] = {}
    for p in paths:
        name, items, _ = _node_items(kb, [p], site, redact)
        if name in ("node", "", "unknown"):
            # no host name in the bundle: the path names the node (node3/, node3.tgz)
            name = p.name if p.name not in ("input", "bundle") else f"{p.parent.name}/{p.name}"
        key, n = name, 2
        while key in per_node:
            key, n = f"{name}#{n}", n + 1
        per_node[key] = items
    merged: list[CheckItemOut] = []
    causes = [i.cause for i in next(iter(per_node.values()))]
    flat: list[Item] = []
    for idx, cause in enumerate(causes):
        statuses = {node: items[idx] for node, items in per_node.items()}
        counts = {s: sum(1 for it in statuses.values() if it.status == s) for s in STATUS_ORDER}
        worst = next(s for s in STATUS_ORDER if counts[s]) if any(counts.values()) else "not checked"
        first = next(iter(statuses.values()))
        failing = sorted(n for n, it in statuses.items() if it.status == "fail")
        reason = f"{counts['fail']} of {len(statuses)} nodes fail" if failing else next(
            (it.reason for it in statuses.values() if it.status == worst), "")
        item = Item(cause, first.title, first.layer, first.seed, worst, reason, None, [], [], [], first.mandatory)
        flat.append(item)
        out = _out(item)
        out.counts = counts
        out.failing_nodes = failing
        merged.append(out)
    return CheckReport(version=__version__, nodes=sorted(per_node), items=merged, coverage=Coverage(**coverage(flat)),
                       exit_code=exit_status(flat, strict), strict=strict,
                       site=site.summary() if site.path else None)
