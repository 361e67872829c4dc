import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.parsers import lspci_vvv
from tests.parsers.helpers import FORMATS, of_type, parse_fixture, parse_text

REAL = Path(__file__).parents[1] / "fixtures" / "real"
PCIE = Path(__file__).parents[1] / "fixtures" / "pcie"
ALL_FIXTURES = sorted(p for d in (FORMATS, REAL, PCIE) for p in d.iterdir() if p.is_file())


def by_bdf(ctx, fact_type):
    return {f.bdf: f for f in of_type(ctx, fact_type)}


def parse_file(path: Path, command=None):
    return parse_text("lspci-vvv", path.read_text(), command=command, name=path.name)


def test_doctests():
    assert doctest.testmod(lspci_vvv).failed == 0


def test_hgx_sample_planted_findings():
    ctx = parse_fixture("lspci-vvv", "lspci-vvv.txt")
    assert not ctx.warnings
    dev = by_bdf(ctx, "pcie.device")
    assert list(dev) == ["0000:16:01.0", "0000:18:00.0", "0000:17:00.0", "0000:5d:00.0"]
    sw, gpu, nic, bad = dev.values()
    assert (sw.kind, sw.class_name, sw.port_type, sw.driver, sw.iommu_group) == (
        "switch_port", "PCI bridge", "Downstream Port", "pcieport", 33)
    assert (gpu.kind, gpu.vendor, gpu.device_name, gpu.rev, gpu.numa_node, gpu.iommu_group) == (
        "gpu", "NVIDIA Corporation", "GH100 [H100 SXM5 80GB]", "a1", 0, 35)
    assert (gpu.physical_slot, gpu.max_payload_bytes, gpu.max_read_req_bytes) == ("4", 256, 4096)
    assert gpu.kernel_modules == ["nvidiafb", "nouveau", "nvidia_drm", "nvidia"]
    assert (nic.kind, nic.class_name, nic.driver, nic.iommu_group) == ("nic", "Infiniband controller", "mlx5_core", 34)
    assert (bad.iommu_group, bad.source.line, bad.source.end_line) == (71, 248, 307)

    links = by_bdf(ctx, "pcie.link")
    b = links["0000:5d:00.0"]
    assert (b.kind, b.cap_speed_gts, b.cap_width, b.sta_speed_gts, b.sta_width) == ("gpu", 32.0, 16, 32.0, 8)
    assert (b.downgraded, b.width_downgraded, b.speed_downgraded, b.link_up) == (True, True, False, True)
    assert b.lane_errors == [9, 10, 12] and b.source.line == 275
    assert not any(lk.downgraded for bdf, lk in links.items() if bdf != "0000:5d:00.0")
    assert links["0000:16:01.0"].target_speed_gts == 32.0

    [acs] = of_type(ctx, "pcie.acs")
    assert (acs.bdf, acs.kind, acs.redirect, acs.any_enabled, acs.source.line) == (
        "0000:16:01.0", "switch_port", True, True, 86)
    assert acs.ctl_enabled == ["SrcValid", "ReqRedir", "CmpltRedir", "UpstreamFwd"]
    assert acs.cap == ["SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl", "DirectTrans"]

    aer = by_bdf(ctx, "pcie.aer")
    assert len(aer) == 4
    assert (aer["0000:5d:00.0"].correctable, aer["0000:5d:00.0"].uncorrectable) == (["RxErr", "BadDLLP"], [])
    assert aer["0000:5d:00.0"].has_errors and aer["0000:5d:00.0"].source.line == 298
    assert not any(a.has_errors for bdf, a in aer.items() if bdf != "0000:5d:00.0")
    assert of_type(ctx, "pcie.ats") == []

    [s] = of_type(ctx, "pcie.summary")
    assert (s.devices, s.gpus, s.nics, s.switch_ports, s.root_ports, s.links) == (4, 2, 1, 1, 0, 4)
    assert (s.downgraded_links, s.acs_redirect_ports, s.hidden_devices, s.root, s.capabilities_visible) == (
        1, 1, 0, True, True)


