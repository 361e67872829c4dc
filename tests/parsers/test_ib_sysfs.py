import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.parsers import ib_sysfs
from tests.parsers.helpers import of_type, parse_text

FIXTURES = Path(__file__).parents[1] / "fixtures"
NET = FIXTURES / "net"


def load(fmt, name, command=None):
    return parse_text(fmt, (NET / name).read_text(), command=command, name=name)


def test_doctests():
    assert doctest.testmod(ib_sysfs).failed == 0


def test_port_attribute_dump():
    ctx = load("ib-sysfs", "ib-sysfs-ports.txt")
    assert not ctx.warnings
    p = {f.device: f for f in of_type(ctx, "ib.port")}
    assert len(p) == 10
    assert (p["mlx5_5"].state, p["mlx5_5"].rate_gbps, p["mlx5_5"].speed, p["mlx5_5"].width) == \
        ("Active", 200.0, "HDR", "4X")
    assert (p["mlx5_9"].state, p["mlx5_9"].phys_state, p["mlx5_9"].rate_gbps) == ("Down", "Polling", 10.0)
    # first and last line of the port's attributes
    assert (p["mlx5_9"].source.line, p["mlx5_9"].source.end_line) == (10, 40)
    [s] = of_type(ctx, "ib.summary")
    assert (s.tool, s.ports_active, s.ports_down, s.link_layers) == ("ib-sysfs", 8, 2, ["Ethernet", "InfiniBand"])


def test_counter_dump_errors_and_roce_hw_counters():
    ctx = load("ib-sysfs", "ib-sysfs-counters.txt")
    c = {f.device: f for f in of_type(ctx, "ib.counters")}
    assert list(c) == ["mlx5_0", "mlx5_5", "mlx5_9", "mlx5_1"]
    assert c["mlx5_0"].errors_nonzero == [] and c["mlx5_0"].port_xmit_wait == 18273
    assert (c["mlx5_5"].symbol_error, c["mlx5_5"].link_error_recovery, c["mlx5_5"].port_rcv_errors) == (1843, 3, 12)
    assert c["mlx5_9"].symbol_error == 65535 and c["mlx5_9"].link_downed == 14
    assert c["mlx5_9"].errors_nonzero == ["symbol_error", "link_error_recovery", "link_downed",
                                          "local_link_integrity_errors"]
    roce = c["mlx5_1"]
    assert (roce.out_of_sequence, roce.packet_seq_err, roce.np_cnp_sent, roce.vl15_dropped) == (20931, 1204, 880123, None)
    assert roce.port_xmit_data == 73300128812 and roce.source.line == 65
    # the counter grep could not read is reported
    assert ctx.warnings == [(64, "grep: /sys/class/infiniband/mlx5_1/ports/1/counters/VL15_dropped: Invalid argument")]
    assert not of_type(ctx, "ib.port") and not of_type(ctx, "ib.summary")


def test_head_style_and_device_attributes():
    text = ("==> /sys/class/infiniband/mlx5_0/ports/1/rate <==\n400 Gb/sec (4X NDR)\n\n"
            "==> /sys/class/infiniband/mlx5_0/ports/1/state <==\n4: ACTIVE\n\n"
            "/sys/class/infiniband/mlx5_0/fw_ver:28.39.2048\n/sys/class/infiniband/mlx5_0/hca_type:MT4129\n"
            "/sys/class/infiniband/mlx5_0/node_guid:a088:c203:00b1:c2e0\n"
            "/sys/class/infiniband/mlx5_0/ports/1/lid:0x76\n"
            "/sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_errors:n/a\n")
    ctx = parse_text("ib-sysfs", text)
    [p] = of_type(ctx, "ib.port")
    assert (p.rate_gbps, p.state, p.lid, p.fw_version, p.node_guid, p.source.line) == \
        (400.0, "Active", 118, "28.39.2048", "0xa088c20300b1c2e0", 1)
    [d] = of_type(ctx, "ib.device")
    assert (d.ca_type, d.model) == ("MT4129", "ConnectX-7")
    assert "not a number" in ctx.warnings[0][1]


