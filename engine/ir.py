"""The intermediate form the project owns, between rule YAML and durable-rules JSON.

A rule's ``condition`` (``guest and hot and not passthrough``, ``1 of hot_*``) is parsed and
brought to disjunctive normal form. Each conjunction keeps its positive patterns (matched by the
rete) and its negated patterns (checked after the agenda drains, see
:mod:`clusterdx.engine.durable` for why). Parameters are resolved to constants here, so the
compiled form is a pure function of the rule and the parameter values in force.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from clusterdx.engine.schema import FactPattern, Rule

#: a rule's ``matches`` regex sees at most this many characters of a field: a ticket's value can
#: be any length, and even a linear pattern should not scan megabytes per fact
MAX_MATCH_INPUT = 4096


@dataclass(frozen=True)
class Test:
    __test__ = False  # not a pytest test class

    field: str
    op: str
    value: Any


@dataclass(frozen=True)
class Pattern:
    alias: str
    fact_type: str
    tests: tuple[Test, ...]


@dataclass(frozen=True)
class Conjunction:
    positives: tuple[Pattern, ...]
    negatives: tuple[Pattern, ...] = ()


@dataclass(frozen=True)
class Emit:
    node: str
    effect: str
    strength: str
    via: str = ""


@dataclass
class CompiledRule:
    id: str
    conjunctions: tuple[Conjunction, ...]
    requires: tuple[Pattern, ...]
    evidence: tuple[Emit, ...]
    params: dict[str, Any] = field(default_factory=dict)


class ConditionError(ValueError):
    def __init__(self, message: str, col: int = 0):
        super().__init__(message)
        self.col = col


_TOKEN = re.compile(r"\s*(?:(\()|(\))|(1 of|all of)\s+([A-Za-z_][\w]*\*?)|([A-Za-z_][\w]*))")


def _tokenize(text: str) -> list[tuple[str, str, int]]:
    tokens: list[tuple[str, str, int]] = []
    pos = 0
    # only whitespace from ``end`` on (found once: a slice per token was quadratic in the text)
    end = len(text.rstrip())
    while pos < end:
        m = _TOKEN.match(text, pos)
        if not m:
            raise ConditionError(f"unexpected text {text[pos:].strip()[:20]!r}", pos + 1)
        start = m.start() + (len(m.group(0)) - len(m.group(0).lstrip()))
        if m.group(1):
            tokens.append(("(", "(", start))
        elif m.group(2):
            tokens.append((")", ")", start))
        elif m.group(3):
            tokens.append(("quant", f"{m.group(3)}|{m.group(4)}", start))
        else:
            word = m.group(5)
            kind = word if word in ("and", "or", "not") else "name"
            tokens.append((kind, word, start))
        pos = m.end()
    return tokens


# AST: ("name", alias) | ("not", x) | ("and", [..]) | ("or", [..])
def parse_condition(text: str, aliases: list[str]) -> Any:
    """Parse a condition into a small AST, checking every alias exists."""
    if not text.strip():
        return ("and", [("name", a) for a in aliases])
    tokens = _tokenize(text)
    pos = 0

    def peek() -> tuple[str, str, int] | None:
        return tokens[pos] if pos < len(tokens) else None

    def take(kind: str) -> tuple[str, str, int]:
        nonlocal pos
        tok = peek()
        if tok is None or tok[0] != kind:
            where = tok[2] + 1 if tok else len(text) + 1
            raise ConditionError(f"expected {kind!r}", where)
        pos += 1
        return tok

    def expr() -> Any:
        items = [term()]
        while (t := peek()) and t[0] == "or":
            take("or")
            items.append(term())
        return items[0] if len(items) == 1 else ("or", items)

    def term() -> Any:
        items = [factor()]
        while (t := peek()) and t[0] == "and":
            take("and")
            items.append(factor())
        return items[0] if len(items) == 1 else ("and", items)

    def factor() -> Any:
        tok = peek()
        if tok is None:
            raise ConditionError("condition ends too early", len(text) + 1)
        if tok[0] == "not":
            take("not")
            return ("not", factor())
        if tok[0] == "(":
            take("(")
            inner = expr()
            take(")")
            return inner
        if tok[0] == "quant":
            take("quant")
            quant, pat = tok[1].split("|")
            names = _expand(pat, aliases, tok[2])
            return ("or" if quant == "1 of" else "and", [("name", n) for n in names])
        if tok[0] == "name":
            take("name")
            if tok[1] not in aliases:
                raise ConditionError(f"unknown alias {tok[1]!r}", tok[2] + 1)
            return ("name", tok[1])
        raise ConditionError(f"unexpected {tok[1]!r}", tok[2] + 1)

    tree = expr()
    if peek() is not None:
        raise ConditionError(f"unexpected {peek()[1]!r}", peek()[2] + 1)  # type: ignore[index]
    return tree


def _expand(pattern: str, aliases: list[str], col: int) -> list[str]:
    if pattern.endswith("*"):
        names = [a for a in aliases if a.startswith(pattern[:-1])]
    else:
        names = [a for a in aliases if a == pattern]
    if not names:
        raise ConditionError(f"no alias matches {pattern!r}", col + 1)
    return names


def to_dnf(tree: Any) -> list[tuple[frozenset[str], frozenset[str]]]:
    """Disjunctive normal form: a list of (positive aliases, negated aliases)."""

    def nnf(node: Any, negate: bool) -> Any:
        kind = node[0]
        if kind == "name":
            return ("lit", node[1], negate)
        if kind == "not":
            return nnf(node[1], not negate)
        children = [nnf(c, negate) for c in node[1]]
        flip = {"and": "or", "or": "and"}
        return (flip[kind] if negate else kind, children)

    def dnf(node: Any) -> list[tuple[frozenset[str], frozenset[str]]]:
        if node[0] == "lit":
            _, name, neg = node
            return [(frozenset(), frozenset([name]))] if neg else [(frozenset([name]), frozenset())]
        if node[0] == "or":
            out = []
            for c in node[1]:
                out.extend(dnf(c))
            return out
        result = [(frozenset(), frozenset())]
        for c in node[1]:
            result = [(p1 | p2, n1 | n2) for p1, n1 in result for p2, n2 in dnf(c)]
        return result

    seen: list[tuple[frozenset[str], frozenset[str]]] = []
    for conj in dnf(nnf(tree, False)):
        if conj[0] & conj[1]:
            continue  # "x and not x" can never hold
        if conj not in seen:
            seen.append(conj)
    return seen


def resolve_value(value: Any, params: dict[str, Any]) -> Any:
    if isinstance(value, str) and value.startswith("$") and len(value) > 1:
        return params[value[1:]]
    if isinstance(value, list):
        return [resolve_value(v, params) for v in value]
    return value


def pattern_tests(where: dict[str, Any], params: dict[str, Any]) -> tuple[Test, ...]:
    tests: list[Test] = []
    for fld, spec in where.items():
        if isinstance(spec, dict):
            for op, value in spec.items():
                tests.append(Test(fld, op, resolve_value(value, params)))
        else:
            tests.append(Test(fld, "eq", resolve_value(spec, params)))
    return tuple(tests)


def compile_pattern(alias: str, pat: FactPattern, params: dict[str, Any]) -> Pattern:
    return Pattern(alias=alias, fact_type=pat.fact, tests=pattern_tests(pat.where, params))


def compile_rule(rule: Rule, overrides: dict[str, Any] | None = None) -> CompiledRule:
    params = {name: p.default for name, p in rule.params.items()}
    params.update({k: v for k, v in (overrides or {}).items() if k in params})
    aliases = list(rule.match)
    tree = parse_condition(rule.condition, aliases)
    patterns = {a: compile_pattern(a, p, params) for a, p in rule.match.items()}
    conjunctions = tuple(
        Conjunction(
            positives=tuple(patterns[a] for a in aliases if a in pos),
            negatives=tuple(patterns[a] for a in aliases if a in neg),
        )
        for pos, neg in to_dnf(tree)
    )
    requires = []
    for i, req in enumerate(rule.requires.facts):
        if isinstance(req, str):
            requires.append(Pattern(alias=f"req{i}", fact_type=req, tests=()))
        else:
            requires.append(compile_pattern(f"req{i}", req, params))
    return CompiledRule(
        id=rule.id,
        conjunctions=conjunctions,
        requires=tuple(requires),
        evidence=tuple(Emit(e.node, e.effect, e.strength, e.via) for e in rule.evidence),
        params=params,
    )
