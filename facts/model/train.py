"""Training-run observations from framework logs: step-time statistics, job shape, timers, memory.

Logs print one line per logging interval; these facts summarise them (one per run and rank),
never one fact per iteration.
"""

from clusterdx.facts.base import Fact


class StepStats(Fact):
    fact_type = "train.step_stats"
    doc = "Step-time and throughput statistics over the iteration lines of one training log (per rank when labelled)."
    #: 'megatron' or 'nemo'
    framework: str
    rank: int | None = None
    #: number of iteration lines parsed (Megatron: one per log interval)
    iterations: int
    first_iter: int
    last_iter: int
    #: iteration count the run was configured for (the N in 'iteration i/N'), when shown
    train_iters: int | None = None
    #: leading lines left out of the statistics below because they include warm-up/compilation
    warmup_excluded: int
    median_ms: float
    mean_ms: float
    p95_ms: float
    #: slowest step time seen (after warm-up) and the iteration it was logged at
    max_ms: float
    max_iter: int
    #: coefficient of variation, stdev/mean (0.0 with fewer than two values)
    cv: float
    #: median of iterations 35-44 when logged, else of the last 10 lines
    window_median_ms: float
    tflops_per_gpu_median: float | None = None
    #: tokens per second per GPU, as logged (NeMo tokens_per_sec_per_gpu); None when not logged
    tokens_per_s_median: float | None = None
    skipped_iterations: int = 0
    nan_iterations: int = 0


class TrainJob(Fact):
    fact_type = "train.job"
    doc = "Shape of the training job as the log states it (None where the log does not say)."
    framework: str
    #: model or experiment name as logged ('' when the log does not name it)
    model: str = ""
    world_size: int | None = None
    data_parallel: int | None = None
    tensor_parallel: int | None = None
    pipeline_parallel: int | None = None
    context_parallel: int | None = None
    expert_parallel: int | None = None
    global_batch: int | None = None
    micro_batch: int | None = None
    seq_length: int | None = None


class TrainTimer(Fact):
    fact_type = "train.timer"
    doc = "One Megatron timer over all its reports: (min, max) across ranks in ms; a wide spread names a straggler."
    name: str
    reports: int
    min_ms_median: float
    max_ms_median: float
    max_ms_max: float
    #: largest (max - min) across ranks in any report, and the iteration it was reported after
    worst_spread_ms: float
    worst_iter: int | None = None


class TrainMemory(Fact):
    fact_type = "train.memory"
    doc = "GPU memory report of one rank (Megatron '[Rank N] ... memory (MB)'), in MB."
    rank: int | None = None
    allocated_mb: float
    max_allocated_mb: float
    reserved_mb: float
    max_reserved_mb: float


class RankTimes(Fact):
    fact_type = "train.rank_times"
    doc = ("Per-rank durations of one operation from a script's own per-rank printout, split into the slowest "
           "group of local ranks and the rest (at the widest gap between sorted times).")
    #: nodes and local ranks per node seen (1 node when the lines name none)
    nodes: int
    ranks_per_node: int
    #: local ranks in the slow group, the same on every node when ``consistent``
    slow_local_ranks: list[int] = []
    slow_count: int = 0
    #: the slow group's fastest time over the rest's slowest time, on the node where it is smallest
    slow_ratio: float
    #: every node has the same slow local ranks
    consistent: bool
    median_ms: float
