"""One rule session per node: a rule never joins facts of two machines (issue 12 item 1)."""

from __future__ import annotations

import pytest

from clusterdx.engine.evaluate import RuleEngine, split_sessions
from clusterdx.engine.ruletest import make_facts

RULE = "vm-guest-smmu-cmdq-hot"  # perf.symbol_family joined with the node's platform.role (from cpu.info here)


def smmu(node: str) -> dict:
    return {"node": node, "family": "arm_smmu", "share_pct": 24.0, "symbols": ["arm_smmu_cmdq_issue_cmdlist"],
            "event": "cycles", "samples": 48000}


def guest_cpu(node: str) -> dict:
    return {"node": node, "arch": "aarch64", "isa": "arm64", "hypervisor_vendor": "KVM"}


@pytest.fixture(scope="module")
def engine(kb):
    e = RuleEngine(kb, [RULE])
    yield e
    e.close()


def outcome(engine, spec):
    from clusterdx.facts.derive import platform as platform_role

    facts = make_facts(spec, "t")
    (result,), _ = engine.evaluate(facts + platform_role.derive(facts))  # as diagnose derives it
    return result


def test_same_host_joins(engine):
    r = outcome(engine, {"perf.symbol_family": smmu("gpu-a"), "cpu.info": guest_cpu("gpu-a")})
    assert r.outcome == "fired"
    assert {f.node for m in r.matches for f in m.bindings.values()} == {"gpu-a"}


def test_two_hosts_never_join(engine):
    # before: one session for the ticket, so gpu-b's hypervisor line made gpu-a's profile a guest's
    r = outcome(engine, {"perf.symbol_family": smmu("gpu-a"), "cpu.info": guest_cpu("gpu-b")})
    assert r.outcome == "silent"


def test_not_evaluated_only_when_no_session_can(engine):
    # gpu-b has no profile, gpu-a has one: the rule was evaluated (on gpu-a), not "not evaluated"
    r = outcome(engine, {"perf.symbol_family": smmu("gpu-a"), "cpu.info": [guest_cpu("gpu-a"), guest_cpu("gpu-b")]})
    assert r.outcome == "fired" and r.match_count == 1
    r = outcome(engine, {"cpu.info": [guest_cpu("gpu-a"), guest_cpu("gpu-b")]})
    assert r.outcome == "not_evaluated" and [p.fact_type for p in r.missing] == ["perf.symbol_family"]


def test_job_level_and_unlabelled_facts_join_each_host(engine):
    # a file that names no host in a two-host ticket is seen by both hosts' sessions; the rule
    # fires once per host's profile, and the shared fact is counted once per host, not twice
    r = outcome(engine, {"perf.symbol_family": [smmu("gpu-a"), smmu("gpu-b")], "cpu.info": guest_cpu("node")})
    assert r.outcome == "fired" and r.match_count == 2
    hosts = sorted(m.bindings["smmu"].node for m in r.matches)
    assert hosts == ["gpu-a", "gpu-b"]


def test_shared_only_match_is_counted_once(engine):
    # both facts name no host: every host session sees them; one match, not one per session
    spec = {"perf.symbol_family": smmu("node"), "cpu.info": [guest_cpu("node")],
            "kernel.sysctl": [{"node": "gpu-a", "key": "k", "value": "1"}, {"node": "gpu-b", "key": "k", "value": "1"}]}
    r = outcome(engine, spec)
    assert r.outcome == "fired" and r.match_count == 1


def test_split_sessions_job_level_types():
    facts = make_facts({"nccltests.run": {"node": "gpu-a", "collective": "all_reduce", "run_index": 0, "nranks": 16, "nodes": 2},
                        "kernel.sysctl": [{"node": "gpu-a", "key": "k", "value": "1"},
                                          {"node": "gpu-b", "key": "k", "value": "1"}]}, "t")
    sessions = dict(split_sessions(facts))
    # the nccl-tests run describes the job: both hosts' sessions hold it
    assert set(sessions) == {"gpu-a", "gpu-b"}
    assert all(0 in idx for idx in sessions.values())
    assert split_sessions(facts[:2]) == [("gpu-a", [0, 1])]


def test_compiled_once(engine, monkeypatch):
    """Per-node sessions reuse the one compiled ruleset: no compile per node."""
    import clusterdx.engine.evaluate as ev

    def boom(*a, **k):
        raise AssertionError("compiled again")

    monkeypatch.setattr(ev, "compiled_rules", boom)
    r = outcome(engine, {"perf.symbol_family": [smmu(f"gpu-{i}") for i in range(6)], "cpu.info": guest_cpu("node")})
    assert r.match_count == 6
