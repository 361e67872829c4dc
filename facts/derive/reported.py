"""A measurement always wins over a statement: drop reported facts that a measured twin covers.

The prose reader (:mod:`clusterdx.facts.parsers.prose`) writes what a user states as the same
fact types tools produce (``env.var``, ``nccl.version``, ``kernel.version``, ``gpu.summary``,
``platform.virtualization``) with ``provenance="reported"``. When a measured fact of the same type
and key exists for the node, the statement is dropped before anything else is derived, so a rule
never weighs the user's word against the tool's. Keys: ``env.var`` by variable name (an NCCL
log's ``nccl.env`` line counts as a measured twin), every other reused type by type alone (one
NCCL version, one kernel, one GPU inventory, one platform role per node). A statement on a
generic node (``node``, ``unknown``: the ticket's text names no host) is covered by a
measurement on any node. ``reported.*`` types have no measured twin and are kept.

Examples:

    >>> from clusterdx.facts.model.env import EnvVar
    >>> said = EnvVar(node="node", name="NCCL_IB_HCA", value="mlx5_0", provenance="reported")
    >>> seen = EnvVar(node="gpu-01", name="NCCL_IB_HCA", value="mlx5_1")
    >>> [f.value for f in reconcile([said, seen])]
    ['mlx5_1']
    >>> other = EnvVar(node="gpu-01", name="NCCL_DEBUG", value="INFO")
    >>> [f.value for f in reconcile([said, other])]
    ['mlx5_0', 'INFO']
"""

from __future__ import annotations

from typing import Sequence

from clusterdx.facts.base import Fact, is_reported
from clusterdx.facts.nodes import is_unlabelled


def _key(fact: Fact) -> tuple[str, str]:
    if fact.fact_type in ("env.var", "nccl.env"):
        return ("env", getattr(fact, "name", ""))
    return (fact.fact_type, "")


def reconcile(facts: Sequence[Fact]) -> list[Fact]:
    """``facts`` without the reported ones a measured fact of the same type and key covers."""
    if not any(is_reported(f) for f in facts):
        return list(facts)
    measured: dict[tuple[str, str], set[str]] = {}
    for f in facts:
        if not is_reported(f):
            measured.setdefault(_key(f), set()).add(f.node)
    out = []
    for f in facts:
        if is_reported(f) and not f.fact_type.startswith("reported."):
            nodes = measured.get(_key(f), set())
            if f.node in nodes or (nodes and is_unlabelled(f.node)):
                continue
        out.append(f)
    return out