def test_legacy_pciutils_36_and_access_denied():
    ctx = parse_fixture("lspci-vvv", "lspci-vvv-legacy.txt")
    assert not ctx.warnings
    dev = by_bdf(ctx, "pcie.device")
    rp, gpu, nic = dev["0000:14:01.0"], dev["0000:18:00.0"], dev["0000:17:00.0"]
    assert (rp.kind, rp.port_type, rp.vendor, rp.device_name, rp.device_id) == (
        "root_port", "Root Port", "Intel Corporation", "Device 352a", "352a")
    assert (gpu.kind, gpu.device_name, gpu.device_id, gpu.vendor_id) == ("gpu", "Device 2330", "2330", "")
    assert (nic.kind, nic.capabilities_visible, nic.driver) == ("nic", False, "mlx5_core")
    links = by_bdf(ctx, "pcie.link")
    assert set(links) == {"0000:14:01.0", "0000:18:00.0"}  # nothing known about the hidden NIC
    g = links["0000:18:00.0"]
    # "Speed unknown" = 32 GT/s not decoded by pciutils 3.6; the idle GPU is marked (downgraded)
    assert (g.cap_speed_gts, g.sta_speed_gts, g.sta_width) == (None, 2.5, 16)
    assert (g.downgraded, g.speed_downgraded, g.width_downgraded) == (True, True, False)
    r = links["0000:14:01.0"]
    assert (r.cap_speed_gts, r.sta_speed_gts, r.sta_width, r.downgraded) == (None, None, 16, False)
    [s] = of_type(ctx, "pcie.summary")
    assert (s.devices, s.hidden_devices, s.root, s.capabilities_visible, s.downgraded_links) == (3, 1, False, False, 1)


def test_old_pciutils_nn_without_markers():
    ctx = parse_file(PCIE / "lspci-vvvnn-old-pciutils.txt")
    assert not ctx.warnings  # pcilib VPD warning and -x hex dump lines are skipped
    dev = by_bdf(ctx, "pcie.device")
    sw = dev["0000:04:10.0"]
    assert (sw.class_code, sw.vendor, sw.vendor_id, sw.device_id, sw.kind) == (
        "0604", "PLX Technology, Inc.", "10b5", "8747", "switch_port")
    a100 = dev["0000:07:00.0"]
    assert (a100.kind, a100.device_name, a100.vendor_id, a100.device_id, a100.max_read_req_bytes) == (
        "gpu", "GA100 [A100 SXM4 40GB]", "10de", "20b0", 512)
    lost = dev["0000:87:00.0"]
    assert (lost.kind, lost.rev, lost.unreachable, lost.capabilities_visible) == ("gpu", "ff", True, False)
    assert (dev["0000:c1:00.0"].kind, dev["0000:0c:00.0"].kind) == ("nvswitch", "other")

    links = by_bdf(ctx, "pcie.link")
    g = links["0000:07:00.0"]  # no marker in old pciutils: computed from LnkSta < LnkCap
    assert (g.sta_speed_gts, g.cap_speed_gts, g.speed_downgraded, g.width_downgraded, g.target_speed_gts) == (
        8.0, 16.0, True, False, 8.0)
    n = links["0000:0b:00.0"]
    assert (n.sta_width, n.cap_width, n.width_downgraded, n.downgraded) == (8, 16, True, True)
    empty = links["0000:04:14.0"]  # empty slot behind a downstream port
    assert (empty.sta_width, empty.link_up, empty.downgraded) == (0, False, False)

    [acs] = of_type(ctx, "pcie.acs")
    assert (acs.ctl_enabled, acs.redirect, acs.any_enabled) == (["SrcValid"], False, True)
    [ats] = of_type(ctx, "pcie.ats")
    assert (ats.bdf, ats.enabled, ats.kind) == ("0000:0b:00.0", False, "nic")
    [aer] = of_type(ctx, "pcie.aer")
    assert (aer.uncorrectable, aer.correctable) == (["CmpltTO"], [])
    [s] = of_type(ctx, "pcie.summary")
    assert (s.devices, s.gpus, s.nics, s.nvswitches, s.switch_ports, s.downgraded_links, s.acs_redirect_ports) == (
        7, 2, 1, 1, 2, 2, 0)


