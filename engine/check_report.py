"""The checklist report (schema ``clusterdx.check/1``): data only, rendered by explainers."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from clusterdx.engine.report import Incomplete

CHECK_SCHEMA = "clusterdx.check/1"


class CheckItemOut(BaseModel):
    model_config = ConfigDict(extra="forbid")
    cause: str
    title: str
    layer: str
    seed: list[str]
    status: Literal["fail", "warn", "pass", "not checked", "not applicable"]
    reason: str
    confidence: float | None = None
    evidence: list[str] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
    probes: list[str] = Field(default_factory=list)
    mandatory: bool = False
    #: fleet mode: node counts per status and the failing nodes
    counts: dict[str, int] = Field(default_factory=dict)
    failing_nodes: list[str] = Field(default_factory=list)


class Coverage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    applicable: int
    checked: int
    mandatory: int
    mandatory_checked: int


class CheckReport(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    schema_: Literal["clusterdx.check/1"] = Field(CHECK_SCHEMA, alias="schema")
    version: str
    nodes: list[str]
    items: list[CheckItemOut]
    coverage: Coverage
    exit_code: int
    strict: bool
    site: dict[str, Any] | None = None
    inputs: list[dict[str, Any]] = Field(default_factory=list)
    #: fleet: nodes that could not be diagnosed ("name: status: why"); none of their items is checked
    unchecked_nodes: list[str] = Field(default_factory=list)
    #: set when the run passed its time limit (``--timeout``): what was not finished (the
    #: exit code is then never 0: an unfinished check is not a pass)
    incomplete: Incomplete | None = None

    def to_json_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)
