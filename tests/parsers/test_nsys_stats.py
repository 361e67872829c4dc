import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.parsers import nsys_stats
from tests.parsers.helpers import FORMATS, of_type, parse_fixture, parse_text

FMT = "nsys-stats"
OWN = ["nsys-stats-cuda_api_sum.csv", "nsys-stats-cuda_gpu_kern_sum.csv", "nsys-stats-nvtx_sum.csv",
       "nsys-stats-osrt_sum.csv", "nsys-stats-stdout.txt"]


def test_doctests():
    assert doctest.testmod(nsys_stats).failed == 0


def test_kernel_summary_csv():
    ctx = parse_fixture(FMT, "nsys-stats-cuda_gpu_kern_sum.csv")
    assert ctx.warnings == []
    rows = of_type(ctx, "nsys.kernel_sum")
    assert len(rows) == 10
    gemm, flash_bwd = rows[0], rows[1]
    assert gemm.name.startswith("sm90_xmma_gemm_bf16bf16") and gemm.category == "gemm"
    assert (gemm.time_pct, gemm.total_ns, gemm.instances, gemm.avg_ns, gemm.med_ns) == (
        33.5, 11752964346.0, 19200, 612133.6, 611563.0)
    assert gemm.source.line == 2 and not gemm.name_truncated
    # a quoted C++ template name with commas, longer than 200 characters: cut, flagged
    assert flash_bwd.category == "attention" and len(flash_bwd.name) == 200 and flash_bwd.name_truncated
    assert flash_bwd.name.startswith("void flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64")
    cats = [r.category for r in rows]
    assert cats == ["gemm", "attention", "attention", "nccl", "nccl", "nccl", "other", "other", "gemm", "other"]
    [tot] = of_type(ctx, "nsys.kernel_totals")
    assert (tot.kernels, tot.instances, tot.total_ns, tot.nccl_ns) == (10, 92250, 35095261092.0, 6163262486.0)
    assert (tot.nccl_pct, tot.comm_pct, tot.gemm_pct, tot.attention_pct) == (17.562, 17.562, 34.307, 43.696)
    assert tot.top_kernel == gemm.name and tot.top_kernel_category == "gemm" and tot.top_kernel_pct == 33.489
    assert (tot.source.line, tot.source.end_line) == (1, 11)


def test_api_summary_csv():
    ctx = parse_fixture(FMT, "nsys-stats-cuda_api_sum.csv")
    rows = of_type(ctx, "nsys.api_sum")
    assert len(rows) == 12 and ctx.facts == rows
    sync = rows[0]
    assert (sync.name, sync.time_pct, sync.total_ns, sync.calls, sync.avg_ns, sync.med_ns) == (
        "cudaStreamSynchronize", 97.8, 101457578301.0, 3110, 32623015.5, 27117756.5)
    launch = [r for r in rows if r.name == "cudaLaunchKernel"][0]
    assert (launch.calls, launch.avg_ns, launch.source.line) == (95600, 7125.0, 4)


def test_osrt_summary_csv():
    ctx = parse_fixture(FMT, "nsys-stats-osrt_sum.csv")
    rows = of_type(ctx, "nsys.osrt_sum")
    assert len(rows) == 15 and ctx.warnings == []
    assert (rows[0].name, rows[0].calls, rows[0].total_ns) == ("pthread_cond_timedwait", 4120, 1031244048212.0)
    ioctl = [r for r in rows if r.name == "ioctl"][0]
    assert (ioctl.time_pct, ioctl.calls, ioctl.avg_ns, ioctl.med_ns) == (0.2, 40612, 62943.7, 38335.0)


def test_nvtx_summary_csv():
    ctx = parse_fixture(FMT, "nsys-stats-nvtx_sum.csv")
    rows = of_type(ctx, "nsys.nvtx_sum")
    assert len(rows) == 10
    step = rows[0]
    assert (step.range, step.range_name, step.domain, step.style) == (":train_step", "train_step", "", "PushPop")
    assert (step.instances, step.total_ns, step.avg_ns, step.med_ns, step.min_ns, step.max_ns) == (
        50, 104618113357.0, 2092362267.1, 2010028188.0, 1965683995.0, 6213548962.0)
    nccl = [r for r in rows if r.domain == "NCCL"]
    assert [r.range_name for r in nccl] == ["ncclCommInitRankConfig", "ncclAllReduce", "ncclAllGather",
                                            "ncclReduceScatter"]


