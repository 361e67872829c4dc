"""Nsight Systems facts: ``nsys stats`` summary rows and per-iteration metrics from the SQLite export.

Times are nanoseconds (``*_ns``) or milliseconds (``*_ms``) as named; shares are percent (0-100).
Summary rows are kept to the top rows of each report (by total time); ``report_index`` numbers the
report blocks of one input from 0 and ``profile`` names the profile a block was computed from
(``rank0.sqlite`` in ``Processing [rank0.sqlite] ...``; '' when the input does not say), so rows of
several ranks pasted together stay apart.

Kernel ``category`` is derived from the kernel name: ``nccl`` (``ncclDevKernel_*``/``ncclKernel_*``),
``nvshmem`` (NVSHMEM, DeepEP/HybridEP MoE communication), ``attention`` (flash/fmha/sdpa),
``gemm`` (cuBLAS/cuBLASLt/CUTLASS/xmma/nvjet GEMMs), else ``other``.
"""

from clusterdx.facts.base import Fact


class NsysKernelSum(Fact):
    fact_type = "nsys.kernel_sum"
    doc = "One kernel row of an nsys cuda_gpu_kern_sum (gpukernsum) report: summed GPU time and instances."
    report_index: int = 0
    profile: str = ""
    #: kernel name as printed, cut to 200 characters
    name: str
    #: True when the tool (column output, '…') or this parser cut the name
    name_truncated: bool = False
    category: str
    #: share of summed kernel time (not wall time)
    time_pct: float
    total_ns: float
    instances: int
    avg_ns: float
    med_ns: float | None = None


class NsysApiSum(Fact):
    fact_type = "nsys.api_sum"
    doc = "One CUDA API row of an nsys cuda_api_sum (cudaapisum) report: host-side time in a runtime/driver call."
    report_index: int = 0
    profile: str = ""
    name: str
    time_pct: float
    total_ns: float
    calls: int
    avg_ns: float
    med_ns: float | None = None


class NsysOsrtSum(Fact):
    fact_type = "nsys.osrt_sum"
    doc = "One OS runtime row of an nsys osrt_sum (osrtsum) report: time in a libc/syscall wrapper (poll, ioctl, futex...)."
    report_index: int = 0
    profile: str = ""
    name: str
    time_pct: float
    total_ns: float
    calls: int
    avg_ns: float
    med_ns: float | None = None


class NsysNvtxSum(Fact):
    fact_type = "nsys.nvtx_sum"
    doc = "One NVTX range row of an nsys nvtx_sum (nvtxsum) report: instances and duration statistics of a named range."
    report_index: int = 0
    profile: str = ""
    #: as printed: '<domain>:<name>' in recent releases (':train_step', 'NCCL:ncclAllReduce'), else the name
    range: str
    #: the range name without its domain prefix, and the domain ('' = default domain or not printed)
    range_name: str
    domain: str = ""
    time_pct: float
    total_ns: float
    instances: int
    avg_ns: float
    med_ns: float | None = None
    min_ns: float | None = None
    max_ns: float | None = None
    #: 'PushPop', 'StartEnd', or '' when the release does not print it
    style: str = ""


class NsysKernelTotals(Fact):
    fact_type = "nsys.kernel_totals"
    doc = "Totals over all rows of one kernel summary: summed kernel time and the NCCL/GEMM/attention shares of it."
    report_index: int = 0
    profile: str = ""
    #: distinct kernel names (rows) and kernel instances in the whole report
    kernels: int
    instances: int
    #: summed (not wall) kernel time
    total_ns: float
    nccl_ns: float
    nccl_pct: float
    #: NCCL + NVSHMEM/DeepEP share of summed kernel time
    comm_pct: float
    gemm_pct: float
    attention_pct: float
    top_kernel: str
    top_kernel_pct: float
    top_kernel_category: str


class NsysStepStats(Fact):
    fact_type = "nsys.step_stats"
    doc = ("Per-iteration GPU timeline metrics of one process from an nsys SQLite export (interval unions over "
           "NVTX iteration ranges): step time, GPU idle, communication, exposed communication, host-bound gaps.")
    #: process id the iteration ranges belong to (None when the export does not say)
    pid: int | None = None
    #: NVTX range used as the iteration ('train_step'); how it was chosen: 'pattern' or 'repeating'
    iteration_range: str
    iteration_source: str
    #: iterations in the statistics (after warm-up exclusion) and how many were left out at the start
    iterations: int
    warmup_excluded: int = 0
    median_step_ms: float
    mean_step_ms: float
    max_step_ms: float
    #: coefficient of variation of step time, stdev/mean (0.0 with fewer than two)
    cv: float
    #: medians over iterations of: 1 - U_gpu/T_step, U_comm/T_step, exposed comm/T_step,
    #: host-bound gap time/T_step (gaps > 20 us whose next kernel's launch call began after the gap did)
    gpu_idle_pct: float
    comm_pct: float
    exposed_comm_pct: float
    host_bound_gap_pct: float
    #: kernels that started inside the analysed iterations, and the median per iteration
    kernels: int
    kernels_per_step: float
    #: GPUs the process ran kernels on inside the iterations
    devices: int
    #: False when no CUDA runtime table was captured (host-bound gaps cannot be classified then)
    has_launch_data: bool = True


class NsysProfile(Fact):
    fact_type = "nsys.profile"
    doc = "What an nsys SQLite export holds: capture duration, kernel and NVTX range counts, GPUs, processes."
    duration_ms: float
    kernels: int
    nvtx_ranges: int
    has_nvtx: bool
    gpus: int
    processes: int = 0
    gpu_model: str = ""
    schema_version: str = ""
    has_runtime: bool = False
    has_osrt: bool = False
    #: NVTX range picked as the iteration ('' when none was found)
    iteration_range: str = ""
