"""A plain-Python matcher with the same semantics as the compiled rules.

It is the reference the durable-rules session is checked against (the differential fuzz test),
and it decides the few things that are evaluated outside the rete: whether a rule's required
facts were collected. Semantics, shared with :mod:`clusterdx.engine.durable`:

- a test on a field the fact does not have (or has as null) is false, whatever the operator,
  except ``exists: false``;
- numbers compare as numbers, strings as strings; the loader has already refused a comparison
  between a number field and a string constant;
- one fact never fills two patterns of the same conjunction (durable's default "distinct").
"""

from __future__ import annotations

import itertools
import re
from functools import lru_cache
from typing import Any, Iterable, Sequence

from clusterdx.engine.ir import MAX_MATCH_INPUT, CompiledRule, Pattern, Test


@lru_cache(maxsize=4096)
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def test_holds(test: Test, payload: dict[str, Any]) -> bool:
    value = payload.get(test.field)
    op, want = test.op, test.value
    if op == "exists":
        return (value is not None) == bool(want)
    if value is None:
        return False
    if op == "eq":
        return value == want
    if op == "ne":
        return value != want
    if op == "in":
        return value in want
    if op == "not_in":
        return value not in want
    if op == "contains":
        return isinstance(value, list) and want in value
    if op == "matches":
        return isinstance(value, str) and _regex(want).search(value[:MAX_MATCH_INPUT]) is not None
    try:
        if op == "gt":
            return value > want
        if op == "gte":
            return value >= want
        if op == "lt":
            return value < want
        if op == "lte":
            return value <= want
    except TypeError:
        return False
    raise ValueError(f"unknown operator {op!r}")


def pattern_holds(pattern: Pattern, payload: dict[str, Any]) -> bool:
    return payload.get("type") == pattern.fact_type and all(test_holds(t, payload) for t in pattern.tests)


def matches(rule: CompiledRule, payloads: Sequence[dict[str, Any]]) -> list[tuple[int, tuple[int, ...]]]:
    """Every (conjunction index, fact indexes per positive pattern) that satisfies the rule."""
    out: list[tuple[int, tuple[int, ...]]] = []
    for ci, conj in enumerate(rule.conjunctions):
        if any(any(pattern_holds(n, p) for p in payloads) for n in conj.negatives):
            continue
        candidates = [[i for i, p in enumerate(payloads) if pattern_holds(pat, p)] for pat in conj.positives]
        for combo in itertools.product(*candidates):
            if len(set(combo)) == len(combo):
                out.append((ci, tuple(combo)))
    return out


def index_by_type(payloads: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    index: dict[str, list[dict[str, Any]]] = {}
    for p in payloads:
        index.setdefault(p.get("type", ""), []).append(p)
    return index


def missing_requirements(rule: CompiledRule, payloads: Iterable[dict[str, Any]] | dict[str, list[dict[str, Any]]]
                         ) -> list[Pattern]:
    """Required patterns no fact satisfies; ``payloads`` may be pre-indexed by type."""
    index = payloads if isinstance(payloads, dict) else index_by_type(payloads)
    return [req for req in rule.requires if not any(pattern_holds(req, p) for p in index.get(req.fact_type, ()))]
