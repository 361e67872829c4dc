import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.parsers import dmesg
from tests.parsers.helpers import FORMATS, of_type, parse_fixture, parse_text

REAL = Path(__file__).parents[1] / "fixtures" / "real"


def strip_annotations(name: str) -> str:
    text = (FORMATS / name).read_text()
    return "\n".join(ln for ln in text.splitlines() if not ln.startswith("## "))


def events(ctx, kind=None):
    return [e for e in of_type(ctx, "dmesg.event") if kind is None or e.kind == kind]


def test_doctests():
    assert doctest.testmod(dmesg).failed == 0


def test_x86_passthrough_and_downtrained_gpu():
    ctx = parse_fixture("dmesg", "dmesg-iommu-x86.txt")
    [mode] = of_type(ctx, "iommu.mode")
    assert (mode.default_domain, mode.policy, mode.iommu, mode.set_on_cmdline) == (
        "passthrough", "", "intel", True)
    assert mode.source.line == 20
    [kv] = of_type(ctx, "kernel.version")
    assert (kv.release, kv.origin, kv.page_size_hint) == ("6.8.0-57-generic", "boot_image", "")
    limited = [e for e in events(ctx, "pcie_link") if e.code == "limited"]
    assert [(e.device, e.source.line) for e in limited] == [("0000:5d:00.0", 21)]
    assert of_type(ctx, "iommu.smmu") == []
    [summary] = of_type(ctx, "dmesg.summary")
    assert summary.has_boot and summary.lines == 38 and summary.xid_events == 0
    assert not ctx.warnings


def test_grace_baremetal_lazy_three_smmus():
    ctx = parse_fixture("dmesg", "dmesg-smmu-grace-baremetal.txt")
    [mode] = of_type(ctx, "iommu.mode")
    assert (mode.default_domain, mode.policy, mode.iommu, mode.set_on_cmdline) == (
        "translated", "lazy", "smmu", True)
    smmus = of_type(ctx, "iommu.smmu")
    assert [s.device for s in smmus] == ["arm-smmu-v3.0.auto", "arm-smmu-v3.1.auto", "arm-smmu-v3.2.auto"]
    s0 = smmus[0]
    assert (s0.cmdqv, s0.msi, s0.cmdq_entries, s0.ias_bits, s0.features_mask) == (
        False, True, 524288, 48, "0x001e1fbf")
    assert {"ats", "msi", "trans_s2", "sva", "nesting"} <= set(s0.features)
    assert (s0.source.line, s0.source.end_line) == (5, 9)
    assert of_type(ctx, "kernel.version")[0].page_size_hint == "64k"


def test_grace_vm_emulated_smmu_strict_with_cmd_sync_timeout():
    ctx = parse_fixture("dmesg", "dmesg-smmu-grace-vm.txt")
    [mode] = of_type(ctx, "iommu.mode")
    assert (mode.default_domain, mode.policy, mode.set_on_cmdline) == ("translated", "strict", False)
    [smmu] = of_type(ctx, "iommu.smmu")
    assert (smmu.msi, smmu.cmdqv, smmu.cmdq_entries, smmu.ias_bits) == (False, False, 65536, 44)
    assert "msi" not in smmu.features and "trans_s2" not in smmu.features
    [timeout] = events(ctx, "smmu_event")
    assert (timeout.device, timeout.code, timeout.source.line, timeout.uptime_s) == (
        "arm-smmu-v3.0.auto", "cmd_sync_timeout", 22, 312.778301)
    [kv] = of_type(ctx, "kernel.version")
    assert (kv.release, kv.origin) == ("6.8.0-57-generic", "banner")
    assert of_type(ctx, "dmesg.summary")[0].smmu_events == 1


