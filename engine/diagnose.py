"""The pipeline: inputs -> facts -> derived facts -> rules -> evidence -> ranking -> report."""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Sequence

from clusterdx import __version__
from clusterdx.engine.evaluate import RuleEngine, RuleResult, describe_requirement, enabled_rules
from clusterdx.engine.kb import KnowledgeBase, load_kb
from clusterdx.engine.applicability import MIN_FLEET_NODES, role_fit
from clusterdx.engine.complaint import complaint
from clusterdx.engine.rank import EvidenceRef, Scored, listing, score
from clusterdx.engine.nextprobe import suggest
from clusterdx.engine.remedy import evidence_values, node_command_values, node_values, render_step, render_verification
from clusterdx.engine.site import SiteConfig, rule_params
from clusterdx.engine.report import (
    Difference, EvidenceOut, FactOut, FleetDigest, FleetMetric, FleetSetting, Gap, Hypothesis, Incomplete, InputOut,
    NotEvaluated, ProbeOut, ProbeSuggestion,
    RemediationOut,
    Report, RuleOutcomeOut, TermOut, ToolInfo, VerificationOut,
)
from clusterdx.facts.base import Fact
from clusterdx.facts.deadline import NO_DEADLINE, Deadline
from clusterdx.facts.nodes import is_unlabelled

_ENGINES: dict[tuple[int, str], RuleEngine] = {}


def engine_for(kb: KnowledgeBase, site: SiteConfig | None = None) -> RuleEngine:
    """One compiled engine per knowledge base and site configuration per process."""
    site = site or SiteConfig()
    key = (id(kb), site.model_dump_json())
    if key not in _ENGINES:
        rule_ids = enabled_rules(kb, site.statuses, site.rules.disable)
        _ENGINES[key] = RuleEngine(kb, rule_ids, site.rules.params)
    return _ENGINES[key]


def site_warnings(kb: KnowledgeBase, site: SiteConfig) -> list[str]:
    out = []
    for rid in site.rules.disable:
        if rid not in kb.rules:
            out.append(f"site configuration disables unknown rule {rid!r}")
    for rid, params in site.rules.params.items():
        if rid not in kb.rules:
            out.append(f"site configuration sets parameters of unknown rule {rid!r}")
            continue
        for name in params:
            if name not in kb.rules[rid].params:
                out.append(f"site configuration sets unknown parameter {name!r} of rule {rid!r}")
    for cid in list(site.priors) + list(site.mandatory):
        if cid not in kb.nodes:
            out.append(f"site configuration names unknown cause {cid!r}")
    return out


@dataclass
class Collected:
    """Inputs of one side of a diagnosis, after ingestion."""

    inputs: list[Any]
    facts: list[Fact]
    paths: list[str]
    #: names resolved to another node (alias -> node), from :mod:`clusterdx.facts.nodes`
    aliases: dict[str, str] = field(default_factory=dict)


def collect_paths(paths: Sequence[str | Path], *, node: str | None = None, scope: str | None = None,
                  redact: bool = True, deadline: Deadline | None = None) -> Collected:
    from clusterdx.facts.ingest import ingest

    from clusterdx.facts.base import printable

    result = ingest(paths, node=node, scope=scope, redact=redact, deadline=deadline)
    return Collected(list(result.inputs), list(result.facts), [printable(str(p), False) for p in paths],
                     dict(result.aliases))


def collect_live(redact: bool = True, deadline: Deadline | None = None) -> Collected:
    from clusterdx.facts.ingest import ingest_documents
    from clusterdx.facts.live import collect_documents

    docs, notes = collect_documents(redact=redact)
    result = ingest_documents(docs, redact=redact, deadline=deadline)
    inputs = list(result.inputs) + notes
    return Collected(inputs, list(result.facts), ["<this machine>"], dict(result.aliases))


@dataclass
class Diagnosis:
    """A finished diagnosis: the report, and the facts (parsed and derived) behind it."""

    report: Report
    facts: list[Fact]


