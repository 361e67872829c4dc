import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.parsers import train_log

FIXTURES = Path(__file__).parents[1] / "fixtures"


def run(text: str, command: str | None = None) -> ParseContext:
    doc = Document.from_text(text, name="<test>", command=command)
    ctx = ParseContext(doc=doc, parser="train-log")
    train_log.parse(doc, ctx)
    return ctx


def fixture(name: str) -> ParseContext:
    return run((FIXTURES / "formats" / name).read_text())


def of(ctx, fact_type):
    return [f for f in ctx.facts if f.fact_type == fact_type]


def megatron_line(it: int, ms: float, tflops: float = 400.0, skipped: int = 0, nan: int = 0, end: str = " |") -> str:
    return (f" [2025-06-17 02:17:19.123456] iteration {it:8d}/{1000:8d} | consumed samples: {it * 256:12d} | "
            f"elapsed time per iteration (ms): {ms:.1f} | throughput per GPU (TFLOP/s/GPU): {tflops:.1f} | "
            f"learning rate: 3.000000E-05 | global batch size:   256 | lm loss: 1.041200E+01 | loss scale: 1.0 | "
            f"number of skipped iterations: {skipped:3d} | number of nan iterations: {nan:3d}{end}")


def test_doctests():
    assert doctest.testmod(train_log).failed == 0


def test_megatron_fixture():
    ctx = fixture("megatron-train.log")
    assert ctx.warnings == []
    [s] = of(ctx, "train.step_stats")
    assert (s.framework, s.rank, s.iterations, s.first_iter, s.last_iter, s.train_iters) == ("megatron", None, 8, 10, 80, 5000)
    assert s.warmup_excluded == 1
    # iterations 20..80 after leaving out the first interval
    assert s.median_ms == 15103.7 and s.window_median_ms == 15121.9
    assert (s.max_ms, s.max_iter) == (21478.3, 50)
    assert s.mean_ms == pytest.approx(16012.914, abs=1e-3)
    assert s.cv == pytest.approx(0.1505, abs=1e-4)
    assert s.tflops_per_gpu_median == 479.9 and s.tokens_per_s_median is None
    assert (s.skipped_iterations, s.nan_iterations) == (0, 0)
    assert (s.source.line, s.source.end_line) == (21, 62)
    [job] = of(ctx, "train.job")
    assert (job.framework, job.world_size, job.data_parallel, job.tensor_parallel, job.pipeline_parallel,
            job.context_parallel, job.global_batch, job.model) == ("megatron", 16, 2, 8, 1, 1, 256, "")
    assert job.source.line == 1
    timers = {t.name: t for t in of(ctx, "train.timer")}
    bg = timers["batch-generator"]
    assert (bg.reports, bg.max_ms_max, bg.worst_iter, bg.worst_spread_ms) == (2, 6018.77, 50, 5982.65)
    assert timers["model-and-optimizer-setup"].worst_iter is None
    assert (timers["all-grads-sync"].source.line, timers["all-grads-sync"].source.end_line) == (30, 52)
    [mem] = of(ctx, "train.memory")
    assert (mem.rank, mem.max_allocated_mb, mem.reserved_mb, mem.source.line) == (15, 61190.0986328125, 65512.0, 22)


def test_nemo_fixture():
    ctx = fixture("nemo-train.log")
    assert ctx.warnings == []
    [s] = of(ctx, "train.step_stats")
    assert (s.framework, s.rank, s.iterations, s.first_iter, s.last_iter, s.train_iters) == ("nemo", 0, 10, 0, 9, 99)
    assert s.warmup_excluded == 1  # iteration 0 took 14.92 s (compilation)
    assert s.median_ms == 4301.0 and s.window_median_ms == 4301.0
    assert (s.max_ms, s.max_iter) == (6918.0, 6)
    assert s.tflops_per_gpu_median == 521.0
    assert (s.source.line, s.source.end_line) == (6, 17)
    [job] = of(ctx, "train.job")
    assert (job.framework, job.model, job.global_batch, job.world_size) == ("nemo", "llama3_8b", 128, None)


