"""The durable-rules driver: differential fuzzing against the oracle and the measured quirks.

Everything that drives the C extension runs in a subprocess, so a segfault fails a test instead
of killing the test run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from clusterdx.engine.durable import EngineLimitError, compile_ruleset, fnv1a32
from clusterdx.engine.ir import CompiledRule, Conjunction, Pattern, Test

ROOT = Path(__file__).parents[2]


def run_py(code: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.slow  # random rule bases against the oracle, about 1.5 s a seed
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_differential_fuzz_against_oracle(seed):
    proc = subprocess.run([sys.executable, "-m", "tests.engine.fuzz_durable", str(seed), "400"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert result["runs"] == 400
    assert result["mismatch_count"] == 0, result["mismatches"]


def test_raw_not_pattern_misses_later_facts_which_is_why_we_probe_negation():
    # The measured quirk behind compiling negation as existence probes: a $not pattern only sees
    # facts asserted before the positive match. If this ever starts passing, durable changed.
    proc = run_py("""
        import json, durable_rules_engine as dre
        rules = {"init": {"all": [{"m": {"t": "$init"}}]},
                 "r": {"all": [{"a": {"t": "x"}}, {"n_1$not": {"t": "z"}}]}}
        h = dre.create_ruleset("q", json.dumps(rules))
        out = []
        code, off = dre.assert_fact(h, json.dumps({"sid": "s", "id": "i", "t": "$init"}))
        def drain(off):
            res = dre.start_action_for_state(h, off)
            while res:
                out.extend(json.loads(res[1]))
                res = dre.complete_and_start_action(h, off)
        drain(off)
        code, off = dre.assert_facts(h, json.dumps([{"sid": "s", "id": "1", "t": "x"}, {"sid": "s", "id": "2", "t": "z"}]))
        drain(off)
        dre.delete_state(h, "s")
        print(json.dumps(out))
    """)
    assert proc.returncode == 0, proc.stderr
    assert "r" in json.loads(proc.stdout)


def test_driver_negation_sees_facts_in_any_order():
    proc = run_py("""
        from clusterdx.engine.durable import DurableSession, compile_ruleset
        from clusterdx.engine.ir import CompiledRule, Conjunction, Pattern
        rule = CompiledRule("r", (Conjunction((Pattern("a", "x", ()),), (Pattern("n", "z", ()),)),), (), ())
        s = DurableSession(compile_ruleset([rule]))
        print(len(s.run([{"type": "x"}, {"type": "z"}]).firings), len(s.run([{"type": "z"}, {"type": "x"}]).firings),
              len(s.run([{"type": "x"}]).firings))
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0", "0", "1"]


def test_sessions_with_no_firing_are_deleted_safely_and_reused():
    # delete_state on a session where no action started segfaults without the sentinel (C2)
    proc = run_py("""
        from clusterdx.engine.durable import DurableSession, compile_ruleset
        from clusterdx.engine.ir import CompiledRule, Conjunction, Pattern, Test
        rule = CompiledRule("r", (Conjunction((Pattern("a", "x", (Test("v", "gt", 5),)), Pattern("b", "y", ()))),), (), ())
        s = DurableSession(compile_ruleset([rule]))
        fired = 0
        for i in range(2000):
            fired += len(s.run([{"type": "x", "v": float(i % 10)}]).firings)   # half-joins, nothing fires
        fired += len(s.run([{"type": "x", "v": 9.0}, {"type": "y"}]).firings)
        print(fired)
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "1"


def test_no_background_threads_left():
    proc = run_py("""
        import threading
        from clusterdx.engine.durable import DurableSession, compile_ruleset
        from clusterdx.engine.ir import CompiledRule, Conjunction, Pattern
        s = DurableSession(compile_ruleset([CompiledRule("r", (Conjunction((Pattern("a", "x", ()),)),), (), ())]))
        s.run([{"type": "x"}])
        print(threading.active_count())
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "1"


def test_colliding_ids_are_renamed_not_dropped():
    # 'f6059' and 'f264602' collide in FNV-1a 32 (durable_rules.md 3.2)
    assert fnv1a32("f6059") == fnv1a32("f264602")


def test_static_limit_on_shared_alpha_path_is_refused_before_loading():
    rules = [CompiledRule(f"r{i}", (Conjunction((Pattern("a", "x", (Test("v", "gt", 1),)),)),), (), ())
             for i in range(300)]
    with pytest.raises(EngineLimitError):
        compile_ruleset(rules)


def test_too_many_patterns_in_one_rule_is_refused():
    pats = tuple(Pattern(f"a{i}", "x", ()) for i in range(17))
    with pytest.raises(EngineLimitError):
        compile_ruleset([CompiledRule("r", (Conjunction(pats),), (), ())])


def test_compiled_json_is_flat_alpha_only():
    rule = CompiledRule("r", (Conjunction((Pattern("a", "x", (Test("s", "in", ["p", "q", "p"]),
                                                                 Test("s", "matches", "^p"))),)),), (), ())
    compiled = compile_ruleset([rule])
    body = compiled.json["r0c0"]["all"][0]["p0"]
    assert body["$and"][0] == {"t": "x"}
    assert body["$and"][1] == {"$or": [{"f_s": "p"}, {"f_s": "q"}]}
    assert body["$and"][2] == {"rx0": True}
