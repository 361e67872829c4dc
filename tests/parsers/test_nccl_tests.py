import doctest

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.formats import all_formats
from clusterdx.facts.parsers import nccl_tests
from tests.parsers.helpers import FORMATS, of_type, parse_fixture, parse_text

FMT = "nccl-tests"
OWN = ["nccl-tests-allreduce.txt", "nccl-tests-allreduce-legacy.txt",
       "nccl-tests-allgather-interleaved.txt", "nccl-tests-reducescatter-srun-label.txt",
       "nccl-tests-alltoall-nocheck.txt"]


def run_of(ctx):
    [run] = of_type(ctx, "nccltests.run")
    return run


def test_doctests():
    assert doctest.testmod(nccl_tests).failed == 0


def test_allreduce_two_nodes():
    ctx = parse_fixture(FMT, "nccl-tests-allreduce.txt")
    assert ctx.warnings == []
    run = run_of(ctx)
    assert (run.collective, run.binary, run.tests_version, run.nccl_version) == (
        "all_reduce", "all_reduce_perf", "2.17.6", "2.21.5")
    assert (run.nranks, run.nodes, run.hosts) == (16, 2, ["gpu-h100-017", "gpu-h100-018"])
    assert (run.gpus_per_proc, run.nthread, run.check, run.warmup_iters, run.iters) == (1, 1, True, 5, 20)
    assert (run.min_bytes, run.max_bytes, run.step_factor, run.graph) == (8, 8589934592, 2, 0)
    assert (run.peak_busbw, run.peak_busbw_size, run.busbw_at_max_size) == (369.77, 8589934592, 369.77)
    assert (run.avg_busbw, run.out_of_bounds, run.wrong_total, run.latency_us) == (129.016, 0, 0, 30.91)
    assert run.ok and run.completed and run.bw_check == "" and run.single_rank_processes == 0
    assert run.node == "gpu-h100-017" and (run.source.line, run.source.end_line) == (3, 60)
    rows = of_type(ctx, "nccltests.result")
    assert len(rows) == run.rows == 31
    big = rows[-1]
    assert (big.size_bytes, big.count, big.dtype, big.redop, big.root) == (8589934592, 2147483648, "float", "sum", -1)
    assert (big.oop_time_us, big.oop_algbw, big.oop_busbw) == (43557.3, 197.21, 369.77)
    assert (big.ip_time_us, big.ip_algbw, big.ip_busbw, big.wrong) == (43877.2, 195.77, 367.07, 0)
    assert big.source.line == 56 and big.collective == "all_reduce" and big.nranks == 16
    devs = of_type(ctx, "nccltests.device")
    assert len(devs) == 16
    d = devs[11]  # the planted x8 GPU at bus 5d, on the second node
    assert (d.node, d.rank, d.pid, d.device, d.bus_id, d.pci_bus, d.group) == (
        "gpu-h100-018", 11, 1190445, 3, "0000:5d:00", "5d", 0)


def test_legacy_layout_error_column():
    ctx = parse_fixture(FMT, "nccl-tests-allreduce-legacy.txt")
    run = run_of(ctx)
    # no binary name in old releases: the busbw/algbw factor 2(n-1)/n names it
    assert (run.collective, run.collective_inferred, run.nranks, run.gpus_per_proc) == ("all_reduce", True, 8, 8)
    assert run.agg_iters is None and run.graph is None and run.nccl_version == ""
    assert (run.busbw_at_max_size, run.avg_busbw, run.ok) == (229.37, 62.7782, True)
    rows = of_type(ctx, "nccltests.result")
    assert len(rows) == 25
    assert all(r.wrong is None and r.max_error == 0.0 and r.root is None for r in rows)
    devs = of_type(ctx, "nccltests.device")
    assert {d.pid for d in devs} == {23817}
    assert (devs[0].group, devs[0].bus_id, devs[0].pci_bus, devs[0].gpu_model) == (
        None, "0x07", "07", "NVIDIA A100-SXM4-80GB")


