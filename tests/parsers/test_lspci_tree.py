import doctest
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.parsers import lspci_tree
from tests.parsers.helpers import FORMATS, of_type, parse_fixture, parse_text

REAL = Path(__file__).parents[1] / "fixtures" / "real"
PCIE = Path(__file__).parents[1] / "fixtures" / "pcie"
ALL_FIXTURES = sorted(p for d in (FORMATS, REAL, PCIE) for p in d.iterdir() if p.is_file())


def nodes_of(ctx):
    return {f.bdf: f for f in of_type(ctx, "pcie.tree_node")}


# -- a port of pciutils ls-tree.c (show_tree_dev/bus/bridge, print_it), to draw trees to parse ----

@dataclass
class Dev:
    dev: int
    fn: int
    name: str = ""
    #: secondary bus number and the devices on it, for bridges
    sec: int | None = None
    sub: int | None = None
    children: list["Dev"] = field(default_factory=list)


def render(roots: list[tuple[int, list[Dev]]], verbose: bool = True) -> str:
    buf = [" "] * 4096
    out: list[str] = []

    def put(p: int, s: str) -> int:
        buf[p:p + len(s)] = list(s)
        return p + len(s)

    def print_it(p: int) -> None:
        out.append("".join(buf[:p]))
        for k in range(p):
            buf[k] = "|" if buf[k] in "+|" else " "

    def show_dev(d: Dev, p: int) -> None:
        p = put(p, f"{d.dev:02x}.{d.fn:x}")
        if d.sec is not None:
            p = put(p, f"-[{d.sec:02x}]-" if d.sec == d.sub else f"-[{d.sec:02x}-{d.sub:02x}]-")
            p = put(p, "-")
            show_bus(d.children, p)
            return
        if verbose:
            p = put(p, "  " + d.name)
        print_it(p)

    def show_bus(devs: list[Dev], p: int) -> None:
        if not devs:
            print_it(p)
        elif len(devs) == 1:
            show_dev(devs[0], put(p, "--"))
        else:
            for d in devs[:-1]:
                put(p, "+-")
                show_dev(d, p + 2)
            put(p, "\\-")
            show_dev(devs[-1], p + 2)

    p = put(0, "-")
    if len(roots) == 1:
        show_bus(roots[0][1], put(p, f"[0000:{roots[0][0]:02x}]-"))
    else:
        for bus, devs in roots[:-1]:
            show_bus(devs, put(p, f"+-[0000:{bus:02x}]-"))
        show_bus(roots[-1][1], put(p, f"\\-[0000:{roots[-1][0]:02x}]-"))
    return "\n".join(out) + "\n"


def expected(roots):
    """bdf -> (parent_bdf, depth, name) for a rendered forest."""
    exp = {}

    def walk(bus, devs, parent, depth):
        for d in devs:
            bdf = f"0000:{bus:02x}:{d.dev:02x}.{d.fn}"
            exp[bdf] = (parent, depth, d.name if d.sec is None else "")
            if d.sec is not None:
                walk(d.sec, d.children, bdf, depth + 1)

    for bus, devs in roots:
        walk(bus, devs, "", 0)
    return exp


_NAMES = ["NVIDIA Corporation GH100 [H100 SXM5 80GB]", "Mellanox Technologies MT2910 Family [ConnectX-7]",
          "Intel Corporation Device 0b23", "Odd+Vendor | Co. Device -+- x", "NVIDIA Corporation GH100 [H100 NVSwitch]"]


@st.composite
def forests(draw):
    counter = [0x10]

    def devices(depth):
        n = draw(st.integers(0 if depth else 1, 4))
        slots = sorted(draw(st.sets(st.tuples(st.integers(0, 31), st.integers(0, 7)), min_size=n, max_size=n)))
        out = []
        for dev, fn in slots:
            if depth < 4 and draw(st.booleans()):
                counter[0] += 1
                sec = counter[0]
                kids = devices(depth + 1)
                out.append(Dev(dev, fn, sec=sec, sub=counter[0], children=kids))
            else:
                out.append(Dev(dev, fn, name=draw(st.sampled_from(_NAMES))))
        return out

    roots = []
    for bus in sorted(draw(st.sets(st.integers(0, 15), min_size=1, max_size=3))):
        roots.append((bus, devices(0)))
    return roots


