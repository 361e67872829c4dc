import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.parsers import perf_report
from tests.parsers.helpers import FORMATS, of_type, parse_fixture, parse_text

REAL = Path(__file__).parents[1] / "fixtures" / "real"


def families(ctx, event=None):
    return {f.family: f for f in of_type(ctx, "perf.symbol_family") if event is None or f.event == event}


def test_doctests():
    assert doctest.testmod(perf_report).failed == 0


def test_flat_profile_planted_smmu_hot_spot():
    ctx = parse_fixture("perf-report", "perf-report-smmu.txt")
    [prof] = of_type(ctx, "perf.profile")
    assert (prof.event, prof.samples, prof.event_count) == ("cycles", 1_000_000, 1871042233519)
    assert prof.has_callgraph is False and prof.lost_samples == 0 and prof.rows == 26
    assert prof.columns == ["Overhead", "Command", "Shared Object", "Symbol"]
    rows = of_type(ctx, "perf.symbol_share")
    assert len(rows) == 26
    top = rows[0]
    assert (top.symbol, top.share_pct, top.command, top.dso, top.kernel, top.marker) == (
        "arm_smmu_cmdq_issue_cmdlist", 31.87, "pt_main_thread", "[kernel.kallsyms]", True, "k")
    assert top.source.line == 12 and top.samples == 1_000_000 and top.children_pct is None
    cuda = rows[2]
    assert (cuda.symbol, cuda.dso, cuda.kernel) == ("0x0000000000341a8c", "libcuda.so.570.133.20", False)
    long_cpp = [r for r in rows if r.dso == "libtorch_cuda.so"][0]
    assert long_cpp.symbol == "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc"
    assert [r.command for r in rows if r.share_pct in (0.52, 0.12)] == ["kworker/u144:3-", "irq/203-arm-smm"]
    fam = families(ctx)
    # 31.87 + 11.42 + 2.86 + 1.32 + 0.52 + 0.12: the planted >40 % of cycles in SMMU code
    assert fam["arm_smmu"].share_pct == pytest.approx(48.11)
    assert fam["arm_smmu"].symbols[0] == "arm_smmu_cmdq_issue_cmdlist"
    assert set(fam["arm_smmu"].symbols) == {"arm_smmu_cmdq_issue_cmdlist", "arm_smmu_tlb_inv_range_domain",
                                            "arm_smmu_cmdq_batch_add", "arm_smmu_evtq_thread"}
    assert fam["page_zeroing"].share_pct == pytest.approx(0.97)
    assert fam["iommu_map"].share_pct == pytest.approx(4.77 + 3.12 + 2.05 + 1.49)
    assert fam["numa_migration"].share_pct == 0.0 and fam["numa_migration"].symbols == []
    assert fam["compaction"].share_pct == 0.0
    assert not ctx.warnings


def test_callgraph_children_self_and_header():
    ctx = parse_fixture("perf-report", "perf-report-smmu-callgraph.txt")
    [kv] = of_type(ctx, "kernel.version")
    assert (kv.release, kv.page_size_hint, kv.arch, kv.origin) == (
        "6.8.0-1021-nvidia-64k", "64k", "aarch64", "perf_header")
    [prof] = of_type(ctx, "perf.profile")
    assert prof.has_callgraph and prof.rows == 4 and prof.columns[:2] == ["Children", "Self"]
    rows = of_type(ctx, "perf.symbol_share")
    # chain frames (el0t_64_sync_handler, ...) are not rows
    assert [r.symbol for r in rows] == ["el0t_64_sync", "arm_smmu_cmdq_issue_cmdlist",
                                        "arm_smmu_cmdq_issue_cmdlist", "0x0000000000341a8c"]
    assert (rows[0].share_pct, rows[0].children_pct) == (0.0, 58.4)
    assert (rows[1].share_pct, rows[1].children_pct, rows[1].source.line) == (31.87, 31.87, 98)
    assert families(ctx)["arm_smmu"].share_pct == pytest.approx(43.29)
    assert not ctx.warnings


