"""The only module that touches durable-rules: IR -> ruleset JSON, and a hardened session driver.

What we do differently from the library's own ``Host`` (see ``shared/durable_rules.md``):

- The C extension is driven directly: no Host, no timer threads, no swallowed action errors,
  nothing running outside the caller's stack. A run is synchronous and deterministic.
- Every session starts with a sentinel fact that fires a no-op rule, because ``delete_state`` on a
  session in which no action ever started segfaults (C2).
- Rules are emitted as flat ``all`` conjunctions of alpha-only patterns: no relational joins, no
  ``$or`` around join tests, no ``any`` (C1 and the spurious ``any`` activations). Rules within one
  session all concern one node, so no join is needed.
- Negation is not compiled to ``$not``: measured here, a ``$not`` pattern only sees facts asserted
  before the positive match, and a queued activation is not withdrawn when the negated fact
  arrives later in the same batch (tests/engine/test_durable_quirks.py). Each negated pattern
  becomes an existence probe rule instead, and a conjunction whose probe fired is dropped after
  the drain.
- Field names are prefixed (``f_``) so that a fact field can never collide with durable's own
  ``id``/``sid`` or look like an operator; the type goes in ``t``.
- Regex tests are evaluated in Python (durable's dialect is Lua-like and anchored) and handed in
  as boolean fields.
- Fact ids are checked for 32-bit FNV-1a collisions within a session before asserting (a
  collision silently drops a fact).
- Static limits that would hang or crash the loader (C4, C5, 16 patterns per rule) are checked
  before ``create_ruleset``.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

import orjson

from clusterdx.engine.ir import MAX_MATCH_INPUT, CompiledRule, Pattern, Test

MAX_PATTERNS_PER_RULE = 16
MAX_RULES_PER_ALPHA_PATH = 250
MAX_ALPHA_CHILDREN = 500
MAX_PROPERTIES = 250

_session_counter = itertools.count(1)


class EngineLimitError(ValueError):
    """The compiled KB would hit a durable-rules limit that hangs or crashes its loader."""


def fnv1a32(text: str) -> int:
    h = 0x811C9DC5
    for byte in text.encode("utf-8"):
        h ^= byte
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


@dataclass
class Firing:
    rule_index: int
    conjunction: int
    #: indexes into the session's fact list, one per positive pattern
    facts: tuple[int, ...]


@dataclass
class RunResult:
    firings: list[Firing]
    #: (rule index, conjunction index) pairs whose negated pattern matched some fact
    negated: set[tuple[int, int]]
    warnings: list[str]


@dataclass
class CompiledRuleset:
    json: dict[str, Any]
    #: durable rule name -> (rule index, conjunction index, negative pattern index or -1)
    names: dict[str, tuple[int, int, int]]
    #: regex fields to compute per fact type: type -> [(rx field, field, pattern)]
    regexes: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)


def _test_expr(test: Test, fact_type: str, regexes: dict[tuple[str, str, str], str]) -> dict[str, Any]:
    f = f"f_{test.field}"
    op, v = test.op, test.value
    # rule constants go through the same JSON reader as facts (see _durable_number)
    if isinstance(v, float):
        v = _durable_number(v)
    elif isinstance(v, list):
        v = [_durable_number(x) if isinstance(x, float) else x for x in v]
    if op == "eq":
        return {f: v}
    if op == "ne":
        return {"$neq": {f: v}}
    if op in ("gt", "gte", "lt", "lte"):
        return {f"${op}": {f: v}}
    if op == "in":
        # duplicates matter: durable fires once per true `$or` branch (found by the fuzz test)
        values = _unique(v)
        return {f: values[0]} if len(values) == 1 else {"$or": [{f: x} for x in values]}
    if op == "not_in":
        values = _unique(v)
        parts = [{"$neq": {f: x}} for x in values]
        return parts[0] if len(parts) == 1 else {"$and": parts}
    if op == "exists":
        return {"$ex": {f: 1}} if v else {"$nex": {f: 1}}
    if op == "contains":
        return {"$iany": {f: {"$i": v}}}
    if op == "matches":
        key = (fact_type, test.field, v)
        if key not in regexes:
            regexes[key] = f"rx{len(regexes)}"
        return {regexes[key]: True}
    raise ValueError(f"unknown operator {op!r}")


def _unique(values: Any) -> list[Any]:
    out: list[Any] = []
    for x in values:
        if not any(x == y and type(x) is type(y) or (isinstance(x, (int, float)) and isinstance(y, (int, float))
                                                    and not isinstance(x, bool) and not isinstance(y, bool) and x == y)
                   for y in out):
            out.append(x)
    return out


def _pattern_expr(pattern: Pattern, regexes: dict[tuple[str, str, str], str]) -> dict[str, Any]:
    tests = [{"t": pattern.fact_type}] + [_test_expr(t, pattern.fact_type, regexes) for t in pattern.tests]
    return tests[0] if len(tests) == 1 else {"$and": tests}


def compile_ruleset(rules: Sequence[CompiledRule]) -> CompiledRuleset:
    regexes: dict[tuple[str, str, str], str] = {}
    out: dict[str, Any] = {"init": {"all": [{"m": {"t": "$init"}}]}}
    names: dict[str, tuple[int, int, int]] = {}
    for ri, rule in enumerate(rules):
        for ci, conj in enumerate(rule.conjunctions):
            if len(conj.positives) > MAX_PATTERNS_PER_RULE:
                raise EngineLimitError(f"rule {rule.id}: more than {MAX_PATTERNS_PER_RULE} patterns in one conjunction")
            if conj.positives:
                name = f"r{ri}c{ci}"
                out[name] = {"all": [{f"p{k}": _pattern_expr(p, regexes)} for k, p in enumerate(conj.positives)]}
                names[name] = (ri, ci, -1)
            for ni, neg in enumerate(conj.negatives):
                name = f"r{ri}c{ci}n{ni}"
                out[name] = {"all": [{"p0": _pattern_expr(neg, regexes)}]}
                names[name] = (ri, ci, ni)
    _check_static_limits(out)
    by_type: dict[str, list[tuple[str, str, str]]] = {}
    for (fact_type, fld, pattern), key in regexes.items():
        by_type.setdefault(fact_type, []).append((key, fld, pattern))
    return CompiledRuleset(json=out, names=names, regexes=by_type)


def _check_static_limits(ruleset: dict[str, Any]) -> None:
    # C5: 256 rules ending on the same alpha path crash on assert; C4: >512 children hang the loader
    paths = Counter()
    children: dict[str, set[str]] = {}
    for body in ruleset.values():
        for pat in body["all"]:
            (expr,) = pat.values()
            paths[orjson.dumps(expr, option=orjson.OPT_SORT_KEYS)] += 1
            tests = expr["$and"] if "$and" in expr else [expr]
            parent = "root"
            for t in tests:
                key = orjson.dumps(t, option=orjson.OPT_SORT_KEYS).decode()
                children.setdefault(parent, set()).add(key)
                parent = parent + "/" + key
    worst = max(paths.values(), default=0)
    if worst > MAX_RULES_PER_ALPHA_PATH:
        raise EngineLimitError(f"{worst} patterns share one alpha path (limit {MAX_RULES_PER_ALPHA_PATH})")
    widest = max((len(v) for v in children.values()), default=0)
    if widest > MAX_ALPHA_CHILDREN:
        raise EngineLimitError(f"{widest} distinct tests under one alpha node (limit {MAX_ALPHA_CHILDREN})")


def _durable_number(value: float) -> float:
    """durable's JSON reader rejects exponent numbers without a '.' in the mantissa ('7e-13',
    '1e+20': error 204, and the whole batch is lost), which is how orjson writes such floats. The
    neighbouring double (one ulp away) prints with a fraction ('7.000000000000001e-13')."""
    import math

    for _ in range(8):
        text = repr(value)
        if "e" not in text or "." in text.split("e", 1)[0] or not math.isfinite(value):
            break
        value = math.nextafter(value, math.inf)
    return value


def _to_durable(index: int, payload: dict[str, Any], regexes: dict[str, list[tuple[str, str, str]]]) -> dict[str, Any]:
    import re

    fact: dict[str, Any] = {"id": str(index), "t": payload["type"]}
    for key, value in payload.items():
        if key == "type" or value is None:
            continue
        fact[f"f_{key}"] = _durable_number(value) if isinstance(value, float) else value
    for rx_key, fld, pattern in regexes.get(payload["type"], ()):
        value = payload.get(fld)
        fact[rx_key] = isinstance(value, str) and re.search(pattern, value[:MAX_MATCH_INPUT]) is not None
    return fact


class DurableSession:
    """One compiled KB loaded into durable-rules; ``run`` evaluates one fresh session."""

    def __init__(self, compiled: CompiledRuleset, name: str = "clusterdx"):
        import durable_rules_engine as dre

        self._dre = dre
        self.compiled = compiled
        self._name = f"{name}-{next(_session_counter)}"
        self._handle = dre.create_ruleset(self._name, orjson.dumps(compiled.json).decode())

    def close(self) -> None:
        if self._handle is not None:
            self._dre.delete_ruleset(self._handle)
            self._handle = None

    def run(self, payloads: Sequence[dict[str, Any]]) -> "RunResult":
        """Assert every payload into a fresh session; return what fired."""
        dre, h = self._dre, self._handle
        warnings: list[str] = []
        sid = f"s{next(_session_counter)}"
        facts = []
        seen_hashes: set[int] = {fnv1a32("init")}
        for i, payload in enumerate(payloads):
            fact = _to_durable(i, payload, self.compiled.regexes)
            if len(fact) > MAX_PROPERTIES:
                warnings.append(f"fact {payload['type']} has {len(fact)} fields; not evaluated")
                continue
            hsh = fnv1a32(fact["id"])
            if hsh in seen_hashes:
                # a colliding id would be silently dropped as a duplicate: rename it
                suffix = 0
                while fnv1a32(f"{i}~{suffix}") in seen_hashes:
                    suffix += 1
                fact["id"] = f"{i}~{suffix}"
                hsh = fnv1a32(fact["id"])
            seen_hashes.add(hsh)
            fact["sid"] = sid
            facts.append(fact)
        raw: list[tuple[str, tuple[str, ...]]] = []
        code, offset = dre.assert_fact(h, orjson.dumps({"sid": sid, "id": "init", "t": "$init"}).decode())
        try:
            self._drain(offset, raw)
            if facts:
                # code 1 (some fact matched no pattern) and 2 (duplicate) are normal outcomes here
                code, offset = dre.assert_facts(h, orjson.dumps(facts).decode())
                self._drain(offset, raw)
        finally:
            dre.delete_state(h, sid)
        firings, negated = self._firings(raw, facts)
        return RunResult(firings=firings, negated=negated, warnings=warnings)

    def _drain(self, offset: int, out: list[tuple[str, tuple[str, ...]]]) -> None:
        """Every activation as (rule name, the ids of its facts in pattern order): only the
        ids are kept, not the matched facts durable hands back (a rule joining two big fact
        types has many activations, each with whole copies of its facts)."""
        dre, h = self._dre, self._handle
        result = dre.start_action_for_state(h, offset)
        while result:
            message = result[1] if isinstance(result, tuple) else result
            for name, matched in orjson.loads(message).items():
                if name != "init":  # the sentinel (pattern "m")
                    out.append((name, tuple(matched[f"p{k}"]["id"] for k in range(len(matched)))))
            result = dre.complete_and_start_action(h, offset)

    def _firings(self, raw: list[tuple[str, tuple[str, ...]]], facts: list[dict[str, Any]]
                 ) -> tuple[list[Firing], set[tuple[int, int]]]:
        index_of = {f["id"]: int(f["id"].split("~")[0]) for f in facts}
        negated: set[tuple[int, int]] = set()
        positives: list[Firing] = []
        seen: set[tuple[int, int, tuple[int, ...]]] = set()
        for name, matched in raw:
            if name == "init":
                continue
            ri, ci, ni = self.compiled.names[name]
            if ni >= 0:
                negated.add((ri, ci))
                continue
            ids = tuple(index_of[fid] for fid in matched)
            if (ri, ci, ids) in seen:
                continue
            seen.add((ri, ci, ids))
            positives.append(Firing(ri, ci, ids))
        return [f for f in positives if (f.rule_index, f.conjunction) not in negated], negated