def test_real_vm_output_root_and_nonroot():
    root = parse_file(REAL / "lspci-vvv-sandbox-vm.txt")
    assert not root.warnings  # "lspci: Unable to load libkmod resources" is skipped
    devs = of_type(root, "pcie.device")
    assert [d.bdf for d in devs][:2] == ["0000:00:00.0", "0000:00:01.0"] and len(devs) == 6
    assert (devs[3].class_name, devs[3].vendor, devs[3].device_name, devs[3].driver, devs[3].kind) == (
        "Ethernet controller", "Red Hat, Inc.", "Virtio 1.0 network device", "virtio-pci", "other")
    assert (devs[1].class_name, devs[1].class_code) == ("Unassigned class", "ffff")
    [s] = of_type(root, "pcie.summary")
    assert (s.devices, s.links, s.root, s.capabilities_visible) == (6, 0, True, True)

    nonroot = parse_file(REAL / "lspci-vvv-nonroot-sandbox-vm.txt")
    [s] = of_type(nonroot, "pcie.summary")
    assert (s.devices, s.hidden_devices, s.root, s.capabilities_visible) == (6, 5, False, False)
    assert not of_type(nonroot, "pcie.link")

    nn = parse_file(REAL / "lspci-vvvnn-D-sandbox-vm.txt")
    d = of_type(nn, "pcie.device")[0]
    assert (d.bdf, d.class_code, d.vendor, d.device_name, d.vendor_id, d.device_id) == (
        "0000:00:00.0", "0600", "Intel Corporation", "Device 0d57", "8086", "0d57")


def test_truncated_block_keeps_what_is_there():
    lines = (FORMATS / "lspci-vvv.txt").read_text().splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("5d:00.0"))
    cut = next(i for i in range(start, len(lines)) if "LnkCap:" in lines[i]) + 1  # just after LnkCap
    ctx = parse_text("lspci-vvv", "\n".join(lines[:cut]))
    links = by_bdf(ctx, "pcie.link")
    assert links["0000:5d:00.0"].sta_width is None and links["0000:5d:00.0"].downgraded is False
    assert any("LnkSta" in msg for _, msg in ctx.warnings)
    assert of_type(ctx, "pcie.summary")[0].devices == 4


def test_tabs_turned_into_spaces():
    text = (FORMATS / "lspci-vvv.txt").read_text().replace("\t", "    ")
    ctx = parse_text("lspci-vvv", text)
    assert not ctx.warnings
    bad = by_bdf(ctx, "pcie.link")["0000:5d:00.0"]
    assert (bad.sta_width, bad.downgraded) == (8, True)
    assert by_bdf(ctx, "pcie.device")["0000:5d:00.0"].driver == "nvidia"
    assert of_type(ctx, "pcie.acs")[0].redirect


def test_grep_output_with_bdf_from_command():
    text = "\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM not supported\n\t\tLnkSta:\tSpeed 32GT/s, Width x8 (downgraded)\n"
    ctx = parse_text("lspci-vvv", text, command="sudo lspci -vv -s 5d:00.0 | grep -E 'LnkCap|LnkSta'")
    [lk] = of_type(ctx, "pcie.link")
    assert (lk.bdf, lk.sta_width, lk.width_downgraded) == ("0000:5d:00.0", 8, True)
    # without the -s option the same lines belong to a device the excerpt does not name
    ctx = parse_text("lspci-vvv", text)
    [lk] = of_type(ctx, "pcie.link")
    assert (lk.bdf, lk.kind, lk.sta_width, lk.width_downgraded) == ("", "unknown", 8, True)
    [s] = of_type(ctx, "pcie.summary")
    assert (s.devices, s.unnamed_devices, s.excerpt, s.capabilities_visible) == (0, 1, True, False)


