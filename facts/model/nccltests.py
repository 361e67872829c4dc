"""nccl-tests benchmark facts (all_reduce_perf and friends): one run summary, its rows, its ranks.

Bandwidths are GB/s (10^9 bytes/s) as nccl-tests prints them, times are microseconds.
``run_index`` numbers the runs of one input from 0, so rows and devices can be tied to their run.
"""

from clusterdx.facts.base import Fact


class NcclTestsRun(Fact):
    fact_type = "nccltests.run"
    doc = "One nccl-tests run: parameters, placement and bus-bandwidth summary (peak, at max size, average)."
    run_index: int
    collective: str
    collective_inferred: bool = False
    binary: str = ""
    tests_version: str = ""
    nccl_version: str = ""
    nranks: int
    nodes: int
    hosts: list[str] = []
    gpu_model: str = ""
    gpus_per_proc: int | None = None
    nthread: int | None = None
    check: bool | None = None
    warmup_iters: int | None = None
    iters: int | None = None
    agg_iters: int | None = None
    graph: int | None = None
    min_bytes: int | None = None
    max_bytes: int | None = None
    step_factor: int | None = None
    step_bytes: int | None = None
    dtype: str = ""
    rows: int = 0
    max_size: int | None = None
    busbw_at_max_size: float | None = None
    peak_busbw: float | None = None
    peak_busbw_size: int | None = None
    latency_us: float | None = None
    avg_busbw: float | None = None
    bw_check: str = ""
    out_of_bounds: int | None = None
    wrong_total: int | None = None
    failure: str = ""
    completed: bool = False
    ok: bool = False
    single_rank_processes: int = 0
    #: result tables of separate processes printed into this run with no header between (each
    #: size twice in a row, one 'Avg bus bandwidth' summary each): each process ran its own test
    interleaved_tables: int = 0
    #: smallest difference between the PCI bus numbers of two GPUs of one host in the run's device
    #: list (None with fewer than two). Buses below one PCIe switch are numbered consecutively, so a
    #: large gap means the GPUs hang off different root ports
    min_bus_gap: int | None = None


class NcclTestsResult(Fact):
    fact_type = "nccltests.result"
    doc = "One nccl-tests data row: size, out-of-place and in-place time/algbw/busbw, wrong elements."
    run_index: int
    collective: str
    nranks: int
    size_bytes: int
    count: int
    dtype: str
    redop: str = ""
    root: int | None = None
    oop_time_us: float
    oop_algbw: float
    oop_busbw: float
    ip_time_us: float | None = None
    ip_algbw: float | None = None
    ip_busbw: float | None = None
    oop_wrong: int | None = None
    ip_wrong: int | None = None
    wrong: int | None = None
    max_error: float | None = None


class NcclTestsDevice(Fact):
    fact_type = "nccltests.device"
    doc = "One rank of an nccl-tests run: host, pid, CUDA device, PCI bus and GPU model (node = that host)."
    run_index: int
    rank: int
    group: int | None = None
    host: str
    pid: int
    device: int
    bus_id: str
    pci_bus: str = ""
    gpu_model: str = ""


class NodePairResult(Fact):
    fact_type = "nccltests.pair_result"
    doc = ("One row of a user's per-node-pair results table ('node-a,node-b  49.36'): the two hosts of one "
           "two-node run and the bandwidth it reached (node = the first host).")
    #: the row's index in its table, from 0
    row: int
    hosts: list[str]
    value: float
    #: as written after the number ('GB/s'), '' when the table gives none
    unit: str = ""
    #: the row's comment ('crossing TOR'), '' when none
    note: str = ""
