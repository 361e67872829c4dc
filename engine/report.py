"""The report object every explainer renders (schema ``clusterdx.report/1``).

It is data only: the engine fills it, explainers turn it into text, JSON, Markdown or HTML. The
JSON Schema published in ``docs/report.schema.json`` is generated from these models
(``clusterdx schema report``), and tests validate real output against it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

REPORT_SCHEMA = "clusterdx.report/1"


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class InputWarningOut(Model):
    line: int
    message: str


class InputOut(Model):
    path: str
    format: str | None
    confidence: float
    status: Literal["parsed", "partial", "unrecognized", "error", "skipped"]
    reason: str = ""
    first_line: str = ""
    line_start: int = 1
    line_end: int = 0
    command: str | None = None
    node: str
    scope: str
    size_bytes: int = 0
    facts: int = 0
    warnings: list[InputWarningOut] = Field(default_factory=list)
    side: Literal["target", "baseline"] = "target"
    #: the nodes this input's facts went to, when more than one (a job-wide NCCL log); else empty
    #: and ``node`` says where they went
    nodes: list[str] = Field(default_factory=list)


class FactOut(Model):
    type: str
    summary: str
    source: str
    node: str
    scope: str
    #: stated by the user in the ticket's prose, not measured by a tool
    reported: bool = False


class EvidenceOut(Model):
    rule: str
    rule_title: str
    node: str
    effect: Literal["supports", "refutes"]
    strength: str
    message: str
    facts: list[FactOut]
    matches: int
    data: dict[str, Any] = Field(default_factory=dict)
    #: every match rests on a fact the user reported (ticket prose): weighed one strength level
    #: lower than the rule's own, and shown as "reported by the user"
    reported: bool = False


class TermOut(Model):
    rule: str
    node: str
    effect: str
    strength: str
    attenuation: float
    share: float
    delta_logit: float
    #: the evidence rests on reported facts: ``strength`` is one level below ``rule_strength``
    reported: bool = False
    #: the strength the rule declares, when it was lowered for reported facts; else ''
    rule_strength: str = ""


class AlternativeOut(Model):
    text: str
    command: str
    needs_root: bool = False


class StepOut(Model):
    text: str
    #: the exact command, with the values the evidence supplied filled in
    command: str = ""
    needs_root: bool = False
    #: the values filled into ``command`` from the evidence (name -> value as written); a value
    #: no evidence supplied is left as its placeholder and is not listed here
    values: dict[str, str] = Field(default_factory=dict)
    alternatives: list[AlternativeOut] = Field(default_factory=list)


class RemediationOut(Model):
    id: str
    title: str
    risk: str
    effort: str
    disruption: str
    tradeoff: str = ""
    steps: list[StepOut]
    verify: str
    rollback: str


class VerificationOut(Model):
    check: str
    command: str = ""
    expect: str
    recovery_pct: list[float] = Field(default_factory=list)
    #: the values filled into ``command`` and ``expect`` from this node (name -> value as written)
    values: dict[str, str] = Field(default_factory=dict)


class Hypothesis(Model):
    id: str
    title: str
    layer: str
    seed: list[str] = Field(default_factory=list)
    rank: int
    confidence: float = Field(ge=0.0, le=1.0)
    prior: float
    #: "supported": the evidence makes the cause likely enough to report; "candidate": evidence
    #: (usually a shared symptom) lifted it, not enough to report: unconfirmed, listed below
    status: Literal["supported", "candidate"] = "supported"
    #: confidence x midpoint of the typical cost, bounded by the measured gap when there is one
    impact_pct: float
    #: the part of the measured gap this cause is expected to account for; None when no gap
    #: was measured (then there is no "share of the gap", only the typical cost)
    gap_share_pct: float | None = None
    cost_pct: list[float]
    summary: str = ""
    evidence: list[EvidenceOut]
    refuting_evidence: list[EvidenceOut] = Field(default_factory=list)
    score: list[TermOut]
    causal_path: list[str]
    remediation: list[RemediationOut]
    verification: list[VerificationOut]
    references: list[str]


class ProbeOut(Model):
    id: str
    title: str
    command: str
    where: list[str]
    needs_root: bool
    duration_s: float


class ProbeSuggestion(Model):
    id: str
    title: str
    command: str
    where: list[str]
    needs_root: bool
    disturbs_workload: bool
    duration_s: float
    gain: float
    cost: float
    value: float
    unlocks: list[str]
    bears_on: list[str]
    separates: list[str] = Field(default_factory=list)


class NotEvaluated(Model):
    rule: str
    title: str
    nodes: list[str]
    missing: list[str]
    probes: list[ProbeOut]
    #: why the rule cannot apply to this node (an arm64 rule on x86, a fleet rule on one node);
    #: '' when it may. Such a rule is still not evaluated, only listed apart
    not_applicable: str = ""


class RuleOutcomeOut(Model):
    rule: str
    outcome: Literal["fired", "refuted", "silent", "not_evaluated"]
    title: str = ""
    layer: str = ""
    #: the rule had its facts and found nothing wrong: it fired only to refute a cause, or it
    #: looks for a problem and stayed silent
    passed: bool = False


class Gap(Model):
    metric: str
    measured: float
    reference: float
    ratio: float
    gap_pct: float
    meets_bar: bool
    bar: float = 0.95
    basis: Literal["baseline", "reference"]
    #: the measured number is one the user stated in the ticket's words, not a tool's output
    reported: bool = False
    explained_pct: float = 0.0
    unexplained_pct: float = 0.0


class Difference(Model):
    what: str
    target: str
    baseline: str
    source: str = ""


class Incomplete(Model):
    """The run passed its time limit (``--timeout``) before it finished: what it left undone.
    The rest of the report holds what was done; every input left unread is still listed in
    ``inputs`` (``skipped``, with the reason)."""

    timeout_s: float
    #: where the limit was first seen passed: reading inputs, deriving facts, evaluating rules,
    #: next probes, or "stopped" (the hard backstop ended a run that did not stop by itself)
    stage: str
    inputs_not_read: list[str] = Field(default_factory=list)
    derivers_not_run: list[str] = Field(default_factory=list)
    #: nodes (rule sessions) whose rules were not evaluated
    nodes_not_evaluated: list[str] = Field(default_factory=list)
    #: later stages not run at all (e.g. "next probes")
    stages_skipped: list[str] = Field(default_factory=list)


class ToolInfo(Model):
    name: str = "clusterdx"
    version: str
    kb_rules: int
    kb_causes: int


class FleetMetric(Model):
    """One value a fleet compares across nodes (see :mod:`clusterdx.engine.outliers`)."""

    metric: str
    key: str
    value: float
    source: str


class FleetSetting(Model):
    """One configuration string a fleet compares across nodes (see :mod:`clusterdx.engine.drift`)."""

    what: str
    value: str
    source: str


class FleetDigest(Model):
    """What ``clusterdx fleet`` needs of this report to compare its node with its peers without
    reading the inputs again: the node's outlier metrics and drift settings."""

    metrics: list[FleetMetric] = Field(default_factory=list)
    settings: list[FleetSetting] = Field(default_factory=list)


