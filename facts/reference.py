"""Reference numbers for common systems (``kb/reference/systems.yaml``), chosen or inferred.

Derived facts compare measurements with what a healthy node of the same kind reaches. The user
may name the system (``--reference dgx-h100-8x400g``) or give a file of the same schema; when
they do not, the system is inferred from the GPU model seen in the facts (nccl-tests device lines,
nvidia-smi). The longest matching model name wins, so GB200 is not taken for B200.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

from pydantic import BaseModel, ConfigDict, Field

from clusterdx.facts.base import Fact


class Link(BaseModel):
    model_config = ConfigDict(extra="allow")
    gbps: float | None = None
    nccl_busbw_gbs: float | None = None


class System(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    title: str
    gpu_match: list[str]
    gpus_per_node: int
    nics_per_node: int
    nic: str
    nvlink: str = ""
    peak_tflops_bf16: float | None = None
    cpu_max_turbo_mhz: float | None = None
    nvlinks_up: int | None = None
    #: cloud instance types of this shape: a reported or recorded instance type selects it
    instance_types: list[str] = []
    #: where the numbers come from
    source: str = ""


class ReferenceTable(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    schema_: str = Field(alias="schema")
    links: dict[str, Link]
    systems: list[System]

    def system(self, system_id: str) -> System | None:
        return next((s for s in self.systems if s.id == system_id), None)

    def nic_busbw(self, system: System) -> float | None:
        link = self.links.get(system.nic)
        return link.nccl_busbw_gbs if link else None


class Selected(BaseModel):
    system: System
    basis: str  # "given" | "inferred from <model>"
    nic_busbw_gbs: float | None


class ReferenceError(ValueError):
    pass


def _parse(text: str, origin: str) -> ReferenceTable:
    from clusterdx.engine.kbcache import table_data

    data = table_data(text)
    try:
        table = ReferenceTable.model_validate(data)
    except Exception as exc:
        raise ReferenceError(f"{origin}: not a reference table: {exc}") from None
    if table.schema_ != "clusterdx/reference/v1":
        raise ReferenceError(f"{origin}: schema must be clusterdx/reference/v1")
    return table


@lru_cache(maxsize=1)
def shipped() -> ReferenceTable:
    path = resources.files("clusterdx.kb").joinpath("reference/systems.yaml")
    return _parse(path.read_text(encoding="utf-8"), "kb/reference/systems.yaml")


def gpu_models(facts: Sequence[Fact]) -> list[str]:
    out: list[str] = []
    for f in facts:
        for fld in ("gpu_model", "name"):
            if f.fact_type in ("nccltests.run", "nccltests.device", "gpu.device") and getattr(f, fld, ""):
                out.append(getattr(f, fld))
        if f.fact_type == "gpu.summary":
            out.extend(getattr(f, "models", []) or [])
    return out


def instance_types(facts: Sequence[Fact]) -> list[str]:
    """Cloud instance types the facts name (any fact with an ``instance_type`` field)."""
    return [str(v) for f in facts if (v := getattr(f, "instance_type", None))]


def infer(facts: Sequence[Fact], table: ReferenceTable | None = None) -> Selected | None:
    """The system the facts describe: a named cloud instance type first (it fixes the NICs, which
    the GPU model does not), else the longest GPU-model match."""
    table = table or shipped()
    for itype in instance_types(facts):
        for system in table.systems:
            if any(itype.strip().lower() == t.lower() for t in system.instance_types):
                return Selected(system=system, basis=f"instance type {itype!r}", nic_busbw_gbs=table.nic_busbw(system))
    models = gpu_models(facts)
    best: tuple[int, System, str] | None = None
    for model in models:
        for system in table.systems:
            for key in system.gpu_match:
                if key.lower() in model.lower() and (best is None or len(key) > best[0]):
                    best = (len(key), system, model)
    if best is None:
        return None
    return Selected(system=best[1], basis=f"inferred from GPU model {best[2]!r}", nic_busbw_gbs=table.nic_busbw(best[1]))


def select(name: str | None, facts: Sequence[Fact]) -> Selected | None:
    """The reference in force: a shipped system id, a file with one system, or inferred."""
    if not name:
        return infer(facts)
    table = shipped()
    system = table.system(name)
    if system is not None:
        return Selected(system=system, basis="given", nic_busbw_gbs=table.nic_busbw(system))
    path = Path(name)
    if path.is_file():
        custom = _parse(path.read_text(encoding="utf-8"), str(path))
        links = {**table.links, **custom.links}
        merged = ReferenceTable(schema="clusterdx/reference/v1", links=links, systems=custom.systems)
        if len(custom.systems) == 1:
            return Selected(system=custom.systems[0], basis=f"given ({path})",
                            nic_busbw_gbs=merged.nic_busbw(custom.systems[0]))
        found = infer(facts, merged)
        if found is None:
            raise ReferenceError(f"{path}: no system in it matches the GPU model seen")
        return found
    known = ", ".join(s.id for s in table.systems)
    raise ReferenceError(f"unknown reference {name!r}; one of {known}, or a YAML file")


def describe(selected: Selected | None) -> dict[str, Any] | None:
    if selected is None:
        return None
    s = selected.system
    return {"id": s.id, "title": s.title, "basis": selected.basis, "gpus_per_node": s.gpus_per_node,
            "nics_per_node": s.nics_per_node, "nic": s.nic, "nic_busbw_gbs": selected.nic_busbw_gbs}
