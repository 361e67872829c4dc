"""One number per threshold: cuts made before the rules run follow the rule parameter that owns them,
site overrides included."""

from __future__ import annotations

import doctest

import pytest

from clusterdx.engine import outliers
from clusterdx.engine.diagnose import cross_node_facts
from clusterdx.engine.site import SiteConfig, SiteRules, rule_params
from clusterdx.facts.base import Scope, SourceRef
from clusterdx.facts.derive import derive_all, thresholds
from clusterdx.facts.model.gpu import GpuClocks
from clusterdx.facts.model.nccltests import NcclTestsRun
from clusterdx.facts.reference import select


def _site(rule: str, **params) -> SiteConfig:
    return SiteConfig(rules=SiteRules(params={rule: params}))


def test_doctests():
    assert doctest.testmod(thresholds).failed == 0


@pytest.mark.parametrize("owner", thresholds.OWNERS, ids=lambda o: f"{o.rule}.{o.param}")
def test_every_owner_is_a_shipped_rule_parameter(kb, owner):
    assert kb.rules[owner.rule].params[owner.param].default == thresholds.shipped_default(owner)


def test_rule_params_put_the_site_over_the_defaults(kb):
    params = rule_params(kb, _site("fleet-throughput-outlier", min_score=2.0))
    assert params["fleet-throughput-outlier"] == {"min_score": 2.0, "min_peers": 4}
    assert rule_params(kb)["fleet-throughput-outlier"]["min_score"] == 3.5


# --- small-message size: the efficiency fact exists only from the rule's min_bytes ---

def _run(max_size: int) -> NcclTestsRun:
    return NcclTestsRun(node="a", scope=Scope.host, source=SourceRef(input="r.txt"), run_index=0,
                        collective="all_reduce", nranks=16, nodes=2, hosts=["a", "b"], max_size=max_size,
                        busbw_at_max_size=300.0, completed=True)


def _efficiency(max_size: int, params) -> list:
    facts = [_run(max_size)]
    ref = select("dgx-h100-8x400g", facts)
    return [f for f in derive_all(facts, ref, params=params) if f.fact_type == "nccltests.efficiency"]


def test_small_message_size_follows_a_site_override(kb):
    half_gib = 1 << 29
    assert len(_efficiency(half_gib, rule_params(kb))) == 1
    stricter = rule_params(kb, _site("nccltests-small-max-size", min_bytes=1 << 30))
    assert _efficiency(half_gib, stricter) == []
    assert len(_efficiency(1 << 30, stricter)) == 1
    looser = rule_params(kb, _site("nccltests-small-max-size", min_bytes=1 << 26))
    assert _efficiency(1 << 27, rule_params(kb)) == []
    assert len(_efficiency(1 << 27, looser)) == 1


# --- fleet outliers: z-score and peer count are the fleet rule's ---

def _clock_values(n: int, slow: float) -> dict:
    # peers spread around 1980 MHz (MAD 30), one node at ``slow``
    vals = {f"n{i}": {("gpu.sm_clock", "0"): (1950.0 + 30 * (i % 3), "")} for i in range(n)}
    vals["odd"] = {("gpu.sm_clock", "0"): (slow, "")}
    return vals


def test_outlier_score_follows_a_site_override(kb):
    # z = 0.6745 * (1830 - 1980) / 30 = -3.37: under the shipped 3.5, over a site's 3.0
    vals = _clock_values(6, 1830.0)
    assert outliers.find_outliers(vals, params=rule_params(kb)) == []
    looser = rule_params(kb, _site("fleet-throughput-outlier", min_score=3.0))
    assert [o.node for o in outliers.find_outliers(vals, params=looser)] == ["odd"]
    far = _clock_values(6, 1410.0)
    stricter = rule_params(kb, _site("fleet-throughput-outlier", min_score=20.0))
    assert [o.node for o in outliers.find_outliers(far, params=rule_params(kb))] == ["odd"]
    assert outliers.find_outliers(far, params=stricter) == []


def test_outlier_peer_count_follows_a_site_override(kb):
    vals = _clock_values(2, 1410.0)  # three nodes report the metric
    assert outliers.find_outliers(vals, params=rule_params(kb)) == []
    looser = rule_params(kb, _site("fleet-throughput-outlier", min_peers=3))
    assert [o.node for o in outliers.find_outliers(vals, params=looser)] == ["odd"]


def _clock(node: str, mhz: float) -> GpuClocks:
    return GpuClocks(node=node, scope=Scope.host, source=SourceRef(input=f"{node}.txt"), gpu=0, sm_mhz=mhz)


def test_cross_node_outliers_in_one_diagnosis_follow_the_site(kb):
    facts = [_clock(f"n{i}", 1950.0 + 30 * (i % 3)) for i in range(6)] + [_clock("odd", 1830.0)]
    made = lambda params: [f.node for f in cross_node_facts(facts, params=params) if f.fact_type == "fleet.outlier"]
    assert made(rule_params(kb)) == []
    assert made(rule_params(kb, _site("fleet-throughput-outlier", min_score=3.0))) == ["odd"]