def test_megatron_per_rank_labels_arguments_block_and_counters():
    lines = [
        "0: ------------------------ arguments ------------------------",
        "0:   global_batch_size ............................... 512",
        "0:   micro_batch_size ................................ 1",
        "0:   seq_length ...................................... 8192",
        "0:   tensor_model_parallel_size ...................... 4",
        "0:   pipeline_model_parallel_size .................... 2",
        "0:   world_size ...................................... 64",
        "0: -------------------- end of arguments ---------------------",
    ]
    for k, ms in enumerate([9000, 5000, 5100, 4900, 20000]):
        lines.append("7: " + megatron_line(10 * (k + 1), ms, skipped=1 if k == 2 else 0, nan=2 if k == 3 else 0))
    lines.append("3: " + megatron_line(10, 6000))
    ctx = run("\n".join(lines))
    stats = {s.rank: s for s in of(ctx, "train.step_stats")}
    s7 = stats[7]
    assert (s7.iterations, s7.warmup_excluded, s7.median_ms, s7.skipped_iterations, s7.nan_iterations) == (5, 1, 5050.0, 1, 2)
    assert s7.p95_ms == pytest.approx(17765.0) and (s7.max_ms, s7.max_iter) == (20000.0, 50)
    # iteration 40 is the only one logged in the 35-44 window
    assert s7.window_median_ms == 4900.0
    assert (stats[3].iterations, stats[3].warmup_excluded, stats[3].cv) == (1, 0, 0.0)
    [job] = of(ctx, "train.job")
    assert (job.global_batch, job.micro_batch, job.seq_length, job.tensor_parallel, job.pipeline_parallel, job.world_size) == (
        512, 1, 8192, 4, 2, 64)


def test_truncated_last_line_and_nan_loss():
    text = "\n".join([megatron_line(10, 100), megatron_line(20, 101), megatron_line(30, 102)[:120]])
    ctx = run(text)
    [s] = of(ctx, "train.step_stats")
    # the cut line counts as seen but has no step time; two timed lines are too few to drop warm-up
    assert (s.iterations, s.last_iter, s.warmup_excluded, s.median_ms) == (3, 30, 0, 100.5)
    assert [line for line, _ in ctx.warnings] == [3, 3]
    nemo = ("Training epoch 0, iteration 3/9 | global_step: 3 | reduced_train_loss: nan | train_step_timing in s: 2.5\n"
            "Training epoch 0, iteration 4/9 | global_step: 4 | reduced_train_loss: 1.5 | train_step_timing in s: 2.5 | tokens_per_sec_per_gpu: 3010\n")
    [s] = of(run(nemo), "train.step_stats")
    assert (s.nan_iterations, s.tokens_per_s_median, s.median_ms) == (1, 3010.0, 2500.0)


def test_nemo1_progress_bar_and_lightning_world_size():
    text = (
        "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/32\n"
        "Epoch 0: :   1%| | 1/100 [00:09<15:21, reduced_train_loss=11.90, global_step=0.000, train_step_timing in s=9.100]\r"
        "Epoch 0: :   2%| | 2/100 [00:13<10:21, reduced_train_loss=11.70, global_step=1.000, train_step_timing in s=4.100]\r"
        "Epoch 0: :   2%| | 2/100 [00:13<10:21, reduced_train_loss=11.70, global_step=1.000, train_step_timing in s=4.200]\r"
        "Epoch 0: :   3%| | 3/100 [00:17<09:21, reduced_train_loss=11.50, global_step=2.000, train_step_timing in s=4.000]\n"
    )
    ctx = run(text)
    [s] = of(ctx, "train.step_stats")
    assert (s.framework, s.iterations, s.first_iter, s.last_iter, s.median_ms) == ("nemo", 3, 0, 2, 4100.0)
    assert of(ctx, "train.job")[0].world_size == 32


