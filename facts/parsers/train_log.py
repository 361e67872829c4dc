"""Megatron-LM / NeMo training log - File

The stdout of a training run. Megatron-LM prints one line per ``--log-interval`` iterations
(`` [ts] iteration   100/ 5000 | ... | elapsed time per iteration (ms): 15103.7 | throughput per
GPU (TFLOP/s/GPU): 479.9 | ...``, values averaged over the interval), timers (``(min, max) time
across ranks (ms):`` then ``name ....: (min, max)``), a ``[Rank N] ... memory (MB)`` report and
the parallel layout (``using world size: 16, data-parallel size: 2, ...``, the ``arguments``
block). NeMo 2.0 / Lightning prints ``Training epoch E, iteration I/N | key: value | ...`` per
step (``train_step_timing in s``, ``TFLOPS_per_GPU``, ``tokens_per_sec_per_gpu``); NeMo 1.x
progress bars (``train_step_timing in s=4.3``) are read too. ``srun --label`` prefixes name
the rank.

Facts (never one per iteration): ``train.step_stats`` per framework and rank, ``train.job``,
``train.timer`` per timer name, ``train.memory`` per memory report. Statistics leave out the
first logged line when there are at least three, because it includes start-up and compilation
(``warmup_excluded`` says so).

Sample input::

    using world size: 16, data-parallel size: 2, context-parallel size: 1, tensor-model-parallel size: 8, pipeline-model-parallel size: 1
     [2025-06-17 02:17:19] iteration       10/    5000 | consumed samples:         2560 | elapsed time per iteration (ms): 16822.4 | throughput per GPU (TFLOP/s/GPU): 430.9 | global batch size:   256 | lm loss: 1.041200E+01 | number of skipped iterations:   0 | number of nan iterations:   0 |
    (min, max) time across ranks (ms):
        batch-generator ................................: (38.74, 391.55)
     [2025-06-17 02:19:50] iteration       20/    5000 | consumed samples:         5120 | elapsed time per iteration (ms): 15103.7 | throughput per GPU (TFLOP/s/GPU): 479.9 | global batch size:   256 | lm loss: 9.187400E+00 | number of skipped iterations:   0 | number of nan iterations:   0 |
     [2025-06-17 02:22:21] iteration       30/    5000 | consumed samples:         7680 | elapsed time per iteration (ms): 15086.2 | throughput per GPU (TFLOP/s/GPU): 480.4 | global batch size:   256 | lm loss: 8.231100E+00 | number of skipped iterations:   1 | number of nan iterations:   0 |

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "train-log"); parse(doc, ctx)
    >>> s = [f for f in ctx.facts if f.fact_type == "train.step_stats"][0]
    >>> s.framework, s.iterations, s.first_iter, s.last_iter, s.warmup_excluded, s.median_ms
    ('megatron', 3, 10, 30, 1, 15094.95)
    >>> s.tflops_per_gpu_median, s.skipped_iterations, s.source.line
    (480.15, 1, 2)
    >>> job = [f for f in ctx.facts if f.fact_type == "train.job"][0]
    >>> job.world_size, job.data_parallel, job.tensor_parallel, job.global_batch
    (16, 2, 8, 256)
    >>> t = [f for f in ctx.facts if f.fact_type == "train.timer"][0]
    >>> t.name, t.worst_spread_ms, t.worst_iter
    ('batch-generator', 352.81, 10)
    >>> sniff(doc) > 0.8
    True
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass, field

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.train import StepStats, TrainJob, TrainMemory, TrainTimer


SAMPLE = """\
using world size: 16, data-parallel size: 2, context-parallel size: 1, tensor-model-parallel size: 8, pipeline-model-parallel size: 1
 [2025-06-17 02:17:19] iteration       10/    5000 | consumed samples:         2560 | elapsed time per iteration (ms): 16822.4 | throughput per GPU (TFLOP/s/GPU): 430.9 | global batch size:   256 | lm loss: 1.041200E+01 | number of skipped iterations:   0 | number of nan iterations:   0 |
(min, max) time across ranks (ms):
    batch-generator ................................: (38.74, 391.55)
 [2025-06-17 02:19:50] iteration       20/    5000 | consumed samples:         5120 | elapsed time per iteration (ms): 15103.7 | throughput per GPU (TFLOP/s/GPU): 479.9 | global batch size:   256 | lm loss: 9.187400E+00 | number of skipped iterations:   0 | number of nan iterations:   0 |
 [2025-06-17 02:22:21] iteration       30/    5000 | consumed samples:         7680 | elapsed time per iteration (ms): 15086.2 | throughput per GPU (TFLOP/s/GPU): 480.4 | global batch size:   256 | lm loss: 8.231100E+00 | number of skipped iterations:   1 | number of nan iterations:   0 |