def test_real_two_event_report():
    ctx = parse_text("perf-report", (REAL / "perf-report-two-events.txt").read_text(), name="real")
    profs = of_type(ctx, "perf.profile")
    assert [(p.event, p.samples) for p in profs] == [("cpu-clock", 1000), ("task-clock", 1000)]
    assert {r.event for r in of_type(ctx, "perf.symbol_share")} == {"cpu-clock", "task-clock"}
    assert len(of_type(ctx, "perf.symbol_family")) == 2 * len(perf_report.FAMILIES)
    assert families(ctx, "task-clock")["arm_smmu"].share_pct == 0.0
    assert not ctx.warnings


def test_real_no_children_sort_sym_with_callchains():
    ctx = parse_text("perf-report", (REAL / "perf-report-nochildren-sort-sym.txt").read_text())
    [prof] = of_type(ctx, "perf.profile")
    assert prof.columns == ["Overhead", "Symbol"] and prof.has_callgraph
    assert prof.event == "cpu-clock:ppp" and prof.samples == 2000
    rows = of_type(ctx, "perf.symbol_share")
    assert rows[0].symbol == "chacha_permute" and rows[0].command == "" and rows[0].dso == ""
    assert all(r.share_pct >= perf_report.MIN_SHARE for r in rows)
    assert not ctx.warnings


def test_real_callgraph_of_sleep_small_sample_count():
    ctx = parse_text("perf-report", (REAL / "perf-report-callgraph-sleep.txt").read_text())
    [prof] = of_type(ctx, "perf.profile")
    assert prof.samples == 6 and prof.has_callgraph
    assert any(r.symbol == "percpu_counter_add_batch" and r.share_pct == 16.67
               for r in of_type(ctx, "perf.symbol_share"))


@pytest.mark.parametrize("name", ["perf-report-flat-callchain.txt", "perf-report-folded-callchain.txt"])
def test_real_flat_and_folded_callchains_are_not_rows(name):
    ctx = parse_text("perf-report", (REAL / name).read_text())
    [prof] = of_type(ctx, "perf.profile")
    assert prof.has_callgraph and prof.rows == 265
    rows = of_type(ctx, "perf.symbol_share")
    assert (rows[0].symbol, rows[0].share_pct, rows[0].command) == ("chacha_permute", 21.19, "python")
    assert all(r.dso for r in rows)
    assert not ctx.warnings


def test_tabs_and_prompt_fall_back_to_token_split():
    text = ("$ perf report --stdio --no-children\n"
            "# Samples: 48K of event 'cycles:P'\n"
            "# Overhead  Command          Shared Object      Symbol\n"
            "# ........  ...............  .................  ..........\n"
            "\t12.50%\tpt main thread\t[kernel.kallsyms]\t[k] clear_page_erms\n"
            "     3.00%  python3          [kernel.kallsyms]  [k] migrate_pages\n")
    ctx = parse_text("perf-report", text)
    [prof] = of_type(ctx, "perf.profile")
    assert prof.samples == 48000 and prof.event == "cycles:P"
    rows = of_type(ctx, "perf.symbol_share")
    assert (rows[0].command, rows[0].symbol, rows[0].share_pct) == ("pt main thread", "clear_page_erms", 12.5)
    fam = families(ctx)
    assert fam["page_zeroing"].share_pct == 12.5 and fam["numa_migration"].share_pct == 3.0


def test_old_events_header_and_small_rows_dropped():
    text = ("# Events: 1M cycles\n"
            "# Overhead  Command  Shared Object      Symbol\n"
            "# ........  .......  .................  ......\n"
            "    10.00%  a        [kernel.kallsyms]  [k] compact_zone\n"
            "     0.01%  a        [kernel.kallsyms]  [k] isolate_migratepages_block\n")
    ctx = parse_text("perf-report", text)
    assert of_type(ctx, "perf.profile")[0].samples == 1_000_000
    assert [r.symbol for r in of_type(ctx, "perf.symbol_share")] == ["compact_zone"]
    # rows under the 0.05 % cut still count towards their family
    assert families(ctx)["compaction"].share_pct == pytest.approx(10.01)


