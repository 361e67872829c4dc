"""prose_gpu - GPU clocks and temperatures a ticket's prose states (part of the prose reader)

Users describe a throttled GPU in numbers: "100% usage, but 510 MHz! 88ºC!", "(the GPU default
speed is 1755 MHz)", "SM clock stuck at 900 MHz under load, max is 1980 MHz". A clock is read with
its role from the words before it in the sentence: ``max`` (default, maximum, base, boost, rated,
spec, stock, nominal, should), ``idle`` (idle, idling, at rest: a low clock there is normal power
saving), else ``now``; a ``now`` clock counts as under load only when its sentence says the GPU is
busy (a utilisation of 90% or more, "full load", "under load", "training", "busy"). Once the whole
document is read, the lowest loaded clock over the highest stated maximum becomes a
``reported.metric`` ``gpu_clock_fraction``. Temperatures (``88ºC``, ``88 °C``, ``88C``, ``88
degrees``) in a sentence that names the GPU, or next to a clock, become ``gpu_temperature``. Memory
clocks (``memory clock``, ``mem``) and CPU clocks (``CPU``, ``GHz``) are not GPU core clocks and are
skipped.

Sample input::

    A quick look through nvtop: yes, 100% usage good, but 510 MHz bad! 88ºC temp bad!
    (the GPU default speed is 1755 MHz)

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> from clusterdx.facts.parsers import prose
    >>> ctx = ParseContext(Document.from_text(SAMPLE), "prose"); prose.parse(Document.from_text(SAMPLE), ctx)
    >>> [(m.metric, m.value, m.label) for m in ctx.facts if m.metric.startswith("gpu_")]
    [('gpu_temperature', 88.0, 'GPU temperature'), ('gpu_clock_fraction', 29.1, '510 of 1755 MHz under load')]
"""

from __future__ import annotations

import re
from typing import Any

from clusterdx.facts import lazyre


SAMPLE = """\
A quick look through nvtop: yes, 100% usage good, but 510 MHz bad! 88ºC temp bad!
(the GPU default speed is 1755 MHz)
"""

_MHZ = lazyre.compile(r"(?<![\w.])(\d{2,4})\s{0,2}MHz\b", re.I)
_TEMP = lazyre.compile(r"(?<![\w.])(\d{2,3})\s{0,2}(?:[º°˚]\s{0,1}C\b|C\b(?!\w)|degrees?\s{1,2}(?:C\b|celsius))", re.I)
_MAX_WORDS = lazyre.compile(r"\b(?:default|max\w{0,4}|base|boost\w{0,3}|rated|spec\w{0,7}|stock|nominal|should|"
                        r"advertis\w{0,3}|normal(?:ly)?|supposed)\b", re.I)
_IDLE_WORDS = lazyre.compile(r"\b(?:idle|idling|at rest|no load|nothing running)\b", re.I)
_LOAD_WORDS = lazyre.compile(r"\b(?:9\d|100)\s{0,2}%\s{0,2}(?:gpu\s{1,2})?(?:usage|util\w{0,8}|load|busy)|"
                         r"\b(?:usage|util\w{0,8})\s{0,3}(?:of|at|is|:)?\s{0,3}(?:9\d|100)\s{0,2}%|"
                         r"\b(?:full|under|heavy)\s{1,2}load\b|\btraining\b|\bbusy\b|\bstress\w{0,4}\b", re.I)
_NOT_CORE = lazyre.compile(r"\b(?:mem\w{0,5}|HBM|GDDR\w?|CPU|processor|Xeon|EPYC|bus|PCIe|DDR\d?|RAM)\s{0,3}(?:\w+\s{1,3}){0,2}$", re.I)
_GPU_WORDS = lazyre.compile(r"\b(?:GPUs?|nvtop|nvidia-smi|card|H100|A100|H200|B200|L40S?|RTX|V100|hot\w{0,2}|thermal\w{0,2}|temp\w{0,9})\b", re.I)


class GpuState:
    """Clocks and temperatures seen in one document; :meth:`finish` turns them into metrics."""

    def __init__(self) -> None:
        self.now: list[tuple[int, float, str]] = []
        self.max: list[tuple[int, float, str]] = []
        self.temps: set[float] = set()

    def sentence(self, reader: Any, index: int, sentence: str) -> None:
        from clusterdx.facts.model.reported import ReportedMetric

        clocks = False
        for m in _MHZ.finditer(sentence):
            before = sentence[max(0, m.start() - 60):m.start()]
            if _NOT_CORE.search(before[-30:]):
                continue
            clocks = True
            value = float(m.group(1))
            clause = re.split(r"[,;(]|\bbut\b", before)[-1]
            if _MAX_WORDS.search(clause):
                self.max.append((index, value, sentence))
            elif _IDLE_WORDS.search(sentence):
                continue  # a low idle clock is power saving
            elif _LOAD_WORDS.search(sentence):
                self.now.append((index, value, sentence))
        for m in _TEMP.finditer(sentence):
            value = float(m.group(1))
            if not 20 <= value <= 130 or not (clocks or _GPU_WORDS.search(sentence)) or _IDLE_WORDS.search(sentence):
                continue
            if value in self.temps:
                continue
            self.temps.add(value)
            reader.add(ReportedMetric, index, ("gpu_temp", value), metric="gpu_temperature", value=value, unit="C",
                       value_norm=value, label="GPU temperature", text=_cut(sentence))

    def finish(self, reader: Any) -> None:
        from clusterdx.facts.model.reported import ReportedMetric

        if not self.now or not self.max:
            return
        index, low, sentence = min(self.now, key=lambda t: t[1])
        top = max(v for _, v, _ in self.max)
        if top <= 0 or low >= top:
            return
        fraction = low / top
        reader.add(ReportedMetric, index, ("gpu_clock_fraction",), metric="gpu_clock_fraction",
                   value=round(fraction * 100, 1), unit="%", value_norm=round(fraction, 4),
                   label=f"{low:g} of {top:g} MHz under load", text=_cut(sentence))


def _cut(text: str, n: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."
