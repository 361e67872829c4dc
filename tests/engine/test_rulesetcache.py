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
