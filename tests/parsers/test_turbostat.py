import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.formats import all_formats
from clusterdx.facts.parsers import turbostat
from tests.parsers.helpers import FORMATS, of_type, parse_fixture, parse_text

REAL = Path(__file__).parents[1] / "fixtures" / "real"
ALL_FIXTURES = sorted(p for d in (FORMATS, REAL) for p in d.iterdir() if p.is_file())
FMT = "turbostat"


def test_doctests():
    assert doctest.testmod(turbostat).failed == 0


def test_sample_summary_and_ragged_rows():
    ctx = parse_fixture(FMT, "turbostat.txt")
    rows = of_type(ctx, "cpu.turbostat")
    assert len(rows) == 9
    summary = rows[0]
    assert (summary.summary, summary.cpu, summary.core, summary.package) == (True, None, None, None)
    assert (summary.busy_pct, summary.bzy_mhz, summary.avg_mhz, summary.tsc_mhz) == (26.57, 3002.0, 798.0, 2000.0)
    assert (summary.c6_pct, summary.pkg_watt, summary.ram_watt, summary.pkg_tmp) == (38.2, 462.96, 76.33, 57.0)
    first = rows[1]
    assert (first.cpu, first.core, first.package, first.busy_pct, first.pkg_watt) == (0, 0, 0, 99.51, 247.13)
    sibling = rows[2]  # second thread of core 0: core- and package-level cells are not printed
    assert (sibling.cpu, sibling.busy_pct, sibling.c6_pct, sibling.pkg_watt, sibling.core_tmp) == (112, 0.47, None, None, None)
    core1 = rows[3]
    assert (core1.cpu, core1.c6_pct, core1.core_tmp, core1.pkg_watt) == (1, 0.19, 55.0, None)
    assert rows[5].package == 1 and rows[5].pkg_watt == 215.83
    assert [r.source.line for r in rows] == list(range(3, 12))
    assert not ctx.warnings


def test_interval_mode_repeats_header_and_c6_fallback():
    header = "Core\tCPU\tBusy%\tBzy_MHz\tC6%"
    text = (f"turbostat version 2024.05.10 - Len Brown <lenb@kernel.org>\nCPUID(0): GenuineIntel 0x20 CPUID levels\n"
            f"{header}\n-\t-\t50.00\t3000\t10.0\n0\t0\t100.00\t3100\t0.0\n\n"
            f"{header}\n-\t-\t40.00\t2900\t20.0\n0\t0\t80.00\t3050\t1.0\n")
    ctx = parse_text(FMT, text)
    rows = of_type(ctx, "cpu.turbostat")
    assert [(r.sample, r.summary, r.bzy_mhz) for r in rows] == [
        (0, True, 3000.0), (0, False, 3100.0), (1, True, 2900.0), (1, False, 3050.0)]
    # without CPU%c6 the OS-requested C6 time is used
    assert rows[2].c6_pct == 20.0 and rows[0].avg_mhz is None


def test_summary_only_with_spaces_instead_of_tabs():
    ctx = parse_text(FMT, "Avg_MHz  Busy%  Bzy_MHz  TSC_MHz  PkgWatt\n  812  27.10  2996  2000  455.2\n")
    [row] = of_type(ctx, "cpu.turbostat")
    assert row.summary is True and row.pkg_watt == 455.2


def test_truncated_row_and_bad_row_warn():
    lines = (FORMATS / "turbostat.txt").read_text().splitlines()
    ctx = parse_text(FMT, "\n".join(lines[:10] + ["1\t1\t169\t0"]) + "\n")
    assert any("truncated" in msg for _, msg in ctx.warnings)
    ctx = parse_text(FMT, "\n".join(lines[:4] + ["0\t1\tbusy\t99"]) + "\n")
    assert ctx.warnings[0][0] == 5 and len(of_type(ctx, "cpu.turbostat")) == 2


def test_vm_without_msr_is_not_applicable_with_reason():
    with pytest.raises(NotApplicable, match="rlimit"):
        parse_text(FMT, (REAL / "turbostat-no-msr-firecracker-vm.txt").read_text())


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: p.name)
def test_sniff_is_specific(path):
    doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
    score = all_formats()[FMT].sniff(doc)
    if path.name == "turbostat.txt":
        assert score >= 0.9
    elif path.name.startswith("turbostat-"):
        assert 0.5 <= score < 0.9  # turbostat's own error, no table
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
@given(st.integers(0, 1200), st.text(max_size=40))
def test_fuzz_damaged_fixture(cut, junk):
    text = (FORMATS / "turbostat.txt").read_text()
    _never_raises_anything_else(text[:cut] + junk + text[cut + len(junk):])
