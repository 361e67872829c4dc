"""The compiled rules of a rule engine, stored beside the compiled KB: the same rules and ruleset
a fresh compile gives, other ones for other parameters (a threshold one step either side), never
for a KB read from source or one whose rules were replaced, ignored with a warning when an entry
does not hold them, never written with the cache off."""

from __future__ import annotations

import orjson
import pytest

from clusterdx.engine import kbcache, rulesetcache
from clusterdx.engine.durable import compile_ruleset


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


@pytest.mark.parametrize("damage", [
    lambda d: d["rules"][0].__setitem__(4, ["not", "a", "dict"]),
    lambda d: d.update(rules=[]),
    lambda d: d.pop("names"),
    lambda d: d.update(names={"r0c0": [0, "0", -1]}),
    lambda d: d.update(names={"nowhere": [0, 0, -1]}),
    lambda d: d.update(regexes={"gpu.info": [["rx0", 3, "H100"]]}),
    lambda d: d.update(json=[1, 2]),
], ids=["params", "no rules", "no names", "name index", "unknown name", "regex field", "json"])
def test_stored_compiled_rules_that_are_not_are_compiled_again(warm_kb, tmp_path, capsys, damage):
    kb = warm_kb()
    rule = _a_rule_with_a_param(kb)
    rulesetcache.compiled_rules(kb, [rule.id])
    (path,) = _engines(tmp_path)
    data = orjson.loads(path.read_bytes())
    damage(data)
    path.write_bytes(orjson.dumps(data))
    rules, ruleset = rulesetcache.compiled_rules(kb, [rule.id])
    assert repr(rules) == repr(_fresh(kb, [rule.id])[0]) and ruleset == _fresh(kb, [rule.id])[1]
    assert "ignoring stored compiled rules" in capsys.readouterr().err


def test_cache_off_stores_no_compiled_rules(warm_kb, tmp_path, monkeypatch):
    kb = warm_kb()
    monkeypatch.setenv(kbcache.ENV_OFF, "1")
    rule = _a_rule_with_a_param(kb)
    rules, _ = rulesetcache.compiled_rules(kb, [rule.id])
    assert repr(rules) == repr(_fresh(kb, [rule.id])[0])
    assert not _engines(tmp_path)


def test_clear_removes_stored_compiled_rules(warm_kb, tmp_path):
    kb = warm_kb()
    rulesetcache.compiled_rules(kb, [_a_rule_with_a_param(kb).id])
    assert _engines(tmp_path)
    assert kbcache.clear() >= 2  # the compiled KB and the compiled rules
    assert not _engines(tmp_path)