def test_xid_aer_mlx5_planted_findings():
    ctx = parse_fixture("dmesg", "dmesg-xid-aer-mlx5.txt")
    xids = events(ctx, "xid")
    assert [x.code for x in xids] == ["13", "13", "43", "31", "74", "48", "63", "94", "119", "79", "154"]
    fell_off = [x for x in xids if x.code == "79"][0]
    assert (fell_off.device, fell_off.message, fell_off.process, fell_off.source.line) == (
        "0000:9a:00.0", "GPU has fallen off the bus.", "", 45)
    assert xids[0].process == "python3" and xids[3].process == "pt_main_thread"
    aer = events(ctx, "aer")
    assert [(a.device, a.code) for a in aer] == [("0000:5d:00.0", "correctable")] * 2
    assert aer[1].details == ["RxErr", "BadDLLP", "Timeout"]
    assert (aer[1].source.line, aer[1].source.end_line) == (24, 28)
    assert "Transmitter ID" in aer[1].message
    [rl] = events(ctx, "aer_ratelimit")
    assert rl.code == "41"
    mlx = events(ctx, "mlx5")
    over_temp = [m for m in mlx if m.code == "module_error"]
    assert [(m.device, m.source.line) for m in over_temp] == [("0000:aa:00.0", 17)]
    assert "High Temperature" in over_temp[0].message
    flaps = [(m.code, m.interface) for m in mlx if m.code.startswith("link")]
    assert flaps == [("link_up", "ens10f0np0"), ("link_down", "ens10f0np0"), ("link_up", "ens10f0np0")]
    assert [e.code for e in events(ctx, "pcie_hotplug")] == ["link_down", "card_not_present"]
    [summary] = of_type(ctx, "dmesg.summary")
    assert (summary.xid_events, summary.aer_events, summary.has_boot) == (11, 2, False)
    assert of_type(ctx, "iommu.mode") == []


def test_prefix_variants_all_decode_the_same_xid():
    ctx = parse_text("dmesg", strip_annotations("dmesg-prefix-variants.txt"))
    xid79 = [x for x in events(ctx, "xid") if x.code == "79"]
    assert len(xid79) == 10
    assert {x.device for x in xid79} == {"0000:9a:00.0"}
    assert {x.message for x in xid79} == {"GPU has fallen off the bus."}
    stamps = [x.timestamp for x in xid79]
    assert "Tue Jun 17 02:41:09 2025" in stamps and "2025-06-17T02:41:09,338471+00:00" in stamps
    assert "Jun 17 02:41:09" in stamps and "2025-06-17T02:41:09+0000" in stamps
    assert [x.uptime_s for x in xid79].count(81234.557113) == 5
    old = [x for x in events(ctx, "xid") if x.code in ("43", "63")]
    assert [(x.message, x.process) for x in old] == [
        ("Ch 00000010", "python3"),
        ("Row Remapper: New row marked for remapping, reset gpu to activate.", "")]
    codes = [a.code for a in events(ctx, "aer")]
    assert codes.count("uncorrectable-nonfatal") == 2 and "correctable" in codes
    assert not ctx.warnings


def test_aer_header_without_detail_and_fatal():
    text = ("[  5.0] pcieport 0000:59:01.0: AER: Uncorrectable (Fatal) error message received from 0000:5d:00.0\n"
            "[  6.0] pcieport 0000:59:01.0: AER: Correctable error message received from 0000:17:00.0\n")
    ctx = parse_text("dmesg", text)
    assert [(e.device, e.code) for e in events(ctx, "aer")] == [
        ("0000:5d:00.0", "uncorrectable-fatal"), ("0000:17:00.0", "correctable")]


def test_iommu_faults_and_cmdqv():
    text = ("[    1.0] DMAR: [DMA Read NO_PASID] Request device [5d:00.0] fault addr 0x7f000 "
            "[fault reason 0x06] PTE Read access is not set\n"
            "[    2.0] AMD-Vi: Event logged [IO_PAGE_FAULT device=0000:c1:00.0 domain=0x0000 "
            "address=0x0 flags=0x0020]\n"
            "[    3.0] arm-smmu-v3 arm-smmu-v3.0.auto: ias 48-bit, oas 48-bit (features 0x001e1fbf)\n"
            "[    3.1] tegra241-cmdqv NVDA200C:00: VCMDQ enabled\n")
    ctx = parse_text("dmesg", text)
    faults = events(ctx, "iommu_fault")
    assert [(f.device, f.code) for f in faults] == [("0000:5d:00.0", "0x06"), ("0000:c1:00.0", "IO_PAGE_FAULT")]
    [smmu] = of_type(ctx, "iommu.smmu")
    assert smmu.cmdqv is True