def test_terminal_output_with_progress_lines_and_skipped_report():
    ctx = parse_fixture(FMT, "nsys-stats-stdout.txt")
    assert ctx.warnings == []
    nvtx = of_type(ctx, "nsys.nvtx_sum")
    api = of_type(ctx, "nsys.api_sum")
    kern = of_type(ctx, "nsys.kernel_sum")
    assert (len(nvtx), len(api), len(kern), len(of_type(ctx, "nsys.osrt_sum"))) == (10, 6, 6, 0)
    assert {f.profile for f in ctx.facts} == {"step_profile_rank0.sqlite"}
    assert [nvtx[0].report_index, api[0].report_index, kern[0].report_index] == [0, 1, 2]
    # thousands separators
    assert (nvtx[0].range, nvtx[0].total_ns, nvtx[0].instances, nvtx[0].source.line) == (
        ":train_step", 104618113357.0, 50, 8)
    assert (nvtx[5].range, nvtx[5].instances) == ("NCCL:ncclAllReduce", 3350)
    assert (api[2].name, api[2].calls, api[2].avg_ns) == ("cudaLaunchKernel", 95600, 7125.0)
    # names cut to the column width with an ellipsis
    assert kern[0].name.endswith("\u2026") and kern[0].name_truncated and kern[0].category == "gemm"
    assert kern[1].category == "attention" and kern[3].category == "nccl" and not kern[3].name_truncated
    [tot] = of_type(ctx, "nsys.kernel_totals")
    assert (tot.kernels, tot.total_ns, tot.nccl_pct, tot.profile) == (6, 33251427119.0, 18.535,
                                                                      "step_profile_rank0.sqlite")
    assert (tot.source.line, tot.source.end_line) == (39, 46)


OLD_TERMINAL = """\
Using report1.sqlite for SQL queries.
Running [/opt/nvidia/nsight-systems/2021.3.1/target-linux-x64/reports/cudaapisum.py report1.sqlite]...

CUDA API Statistics:

 Time(%)  Total Time (ns)  Num Calls     Average       Minimum      Maximum           Name
 -------  ---------------  ---------  -------------  ----------  -----------  ---------------------
    81.2    9,123,456,789      1,200    7,602,880.7      10,000   91,000,000  cudaStreamSynchronize
    18.8    2,112,233,445     40,000       52,805.8       2,000      900,000  cudaLaunchKernel

CUDA Kernel Statistics:

 Time(%)  Total Time (ns)  Instances    Average     Minimum     Maximum                       Name
 -------  ---------------  ---------  -----------  ---------  ---------  ----------------------------------------
    70.0    7,000,000,000      2,000  3,500,000.0  3,000,000  4,000,000  ncclKernel_AllReduce_RING_LL_Sum_half(ncclWorkElem)
    30.0    3,000,000,000     10,000    300,000.0    200,000    400,000  ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_tn

CUDA Memory Operation Statistics (by time):

 Time(%)  Total Time (ns)  Operations   Average   Minimum   Maximum      Operation
 -------  ---------------  ----------  ---------  -------  ---------  ------------------
   100.0        1,000,000          10  100,000.0   90,000    110,000  [CUDA memcpy HtoD]

Operating System Runtime API Statistics:

 Time(%)  Total Time (ns)  Num Calls    Average     Minimum    Maximum        Name
 -------  ---------------  ---------  -----------  --------  ----------  ------------
    99.0    5,000,000,000         50  100,000,000.0    10,000  200,000,000  poll
     1.0       50,000,000      1,000       50,000.0     1,000     100,000  ioctl

NVTX Push-Pop Range Statistics:

 Time(%)  Total Time (ns)  Instances     Average      Minimum     Maximum     Range
 -------  ---------------  ---------  ------------  ---------  ---------  ----------
    100.0  10,000,000,000         10  1,000,000,000.0  900,000,000  1,100,000,000  train_step
"""


def test_old_terminal_layout_2021():
    ctx = parse_text(FMT, OLD_TERMINAL)
    assert ctx.warnings == []
    [sync, launch] = of_type(ctx, "nsys.api_sum")
    assert (sync.name, sync.calls, sync.avg_ns, sync.med_ns) == ("cudaStreamSynchronize", 1200, 7602880.7, None)
    kern = of_type(ctx, "nsys.kernel_sum")
    assert [(k.category, k.instances) for k in kern] == [("nccl", 2000), ("gemm", 10000)]
    [tot] = of_type(ctx, "nsys.kernel_totals")
    assert (tot.nccl_pct, tot.gemm_pct) == (70.0, 30.0)
    assert [o.name for o in of_type(ctx, "nsys.osrt_sum")] == ["poll", "ioctl"]
    [rng] = of_type(ctx, "nsys.nvtx_sum")
    assert (rng.range, rng.range_name, rng.domain, rng.style, rng.instances) == (
        "train_step", "train_step", "", "", 10)


