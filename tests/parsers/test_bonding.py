import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.parsers import bonding
from tests.parsers.helpers import of_type, parse_text

FIXTURES = Path(__file__).parents[1] / "fixtures"
NET = FIXTURES / "net"


def test_doctests():
    assert doctest.testmod(bonding).failed == 0


def test_8023ad_with_a_down_slave():
    ctx = parse_text("bonding", (NET / "bonding-8023ad.txt").read_text(), command="cat /proc/net/bonding/bond0")
    assert not ctx.warnings
    [b] = of_type(ctx, "net.bond")
    assert (b.bond, b.mode, b.xmit_hash_policy, b.lacp_rate, b.mii_status) == \
        ("bond0", "802.3ad", "layer3+4", "fast", "up")
    assert (b.slaves, b.active_slaves, b.down_slaves, b.speed_mbps) == \
        (["ens10f0np0", "ens10f1np1"], 1, ["ens10f1np1"], [200000])
    assert (b.link_failures, b.active_aggregator_id, b.slaves_outside_aggregator) == (2, 1, [])
    assert (b.source.line, b.source.end_line) == (1, 77)
    s = {f.slave: f for f in of_type(ctx, "net.bond_slave")}
    assert (s["ens10f0np0"].speed_mbps, s["ens10f0np0"].duplex, s["ens10f0np0"].aggregator_id) == (200000, "full", 1)
    assert (s["ens10f1np1"].speed_mbps, s["ens10f1np1"].link_failure_count, s["ens10f1np1"].source.line) == (None, 2, 52)


def test_legacy_active_backup_name_from_path():
    ctx = parse_text("bonding", (NET / "bonding-active-backup-legacy.txt").read_text(), name="/proc/net/bonding/bond1")
    [b] = of_type(ctx, "net.bond")
    assert (b.bond, b.mode, b.mode_text, b.active_slave) == \
        ("bond1", "active-backup", "fault-tolerance (active-backup)", "eth1")
    assert (b.active_slaves, b.down_slaves, b.speed_mbps, b.lacp_rate) == (1, ["eth0"], [25000], "")


def test_up_slave_outside_the_active_aggregator():
    text = (NET / "bonding-8023ad.txt").read_text().replace("MII Status: down", "MII Status: up")
    [b] = of_type(parse_text("bonding", text, name="bond0"), "net.bond")
    assert (b.bond, b.active_slaves, b.slaves_outside_aggregator) == ("bond0", 2, ["ens10f1np1"])


def test_two_bonds_from_head_and_unknown_names():
    one = (NET / "bonding-active-backup-legacy.txt").read_text()
    ctx = parse_text("bonding", "==> /proc/net/bonding/bond0 <==\n" + one + "\n==> /proc/net/bonding/bond1 <==\n" + one)
    assert [b.bond for b in of_type(ctx, "net.bond")] == ["bond0", "bond1"]
    ctx = parse_text("bonding", one + one)
    assert [b.bond for b in of_type(ctx, "net.bond")] == ["bond?", "bond?1"]


def test_truncated_and_malformed():
    lines = (NET / "bonding-8023ad.txt").read_text().splitlines()
    ctx = parse_text("bonding", "\n".join(lines[:27] + ["Speed: fast", "%%%"]))
    [b] = of_type(ctx, "net.bond")
    assert b.slaves == ["ens10f0np0"] and b.speed_mbps == []
    assert [m for _, m in ctx.warnings] == ["bad speed 'fast'", "unrecognized line: %%%"]


def test_nothing_relevant_is_not_applicable():
    with pytest.raises(NotApplicable):
        parse_text("bonding", "cat: /proc/net/bonding/bond0: No such file or directory\n")


def test_sniff_over_all_fixtures():
    for d in ("formats", "net", "real"):
        for path in sorted((FIXTURES / d).iterdir()):
            doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
            score = bonding.sniff(doc)
            assert (score > 0.9) if path.name.startswith("bonding") else (score < 0.3), path.name


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=2000), st.binary(max_size=2000).map(lambda b: b.decode("latin-1"))))
def test_never_raises_anything_else(text):
    try:
        parse_text("bonding", text)
    except (ParseError, NotApplicable):
        pass