def test_real_firecracker_guest_log():
    ctx = parse_text("dmesg", (REAL / "dmesg-firecracker-vm.txt").read_text())
    [kv] = of_type(ctx, "kernel.version")
    assert kv.release == "6.18.44-fc-v669" and kv.origin == "banner"
    [mode] = of_type(ctx, "iommu.mode")
    assert (mode.default_domain, mode.policy, mode.iommu) == ("translated", "lazy", "")
    assert of_type(ctx, "dmesg.summary")[0].has_boot


def test_permission_denied_is_not_applicable():
    with pytest.raises(NotApplicable, match="permission"):
        parse_text("dmesg", "dmesg: read kernel buffer failed: Operation not permitted\n", command="dmesg")
    doc = Document.from_text("dmesg: read kernel buffer failed: Operation not permitted\n")
    assert dmesg.sniff(doc) >= 0.5


def test_malformed_xid_and_truncated_last_line_warn_but_parse():
    text = ("[   10.000000] NVRM: Xid (PCI:0000:2a:00): 13, pid=1, name=python3, boom\n"
            "[   11.000000] NVRM: Xid (PCI:0000:2a:0\n")
    ctx = parse_text("dmesg", text)
    assert [x.code for x in events(ctx, "xid")] == ["13"]
    assert ctx.warnings and ctx.warnings[0][0] == 2


def test_unrelated_text_is_not_applicable():
    with pytest.raises(NotApplicable):
        parse_text("dmesg", "hello\nworld\n")


@pytest.mark.parametrize("path", sorted(FORMATS.iterdir()), ids=lambda p: p.name)
def test_sniff(path):
    doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
    score = dmesg.sniff(doc)
    if path.name.startswith("dmesg"):
        assert score >= 0.5
    else:
        assert score < 0.3


def test_sniff_real():
    assert dmesg.sniff(Document.from_text((REAL / "dmesg-firecracker-vm.txt").read_text())) >= 0.9


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=2000), st.binary(max_size=2000).map(lambda b: b.decode("latin-1"))))
def test_never_raises_anything_else(text):
    try:
        parse_text("dmesg", text)
    except (ParseError, NotApplicable):
        pass


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([
    "[    0.000000] Linux version 6.8.0-64k (x)", "NVRM: Xid (PCI:0000:2a:00): 13, pid=, name=, x",
    "nvidia 0000:5d:00.0: PCIe Bus Error: severity=Weird, type=X, (Y)",
    "nvidia 0000:5d:00.0:    [ 0] RxErr                  (First)",
    "pcieport 0000:59:01.0: AER: Multiple Corrected error received: 0000:5d:00.0",
    "arm-smmu-v3 a: ias 99-bit, oas 1-bit (features 0xffffffff)", "arm-smmu-v3 a: allocated 1 entries for cmdq",
    "iommu: Default domain type: ", "iommu: DMA domain TLB invalidation policy: lazy mode",
    "mlx5_core 0000:aa:00.0: Port module event[error]: module 0, ", "kern  :warn  : ", "<4>", "",
]), max_size=30).map("\n".join))
def test_structured_fuzz(text):
    try:
        parse_text("dmesg", text)
    except (ParseError, NotApplicable):
        pass


def test_absurd_numbers_do_not_crash():
    text = ("[" + "9" * 30 + ".1] NVRM: Xid (PCI:0000:2a:00): " + "9" * 5000 + ", x\n"
            "arm-smmu-v3 a: allocated " + "9" * 5000 + " entries for cmdq\n")
    ctx = parse_text("dmesg", text)
    [xid] = events(ctx, "xid")
    assert xid.uptime_s is None and len(xid.code) == 5000
    assert of_type(ctx, "iommu.smmu")[0].cmdq_entries is None
