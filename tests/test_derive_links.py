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


def _card(dev: str, ca: str, ports: list[tuple[str, str]]) -> str:
    out = [f"CA '{dev}'", f"\tCA type: {ca}", f"\tNumber of ports: {len(ports)}"]
    for n, (state, phys) in enumerate(ports, start=1):
        out += [f"\tPort {n}:", f"\t\tState: {state}", f"\t\tPhysical state: {phys}", "\t\tRate: 100",
                "\t\tLink layer: Ethernet"]
    return "\n".join(out) + "\n"


def test_dark_nic_beside_peers_of_its_type(tmp_path):
    p = tmp_path / "ibstat.txt"
    p.write_text("$ ibstat\n" + _card("mlx5_0", "MT4125", [("Active", "LinkUp")])
                 + _card("mlx5_1", "MT4125", [("Down", "Disabled")]))
    (h,) = _of(derive_all(ingest([str(p)]).facts), "ib.link_health")
    assert (h.ports_dark_beside_peers, h.dark_beside_peers, h.ports_no_link) == (1, ["mlx5_1/1"], 0)


def test_dark_port_lookalikes_unused_second_port_and_other_card_type(tmp_path):
    # port 2 of a card whose port 1 is up, and a down NIC of another type, are not dark rails
    p = tmp_path / "ibstat.txt"
    p.write_text("$ ibstat\n" + _card("mlx5_0", "MT4125", [("Active", "LinkUp"), ("Down", "Disabled")])
                 + _card("mlx5_1", "MT4119", [("Down", "Disabled")]))
    (h,) = _of(derive_all(ingest([str(p)]).facts), "ib.link_health")
    assert (h.ports_dark_beside_peers, h.dark_beside_peers) == (0, [])


def test_dark_port_on_a_side_network_is_not_a_rail(tmp_path):
    # storage Ethernet card (one function up, one down) beside InfiniBand rails
    p = tmp_path / "ibstat.txt"
    ib = "".join(_card(f"mlx5_{i}", "MT4129", [("Active", "LinkUp")]).replace("Ethernet", "InfiniBand")
                 for i in (0, 3, 4))
    p.write_text("$ ibstat\n" + ib + _card("mlx5_1", "MT4129", [("Active", "LinkUp")])
                 + _card("mlx5_2", "MT4129", [("Down", "Disabled")]))
    (h,) = _of(derive_all(ingest([str(p)]).facts), "ib.link_health")
    assert (h.ports_dark_beside_peers, h.ports_active) == (0, 4)