def test_perfquery_extended_counters():
    ctx = load("perfquery", "perfquery-x.txt", command="perfquery -x -C mlx5_5 -P 1")
    [c] = of_type(ctx, "ib.counters")
    assert (c.device, c.port, c.symbol_error, c.port_rcv_errors, c.port_xmit_wait) == ("mlx5_5", 1, 1843, 12, 98122741)
    assert c.port_xmit_data == 454998120044 and c.errors_nonzero == ["symbol_error", "link_error_recovery", "port_rcv_errors"]
    assert not ctx.warnings


def test_perfquery_without_header_or_device():
    ctx = parse_text("perfquery", "PortSelect:......................2\nSymbolErrorCounter:..............bad\n"
                                  "LinkDownedCounter:...............4\n")
    [c] = of_type(ctx, "ib.counters")
    assert (c.device, c.port, c.link_downed, c.symbol_error) == ("", 2, 4, None)
    assert "not a number" in ctx.warnings[0][1]


def test_nothing_relevant_is_not_applicable():
    with pytest.raises(NotApplicable):
        parse_text("ib-sysfs", "/sys/class/net/eth0/speed:25000\n")
    with pytest.raises(NotApplicable):
        parse_text("perfquery", "ibwarn: [1234] mad_rpc_open_port: can't open UMAD port ((null):0)\n")


def test_sniff_over_all_fixtures():
    for d in ("formats", "net", "real"):
        for path in sorted((FIXTURES / d).iterdir()):
            doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
            s1, s2 = ib_sysfs.sniff(doc), ib_sysfs.sniff_perfquery(doc)
            assert (s1 > 0.9) if path.name.startswith("ib-sysfs") else (s1 < 0.3), path.name
            assert (s2 > 0.9) if path.name.startswith("perfquery") else (s2 < 0.3), path.name


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=2000), st.binary(max_size=2000).map(lambda b: b.decode("latin-1"))),
       st.sampled_from(["ib-sysfs", "perfquery"]))
def test_never_raises_anything_else(text, fmt):
    try:
        parse_text(fmt, text)
    except (ParseError, NotApplicable):
        pass


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet="/sysclasinfbd_mlx5012:port AVE\n", max_size=300))
def test_path_like_noise_never_raises(text):
    try:
        parse_text("ib-sysfs", "/sys/class/infiniband/mlx5_0/ports/1/" + text)
    except (ParseError, NotApplicable):
        pass


def test_single_cat_and_pci_device_path():
    ctx = parse_text("ib-sysfs", "400 Gb/sec (4X NDR)\n", command="cat /sys/class/infiniband/mlx5_3/ports/1/rate")
    [p] = of_type(ctx, "ib.port")
    assert (p.device, p.port, p.rate_gbps, p.source.line) == ("mlx5_3", 1, 400.0, 1)
    ctx = parse_text("ib-sysfs", "/sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/infiniband/mlx5_0/ports/1/"
                                 "phys_state:5: LinkUp\n")
    assert of_type(ctx, "ib.port")[0].phys_state == "LinkUp"


def test_huge_path_like_line_is_not_quadratic():
    # found by tests/bench/fuzz_parsers.py: a 100k-character line of repeated sysfs path pieces
    # made the path regex backtrack for tens of seconds (in the sniffer, on any input)
    import time

    from clusterdx.facts.parsers import ib_sysfs

    noise = "/sys/class/infiniband/mlx5_1/ports/1/sta" * 2500
    text = "/sys/class/infiniband/mlx5_0/ports/1/state:4: ACTIVE\n" + noise + "\n"
    start = time.process_time()
    assert ib_sysfs.sniff(Document.from_text(text)) > 0.5
    ctx = parse_text("ib-sysfs", text)
    assert time.process_time() - start < 2.0
    assert of_type(ctx, "ib.port")[0].state == "Active"
    assert len(ctx.warnings) == 1
    # a long value after a short path is still read whole
    long_value = parse_text("ib-sysfs", "/sys/class/infiniband/mlx5_0/ports/1/link_layer:"
                                        + "x" * 6000 + "InfiniBand\n")
    assert of_type(long_value, "ib.port")[0].link_layer.endswith("InfiniBand")
