"""The stored durable ruleset: the same ruleset a fresh compile gives, another key for other rules
(a threshold one step either side, an int against a float), ignored with a warning when it is not
a ruleset, never written with the cache off."""

from __future__ import annotations

import orjson
import pytest

from clusterdx.engine import durable, kbcache, rulesetcache
from clusterdx.engine.durable import DurableSession, compile_ruleset
from clusterdx.engine.ir import CompiledRule, Conjunction, Emit, Pattern, Test


def _rule(threshold, op="gte", rid="r") -> CompiledRule:
    hot = Pattern("hot", "gpu.clock", (Test("sm_mhz", op, threshold),))
    name = Pattern("name", "gpu.info", (Test("name", "matches", "H100"),))
    guest = Pattern("guest", "cpu.info", (Test("hypervisor", "exists", True),))
    return CompiledRule(rid, (Conjunction((hot, name), (guest,)),), (), (Emit("cause.x", "supports", "strong"),))


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv(kbcache.ENV_DIR, str(tmp_path))
    monkeypatch.delenv(kbcache.ENV_OFF, raising=False)
    return tmp_path


def _stored(folder):
    return sorted(folder.glob(f"{rulesetcache.PREFIX}-*.json"))


def test_a_stored_ruleset_is_the_compiled_one(folder, monkeypatch):
    rules = [_rule(1500), _rule(0.5, "lt", "s")]
    first = rulesetcache.ruleset_for(rules)
    assert first == compile_ruleset(rules)
    assert len(_stored(folder)) == 1

    def refuse(*a, **k):
        raise AssertionError("compiled again although a ruleset was stored")

    monkeypatch.setattr(rulesetcache, "compile_ruleset", refuse)
    again = rulesetcache.ruleset_for(rules)
    assert again == first
    assert again.names["r0c0"] == (0, 0, -1) and isinstance(again.names["r0c0"], tuple)
    assert all(isinstance(row, tuple) for rows in again.regexes.values() for row in rows)
    # durable is handed the same text
    assert orjson.dumps(again.json) == orjson.dumps(first.json)
    DurableSession(again).close()


@pytest.mark.parametrize("other", [1499, 1501, 1500.0, True, "1500"])
def test_other_rules_are_another_key(folder, other):
    rulesetcache.ruleset_for([_rule(1500)])
    got = rulesetcache.ruleset_for([_rule(other)])
    assert got == compile_ruleset([_rule(other)])
    assert len(_stored(folder)) == 2


def test_the_same_rules_are_the_same_key(folder):
    rulesetcache.ruleset_for([_rule(1500)])
    rulesetcache.ruleset_for([_rule(1500)])
    assert len(_stored(folder)) == 1


@pytest.mark.parametrize("damage", [
    lambda d: d.pop("names"),
    lambda d: d.update(names={"r0c0": [0, "0", -1]}),
    lambda d: d.update(names={"nowhere": [0, 0, -1]}),
    lambda d: d.update(regexes={"gpu.info": [["rx0", 3, "H100"]]}),
    lambda d: d.update(json=[1, 2]),
])
def test_a_stored_entry_that_is_no_ruleset_is_compiled_again(folder, damage, capsys):
    rules = [_rule(1500)]
    rulesetcache.ruleset_for(rules)
    (path,) = _stored(folder)
    data = orjson.loads(path.read_bytes())
    damage(data)
    path.write_bytes(orjson.dumps(data))
    assert rulesetcache.ruleset_for(rules) == compile_ruleset(rules)
    assert "ignoring a stored ruleset" in capsys.readouterr().err
    # and the rebuilt one is good again
    assert rulesetcache.ruleset_for(rules) == compile_ruleset(rules)
    assert "ignoring" not in capsys.readouterr().err


def test_cache_off_writes_nothing(folder, monkeypatch):
    monkeypatch.setenv(kbcache.ENV_OFF, "1")
    assert rulesetcache.ruleset_for([_rule(1500)]) == compile_ruleset([_rule(1500)])
    assert not _stored(folder)


def test_a_ruleset_over_the_limits_is_never_stored(folder):
    pats = tuple(Pattern(f"p{i}", "x", ()) for i in range(durable.MAX_PATTERNS_PER_RULE + 1))
    with pytest.raises(durable.EngineLimitError):
        rulesetcache.ruleset_for([CompiledRule("r", (Conjunction(pats),), (), ())])
    assert not _stored(folder)


def test_clear_removes_stored_rulesets(folder):
    rulesetcache.ruleset_for([_rule(1500)])
    assert kbcache.clear() >= 1
    assert not _stored(folder)


# -- compiled rules of a knowledge base read from the cache --------------------------------------

@pytest.fixture(scope="module")
def kb_folder(tmp_path_factory):
    """A cache folder holding the compiled shipped KB (built once for the module)."""
    from clusterdx.engine.kb import load_kb

    folder = tmp_path_factory.mktemp("kbc")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(kbcache.ENV_DIR, str(folder))
        mp.delenv(kbcache.ENV_OFF, raising=False)
        load_kb(cache=True)
    return folder