def test_not_a_training_log():
    with pytest.raises(NotApplicable):
        run("hello\nworld\n")
    with pytest.raises(NotApplicable):
        run("world_size: 4\n")


_MINE = {"megatron-train.log", "nemo-train.log"}


@pytest.mark.parametrize("path", sorted((FIXTURES / "formats").iterdir()), ids=lambda p: p.name)
def test_sniff(path):
    doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
    score = train_log.sniff(doc)
    if path.name in _MINE:
        assert score > 0.8
    else:
        assert score < 0.3


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=2000), st.binary(max_size=2000).map(lambda b: b.decode("latin-1"))))
def test_never_raises_anything_else(text):
    try:
        run(text)
        run(megatron_line(10, 5.0) + "\n" + text + "\n(min, max) time across ranks (ms):\n" + text)
        run("Training epoch 0, iteration 1/9 | " + text)
    except (ParseError, NotApplicable):
        pass


@pytest.mark.parametrize("command,expected", [
    ("srun python pretrain_gpt.py --tensor-model-parallel-size 8 2>&1 | tee train.log", True),
    ("torchrun --nproc-per-node 8 train.py", True), ("nemo llm pretrain --factory llama3_8b", True),
    ("cat /proc/cpuinfo", False), ("nvidia-smi topo -m", False),
])
def test_command_patterns(command, expected):
    assert train_log.FORMATS[0].matches_command(command) is expected


def test_infinite_timer_value_is_dropped_not_a_crash():
    # found by tests/bench/fuzz_parsers.py: "(5,1e999)" reached the fact model as inf and the
    # parser raised pydantic's ValidationError
    text = (" [2025-06-17 02:17:19] iteration       10/    5000 | consumed samples:         2560 | "
            "elapsed time per iteration (ms): 16822.4 | lm loss: 1.041200E+01 |\n"
            "(min, max) time across ranks (ms):\n"
            "    forward-backward ...............................: (5,1e999)\n"
            "    forward-compute ................................: (4911.08, 5302.66)\n")
    ctx = run(text)
    timers = [f for f in ctx.facts if f.fact_type == "train.timer"]
    assert [t.name for t in timers] == ["forward-compute"]


@pytest.mark.parametrize("value", ["1e999", "nan", "inf"])
def test_non_finite_iteration_counts_are_ignored(value):
    # found by tests/bench/fuzz_parsers.py: int(float("1e999")) raised OverflowError, int(nan)
    # ValueError
    ctx = run(f" iteration       10/    5000 | elapsed time per iteration (ms): 812.5 | "
              f"number of skipped iterations: {value} | number of nan iterations: {value} |\n"
              f" iteration       20/    5000 | elapsed time per iteration (ms): 811.0 |\n")
    assert [f.fact_type for f in ctx.facts if f.fact_type == "train.step_stats"]


def test_step_time_overflowing_to_infinity_in_ms_is_ignored():
    # found by tests/bench/fuzz_parsers.py: 1e308 s is finite, 1e308 * 1000 ms is not, and
    # statistics.stdev raised AttributeError on it
    ctx = run("0: Training epoch 0, iteration 1/9 | train_step_timing in s: 1e308\n"
              "0: Training epoch 0, iteration 5/9 | train_step_timing in s: 6\n"
              "0: Training epoch 0, iteration 6/9 | train_step_timing in s: 6.1\n")
    assert all(f.fact_type != "train.step_stats" or f.max_ms < 1e9 for f in ctx.facts)


def test_absurd_step_time_does_not_overflow_the_statistics():
    # found by tests/bench/fuzz_parsers.py: a p95 over [1e308, 3] overflowed to inf
    ctx = run("iteration 0/0|elapsed time per iteration (ms):1e308|\n"
              "iteration 1/0|elapsed time per iteration (ms):3|\n")
    assert all(f.fact_type != "train.step_stats" or f.p95_ms < 1e15 for f in ctx.facts)
