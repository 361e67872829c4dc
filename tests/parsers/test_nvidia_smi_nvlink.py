import doctest

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.parsers import nvidia_smi_nvlink as nv
from tests.parsers.helpers import FORMATS, of_type, parse_text

NVIDIA = FORMATS.parent / "nvidia"
STATUS, ERRORS, QUERY = "nvidia-smi-nvlink-status", "nvidia-smi-nvlink-errors", "nvidia-smi-query-gpu"


def fixture(fmt, name, command=None):
    return parse_text(fmt, (NVIDIA / name).read_text(), command=command, name=name)


def test_doctests():
    assert doctest.testmod(nv).failed == 0


def test_h100_status_with_two_inactive_links():
    ctx = fixture(STATUS, "nvlink-s-h100.txt")
    assert not ctx.warnings
    links = of_type(ctx, "gpu.nvlink")
    assert len(links) == 8 * 18
    down = [(f.gpu, f.link, f.source.line) for f in links if not f.active]
    assert down == [(3, 3, 62), (3, 5, 64)]
    assert {f.speed_gbps for f in links if f.active} == {26.562}
    summ = {f.gpu: f for f in of_type(ctx, "gpu.nvlink_summary")}
    assert (summ[3].links, summ[3].active, summ[3].inactive, summ[3].total_gbps) == (18, 16, 2, 424.992)
    assert (summ[0].inactive, summ[0].name, summ[0].source.line, summ[0].source.end_line) == (
        0, "NVIDIA H100 80GB HBM3", 1, 19)
    assert summ[3].uuid == "GPU-e18b6a3f-0c2d-4b95-a7e1-93d4f60b2c7a"


def test_gb200_tray_has_72_links_up():
    ctx = fixture(STATUS, "nvlink-s-gb200.txt")
    summ = of_type(ctx, "gpu.nvlink_summary")
    assert sum(f.active for f in summ) == 72 and all(f.inactive == 0 for f in summ)
    assert summ[0].total_gbps == 956.25


def test_all_links_inactive_message_and_odd_lines():
    text = ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\n"
            "\t NVML: Unable to retrieve NVLink information as all links are inActive\n"
            "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-2)\n"
            "\t Link 0: 26.562 GB/s\n"
            "\t Link 1: ??\n"
            "bash: warning: something\n")
    ctx = parse_text(STATUS, text)
    summ = {f.gpu: f for f in of_type(ctx, "gpu.nvlink_summary")}
    assert (summ[0].links, summ[0].all_inactive) == (0, True)
    assert (summ[1].links, summ[1].active) == (1, 1)
    assert [ln for ln, _ in ctx.warnings] == [5, 6]


def test_status_parser_steps_aside_for_other_outputs():
    with pytest.raises(NotApplicable):
        fixture(STATUS, "nvlink-e-gb200.txt")
    with pytest.raises(NotApplicable):
        parse_text(STATUS, "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\n")  # nvidia-smi -L


def test_gb200_error_counters_and_ber():
    ctx = fixture(ERRORS, "nvlink-e-gb200.txt")
    assert not ctx.warnings
    errs = of_type(ctx, "gpu.nvlink_errors")
    assert len(errs) == 72
    bad = [f for f in errs if f.ber_healthy is not True]
    assert len(bad) == 1
    b = bad[0]
    assert (b.gpu, b.link, b.replay, b.recovery, b.crc_flit, b.effective_errors, b.symbol_errors) == (1, 7, 412, 3, 57, 9, 1208)
    assert (b.effective_ber, b.symbol_ber, b.effective_ber_value, b.ber_healthy) == ("7e-13", "2e-10", 7e-13, False)
    assert (b.source.line, b.source.end_line) == (178, 184)
    ok = errs[0]
    assert (ok.effective_ber, ok.symbol_ber, ok.ber_healthy, ok.replay, ok.crc_data) == ("15e-255", "15e-255", True, 0, None)


def test_legacy_counters_without_ber():
    ctx = fixture(ERRORS, "nvlink-e-legacy-a100.txt")
    errs = {(f.gpu, f.link): f for f in of_type(ctx, "gpu.nvlink_errors")}
    assert len(errs) == 24
    assert (errs[(0, 4)].replay, errs[(0, 4)].crc_flit, errs[(0, 4)].ber_healthy) == (23, 118, None)
    assert errs[(1, 11)].effective_ber == "" and errs[(1, 11)].recovery == 0


