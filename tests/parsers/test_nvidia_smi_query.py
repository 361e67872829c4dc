import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.ingest import ingest
from clusterdx.facts.parsers import nvidia_smi_query as q
from clusterdx.facts.sniff import best_format
from tests.parsers.helpers import FORMATS, of_type, parse_or_refuse, parse_text, sample_files, sniff_file

FIX = Path(__file__).parents[1] / "fixtures"
QUERY = FIX / "gpu_query"
FMT = "nvidia-smi-query"
OTHERS = [FORMATS, FIX / "real", FIX / "container", FIX / "net", FIX / "nvidia", FIX / "pcie"]


def text(name):
    return (QUERY / name).read_text()


def test_doctests():
    assert doctest.testmod(q).failed == 0


def test_header_with_units_maps_onto_gpu_facts():
    ctx = parse_text(FMT, text("query-gpu-h100-units.csv"))
    dev = {f.gpu: f for f in of_type(ctx, "gpu.device")}
    assert len(dev) == 8 and dev[0].name == "NVIDIA H100 80GB HBM3" and dev[0].bus_id == "0000:18:00.0"
    assert dev[0].power_draw_w == 512.33 and dev[0].power_limit_w == 700.0 and dev[0].gpu_util_pct == 98
    assert dev[0].memory_total_mib == 81559 and dev[7].memory_used_mib == 1 and dev[0].driver_version == "550.90.07"
    pcie = {f.gpu: f for f in of_type(ctx, "gpu.pcie")}
    assert pcie[3].width_downgraded and pcie[3].downgraded and not pcie[3].idle_gen_drop
    assert not pcie[0].downgraded
    # GPU 7 idles at P5 with the link parked at Gen1: the idle look-alike, not a downgrade under load
    assert pcie[7].gen_downgraded and pcie[7].idle_gen_drop
    thr = {f.gpu: f for f in of_type(ctx, "gpu.throttle")}
    assert thr[0].active == [] and not thr[0].power
    assert thr[2].active == ["sw_power_cap"] and thr[2].power and not thr[2].thermal
    assert thr[5].active == ["sw_thermal_slowdown", "hw_thermal_slowdown"] and thr[5].thermal
    assert thr[7].active == ["idle"]
    clk = {f.gpu: f for f in of_type(ctx, "gpu.clocks")}
    assert clk[2].sm_pct_of_max == 88.6 and clk[2].performance_state == "P0" and clk[0].sm_pct_of_max == 100.0
    ecc = {f.gpu: f for f in of_type(ctx, "gpu.ecc")}
    assert ecc[4].volatile_uncorrectable == 2 and ecc[4].retired_pages_pending is True
    assert ecc[0].volatile_uncorrectable == 0 and ecc[6].volatile_uncorrectable is None
    temp = {f.gpu: f for f in of_type(ctx, "gpu.temperature")}
    assert temp[5].gpu_c == 88 and temp[5].source.line == 7
    assert not ctx.warnings


def test_noheader_nounits_transcript_with_crlf_end_to_end(tmp_path):
    p = tmp_path / "ticket.txt"
    p.write_bytes((QUERY / "transcript-noheader-nounits.txt").read_bytes())
    res = ingest([p])
    [rec] = [r for r in res.inputs if r.format]
    assert rec.format == FMT and rec.status == "parsed"
    pcie = {f.gpu: f for f in res.facts if f.fact_type == "gpu.pcie"}
    assert pcie[3].width_current == 8 and pcie[3].downgraded and pcie[3].node == "gpu-node-07"
    # no pstate and no idle reason queried: a Gen4 link under a Gen5 max is taken as a downgrade
    assert pcie[2].gen_downgraded and not pcie[2].idle_gen_drop
    thr = {f.gpu: f for f in res.facts if f.fact_type == "gpu.throttle"}
    assert thr[1].active == ["hw_slowdown"] and thr[0].active == [] and thr[3].active == []
    assert {f.gpu: f.gpu_c for f in res.facts if f.fact_type == "gpu.temperature"} == {0: 39, 1: 45, 2: 41, 3: 40}


def test_noheader_needs_the_command():
    rows = "0, 00000000:18:00.0, 16\n1, 00000000:2A:00.0, 8\n"
    with pytest.raises(NotApplicable):
        parse_text(FMT, rows)
    ctx = parse_text(FMT, rows, command="nvidia-smi --query-gpu=index,gpu_bus_id,pcie.link.width.current "
                                        "--format=csv,noheader")
    assert [(f.gpu, f.bus_id, f.width_current) for f in ctx.facts] == [(0, "0000:18:00.0", 16), (1, "0000:2a:00.0", 8)]
    # -i 3 without an index column: the row is GPU 3
    ctx = parse_text(FMT, "8\n", command="nvidia-smi -i 3 --query-gpu=pcie.link.width.current --format=csv,noheader")
    assert [(f.gpu, f.width_current) for f in ctx.facts] == [(3, 8)]


def test_header_present_even_when_command_says_csv():
    ctx = parse_text(FMT, "pcie.link.width.current, pcie.link.width.max\n16, 16\n",
                     command="nvidia-smi --query-gpu=pcie.link.width.current,pcie.link.width.max --format=csv")
    [p] = ctx.facts
    assert p.width_current == 16 and not p.downgraded and p.source.line == 2


def test_width_threshold_both_sides():
    ctx = parse_text(FMT, "index, pcie.link.width.current, pcie.link.width.max\n0, 15, 16\n1, 16, 16\n2, 16, 8\n")
    assert [f.width_downgraded for f in ctx.facts] == [True, False, False]


