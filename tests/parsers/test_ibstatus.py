import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.parsers import ibstatus
from tests.parsers.helpers import of_type, parse_text

FIXTURES = Path(__file__).parents[1] / "fixtures"
SAMPLE = (FIXTURES / "net" / "ibstatus.txt").read_text()


def test_doctests():
    assert doctest.testmod(ibstatus).failed == 0


def test_fleet_sample():
    ctx = parse_text("ibstatus", SAMPLE, name="ibstatus.txt")
    assert not ctx.warnings
    p = {f.device: f for f in of_type(ctx, "ib.port")}
    assert len(p) == 10
    assert (p["mlx5_5"].rate_gbps, p["mlx5_5"].width, p["mlx5_5"].speed, p["mlx5_5"].lid) == (200.0, "4X", "HDR", 124)
    assert (p["mlx5_9"].state, p["mlx5_9"].phys_state, p["mlx5_9"].lid, p["mlx5_9"].source.line) == \
        ("Down", "Polling", 65535, 64)
    assert (p["mlx5_1"].link_layer, p["mlx5_1"].speed) == ("Ethernet", "HDR")
    assert (p["mlx5_0"].speed, p["mlx5_0"].sm_lid) == ("NDR", 1)
    [s] = of_type(ctx, "ib.summary")
    assert (s.tool, s.ports_active, s.ports_down, s.rates_gbps) == ("ibstatus", 8, 2, [200.0, 400.0])


def test_truncated_block_warns():
    ctx = parse_text("ibstatus", "Infiniband device 'mlx5_0' port 1 status:\n\tdefault gid:\t fe80::1\n"
                                 "\tbase lid:\t 0x76\n\trate:\t\t fast\n")
    [p] = of_type(ctx, "ib.port")
    assert p.lid == 118 and p.rate_gbps is None
    msgs = " ".join(m for _, m in ctx.warnings)
    assert "bad rate" in msgs and "no state line" in msgs


def test_nothing_relevant_is_not_applicable():
    with pytest.raises(NotApplicable):
        parse_text("ibstatus", "state: 4: ACTIVE\n")


def test_sniff_over_all_fixtures():
    for d in ("formats", "net", "real"):
        for path in sorted((FIXTURES / d).iterdir()):
            doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
            score = ibstatus.sniff(doc)
            assert (score > 0.9) if path.name == "ibstatus.txt" else (score < 0.3), path.name


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=2000), st.binary(max_size=2000).map(lambda b: b.decode("latin-1"))))
def test_never_raises_anything_else(text):
    try:
        parse_text("ibstatus", text)
    except (ParseError, NotApplicable):
        pass


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 3000), st.text(max_size=40))
def test_cut_sample_never_raises(cut, tail):
    try:
        parse_text("ibstatus", SAMPLE[:cut] + tail)
    except (ParseError, NotApplicable):
        pass


def test_overflowing_rate_is_unknown_not_infinite():
    ctx = parse_text("ibstatus", "Infiniband device 'mlx5_0' port 1 status:\n\tstate:\t\t 4: ACTIVE\n"
                                 "\trate:\t\t " + "9" * 400 + " Gb/sec (4X NDR)\n")
    [p] = of_type(ctx, "ib.port")
    assert p.rate_gbps is None and ctx.warnings[0][1].startswith("bad rate")