"""

_LABEL = lazyre.compile(r"^\s*(\d{1,6}): ?(.*)$")
_NUM = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_MEGATRON = lazyre.compile(r"\biteration\s+(\d+)\s*/\s*(\d+)\s*\|(.*)$")
_NEMO = lazyre.compile(r"\bTraining epoch\s+(\d+),\s*iteration\s+(\d+)\s*/\s*(\d+)\s*\|(.*)$")
_NEMO1_TIME = lazyre.compile(rf"train_step_timing in s=({_NUM})")
_NEMO1_STEP = lazyre.compile(rf"\bglobal_step=({_NUM})")
_TIMER_HEAD = lazyre.compile(r"(\(min, max\)|max) time across ranks \(ms\):\s*$")
_TIMER = lazyre.compile(rf"^\s+(\S.*?)\s*\.*:\s*(?:\(\s*({_NUM}),\s*({_NUM})\s*\)|({_NUM}))\s*$")
_MEMORY = lazyre.compile(r"\[Rank (\d+)\].*memory \(MB\)\s*\|(.*)$")
_SIZES = lazyre.compile(r"(?<![A-Za-z-])([A-Za-z-]+?)[- ]size:\s*(\d+)")
_INIT_MP = lazyre.compile(r"initialized (tensor|pipeline|context|expert) model parallel with size (\d+)")
_ARG = lazyre.compile(r"^\s*([a-z_]+)\s*(?:\.{2,}|[:=])\s*(\d+)\s*$")
_WORLD = [
    re.compile(r"\bMEMBER:\s*\d+/(\d+)"),
    re.compile(r"Starting with (\d+) processes"),
    re.compile(r"\bworld[_ ]size[:=]\s*(\d+)", re.I),
]
_EXPERIMENT = lazyre.compile(r"Experiments will be logged at\s+(\S+)")

_SIZE_KEYS = {
    "world": "world_size", "data-parallel": "data_parallel", "context-parallel": "context_parallel",
    "tensor-model-parallel": "tensor_parallel", "pipeline-model-parallel": "pipeline_parallel",
    "expert-model-parallel": "expert_parallel",
}
_ARG_KEYS = {
    "world_size": "world_size", "data_parallel_size": "data_parallel",
    "tensor_model_parallel_size": "tensor_parallel", "pipeline_model_parallel_size": "pipeline_parallel",
    "context_parallel_size": "context_parallel", "expert_model_parallel_size": "expert_parallel",
    "global_batch_size": "global_batch", "micro_batch_size": "micro_batch",
    "seq_length": "seq_length", "encoder_seq_length": "seq_length",
}


@dataclass
class _Step:
    it: int
    ms: float | None
    line: int
    tflops: float | None = None
    tokens: float | None = None
    skipped: int = 0
    nan: int = 0


@dataclass
class _Timer:
    mins: list[float] = field(default_factory=list)
    maxs: list[float] = field(default_factory=list)
    worst: float = -1.0
    worst_iter: int | None = None
    first: int = 0
    last: int = 0


@dataclass
class _State:
    steps: dict[tuple[str, int | None], list[_Step]] = field(default_factory=dict)
    train_iters: dict[tuple[str, int | None], int] = field(default_factory=dict)
    job: dict[str, int | str] = field(default_factory=dict)
    job_line: int | None = None
    timers: dict[str, _Timer] = field(default_factory=dict)
    last_iter: int | None = None
    framework: str = ""


def _fields(rest: str) -> dict[str, str]:
    out = {}
    for part in rest.split("|"):
        key, sep, value = part.partition(":")
        if sep:
            out[key.strip().lower()] = value.strip()
    return out


def _num(value: str | None) -> float | None:
    if value is None:
        return None
    m = re.match(rf"^\s*({_NUM}|nan|inf|-inf)\b", value, re.I)
    if not m:
        return None
    v = float(m.group(1))
    return v


def _finite(v: float | None) -> float | None:
    return v if v is not None and math.isfinite(v) else None


def _ms(v: float | None) -> float | None:
    """A step time in ms, or None when it is not one a run can take (statistics over 1e308
    overflow to inf)."""
    return v if v is not None and math.isfinite(v) and abs(v) < 1e15 else None


def _set_job(state: _State, key: str, value: int | str, line: int) -> None:
    if key not in state.job:
        state.job[key] = value
        if state.job_line is None:
            state.job_line = line


def _megatron(state: _State, ctx: ParseContext, i: int, label: int | None, m: re.Match[str]) -> None:
    it, total, rest = int(m.group(1)), int(m.group(2)), m.group(3).rstrip()
    if not rest.endswith("|"):
        # Megatron ends every iteration line with '|'; without it the last field may be cut short
        ctx.warn(i, f"iteration {it}: line cut (no closing '|'), last field ignored")
        rest = rest.rsplit("|", 1)[0] if "|" in rest else ""
    f = _fields(rest)
    ms = _ms(_num(f.get("elapsed time per iteration (ms)")))
    if ms is None:
        ctx.warn(i, f"iteration {it}: no 'elapsed time per iteration (ms)': line cut?")
    tokens = next((_finite(_num(v)) for k, v in f.items() if "token" in k and ("sec" in k or "/s" in k)), None)
    step = _Step(it, ms, i, tflops=_finite(_num(f.get("throughput per gpu (tflop/s/gpu)"))), tokens=tokens,
                 skipped=int(_finite(_num(f.get("number of skipped iterations"))) or 0),
                 nan=int(_finite(_num(f.get("number of nan iterations"))) or 0))
    key = ("megatron", label)
    state.steps.setdefault(key, []).append(step)
    state.train_iters[key] = total
    gbs = _num(f.get("global batch size"))
    if gbs is not None and math.isfinite(gbs):
        _set_job(state, "global_batch", int(gbs), i)
    state.last_iter = it
    state.framework = state.framework or "megatron"


def _nemo(state: _State, ctx: ParseContext, i: int, label: int | None, m: re.Match[str]) -> None:
    it, total, f = int(m.group(2)), int(m.group(3)), _fields(m.group(4))
    secs = _finite(_num(f.get("train_step_timing in s")))
    if secs is None:
        ctx.warn(i, f"iteration {it}: no 'train_step_timing in s': line cut or timing callback off")
    loss = _num(f.get("reduced_train_loss"))
    step = _Step(it, _ms(secs * 1000.0) if secs is not None else None, i,
                 tflops=_finite(_num(f.get("tflops_per_gpu"))),
                 tokens=_finite(_num(f.get("tokens_per_sec_per_gpu"))),
                 nan=int(loss is not None and not math.isfinite(loss)))
    key = ("nemo", label)
    state.steps.setdefault(key, []).append(step)
    state.train_iters[key] = total
    gbs = _num(f.get("global_batch_size"))
    if gbs is not None and math.isfinite(gbs):
        _set_job(state, "global_batch", int(gbs), i)
    state.last_iter = it
    state.framework = state.framework or "nemo"


def _nemo1(state: _State, i: int, label: int | None, text: str) -> bool:
    t, s = _NEMO1_TIME.search(text), _NEMO1_STEP.search(text)
    if not (t and s):
        return False
    it, secs = int(float(s.group(1))), _finite(float(t.group(1)))
    steps = state.steps.setdefault(("nemo", label), [])
    # a progress bar redraws the same step many times: keep its last drawing
    if steps and steps[-1].it == it:
        steps.pop()
    steps.append(_Step(it, _ms(secs * 1000.0) if secs is not None else None, i))
    state.last_iter = it
    state.framework = state.framework or "nemo"
    return True


def _timer(state: _State, i: int, m: re.Match[str]) -> None:
    name = m.group(1).rstrip(" .")
    if m.group(4) is not None:
        lo = hi = float(m.group(4))
    else:
        lo, hi = float(m.group(2)), float(m.group(3))
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return  # "1e999": no time a timer can report
    t = state.timers.setdefault(name, _Timer(first=i))
    t.mins.append(lo)
    t.maxs.append(hi)
    t.last = i
    if hi - lo > t.worst:
        t.worst, t.worst_iter = hi - lo, state.last_iter


def _setup(state: _State, i: int, text: str) -> None:
    if "size:" in text and ("world size" in text or "parallel size" in text or "parallel-size" in text):
        for name, value in _SIZES.findall(text):
            key = _SIZE_KEYS.get(name.strip().lower())
            if key:
                _set_job(state, key, int(value), i)
        return
    if m := _INIT_MP.search(text):
        _set_job(state, f"{m.group(1)}_parallel", int(m.group(2)), i)
    elif m := _ARG.match(text):
        key = _ARG_KEYS.get(m.group(1))
        if key:
            _set_job(state, key, int(m.group(2)), i)
    elif m := _EXPERIMENT.search(text):
        parts = [p for p in m.group(1).rstrip("/").split("/") if p]
        # NeMo logs to <dir>/<experiment name>/<timestamp>
        if len(parts) >= 2 and re.match(r"^\d{4}-\d{2}-\d{2}", parts[-1]):
            _set_job(state, "model", parts[-2], i)
    else:
        for pattern in _WORLD:
            if m := pattern.search(text):
                _set_job(state, "world_size", int(m.group(1)), i)
                break


def _memory(ctx: ParseContext, i: int, m: re.Match[str]) -> None:
    f = _fields(m.group(2))
    vals = [_finite(_num(f.get(k))) for k in ("allocated", "max allocated", "reserved", "max reserved")]
    if any(v is None for v in vals):
        ctx.warn(i, "memory report without allocated/reserved values: line cut?")
        return
    ctx.add(TrainMemory, i, rank=int(m.group(1)), allocated_mb=vals[0], max_allocated_mb=vals[1],
            reserved_mb=vals[2], max_reserved_mb=vals[3])


def _quantile95(values: list[float]) -> float:
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=20, method="inclusive")[18]


def _emit_stats(ctx: ParseContext, framework: str, rank: int | None, steps: list[_Step],
                train_iters: int | None) -> None:
    timed = [s for s in steps if s.ms is not None]
    if not timed:
        ctx.warn(steps[0].line, f"{framework} iteration lines without step times")
        return
    warmup = 1 if len(timed) >= 3 else 0
    body = timed[warmup:]
    ms = [s.ms for s in body]
    mean = statistics.fmean(ms)
    window = [s.ms for s in timed if 35 <= s.it <= 44] or [s.ms for s in body[-10:]]
    slowest = max(body, key=lambda s: s.ms)
    tflops = [s.tflops for s in body if s.tflops is not None]
    tokens = [s.tokens for s in body if s.tokens is not None]
    ctx.add(
        StepStats, steps[0].line, steps[-1].line,
        framework=framework, rank=rank, iterations=len(steps),
        first_iter=steps[0].it, last_iter=steps[-1].it, train_iters=train_iters,
        warmup_excluded=warmup,
        median_ms=round(statistics.median(ms), 3), mean_ms=round(mean, 3),
        p95_ms=round(_quantile95(ms), 3), max_ms=slowest.ms, max_iter=slowest.it,
        cv=round(statistics.stdev(ms) / mean, 5) if len(ms) >= 2 and mean > 0 else 0.0,
        window_median_ms=round(statistics.median(window), 3),
        tflops_per_gpu_median=round(statistics.median(tflops), 3) if tflops else None,
        tokens_per_s_median=round(statistics.median(tokens), 3) if tokens else None,
        skipped_iterations=sum(s.skipped for s in steps),
        nan_iterations=sum(s.nan for s in steps),
    )


def parse(doc: Document, ctx: ParseContext) -> None:
    state = _State()
    in_timers = False
    for i, line in enumerate(doc.lines):
        lm = _LABEL.match(line)
        label, text = (int(lm.group(1)), lm.group(2)) if lm else (None, line)
        if in_timers:
            if t := _TIMER.match(text):
                _timer(state, i, t)
                continue
            in_timers = False
        if _TIMER_HEAD.search(text):
            in_timers = True
        elif m := _NEMO.search(text):
            _nemo(state, ctx, i, label, m)
        elif m := _MEGATRON.search(text):
            _megatron(state, ctx, i, label, m)
        elif m := _MEMORY.search(text):
            _memory(ctx, i, m)
        elif not _nemo1(state, i, label, text):
            _setup(state, i, text)
    for (framework, rank), steps in state.steps.items():
        _emit_stats(ctx, framework, rank, steps, state.train_iters.get((framework, rank)))
    for name, t in state.timers.items():
        ctx.add(TrainTimer, t.first, t.last, name=name, reports=len(t.maxs),
                min_ms_median=round(statistics.median(t.mins), 3), max_ms_median=round(statistics.median(t.maxs), 3),
                max_ms_max=max(t.maxs), worst_spread_ms=round(t.worst, 3), worst_iter=t.worst_iter)
    framework = state.framework or ("megatron" if state.timers else "")
    if state.job and (framework or len(state.job) >= 2):
        job = dict(state.job)
        ctx.add(TrainJob, state.job_line, framework=framework or "unknown",
                model=str(job.pop("model", "")), **job)
    if not ctx.facts:
        raise NotApplicable("no Megatron-LM or NeMo training lines")


def sniff(doc: Document) -> float:
    strong = weak = 0
    for line in doc.lines[:400]:
        if _NEMO.search(line) or (_MEGATRON.search(line) and "|" in line and
                                  ("elapsed time per iteration" in line or "consumed samples" in line)):
            strong += 1
        elif (_TIMER_HEAD.search(line) or "[NeMo " in line or "using world size:" in line
              or "> initializing torch distributed" in line):
            weak += 1
    if strong:
        return 0.95
    return min(0.7, 0.3 + 0.1 * weak) if weak else 0.0


FORMATS = [
    Format(
        name="train-log",
        command="srun ... python pretrain_gpt.py ... 2>&1 | tee train.log",
        facts=("train.step_stats", "train.job", "train.timer", "train.memory"),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\b(?:pretrain_\w+\.py|megatron|nemo|torchrun)\b.*",),
        description="Megatron-LM or NeMo/Lightning training log: step times, throughput, timers, job shape",
    )
]