def diagnose(target: Collected, baseline: Collected | None = None, kb: KnowledgeBase | None = None,
             redact: bool = True, site: SiteConfig | None = None, reference: str | None = None,
             extra_evidence: Sequence[Any] | None = None, deadline: Deadline | None = None,
             for_fleet: bool = False) -> Report:
    """``for_fleet``: the compact report a node writes for ``clusterdx fleet`` (no next probes,
    no per-rule lists; see :meth:`Report.for_fleet`)."""
    report = run_diagnosis(target, baseline, kb, redact, site, reference, extra_evidence,
                           next_probes=not for_fleet, deadline=deadline).report
    return report.for_fleet() if for_fleet else report


def run_diagnosis(target: Collected, baseline: Collected | None = None, kb: KnowledgeBase | None = None,
                  redact: bool = True, site: SiteConfig | None = None, reference: str | None = None,
                  extra_evidence: Sequence[Any] | None = None, next_probes: bool = True,
                  deadline: Deadline | None = None) -> Diagnosis:
    """``next_probes=False`` skips the next-probe search (fleet workers merge nodes instead).
    ``deadline``: the run's time limit, the same one ingestion ran under; past it the stages left
    stop taking work (see :mod:`clusterdx.facts.deadline`) and the report says so in ``incomplete``.
    ``extra_evidence``: evidence from outside the rules (a user's answer to a KB question), items
    with ``rule_id``, ``node``, ``effect``, ``strength`` and ``message`` (see
    :class:`clusterdx.engine.questions.ExtraEvidence`); it joins the ranking like a rule's."""
    from clusterdx.facts.derive import compare, derive_all
    from clusterdx.facts.reference import describe, select

    kb = kb or load_kb(cache=True)  # the shipped KB, compiled once per cache folder
    deadline = deadline or NO_DEADLINE
    site = site or SiteConfig()
    params = rule_params(kb, site)
    ref = select(reference, target.facts)
    derive_warnings: list[str] = []
    facts = derive_all(target.facts, ref, derive_warnings, params, deadline)
    facts = facts + cross_node_facts(facts, params=params)
    differences: list[Difference] = []
    if baseline is not None:
        base_facts = derive_all(baseline.facts, ref, derive_warnings, params, deadline)
        extra, diffs = compare(facts, base_facts, derive_warnings)
        facts = facts + extra
        differences = [Difference(**d) for d in diffs]
    engine = engine_for(kb, site)
    results, warnings = engine.evaluate(facts, deadline)
    warnings = site_warnings(kb, site) + derive_warnings + warnings
    gap = _gap(facts)
    refs, by_key = _evidence(results)
    extra_out: dict[int, EvidenceOut] = {}
    for item in extra_evidence or ():
        key = len(refs)
        refs.append(EvidenceRef(key, item.rule_id, item.node, item.effect, item.strength))
        extra_out[key] = EvidenceOut(rule=item.rule_id, rule_title=getattr(item, "title", "") or item.rule_id,
                                     node=item.node, effect=item.effect, strength=item.strength,
                                     message=item.message, facts=[], matches=1)
    graph = kb.graph
    assert graph is not None  # load_kb refuses a KB whose graph did not build
    # only a whole-job gap (step time) bounds every cause's share; a bus-bandwidth gap is a part
    bound = gap.gap_pct if gap is not None and gap.basis == "baseline" else None
    scored = score(graph, refs, bound, site.priors, role_fit(kb.nodes, facts))
    listed = listing(scored, complaint(facts, slow_measured=gap is not None and not gap.meets_bar))
    values = node_values(facts, gap)
    commands = node_command_values(facts)
    hypotheses = [_hypothesis(kb, s, rank, by_key, results, extra_out, status, values, commands)
                  for rank, (s, status) in enumerate(listed, 1)]
    # platform.role summarises facts that are in hand themselves (virt probes, lscpu): it is not a
    # collection, so it neither puts a cause "in context" nor rules a probe out
    known = [f for f in facts if f.fact_type != "platform.role"]
    present = {f.fact_type for f in known}
    if next_probes and deadline.passed():
        deadline.skipped("next probes")  # a what-if re-ranking per probe: the longest step left
        next_probes = False
    # what the ticket already holds: a probe whose output is attached is never asked for again
    # (an excerpt, `lspci -vvv | grep Mellanox`, is not the probe's whole output: it may be asked for)
    attached = {i.format for i in target.inputs
                if getattr(i, "status", "") in ("parsed", "partial") and i.format
                and "|" not in (getattr(i, "command", None) or "")}
    # candidates only: their confidence is mostly prior, the order they are listed in is the evidence's
    order = [s.cause for s, _ in listed] if all(st == "candidate" for _, st in listed) else None
    suggestions = suggest(kb, results, refs, present, bound, site.priors, payloads=[f.payload() for f in known],
                          engine_rules={r.id: r for r in engine.rules}, attached=attached,
                          listed=order) if next_probes else []
    if gap is not None:
        # a busbw gap is explained only by causes that act through slower collectives
        sharing = [h for h in hypotheses if gap.basis == "baseline"
                   or "collective-slow" in graph.attenuation.get(h.id, {})]
        for h in sharing:
            h.gap_share_pct = round(min(h.impact_pct, gap.gap_pct), 2)
        explained = min(gap.gap_pct, sum(h.gap_share_pct or 0.0 for h in sharing))
        gap.explained_pct = round(max(explained, 0.0), 2)
        gap.unexplained_pct = round(max(gap.gap_pct - explained, 0.0), 2)
    if differences:
        from clusterdx.facts.derive.compare import rank_differences

        differences = list(rank_differences(differences, hypotheses))
    inputs = [_input_out(i, "target") for i in target.inputs]
    if baseline is not None:
        inputs += [_input_out(i, "baseline") for i in baseline.inputs]
    report = Report(
        tool=ToolInfo(version=__version__, kb_rules=len(kb.rules),
                      kb_causes=sum(1 for n in kb.nodes.values() if n.kind == "root_cause")),
        target=target.paths,
        baseline=baseline.paths if baseline else [],
        nodes=sorted({f.node for f in target.facts}),
        node_aliases=dict(target.aliases),
        inputs=inputs,
        hypotheses=hypotheses,
        not_evaluated=_not_evaluated(kb, results, known),
        next_probes=[_probe_out(kb, s) for s in suggestions],
        gap=gap,
        differences=differences,
        rules=[_outcome_out(kb, r) for r in results],
        warnings=warnings,
        redacted=redact,
        site=site.summary() if site.path else None,
        reference=describe(ref),
        incomplete=incomplete_out(deadline),
        fleet=fleet_digest(target.facts),
    )
    if report.incomplete is not None:
        report.warnings.append(deadline.summary())
    hosts = [n for n in report.nodes if not is_unlabelled(n)]
    if len(hosts) >= MIN_FLEET_NODES:
        report.warnings.append(
            f"these inputs describe {len(hosts)} hosts ({', '.join(hosts[:4])}{', ...' if len(hosts) > 4 else ''}); "
            f"this one ranking covers them all: `clusterdx fleet` diagnoses each host on its own and names the "
            f"outliers and the drift between them")
    return Diagnosis(report, facts)


