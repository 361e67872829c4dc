"""The compiled rules of a rule engine and their durable-rules ruleset, kept beside the compiled KB.

Compiling some 300 rules (:func:`clusterdx.engine.ir.compile_rule`), turning them into durable's
JSON and checking its static limits (:func:`clusterdx.engine.durable.compile_ruleset`) is some
40 ms of every diagnosis, and the result is a pure function of the knowledge base, the rules
chosen and the parameter values in force. A rule engine over a knowledge base read from (or
stored to) the cache therefore finds them in the cache folder of
:mod:`clusterdx.engine.kbcache` (same ``CLUSTERDX_NO_CACHE``, same ownership checks, same
pruning; :func:`compiled_rules`), keyed by that knowledge base's key, the rule ids, the parameters
and the size and modification time of the code that compiles them. They are stored only when
they read back exactly as compiled (the same ``repr``: every field with its Python type, so a
``1.0`` never comes back as ``1``), and never for a knowledge base whose rules were replaced
after it was loaded, nor for one read from source (the authoring commands: its files are being
edited). An entry that does not hold them is ignored with a warning and compiled again.

A stored entry, each rule ``[id, [[positives, negatives], ...], requires,
[[node, effect, strength, via], ...], params]`` with a pattern written
``[alias, fact type, [[field, op, value], ...]]``::

    {"format": "clusterdx.kbcache/1", "key": "...", "rules": [["cpu-cstate-deep", ...]],
     "json": {"init": {...}, "r0c0": {"all": [...]}},
     "names": {"r0c0": [0, 0, -1]}, "regexes": {"gpu.info": [["rx0", "name", "H100"]]}}
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from clusterdx.engine import kbcache
from clusterdx.engine.durable import CompiledRuleset, compile_ruleset
from clusterdx.engine.ir import CompiledRule, Conjunction, Emit, Pattern, Test, compile_rule

if TYPE_CHECKING:
    from clusterdx.engine.kb import KnowledgeBase

#: compiled rules with their ruleset, per knowledge base, rule ids and parameters
ENGINE_PREFIX = "engine"
#: modules whose code shapes what is stored: a change in a checkout is another key
_CODE = ("durable.py", "ir.py", "rulesetcache.py")


def _code_key() -> str:
    from clusterdx import __version__

    h = hashlib.blake2b(digest_size=20)
    h.update(f"{kbcache.FORMAT}\0{__version__}\0".encode())
    here = Path(__file__).parent
    for name in _CODE:
        try:
            st = (here / name).stat()
            h.update(f"{name}:{st.st_size}:{st.st_mtime_ns}\0".encode())
        except OSError:
            h.update(f"{name}:?\0".encode())
    return h.hexdigest()


def _from_data(data: dict[str, Any]) -> CompiledRuleset:
    """The stored ruleset, its shape checked; TypeError or ValueError when it is not one."""
    body, names, regexes = data["json"], data["names"], data["regexes"]
    if not isinstance(body, dict) or not isinstance(names, dict) or not isinstance(regexes, dict):
        raise TypeError("not a ruleset")
    out_names: dict[str, tuple[int, int, int]] = {}
    for name, where in names.items():
        ri, ci, ni = where
        if not all(type(x) is int for x in (ri, ci, ni)) or name not in body:
            raise ValueError(f"bad rule name entry {name!r}")
        out_names[name] = (ri, ci, ni)
    out_rx: dict[str, list[tuple[str, str, str]]] = {}
    for fact_type, rows in regexes.items():
        out_rx[fact_type] = []
        for rx_key, fld, pattern in rows:
            if not all(isinstance(x, str) for x in (rx_key, fld, pattern)):
                raise ValueError("bad regex entry")
            out_rx[fact_type].append((rx_key, fld, pattern))
    return CompiledRuleset(json=body, names=out_names, regexes=out_rx)


def _pattern_data(p: Pattern) -> list[Any]:
    return [p.alias, p.fact_type, [[t.field, t.op, t.value] for t in p.tests]]


def _rule_data(r: CompiledRule) -> list[Any]:
    return [r.id, [[[_pattern_data(p) for p in c.positives], [_pattern_data(p) for p in c.negatives]]
                   for c in r.conjunctions],
            [_pattern_data(p) for p in r.requires], [[e.node, e.effect, e.strength, e.via] for e in r.evidence],
            r.params]


def _pattern(data: list[Any]) -> Pattern:
    alias, fact_type, tests = data
    return Pattern(str(alias), str(fact_type), tuple(Test(str(f), str(op), v) for f, op, v in tests))


def _rule(data: list[Any]) -> CompiledRule:
    rid, conjunctions, requires, evidence, params = data
    if not isinstance(params, dict):
        raise TypeError("params")
    return CompiledRule(
        id=str(rid),
        conjunctions=tuple(Conjunction(tuple(_pattern(p) for p in pos), tuple(_pattern(p) for p in neg))
                           for pos, neg in conjunctions),
        requires=tuple(_pattern(p) for p in requires),
        evidence=tuple(Emit(str(n), str(eff), str(st), str(via)) for n, eff, st, via in evidence),
        params=params)


def _engine_key(kb: "KnowledgeBase", ids: Sequence[str], params: dict[str, dict[str, Any]]) -> str | None:
    """The key of the rules ``ids`` of ``kb`` compiled with ``params``; None when ``kb`` has no
    cache key or one of those rules is not the one loaded under it."""
    if not kb.cache_key or any(kb.rules.get(i) is not kb.cached_rules.get(i) for i in ids):
        return None
    h = hashlib.blake2b(digest_size=20)
    h.update(f"{_code_key()}\0{kb.cache_key}\0".encode())
    h.update(repr([(i, sorted(params.get(i, {}).items())) for i in ids]).encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def compiled_rules(kb: "KnowledgeBase", ids: Sequence[str], params: dict[str, dict[str, Any]] | None = None
                   ) -> tuple[list[CompiledRule], CompiledRuleset]:
    """``[compile_rule(kb.rules[i], params.get(i)) for i in ids]`` and their ruleset, from the
    cache when this knowledge base's rules were compiled with these parameters before."""
    params = params or {}
    key = _engine_key(kb, ids, params) if kbcache.enabled() else None
    if key is not None:
        stored = kbcache.read(key, ENGINE_PREFIX)
        if stored is not None:
            try:
                rules = [_rule(r) for r in stored["rules"]]
                if [r.id for r in rules] != list(ids):
                    raise ValueError("other rules")
                return rules, _from_data(stored)
            except (KeyError, TypeError, ValueError) as exc:
                kbcache.warn(f"ignoring stored compiled rules that do not hold them ({type(exc).__name__}); "
                             "compiling them again")
    rules = [compile_rule(kb.rules[i], params.get(i)) for i in ids]
    compiled = compile_ruleset(rules)
    if key is None:
        return rules, compiled
    data = [_rule_data(r) for r in rules]
    import orjson

    try:
        faithful = repr([_rule(r) for r in orjson.loads(orjson.dumps(data))]) == repr(rules)
    except (TypeError, ValueError, orjson.JSONEncodeError):
        faithful = False
    if faithful:  # a value JSON would change (a date, a tuple) is never stored
        kbcache.write(key, {"rules": data, "json": compiled.json, "names": compiled.names,
                            "regexes": compiled.regexes}, ENGINE_PREFIX)
    return rules, compiled
