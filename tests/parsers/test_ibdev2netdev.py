import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.parsers import ibdev2netdev
from tests.parsers.helpers import FORMATS, of_type, parse_fixture, parse_text

FIXTURES = Path(__file__).parents[1] / "fixtures"
MINE = {"ibdev2netdev.txt", "ibdev2netdev-v.txt"}


def test_doctests():
    assert doctest.testmod(ibdev2netdev).failed == 0


def test_default_mapping():
    ctx = parse_fixture("ibdev2netdev", "ibdev2netdev.txt")
    assert not ctx.warnings
    m = {f.device: f for f in of_type(ctx, "net.netdev_map")}
    assert len(m) == 10
    assert (m["mlx5_1"].netdev, m["mlx5_1"].state, m["mlx5_1"].port) == ("ens10f0np0", "Up", 1)
    assert (m["mlx5_9"].netdev, m["mlx5_9"].state, m["mlx5_9"].source.line) == ("ibp170s0", "Down", 8)
    p = {f.device: f for f in of_type(ctx, "ib.port")}
    assert p["mlx5_9"].netdev == "ibp170s0" and p["mlx5_9"].state == ""
    [s] = of_type(ctx, "ib.summary")
    assert (s.ports_active, s.ports_down, s.down_ports) == (8, 2, ["mlx5_2/1", "mlx5_9/1"])


def test_verbose_mapping_card_capability_and_states():
    ctx = parse_fixture("ibdev2netdev", "ibdev2netdev-v.txt")
    assert not ctx.warnings
    m = {f.device: f for f in of_type(ctx, "net.netdev_map")}
    assert (m["mlx5_9"].port_state, m["mlx5_9"].state, m["mlx5_9"].pci_bus) == ("Down", "Down", "0000:aa:00.0")
    assert (m["mlx5_2"].port_state, m["mlx5_2"].part_number) == ("Down", "MCX755106AS-HEAT")
    assert m["mlx5_5"].description.startswith("NVIDIA ConnectX-7 HHHL Adapter card, 400GbE / NDR IB")
    p = {f.device: f for f in of_type(ctx, "ib.port")}
    assert (p["mlx5_5"].max_rate_gbps, p["mlx5_5"].pci_bus, p["mlx5_5"].state) == (400.0, "0000:5c:00.0", "Active")
    assert p["mlx5_1"].max_rate_gbps == 200.0  # 200GbE / NDR200 card
    assert p["mlx5_5"].degraded is None  # no rate in ibdev2netdev
    d = {f.device: f for f in of_type(ctx, "ib.device")}
    assert (d["mlx5_0"].fw_version, d["mlx5_0"].model, d["mlx5_0"].part_number) == \
        ("28.39.2048", "ConnectX-7", "MCX75310AAS-NEAT")
    [s] = of_type(ctx, "ib.summary")
    assert (s.devices, s.ports_active, s.ports_down, s.fw_versions) == (10, 8, 2, ["28.39.2048"])


def test_older_ofed_wording_and_bond_device():
    text = ("0000:3b:00.0 mlx5_0 (MT4123 - MCX653105A-HDAT) ConnectX-6 VPI adapter card, HDR IB (200Gb/s) "
            "and 200GbE, single-port QSFP56 fw 20.31.1014 port 1 (INIT   ) ==> ib0 (Down)\n"
            "mlx5_bond_0 port 1 ==> bond0 (Up)\n")
    ctx = parse_text("ibdev2netdev", text)
    p = of_type(ctx, "ib.port")
    assert (p[0].state, p[0].max_rate_gbps, p[0].fw_version) == ("Initializing", 200.0, "20.31.1014")
    assert (p[1].device, p[1].netdev) == ("mlx5_bond_0", "bond0")


def test_truncated_line_warns():
    lines = (FORMATS / "ibdev2netdev-v.txt").read_text().splitlines()
    ctx = parse_text("ibdev2netdev", "\n".join(lines[:3] + [lines[3][:200]]))
    assert len(of_type(ctx, "net.netdev_map")) == 3
    assert ctx.warnings and ctx.warnings[0][0] == 4


def test_nothing_relevant_is_not_applicable():
    with pytest.raises(NotApplicable):
        parse_text("ibdev2netdev", "ibdev2netdev: command not found\n")


def test_sniff_over_all_fixtures():
    for d in ("formats", "net", "real"):
        for path in sorted((FIXTURES / d).iterdir()):
            doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
            score = ibdev2netdev.sniff(doc)
            assert (score > 0.9) if path.name in MINE else (score < 0.3), path.name


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=2000), st.binary(max_size=2000).map(lambda b: b.decode("latin-1"))))
def test_never_raises_anything_else(text):
    try:
        parse_text("ibdev2netdev", text)
    except (ParseError, NotApplicable):
        pass


def test_huge_line_is_not_quadratic():
    # found by tests/bench/fuzz_parsers.py: a 200k-character line of repeated `-v` output made the
    # verbose-line regex backtrack for seconds
    import time

    line = "0000:17:00.0 mlx5_0 (MT4129 - MCX75310AAS-NEAT) NVIDIA ConnectX-7 HHHL Adapter c"
    text = ("0000:17:00.0 mlx5_0 (MT4129 - MCX75310AAS-NEAT) NVIDIA ConnectX-7 HHHL Adapter card "
            "fw 28.39.2048 port 1 (ACTIVE) ==> ibp23s0 (Up)\n" + line * 2500 + "\n")
    start = time.process_time()
    assert ibdev2netdev.sniff(Document.from_text(text)) >= 0.5
    ctx = parse_text("ibdev2netdev", text)
    assert time.process_time() - start < 2.0
    assert len(of_type(ctx, "net.netdev_map")) == 1 and len(ctx.warnings) == 1