def fleet_digest(facts: Sequence[Any]) -> FleetDigest:
    """The node's values ``clusterdx fleet`` compares across nodes, as the fleet's own workers
    extract them (outlier metrics, drift settings), from the facts read from the inputs."""
    from clusterdx.engine import drift, outliers

    metrics = [FleetMetric(metric=m, key=k, value=v, source=src)
               for (m, k), (v, src) in sorted(outliers.node_metrics(facts).items())]
    settings = [FleetSetting(what=w, value=v, source=src) for w, (v, src) in sorted(drift.node_config(facts).items())]
    return FleetDigest(metrics=metrics, settings=settings)


def incomplete_out(deadline: Deadline) -> Incomplete | None:
    """The report's account of a run that passed its time limit; None for a finished one."""
    if not deadline.incomplete:
        return None
    return Incomplete(timeout_s=deadline.seconds or 0.0, stage=deadline.stage,
                      inputs_not_read=list(deadline.inputs_not_read),
                      derivers_not_run=list(deadline.derivers_not_run),
                      nodes_not_evaluated=list(deadline.nodes_not_evaluated),
                      stages_skipped=list(deadline.stages_skipped))


def cross_node_facts(facts: Sequence[Fact], min_nodes: int = 3,
                     params: dict[str, dict[str, Any]] | None = None) -> list[Fact]:
    """Outliers and drift among the nodes of one diagnosis, when its inputs name several hosts
    (a bundle per node under one folder, per-rank logs from a whole job): the same facts
    ``clusterdx fleet`` derives, so a straggler or a drifted node is named here too."""
    from clusterdx.engine import drift, outliers

    by_node: dict[str, list[Fact]] = {}
    for f in facts:
        if not is_unlabelled(f.node) and not f.fact_type.startswith("fleet."):
            by_node.setdefault(f.node, []).append(f)
    if len(by_node) < min_nodes:
        return []
    out: list[Fact] = []
    values = {n: outliers.node_metrics(fs) for n, fs in by_node.items()}
    for group in outliers.outlier_facts(outliers.find_outliers(values, params=params)).values():
        out.extend(group)
    configs = {n: drift.node_config(fs) for n, fs in by_node.items()}
    for group in drift.drift_facts(drift.find_drift(configs)).values():
        out.extend(group)
    return out


