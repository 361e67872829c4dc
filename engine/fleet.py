"""Many nodes at once: split the inputs into nodes, diagnose them in parallel, compare, merge.

1. **Bundles.** Each path given is one node's bundle (a folder or an archive); a single folder
   whose entries are sub-folders or archives (two or more) holds one bundle per entry, and loose
   files beside them form one more bundle named after the folder (a job-wide log, say). A folder
   with a ``manifest.json`` at its top is one extracted ``clusterdx collect`` bundle, never split.
2. **Nodes.** A bundle's facts are grouped by the node they are attributed to: the manifest's host,
   the hostname prefix of NCCL log lines, the hosts of nccl-tests ``Using devices`` lines; facts
   with only a rank (``srun --label`` prefixes, per-rank training logs) follow the host that rank
   ran on when another fact of the bundle says so; facts with no attribution belong to the bundle's
   own node (its name). One job-wide NCCL log therefore names its straggler. A node found in
   several bundles is diagnosed once with the facts of all of them (when they add fact types its
   own bundle lacks). Two bundles that each *claim* the same host (their manifests, prompts or
   logs name it as their own) are two pieces of evidence that disagree, not one node: both are
   kept, as ``host@bundle``, each diagnosed on its own, and a warning names them.
3. **Diagnosis** runs in worker processes (``concurrent.futures.ProcessPoolExecutor``, ``jobs``
   of them; the knowledge base is loaded and compiled once per worker by the pool initializer).
   At most ``jobs`` tasks are in flight, so each task's start is known and a per-task timeout
   holds: a task past its deadline is reported ``timeout`` and the pool is replaced. A worker that
   dies (``BrokenProcessPool``) takes its in-flight tasks with it; they are re-run one at a time,
   and the one that breaks a pool alone is reported ``crashed``. The other nodes always finish.
   Workers compute no per-node next probes (the fleet report has none).
4. **Across nodes**: outliers (:mod:`clusterdx.engine.outliers`) and configuration drift
   (:mod:`clusterdx.engine.drift`) become ``fleet.outlier`` / ``fleet.drift`` facts, and every node
   they name is diagnosed again with them, so rules weigh them with the node's own evidence.
5. **Merge**: each cause with the nodes it was found on; ``cluster-wide`` when on at least
   :data:`CLUSTER_WIDE_SHARE` of the diagnosed nodes (a setting missing everywhere), ``local``
   otherwise (named nodes).
"""

from __future__ import annotations

import os
import statistics
import time
import traceback
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from clusterdx.engine import drift as drift_mod
from clusterdx.engine import outliers as outliers_mod
from clusterdx.engine.fleet_report import (
    DriftNode, DriftOut, FleetHypothesis, FleetNode, FleetReport, FleetSummary, NodeEvidence, NodeHypothesis,
    NodeInput, OutlierOut, RemediationRef,
)
from clusterdx.facts.base import Fact
from clusterdx.facts.deadline import NO_DEADLINE, Deadline

#: a cause found on at least this share of the diagnosed nodes is cluster-wide
CLUSTER_WIDE_SHARE = 0.5
#: seconds one node may take (ingestion and diagnosis) before it is reported as timed out
DEFAULT_TASK_TIMEOUT = 300.0
#: extra time the first tasks of a fresh pool get while workers start and load the knowledge base
STARTUP_GRACE = 60.0
#: node names that mean "not attributed" (ingest's default, a Document's default)
UNATTRIBUTED = frozenset({"", "node", "unknown"})
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip", ".tar.bz2", ".tar.xz", ".gz")
#: evidence messages kept per node and cause
EVIDENCE_PER_NODE = 2

Progress = Callable[[int, int], None]


# -- bundles --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bundle:
    name: str
    paths: tuple[str, ...]
    #: a file that may be a per-node JSON report (read as one when its content is; see
    #: :mod:`clusterdx.engine.fleet_reports`), not a bundle to ingest
    report: bool = False


def _bundle_name(p: Path) -> str:
    name = p.name
    for suf in ARCHIVE_SUFFIXES:
        if name.endswith(suf) and len(name) > len(suf):
            return name[: -len(suf)]
    return name or str(p)


def _is_archive(p: Path) -> bool:
    return p.is_file() and p.name.endswith(ARCHIVE_SUFFIXES) and not p.name.endswith(".log.gz")


