"""Helpers shared by the derivers."""

from __future__ import annotations

from typing import Sequence, TypeVar

from clusterdx.facts.base import Fact

F = TypeVar("F", bound=Fact)

#: variable prefixes that decide how NCCL, NVSHMEM and friends talk to the fabric
COMM_PREFIXES = ("NCCL_", "NVSHMEM_", "UCX_", "GLOO_", "MELLANOX_", "NVIDIA_IMEX", "OMPI_MCA_btl", "FI_")


def of_type(facts: Sequence[Fact], fact_type: str) -> list:
    return [f for f in facts if f.fact_type == fact_type]


def is_comm_var(name: str) -> bool:
    return name.startswith(COMM_PREFIXES)


def to_float(text: str) -> float | None:
    try:
        return float(text.strip())
    except (ValueError, AttributeError):
        return None
