import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.formats import all_formats
from clusterdx.facts.parsers import cpupower
from tests.parsers.helpers import FORMATS, of_type, parse_fixture, parse_text

REAL = Path(__file__).parents[1] / "fixtures" / "real"
ALL_FIXTURES = sorted(p for d in (FORMATS, REAL) for p in d.iterdir() if p.is_file())
FREQ, IDLE = "cpupower-frequency-info", "cpupower-idle-info"


def test_doctests():
    assert doctest.testmod(cpupower).failed == 0


def test_frequency_info_intel_pstate():
    ctx = parse_fixture(FREQ, "cpupower-frequency-info.txt")
    [p] = of_type(ctx, "cpu.freq_policy")
    assert (p.cpu, p.driver, p.governor, p.epp) == (37, "intel_pstate", "powersave", "balance_performance")
    assert p.available_governors == ["performance", "powersave"]
    assert (p.hw_min_mhz, p.hw_max_mhz, p.policy_min_mhz, p.policy_max_mhz) == (800.0, 3800.0, 800.0, 3800.0)
    # the hardware could not be asked, so the kernel's reading is used
    assert p.current_mhz == 2070.0
    assert (p.boost_supported, p.boost_active) == (True, True)
    assert (p.source.line, p.source.end_line) == (1, 15)
    [s] = of_type(ctx, "cpu.governor_summary")
    assert (s.governors, s.all_performance, s.cpu_count, s.epps) == (["powersave"], False, 1, ["balance_performance"])
    assert not ctx.warnings


def test_frequency_info_grace_cppc():
    ctx = parse_fixture(FREQ, "cpupower-frequency-info-grace.txt")
    [p] = of_type(ctx, "cpu.freq_policy")
    assert (p.cpu, p.driver, p.governor, p.epp) == (12, "cppc_cpufreq", "schedutil", "")
    assert (p.hw_min_mhz, p.hw_max_mhz, p.current_mhz) == (81.0, 3440.0, 3380.0)
    assert len(p.available_governors) == 6 and (p.boost_supported, p.boost_active) == (False, False)


@pytest.mark.parametrize("source", ["formats/cpupower-frequency-info-vm.txt",
                                    "real/cpupower-frequency-info-firecracker-vm.txt"])
def test_frequency_info_without_driver(source):
    path = FORMATS.parent / source
    ctx = parse_text(FREQ, path.read_text(), name=path.name)
    [p] = of_type(ctx, "cpu.freq_policy")
    assert (p.driver, p.governor, p.available_governors, p.hw_max_mhz, p.current_mhz) == ("", "", [], None, None)
    assert p.boost_supported is False
    assert of_type(ctx, "cpu.governor_summary") == []
    if "real" in source:
        # the container's "sh: 1: modprobe: not found" is reported, not hidden
        assert ctx.warnings == [(1, "before any 'analyzing CPU': 'sh: 1: modprobe: not found'")]


def test_frequency_info_all_cpus_old_wording():
    text = ("$ cpupower -c all frequency-info\n"
            "analyzing CPU 0:\n  driver: acpi-cpufreq\n  hardware limits: 1000 MHz - 2.60 GHz\n"
            "  current policy: frequency should be within 1000 MHz and 2.60 GHz.\n"
            "                  The governor \"performance\" may decide which speed to use\n"
            "                  within this range.\n"
            "  current CPU frequency is 2.60 GHz (asserted by call to hardware).\n"
            "  boost state support:\n    Supported: yes\n    Active: no\n    2600 MHz max turbo 4 active cores\n"
            "analyzing CPU 1:\n  driver: acpi-cpufreq\n"
            "  current policy: frequency should be within 1000 MHz and 2.60 GHz.\n"
            "                  The governor \"ondemand\" may decide which speed to use\n"
            "  boost state support:\n    Supported: yes\n    Active: no\n")
    ctx = parse_text(FREQ, text)
    p0, p1 = of_type(ctx, "cpu.freq_policy")
    assert (p0.cpu, p0.governor, p0.current_mhz, p0.boost_active) == (0, "performance", 2600.0, False)
    assert (p1.cpu, p1.governor, p1.source.line) == (1, "ondemand", 13)
    [s] = of_type(ctx, "cpu.governor_summary")
    assert (s.governors, s.all_performance, s.cpu_count) == (["ondemand", "performance"], False, 2)
    assert not ctx.warnings


def test_frequency_info_truncated():
    lines = (FORMATS / "cpupower-frequency-info.txt").read_text().splitlines()
    ctx = parse_text(FREQ, "\n".join(lines[:8]) + "\n")
    [p] = of_type(ctx, "cpu.freq_policy")
    assert p.governor == "" and p.policy_max_mhz == 3800.0 and p.boost_active is None
    assert any("truncated" in msg for _, msg in ctx.warnings)
    with pytest.raises(NotApplicable):
        parse_text(FREQ, "driver: intel_pstate\n")