def _maybe_report(p: Path) -> bool:
    """A plain file whose content opens a JSON object: a per-node report, if its schema says so."""
    try:
        if not p.is_file() or p.is_symlink():
            return False
        with open(p, "rb") as fh:
            return fh.read(64).lstrip().startswith(b"{")
    except OSError:
        return False


def split_bundles(paths: Sequence[str | Path]) -> list[Bundle]:
    """One bundle per path; a single folder of sub-folders or archives, one bundle per entry."""
    given = [Path(p) for p in paths]
    if len(given) == 1 and given[0].is_dir() and not (given[0] / "manifest.json").is_file():
        root = given[0]
        entries = sorted(e for e in root.iterdir() if not e.name.startswith((".", "__MACOSX")))
        units = [e for e in entries if e.is_dir() or _is_archive(e)]
        taken = set(units)  # sets: a folder of 10,000 reports is not compared pairwise
        reports = [e for e in entries if e not in taken and _maybe_report(e)]
        taken.update(reports)
        loose = [e for e in entries if e not in taken]
        if len(units) + len(reports) >= 2:
            out = [Bundle(_bundle_name(e), (str(e),)) for e in units]
            out += [Bundle(e.name, (str(e),), report=True) for e in reports]
            if loose:
                out.append(Bundle(_bundle_name(root), tuple(str(e) for e in loose)))
            return _unique(out)
    return _unique([Bundle(_bundle_name(p), (str(p),), report=_maybe_report(p)) for p in given])


def _unique(bundles: list[Bundle]) -> list[Bundle]:
    seen: dict[str, int] = {}
    out = []
    for b in bundles:
        n = seen.get(b.name, 0)
        seen[b.name] = n + 1
        out.append(b if n == 0 else Bundle(f"{b.name}#{n + 1}", b.paths, b.report))
    return out


# -- one task, run in a worker ---------------------------------------------------------------------


@dataclass
class Task:
    index: int
    #: bundles to ingest; facts of each are grouped by node with the bundle name as home
    sources: tuple[Bundle, ...]
    #: keep only this node (a merge or a re-run); None: every node found
    only: str | None = None
    #: fleet facts to add, per node
    extra: dict[str, list[Fact]] = field(default_factory=dict)


@dataclass
class NodeResult:
    node: str
    sources: tuple[Bundle, ...]
    status: str
    #: True when the node is the bundle's own (its name or its manifest host), False when it was
    #: split off by attribution (another host of a job-wide log)
    home: bool = True
    error: str = ""
    inputs: list[NodeInput] = field(default_factory=list)
    facts: int = 0
    fact_types: frozenset[str] = frozenset()
    hypotheses: list[NodeHypothesis] = field(default_factory=list)
    gap: Any = None
    metrics: dict = field(default_factory=dict)
    config: dict = field(default_factory=dict)
    seconds: float = 0.0
    #: set when two bundles claim this host (see FleetNode.host / conflict)
    host: str = ""
    conflict: str = ""
    #: read from the node's own JSON report: no facts here, so never diagnosed again
    from_report: bool = False
    #: the node's checklist items (``clusterdx check --fleet``), when the run asked for them
    items: list = field(default_factory=list)


_STATE: dict[str, Any] = {}


def _init_worker(kb_dirs: list[str] | None, site: Any, redact: bool, deadline: Deadline = NO_DEADLINE,
                 checklist: bool = False) -> None:
    """Pool initializer: load and compile the knowledge base once per worker process.

    Fleet reports have no per-node next probes, so workers diagnose with ``next_probes=False``
    (the next-probe search, a what-if re-ranking per probe, is most of a diagnosis's time).
    """
    from clusterdx.engine.diagnose import engine_for

    from clusterdx.engine.kb import load_kb
    from clusterdx.engine.site import SiteConfig, rule_params

    key = tuple(kb_dirs or ())
    kb = _STATE.get("kb") if _STATE.get("kb_key") == key else None  # inherited from the parent (fork)
    if kb is None:
        kb = load_kb([Path(d) for d in kb_dirs] if kb_dirs else None, cache=True)
    site = site or SiteConfig()
    engine_for(kb, site)
    _STATE.update(kb=kb, kb_key=key, site=site, redact=redact, deadline=deadline, checklist=checklist)


def _ingest_bundle(bundle: Bundle, redact: bool, deadline: Deadline = NO_DEADLINE) -> Any:
    from clusterdx.facts.ingest import ingest

    return ingest(list(bundle.paths), redact=redact, deadline=deadline)


