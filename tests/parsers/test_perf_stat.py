import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.formats import all_formats
from clusterdx.facts.parsers import perf_stat
from tests.parsers.helpers import FORMATS, of_type, parse_fixture, parse_text

REAL = Path(__file__).parents[1] / "fixtures" / "real"
ALL_FIXTURES = sorted(p for d in (FORMATS, REAL) for p in d.iterdir() if p.is_file())
FMT = "perf-stat"


def counters(ctx):
    return {c.event: c for c in of_type(ctx, "perf.counter")}


def parse_real(name):
    return parse_text(FMT, (REAL / name).read_text(), name=name)


def test_doctests():
    assert doctest.testmod(perf_stat).failed == 0


def test_default_human_output():
    ctx = parse_fixture(FMT, "perf-stat-default.txt")
    c = counters(ctx)
    assert len(c) == 9
    tc = c["task-clock"]
    assert (tc.value, tc.unit, tc.metric_value, tc.metric_unit, tc.enabled_pct) == (
        119847.31, "msec", 11.984, "CPUs utilized", 100.0)
    cyc = c["cycles"]
    assert (cyc.value, cyc.annotation, cyc.enabled_pct, cyc.source.line) == (358109442087.0, "2.988 GHz", 71.42, 8)
    assert c["branch-misses"].annotation == "1.25% of all branches"
    assert c["context-switches"].metric_value == 402.271 and c["context-switches"].unit == ""
    [run] = of_type(ctx, "perf.stat_run")
    assert (run.target, run.elapsed_s, run.user_s, run.runs, run.hw_counters_supported) == (
        "process id '481203'", 10.000831516, None, None, True)
    [freq] = of_type(ctx, "cpu.effective_freq")
    assert (freq.ghz, freq.method, freq.cpu, freq.source.line) == (2.988, "perf-ghz-annotation", None, 8)
    [ratio] = of_type(ctx, "cpu.cycles_ref_ratio")
    assert ratio.ratio == pytest.approx(358109442087 / 251203118440)
    assert not ctx.warnings


def test_vm_legacy_without_pmu():
    ctx = parse_fixture(FMT, "perf-stat-vm-legacy.txt")
    c = counters(ctx)
    assert (c["task-clock"].value, c["task-clock"].unit, c["task-clock"].metric_value) == (612034.558122, "msec", 15.712)
    assert (c["context-switches"].value, c["context-switches"].metric_unit) == (391774.0, "K/sec")
    for event in ("cycles", "instructions", "branches", "branch-misses", "ref-cycles"):
        assert (c[event].supported, c[event].counted, c[event].value) == (False, False, None)
    [run] = of_type(ctx, "perf.stat_run")
    assert (run.target, run.elapsed_s, run.user_s, run.sys_s) == (
        "python3 bench_dataloader.py --workers 16", 38.953112406, 571.902114, 40.331287)
    assert run.hw_counters_supported is False
    assert of_type(ctx, "cpu.effective_freq") == [] and not ctx.warnings


def test_csv_intervals():
    ctx = parse_fixture(FMT, "perf-stat-csv.txt")
    rows = of_type(ctx, "perf.counter")
    assert len(rows) == 27
    assert {r.interval_s for r in rows} == {1.001122704, 2.002310188, 3.003501772}
    first = rows[0]
    assert (first.event, first.value, first.unit, first.metric_value, first.annotation) == (
        "task-clock", 11990.41, "msec", 11.977, "11.977 CPUs utilized")
    stalled = [r for r in rows if r.event == "stalled-cycles-frontend"][0]
    assert (stalled.supported, stalled.counted, stalled.enabled_pct) == (False, False, None)
    llc = [r for r in rows if r.event == "LLC-load-misses"][0]
    assert (llc.supported, llc.counted) == (True, False)
    freqs = of_type(ctx, "cpu.effective_freq")
    assert [(f.interval_s, f.ghz) for f in freqs] == [(1.001122704, 2.988), (2.002310188, 2.988), (3.003501772, 2.309)]
    assert len(of_type(ctx, "cpu.cycles_ref_ratio")) == 3
    [run] = of_type(ctx, "perf.stat_run")
    assert (run.target, run.elapsed_s, run.hw_counters_supported) == ("", None, True)
    assert not ctx.warnings