def test_allgather_with_interleaved_nccl_lines():
    ctx = parse_fixture(FMT, "nccl-tests-allgather-interleaved.txt")
    assert ctx.warnings == []
    run = run_of(ctx)
    assert run.rows == 31 and run.nccl_version == "2.18.5"
    assert (run.peak_busbw, run.peak_busbw_size, run.busbw_at_max_size) == (353.55, 1073741824, 350.11)
    # all_gather and alltoall share the same factor and redop: left unnamed rather than guessed
    assert run.collective == "" and not run.collective_inferred
    rows = of_type(ctx, "nccltests.result")
    assert [r.size_bytes for r in rows[:3]] == [0, 0, 32]
    assert rows[2].source.line == 37
    assert run.latency_us == 9.85


def test_reduce_scatter_srun_labels():
    ctx = parse_fixture(FMT, "nccl-tests-reducescatter-srun-label.txt")
    assert ctx.warnings == []
    run = run_of(ctx)
    assert (run.collective, run.tests_version, run.nccl_version) == ("reduce_scatter", "2.19.6", "2.29.3")
    assert (run.nranks, run.nodes, run.rows, run.avg_busbw, run.ok) == (32, 4, 15, 238.991, True)
    assert run.busbw_at_max_size == 350.33 and run.max_size == 17179869184
    # the row after the interleaved WARN from task 13 is kept
    assert any(r.size_bytes == 134217728 and r.source.line == 51 for r in of_type(ctx, "nccltests.result"))


def test_alltoall_without_check_and_failed_average():
    ctx = parse_fixture(FMT, "nccl-tests-alltoall-nocheck.txt")
    run = run_of(ctx)
    assert (run.check, run.wrong_total, run.bw_check, run.ok, run.completed) == (False, None, "FAILED", False, True)
    assert (run.nodes, run.nranks, run.busbw_at_max_size, run.peak_busbw) == (4, 32, 27.16, 27.45)
    assert all(r.wrong is None and r.oop_wrong is None for r in of_type(ctx, "nccltests.result"))


def test_collective_from_transcript_command():
    text = (FORMATS / "nccl-tests-alltoall-nocheck.txt").read_text()
    ctx = parse_text(FMT, text, command="mpirun -np 32 ./build/alltoall_perf -b 1M -e 4G -c 0")
    assert run_of(ctx).collective == "alltoall"


def test_truncated_run_with_failure_line():
    lines = (FORMATS / "nccl-tests-allreduce.txt").read_text().splitlines()[:40]
    lines.append("gpu-h100-017: Test NCCL failure common.cu:1005 'remote process exited or there was a network error'")
    ctx = parse_text(FMT, "\r\n".join(lines))
    run = run_of(ctx)
    assert (run.completed, run.ok, run.avg_busbw, run.rows) == (False, False, None, 15)
    assert "remote process exited" in run.failure
    assert run.source.end_line == 41
    assert any("truncated" in msg for _, msg in ctx.warnings)


def test_processes_without_mpi_each_print_one_rank():
    header = ("{t}: # nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 "
              "agg iters: 1 validation: 1 graph: 0\n"
              "{t}: # Using devices\n"
              "{t}: #  Rank  0 Group  0 Pid {pid} on node-a device  {t} [0000:18:00] NVIDIA H100 80GB HBM3\n")
    row = "{t}:            8             2     float     sum      -1     4.10    0.00    0.00       0     4.00    0.00    0.00       0\n"
    tail = "{t}: # Out of bounds values : 0 OK\n{t}: # Avg bus bandwidth    : 0 \n"
    text = "$ srun -n 2 --label all_reduce_perf -b 8 -e 16\n"
    text += header.format(t=0, pid=100) + header.format(t=1, pid=101)
    text += row.format(t=1) + row.format(t=0) + tail.format(t=0) + tail.format(t=1)
    ctx = parse_text(FMT, text)
    runs = of_type(ctx, "nccltests.run")
    assert [(r.nranks, r.rows, r.single_rank_processes, r.peak_busbw) for r in runs] == [
        (1, 1, 2, 0.0), (1, 1, 2, 0.0)]
    assert [d.pid for d in of_type(ctx, "nccltests.device")] == [100, 101]