def group_facts(facts: Sequence[Fact], home: str) -> dict[str, list[Fact]]:
    """Facts by node: their own attribution, the host their rank ran on, else ``home``."""
    rank_host: dict[int, str] = {}
    for f in facts:
        r = getattr(f, "rank", None)
        if r is not None and f.node not in UNATTRIBUTED:
            rank_host.setdefault(r, f.node)
    groups: dict[str, list[Fact]] = {}
    for f in facts:
        node = f.node
        if node in UNATTRIBUTED:
            r = getattr(f, "rank", None)
            node = rank_host.get(r, home) if r is not None else home
            f = f.model_copy(update={"node": node})
        groups.setdefault(node, []).append(f)
    return groups


def _home_of(groups: dict[str, list[Fact]], inputs: Sequence[Any], name: str) -> str:
    """The bundle's own node: its manifest host (the node of most input records), else its name."""
    counts: dict[str, int] = {}
    for rec in inputs:
        if rec.node not in UNATTRIBUTED:
            counts[rec.node] = counts.get(rec.node, 0) + 1
    if counts:
        return max(sorted(counts), key=lambda n: counts[n])
    return name


def _input_out(rec: Any) -> NodeInput:
    return NodeInput(path=rec.path, format=rec.format, status=rec.status, reason=rec.reason, facts=rec.facts)


def _run_task(task: Task) -> list[NodeResult]:
    """Ingest the task's bundles, group by node, diagnose each node; never raises."""
    from clusterdx.engine.diagnose import Collected, run_diagnosis

    kb, site, redact = _STATE["kb"], _STATE["site"], _STATE["redact"]
    # a copy per task: what one node left unfinished is reported on that node only
    parent = _STATE.get("deadline") or NO_DEADLINE
    deadline = parent.fresh()
    start = time.perf_counter()
    facts_by_node: dict[str, list[Fact]] = {}
    inputs_by_node: dict[str, list[Any]] = {}
    sources_by_node: dict[str, list[Bundle]] = {}
    home_nodes: set[str] = set()
    deferred: set[str] = set()
    failures: list[NodeResult] = []
    for bundle in task.sources:
        try:
            res = _ingest_bundle(bundle, redact, deadline)
        except Exception as exc:  # ingest never raises by design; a bug there costs one bundle only
            failures.append(NodeResult(node=task.only or bundle.name, sources=(bundle,), status="failed",
                                       error=f"reading the bundle failed: {type(exc).__name__}: {exc}"))
            continue
        groups = group_facts(res.facts, bundle.name)
        home = _home_of(groups, res.inputs, bundle.name)
        if home != bundle.name and bundle.name in groups:  # unattributed facts of a bundle with a manifest
            groups.setdefault(home, []).extend(f.model_copy(update={"node": home}) for f in groups.pop(bundle.name))
        if not groups:
            groups[home] = []  # nothing usable: the bundle's node is reported as failed
        if home in groups:
            home_nodes.add(home)
            # other hosts of a job-wide log: diagnosed once all bundles are read (see _merge_tasks)
            deferred.update(n for n in groups if n != home)
        fallback = home if home in groups else min(groups)
        by_input: dict[str, set[str]] = {}
        for node, fs in groups.items():
            for f in fs:
                by_input.setdefault(f.source.input, set()).add(node)
        for rec in res.inputs:
            owners = by_input.get(rec.path) or {fallback}
            for node in owners:
                inputs_by_node.setdefault(node, []).append(rec)
        for node, fs in groups.items():
            if task.only is not None and node != task.only:
                continue
            facts_by_node.setdefault(node, []).extend(fs)
            srcs = sources_by_node.setdefault(node, [])
            if bundle not in srcs:
                srcs.append(bundle)
    out: list[NodeResult] = [] if facts_by_node else failures
    ingest_s = time.perf_counter() - start
    for node in sorted(facts_by_node):
        t0 = time.perf_counter()
        facts = facts_by_node[node]
        records = inputs_by_node.get(node, [])
        result = NodeResult(node=node, sources=tuple(sources_by_node[node]), status="ok",
                            home=node in home_nodes, inputs=[_input_out(r) for r in records], facts=len(facts),
                            fact_types=frozenset(f.fact_type for f in facts))
        failed_inputs = [r for r in records if r.status == "error"]
        if task.only is None and node in deferred and node not in home_nodes:
            result.status = "pending"
        elif not facts:
            result.status = "failed"
            reasons = "; ".join(f"{r.path}: {r.reason}" for r in failed_inputs[:3])
            result.error = "no input yielded facts" + (f" ({reasons})" if reasons else "")
        else:
            if failed_inputs:
                result.status = "partial"
                result.error = "; ".join(f"{r.path}: {r.reason}" for r in failed_inputs[:3])
            try:
                extra = list(task.extra.get(node, []))
                diag = run_diagnosis(Collected(records, facts + extra, [b.name for b in result.sources]),
                                     kb=kb, site=site, redact=redact, next_probes=False, deadline=deadline)
                report = diag.report
                if _STATE.get("checklist"):
                    from clusterdx.engine.checklist import build

                    result.items = build(kb, report, diag.facts, site.mandatory)
                result.hypotheses = [NodeHypothesis(
                    id=h.id, title=h.title, layer=h.layer, confidence=h.confidence, impact_pct=h.impact_pct,
                    evidence=[e.message for e in h.evidence[:EVIDENCE_PER_NODE]]) for h in report.hypotheses]
                result.gap = report.gap
                result.metrics = outliers_mod.node_metrics(facts)
                result.config = drift_mod.node_config(facts)
            except Exception as exc:  # one node's failure is reported, never the fleet's
                result.status = "failed"
                result.error = f"diagnosis failed: {type(exc).__name__}: {exc}"
                result.hypotheses = []
                tb = traceback.format_exc(limit=3).strip().splitlines()
                result.error += f" ({tb[-2].strip() if len(tb) > 1 else ''})"
        if deadline.incomplete and result.status == "ok":
            result.status = "partial"
            result.error = "; ".join(filter(None, [result.error, deadline.summary()]))
        result.seconds = round(time.perf_counter() - t0 + ingest_s / max(1, len(facts_by_node)), 3)
        out.append(result)
    return out


