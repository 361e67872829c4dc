"""prose_load - what the user says about GPU and CPU load (part of the prose reader)

GPUs said to sit idle while the host's CPU is said to be saturated, and GPUs said to be fully
utilised at low power.

"I see GPU utilization 0% ... I stall out with CPU utilization 100%", "the GPUs sit idle, GPU
utilization stays around 5% ... CPU usage is at 100% on all cores": the GPUs wait on work the
host's CPUs cannot hand them because every core is busy. Both statements must be in the same
document (one each, any order); together they become a ``reported.symptom``
``gpu-idle-cpu-saturated`` of one machine, placed at the CPU statement.

GPU idle: a GPU utilisation of at most 20% ("GPU utilization 0%", "0% GPU util", "GPU-Util stays
at 3%"), or the GPUs said to be idle ("the GPUs sit idle", "GPU is mostly idle"). CPU saturated: the
CPU (not one process) at 95% or more ("CPU utilization 100%", "CPU usage is at 100% on all cores",
"all cores at 100%", "the CPU is maxed out").

Look-alikes left out: one process or worker at 100% ("each worker is at 100% CPU in top") is one
busy core, not the host; a paragraph saying the other cores are idle says the host has CPU to spare;
GPU memory ("GPU memory 0% used", "memory utilization") is not GPU utilisation; a GPU at 99% beside
a busy CPU is no starved GPU.

GPUs said to be fully utilised while drawing little power ("GPU-Util 100% but the power draw is very
low", "60W / 300W", "GPU利用率100%，但是功率很低"): nvidia-smi counts a GPU as utilised while any
kernel runs, and a collective kernel spinning on a peer that has not arrived yet is such a kernel,
cold and at low power. Both in one document become a ``reported.symptom`` ``gpu-busy-low-power``
(no machine count), placed at the power statement. A draw of 40% of the limit or less is low; a
draw near the limit ("290W / 300W") or "high power" is not.

Sample input::

    I can get the GPU's fully loaded with data, but I see GPU utilization 0%.
    I stall out after "Training started" with CPU utilization 100%.

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> from clusterdx.facts.parsers import prose
    >>> doc = Document.from_text(SAMPLE); ctx = ParseContext(doc, "prose"); prose.parse(doc, ctx)
    >>> [(f.kind, f.where, f.source.line) for f in ctx.facts if f.fact_type == "reported.symptom"
    ...  and f.kind == "gpu-idle-cpu-saturated"]
    [('gpu-idle-cpu-saturated', 'single-node', 2)]
"""

from __future__ import annotations

import re
from typing import Any

from clusterdx.facts import lazyre


SAMPLE = ("I can get the GPU's fully loaded with data, but I see GPU utilization 0%.\n"
          "I stall out after \"Training started\" with CPU utilization 100%.\n")

_UTIL = r"(?:utili[sz]ation|util|usage|load|-util)"
#: "GPU utilization 0%", "GPU-Util stays at 3%", "0% GPU utilization", "GPUs sit idle"
_GPU_IDLE = lazyre.compile(
    rf"\bGPU(?:'?s)?\s{{0,3}}{_UTIL}\s{{0,3}}(?:is\s{{1,3}}|stays?\s{{1,3}}|remains?\s{{1,3}}|shows?\s{{1,3}}|of\s{{1,3}}|:\s{{0,3}}|=\s{{0,3}})?"
    rf"(?:(?:at|around|about|only|near|below|under)\s{{1,3}})?~?\s{{0,2}}(\d{{1,2}}(?:\.\d)?)\s{{0,2}}%"
    rf"|(?<![\d.])(\d{{1,2}}(?:\.\d)?)\s{{0,2}}%\s{{0,3}}GPU\s{{0,3}}{_UTIL}"
    r"|\bGPU(?:'?s)?\s{1,3}(?:\w+\s{1,3}){0,2}?(?:sit|sits|stay|stays|are|is|remain|remains|look|looks)\s{1,3}(?:mostly\s{1,3}|completely\s{1,3}|almost\s{1,3})?idle\b",
    re.I)
#: "CPU utilization 100%", "CPU usage is at 100% on all cores", "100% CPU on every core", "all cores at 100%"
_CPU_FULL = lazyre.compile(
    rf"\bCPUs?\s{{0,3}}{_UTIL}\s{{0,3}}(?:is\s{{1,3}}|was\s{{1,3}}|stays?\s{{1,3}}|goes\s{{1,3}}|:\s{{0,3}}|=\s{{0,3}})?(?:(?:at|to|around|about|near)\s{{1,3}})?~?\s{{0,2}}(9\d|100)\s{{0,2}}%"
    r"|\b(?:all|every)\s{1,3}(?:\d{1,3}\s{1,3})?(?:CPU\s{1,3})?(?:cores?|CPUs|threads)\s{1,3}(?:are\s{1,3})?(?:at|busy\s{1,3}at|running\s{1,3}at)\s{1,3}(9\d|100)\s{0,2}%"
    r"|\bCPU\s{1,3}(?:is\s{1,3})?(?:maxed\s{1,3}out|pegged|saturated|fully\s{1,3}(?:loaded|used|busy))",
    re.I)