def _input_out(record: Any, side: str) -> InputOut:
    data = record.model_dump() if hasattr(record, "model_dump") else dict(record)
    data["side"] = side
    data["scope"] = str(data.get("scope", "unknown"))
    return InputOut.model_validate(data)


def _gap(facts: Sequence[Fact]) -> Gap | None:
    """The measured gap: the step time against a baseline run when one was compared, else the bus
    bandwidth of a multi-node nccl-tests run against the expected for the hardware (the worst run,
    all_reduce first), else None. The hypotheses share it by their expected share; what they do not
    explain is reported as unexplained, never forced to add up."""
    for f in facts:
        if f.fact_type == "compare.metric" and getattr(f, "metric") == "step_time_ms":
            target, base = getattr(f, "target"), getattr(f, "baseline")
            if target <= 0 or base <= 0:
                continue
            ratio = base / target
            return Gap(metric="step time (ms)", measured=target, reference=base, ratio=round(ratio, 4),
                       gap_pct=round(max(0.0, (1 - ratio) * 100), 2), meets_bar=ratio >= 0.95, basis="baseline")
    runs = [f for f in facts if f.fact_type == "nccltests.efficiency" and getattr(f, "expected_busbw") > 0]
    if runs:
        worst = min(runs, key=lambda f: (getattr(f, "collective") != "all_reduce", getattr(f, "fraction")))
        measured, expected = getattr(worst, "busbw"), getattr(worst, "expected_busbw")
        ratio = measured / expected
        return Gap(metric=f"{getattr(worst, 'collective')} busbw (GB/s)", measured=measured, reference=expected,
                   ratio=round(ratio, 4), gap_pct=round(max(0.0, (1 - ratio) * 100), 2), meets_bar=ratio >= 0.95,
                   basis="reference", reported=getattr(worst, "stated", False))
    return None


#: one strength level down: evidence resting on what a user reported, not on a measurement
WEAKER = {"decisive": "strong", "strong": "moderate", "moderate": "weak", "weak": "weak"}


def rests_on_reported(result: RuleResult) -> bool:
    """True when every kept match of a fired rule binds a fact the user reported (ticket prose):
    one match on measured facts alone carries the rule's strength as written."""
    from clusterdx.facts.base import is_reported

    return bool(result.matches) and all(any(is_reported(f) for f in m.bindings.values())
                                         for m in result.matches)


def _evidence(results: list[RuleResult]) -> tuple[list[EvidenceRef], dict[int, tuple[RuleResult, int]]]:
    """Every emit of a fired or refuted rule as ranking evidence; one resting on reported facts
    enters one strength level lower (:data:`WEAKER`: a measurement always wins over a statement)."""
    refs: list[EvidenceRef] = []
    by_key: dict[int, tuple[RuleResult, int]] = {}
    for r in results:
        if r.outcome not in ("fired", "refuted"):
            continue
        reported = rests_on_reported(r)
        for i, emit in enumerate(r.evidence):
            key = len(refs)
            strength = WEAKER.get(emit.strength, emit.strength) if reported else emit.strength
            refs.append(EvidenceRef(key, r.rule_id, emit.node, emit.effect, strength, emit.via))
            by_key[key] = (r, i)
    return refs, by_key