def _worker_entry(task: Task) -> list[NodeResult]:
    return _run_task(task)


# -- the pool -------------------------------------------------------------------------------------


def _failed_results(task: Task, status: str, error: str) -> list[NodeResult]:
    name = task.only or (task.sources[0].name if task.sources else "?")
    return [NodeResult(node=name, sources=task.sources, status=status, error=error)]


def _mp_context() -> Any:
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    # fork: workers inherit the parent's loaded knowledge base and start in milliseconds
    return multiprocessing.get_context("fork" if "fork" in methods else None)


class Runner:
    """Runs tasks in ``jobs`` worker processes (always in workers: a bundle that kills its
    process must not take the caller with it)."""

    def __init__(self, jobs: int, kb: Any, kb_dirs: list[str] | None, site: Any, redact: bool,
                 task_timeout: float = DEFAULT_TASK_TIMEOUT, progress: Progress | None = None,
                 deadline: Deadline = NO_DEADLINE, checklist: bool = False):
        self.checklist = checklist
        self.jobs = max(1, jobs)
        #: the whole fleet's time limit: no task starts after it, none runs past it (and grace)
        self.deadline = deadline
        self.not_started = 0
        self.stopped = 0
        self.kb_dirs = kb_dirs
        self.site = site
        self.redact = redact
        self.task_timeout = task_timeout
        self.progress = progress
        self.done = 0
        self.total = 0
        self.warnings: list[str] = []
        self._pool: ProcessPoolExecutor | None = None
        self._fresh = True
        _STATE.update(kb=kb, kb_key=tuple(kb_dirs or ()))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def _tick(self) -> None:
        self.done += 1
        if self.progress is not None:
            self.progress(self.done, self.total)

    def run(self, tasks: Sequence[Task]) -> dict[int, list[NodeResult]]:
        self.total += len(tasks)
        return self._run_pool(tasks)

    def _new_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=self.jobs, mp_context=_mp_context(),
                                             initializer=_init_worker,
                                             initargs=(self.kb_dirs, self.site, self.redact, self.deadline,
                                                       self.checklist))
            self._fresh = True
        return self._pool

    def _discard_pool(self, kill: bool) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if kill:
            for proc in list(getattr(pool, "_processes", {}).values()):  # no public API to stop a hung task
                try:
                    proc.kill()
                except Exception:
                    pass
        pool.shutdown(wait=kill, cancel_futures=True)

    def _task_end(self, grace: float) -> float:
        """When a task started now must be done: its own timeout, cut to the fleet's limit."""
        end = time.monotonic() + self.task_timeout + grace
        left = self.deadline.remaining()
        if left is not None:
            from clusterdx.engine.backstop import grace_s

            end = min(end, time.monotonic() + left + grace_s(self.deadline))
        return end

    def _run_pool(self, tasks: Sequence[Task]) -> dict[int, list[NodeResult]]:
        out: dict[int, list[NodeResult]] = {}
        pending: deque[Task] = deque(tasks)
        suspects: deque[Task] = deque()
        inflight: dict[Future, tuple[Task, float, bool]] = {}
        while pending or suspects or inflight:
            if self.deadline.passed() and (pending or suspects):
                for t in list(pending) + list(suspects):
                    out[t.index] = _failed_results(t, "timeout", "not started: the fleet's time limit "
                                                                 f"({self.deadline.seconds:g} s, --timeout) had passed")
                    self.not_started += 1
                    self._tick()
                pending.clear()
                suspects.clear()
                if not inflight:
                    break
            solo_running = any(solo for _, _, solo in inflight.values())
            if not solo_running:
                pool = self._new_pool()
                grace = min(STARTUP_GRACE, self.task_timeout) if self._fresh else 0.0
                if suspects and not inflight:
                    t = suspects.popleft()
                    inflight[pool.submit(_worker_entry, t)] = (t, self._task_end(grace), True)
                elif not suspects:
                    while pending and len(inflight) < self.jobs:
                        t = pending.popleft()
                        inflight[pool.submit(_worker_entry, t)] = (t, self._task_end(grace), False)
            if not inflight:
                continue
            wait_s = max(0.0, min(d for _, d, _ in inflight.values()) - time.monotonic())
            done, _ = wait(list(inflight), timeout=wait_s, return_when=FIRST_COMPLETED)
            broken = False
            for fut in done:
                t, _, solo = inflight.pop(fut)
                try:
                    out[t.index] = fut.result()
                    self._fresh = False
                except BrokenProcessPool:
                    broken = True
                    if solo:
                        out[t.index] = _failed_results(t, "crashed", "the worker process died while diagnosing "
                                                                     "this bundle (it broke the pool on its own)")
                        self.warnings.append(f"worker crashed on {', '.join(b.name for b in t.sources)}")
                    else:
                        suspects.append(t)
                        continue
                except Exception as exc:
                    out[t.index] = _failed_results(t, "failed", f"{type(exc).__name__}: {exc}")
                self._tick()
            if broken:
                for fut, (t, _, solo) in list(inflight.items()):
                    suspects.append(t)
                inflight.clear()
                self._discard_pool(kill=True)
                continue
            now = time.monotonic()
            expired = [fut for fut, (_, d, _) in inflight.items() if d <= now and not fut.done()]
            if expired:
                for fut in expired:
                    t, _, _ = inflight.pop(fut)
                    if self.deadline.passed():
                        self.stopped += 1
                        why = f"stopped: the fleet's time limit ({self.deadline.seconds:g} s, --timeout) passed"
                    else:
                        why = f"no result within {self.task_timeout:g} s"
                    out[t.index] = _failed_results(t, "timeout", why)
                    self.warnings.append(f"timed out on {', '.join(b.name for b in t.sources)}")
                    self._tick()
                for fut, (t, _, _) in list(inflight.items()):
                    pending.appendleft(t)
                inflight.clear()
                self._discard_pool(kill=True)
        return out


