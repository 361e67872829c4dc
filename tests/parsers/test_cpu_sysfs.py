import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.formats import all_formats
from clusterdx.facts.parsers import cpu_sysfs
from tests.parsers.helpers import FORMATS, of_type, parse_fixture, parse_text

REAL = Path(__file__).parents[1] / "fixtures" / "real"
ALL_FIXTURES = sorted(p for d in (FORMATS, REAL) for p in d.iterdir() if p.is_file())
FMT = "cpu-sysfs"
ROOT = "/sys/devices/system/cpu"


def test_doctests():
    assert doctest.testmod(cpu_sysfs).failed == 0


def test_sample_dump():
    ctx = parse_fixture(FMT, "sysfs-cpufreq-cpuidle.txt")
    [p] = of_type(ctx, "cpu.freq_policy")
    assert (p.cpu, p.driver, p.governor, p.epp) == (0, "intel_pstate", "powersave", "balance_performance")
    assert (p.hw_min_mhz, p.hw_max_mhz, p.base_mhz, p.current_mhz) == (800.0, 3800.0, 2000.0, 2094.412)
    assert (p.policy_min_mhz, p.policy_max_mhz, p.boost_active) == (800.0, 3800.0, True)
    [b] = of_type(ctx, "cpu.boost")
    assert (b.enabled, b.knob, b.source.line) == (True, "intel_pstate/no_turbo", 19)
    [g] = of_type(ctx, "cpu.governor_summary")
    assert (g.governors, g.all_performance, g.cpu_count, g.epps) == (["powersave"], False, 1, ["balance_performance"])
    [d] = of_type(ctx, "cpu.idle_driver")
    assert (d.cpu, d.driver, d.governor, d.state_count, d.source.line) == (None, "intel_idle", "menu", 4, 24)
    states = of_type(ctx, "cpu.idle_state")
    assert [(s.name, s.disabled, s.latency_us) for s in states] == [
        ("POLL", False, 0.0), ("C1", False, 1.0), ("C1E", False, 4.0), ("C6", True, 170.0)]
    assert (states[3].usage, states[3].time_us, states[3].residency_us) == (4102, 3308771.0, 650.0)
    [s] = of_type(ctx, "cpu.idle_summary")
    assert (s.state_count, s.enabled_count, s.deepest_enabled, s.any_disabled, s.max_latency_us) == (
        4, 3, "C1E", True, 4.0)
    # the THP and hugepage lines at the end belong to other formats and are not warnings
    assert not ctx.warnings


def test_real_vm_cpuidle_only():
    ctx = parse_text(FMT, (REAL / "cpu_sysfs-cpuidle-firecracker-vm.txt").read_text())
    assert of_type(ctx, "cpu.freq_policy") == [] and of_type(ctx, "cpu.idle_driver") == []
    assert [s.name for s in of_type(ctx, "cpu.idle_state")] == ["POLL", "haltpoll idle"]
    [s] = of_type(ctx, "cpu.idle_summary")
    assert (s.state_count, s.enabled_count, s.any_disabled) == (2, 2, False)


def test_real_missing_cpufreq_is_not_applicable():
    with pytest.raises(NotApplicable):
        parse_text(FMT, (REAL / "cpu_sysfs-cpufreq-missing.txt").read_text())


def test_many_cpus_mixed_governors_and_acpi_boost():
    text = "".join(f"{ROOT}/cpu{c}/cpufreq/scaling_governor:{'performance' if c < 3 else 'schedutil'}\n"
                   for c in range(4))
    text += f"{ROOT}/cpufreq/boost:0\n"
    ctx = parse_text(FMT, "$ grep . /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor\n" + text)
    assert [p.cpu for p in of_type(ctx, "cpu.freq_policy")] == [0, 1, 2, 3]
    [g] = of_type(ctx, "cpu.governor_summary")
    assert (g.governors, g.all_performance, g.cpu_count) == (["performance", "schedutil"], False, 4)
    [b] = of_type(ctx, "cpu.boost")
    assert (b.enabled, b.knob) == (False, "cpufreq/boost")
    assert of_type(ctx, "cpu.freq_policy")[0].boost_active is False


def test_head_format_and_policy_dirs():
    text = (f"==> {ROOT}/cpufreq/policy0/scaling_governor <==\nperformance\n\n"
            f"==> {ROOT}/cpufreq/policy0/scaling_driver <==\namd-pstate-epp\n")
    ctx = parse_text(FMT, text)
    [p] = of_type(ctx, "cpu.freq_policy")
    assert (p.cpu, p.governor, p.driver) == (0, "performance", "amd-pstate-epp")
    assert of_type(ctx, "cpu.governor_summary")[0].all_performance is True


@pytest.mark.parametrize("command,text,expected", [
    (f"cat {ROOT}/intel_pstate/no_turbo", "1\n", ("cpu.boost", False)),
    (f"cat {ROOT}/cpufreq/boost", "1\n", ("cpu.boost", True)),
    (f"cat {ROOT}/cpu*/cpufreq/scaling_governor | sort | uniq -c", "    220 performance\n      4 powersave\n",
     ("cpu.governor_summary", 224)),
    (f"cat {ROOT}/cpu*/cpufreq/scaling_governor", "performance\nperformance\n", ("cpu.governor_summary", 2)),
])
def test_bare_values_named_by_command(command, text, expected):
    ctx = parse_text(FMT, text, command=command)
    [fact] = ctx.facts
    assert fact.fact_type == expected[0]
    assert (fact.enabled if expected[0] == "cpu.boost" else fact.cpu_count) == expected[1]


def test_bare_values_that_cannot_be_tied_to_cpus():
    with pytest.raises(NotApplicable):
        parse_text(FMT, "balance_power\nbalance_power\n",
                   command=f"cat {ROOT}/cpu*/cpufreq/energy_performance_preference")
    with pytest.raises(NotApplicable):
        parse_text(FMT, "performance\n")


def test_bad_values_warn_with_line():
    text = (f"{ROOT}/cpu0/cpuidle/state0/name:POLL\n{ROOT}/cpu0/cpuidle/state0/disable:maybe\n"
            f"{ROOT}/cpu0/cpufreq/scaling_max_freq:fast\n{ROOT}/intel_pstate/no_turbo:2\ntruncat")
    ctx = parse_text(FMT, text)
    assert sorted(w[0] for w in ctx.warnings) == [2, 3, 4, 5]
    assert of_type(ctx, "cpu.idle_state")[0].disabled is False


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: p.name)
def test_sniff_is_specific(path):
    doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
    score = all_formats()[FMT].sniff(doc)
    mine = path.name.startswith(("sysfs-cpufreq", "cpu_sysfs-")) and "missing" not in path.name
    if mine:
        assert score >= 0.9
    else:
        assert score < 0.3


def _never_raises_anything_else(text, command=None):
    try:
        parse_text(FMT, text, command=command)
    except (ParseError, NotApplicable):
        pass


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000), st.sampled_from([None, f"cat {ROOT}/cpu0/cpufreq/scaling_governor",
                                                 f"cat {ROOT}/intel_pstate/no_turbo"]))
def test_fuzz_text(text, command):
    _never_raises_anything_else(text, command)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000).map(lambda b: b.decode("latin-1")))
def test_fuzz_bytes(text):
    _never_raises_anything_else(text)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 5000), st.text(max_size=40))
def test_fuzz_damaged_fixture(cut, junk):
    text = (FORMATS / "sysfs-cpufreq-cpuidle.txt").read_text()
    _never_raises_anything_else(text[:cut] + junk + text[cut + len(junk):])