#: one process's figure: one busy core, not the host
_ONE_PROCESS = lazyre.compile(r"\b(?:each|every|one|a|the|single)\s{1,3}(?:data\s?loader\s{1,3})?(?:worker|process|thread|python|core)\b|\bper\s{1,3}(?:worker|process)\b", re.I)
_ALL_CORES = lazyre.compile(r"\b(?:all|every)\s{1,3}(?:\d{1,3}\s{1,3})?(?:CPU\s{1,3})?(?:cores?|CPUs|threads)\b", re.I)
#: the host has CPU to spare
_CORES_IDLE = lazyre.compile(r"\b(?:other|remaining|rest\s{1,3}of\s{1,3}the)\s{1,3}(?:CPU\s{1,3})?(?:cores|CPUs)\s{1,3}(?:are\s{1,3}|stay\s{1,3}|sit\s{1,3})?(?:idle|free|unused)\b", re.I)
#: GPU memory or a memory-controller figure, not the SMs
_GPU_MEMORY = lazyre.compile(r"\b(?:memory|mem|VRAM)\s{0,3}$", re.I)
_MAX_IDLE_PCT = 20.0

#: "GPU-Util 100%", "GPU utilization is at 100%", "100% GPU util", "GPU利用率100%", "GPU利用率满载" (full load)
_GPU_FULL = lazyre.compile(r"(?<![A-Za-z0-9])GPU(?:'?s)?[\s-]{0,2}(?:utili[sz]ation|util|usage|利用率|使用率)\s{0,3}(?:is\s{1,3}|at\s{1,3}|shows?\s{1,3}|of\s{1,3}|:\s{0,3}|=\s{0,3})?"
                           r"(?:(?:at|around|about|near)\s{1,3})?(?:(9\d|100)\s{0,2}%|满载|满了|跑满)"
                           r"|(?<![\d.])(9\d|100)\s{0,2}%\s{0,3}GPU[\s-]{0,2}(?:utili[sz]ation|util|usage)", re.I)
#: "the power draw is very low", "low power usage", "功率很低", "功耗很低"
_POWER_LOW = lazyre.compile(r"\b(?:power(?:\s{1,3}(?:draw|consumption|usage|use))?)\s{1,3}(?:is\s{1,3}|was\s{1,3}|stays?\s{1,3}|remains?\s{1,3})?"
                            r"(?:(?:very|quite|really|so|extremely|pretty)\s{1,3})?(?:low|tiny|small)\b"
                            # "low power usage"; "low power mode" is a setting, not a draw
                            r"|\blow\s{1,3}power\s{1,3}(?:draw|consumption|usage)\b"
                            r"|(?:功率|功耗)(?:很|非常|较|比较|特别)?低", re.I)
#: "60W / 300W", "around 60 W of 300 W": the draw against the limit
_WATTS = lazyre.compile(r"(?<![\d.])(\d{1,4})\s{0,2}W\s{0,3}(?:/|of|out\s{1,3}of)\s{0,3}(\d{2,4})\s{0,2}W\b", re.I)
_MAX_LOW_POWER = 0.4


class LoadState:
    """GPU-idle and CPU-saturated statements of one document; :meth:`finish` joins them."""

    def __init__(self) -> None:
        self.gpu_idle: tuple[int, str] | None = None
        self.cpu_full: tuple[int, str] | None = None
        self.spare = False
        self.gpu_full = False
        self.power_low: tuple[int, str] | None = None

    def sentence(self, index: int, text: str) -> None:
        if _CORES_IDLE.search(text):
            self.spare = True
        for m in _GPU_IDLE.finditer(text):
            pct = m.group(1) or m.group(2)
            if _GPU_MEMORY.search(text[max(0, m.start() - 12):m.start()]):
                continue
            if pct is not None and float(pct) > _MAX_IDLE_PCT:
                continue
            self.gpu_idle = self.gpu_idle or (index, text)
            break
        if _GPU_FULL.search(text):
            self.gpu_full = True
        watts = _WATTS.search(text)
        low = (float(watts.group(1)) <= _MAX_LOW_POWER * float(watts.group(2))) if watts and float(watts.group(2)) > 0 \
            else bool(_POWER_LOW.search(text))
        if low:
            self.power_low = self.power_low or (index, text)
        c = _CPU_FULL.search(text)
        if c and (_ALL_CORES.search(text) or not _ONE_PROCESS.search(text)):
            self.cpu_full = self.cpu_full or (index, text)

    def finish(self, reader: Any) -> None:
        from clusterdx.facts.model.reported import ReportedSymptom

        if self.gpu_full and self.power_low is not None:
            index, text = self.power_low
            reader.add(ReportedSymptom, index, ("symptom", "gpu-busy-low-power"), kind="gpu-busy-low-power",
                       text=" ".join(text.split())[:200])
        if self.gpu_idle is None or self.cpu_full is None or self.spare:
            return
        index, text = self.cpu_full
        reader.add(ReportedSymptom, index, ("symptom", "gpu-idle-cpu-saturated", "single-node"),
                   kind="gpu-idle-cpu-saturated", where="single-node", text=" ".join(text.split())[:200])
