import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.parsers import ibstat
from tests.parsers.helpers import FORMATS, of_type, parse_fixture, parse_text

FIXTURES = Path(__file__).parents[1] / "fixtures"


def ports(ctx):
    return {p.device: p for p in of_type(ctx, "ib.port")}


def test_doctests():
    assert doctest.testmod(ibstat).failed == 0


def test_fleet_sample_planted_findings():
    ctx = parse_fixture("ibstat", "ibstat.txt")
    p = ports(ctx)
    assert len(p) == 10 and not ctx.warnings
    # mlx5_9 is down (cable over-temperature): Down / Polling, placeholder rate, LID 65535
    assert (p["mlx5_9"].state, p["mlx5_9"].phys_state, p["mlx5_9"].rate_gbps, p["mlx5_9"].lid) == \
        ("Down", "Polling", 10.0, 65535)
    # mlx5_5 runs at HDR rate on an NDR card
    assert (p["mlx5_5"].state, p["mlx5_5"].rate_gbps, p["mlx5_5"].link_layer) == ("Active", 200.0, "InfiniBand")
    assert p["mlx5_5"].degraded is None and p["mlx5_5"].max_rate_gbps is None
    assert (p["mlx5_0"].rate_gbps, p["mlx5_0"].lid, p["mlx5_0"].sm_lid, p["mlx5_0"].source.line) == (400.0, 118, 1, 8)
    assert p["mlx5_0"].port_guid == "0xa088c20300b1c2e0" and p["mlx5_0"].ca_type == "MT4129"
    # the Ethernet pair: RoCE, LID 0, second port disabled
    assert (p["mlx5_1"].link_layer, p["mlx5_1"].lid, p["mlx5_1"].rate_gbps) == ("Ethernet", 0, 200.0)
    assert (p["mlx5_2"].state, p["mlx5_2"].phys_state) == ("Down", "Disabled")
    devs = {d.device: d for d in of_type(ctx, "ib.device")}
    assert devs["mlx5_1"].sys_image_guid == "0x5c25730300fe4a90" and devs["mlx5_1"].model == "ConnectX-7"
    assert devs["mlx5_0"].ports == 1 and devs["mlx5_0"].source.line == 1
    [s] = of_type(ctx, "ib.summary")
    assert (s.devices, s.ports, s.ports_active, s.ports_down) == (10, 10, 8, 2)
    assert s.down_ports == ["mlx5_2/1", "mlx5_9/1"] and s.rates_gbps == [200.0, 400.0]
    assert s.link_layers == ["Ethernet", "InfiniBand"] and s.fw_versions == ["28.39.2048"]


def test_single_port_form_takes_device_from_command_and_spaces_for_tabs():
    text = "Port 1:\nState: Active\nPhysical state: LinkUp\nRate: 56\nBase lid: 3\nLMC: 0\nSM lid: 1\n" \
           "Capability mask: 0x2651e848\nPort GUID: 0x0002c90300a1b2c3\nLink layer: InfiniBand\n"
    ctx = parse_text("ibstat", text, command="ibstat mlx4_0 1")
    [p] = of_type(ctx, "ib.port")
    assert (p.device, p.port, p.rate_gbps, p.lid) == ("mlx4_0", 1, 56.0, 3)
    assert ibstat.sniff(Document.from_text(text)) >= 0.8


def test_multi_port_ca_and_fdr10_rate():
    text = ("CA 'mlx4_0'\n    CA type: MT4099\n    Number of ports: 2\n    Firmware version: 2.42.5000\n"
            "    Port 1:\n        State: Active\n        Physical state: LinkUp\n        Rate: 40 (FDR10)\n"
            "    Port 2:\n        State: Down\n        Physical state: Disabled\n        Rate: 10\n")
    ctx = parse_text("ibstat", text)
    p1, p2 = of_type(ctx, "ib.port")
    assert (p1.port, p1.rate_gbps, p1.speed, p2.port, p2.state) == (1, 40.0, "FDR10", 2, "Down")
    assert of_type(ctx, "ib.summary")[0].ports_down == 1


def test_truncated_listing_warns_and_keeps_ports():
    lines = (FORMATS / "ibstat.txt").read_text().splitlines()
    ctx = parse_text("ibstat", "\n".join(lines[:27] + ["garbage line without colon"]))
    p = ports(ctx)
    assert set(p) == {"mlx5_0", "mlx5_1"}
    assert p["mlx5_1"].phys_state == "LinkUp" and p["mlx5_1"].rate_gbps is None
    msgs = " ".join(m for _, m in ctx.warnings)
    assert "unrecognized line" in msgs


def test_truncated_port_block_warns():
    lines = (FORMATS / "ibstat.txt").read_text().splitlines()
    ctx = parse_text("ibstat", "\n".join(lines[:8]))
    assert "no State line" in " ".join(m for _, m in ctx.warnings)


def test_no_ca_is_not_applicable():
    with pytest.raises(NotApplicable):
        parse_text("ibstat", "0xa088c20300b1c2e0\n0x5c2573fffe4a91f0\n")


def test_sniff_over_all_fixtures():
    for d in ("formats", "net", "real"):
        for path in sorted((FIXTURES / d).iterdir()):
            doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
            score = ibstat.sniff(doc)
            if path.name == "ibstat.txt":
                assert score > 0.9
            else:
                assert score < 0.3, path.name


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=2000), st.binary(max_size=2000).map(lambda b: b.decode("latin-1"))))
def test_never_raises_anything_else(text):
    try:
        parse_text("ibstat", text)
    except (ParseError, NotApplicable):
        pass


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 4000), st.text(max_size=40))
def test_cut_sample_never_raises(cut, tail):
    text = (FORMATS / "ibstat.txt").read_text()[:cut] + tail
    try:
        parse_text("ibstat", text)
    except (ParseError, NotApplicable):
        pass
