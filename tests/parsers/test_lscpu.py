import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.formats import all_formats
from clusterdx.facts.parsers import lscpu
from tests.parsers.helpers import FORMATS, of_type, parse_fixture, parse_text

REAL = Path(__file__).parents[1] / "fixtures" / "real"
ALL_FIXTURES = sorted(p for d in (FORMATS, REAL) for p in d.iterdir() if p.is_file())


def parse_real(name: str):
    return parse_text("lscpu", (REAL / name).read_text(), name=name)


def test_doctests():
    assert doctest.testmod(lscpu).failed == 0


def test_x86_baremetal_hierarchical():
    ctx = parse_fixture("lscpu", "lscpu-x86-baremetal-hier.txt")
    [info] = of_type(ctx, "cpu.info")
    assert (info.arch, info.isa, info.vendor) == ("x86_64", "x86", "GenuineIntel")
    assert info.model_name == "Intel(R) Xeon(R) Platinum 8480+"
    assert (info.cpus, info.sockets, info.cores_per_socket, info.threads_per_core) == (224, 2, 56, 2)
    assert (info.numa_nodes, info.max_mhz, info.min_mhz, info.scaling_pct) == (2, 3800.0, 800.0, 61.0)
    assert (info.hypervisor_vendor, info.virtualization_type, info.hypervisor_flag) == ("", "", False)
    assert info.is_grace is False and info.offline_cpus == []
    nodes = of_type(ctx, "numa.node")
    assert [n.node_id for n in nodes] == [0, 1]
    assert nodes[0].cpus == list(range(0, 56)) + list(range(112, 168))
    assert nodes[1].cpu_count == 112 and nodes[1].source.line == 30
    assert nodes[0].size_mb is None and nodes[0].distances == []
    assert not ctx.warnings


def test_x86_kvm_flat():
    ctx = parse_fixture("lscpu", "lscpu-x86-kvm-flat.txt")
    [info] = of_type(ctx, "cpu.info")
    assert (info.cpus, info.cores_per_socket, info.hypervisor_vendor, info.virtualization_type) == (208, 52, "KVM", "full")
    assert info.hypervisor_flag is True and info.max_mhz is None
    assert [n.cpus[-1] for n in of_type(ctx, "numa.node")] == [103, 207]


def test_grace_baremetal_nine_nodes_eight_cpuless():
    ctx = parse_fixture("lscpu", "lscpu-grace-baremetal-hier.txt")
    [info] = of_type(ctx, "cpu.info")
    assert (info.arch, info.isa, info.vendor, info.model_name) == ("aarch64", "arm64", "ARM", "Neoverse-V2")
    assert info.is_grace is True and info.frequency_boost == "disabled"
    assert (info.max_mhz, info.min_mhz, info.numa_nodes) == (3438.0, 81.0, 9)
    nodes = of_type(ctx, "numa.node")
    assert len(nodes) == 9 and nodes[0].cpu_count == 72
    assert all(n.cpus == [] and n.cpu_count == 0 for n in nodes[1:])


def test_grace_vm_without_socket_topology():
    ctx = parse_fixture("lscpu", "lscpu-grace-kvm-flat.txt")
    [info] = of_type(ctx, "cpu.info")
    assert info.sockets is None and info.cores_per_socket is None and info.cores_per_cluster == 64
    # lscpu prints no hypervisor line on arm64 guests
    assert info.hypervisor_vendor == "" and info.is_grace is True


def test_real_terminal_output_wraps_flags_mid_word():
    ctx = parse_real("lscpu-firecracker-vm-hier.txt")
    [info] = of_type(ctx, "cpu.info")
    assert (info.vendor, info.model_name, info.cpus, info.hypervisor_vendor) == ("AuthenticAMD", "AMD EPYC", 2, "KVM")
    assert info.hypervisor_flag is True
    assert [n.cpus for n in of_type(ctx, "numa.node")] == [[0, 1]]
    assert not ctx.warnings


def test_real_flat_matches_hierarchical():
    flat = of_type(parse_real("lscpu-firecracker-vm-flat.txt"), "cpu.info")[0]
    hier = of_type(parse_real("lscpu-firecracker-vm-hier.txt"), "cpu.info")[0]
    assert flat.payload() == hier.payload()


