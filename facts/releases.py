"""The NCCL release table (``kb/reference/nccl-releases.yaml``): what each release is known for.

One owner for "what does this NCCL version imply": the table lists regressions and changed
defaults by version range, each with the root cause it is evidence for, the conditions under
which it bites, the remedy and a reference. :func:`entries_for` answers which entries a version
falls in; whether their conditions hold is decided from the facts by the deriver
(:mod:`clusterdx.facts.derive.releases`).

    >>> [e.id for e in entries_for("2.19.4")][:3]
    ['regression-2.19.3-2.19.4', 'roce-gid-autoselect-2.21', 'amd-p2p-through-cpu-2.23']
    >>> [e.id for e in entries_for("2.27.7")]
    ['net-channels-per-peer-auto-2.20', 'tree-search-pattern-2.25']

A framework release can imply a cause too (``kb/reference/framework-releases.yaml``, ``changes``):
:func:`framework_changes_for` answers which of those a framework version falls in.

    >>> [c.id for c in framework_changes_for("pytorch", "1.1.0")]
    ['pytorch-openmp-threads-per-process-1.1']
    >>> framework_changes_for("pytorch", "1.2")
    []
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from clusterdx.facts.kbtables import shipped_table
from clusterdx.facts.versions import in_range, version_key

if TYPE_CHECKING:
    from clusterdx.facts.images import FrameworkChange

Condition = Literal["roce", "ib", "amd-cpu", "c2c", "mnnvl", "blackwell", "h800", "pcie-gpus", "nvlink-gpus", "multi-node", "sendrecv", "hang"]


class ReleaseEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    versions: list[str]
    #: predates-platform: the release is older than the first one that supports the GPUs the
    #: conditions name (it also bites when the ticket does not show the version, see the deriver)
    kind: Literal["regression", "changed-default", "predates-platform"]
    cause: str
    when: list[Condition] = []
    #: conditions that may stay undecided: the entry is then "likely" rather than "possible"
    unknown_ok: list[Condition] = []
    #: variables that must be set to these values for the entry to apply
    requires_setting: dict[str, str] = Field(default_factory=dict)
    #: log signatures (ids in kb/reference/signatures.yaml) of a release bug that only a specific
    #: warning identifies: the entry applies only where the ticket shows one of them
    shows: list[str] = []
    summary: str
    remedy: str
    #: the first release without the problem (or the first that supports the platform)
    fixed_in: str = ""
    #: the variable that works around it, if any
    setting: str = ""
    #: the value of ``setting`` that works around it; when given, only that value counts as the
    #: workaround applied (NCCL_CUMEM_ENABLE=1 on the command line is the trigger, not the cure)
    workaround: str = ""
    reference: str


class ReleaseTable(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    schema_: Literal["clusterdx/nccl-releases/v1"] = Field(alias="schema")
    entries: list[ReleaseEntry]


@lru_cache(maxsize=1)
def table() -> ReleaseTable:
    return shipped_table("reference/nccl-releases.yaml", ReleaseTable)


def entries_for(version: str) -> list[ReleaseEntry]:
    """The entries whose version range holds ``version`` (none for an unreadable version)."""
    if not version_key(version):
        return []
    return [e for e in table().entries if in_range(version, *e.versions)]


def framework_changes_for(framework: str, version: str) -> list["FrameworkChange"]:
    """The framework release-table changes whose range holds ``version`` (none for an unreadable one)."""
    from clusterdx.facts.images import wheel_table

    if not version_key(version):
        return []
    return [c for c in wheel_table().changes if c.framework == framework.lower() and in_range(version, *c.versions)]
