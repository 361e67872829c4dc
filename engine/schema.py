"""Pydantic models of the knowledge-base documents: rules, causal-graph nodes, remediations, probes.

These validate the YAML an expert writes (``rules/**.yaml``, ``kb/**.yaml``) before anything is
compiled. Unknown keys are errors, so a misspelt key never silently does nothing.
"""

from __future__ import annotations

from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator

Strength = Literal["weak", "moderate", "strong", "decisive"]
Prior = Literal["rare", "low", "medium", "high"]
Status = Literal["experimental", "test", "stable", "deprecated"]
Layer = Literal[
    "hypervisor", "kernel", "bios-cpu", "nccl", "fabric", "container", "hardware", "expectation",
]
Seed = Literal["GV", "CP", "TD", "FM", "HW"]
Scope = Literal["host", "container", "vm-guest", "hypervisor", "any"]

OPS = ("eq", "ne", "gt", "gte", "lt", "lte", "in", "not_in", "matches", "exists", "contains")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Param(Strict):
    default: Union[float, int, str, bool]
    doc: str


class FactPattern(Strict):
    fact: str
    #: field -> constant, or {op: constant}; a constant written ``$name`` is a rule parameter
    where: dict[str, Any] = Field(default_factory=dict)


class Requires(Strict):
    engine: str = ""
    #: fact types (or patterns) that must have been collected for the rule to be evaluated
    facts: list[Union[str, FactPattern]]


class EvidenceSpec(Strict):
    node: str
    effect: Literal["supports", "refutes"] = "supports"
    strength: Strength
    #: the node downstream of ``node`` through which what the rule found acts, when it is one
    #: path of several the node has: a forced NCCL protocol is a leftover override
    #: (nccl-stale-debug-overrides) that only makes NCCL take a slower path (wrong-nccl-path), while
    #: other overrides of that cause make the job fail. The ranking asks it which complaints the
    #: finding can explain (engine/rank.py, step 10); '' when the whole node's reach applies
    via: str = ""


class Related(Strict):
    id: str
    type: Literal["derived", "obsoletes", "merged", "renamed", "similar"]


class Rule(Strict):
    schema_: Literal["clusterdx/rule/v1"] = Field(alias="schema")
    id: str
    title: str
    status: Status
    description: str
    author: str
    created: Any
    modified: Any = None
    references: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    requires: Requires
    params: dict[str, Param] = Field(default_factory=dict)
    match: dict[str, FactPattern]
    condition: str = ""
    evidence: list[EvidenceSpec] = Field(min_length=1)
    message: str
    data: dict[str, str] = Field(default_factory=dict)
    falsepositives: list[str] = Field(min_length=1)
    related: list[Related] = Field(default_factory=list)

    @field_validator("description")
    @classmethod
    def _detects(cls, v: str) -> str:
        if not v.strip().startswith("Detects"):
            raise ValueError("a rule description starts with 'Detects'")
        return v


class Edge(Strict):
    node: str
    strength: Literal["weak", "moderate", "strong"] = "moderate"


class Verification(Strict):
    check: str
    command: str = ""
    expect: str
    #: the share of the cause's cost recovered when the check passes, percent range
    recovery_pct: list[float] = Field(default_factory=list)
    #: values ``command`` and ``expect`` may name as ``{name}`` (the node's values, see
    #: :func:`clusterdx.engine.remedy.node_values`, or the supporting rules' data), each with the
    #: words printed when the node does not supply it
    values: dict[str, str] = Field(default_factory=dict)


class Node(Strict):
    schema_: Literal["clusterdx/node/v1"] = Field(alias="schema")
    id: str
    kind: Literal["root_cause", "mechanism", "observable", "symptom"]
    title: str
    summary: str = ""
    layer: Layer | None = None
    seed: list[Seed] = Field(default_factory=list)
    prior: Prior | None = None
    cost_pct: list[float] = Field(default_factory=list)
    causes: list[Edge] = Field(default_factory=list)
    remediations: list[str] = Field(default_factory=list)
    verification: list[Verification] = Field(default_factory=list)
    references: list[str] = Field(default_factory=list)
    #: arch or platform gates for `check`: a cause that cannot occur on this kind of node
    applies_to: dict[str, list[str]] = Field(default_factory=dict)
    #: a root cause that says nothing is broken (the reference is beyond the hardware): ranked as
    #: a diagnosis of exclusion, below the faults with evidence of their own (engine/rank.py, step 9)
    no_fault: bool = False
    #: an observable or symptom that is a failure the user sees (a hang, a crash, an error, wrong
    #: results), not a slowdown: a cause that reaches none of them cannot explain a ticket that
    #: complains of a failure only (engine/rank.py, step 10)
    fails: bool = False
    status: Status = "stable"


class StepVariant(Strict):
    """The command to use instead when the named values are these (``{knob: cpufreq/boost}``)."""

    when: dict[str, str] = Field(min_length=1)
    command: str
    needs_root: bool | None = None


class StepAlternative(Strict):
    """Another way to take the same step; data, not a shell comment."""

    text: str
    command: str
    needs_root: bool = False


class Step(Strict):
    text: str
    #: may name values as ``{name}``; each must be declared in ``values``
    command: str = ""
    #: values the command takes from the evidence (the ``data`` of the rules supporting the cause),
    #: each with the placeholder printed when no evidence supplies it
    values: dict[str, str] = Field(default_factory=dict)
    variants: list[StepVariant] = Field(default_factory=list)
    alternatives: list[StepAlternative] = Field(default_factory=list)
    #: the command needs root (sysctl -w, writes under /sys or /etc, cpupower *-set, ...)
    needs_root: bool = False


class Remediation(Strict):
    schema_: Literal["clusterdx/remediation/v1"] = Field(alias="schema")
    id: str
    title: str
    addresses: list[str] = Field(min_length=1)
    risk: Literal["low", "medium", "high"]
    effort: Literal["low", "medium", "high"]
    disruption: Literal["none", "job-restart", "reboot", "maintenance"]
    tradeoff: str = ""
    steps: list[Step] = Field(min_length=1)
    verify: str
    rollback: str
    references: list[str] = Field(default_factory=list)


class Probe(Strict):
    schema_: Literal["clusterdx/probe/v1"] = Field(alias="schema")
    id: str
    title: str
    command: str
    where: list[Scope] = Field(min_length=1)
    duration_s: float
    needs_root: bool = False
    disturbs_workload: bool = False
    yields: list[str] = Field(min_length=1)
    format: str = ""
    notes: str = ""


class Answer(Strict):
    #: the answer as the user picks it ("yes", "no", "only inside containers")
    label: str
    evidence: list[EvidenceSpec] = Field(default_factory=list)


class Question(Strict):
    """A short question the interactive session may ask instead of a probe."""

    schema_: Literal["clusterdx/question/v1"] = Field(alias="schema")
    id: str
    text: str
    #: root causes (or other graph nodes) whose ranking the answer moves
    about: list[str] = Field(min_length=1)
    answers: list[Answer] = Field(min_length=2)
    cost: float = 0.5


DOC_MODELS: dict[str, type[Strict]] = {
    "clusterdx/rule/v1": Rule,
    "clusterdx/node/v1": Node,
    "clusterdx/remediation/v1": Remediation,
    "clusterdx/probe/v1": Probe,
    "clusterdx/question/v1": Question,
}
