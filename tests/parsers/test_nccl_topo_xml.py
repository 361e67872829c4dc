import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.parsers import nccl_topo_xml
from tests.parsers.helpers import FORMATS, of_type, parse_text

CONTAINER = Path(__file__).parents[1] / "fixtures" / "container"
MINE = {"nccl-topo-hgx-h100.xml", "nccl-topo-vm-flat.xml"}


def parse_file(name):
    return parse_text("nccl-topo-xml", (CONTAINER / name).read_text(), name=name)


def test_doctests():
    assert doctest.testmod(nccl_topo_xml).failed == 0


def test_hgx_h100_dump():
    ctx = parse_file("nccl-topo-hgx-h100.xml")
    [s] = of_type(ctx, "nccl.topo_xml")
    assert (s.version, s.cpus, s.gpus, s.nics) == ("1", 2, 8, 8)
    assert s.nets == ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"]
    assert s.net_speeds_mbps[3] == 200000 and s.net_speeds_mbps.count(400000) == 7  # mlx5_5 at HDR rate
    assert len(s.pci_link_widths) == 24 and s.pci_link_widths.count(8) == 1
    assert s.gpu_gdr == [1] * 8 and s.nvlinks == 8 * 18 and s.flattened is False
    gpus = of_type(ctx, "nccl.topo_xml_gpu")
    assert [g.dev for g in gpus] == list(range(8))
    g3 = gpus[3]
    assert g3.busid == "0000:5d:00.0" and g3.link_width == 8 and g3.numa == "0" and g3.nic_local is True
    assert g3.source.line == 46
    assert gpus[4].numa == "1" and gpus[4].affinity.startswith("ffffffff,ffff0000")
    assert all(g.nic_local for g in gpus)


def test_flattened_vm_topology():
    ctx = parse_file("nccl-topo-vm-flat.xml")
    [s] = of_type(ctx, "nccl.topo_xml")
    assert s.flattened is True and s.cpus == 1 and s.gpus == 8 and s.nics == 8 and s.gpu_gdr == [0] * 8
    assert not any(g.nic_local for g in of_type(ctx, "nccl.topo_xml_gpu"))


def test_head_of_a_dump_yields_what_it_shows():
    # a post holding the first 40 lines of `cat topo.xml`: the GPUs and NICs seen so far, flagged
    lines = (CONTAINER / "nccl-topo-hgx-h100.xml").read_text().splitlines()[:40]
    ctx = parse_text("nccl-topo-xml", "\n".join(lines))
    [s] = of_type(ctx, "nccl.topo_xml")
    gpus = of_type(ctx, "nccl.topo_xml_gpu")
    assert s.truncated is True and s.flattened is False
    assert 1 <= s.gpus < 8 and len(gpus) == s.gpus and s.cpus == 1
    assert [line for line, _ in ctx.warnings] == [40] and "cut short" in ctx.warnings[0][1]


def test_cut_inside_a_tag_drops_the_half_tag():
    head = nccl_topo_xml.SAMPLE.splitlines()[:5] + ['      <pci busid="0000:18:00.0" class="0x03']
    ctx = parse_text("nccl-topo-xml", "\r\n".join(["root@gpu-node-07:~# cat topo.xml", *head]))
    [s] = of_type(ctx, "nccl.topo_xml")
    assert (s.truncated, s.nics, s.gpus, s.nets) == (True, 1, 0, ["mlx5_0"])


def test_complete_dump_is_not_flagged():
    ctx = parse_text("nccl-topo-xml", nccl_topo_xml.SAMPLE)
    [s] = of_type(ctx, "nccl.topo_xml")
    assert s.truncated is False and not ctx.warnings


def test_mismatched_tags_stay_an_error_with_line():
    text = '<system version="1">\n  <cpu numaid="0">\n    <pci busid="0000:18:00.0">\n  </cpu>\n</system>\n'
    with pytest.raises(ParseError) as exc:
        parse_text("nccl-topo-xml", text)
    assert exc.value.line == 4


def test_entities_are_refused():
    bomb = '<?xml version="1.0"?>\n<!DOCTYPE s [<!ENTITY a "aaaa">]>\n<system version="1">&a;</system>\n'
    with pytest.raises(ParseError):
        parse_text("nccl-topo-xml", bomb)


def test_other_xml_is_not_applicable():
    with pytest.raises(NotApplicable):
        parse_text("nccl-topo-xml", (FORMATS / "nvidia-smi-q.xml").read_text())
    with pytest.raises(NotApplicable):
        parse_text("nccl-topo-xml", '<system version="1"></system>')


def _all_samples():
    for d in (FORMATS, CONTAINER):
        for p in sorted(d.iterdir()):
            if p.is_file():
                yield p


@pytest.mark.parametrize("path", list(_all_samples()), ids=lambda p: p.name)
def test_sniff_over_fixtures(path):
    doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
    score = nccl_topo_xml.sniff(doc)
    if path.name in MINE:
        assert score >= 0.9
    else:
        assert score < 0.3


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000))
def test_never_raises_anything_else(text):
    try:
        parse_text("nccl-topo-xml", "<system " + text)
    except (ParseError, NotApplicable):
        pass


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000))
def test_never_raises_on_bytes(data):
    try:
        parse_text("nccl-topo-xml", data.decode("latin-1"))
    except (ParseError, NotApplicable):
        pass


_TAGS = st.sampled_from(["system", "cpu", "pci", "gpu", "nic", "net", "nvlink"])
_ATTRS = st.dictionaries(st.sampled_from(["busid", "dev", "gdr", "rank", "speed", "count", "link_width", "numaid",
                                          "name", "affinity"]),
                         st.text(alphabet="0x1f-. ab", max_size=6), max_size=4)


@settings(max_examples=150, deadline=None)
@given(st.recursive(st.tuples(_TAGS, _ATTRS, st.just([])),
                    lambda c: st.tuples(_TAGS, _ATTRS, st.lists(c, max_size=4)), max_leaves=20))
def test_never_raises_on_odd_trees(tree):
    def xml(node):
        tag, attrs, children = node
        a = "".join(f' {k}="{v}"' for k, v in attrs.items())
        return f"<{tag}{a}>" + "".join(xml(c) for c in children) + f"</{tag}>"

    try:
        parse_text("nccl-topo-xml", '<system version="1">' + xml(tree) + "</system>")
    except (ParseError, NotApplicable):
        pass