# -- the fleet ------------------------------------------------------------------------------------


def _collect(results: dict[int, list[NodeResult]]
             ) -> tuple[dict[str, NodeResult], dict[str, list[NodeResult]], list[str]]:
    """Home nodes by name, the parts of nodes found in other bundles, and a warning per host that
    two or more bundles claim: each claim is kept as its own node, ``host@bundle``."""
    claims: dict[str, list[NodeResult]] = {}
    foreign: dict[str, list[NodeResult]] = {}
    for idx in sorted(results):
        for r in results[idx]:
            if r.home:
                claims.setdefault(r.node, []).append(r)
            else:
                foreign.setdefault(r.node, []).append(r)
    nodes: dict[str, NodeResult] = {}
    warnings: list[str] = []
    for host, rs in claims.items():
        if len(rs) == 1:
            nodes[host] = rs[0]
            continue
        bundles = [r.sources[0].name if r.sources else "?" for r in rs]
        for r, b in zip(rs, bundles):
            others = [x for x in bundles if x != b]
            r.host, r.node = host, f"{host}@{b}"
            r.conflict = f"bundles {', '.join(others)} claim host {host} too; kept apart, not merged"
            nodes[r.node] = r
        extra = foreign.pop(host, [])
        note = (f"; its facts in {', '.join(sorted({b.name for p in extra for b in p.sources}))} were not "
                f"given to either") if extra else ""
        warnings.append(f"{len(rs)} bundles claim host {host} ({', '.join(bundles)}): each is diagnosed "
                        f"on its own as {', '.join(f'{host}@{b}' for b in bundles)}, never merged; check "
                        f"which bundle is mislabelled{note}")
    return nodes, foreign, warnings