def test_link_header_layout_and_split_crc():
    text = ("GPU 2: NVIDIA A100-SXM4-80GB (UUID: GPU-3)\n"
            "\t Link 0:\n"
            "\t\t Replay Errors: 1\n"
            "\t\t Data CRC Errors: 2\n"
            "\t\t Flit CRC Errors: 3\n"
            "\t\t Effective BER: N/A\n"
            "\t\t FEC Errors - 0: 1234\n"
            "\t\t Recovery Errors: lots\n")
    ctx = parse_text(ERRORS, text)
    [e] = of_type(ctx, "gpu.nvlink_errors")
    assert (e.gpu, e.link, e.replay, e.crc_data, e.crc_flit, e.recovery, e.effective_ber, e.ber_healthy) == (
        2, 0, 1, 2, 3, None, "", None)
    assert ctx.warnings[0][0] == 8


def test_errors_parser_steps_aside_for_status():
    with pytest.raises(NotApplicable):
        fixture(ERRORS, "nvlink-s-h100.txt")


def test_fabric_query_csv():
    ctx = fixture(QUERY, "fabric-query-gb200.csv")
    fab = {f.gpu: f for f in of_type(ctx, "gpu.fabric")}
    assert (fab[0].bus_id, fab[0].state, fab[0].status, fab[0].clique_id) == ("0008:01:00.0", "Completed", "Success", "32766")
    assert (fab[2].state, fab[2].status, fab[2].source.line) == ("In Progress", "", 4)
    assert fab[3].cluster_uuid == "8a1f3c2e-6b7d-4e9a-b0c1-d2e3f4a5b6c7"


def test_query_noheader_takes_columns_from_command_and_reads_pcie():
    cmd = ("nvidia-smi --query-gpu=index,pci.bus_id,pcie.link.gen.current,pcie.link.gen.max,"
           "pcie.link.width.current,pcie.link.width.max,pstate --format=csv,noheader")
    text = "0, 00000000:18:00.0, 5, 5, 16, 16, P0\n1, 00000000:5D:00.0, 5, 5, 8, 16, P0\n2, 00000000:9A:00.0, 1, 5, 16, 16, P8\nbroken\n"
    ctx = parse_text(QUERY, text, command=cmd)
    pcie = {f.gpu: f for f in of_type(ctx, "gpu.pcie")}
    assert (pcie[1].bus_id, pcie[1].width_current, pcie[1].downgraded, pcie[1].idle_gen_drop) == ("0000:5d:00.0", 8, True, False)
    assert (pcie[2].gen_downgraded, pcie[2].idle_gen_drop) == (True, True)
    assert pcie[0].downgraded is False
    assert [ln for ln, _ in ctx.warnings] == [4]


def test_query_without_relevant_columns_or_rows():
    with pytest.raises(NotApplicable):
        parse_text(QUERY, "index, name\n0, NVIDIA H100\n")
    with pytest.raises(NotApplicable):
        parse_text(QUERY, "0, Completed\n")
    with pytest.raises(ParseError):
        parse_text(QUERY, "index, fabric.state\n0\n1\n")


def test_sniffers_over_all_samples():
    expected = {
        "nvlink-s-h100.txt": nv.sniff_status, "nvlink-s-gb200.txt": nv.sniff_status,
        "nvlink-e-gb200.txt": nv.sniff_errors, "nvlink-e-legacy-a100.txt": nv.sniff_errors,
        "fabric-query-gb200.csv": nv.sniff_query,
    }
    paths = sorted(FORMATS.iterdir()) + sorted(NVIDIA.iterdir())
    for path in paths:
        doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
        for sniffer in (nv.sniff_status, nv.sniff_errors, nv.sniff_query):
            score = sniffer(doc)
            if expected.get(path.name) is sniffer:
                assert score >= 0.9, (path.name, sniffer.__name__)
            else:
                assert score < 0.3, (path.name, sniffer.__name__, score)


def _check(text, command=None):
    for fmt in (STATUS, ERRORS, QUERY):
        try:
            parse_text(fmt, text, command=command)
        except (ParseError, NotApplicable):
            pass


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000))
def test_never_raises_anything_else(text):
    _check(text, command="nvidia-smi --query-gpu=index,fabric.state --format=csv,noheader")


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000))
def test_never_raises_on_bytes(data):
    _check(data.decode("latin-1"))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["GPU 0: X (UUID: GPU-1)", "GPU 99999: Y", "\t Link 0: 26.5 GB/s",
                                 "\t Link 1: <inactive>", "\t Link 2: Replay Errors: 9",
                                 "\t Link 3:", "\t\t Symbol BER: 1e999", "\t Link 4: Effective BER: 1e-400",
                                 "index, fabric.state, pcie.link.gen.max", "0, Completed, 99999999999999999999",
                                 "all links are inActive"]), max_size=40))
def test_real_line_mixtures_never_crash(lines):
    _check("\n".join(lines))
