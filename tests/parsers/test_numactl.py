import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.formats import all_formats
from clusterdx.facts.parsers import numactl
from tests.parsers.helpers import FORMATS, of_type, parse_fixture, parse_text

REAL = Path(__file__).parents[1] / "fixtures" / "real"
ALL_FIXTURES = sorted(p for d in (FORMATS, REAL) for p in d.iterdir() if p.is_file())
FMT = "numactl-hardware"


def test_doctests():
    assert doctest.testmod(numactl).failed == 0


def test_x86_two_sockets():
    ctx = parse_fixture(FMT, "numactl-hardware-x86.txt")
    n0, n1 = of_type(ctx, "numa.node")
    assert n0.cpus == list(range(0, 56)) + list(range(112, 168)) and n0.cpu_count == 112
    assert (n0.size_mb, n0.free_mb, n0.distances) == (1031711.0, 912407.0, [10, 21])
    assert (n1.node_id, n1.free_mb, n1.distances, n1.source.line) == (1, 947218.0, [21, 10], 5)
    assert not ctx.warnings


def test_gh200_memory_only_nodes_and_touching_distances():
    ctx = parse_fixture(FMT, "numactl-hardware-gh200.txt")
    nodes = of_type(ctx, "numa.node")
    assert [n.node_id for n in nodes] == list(range(9))
    assert nodes[0].cpu_count == 72 and nodes[0].distances == [10] + [80] * 8
    hbm = nodes[1]
    assert (hbm.cpus, hbm.cpu_count, hbm.size_mb, hbm.free_mb) == ([], 0, 97280.0, 96211.0)
    assert hbm.distances == [80, 10] + [255] * 7
    assert nodes[8].size_mb == 0.0 and nodes[8].distances[-1] == 10
    assert not ctx.warnings


def test_real_single_node_vm():
    ctx = parse_text(FMT, (REAL / "numactl-hardware-firecracker-vm.txt").read_text())
    [node] = of_type(ctx, "numa.node")
    assert (node.cpus, node.size_mb, node.free_mb, node.distances) == ([0, 1], 4058.0, 3383.0, [10])


def test_prompt_and_old_numactl_widths():
    text = ("$ numactl -H\navailable: 2 nodes (0,2)\nnode 0 cpus: 0 1\nnode 0 size: 100 MB\nnode 0 free: 50 MB\n"
            "node 2 cpus: 2 3\nnode 2 size: 100 MB\nnode 2 free: 60 MB\nnode distances:\nnode   0   2 \n"
            "  0:  10  255 \n  2:  255  10 \n")
    ctx = parse_text(FMT, text)
    assert [(n.node_id, n.distances) for n in of_type(ctx, "numa.node")] == [(0, [10, 255]), (2, [255, 10])]
    assert not ctx.warnings


def test_truncated_before_distances_warns():
    lines = (FORMATS / "numactl-hardware-x86.txt").read_text().splitlines()
    ctx = parse_text(FMT, "\n".join(lines[:6]) + "\n")  # cut after "node 1 size"
    [node0, node1] = of_type(ctx, "numa.node")
    assert node1.size_mb == 1032133.0 and node1.free_mb is None and node1.distances == []
    assert any("truncated" in msg for _, msg in ctx.warnings)


def test_not_numa_and_junk():
    with pytest.raises(NotApplicable):
        parse_text(FMT, "No NUMA available on this system\n")
    ctx = parse_text(FMT, "available: 1 nodes (0)\nnode 0 cpus: 0 x\nnode 0 size: lots MB\nnode distances:\n")
    assert [w[0] for w in ctx.warnings][:2] == [2, 3]


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: p.name)
def test_sniff_is_specific(path):
    doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
    score = all_formats()[FMT].sniff(doc)
    if path.name.startswith("numactl-hardware"):
        assert score >= 0.9
    else:
        assert score < 0.3


def _never_raises_anything_else(text):
    try:
        parse_text(FMT, text)
    except (ParseError, NotApplicable):
        pass


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000))
def test_fuzz_text(text):
    _never_raises_anything_else(text)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000).map(lambda b: b.decode("latin-1")))
def test_fuzz_bytes(text):
    _never_raises_anything_else(text)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(FORMATS.glob("numactl-*"))), st.integers(0, 3000), st.text(max_size=40))
def test_fuzz_damaged_fixture(path, cut, junk):
    text = path.read_text()
    _never_raises_anything_else(text[:cut] + junk + text[cut + len(junk):])