def _merge_tasks(nodes: dict[str, NodeResult], foreign: dict[str, list[NodeResult]], start: int) -> list[Task]:
    """Tasks for nodes whose facts are spread over several bundles."""
    tasks: list[Task] = []
    for node in sorted(foreign):
        parts = foreign[node]
        own = nodes.get(node)
        if own is None and len(parts) == 1 and parts[0].status != "pending":
            nodes[node] = parts[0]
            continue
        if own is not None and own.from_report:
            continue  # a report holds no facts to merge with; the node stands as its report says
        if own is not None:
            new_types = frozenset().union(*(p.fact_types for p in parts)) - own.fact_types
            if not new_types and not any(p.home for p in parts):
                continue  # the other bundles only repeat what the node's own bundle shows
            base = list(own.sources)
        else:
            base = []
        for p in parts:
            base += [b for b in p.sources if b not in base]
        tasks.append(Task(start + len(tasks), tuple(base), only=node))
    return tasks


def _weigh_fleet_facts(node: NodeResult, facts: list[Fact], kb: Any, site: Any, redact: bool) -> None:
    """A node read from its report, diagnosed with its fleet facts alone (outliers, drift): the
    causes those rules find join the report's own, which are kept as they are."""
    from clusterdx.engine.diagnose import Collected, run_diagnosis

    own = {h.id for h in node.hypotheses}
    try:
        report = run_diagnosis(Collected([], [f.model_copy(update={"node": node.node}) for f in facts], []),
                               kb=kb, site=site, redact=redact, next_probes=False).report
    except Exception as exc:  # the report's own answer stands
        node.error = "; ".join(filter(None, [node.error, f"fleet facts not weighed: {type(exc).__name__}: {exc}"]))
        return
    node.hypotheses = node.hypotheses + [
        NodeHypothesis(id=h.id, title=h.title, layer=h.layer, confidence=h.confidence, impact_pct=h.impact_pct,
                       evidence=[e.message for e in h.evidence[:EVIDENCE_PER_NODE]])
        for h in report.hypotheses if h.id not in own]


#: result indexes of nodes read from reports (after bundles, merges and re-runs)
REPORT_INDEX = 20_000_000


def _read_reports(bundles: list[Bundle]) -> tuple[list[NodeResult], list[Bundle], list[str]]:
    """Nodes read from per-node reports, the bundles left to diagnose, and notes for the report.

    A file that looked like a report and is not one goes back to the bundles; a bundle a report
    was made from (the report's target) is not diagnosed again."""
    from clusterdx.engine import fleet_reports as fr

    results: list[NodeResult] = []
    rest: list[Bundle] = []
    covered: set[str] = set()
    no_digest = 0
    for b in bundles:
        if not b.report:
            rest.append(b)
            continue
        data = fr.read_report(Path(b.paths[0]))
        if data is None:
            rest.append(Bundle(b.name, b.paths))
            continue
        parts = fr.result_parts(data)
        covered |= fr.report_targets(data)
        no_digest += not parts.pop("has_digest")
        node = fr.report_node(data, b.name)
        results.append(NodeResult(node=node, sources=(Bundle(b.name, b.paths, True),), home=True, from_report=True,
                                  fact_types=frozenset(), **parts))
        del data  # one report in memory at a time
    notes: list[str] = []
    if covered:
        kept = [b for b in rest if not all(os.path.realpath(p) in covered for p in b.paths)]
        if len(kept) < len(rest):
            notes.append(f"{len(rest) - len(kept)} bundles were not diagnosed again: a report given beside them "
                         f"was made from them")
        rest = kept
    if no_digest:
        notes.append(f"{no_digest} reports carry no fleet digest (made by an older clusterdx): their nodes are "
                     f"not compared for outliers and drift")
    return results, rest, notes