def test_idle_info_c6_disabled():
    ctx = parse_fixture(IDLE, "cpupower-idle-info.txt")
    [d] = of_type(ctx, "cpu.idle_driver")
    assert (d.cpu, d.driver, d.governor, d.state_count) == (0, "intel_idle", "menu", 4)
    states = of_type(ctx, "cpu.idle_state")
    assert [(s.state_index, s.name, s.disabled) for s in states] == [
        (0, "POLL", False), (1, "C1", False), (2, "C1E", False), (3, "C6", True)]
    c6 = states[3]
    assert (c6.latency_us, c6.residency_us, c6.usage, c6.time_us) == (170.0, 650.0, 4102, 3308771.0)
    assert (c6.description, c6.source.line, c6.source.end_line) == ("MWAIT 0x20", 25, 30)
    [s] = of_type(ctx, "cpu.idle_summary")
    assert (s.cpu, s.state_count, s.enabled_count, s.deepest_enabled) == (0, 4, 3, "C1E")
    assert (s.any_disabled, s.max_latency_us) == (True, 4.0)
    assert not ctx.warnings


def test_idle_info_haltpoll_vm():
    ctx = parse_fixture(IDLE, "cpupower-idle-info-vm.txt")
    assert [s.name for s in of_type(ctx, "cpu.idle_state")] == ["POLL", "haltpoll"]
    [s] = of_type(ctx, "cpu.idle_summary")
    assert (s.state_count, s.enabled_count, s.deepest_enabled, s.any_disabled) == (2, 2, "haltpoll", False)


def test_idle_info_no_states():
    ctx = parse_fixture(IDLE, "cpupower-idle-info-arm-vm.txt")
    [d] = of_type(ctx, "cpu.idle_driver")
    assert (d.driver, d.governor, d.state_count) == ("none", "menu", 0)
    assert of_type(ctx, "cpu.idle_state") == []
    [s] = of_type(ctx, "cpu.idle_summary")
    assert (s.state_count, s.enabled_count, s.deepest_enabled, s.max_latency_us) == (0, 0, "", None)


def test_idle_info_real_state_name_with_space_and_no_residency():
    ctx = parse_text(IDLE, (REAL / "cpupower-idle-info-firecracker-vm.txt").read_text())
    states = of_type(ctx, "cpu.idle_state")
    assert [s.name for s in states] == ["POLL", "haltpoll idle"]
    assert states[1].residency_us is None and states[1].usage == 35428
    assert len(ctx.warnings) == 1


def test_idle_info_silent_mode_and_truncation():
    ctx = parse_text(IDLE, "CPUidle driver: intel_idle\nCPUidle governor: menu\nanalyzing CPU 4:\n\n"
                           "Number of idle states: 3\nAvailable idle states: POLL C1 C6\n")
    assert [(s.cpu, s.name) for s in of_type(ctx, "cpu.idle_state")] == [(4, "POLL"), (4, "C1"), (4, "C6")]
    assert of_type(ctx, "cpu.idle_summary")[0].deepest_enabled == "C6"
    lines = (FORMATS / "cpupower-idle-info.txt").read_text().splitlines()
    ctx = parse_text(IDLE, "\n".join(lines[:15]) + "\n")
    assert len(of_type(ctx, "cpu.idle_state")) == 2
    assert any("truncated" in msg for _, msg in ctx.warnings)
    ctx = parse_text(IDLE, "CPUidle driver: intel_idle\nanalyzing CPU 0:\nPOLL:\nLatency: soon\n")
    assert ctx.warnings == [(4, "bad latency_us value 'soon'")]


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: p.name)
def test_sniff_is_specific(path):
    doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
    for fmt in (FREQ, IDLE):
        score = all_formats()[fmt].sniff(doc)
        if path.name.startswith(fmt):
            assert score >= 0.9, fmt
        else:
            assert score < 0.3, fmt


def _never_raises_anything_else(fmt, text):
    try:
        parse_text(fmt, text)
    except (ParseError, NotApplicable):
        pass


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([FREQ, IDLE]), st.text(max_size=2000))
def test_fuzz_text(fmt, text):
    _never_raises_anything_else(fmt, text)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([FREQ, IDLE]), st.binary(max_size=2000).map(lambda b: b.decode("latin-1")))
def test_fuzz_bytes(fmt, text):
    _never_raises_anything_else(fmt, text)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(FORMATS.glob("cpupower-*"))), st.integers(0, 1500), st.text(max_size=40))
def test_fuzz_damaged_fixture(path, cut, junk):
    text = path.read_text()
    fmt = FREQ if "frequency" in path.name else IDLE
    _never_raises_anything_else(fmt, text[:cut] + junk + text[cut + len(junk):])
