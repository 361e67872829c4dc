"""GPU clocks and temperatures the user states: busy clock over the stated default, hot GPUs."""

import doctest

import pytest

from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.parsers import prose, prose_gpu


def _metrics(text: str) -> dict[str, float]:
    doc = Document.from_text(text)
    ctx = ParseContext(doc, "prose")
    try:
        prose.parse(doc, ctx)
    except NotApplicable:
        return {}
    return {f.metric: f.value_norm for f in ctx.facts if f.fact_type == "reported.metric" and f.metric.startswith("gpu_")}


def test_doctests():
    assert doctest.testmod(prose_gpu).failed == 0


def test_busy_clock_against_stated_max_in_another_sentence():
    got = _metrics("Under full load the SM clock sits at 1100 MHz. The boost clock of this card is 1980 MHz.\n")
    assert round(got["gpu_clock_fraction"], 3) == round(1100 / 1980, 3)


def test_idle_clock_is_power_saving_not_throttling():
    got = _metrics("At idle the GPU sits at 210 MHz, the max clock is 1980 MHz. Temperature at idle 45 C.\n")
    assert got == {}


def test_memory_and_cpu_clocks_are_not_gpu_core_clocks():
    got = _metrics("During training the memory clock is 1593 MHz and the CPU runs at 2400 MHz; max boost 1980 MHz.\n")
    assert "gpu_clock_fraction" not in got


def test_no_stated_max_no_fraction():
    assert "gpu_clock_fraction" not in _metrics("The GPU is at 100% utilization and 1410 MHz while training.\n")


def test_temperature_needs_a_gpu_in_the_sentence():
    assert _metrics("The server room was at 30 C last summer, nothing else changed.\n") == {}
    assert _metrics("nvidia-smi says the GPU is at 91°C during training.\n") == {"gpu_temperature": 91.0}


def _cpu(text: str) -> list[float]:
    doc = Document.from_text(text)
    ctx = ParseContext(doc, "prose")
    try:
        prose.parse(doc, ctx)
    except NotApplicable:
        return []
    return [f.value for f in ctx.facts if f.fact_type == "reported.metric" and f.metric == "worker_cpu_pct"]


def test_worker_cpu_percent_above_one_core():
    assert _cpu("In htop every dataloader worker shows about 400% CPU.\n") == [400.0]


def test_worker_cpu_lookalikes():
    # one core's worth, a GPU utilisation, a speed-up, and a CPU figure of the main process
    assert _cpu("Each worker uses 100% CPU in top.\n") == []
    assert _cpu("With 8 workers GPU utilization is 100% and the CPU load is fine.\n") == []
    assert _cpu("More workers made the epoch 150% faster on CPU-heavy augmentations.\n") == []
    assert _cpu("The main training process sits at 250% CPU in htop.\n") == []


def _said(text: str) -> list[tuple]:
    doc = Document.from_text(text)
    ctx = ParseContext(doc, "prose")
    try:
        prose.parse(doc, ctx)
    except NotApplicable:
        return []
    return sorted((f.fact_type, getattr(f, "model", "") or getattr(f, "kind", ""), getattr(f, "where", "") or getattr(f, "form", ""))
                  for f in ctx.facts if (f.fact_type == "reported.inventory" and f.item == "cpu")
                  or (f.fact_type == "reported.symptom" and f.where == "single-node"))


def test_host_cpu_models_and_slow_p2p():
    assert _said("CPU: AMD EPYC 7K62, why is p2p performance so slow?\n") == [
        ("reported.inventory", "EPYC 7K62", "AMD"), ("reported.symptom", "low-bandwidth", "single-node")]
    assert _said("Two Intel(R) Xeon(R) Platinum 8480+ per node.\n") == [("reported.inventory", "Xeon 8480+", "Intel")]


def test_amd_desktop_cpus_and_threadripper_boards():
    assert _said("Our box is an AMD Ryzen Threadripper 9970X (32-core) with four GPUs.\n") == [
        ("reported.inventory", "Threadripper 9970X", "AMD")]
    assert _said("We use a Threadripper PRO 7985WX with 4 GPUs.\n") == [("reported.inventory", "Threadripper 7985WX", "AMD")]
    assert _said("The CPU is an AMD Ryzen 9 9950X3D 16-Core Processor with 2 GPUs.\n") == [
        ("reported.inventory", "Ryzen 9950X3D", "AMD")]
    # a board named by its socket's chipset carries a Threadripper
    assert _said("Hardware: 4x RTX PRO 6000 Blackwell on a WRX90 board, driver 580.159.03.\n") == [
        ("reported.inventory", "Threadripper (WRX90 board)", "AMD")]
    assert _said("The board is an ASUS Pro WS WRX90E-SAGE SE with 2 GPUs.\n") == [
        ("reported.inventory", "Threadripper (WRX90 board)", "AMD")]


def test_amd_desktop_lookalikes():
    # a part number that only starts like a chipset, and the brand without a model number
    assert _said("Part WRX900 ships with 4 GPUs.\n") == []
    assert _said("We run 2 GPUs, the Ryzen box is not the issue, 4090 cards.\n") == []


def test_gpu_to_gpu_slow_inside_one_server():
    assert _said("GPU-to-GPU bandwidth is very low inside this one server.\n") == [
        ("reported.symptom", "low-bandwidth", "single-node")]
    assert _said("Copies GPU to GPU are much slower than on the Xeon box.\n") == [
        ("reported.symptom", "low-bandwidth", "single-node")]


def test_gpu_to_gpu_lookalikes():
    # across machines it is network traffic, not peer traffic of one node; fine is not slow
    assert _said("GPU-to-GPU bandwidth between the two nodes is very low.\n") == []
    assert _said("GPU to GPU over RoCE is slow.\n") == []
    assert _said("GPU-to-GPU bandwidth is fine, the loader is slow.\n") == []


def test_p2p_lookalikes():
    # P2P said to be fine, and a CPU word without a model number
    assert _said("P2P is not slow at all here, the EPYC box is fine.\n") == []


def _kinds(text: str) -> list[str]:
    doc = Document.from_text(text)
    ctx = ParseContext(doc, "prose")
    try:
        prose.parse(doc, ctx)
    except NotApplicable:
        return []
    return [f.kind for f in ctx.facts if f.fact_type == "reported.symptom"]


@pytest.mark.parametrize("text", [
    "After the correction the result still shows DDP doesn't perform well: the 'sample' / slice stage of every step "
    "gets worse in each DDP process compared with the single-GPU run, and the forward/backward part is about the same.",
    "With 4 ranks the collate step takes three times as long per process as in the single-GPU run.",
    "With 4 processes the preprocessing is much slower in each process than in the single-GPU run, roughly 3x.",
])
def test_a_cpu_stage_slower_in_each_process(text):
    assert "cpu-stage-slower-per-process" in _kinds(text + "\n")


@pytest.mark.parametrize("text", [
    "The backward gets slower in each DDP process, data loading is unchanged.",   # the GPU's part
    "Data loading is not slower with two processes; the all-reduce is.",          # negated, GPU's part
    "Sampling gets faster with more processes.",                                   # faster
    "The dataloader is slower than on my laptop.",                                 # not per process
    "The preprocessing takes the same time in each process as in the single-GPU run.",  # unchanged
])
def test_a_cpu_stage_slower_lookalikes(text):
    assert "cpu-stage-slower-per-process" not in _kinds(text + "\n")