def _hypotheses(kb: Any, nodes: list[NodeResult]) -> list[FleetHypothesis]:
    diagnosed = [n for n in nodes if n.status in ("ok", "partial")]
    found: dict[str, list[tuple[NodeResult, NodeHypothesis]]] = {}
    for n in diagnosed:
        for h in n.hypotheses:
            found.setdefault(h.id, []).append((n, h))
    out: list[FleetHypothesis] = []
    total = max(1, len(diagnosed))
    for cid, hits in found.items():
        share = len(hits) / total
        confs = [h.confidence for _, h in hits]
        impacts = [h.impact_pct for _, h in hits]
        node = kb.nodes.get(cid) if kb is not None else None
        rems = []
        if node is not None:
            rems = [RemediationRef(id=r, title=kb.remediations[r].title) for r in node.remediations
                    if r in kb.remediations]
        evidence = [NodeEvidence(node=n.node, message=m) for n, h in hits[:3] for m in h.evidence[:1]]
        first = hits[0][1]
        out.append(FleetHypothesis(
            id=cid, title=first.title, layer=first.layer,
            extent="cluster-wide" if share >= CLUSTER_WIDE_SHARE and (len(hits) >= 2 or total == 1) else "local",
            nodes=sorted(n.node for n, _ in hits), node_count=len(hits), share=round(share, 4),
            confidence_max=round(max(confs), 4), confidence_median=round(statistics.median(confs), 4),
            impact_pct_median=round(statistics.median(impacts), 2), evidence=evidence, remediation=rems))
    out.sort(key=lambda h: (h.extent != "cluster-wide", -h.node_count * h.impact_pct_median if h.extent ==
                            "cluster-wide" else -h.impact_pct_median * h.confidence_max, h.id))
    return out


def _node_out(r: NodeResult, n_out: int, n_drift: int) -> FleetNode:
    return FleetNode(name=r.node, bundles=[b.name for b in r.sources], status=r.status, error=r.error,
                     inputs=r.inputs, facts=r.facts, hypotheses=r.hypotheses, gap=r.gap, outliers=n_out,
                     drift=n_drift, seconds=r.seconds, host=r.host, conflict=r.conflict, from_report=r.from_report)