def test_one_line_per_device_loop_output():
    # a loop that printed each address, then its LnkCap/LnkSta joined onto the same line
    text = ("0000:01:00.0  LnkCap: Speed 32GT/s, Width x4    LnkSta: Speed 32GT/s, Width x4\n"
            "0002:01:00.0  LnkCap: Speed 32GT/s, Width x4    LnkSta: Speed 32GT/s, Width x2 (downgraded)\n"
            "0000:00:01.1: LnkCap: Port #1, Speed 16GT/s, Width x16 LnkSta: Speed 16GT/s, Width x4\n")
    ctx = parse_text("lspci-vvv", text)
    assert not ctx.warnings
    links = by_bdf(ctx, "pcie.link")
    assert sorted(links) == ["0000:00:01.1", "0000:01:00.0", "0002:01:00.0"]
    ok, bad, port = links["0000:01:00.0"], links["0002:01:00.0"], links["0000:00:01.1"]
    assert (ok.kind, ok.sta_width, ok.width_downgraded, ok.marked) == ("unknown", 4, False, False)
    assert (bad.kind, bad.cap_width, bad.sta_width, bad.width_downgraded, bad.marked) == ("unknown", 4, 2, True, True)
    # narrower than its capability but unmarked: pciutils 3.8+ does not mark root/downstream ports
    assert (port.width_downgraded, port.marked) == (True, False)
    [s] = of_type(ctx, "pcie.summary")
    assert (s.devices, s.downgraded_links, s.excerpt, s.capabilities_visible) == (3, 1, True, False)
    assert {d.kind for d in of_type(ctx, "pcie.device")} == {"unknown"}
    assert lspci_vvv.sniff(Document.from_text(text)) > 0.5


def test_header_line_is_not_one_line_form():
    # a real header whose description mentions a capability word stays a header
    text = "5d:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)\n"
    d = by_bdf(parse_text("lspci-vvv", text), "pcie.device")["0000:5d:00.0"]
    assert d.kind == "gpu"


def test_garbage_lines_warn_and_plain_lspci():
    text = "root@node:~# lspci\n00:00.0 Host bridge: Intel Corporation Device 0d57\n" \
           "18:00.0 3D controller [0302]: NVIDIA Corporation GH100 [H100 SXM5 80GB] [10de:2330] (rev a1)\n" \
           "\tNUMA node: x\n"
    ctx = parse_text("lspci-vvv", text)
    assert len(ctx.warnings) == 2 and ctx.warnings[0][0] == 1
    d = by_bdf(ctx, "pcie.device")["0000:18:00.0"]
    assert (d.kind, d.numa_node, d.capabilities_visible) == ("gpu", None, False)
    s = of_type(ctx, "pcie.summary")[0]
    assert (s.root, s.capabilities_visible, s.gpus) == (False, False, 1)


def test_not_lspci():
    with pytest.raises(NotApplicable):
        parse_text("lspci-vvv", "kernel.numa_balancing = 1\n")


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_sniff(path):
    doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
    score = lspci_vvv.sniff(doc)
    if path.name.startswith("lspci-vvv"):
        assert score >= 0.9
    else:
        assert score < 0.3


def test_command_patterns():
    fmt = lspci_vvv.FORMATS[0]
    assert fmt.matches_command("lspci -vvv") and fmt.matches_command("sudo lspci -nn -vv -s 5d:00.0")
    assert fmt.matches_command("lspci -vvv | grep -i tail")
    assert not fmt.matches_command("lspci -tv") and not fmt.matches_command("lspci -t -v")


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=2000), st.binary(max_size=2000).map(lambda b: b.decode("latin-1"))))
def test_never_raises_anything_else(text):
    try:
        parse_text("lspci-vvv", text)
    except (ParseError, NotApplicable):
        pass


_PIECES = (FORMATS / "lspci-vvv.txt").read_text().splitlines()[:60] + [
    "5d:00.0 3D controller: NVIDIA Corporation", "\t\tLnkSta:\tSpeed 99999999999999GT/s, Width x999",
    "\t\tLnkCap:\tSpeed unknown (strange), Width x", "\tCapabilities: [zz", "\tCapabilities: <access denied>",
    "\tIOMMU group: 99999999999999999999", "\t\tLaneErrStat: LaneErr at lane: 1 2 99999", "pcilib: x", "",
    "\t!!! Unknown header type 7f", "\t\t\tMaxPayload 9999999 bytes", "\t\tACSCtl:\t+ - ReqRedir+",
]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("\n".join))
def test_structured_fuzz(text):
    try:
        parse_text("lspci-vvv", text)
    except (ParseError, NotApplicable):
        pass
