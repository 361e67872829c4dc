import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.parsers import perftest
from tests.parsers.helpers import parse_text

FIXTURES = Path(__file__).parents[1] / "fixtures"
NET = FIXTURES / "net"


def run(name, command=None):
    ctx = parse_text("perftest", (NET / name).read_text(), command=command, name=name)
    return ctx, ctx.facts


def test_doctests():
    assert doctest.testmod(perftest).failed == 0


def test_cuda_sweep_on_hdr_link():
    ctx, [r] = run("perftest-ib_write_bw-cuda-q4-sweep.txt",
                   command="ib_write_bw -d mlx5_5 -i 1 -q 4 -a --report_gbits --use_cuda=3 10.20.0.18")
    assert not ctx.warnings
    assert (r.test, r.device, r.port, r.qps, r.rows) == ("ib_write_bw", "mlx5_5", 1, 4, 23)
    assert (r.msg_size_bytes, r.bw_avg_gbps, r.bw_peak_gbps, r.bw_avg_max_gbps) == (8388608, 196.36, 196.4, 196.4)
    assert (r.use_cuda, r.cuda_device, r.link_type, r.mtu, r.transport, r.connection) == \
        (True, 3, "IB", 4096, "IB", "RC")
    assert r.msg_rate_mpps == pytest.approx(0.002926, abs=1e-6)
    assert (r.source.line, r.source.end_line, r.error) == (1, 67, "")


def test_server_side_mb_per_sec_converted():
    ctx, [r] = run("perftest-ib_write_bw-server-mbsec.txt")
    assert (r.role, r.units, r.device, r.qps, r.msg_size_bytes) == ("server", "MB/sec", "mlx5_0", 1, 65536)
    # perftest's MB is 2^20 bytes: 46698.13 MB/s = 391.73 Gb/s (NDR line rate)
    assert r.bw_avg_gbps == pytest.approx(391.73, abs=0.01) and r.use_cuda is False


def test_roce_read_bw():
    ctx, [r] = run("perftest-ib_read_bw-roce.txt")
    assert (r.test, r.device, r.qps, r.link_type, r.mtu, r.gid_index) == ("ib_read_bw", "mlx5_1", 2, "Ethernet", 1024, 3)
    assert (r.bw_avg_gbps, r.bw_peak_gbps, r.msg_rate_mpps) == (168.9, 171.22, 0.322148)


def test_latency_and_cpu_frequency_warning():
    ctx, [r] = run("perftest-ib_write_lat.txt")
    assert (r.test, r.msg_size_bytes, r.lat_typical_usec, r.lat_avg_usec, r.lat_p99_usec, r.lat_max_usec) == \
        ("ib_write_lat", 2, 1.04, 1.05, 1.12, 3.87)
    assert r.bw_avg_gbps is None and r.cpu_freq_warning is True


def test_cuda_memory_registration_failure():
    ctx, [r] = run("perftest-ib_write_bw-cuda-mr-fail.txt", command="ib_write_bw -d mlx5_0 --use_cuda=0 10.20.0.18")
    assert (r.test, r.device, r.use_cuda, r.cuda_device, r.rows) == ("ib_write_bw", "mlx5_0", True, 0, 0)
    assert r.error == "Couldn't allocate MR" and r.bw_avg_gbps is None
    assert perftest.sniff(Document.from_text((NET / "perftest-ib_write_bw-cuda-mr-fail.txt").read_text())) >= 0.5


def test_two_runs_in_one_loop_and_bidirectional_dmabuf():
    one = (NET / "perftest-ib_read_bw-roce.txt").read_text()
    two = one.replace("RDMA_Read BW Test", "RDMA_Write Bidirectional BW Test").replace("mlx5_1", "mlx5_2")
    text = one + "using DMA-BUF for GPU buffer address at 0x7f0000000000 aligned at 0x7f0000000000\n" + two
    ctx = parse_text("perftest", text)
    a, b = ctx.facts
    assert (a.test, a.device, a.use_cuda, b.test, b.device, b.bidirectional) == \
        ("ib_read_bw", "mlx5_1", False, "ib_write_bw", "mlx5_2", True)
    assert b.use_cuda and b.use_cuda_dmabuf and b.source.line == 29


def test_truncated_table_warns():
    lines = (NET / "perftest-ib_write_bw-cuda-q4-sweep.txt").read_text().splitlines()
    ctx = parse_text("perftest", "\n".join(lines[:45] + [" 4096       5000             171"]))
    [r] = ctx.facts
    # rows 2 and 4 bytes, then the cut 4096-byte row (3 of 5 values)
    assert (r.rows, r.msg_size_bytes, r.bw_peak_gbps, r.bw_avg_gbps) == (3, 4096, 171.0, None)
    assert ctx.warnings == [(46, "results row has 3 values for 5 columns (truncated?)")]
    ctx = parse_text("perftest", "\n".join(lines[:43]))
    assert ctx.facts[0].rows == 0 and "no rows" in ctx.warnings[0][1]


def test_nothing_relevant_is_not_applicable():
    with pytest.raises(NotApplicable):
        parse_text("perftest", "hello\nworld\n")


def test_sniff_over_all_fixtures():
    for d in ("formats", "net", "real"):
        for path in sorted((FIXTURES / d).iterdir()):
            doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
            score = perftest.sniff(doc)
            if path.name.startswith("perftest-"):
                assert score > (0.5 if "fail" in path.name else 0.9), path.name
            else:
                assert score < 0.3, path.name


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=2000), st.binary(max_size=2000).map(lambda b: b.decode("latin-1"))))
def test_never_raises_anything_else(text):
    try:
        parse_text("perftest", text, command="ib_write_bw -q 2 -i 1 --use_cuda")
    except (ParseError, NotApplicable):
        pass


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 6000), st.text(alphabet="0123456789. \t-e#\n", max_size=60))
def test_cut_sample_never_raises(cut, tail):
    text = (NET / "perftest-ib_write_bw-cuda-q4-sweep.txt").read_text()[:cut] + tail
    try:
        parse_text("perftest", text)
    except (ParseError, NotApplicable):
        pass


def test_overflowing_number_warns():
    lines = (NET / "perftest-ib_read_bw-roce.txt").read_text().splitlines()
    ctx = parse_text("perftest", "\n".join(lines[:-2] + [" 65536      1000             1e400             1.0\t\t   0.1"]))
    assert ctx.facts[0].rows == 0 and "out of range" in ctx.warnings[0][1]


def test_huge_header_line_is_skipped_quickly():
    # found by tests/bench/fuzz_parsers.py: a 200k-character line inside the header block made
    # the key/value regex backtrack for minutes
    import time

    lines = perftest.SAMPLE.splitlines()
    k = next(i for i, ln in enumerate(lines) if "Number of qps" in ln)
    lines.insert(k, " " + "x" * 200_000)
    start = time.process_time()
    try:
        ctx = parse_text("perftest", "\n".join(lines) + "\n")
    except (ParseError, NotApplicable):
        ctx = None
    assert time.process_time() - start < 2.0
    assert ctx is not None and any("not read" in m for _, m in ctx.warnings)