class Report(Model):
    schema_: Literal["clusterdx.report/1"] = Field(REPORT_SCHEMA, alias="schema")
    tool: ToolInfo
    target: list[str]
    baseline: list[str] = Field(default_factory=list)
    nodes: list[str] = Field(default_factory=list)
    #: names the inputs gave a machine that were resolved to one of ``nodes`` (an NCCL log's host
    #: prefix, an FQDN, a prompt's host name -> the node); see docs/report.md
    node_aliases: dict[str, str] = Field(default_factory=dict)
    inputs: list[InputOut]
    hypotheses: list[Hypothesis]
    not_evaluated: list[NotEvaluated]
    #: the collections that would most change the ranking, best first
    next_probes: list[ProbeSuggestion] = Field(default_factory=list)
    gap: Gap | None = None
    differences: list[Difference] = Field(default_factory=list)
    rules: list[RuleOutcomeOut] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    redacted: bool = True
    #: the site configuration in force (None: shipped defaults)
    site: dict[str, Any] | None = None
    #: the reference system measurements were held to, and whether it was given or inferred
    reference: dict[str, Any] | None = None
    #: set when the run passed its time limit (``--timeout``): the report is partial, and this
    #: says what was not finished; None for a finished run
    incomplete: Incomplete | None = None
    #: the node's values a fleet compares (outliers, drift), so reports reduce without re-parsing
    fleet: FleetDigest | None = None

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    def to_json_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)

    def for_fleet(self) -> "Report":
        """The compact copy a node writes for ``clusterdx fleet``: the per-rule outcomes and the
        not-evaluated list (most of a report's size, and nothing a fleet reduces) are left out,
        and a warning says so and how many, so a reader never takes the empty lists for "all
        evaluated"."""
        n_rules, n_not = len(self.rules), len(self.not_evaluated)
        return self.model_copy(update={
            "rules": [], "not_evaluated": [], "next_probes": [],
            "warnings": self.warnings + [f"compact report for clusterdx fleet (--for-fleet): {n_rules} rule outcomes "
                                         f"and the {n_not} rules not evaluated are left out; run diagnose without "
                                         f"--for-fleet for them"]})
