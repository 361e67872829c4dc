import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document
from clusterdx.facts.ingest import ingest
from clusterdx.facts.parsers import health_check as hc
from clusterdx.facts.sniff import best_format
from tests.parsers.helpers import FORMATS, parse_or_refuse, parse_text, sample_files, sniff_file

FIX = Path(__file__).parents[1] / "fixtures"
HEALTH = FIX / "health"
OTHERS = [FORMATS, FIX / "real", FIX / "container", FIX / "net", FIX / "nvidia", FIX / "pcie",
          FIX / "gpu_query", FIX / "presence"]
MINE = {"dcgmi-diag-r3-h100.txt": hc.sniff_dcgmi, "dcgmi-diag-r1-transcript-crlf.txt": hc.sniff_dcgmi,
        "azure-nhc.log": hc.sniff_script, "node-check-script.txt": hc.sniff_script}


def text(name):
    return (HEALTH / name).read_text()


def test_doctests():
    assert doctest.testmod(hc).failed == 0


def test_dcgmi_r3_table():
    ctx = parse_text("dcgmi-diag", text("dcgmi-diag-r3-h100.txt"))
    by = {(f.check, f.gpu): f for f in ctx.facts}
    assert "dcgm version" not in {f.check for f in ctx.facts}  # metadata rows are not findings
    fail = by[("pcie", 3)]
    assert fail.status == "fail" and fail.category == "Integration"
    assert fail.detail.endswith("Check the PCIe link width.") and "12.80 GB/s" in fail.detail
    assert (fail.source.line, fail.source.end_line) == (21, 24)
    assert by[("pcie", None)].status == "pass" and by[("pcie", None)].detail == "GPUs: 0, 1, 2, 4, 5, 6, 7"
    assert by[("targeted power", 5)].status == "warn" and "610 W" in by[("targeted power", 5)].detail
    assert by[("eud test", None)].status == "skip" and by[("memory bandwidth", None)].status == "pass"
    assert sorted({f.status for f in ctx.facts}) == ["fail", "pass", "skip", "warn"]
    assert not ctx.warnings


def test_dcgmi_r1_transcript_crlf_end_to_end():
    res = ingest([HEALTH / "dcgmi-diag-r1-transcript-crlf.txt"])
    [rec] = res.inputs
    assert rec.format == "dcgmi-diag" and rec.status == "parsed"
    [pm] = [f for f in res.facts if f.check == "persistence mode"]
    # the failing row names no GPU; its warning names one
    assert pm.status == "fail" and pm.gpu == 2 and pm.node == "gpu-node-12" and "-pm 1" in pm.detail
    assert [f.status for f in res.facts if f.check == "inforom"] == ["skip"]


def test_dcgmi_several_failing_gpus():
    t = ("| Diagnostic | Result |\n| Memory Bandwidth | Fail - GPUs: 1, 6 |\n"
         "| Warning | GPU 6: bandwidth 2100 GB/s below 2600 GB/s |\n")
    ctx = parse_text("dcgmi-diag", t)
    assert [(f.gpu, f.status) for f in ctx.facts] == [(1, "fail"), (6, "fail")]
    assert ctx.facts[1].detail.startswith("GPU 6:") and ctx.facts[0].detail == ""


def test_health_scripts():
    ctx = parse_text("health-check", text("azure-nhc.log"))
    by = {f.check: f for f in ctx.facts}
    assert by["check_gpu_bw"].status == "fail" and by["check_gpu_bw"].gpu == 3
    assert by["check_ib_link_flapping"].device == "mlx5_ib4"
    assert by["check_gpu_count"].status == "pass" and len(ctx.facts) == 4
    ctx = parse_text("health-check", text("node-check-script.txt"))
    by = {f.check: f for f in ctx.facts}
    assert by["gpu pcie link width"].status == "fail" and by["gpu pcie link width"].gpu == 3
    assert by["infiniband ports"].status == "warn" and by["infiniband ports"].device == "mlx5_5"
    assert by["nvidia-peermem"].status == "fail" and by["nvidia-peermem"].detail == "module not loaded"
    assert by["sharp"].status == "skip" and by["gpu count"].status == "pass"
    assert "summary" not in by


def test_best_format_for_each_sample():
    for name, sniffer in MINE.items():
        fmt = "dcgmi-diag" if sniffer is hc.sniff_dcgmi else "health-check"
        lines = text(name).splitlines()
        if lines[0].startswith("["):  # the transcript: its body
            lines = lines[1:]
        best, _ = best_format(Document.from_text("\n".join(lines)))
        assert best is not None and best.name == fmt, name


def test_lookalikes_are_refused():
    for name in ("lookalike-pytest.txt", "lookalike-table.txt"):
        doc = Document.from_text(text(name))
        assert hc.sniff_script(doc) < 0.3 and hc.sniff_dcgmi(doc) < 0.3, name
    with pytest.raises(NotApplicable):
        parse_text("dcgmi-diag", text("lookalike-table.txt"))
    # one PASS line in prose is not a health-check report
    assert hc.sniff_script(Document.from_text("The job finished.\nPASS: all good\nThanks\n")) < 0.5


@pytest.mark.parametrize("path", sample_files(*OTHERS), ids=lambda p: p.name)
def test_sniff_over_other_fixtures(path):
    assert sniff_file(hc.sniff_dcgmi, path) < 0.3 and sniff_file(hc.sniff_script, path) < 0.3


@pytest.mark.slow  # ten 30-line documents of 2-10 KB lines through two parsers (about 12 s)
def test_long_lines_are_fast():
    for line in ("Check " + "x " * 1000 + ": PASS\n", "| " + "a" * 5000 + " | Pass |\n",
                 "FAIL: " + "a: " * 1500 + "\n", "Check " + " " * 1990 + "\n", "." * 1990 + ": OK x\n"):
        for fmt in ("dcgmi-diag", "health-check"):
            parse_or_refuse(fmt, line * 30)


@pytest.mark.parametrize("fmt", ["dcgmi-diag", "health-check"])
@settings(max_examples=150, deadline=None)
@given(st.text(max_size=1500))
def test_never_raises_anything_else(fmt, s):
    parse_or_refuse(fmt, s)