def test_mpirun_tag_output_and_headless_rows():
    text = ("[1,0]<stdout>:# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n"
            "[1,0]<stdout>:         8             2     float     sum      -1    30.9    0.00    0.00       0    31.1    0.00    0.00       3\n"
            "[1,0]<stdout>:# Out of bounds values : 2 FAILED\n"
            "[1,0]<stdout>:# Avg bus bandwidth    : 0.0 \n")
    ctx = parse_text(FMT, text)
    run = run_of(ctx)
    assert (run.out_of_bounds, run.wrong_total, run.ok, run.nranks) == (2, 3, False, 0)
    headless = parse_text(FMT, "           8             2     float     sum    11.58    0.00    0.00  0e+00    11.67    0.00    0.00  0e+00\n")
    assert run_of(headless).rows == 1 and headless.warnings


def test_bad_rows_are_warned_not_raised():
    text = ("# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n"
            "      8    2  float  sum  -1  abc  0.00  0.00  0  1.0  0.00  0.00  0\n"
            "      8    2  float  sum  -1  1.0  0.00\n")
    ctx = parse_text(FMT, text)
    assert run_of(ctx).rows == 0 and len(ctx.warnings) >= 2


def test_nothing_relevant_is_not_applicable():
    with pytest.raises(NotApplicable):
        parse_text(FMT, "gpu:1:1 [0] NCCL INFO Using network IB\nhello\n")


@pytest.mark.parametrize("path", sorted(FORMATS.iterdir()), ids=lambda p: p.name)
def test_sniff(path):
    text = path.read_bytes().decode("utf-8", errors="replace")
    score = nccl_tests.sniff(Document.from_text(text, name=path.name))
    if path.name in OWN:
        assert score >= 0.9
    else:
        assert score < 0.3


def test_registered():
    fmt = all_formats()[FMT]
    assert fmt.matches_command("mpirun -np 16 ./build/all_reduce_perf -b 8 -e 8G -f 2 -g 1")
    assert fmt.facts == ("nccltests.run", "nccltests.result", "nccltests.device")


def _check(text: str) -> None:
    try:
        parse_text(FMT, text)
    except (ParseError, NotApplicable):
        pass


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000))
def test_never_raises_anything_else(text):
    _check(text)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000).map(lambda b: b.decode("latin-1")))
def test_never_raises_on_bytes(text):
    _check(text)


_LINES = [ln for name in OWN for ln in (FORMATS / name).read_text().splitlines()]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_LINES), st.text(max_size=40)), max_size=40),
       st.integers(min_value=0, max_value=120))
def test_never_raises_on_mangled_reports(lines, cut):
    _check("\n".join(ln[: len(ln) - cut % (len(ln) + 1)] if i % 3 == 0 else ln
                     for i, ln in enumerate(lines)))


_BLANK_HOST = """# nThread 1 nGpus 2 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 validation: 1
#
# Using devices
#  Rank  0 Group  0 Pid   4349 on        device  0 [0x01] NVIDIA A100 80GB PCIe
#  Rank  1 Group  0 Pid   4349 on        device  1 [0x23] NVIDIA A100 80GB PCIe
#
"""


def test_device_lines_without_a_host_belong_to_the_document_node():
    ctx = parse_text(FMT, _BLANK_HOST)
    devs = of_type(ctx, "nccltests.device")
    assert [(d.host, d.device, d.gpu_model) for d in devs] == [("", 0, "NVIDIA A100 80GB PCIe"), ("", 1, "NVIDIA A100 80GB PCIe")]
    assert all(d.node == ctx.facts[0].node and d.node for d in devs)
    (run,) = of_type(ctx, "nccltests.run")
    assert (run.nodes, run.hosts) == (1, [])  # one process: one machine


