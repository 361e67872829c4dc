import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.parsers import ibv_devinfo
from tests.parsers.helpers import FORMATS, of_type, parse_fixture, parse_text

FIXTURES = Path(__file__).parents[1] / "fixtures"
MINE = {"ibv_devinfo.txt", "ibv_devinfo-v.txt"}


def test_doctests():
    assert doctest.testmod(ibv_devinfo).failed == 0


def test_default_output_three_devices():
    ctx = parse_fixture("ibv_devinfo", "ibv_devinfo.txt")
    assert not ctx.warnings
    p = {f.device: f for f in of_type(ctx, "ib.port")}
    assert list(p) == ["mlx5_0", "mlx5_1", "mlx5_9"]
    assert (p["mlx5_0"].state, p["mlx5_0"].lid, p["mlx5_0"].sm_lid, p["mlx5_0"].active_mtu) == ("Active", 118, 1, 4096)
    # RoCE port with a 1024-byte active MTU
    assert (p["mlx5_1"].link_layer, p["mlx5_1"].active_mtu, p["mlx5_1"].max_mtu) == ("Ethernet", 1024, 4096)
    # planted: mlx5_9 is down
    assert (p["mlx5_9"].state, p["mlx5_9"].lid, p["mlx5_9"].source.line) == ("Down", 65535, 49)
    assert p["mlx5_9"].rate_gbps is None and p["mlx5_9"].phys_state == ""
    d = {f.device: f for f in of_type(ctx, "ib.device")}
    assert (d["mlx5_1"].node_guid, d["mlx5_1"].sys_image_guid) == ("0x5c257303fe4a91f0", "0x5c25730300fe4a90")
    assert (d["mlx5_0"].ca_type, d["mlx5_0"].board_id, d["mlx5_0"].fw_version) == ("MT4129", "MT_0000000838", "28.39.2048")
    [s] = of_type(ctx, "ib.summary")
    assert (s.devices, s.ports_active, s.ports_down, s.down_ports) == (3, 2, 1, ["mlx5_9/1"])


def test_verbose_output_hdr_rate_on_ndr_card():
    ctx = parse_fixture("ibv_devinfo", "ibv_devinfo-v.txt")
    assert not ctx.warnings
    [p] = of_type(ctx, "ib.port")
    assert (p.device, p.width, p.speed, p.rate_gbps, p.phys_state) == ("mlx5_5", "4X", "HDR", 200.0, "LinkUp")
    assert (p.lid, p.source.line) == (124, 102)
    [d] = of_type(ctx, "ib.device")
    assert (d.ports, d.transport, d.hw_version) == (1, "InfiniBand", "0x0")


def test_ndr_xdr_and_multiport():
    text = ("hca_id:\tmlx5_0\n\tfw_ver:\t\t28.41.1000\n\tvendor_part_id:\t\t4131\n\tphys_port_cnt:\t\t2\n"
            "\t\tport:\t1\n\t\t\tstate:\t\tPORT_ACTIVE (4)\n\t\t\tactive_width:\t\t4X (2)\n"
            "\t\t\tactive_speed:\t\t200.0 Gbps (256)\n\t\t\tphys_state:\t\tLINK_UP (5)\n"
            "\t\tport:\t2\n\t\t\tstate:\t\tPORT_INIT (2)\n\t\t\tactive_width:\t\t4X (2)\n"
            "\t\t\tactive_speed:\t\t100.0 Gbps (128)\n\t\t\tphys_state:\t\tLINK_UP (5)\n")
    ctx = parse_text("ibv_devinfo", text)
    p1, p2 = of_type(ctx, "ib.port")
    assert (p1.speed, p1.rate_gbps, p2.speed, p2.rate_gbps, p2.state) == ("XDR", 800.0, "NDR", 400.0, "Initializing")
    assert of_type(ctx, "ib.device")[0].model == "ConnectX-8"


def test_no_devices_is_a_summary_with_zero_devices():
    ctx = parse_text("ibv_devinfo", "No IB devices found\n")
    [s] = ctx.facts
    assert (s.fact_type, s.devices, s.ports) == ("ib.summary", 0, 0)


def test_truncated_verbose_output_warns():
    lines = (FORMATS / "ibv_devinfo.txt").read_text().splitlines()
    ctx = parse_text("ibv_devinfo", "\n".join(lines[:10]))
    assert "phys_port_cnt 1, 0 port blocks" in " ".join(m for _, m in ctx.warnings)
    assert [d.device for d in of_type(ctx, "ib.device")] == ["mlx5_0"]


def test_unrelated_text_is_not_applicable():
    with pytest.raises(NotApplicable):
        parse_text("ibv_devinfo", "transport: tcp\nhello\n")


def test_sniff_over_all_fixtures():
    for d in ("formats", "net", "real"):
        for path in sorted((FIXTURES / d).iterdir()):
            doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
            score = ibv_devinfo.sniff(doc)
            assert (score > 0.9) if path.name in MINE else (score < 0.3), path.name


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=2000), st.binary(max_size=2000).map(lambda b: b.decode("latin-1"))))
def test_never_raises_anything_else(text):
    try:
        parse_text("ibv_devinfo", text)
    except (ParseError, NotApplicable):
        pass


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 6000), st.text(max_size=40))
def test_cut_sample_never_raises(cut, tail):
    text = (FORMATS / "ibv_devinfo-v.txt").read_text()[:cut] + tail
    try:
        parse_text("ibv_devinfo", text)
    except (ParseError, NotApplicable):
        pass