def test_real_per_cpu_human_and_csv_agree():
    human = of_type(parse_real("perf_stat-per-cpu-vm.txt"), "perf.counter")
    csv = of_type(parse_real("perf_stat-csv-per-cpu-vm.txt"), "perf.counter")
    assert [(c.event, c.cpu, c.aggregation, c.supported) for c in human] == [
        ("task-clock", 0, "CPU0", True), ("task-clock", 1, "CPU1", True),
        ("cycles", 0, "CPU0", False), ("cycles", 1, "CPU1", False)]
    assert [(c.event, c.cpu, c.supported) for c in csv] == [(c.event, c.cpu, c.supported) for c in human]
    [run] = of_type(parse_real("perf_stat-per-cpu-vm.txt"), "perf.stat_run")
    assert (run.target, run.hw_counters_supported) == ("system wide", False)


def test_real_repeat_semicolon_and_per_socket():
    [run] = of_type(parse_real("perf_stat-repeat-vm.txt"), "perf.stat_run")
    assert (run.target, run.runs, run.elapsed_s) == ("true", 3, 0.001125)
    ctx = parse_real("perf_stat-csv-semicolon-interval-vm.txt")
    tc = [c for c in of_type(ctx, "perf.counter") if c.event == "task-clock"]
    assert [(c.interval_s, c.value, c.counted) for c in tc] == [
        (0.100233157, 0.9, True), (0.200609462, None, False), (0.251849288, 0.07, True)]
    [sock] = of_type(parse_real("perf_stat-csv-per-socket-vm.txt"), "perf.counter")
    assert (sock.aggregation, sock.cpu, sock.event, sock.metric_value) == ("S0", None, "task-clock", 2.0)
    default = counters(parse_real("perf_stat-default-vm.txt"))
    assert default["page-faults"].value == 75.0 and default["cycles"].supported is False


def test_cycles_over_task_clock_and_german_locale():
    text = (" Performance counter stats for 'system wide':\n\n"
            "         2.000,50 msec task-clock                #    2,000 CPUs utilized\n"
            "     5.001.250.000      cycles\n"
            "     2.500.625.000      ref-cycles\n\n"
            "       1,000450000 seconds time elapsed\n")
    ctx = parse_text(FMT, text)
    c = counters(ctx)
    assert (c["task-clock"].value, c["task-clock"].metric_value, c["cycles"].value) == (2000.5, 2.0, 5001250000.0)
    [freq] = of_type(ctx, "cpu.effective_freq")
    assert freq.method == "cycles/task-clock" and freq.ghz == pytest.approx(2.5)
    assert of_type(ctx, "cpu.cycles_ref_ratio")[0].ratio == pytest.approx(2.0)
    assert of_type(ctx, "perf.stat_run")[0].elapsed_s == pytest.approx(1.00045)


def test_interleaved_noise_prompt_and_truncation():
    lines = (FORMATS / "perf-stat-default.txt").read_text().splitlines()
    text = "\n".join(["$ perf stat -p 481203 -- sleep 10"] + lines[:9] + ["   296,551,9"]) + "\n"
    ctx = parse_text(FMT, text)
    assert len(of_type(ctx, "perf.counter")) == 6
    assert ctx.warnings[0] == (11, "not a perf stat line: '296,551,9'")
    assert "truncated" in ctx.warnings[1][1]
    assert of_type(ctx, "perf.stat_run")[0].elapsed_s is None
    with pytest.raises(NotApplicable):
        parse_text(FMT, " Performance counter stats for 'x':\n\nError: access denied\n")
    with pytest.raises(NotApplicable):
        parse_text(FMT, "a,b,c\n1,2,3\n")


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: p.name)
def test_sniff_is_specific(path):
    doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
    score = all_formats()[FMT].sniff(doc)
    if path.name == "perf_stat-csv-per-socket-vm.txt":
        assert score == 0.5  # a single CSV line: the command line has to confirm it
    elif path.name.startswith(("perf-stat-", "perf_stat-")):
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
@given(st.sampled_from(sorted(FORMATS.glob("perf-stat-*"))), st.integers(0, 2500), st.text(max_size=40))
def test_fuzz_damaged_fixture(path, cut, junk):
    text = path.read_text()
    _never_raises_anything_else(text[:cut] + junk + text[cut + len(junk):])
