"""The ranking-sensitivity cases (kb/cases/rs-*) pass with the shipped weights and fail when a weight
they were written to pin moves by half: the library constrains the weights, not only the rules.
tests/bench/bench_weights.py measures every weight over the whole library."""

from __future__ import annotations

import contextlib

import pytest

from clusterdx.engine import diagnose, rank, weights
from clusterdx.engine.cases import case_dirs, run_case

RS = {c.name: c for c in case_dirs() if c.name.startswith("rs-")}


@contextlib.contextmanager
def _entry(table: dict, key: str, value):
    old = table[key]
    table[key] = value
    try:
        yield
    finally:
        table[key] = old


@contextlib.contextmanager
def _no_weakening():
    old = dict(diagnose.WEAKER)
    diagnose.WEAKER.update({k: k for k in old})
    try:
        yield
    finally:
        diagnose.WEAKER.update(old)


@contextlib.contextmanager
def _constant(module, name: str, value):
    old = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, old)


@contextlib.contextmanager
def _fault_claimed(kb, cause: str):
    """The no-fault cause ranked like any fault (step 9 of the ranking off for it)."""
    old = kb.nodes[cause]
    kb.nodes[cause] = old.model_copy(update={"no_fault": False})
    try:
        yield
    finally:
        kb.nodes[cause] = old


@contextlib.contextmanager
def _via_dropped(kb, rule_id: str):
    """The rule's evidence judged by its cause's whole reach, not by the path it names (``via``)."""
    old = kb.rules[rule_id]
    kb.rules[rule_id] = old.model_copy(update={"evidence": [e.model_copy(update={"via": ""}) for e in old.evidence]})
    _forget_engines(kb)  # the compiled engine holds the evidence it emits
    try:
        yield
    finally:
        kb.rules[rule_id] = old
        _forget_engines(kb)


def _forget_engines(kb) -> None:
    for key in [k for k in diagnose._ENGINES if k[0] == id(kb)]:
        del diagnose._ENGINES[key]


def test_there_are_sensitivity_cases():
    assert len(RS) >= 2


@pytest.mark.parametrize("name", sorted(RS))
def test_passes_with_the_shipped_weights(kb, name):
    result = run_case(kb, RS[name])
    assert result.ok, result.problems


@pytest.mark.parametrize("name, change", [
    ("rs-strength-governor-vs-cross-nic", lambda kb: _entry(weights.STRENGTH_LR, "strong", 10.0)),
    ("rs-strength-governor-vs-cross-nic", lambda kb: _entry(weights.STRENGTH_LR, "moderate", 7.5)),
    ("rs-reported-shm-env-vs-governor", lambda kb: _entry(weights.STRENGTH_LR, "strong", 10.0)),
    ("rs-reported-shm-env-vs-governor", lambda kb: _no_weakening()),
    ("rs-candidates-alike-lift-prior", lambda kb: _constant(rank, "LIFT_NEAR_TIE", 0.0)),
    ("rs-no-fault-after-own-evidence-fault", lambda kb: _fault_claimed(kb, "expectation-exceeds-hardware")),
    ("rs-failure-complaint-ecc-over-forced-proto", lambda kb: _constant(rank, "failures_first", lambda items, complaint: items)),
    ("rs-failure-complaint-ecc-over-forced-proto", lambda kb: _via_dropped(kb, "nccl-algo-proto-forced")),
], ids=["strong-20-to-10", "moderate-5-to-7.5", "reported-strong-20-to-10", "reported-not-weakened",
        "lift-near-tie-off", "no-fault-ranked-as-a-fault", "complaint-kind-ignored", "forced-protocol-via-dropped"])
def test_fails_when_its_weight_moves(kb, name, change):
    with change(kb):
        result = run_case(kb, RS[name])
    assert not result.ok and result.top1_ok is False, result.ranking