def test_compute_apps():
    ctx = parse_text(FMT, text("query-compute-apps.csv"))
    apps = of_type(ctx, "gpu.process")
    assert [(a.pid, a.used_memory_mib, a.bus_id) for a in apps] == [
        (412871, 72980, "0000:18:00.0"), (412872, 72980, "0000:2a:00.0"), (412873, None, "0000:3a:00.0")]
    assert apps[0].gpu_uuid.startswith("GPU-4b1d") and apps[0].process_name == "/usr/bin/python3"
    ctx = parse_text(FMT, "412871, python3, 1024\n",
                     command="nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader")
    assert [(a.pid, a.used_memory_mib) for a in ctx.facts] == [(412871, 1024)]


def test_bad_rows_warn_and_keep_the_rest():
    ctx = parse_text(FMT, "index, pcie.link.width.current\n0, 16\n1, 16, junk\n2\n3, 8\n")
    assert [f.gpu for f in ctx.facts] == [0, 3] and [w[0] for w in ctx.warnings] == [3, 4]
    with pytest.raises(ParseError):
        parse_text(FMT, "index, pcie.link.width.current\n0\n")
    with pytest.raises(NotApplicable):
        parse_text(FMT, "index, pcie.link.width.current\n")


def test_lookalike_csvs_are_not_nvidia_smi():
    for name in ("lookalike-inventory.csv", "lookalike-metrics.csv"):
        assert q.sniff(Document.from_text(text(name))) == 0.0
        with pytest.raises(NotApplicable):
            parse_text(FMT, text(name))


def test_fabric_only_query_stays_with_the_narrow_format_and_the_rest_comes_here():
    best, _ = best_format(Document.from_text(text("query-gpu-fabric-only.csv")))
    assert best.name == "nvidia-smi-query-gpu"
    for name in ("query-gpu-h100-units.csv", "query-compute-apps.csv"):
        best, score = best_format(Document.from_text(text(name)))
        assert best.name == FMT and score >= 0.9, name
    cmd = "nvidia-smi --query-gpu=index,pcie.link.width.current,clocks_event_reasons.hw_slowdown --format=csv,noheader"
    best, _ = best_format(Document.from_text("0, 8, Active\n", command=cmd))
    assert best.name == FMT


@pytest.mark.parametrize("path", sample_files(*OTHERS), ids=lambda p: p.name)
def test_sniff_over_other_fixtures(path):
    if path.name == "fabric-query-gb200.csv":  # a --query-gpu CSV: ours too, the narrow format wins it
        assert sniff_file(q.sniff, path) == 0.85
        return
    assert sniff_file(q.sniff, path) < 0.3


def test_long_repeated_line_is_fast():
    line = "index, " + "clocks.sm [MHz], " * 5000 + "pstate\n"
    q.sniff(Document.from_text(line + line))
    parse_or_refuse(FMT, line + "0, " * 5000 + "\n")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000))
def test_never_raises_anything_else(s):
    parse_or_refuse(FMT, s)


def test_existing_gpu_rules_fire_on_the_csv(tmp_path, kb):
    from clusterdx.engine.diagnose import collect_paths, diagnose

    report = diagnose(collect_paths([QUERY / "query-gpu-h100-units.csv"]), kb=kb)
    fired = {r.rule for r in report.rules if r.outcome == "fired"}
    assert {"gpu-pcie-link-downgraded-under-load", "gpu-thermal-slowdown-active", "gpu-power-cap-clocks-low",
            "gpu-uncorrectable-ecc-volatile"} <= fired
    # the same GPUs without the x8 link, the throttle bits and the ECC errors: none of them fires
    rows = text("query-gpu-h100-units.csv").splitlines()
    (tmp_path / "smi.csv").write_text("\n".join(rows[:3]) + "\n")  # GPUs 0 and 1 only
    report = diagnose(collect_paths([tmp_path / "smi.csv"]), kb=kb)
    fired = {r.rule for r in report.rules if r.outcome == "fired"}
    assert not fired & {"gpu-pcie-link-downgraded-under-load", "gpu-thermal-slowdown-active",
                        "gpu-power-cap-clocks-low", "gpu-uncorrectable-ecc-volatile"}



def test_nvidia_smi_failure_instead_of_rows():
    cmd = "nvidia-smi --query-gpu=index,pcie.link.width.current --format=csv,noheader"
    msg = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
           "Make sure that the latest NVIDIA driver is installed and running.")
    ctx = parse_text(FMT, msg + "\n\n", command=cmd)
    [s] = ctx.facts
    assert s.fact_type == "gpu.summary" and s.gpus == 0 and s.error.startswith("NVIDIA-SMI has failed")
    ctx = parse_text(FMT, "No devices were found\n", command=cmd)
    assert ctx.facts[0].error == "No devices were found"
    # a failure line between readable rows: the rows count, the line is a warning
    ctx = parse_text(FMT, "0, 16\nUnable to determine the device handle for GPU 0000:5D:00.0: Unknown Error\n2, 16\n",
                     command=cmd)
    assert [f.gpu for f in of_type(ctx, "gpu.pcie")] == [0, 2] and ctx.warnings


def test_looping_query_repeats_its_header():
    hdr = "timestamp, index, pcie.link.width.current, pcie.link.width.max\n"
    t = (hdr + "2026/11/30 10:00:01.123, 0, 16, 16\n2026/11/30 10:00:01.124, 1, 8, 16\n"
         + hdr + "2026/11/30 10:00:02.130, 0, 16, 16\n2026/11/30 10:00:02.131, 1, 8, 16\n")
    ctx = parse_text(FMT, t, command="nvidia-smi --query-gpu=timestamp,index,pcie.link.width.current,"
                                     "pcie.link.width.max --format=csv -l 1")
    assert [(f.gpu, f.downgraded) for f in ctx.facts] == [(0, False), (1, True), (0, False), (1, True)]
    assert not ctx.warnings