def test_sort_dso_has_no_symbol_families():
    text = ("# Samples: 2K of event 'cycles'\n"
            "# Overhead  Shared Object\n"
            "# ........  .................\n"
            "    80.00%  [kernel.kallsyms]\n"
            "    20.00%  libc.so.6\n")
    ctx = parse_text("perf-report", text)
    assert [r.dso for r in of_type(ctx, "perf.symbol_share")] == ["[kernel.kallsyms]", "libc.so.6"]
    assert of_type(ctx, "perf.symbol_family") == []


def test_row_cap_warns():
    rows = "".join(f"     0.10%  c  d  [k] sym_{n}\n" for n in range(perf_report.MAX_ROWS + 5))
    text = "# Samples: 1K of event 'cycles'\n# Overhead  Command  Shared Object  Symbol\n" + rows
    ctx = parse_text("perf-report", text)
    assert len(of_type(ctx, "perf.symbol_share")) == perf_report.MAX_ROWS
    assert any("more than" in w for _, w in ctx.warnings)


def test_truncated_report_keeps_rows_and_warns():
    full = (FORMATS / "perf-report-smmu.txt").read_text().splitlines()
    text = "\n".join(full[:14] + ["     4.77%  pt_main_thread   [kernel.kal"])
    ctx = parse_text("perf-report", text)
    assert len(of_type(ctx, "perf.symbol_share")) == 3
    assert any("cut-off" in w or "unreadable" in w for _, w in ctx.warnings)


def test_header_cut_off_rows_still_parsed_with_warning():
    ctx = parse_text("perf-report", "    31.87%  pt_main_thread   [kernel.kallsyms]  [k] arm_smmu_cmdq_issue_cmdlist\n")
    assert of_type(ctx, "perf.symbol_share")[0].command == "pt_main_thread"
    assert of_type(ctx, "perf.profile")[0].event == ""
    assert ctx.warnings


def test_not_a_perf_report():
    with pytest.raises(NotApplicable):
        parse_text("perf-report", " Performance counter stats for 'system wide':\n\n  1,234  cycles\n")


@pytest.mark.parametrize("path", sorted(FORMATS.iterdir()), ids=lambda p: p.name)
def test_sniff(path):
    doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
    score = perf_report.sniff(doc)
    if path.name.startswith("perf-report"):
        assert score >= 0.9
    else:
        assert score < 0.3


@pytest.mark.parametrize("name", sorted(p.name for p in REAL.glob("perf-report-*.txt")))
def test_sniff_real(name):
    assert perf_report.sniff(Document.from_text((REAL / name).read_text())) >= 0.9


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=2000), st.binary(max_size=2000).map(lambda b: b.decode("latin-1"))))
def test_never_raises_anything_else(text):
    try:
        parse_text("perf-report", text)
    except (ParseError, NotApplicable):
        pass


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([
    "# Samples: 1K of event 'cycles'", "# Overhead  Command  Shared Object  Symbol",
    "# ........  .......  .............  ......", "    12.00%  a  b  [k] arm_smmu_x",
    "     1.00%     1.00%  a  [k] y", "            |", "            ---foo", "", "#",
    "    nan%  x", "# Event count (approx.): 12", "  0.00%  [.] 0x0",
]), max_size=30).map("\n".join))
def test_structured_fuzz(text):
    try:
        parse_text("perf-report", text)
    except (ParseError, NotApplicable):
        pass


@pytest.mark.parametrize("text", [
    "# Samples: " + "9" * 5000 + " of event 'x'\n# Event count (approx.): " + "9" * 5000 + "\n",
    "# Samples: 1K of event 'x'\n    " + "9" * 400 + ".5%  a  b  [k] c\n",
])
def test_absurd_numbers_do_not_crash(text):
    try:
        ctx = parse_text("perf-report", text)
    except (ParseError, NotApplicable):
        return
    assert of_type(ctx, "perf.profile")[0].event == "x"