class _Formatter(string.Formatter):
    def get_field(self, field_name: str, args: Any, kwargs: Any) -> Any:
        return super().get_field(field_name, args, kwargs)


def render_message(template: str, bindings: dict[str, Fact], params: dict[str, Any]) -> str:
    """Fill a rule's message template with the matched facts' fields and the rule's params."""
    ns: dict[str, Any] = dict(params)
    for alias, fact in bindings.items():
        fields = fact.model_dump(mode="json")
        fields["source"] = str(fact.source)
        ns[alias] = SimpleNamespace(**fields)
    node = next((f.node for f in bindings.values()), "")
    ns.setdefault("node", node)
    try:
        return _Formatter().vformat(template, (), ns)
    except (KeyError, AttributeError, ValueError, TypeError, IndexError):
        return template


def _fact_out(fact: Fact) -> FactOut:
    return FactOut(type=fact.fact_type, summary=fact.describe(), source=str(fact.source), node=fact.node,
                   scope=fact.scope.value, reported=getattr(fact, "provenance", "measured") == "reported")


def _rule_data(refs: dict[str, str], matches: Sequence[dict[str, Fact]]) -> dict[str, Any]:
    """A rule's ``data`` over all its matches: the value when every match gives the same one, else
    every distinct value in match order (lists merged), so a fix names each NIC, GPU or variable
    the rule found, not only the first match's."""
    data: dict[str, Any] = {}
    for key, ref in refs.items():
        alias, _, fld = ref.partition(".")
        values = [getattr(b[alias], fld, None) for b in matches if alias in b]
        if not values:
            continue
        seen: list[Any] = []
        for value in values:
            for v in (value if isinstance(value, list) else [value]):
                if v is not None and v not in seen:
                    seen.append(v)
        if isinstance(values[0], list) or len(seen) > 1:
            data[key] = seen  # lists merged, or the matches disagree: every value
        else:
            data[key] = seen[0] if seen else values[0]
    return data


def _evidence_out(kb: KnowledgeBase, result: RuleResult, emit_index: int) -> EvidenceOut:
    rule = kb.rules[result.rule_id]
    emit = result.evidence[emit_index]
    first = result.matches[0] if result.matches else None
    bindings = first.bindings if first else {}
    engine_params = {p: v.default for p, v in rule.params.items()}
    engine_params.update(result.params)
    facts: list[FactOut] = []
    for m in result.matches:
        for fact in m.bindings.values():
            fo = _fact_out(fact)
            if fo not in facts:
                facts.append(fo)
    data = _rule_data(rule.data, [m.bindings for m in result.matches])
    reported = rests_on_reported(result)
    return EvidenceOut(
        rule=rule.id, rule_title=rule.title, node=emit.node, effect=emit.effect,  # type: ignore[arg-type]
        strength=WEAKER.get(emit.strength, emit.strength) if reported else emit.strength, message=render_message(rule.message, bindings, engine_params).strip(),
        facts=facts, matches=result.match_count or len(result.matches), data=data,
        reported=reported,
    )


def _hypothesis(kb: KnowledgeBase, s: Scored, rank: int, by_key: dict[int, tuple[RuleResult, int]],
                results: list[RuleResult], extra: dict[int, EvidenceOut] | None = None,
                status: str = "supported", known: dict[str, str] | None = None,
                commands: dict[str, str] | None = None) -> Hypothesis:
    node = kb.nodes[s.cause]
    graph = kb.graph
    assert graph is not None
    supporting, refuting = [], []
    for t in s.terms:
        if extra and t.evidence in extra:
            ev = extra[t.evidence]
        else:
            result, idx = by_key[t.evidence]
            ev = _evidence_out(kb, result, idx)
        (supporting if t.delta > 0 else refuting).append(ev)
    remediations = [kb.remediations[r] for r in node.remediations if r in kb.remediations]
    values = evidence_values(supporting)
    step_values = {**(commands or {}), **values}
    return Hypothesis(
        id=node.id, title=node.title, layer=node.layer or "", seed=list(node.seed), rank=rank,
        confidence=round(s.confidence, 4), prior=s.prior, status=status, impact_pct=round(s.expected_pct, 2),
        cost_pct=list(node.cost_pct), summary=node.summary.strip(),
        evidence=supporting, refuting_evidence=refuting,
        score=[_term_out(t, by_key) for t in s.terms],
        causal_path=graph.path_to_top(s.cause),
        remediation=[RemediationOut(id=r.id, title=r.title, risk=r.risk, effort=r.effort, disruption=r.disruption,
                                    tradeoff=r.tradeoff.strip(), steps=[render_step(st, step_values) for st in r.steps],
                                    verify=r.verify.strip(), rollback=r.rollback.strip()) for r in remediations],
        verification=[render_verification(v, {**(known or {}), **values}) for v in node.verification],
        references=list(node.references),
    )


