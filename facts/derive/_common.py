"""Helpers shared by the derivers."""

from __future__ import annotations

import math
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
    """The number a setting holds, or None; ``inf`` and ``nan`` are not numbers a rule can use."""
    try:
        value = float(text.strip())
    except (ValueError, AttributeError):
        return None
    return value if math.isfinite(value) else None
