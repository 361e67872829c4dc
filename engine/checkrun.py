"""Run the checklist over one node or a fleet of bundles (one per node)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from clusterdx import __version__
from clusterdx.engine.check_report import CheckItemOut, CheckReport, Coverage
from clusterdx.engine.checklist import STATUS_ORDER, Item, build, coverage, exit_status
from clusterdx.engine.diagnose import collect_live, collect_paths, incomplete_out, run_diagnosis
from clusterdx.engine.kb import KnowledgeBase
from clusterdx.engine.site import SiteConfig
from clusterdx.facts.deadline import NO_DEADLINE, Deadline

#: the exit code of a check that did not finish within its time limit and found no failure
UNFINISHED_EXIT = 7


def _node_items(kb: KnowledgeBase, paths: Sequence[Path], site: SiteConfig, redact: bool,
                deadline: Deadline = NO_DEADLINE):
    target = (collect_paths(paths, redact=redact, deadline=deadline) if paths
              else collect_live(redact=redact, deadline=deadline))
    diag = run_diagnosis(target, kb=kb, site=site, redact=redact, deadline=deadline)
    items = build(kb, diag.report, diag.facts, site.mandatory)
    name = ", ".join(diag.report.nodes) if diag.report.nodes else (str(paths[0]) if paths else "this machine")
    return name, items, diag.report


def _out(item: Item) -> CheckItemOut:
    return CheckItemOut(cause=item.cause, title=item.title, layer=item.layer, seed=item.seed, status=item.status,
                        reason=item.reason, confidence=item.confidence, evidence=item.evidence, missing=item.missing,
                        probes=item.probes, mandatory=item.mandatory)


def _exit_code(items: Sequence[Item], strict: bool, deadline: Deadline) -> int:
    code = exit_status(items, strict)
    return UNFINISHED_EXIT if code == 0 and deadline.incomplete else code


def stopped_check(kb: KnowledgeBase, paths: Sequence[str], strict: bool, site: SiteConfig, deadline: Deadline,
                  why: str) -> CheckReport:
    """The checklist of a run the backstop stopped (see clusterdx.engine.backstop): every item
    not checked, saying why."""
    from clusterdx.engine.backstop import fallback_report

    report = fallback_report(kb, list(paths), [], deadline, why)
    items = [Item(n.id, n.title, n.layer or "", list(n.seed), "not checked", f"not finished: {why}",
                  mandatory=n.id in site.mandatory)
             for n in kb.nodes.values() if n.kind == "root_cause"]
    return CheckReport(version=__version__, nodes=[], items=[_out(i) for i in items],
                       coverage=Coverage(**coverage(items)), exit_code=_exit_code(items, strict, deadline) or UNFINISHED_EXIT,
                       strict=strict, site=site.summary() if site.path else None,
                       inputs=[{"path": i.path, "format": None, "status": i.status, "reason": i.reason}
                               for i in report.inputs], incomplete=report.incomplete)


def run_check(kb: KnowledgeBase, paths: list[Path], *, fleet: bool, strict: bool, site: SiteConfig,
              redact: bool = True, deadline: Deadline | None = None, jobs: int | None = None,
              progress=None) -> CheckReport:
    """``deadline``: the run's time limit; past it the report is partial (``incomplete``) and the
    exit code not 0. Fleet mode takes what ``clusterdx fleet`` takes and runs on its runner
    (``jobs`` workers); nodes that could not be diagnosed are named in ``unchecked_nodes`` and make
    the exit code 7 when nothing failed (a node not checked is not a pass)."""
    deadline = deadline or NO_DEADLINE
    if not fleet:
        name, items, report = _node_items(kb, paths, site, redact, deadline)
        inputs = [{"path": i.path, "format": i.format, "status": i.status, "reason": i.reason} for i in report.inputs]
        return CheckReport(version=__version__, nodes=[name], items=[_out(i) for i in items],
                           coverage=Coverage(**coverage(items)), exit_code=_exit_code(items, strict, deadline),
                           strict=strict, site=site.summary() if site.path else None, inputs=inputs,
                           incomplete=incomplete_out(deadline))
    from clusterdx.engine.fleet import run_fleet

    # the fleet's own runner: the same splitting into nodes (a folder of node folders, archives,
    # job-wide logs), parallel workers, per-node timeouts, and failed nodes named, not lost
    per_node: dict[str, list[Item]] = {}
    fleet_report = run_fleet(paths, jobs=jobs, kb=kb, site=site, redact=redact, deadline=deadline,
                             progress=progress, checklist=per_node)
    unchecked = [n for n in fleet_report.nodes if n.name not in per_node]
    if not per_node:
        items = [Item(n.id, n.title, n.layer or "", list(n.seed), "not checked", "no node could be diagnosed",
                      mandatory=n.id in site.mandatory) for n in kb.nodes.values() if n.kind == "root_cause"]
        return CheckReport(version=__version__, nodes=[], items=[_out(i) for i in items],
                           coverage=Coverage(**coverage(items)), exit_code=_exit_code(items, strict, deadline) or 7,
                           strict=strict, site=site.summary() if site.path else None,
                           unchecked_nodes=[f"{n.name}: {n.status}{': ' + n.error if n.error else ''}"
                                            for n in unchecked], incomplete=incomplete_out(deadline))
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
    code = _exit_code(flat, strict, deadline)
    return CheckReport(version=__version__, nodes=sorted(per_node), items=merged, coverage=Coverage(**coverage(flat)),
                       exit_code=code if code or not unchecked else UNFINISHED_EXIT, strict=strict,
                       site=site.summary() if site.path else None,
                       unchecked_nodes=[f"{n.name}: {n.status}{': ' + n.error if n.error else ''}" for n in unchecked],
                       incomplete=incomplete_out(deadline))