def test_concatenated_csv_without_progress_lines_and_other_units():
    text = (
        "Time (%),Total Time (ms),Num Calls,Avg (ms),Med (ms),Min (ms),Max (ms),StdDev (ms),Name\n"
        "90.0,900.5,10,90.05,90.0,80.0,100.0,1.0,cudaStreamSynchronize\n"
        "10.0,100.0,1000,0.1,0.1,0.05,0.2,0.01,cudaLaunchKernel\n"
        "\n"
        "Time (%),Total Time (ms),Num Calls,Avg (ms),Med (ms),Min (ms),Max (ms),StdDev (ms),Name\n"
        "80.0,800.0,40,20.0,20.0,10.0,30.0,1.0,futex\n"
        "20.0,200.0,10,20.0,20.0,10.0,30.0,1.0,ioctl\n"
        "\n"
        "Time (%),Total Time (ms),Instances,Avg (ms),Med (ms),Min (ms),Max (ms),StdDev (ms),GridXYZ,BlockXYZ,Name\n"
        '100.0,50.0,5,10.0,10.0,9.0,11.0,0.5,"132    1    1","384    1    1","nvjet_tst_128x256_64x4_2x1_v_bz_coopA_TNT"\n'
    )
    ctx = parse_text(FMT, text, name="rank3_stats.csv")
    [sync, launch] = of_type(ctx, "nsys.api_sum")
    assert (sync.total_ns, sync.avg_ns, sync.calls) == (900500000.0, 90050000.0, 10)
    assert [o.name for o in of_type(ctx, "nsys.osrt_sum")] == ["futex", "ioctl"]
    [k] = of_type(ctx, "nsys.kernel_sum")
    assert (k.category, k.total_ns, k.instances, k.report_index) == ("gemm", 50000000.0, 5, 2)


def test_report_name_from_file_name():
    text = "Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n" \
           "100.0,1000,10,100.0,100.0,90,110,1.0,custom_wrapper\n"
    assert of_type(parse_text(FMT, text, name="out_cuda_api_sum.csv"), "nsys.api_sum")[0].name == "custom_wrapper"
    assert of_type(parse_text(FMT, text, name="out_osrt_sum.csv"), "nsys.osrt_sum")[0].name == "custom_wrapper"


def test_rows_capped_at_fifty_with_warning():
    head = "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
    rows = "".join(f"1.0,{1000 - i},1,{1000 - i}.0,1.0,1,1,0.0,kernel_{i}\n" for i in range(80))
    ctx = parse_text(FMT, head + rows)
    kern = of_type(ctx, "nsys.kernel_sum")
    assert len(kern) == 50 and kern[-1].name == "kernel_49"
    [tot] = of_type(ctx, "nsys.kernel_totals")
    assert tot.kernels == 80 and tot.total_ns == sum(1000 - i for i in range(80))
    assert len(ctx.warnings) == 1 and "top 50" in ctx.warnings[0][1] and ctx.warnings[0][0] == 1


def test_truncated_file_keeps_whole_rows_and_warns():
    text = (FORMATS / "nsys-stats-osrt_sum.csv").read_text()
    cut = text[: text.index("0.0,7139520,311") + len("0.0,7139520,311")]
    ctx = parse_text(FMT, cut)
    rows = of_type(ctx, "nsys.osrt_sum")
    assert len(rows) == 14 and rows[-1].name == "open64"
    assert len(ctx.warnings) == 1 and ctx.warnings[0][0] == 16 and "cut off" in ctx.warnings[0][1]


def test_truncated_quoted_kernel_name():
    text = (FORMATS / "nsys-stats-cuda_gpu_kern_sum.csv").read_text()
    cut = text[: text.index("Flash_bwd_kernel_traits") + 10]
    ctx = parse_text(FMT, cut)
    assert len(of_type(ctx, "nsys.kernel_sum")) == 1 and ctx.warnings


def test_unreadable_number_is_warned_and_row_skipped():
    text = ("Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
            "50.0,100,1,100.0,100.0,100,100,0.0,good_kernel\n"
            "50.0,n/a,1,100.0,100.0,100,100,0.0,bad_kernel\n")
    ctx = parse_text(FMT, text)
    assert [k.name for k in of_type(ctx, "nsys.kernel_sum")] == ["good_kernel"]
    assert ctx.warnings and ctx.warnings[0][0] == 3