# -- tests ------------------------------------------------------------------------------------------

def test_doctests():
    assert doctest.testmod(lspci_tree).failed == 0


def test_hgx_tree():
    ctx = parse_fixture("lspci-tv", "lspci-tv.txt")
    assert not ctx.warnings
    nodes = nodes_of(ctx)
    assert len(nodes) == 134
    g = nodes["0000:5d:00.0"]
    assert (g.parent_bdf, g.depth, g.kind, g.name, g.source.line) == (
        "0000:5b:01.0", 3, "gpu", "NVIDIA Corporation GH100 [H100 SXM5 80GB]", 45)
    assert (nodes["0000:5b:01.0"].switch_role, nodes["0000:5a:00.0"].switch_role) == ("downstream", "upstream")
    assert nodes["0000:59:01.0"].kind == "root_port" and nodes["0000:59:01.0"].parent_bdf == ""
    assert nodes["0000:02:00.0"].kind == "other" and nodes["0000:02:00.0"].depth == 2  # ASPEED behind a PCI bridge
    assert nodes["0000:01:00.0"].kind == "other" and nodes["0000:01:00.0"].bridge
    assert [n.kind for n in nodes.values()].count("gpu") == 8
    assert [n.kind for n in nodes.values()].count("nic") == 10
    assert nodes["0000:eb:00.0"].kind == "nvswitch"
    assert nodes["0000:19:00.0"].kind == "other"  # NVMe

    groups = {g.switch_bdf: g for g in of_type(ctx, "pcie.switch_group")}
    assert len(groups) == 9
    sw = groups["0000:5a:00.0"]
    assert (sw.root_port_bdf, sw.gpus, sw.nics, sw.downstream_ports, sw.gpu_nic_shared, sw.depth) == (
        "0000:59:01.0", ["0000:5d:00.0"], ["0000:5c:00.0"], 4, True, 1)
    assert sum(g.gpu_nic_shared for g in groups.values()) == 8
    nvs = groups["0000:e9:00.0"]
    assert (nvs.gpus, nvs.nics, len(nvs.nvswitches), nvs.downstream_ports) == ([], [], 4, 5)
    # the Ethernet NIC pair sits directly on a root port: in no switch group
    assert not any("0000:1f:00.0" in g.nics for g in groups.values())


def test_real_vm_trees():
    ctx = parse_text("lspci-tv", (REAL / "lspci-tv-sandbox-vm.txt").read_text())
    nodes = nodes_of(ctx)
    assert list(nodes)[0] == "0000:00:00.0" and len(nodes) == 6 and not ctx.warnings
    assert nodes["0000:00:05.0"].name == "Red Hat, Inc. Virtio 1.0 RNG"
    assert all(n.depth == 0 and n.parent_bdf == "" for n in nodes.values())
    assert of_type(ctx, "pcie.switch_group") == []
    nn = nodes_of(parse_text("lspci-tv", (REAL / "lspci-tvnn-sandbox-vm.txt").read_text()))
    n = nn["0000:00:03.0"]
    assert (n.name, n.vendor_id, n.device_id) == ("Red Hat, Inc. Virtio 1.0 network device", "1af4", "1041")


def test_nested_switches_and_address_lines():
    ctx = parse_text("lspci-tv", (PCIE / "lspci-tvvnn-nested-switch.txt").read_text())
    assert not ctx.warnings  # -tvv address lines are skipped
    nodes = nodes_of(ctx)
    assert len(nodes) == 21
    gpu = nodes["0000:05:00.0"]
    assert (gpu.parent_bdf, gpu.depth, gpu.vendor_id, gpu.device_id, gpu.kind) == ("0000:04:08.0", 5, "10de", "20b0", "gpu")
    assert gpu.name == "NVIDIA Corporation GA100 [A100 SXM4 40GB]"
    assert nodes["0000:81:00.0"].kind == "nvswitch"  # unnamed 10de:22a3
    assert nodes["0000:0d:00.0"].kind == "other"  # Intel X710 management NIC
    assert [nodes[b].switch_role for b in ("0000:01:00.0", "0000:02:00.0", "0000:03:00.0", "0000:04:08.0")] == [
        "upstream", "downstream", "upstream", "downstream"]
    groups = {g.switch_bdf: g for g in of_type(ctx, "pcie.switch_group")}
    assert list(groups) == ["0000:01:00.0", "0000:03:00.0", "0000:08:00.0"]
    outer, inner, other = groups.values()
    assert (outer.depth, outer.root_port_bdf, outer.gpus, outer.nics, outer.downstream_ports) == (
        1, "0000:00:01.1", ["0000:05:00.0", "0000:0a:00.0"], ["0000:06:00.0"], 2)
    assert (inner.depth, inner.root_port_bdf, inner.gpus, inner.nics, inner.gpu_nic_shared) == (
        3, "0000:00:01.1", ["0000:05:00.0"], ["0000:06:00.0"], True)
    assert (other.gpus, other.nics, other.gpu_nic_shared) == (["0000:0a:00.0"], [], False)