def run_fleet(paths: Sequence[str | Path], *, jobs: int | None = None, kb: Any = None,
              kb_dirs: Sequence[str | Path] | None = None, site: Any = None, redact: bool = True,
              task_timeout: float = DEFAULT_TASK_TIMEOUT, progress: Progress | None = None,
              deadline: Deadline | None = None, checklist: dict[str, list] | None = None) -> FleetReport:
    """Diagnose every node under ``paths`` and merge; see the module docstring. ``deadline``: the
    whole run's time limit; past it no node starts, none runs on (each reported ``timeout``), and
    the re-runs with fleet facts are skipped; a warning says how many. ``checklist``: a dict to
    fill with each diagnosed node's checklist items (``clusterdx check --fleet``)."""
    from clusterdx import __version__
    from clusterdx.engine.kb import load_kb
    from clusterdx.engine.report import ToolInfo
    from clusterdx.engine.site import SiteConfig, rule_params

    started = time.perf_counter()
    dirs = [str(d) for d in kb_dirs] if kb_dirs else None
    kb = kb or load_kb([Path(d) for d in dirs] if dirs else None)
    site = site or SiteConfig()
    bundles = split_bundles(paths)
    from_reports, bundles, report_notes = _read_reports(bundles)
    jobs = max(1, min(jobs or (os.cpu_count() or 1), len(bundles) or 1))
    deadline = deadline or NO_DEADLINE
    runner = Runner(jobs, kb, dirs, site, redact, task_timeout, progress, deadline, checklist is not None)
    try:
        results = runner.run([Task(i, (b,)) for i, b in enumerate(bundles)]) if bundles else {}
        results.update({REPORT_INDEX + i: [r] for i, r in enumerate(from_reports)})
        nodes, foreign, conflicts = _collect(results)
        merges = _merge_tasks(nodes, foreign, len(bundles))
        if merges and deadline.passed():
            deadline.skipped("merging nodes found in several bundles")
            merges = []
        if merges:
            for idx, rs in runner.run(merges).items():
                for r in rs:
                    nodes[r.node] = r
        live = {n: r for n, r in nodes.items() if r.status in ("ok", "partial")}
        outliers = outliers_mod.find_outliers({n: r.metrics for n, r in live.items()},
                                              params=rule_params(kb, site))
        drifts = drift_mod.find_drift({n: r.config for n, r in live.items()})
        extra: dict[str, list[Fact]] = {}
        for d in (outliers_mod.outlier_facts(outliers), drift_mod.drift_facts(drifts)):
            for n, fs in d.items():
                extra.setdefault(n, []).extend(fs)
        names: dict[int, str] = {}
        reruns: list[Task] = []
        from_reports_flagged = sorted(n for n in extra if n in live and live[n].from_report)
        for n in from_reports_flagged:
            _weigh_fleet_facts(live[n], extra[n], kb, site, redact)
        if from_reports_flagged:
            report_notes.append(
                f"{len(from_reports_flagged)} nodes read from their reports have outliers or drift "
                f"({', '.join(from_reports_flagged[:5])}{', ...' if len(from_reports_flagged) > 5 else ''}): the "
                f"rules about outliers and drift ran on them, but not together with their own facts (that "
                f"needs their bundles)")
        for i, (n, fs) in enumerate(sorted(extra.items())):
            if n not in live or live[n].from_report:
                continue
            host = nodes[n].host or n  # a claimed-twice host is re-run as itself, in its own bundle only
            names[10_000_000 + i] = n
            reruns.append(Task(10_000_000 + i, nodes[n].sources, only=host,
                               extra={host: [f.model_copy(update={"node": host}) for f in fs]}))
        if reruns and deadline.passed():
            deadline.skipped("re-running nodes with outlier and drift facts")
            reruns = []
        if reruns:
            for idx, rs in runner.run(reruns).items():
                for r in rs:
                    if r.status in ("ok", "partial"):
                        name = names.get(idx, r.node)
                        r.host, r.conflict = nodes[name].host, nodes[name].conflict
                        r.node = name
                        nodes[name] = r
        warnings = conflicts + report_notes + list(runner.warnings)
        if runner.not_started or runner.stopped or deadline.incomplete:
            warnings.append(f"partial fleet report: the time limit ({deadline.seconds or 0:g} s, --timeout) passed; "
                            f"{runner.not_started} nodes not started, {runner.stopped} stopped"
                            + "".join(f"; {s} skipped" for s in deadline.stages_skipped))
    finally:
        runner.close()
    n_out: dict[str, int] = {}
    for o in outliers:
        n_out[o.node] = n_out.get(o.node, 0) + 1
    n_drift: dict[str, int] = {}
    for d in drifts:
        for node, _, _ in d.differing:
            n_drift[node] = n_drift.get(node, 0) + 1
    ordered = [nodes[n] for n in sorted(nodes)]
    diagnosed = sum(1 for r in ordered if r.status in ("ok", "partial"))
    if checklist is not None:
        checklist.update({r.node: r.items for r in ordered if r.items})
    return FleetReport(
        tool=ToolInfo(version=__version__, kb_rules=len(kb.rules),
                      kb_causes=sum(1 for n in kb.nodes.values() if n.kind == "root_cause")),
        target=[str(p) for p in paths],
        summary=FleetSummary(nodes=len(ordered), diagnosed=diagnosed, failed=len(ordered) - diagnosed, jobs=jobs,
                             seconds=round(time.perf_counter() - started, 2)),
        nodes=[_node_out(r, n_out.get(r.node, 0), n_drift.get(r.node, 0)) for r in ordered],
        hypotheses=_hypotheses(kb, ordered),
        outliers=[OutlierOut(node=o.node, metric=o.metric, key=o.key, value=o.value, median=o.median, mad=o.mad,
                             score=o.score, direction=o.direction, deviation_pct=o.deviation_pct, peers=o.peers,
                             unit=o.unit, source=o.source) for o in outliers],
        drift=[DriftOut(what=d.what, category=d.category, majority_value=d.majority_value,
                        majority_nodes=d.majority_nodes, nodes_total=d.nodes_total,
                        differing=[DriftNode(node=n, value=v, source=s) for n, v, s in d.differing])
               for d in drifts],
        warnings=warnings,
        redacted=redact,
    )
