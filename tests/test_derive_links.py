"""Derived fabric facts: port rate against peers/card max, link health, RoCE QoS config, thread load."""

from pathlib import Path

from clusterdx.facts.derive import derive_all
from clusterdx.facts.ingest import ingest

ROOT = Path(__file__).resolve().parents[1]


def _facts(*paths: str):
    return derive_all(ingest([str(ROOT / p) for p in paths]).facts)


def _of(facts, t):
    return [f for f in facts if f.fact_type == t]


def test_rail_below_peers_and_polling_port():
    facts = _facts("tests/fixtures/formats/ibstat.txt")
    below = [c for c in _of(facts, "ib.rate_check") if c.below]
    assert [(c.device, c.rate_gbps, c.expected_gbps) for c in below] == [("mlx5_5", 200.0, 400.0)]
    (h,) = _of(facts, "ib.link_health")
    assert h.ports_below == 1 and h.no_link_ports == ["mlx5_9/1"] and h.counter_ports == 0


def test_healthy_sysfs_counts_clean_counters():
    (h,) = _of(_facts("rules/hardware/fixtures/ib-sysfs-healthy-8x-ndr.txt"), "ib.link_health")
    assert (h.ports_checked, h.ports_below, h.ports_no_link, h.counter_ports, h.ports_with_errors) == (8, 0, 0, 8, 0)


def test_roce_config_only_when_config_seen():
    (r,) = _of(_facts("rules/fabric/fixtures/nccl-roce-gid0-no-tc.log"), "nccl.roce_config")
    assert r.gid_index == "0" and not r.tc_set
    assert not _of(_facts("rules/fabric/fixtures/nccl-ece-set-failed.log"), "nccl.roce_config")


def test_thread_load():
    (t,) = _of(_facts("rules/bios-cpu/fixtures/proc-status-rank-418-threads.txt"), "proc.thread_load")
    assert (t.threads, t.allowed_cpus) == (418, 14) and t.ratio > 29
