"""The prose reader's idle-GPU / saturated-CPU statement: both said in one document."""

import doctest

import pytest

from clusterdx.facts.base import NotApplicable
from clusterdx.facts.parsers import prose_load
from tests.parsers.helpers import parse_text


def starved(text: str) -> list[str]:
    try:
        facts = parse_text("prose", text).facts
    except NotApplicable:
        return []
    return [f.where for f in facts if f.fact_type == "reported.symptom" and f.kind == "gpu-idle-cpu-saturated"]


def test_doctests():
    assert doctest.testmod(prose_load).failed == 0


@pytest.mark.parametrize("text", [
    "I see GPU utilization 0%. I stall out after \"Training started\" with CPU utilization 100%.\n",
    "The GPUs sit idle most of the step.\r\nCPU usage is at 100% on all cores of the host.\r\n",
    "user@gpu-node:~$ nvidia-smi shows 3% GPU util\nhtop: all 64 cores at 100%\n",
    "CPU is maxed out during training\n\nand the GPU utilization stays at 12% on every card.\n",
])
def test_idle_gpus_beside_a_saturated_cpu(text):
    assert starved(text) == ["single-node"]


@pytest.mark.parametrize("text", [
    # the GPU is busy: no starvation
    "GPU utilization is at 99%. CPU usage is at 100% on all cores.\n",
    # just above the idle line
    "GPU utilization stays around 25%. CPU utilization 100%.\n",
    # one worker at 100% is one busy core; the other cores are idle
    "GPU utilization is only 10%. Each dataloader worker is at 100% CPU, the other cores are idle.\n",
    # GPU memory, not GPU utilisation
    "GPU memory usage 5% and CPU utilization 100%.\n",
    # only one of the two statements
    "I see GPU utilization 0% while the loss goes down.\n",
    "CPU utilization 100% during tokenization.\n",
])
def test_lookalikes_are_not_a_starved_gpu(text):
    assert starved(text) == []


def busy_cold(text: str) -> int:
    try:
        facts = parse_text("prose", text).facts
    except NotApplicable:
        return 0
    return sum(1 for f in facts if f.fact_type == "reported.symptom" and f.kind == "gpu-busy-low-power")


@pytest.mark.parametrize("text", [
    "# sft llama3-8B deepspeed zero3很慢， GPU利用率100%，但是功率很低\n",
    "nvidia-smi shows GPU-Util 100% on all four cards, but the power draw is very low.\n",
    "GPU utilization is at 100%.\r\nPower: 60W / 300W on each card.\r\n",
    "各位大佬 GPU功耗很低 但是GPU利用率满载 是什么情况\n",
    "user@box:~$ nvidia-smi\n100% GPU util and low power usage on every GPU\n",
])
def test_full_utilization_at_low_power(text):
    assert busy_cold(text) == 1


@pytest.mark.parametrize("text", [
    "GPU-Util 100% and the power draw is high, around 290W / 300W.\n",   # near the limit: computing
    "GPU-Util 100% at 130W / 300W.\n",                                   # 43%: above the low line
    "GPU utilization 100% the whole time.\n",                            # no power said
    "The power draw is very low, GPU utilization only 30%.\n",           # not fully utilised
    "Low power mode is enabled in the BIOS; GPU-Util 100%.\n",           # no power *draw* low... a BIOS mode
])
def test_lookalikes_are_not_busy_and_cold(text):
    assert busy_cold(text) == 0
