"""The fleet report every fleet explainer renders (schema ``clusterdx.fleet/1``).

Data only: :mod:`clusterdx.engine.fleet` fills it. Per node: its inputs, its status (a bundle that
broke a parser or a worker is reported here, never dropped) and the causes its own diagnosis
ranked. Across nodes: each cause with the nodes it was found on (``cluster-wide`` when on most of
them, ``local`` otherwise), nodes that are outliers against their peers, and configuration
drift. ``clusterdx schema fleet`` prints the JSON Schema generated from these models.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from clusterdx.engine.report import Gap, ToolInfo

FLEET_SCHEMA = "clusterdx.fleet/1"

NodeStatus = Literal["ok", "partial", "failed", "crashed", "timeout"]


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NodeInput(Model):
    path: str
    format: str | None = None
    status: Literal["parsed", "partial", "unrecognized", "error", "skipped"]
    reason: str = ""
    facts: int = 0


class NodeHypothesis(Model):
    id: str
    title: str
    layer: str = ""
    confidence: float
    impact_pct: float
    #: the first evidence messages of the node's own diagnosis
    evidence: list[str] = Field(default_factory=list)


class FleetNode(Model):
    name: str
    #: the bundle (path given, or sub-folder) the node's inputs came from; several when split or merged
    bundles: list[str]
    #: ok: diagnosed; partial: diagnosed, some inputs failed to parse; failed: nothing usable
    #: (every input failed, or the diagnosis raised); crashed: the worker process died; timeout
    status: NodeStatus
    error: str = ""
    inputs: list[NodeInput] = Field(default_factory=list)
    facts: int = 0
    hypotheses: list[NodeHypothesis] = Field(default_factory=list)
    gap: Gap | None = None
    outliers: int = 0
    drift: int = 0
    seconds: float = 0.0
    #: the host the bundle's inputs name, when two or more bundles claim it: each is kept as its
    #: own node, named ``host@bundle``, never merged (see ``conflict``); else ''
    host: str = ""
    #: why the node is named ``host@bundle``: the other bundles that claim the same host
    conflict: str = ""
    #: read from the node's own JSON report (``diagnose -f json``), not diagnosed here
    from_report: bool = False


class NodeEvidence(Model):
    node: str
    message: str


class RemediationRef(Model):
    id: str
    title: str


class FleetHypothesis(Model):
    id: str
    title: str
    layer: str = ""
    #: cluster-wide: found on at least CLUSTER_WIDE_SHARE of the diagnosed nodes; local: fewer
    extent: Literal["cluster-wide", "local"]
    nodes: list[str]
    node_count: int
    #: node_count / diagnosed nodes
    share: float
    confidence_max: float
    confidence_median: float
    impact_pct_median: float
    evidence: list[NodeEvidence] = Field(default_factory=list)
    remediation: list[RemediationRef] = Field(default_factory=list)


class OutlierOut(Model):
    node: str
    metric: str
    key: str = ""
    value: float
    median: float
    mad: float
    score: float
    direction: Literal["low", "high"]
    deviation_pct: float
    peers: int
    unit: str = ""
    source: str = ""


class DriftNode(Model):
    node: str
    value: str
    source: str = ""


class DriftOut(Model):
    what: str
    category: str
    majority_value: str
    majority_nodes: int
    nodes_total: int
    differing: list[DriftNode]


class FleetSummary(Model):
    nodes: int
    diagnosed: int
    failed: int
    jobs: int
    seconds: float


class FleetReport(Model):
    schema_: Literal["clusterdx.fleet/1"] = Field(FLEET_SCHEMA, alias="schema")
    tool: ToolInfo
    target: list[str]
    summary: FleetSummary
    nodes: list[FleetNode]
    hypotheses: list[FleetHypothesis]
    outliers: list[OutlierOut] = Field(default_factory=list)
    drift: list[DriftOut] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    redacted: bool = True

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    def to_json_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)