def test_blank_hosts_in_several_processes_leave_the_node_count_unknown():
    text = _BLANK_HOST.replace("Rank  1 Group  0 Pid   4349", "Rank  1 Group  0 Pid   4350")
    (run,) = of_type(parse_text(FMT, text), "nccltests.run")
    assert run.nodes == 0


_DEVICES = """\
# nThread 1 nGpus {n} minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
{rows}#
"""


@pytest.mark.parametrize("buses, gap", [
    (["0x01", "0x23", "0x41", "0x61"], 30),         # one GPU per root complex (EPYC-style numbering)
    (["0x1a", "0x1b", "0x1c", "0x1d"], 1),          # consecutive buses: below one switch
    (["0000:2f:00.0", "0000:03:00.0"], 44),         # rccl-tests / newer nccl-tests print the BDF
    (["0x01"], None),                               # one GPU: no spacing
])
def test_device_list_gives_the_gpus_bus_spacing(buses, gap):
    rows = "".join(f"#  Rank {i:2d} Group  0 Pid   4349 on   node-a device {i:2d} [{b}] NVIDIA A100 80GB PCIe\n"
                   for i, b in enumerate(buses))
    run = run_of(parse_text(FMT, _DEVICES.format(n=len(buses), rows=rows)))
    assert run.min_bus_gap == gap


def test_bus_spacing_is_per_host():
    # the same bus number on two hosts is not two GPUs on one bus
    rows = ("#  Rank  0 Group  0 Pid   11 on   node-a device  0 [0x41] NVIDIA H100\n"
            "#  Rank  1 Group  0 Pid   12 on   node-b device  0 [0x41] NVIDIA H100\n"
            "#  Rank  2 Group  0 Pid   13 on   node-b device  1 [0x61] NVIDIA H100\n")
    run = run_of(parse_text(FMT, _DEVICES.format(n=1, rows=rows)))
    assert run.min_bus_gap == 32


_ELIDED = """\
#  ./all_reduce_perf -b 8 -e 128M -f 2 -g 2
# nThread 1 nGpus 2 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 validation: 1 \r
#
# Using devices
#   Rank  0 Pid   3795 on   w-system device  0 [0x01] GeForce RTX 2080 Ti
#   Rank  1 Pid   3795 on   w-system device  1 [0x02] GeForce RTX 2080 Ti
#
#                                                     out-of-place                       in-place
#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error
#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           8             2   float     sum     7.18    0.00    0.00  0e+00     7.02    0.00    0.00  0e+00
...
    67108864       8388608   float   1568.3   21.40   21.40  0e+00   1560.9   21.50   21.50  0e+00
   134217728      16777216   float   3298.6   20.34   20.34  0e+00   3070.3   21.86   21.86  0e+00
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 6.6972
"""


def test_rows_that_lost_the_redop_column_in_the_paste_are_read_by_their_numbers():
    ctx = parse_text(FMT, _ELIDED)
    rows = of_type(ctx, "nccltests.result")
    assert [r.size_bytes for r in rows] == [8, 67108864, 134217728]
    assert (rows[-1].dtype, rows[-1].redop, rows[-1].oop_busbw, rows[-1].ip_busbw) == ("float", "", 20.34, 21.86)
    assert run_of(ctx).max_size == 134217728


def test_a_row_short_of_a_number_is_still_not_understood():
    # the type then a root-like integer, not a time: no column was lost, a value is missing
    text = _ELIDED.replace("   134217728      16777216   float   3298.6", "   134217728      16777216   float   3298")
    ctx = parse_text(FMT, text)
    assert [r.size_bytes for r in of_type(ctx, "nccltests.result")] == [8, 67108864]
    assert any("not understood" in str(w) for w in ctx.warnings)