def _term_out(t: Any, by_key: dict[int, tuple[RuleResult, int]]) -> TermOut:
    """A score term; one from evidence resting on reported facts says so and keeps the rule's
    own strength beside the lowered one it entered the ranking with."""
    found = by_key.get(t.evidence)
    reported = found is not None and rests_on_reported(found[0])
    declared = found[0].evidence[found[1]].strength if reported and found is not None else ""
    return TermOut(rule=t.rule_id, node=t.node, effect=t.effect, strength=t.strength, attenuation=t.attenuation,
                   share=t.share, delta_logit=t.delta, reported=reported, rule_strength=declared)


def _probe_out(kb: KnowledgeBase, s: Any) -> ProbeSuggestion:
    p = kb.probes[s.probe_id]
    return ProbeSuggestion(id=p.id, title=p.title, command=p.command, where=list(p.where), needs_root=p.needs_root,
                           disturbs_workload=p.disturbs_workload, duration_s=p.duration_s, gain=s.gain, cost=s.cost,
                           value=s.value, unlocks=s.unlocks, bears_on=s.bears_on,
                           separates=list(s.separates) if s.separates else [])


def _outcome_out(kb: KnowledgeBase, r: RuleResult) -> RuleOutcomeOut:
    rule = kb.rules.get(r.rule_id)
    if rule is None:
        return RuleOutcomeOut(rule=r.rule_id, outcome=r.outcome)
    layer = next((t.split(".", 1)[1] for t in rule.tags if t.startswith("layer.")), "")
    detector = any(e.effect == "supports" for e in rule.evidence)
    # a rule on the ticket's words that stayed silent means the user did not say it, not that it
    # was checked and found fine
    words_only = "tool.prose" in rule.tags
    passed = r.outcome == "refuted" or (r.outcome == "silent" and detector and not words_only)
    return RuleOutcomeOut(rule=r.rule_id, outcome=r.outcome, title=rule.title, layer=layer, passed=passed)


def _probes_for(kb: KnowledgeBase, fact_type: str) -> list[Any]:
    """Probes that yield ``fact_type``, or for a derived fact the probes of what it is derived from."""
    from clusterdx.facts.derive import SOURCES

    direct = kb.probes_for(fact_type)
    if direct:
        return direct
    out: list[Any] = []
    for source in sorted(SOURCES.get(fact_type, ())):
        out += [p for p in kb.probes_for(source) if p not in out]
    return out


def _not_evaluated(kb: KnowledgeBase, results: list[RuleResult], facts: Sequence[Fact] = ()) -> list[NotEvaluated]:
    from clusterdx.engine.applicability import gate_view, rule_not_applicable

    facts = gate_view(facts)
    out = []
    probes_of: dict[str, list[Any]] = {}  # the same few fact types are missing from many rules
    for r in results:
        if r.outcome != "not_evaluated":
            continue
        rule = kb.rules[r.rule_id]
        probes: list[ProbeOut] = []
        for pat in r.missing:
            if pat.fact_type not in probes_of:
                probes_of[pat.fact_type] = _probes_for(kb, pat.fact_type)
            for p in probes_of[pat.fact_type]:
                po = ProbeOut(id=p.id, title=p.title, command=p.command, where=list(p.where),
                              needs_root=p.needs_root, duration_s=p.duration_s)
                if po not in probes:
                    probes.append(po)
        out.append(NotEvaluated(rule=rule.id, title=rule.title, nodes=sorted({e.node for e in rule.evidence}),
                                missing=[describe_requirement(p) for p in r.missing], probes=probes,
                                not_applicable=rule_not_applicable(rule, kb, facts)))
    return out