def test_filter_form():
    text = "0000:14:01.0-[15-1a]----00.0-[16-1a]--+-00.0-[17]----00.0  Mellanox Technologies MT2910 Family [ConnectX-7]\n" \
           "                                      \\-01.0-[18]----00.0  NVIDIA Corporation GH100 [H100 SXM5 80GB]\n"
    ctx = parse_text("lspci-tv", text)
    assert not ctx.warnings
    nodes = nodes_of(ctx)
    assert nodes["0000:18:00.0"].parent_bdf == "0000:16:01.0"
    [g] = of_type(ctx, "pcie.switch_group")
    assert (g.switch_bdf, g.gpu_nic_shared) == ("0000:15:00.0", True)


def test_cut_tree_warns_and_keeps_earlier_lines():
    lines = (FORMATS / "lspci-tv.txt").read_text().splitlines()
    text = "\n".join(lines[:44] + [lines[44][:52], "garbage line", "    |   +-01.0  orphan"])
    ctx = parse_text("lspci-tv", text)
    assert "0000:5c:00.0" in nodes_of(ctx) and "0000:5d:00.0" not in nodes_of(ctx)
    assert len(ctx.warnings) >= 2


def test_not_a_tree():
    with pytest.raises(NotApplicable):
        parse_text("lspci-tv", "00:00.0 Host bridge: Intel Corporation Device 0d57\n")
    with pytest.raises(ParseError):
        parse_text("lspci-tv", "-[0000:00]-\n")


@settings(max_examples=150, deadline=None)
@given(forests())
def test_round_trip_against_ls_tree_algorithm(roots):
    text = render(roots)
    ctx = parse_text("lspci-tv", text)
    assert not ctx.warnings, (text, ctx.warnings)
    got = {f.bdf: (f.parent_bdf, f.depth, f.name) for f in of_type(ctx, "pcie.tree_node")}
    assert got == expected(roots), text
    plain = {f.bdf: (f.parent_bdf, f.depth) for f in of_type(parse_text("lspci-tv", render(roots, False)),
                                                              "pcie.tree_node")}
    assert plain == {k: v[:2] for k, v in expected(roots).items()}


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_sniff(path):
    doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
    score = lspci_tree.sniff(doc)
    if path.name.startswith("lspci-t"):
        assert score >= 0.9
    else:
        assert score < 0.3


def test_command_patterns():
    fmt = lspci_tree.FORMATS[0]
    assert fmt.matches_command("lspci -tv") and fmt.matches_command("sudo lspci -t -v -nn")
    assert fmt.matches_command("lspci -vt")
    assert not fmt.matches_command("lspci -vvv") and not fmt.matches_command("lspci -vvv | grep -t x")


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=2000), st.binary(max_size=2000).map(lambda b: b.decode("latin-1"))))
def test_never_raises_anything_else(text):
    try:
        parse_text("lspci-tv", text)
    except (ParseError, NotApplicable):
        pass


_PIECES = (FORMATS / "lspci-tv.txt").read_text().splitlines()[:30] + [
    "-[0000:00]-", " +-[zzzz:00]-+-00.0", "           +-1c.0-[01-02]----00.0-[", "\\-", "+-99.9  x", "|  |  |",
    "0000:14:01.0-[15", "           |  Memory at 1000 (64-bit, prefetchable) [size=4K]", "",
]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("\n".join))
def test_structured_fuzz(text):
    try:
        parse_text("lspci-tv", text)
    except (ParseError, NotApplicable):
        pass