def test_graviton_bios_is_not_grace_and_offline_cpus():
    text = ("$ lscpu\nArchitecture: aarch64\nCPU(s): 96\nOff-line CPU(s) list: 64-95\nVendor ID: ARM\n"
            "BIOS Vendor ID: AWS\nModel name: Neoverse-V2\nBIOS Model name: AWS Graviton4\n")
    [info] = of_type(parse_text("lscpu", text), "cpu.info")
    assert info.is_grace is False and info.offline_cpus == list(range(64, 96))
    text = text.replace("BIOS Vendor ID: AWS", "BIOS Vendor ID: NVIDIA").replace("AWS Graviton4", "Grace A02")
    assert of_type(parse_text("lscpu", text), "cpu.info")[0].is_grace is True


def test_old_util_linux_and_windows_line_ends():
    text = ("Architecture:          x86_64\r\nCPU(s):                96\r\nThread(s) per core:   2\r\n"
            "Core(s) per socket:    24\r\nSocket(s):             2\r\nNUMA node(s):          2\r\n"
            "Vendor ID:             GenuineIntel\r\nCPU MHz:               2700.000\r\nL1d cache:             32K\r\n"
            "NUMA node0 CPU(s):     0-23,48-71\r\nNUMA node1 CPU(s):     24-47,72-95\r\n")
    ctx = parse_text("lscpu", text)
    [info] = of_type(ctx, "cpu.info")
    assert (info.cpus, info.sockets, info.max_mhz) == (96, 2, None)
    assert of_type(ctx, "numa.node")[1].cpus[0] == 24


def test_json_output():
    text = ('{\n   "lscpu": [\n      {"field": "Architecture:", "data": "x86_64"},\n'
            '      {"field": "CPU(s):", "data": "8", "children": [\n'
            '         {"field": "On-line CPU(s) list:", "data": "0-7"}]},\n'
            '      {"field": "Socket(s):", "data": "1"},\n'
            '      {"field": "NUMA node0 CPU(s):", "data": "0-7"}\n   ]\n}\n')
    ctx = parse_text("lscpu", text)
    [info] = of_type(ctx, "cpu.info")
    assert (info.arch, info.cpus, info.sockets) == ("x86_64", 8, 1)
    [node] = of_type(ctx, "numa.node")
    assert node.cpus == list(range(8)) and node.source.line == 7
    assert lscpu.sniff(Document.from_text(text)) >= 0.9


def test_truncated_output_warns_and_keeps_what_is_there():
    lines = (FORMATS / "lscpu-x86-baremetal-hier.txt").read_text().splitlines()
    ctx = parse_text("lscpu", "\n".join(lines[:29]) + "\n")  # cut after NUMA node0
    [info] = of_type(ctx, "cpu.info")
    assert info.cpus == 224 and len(of_type(ctx, "numa.node")) == 1
    assert any("truncated" in msg for _, msg in ctx.warnings)


def test_garbage_line_is_a_warning_with_its_line():
    ctx = parse_text("lscpu", "Architecture: x86_64\nCPU(s): 4\nVendor ID: AuthenticAMD\n@@@ junk\n")
    assert ctx.warnings[0][0] == 4
    with pytest.raises(NotApplicable):
        parse_text("lscpu", "hello: world\n")
    with pytest.raises(ParseError):
        parse_text("lscpu", '{"lscpu": [')


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: p.name)
def test_sniff_is_specific(path):
    doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
    score = all_formats()["lscpu"].sniff(doc)
    if path.name.startswith("lscpu-"):
        assert score >= 0.9
    else:
        assert score < 0.3


def _never_raises_anything_else(text):
    try:
        parse_text("lscpu", text)
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
@given(st.sampled_from(sorted(FORMATS.glob("lscpu-*"))), st.integers(0, 4000), st.text(max_size=40))
def test_fuzz_damaged_fixture(path, cut, junk):
    text = path.read_text()
    _never_raises_anything_else(text[:cut] + junk + text[cut + len(junk):])
