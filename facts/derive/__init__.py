"""Derived facts, computed once from parsed facts (combiners, in insights-core terms).

``derive_all(facts)`` returns the parsed facts plus every derived fact; ``compare(target,
baseline)`` returns the facts and the human-readable differences of a target/baseline pair.
Each derived fact points at the input line of the fact it was computed from, so evidence built
on it still leads back to the user's file.
"""

from __future__ import annotations

from typing import Any, Sequence

from clusterdx.facts.base import Fact
from clusterdx.facts.derive import compare as _compare
from clusterdx.facts.derive import cpu, env, fabric, placement

DERIVERS = (env.derive, fabric.derive, cpu.derive, placement.derive)


def derive_all(facts: Sequence[Fact]) -> list[Fact]:
    out = list(facts)
    for fn in DERIVERS:
        out.extend(fn(out))
    return out


def compare(target: Sequence[Fact], baseline: Sequence[Fact]) -> tuple[list[Fact], list[dict[str, Any]]]:
    return _compare.compare(target, baseline)
