"""Differential fuzzing of the durable-rules driver against the plain-Python oracle.

Run as a script (each run in its own process, so a segfault in the C extension fails the caller
instead of killing the test runner):

    python -m tests.engine.fuzz_durable SEED COUNT

It prints one JSON line: {"runs": N, "mismatches": [...]}. Rules and facts are drawn from the
constructs the compiler emits: alpha tests with every operator, several positive patterns per
conjunction, negated patterns, and disjunctions (several conjunctions per rule).
"""

from __future__ import annotations

import random
import sys

import orjson

from clusterdx.engine import oracle
from clusterdx.engine.durable import DurableSession, compile_ruleset
from clusterdx.engine.ir import CompiledRule, Conjunction, Pattern, Test

TYPES = ("t.a", "t.b", "t.c")
STRINGS = ("x", "y", "zz", "x.y", "")
NUMS = (-1.0, 0.0, 0.5, 1.0, 2.0, 10.0, 1e6, 7e-13, 1e20, 15e-255)


def rand_test(rng: random.Random) -> Test:
    kind = rng.choice(["num", "str", "bool", "list", "exists"])
    if kind == "num":
        return Test("n", rng.choice(["eq", "ne", "gt", "gte", "lt", "lte", "in", "not_in"]),
                    rng.choice(NUMS) if rng.random() < 0.8 else [rng.choice(NUMS), rng.choice(NUMS)])
    if kind == "str":
        op = rng.choice(["eq", "ne", "in", "not_in", "matches"])
        if op in ("in", "not_in"):
            return Test("s", op, rng.sample(STRINGS, rng.randint(1, 3)))
        if op == "matches":
            return Test("s", op, rng.choice(["^x", "y$", "z+", r"\.", "^$"]))
        return Test("s", op, rng.choice(STRINGS))
    if kind == "bool":
        return Test("f", rng.choice(["eq", "ne"]), rng.random() < 0.5)
    if kind == "list":
        return Test("l", "contains", rng.choice(STRINGS))
    return Test(rng.choice(["n", "s", "f", "l"]), "exists", rng.random() < 0.6)


def fix(test: Test) -> Test:
    # in/not_in always take lists
    if test.op in ("in", "not_in") and not isinstance(test.value, list):
        return Test(test.field, test.op, [test.value])
    if test.op not in ("in", "not_in") and isinstance(test.value, list):
        return Test(test.field, test.op, test.value[0])
    return test


def rand_pattern(rng: random.Random, alias: str) -> Pattern:
    return Pattern(alias, rng.choice(TYPES), tuple(fix(rand_test(rng)) for _ in range(rng.randint(0, 3))))


def rand_rule(rng: random.Random, i: int) -> CompiledRule:
    conjs = []
    for _ in range(rng.randint(1, 2)):
        pos = tuple(rand_pattern(rng, f"p{k}") for k in range(rng.randint(0 if rng.random() < 0.1 else 1, 3)))
        neg = tuple(rand_pattern(rng, f"n{k}") for k in range(rng.randint(0, 1)))
        if not pos and not neg:
            pos = (rand_pattern(rng, "p0"),)
        conjs.append(Conjunction(pos, neg))
    return CompiledRule(f"rule{i}", tuple(conjs), (), ())


def rand_fact(rng: random.Random) -> dict:
    fact: dict = {"type": rng.choice(TYPES)}
    if rng.random() < 0.85:
        fact["n"] = rng.choice(NUMS)
    if rng.random() < 0.85:
        fact["s"] = rng.choice(STRINGS)
    if rng.random() < 0.7:
        fact["f"] = rng.random() < 0.5
    if rng.random() < 0.6:
        fact["l"] = rng.sample(STRINGS, rng.randint(0, 3))
    return fact


def one_run(rng: random.Random) -> list[dict]:
    rules = [rand_rule(rng, i) for i in range(rng.randint(1, 6))]
    session = DurableSession(compile_ruleset(rules))
    mismatches = []
    try:
        for _ in range(3):
            facts = [rand_fact(rng) for _ in range(rng.randint(0, 10))]
            run = session.run(facts)
            got = sorted((f.rule_index, f.conjunction, f.facts) for f in run.firings)
            # conjunctions without positive patterns are decided by the caller from `negated`
            for ri, rule in enumerate(rules):
                for ci, conj in enumerate(rule.conjunctions):
                    if not conj.positives and (ri, ci) not in run.negated:
                        got.append((ri, ci, ()))
            got.sort()
            want = sorted((ri, ci, combo) for ri, r in enumerate(rules) for ci, combo in oracle.matches(r, facts))
            if got != want:
                mismatches.append({"rules": repr(rules)[:2000], "facts": facts, "got": got, "want": want})
    finally:
        session.close()
    return mismatches


def main(seed: int, count: int) -> dict:
    rng = random.Random(seed)
    mismatches: list[dict] = []
    for _ in range(count):
        mismatches.extend(one_run(rng))
    return {"runs": count, "mismatches": mismatches[:3], "mismatch_count": len(mismatches)}


if __name__ == "__main__":
    result = main(int(sys.argv[1]), int(sys.argv[2]))
    sys.stdout.write(orjson.dumps(result, default=str).decode() + "\n")