@pytest.fixture
def warm_kb(kb_folder, tmp_path, monkeypatch):
    import shutil

    from clusterdx.engine.kb import load_kb

    for f in kb_folder.glob("kb-*.json"):
        shutil.copy(f, tmp_path / f.name)
    monkeypatch.setenv(kbcache.ENV_DIR, str(tmp_path))
    monkeypatch.delenv(kbcache.ENV_OFF, raising=False)
    return lambda: load_kb(cache=True)


def _engines(folder):
    return sorted(folder.glob(f"{rulesetcache.ENGINE_PREFIX}-*.json"))


def _fresh(kb, ids, params=None):
    from clusterdx.engine.ir import compile_rule

    rules = [compile_rule(kb.rules[i], (params or {}).get(i)) for i in ids]
    return rules, compile_ruleset(rules)


def _refuse_compiling(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("compiled although the compiled rules were stored")

    monkeypatch.setattr(rulesetcache, "compile_rule", refuse)
    monkeypatch.setattr(rulesetcache, "compile_ruleset", refuse)


def _a_rule_with_a_param(kb):
    return next(r for r in sorted(kb.rules.values(), key=lambda r: r.id)
                if any(isinstance(p.default, (int, float)) and not isinstance(p.default, bool)
                       for p in r.params.values()))


def test_stored_compiled_rules_are_the_compiled_ones(warm_kb, tmp_path, monkeypatch):
    from clusterdx.engine.evaluate import enabled_rules

    kb = warm_kb()
    assert kb.cache_key
    ids = enabled_rules(kb)
    rules, ruleset = rulesetcache.compiled_rules(kb, ids)
    assert len(_engines(tmp_path)) == 1
    expected = _fresh(kb, ids)
    assert repr(rules) == repr(expected[0]) and ruleset == expected[1]
    _refuse_compiling(monkeypatch)
    again = warm_kb()
    rules2, ruleset2 = rulesetcache.compiled_rules(again, ids)
    assert repr(rules2) == repr(expected[0]) and rules2 == expected[0] and ruleset2 == expected[1]


def test_other_parameters_are_other_compiled_rules(warm_kb, tmp_path):
    kb = warm_kb()
    rule = _a_rule_with_a_param(kb)
    name, param = next((n, p) for n, p in rule.params.items()
                       if isinstance(p.default, (int, float)) and not isinstance(p.default, bool))
    seen = set()
    for value in (param.default, param.default + 1, param.default - 1):
        params = {rule.id: {name: value}}
        rules, ruleset = rulesetcache.compiled_rules(kb, [rule.id], params)
        assert rules[0].params[name] == value
        assert repr(rules) == repr(_fresh(kb, [rule.id], params)[0])
        assert ruleset == _fresh(kb, [rule.id], params)[1]
        seen.add(repr(rules))
    assert len(seen) == 3 and len(_engines(tmp_path)) == 3


def test_a_rule_replaced_after_loading_is_compiled_afresh(warm_kb, tmp_path):
    kb = warm_kb()
    rule = _a_rule_with_a_param(kb)
    rulesetcache.compiled_rules(kb, [rule.id])
    name, param = next(iter(rule.params.items()))
    changed = rule.model_copy(update={"params": {**rule.params, name: param.model_copy(update={"default": 12345})}})
    kb.rules[rule.id] = changed
    rules, _ = rulesetcache.compiled_rules(kb, [rule.id])
    assert rules[0].params[name] == 12345
    assert len(_engines(tmp_path)) == 1  # nothing stored for the changed knowledge base


def test_a_kb_read_from_source_stores_no_compiled_rules(warm_kb, tmp_path):
    from clusterdx.engine.kb import load_kb

    kb = load_kb(cache=False)
    assert kb.cache_key == ""
    rule = _a_rule_with_a_param(kb)
    rules, ruleset = rulesetcache.compiled_rules(kb, [rule.id])
    assert repr(rules) == repr(_fresh(kb, [rule.id])[0])
    assert not _engines(tmp_path)


def test_stored_compiled_rules_that_are_not_are_compiled_again(warm_kb, tmp_path, capsys):
    kb = warm_kb()
    rule = _a_rule_with_a_param(kb)
    rulesetcache.compiled_rules(kb, [rule.id])
    (path,) = _engines(tmp_path)
    data = orjson.loads(path.read_bytes())
    data["rules"][0][4] = ["not", "a", "dict"]
    path.write_bytes(orjson.dumps(data))
    rules, _ = rulesetcache.compiled_rules(kb, [rule.id])
    assert repr(rules) == repr(_fresh(kb, [rule.id])[0])
    assert "ignoring stored compiled rules" in capsys.readouterr().err