def test_only_skipped_reports_is_not_applicable():
    text = ("Processing [r.sqlite] with [/opt/nsys/reports/osrt_sum.py]... \n"
            "SKIPPED: r.sqlite does not contain OS Runtime trace data.\n")
    with pytest.raises(NotApplicable):
        parse_text(FMT, text)
    with pytest.raises(NotApplicable):
        parse_text(FMT, "hello\nworld\n")


def test_header_without_rows():
    head = "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
    [tot] = parse_text(FMT, head).facts
    assert (tot.fact_type, tot.kernels, tot.total_ns, tot.nccl_pct, tot.top_kernel) == (
        "nsys.kernel_totals", 0, 0.0, 0.0, "")
    bad = head + "x,y,z\n"
    with pytest.raises(ParseError):
        parse_text(FMT, bad.replace("Instances", "Num Calls"))


def test_other_reports_are_skipped():
    text = ("Processing [r.sqlite] with [/opt/nsys/reports/cuda_gpu_sum.py]...\n"
            "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Category,Operation\n"
            "100.0,10,1,10.0,10.0,10,10,0.0,CUDA_KERNEL,foo\n"
            "Processing [r.sqlite] with [/opt/nsys/reports/nvtx_gpu_proj_sum.py]...\n"
            "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Style,Range\n"
            "100.0,10,1,10.0,10.0,10,10,0.0,PushPop,:step\n"
            "Processing [r.sqlite] with [/opt/nsys/reports/nvtx_sum.py]...\n"
            "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Style,Range\n"
            "100.0,20,2,10.0,10.0,10,10,0.0,StartEnd,:step\n")
    ctx = parse_text(FMT, text)
    assert [(f.fact_type, f.style, f.instances) for f in ctx.facts] == [("nsys.nvtx_sum", "StartEnd", 2)]


def test_kernel_categories():
    cat = nsys_stats.kernel_category
    assert cat("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)") == "nccl"
    assert cat("void deep_ep::internode::dispatch<8, 4>(void*)") == "nvshmem"
    assert cat("nvshmemi_transfer_rma_kernel") == "nvshmem"
    assert cat("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3") == "attention"
    assert cat("nvjet_tst_192x192_64x4_1x2_h_bz_coopB_TNN") == "gemm"
    assert cat("void at::native::vectorized_elementwise_kernel<4>") == "other"


def _doc_for(path: Path) -> Document:
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        return Document(name=path.name, lines=[], raw=data)
    return Document.from_text(data.decode("utf-8", "replace"), name=path.name)


def test_sniff_over_all_fixtures():
    for path in sorted(FORMATS.iterdir()):
        score = nsys_stats.sniff(_doc_for(path))
        if path.name in OWN:
            assert score >= 0.9, path.name
        else:
            assert score < 0.3, (path.name, score)
    assert nsys_stats.sniff(Document.from_text(OLD_TERMINAL)) >= 0.5


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000))
def test_never_raises_anything_else(text):
    try:
        parse_text(FMT, text)
    except (ParseError, NotApplicable):
        pass


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=2000))
def test_latin1_bytes_never_raise_anything_else(data):
    try:
        parse_text(FMT, data.decode("latin-1"))
    except (ParseError, NotApplicable):
        pass


_PIECES = st.sampled_from([
    "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name",
    "Time(%),Total Time (ns),Num Calls,Average,Minimum,Maximum,Name",
    "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Style,Range",
    "33.5,11752964346,19200,612133.6,611563.0,441380,764691,40839.3,ncclKernel_x",
    '1.0,2,3,4.0,5.0,6,7,8.0,"void a<1, 2>(b)"', "1,2,3", ",,,,,,,,,", "nan,inf,-1,1e999,0,0,0,0,x",
    "Processing [a.sqlite] with [/r/cuda_gpu_kern_sum.py]...", " ** CUDA API Summary (cuda_api_sum):",
    " Time (%)  Total Time (ns)  Num Calls  Avg (ns)  Name", " --------  ---------------  ---------  --------  ----",
    "    97.8  101,457,578,301      3,110  32,623,015.5  cudaStreamSynchronize", "CUDA Kernel Statistics:",
    "SKIPPED: a.sqlite does not contain CUDA kernel data.", "", '"unterminated', "\x00",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=25))
def test_shuffled_real_lines_never_raise_anything_else(lines):
    try:
        ctx = parse_text(FMT, "\n".join(lines))
    except (ParseError, NotApplicable):
        return
    for fact in ctx.facts:
        assert fact.fact_type.startswith("nsys.")
