"""Observed busy CPU clock against the CPU's maximum clock."""

from __future__ import annotations

from typing import Sequence

from clusterdx.facts.base import Fact
from clusterdx.facts.derive._common import of_type
from clusterdx.facts.model.derived import CpuFreqShortfall


def derive(facts: Sequence[Fact]) -> list[Fact]:
    infos = [i for i in of_type(facts, "cpu.info") if i.max_mhz]
    if not infos:
        return []
    max_mhz = infos[0].max_mhz
    observed: list[tuple[float, Fact, str]] = []
    summaries = [t for t in of_type(facts, "cpu.turbostat") if t.summary and t.bzy_mhz]
    if summaries:
        observed = [(t.bzy_mhz, t, "turbostat Bzy_MHz (summary)") for t in summaries]
    else:
        freqs = [f for f in of_type(facts, "cpu.effective_freq") if f.cpu is None]
        observed = [(f.ghz * 1000.0, f, f"perf stat ({f.method})") for f in freqs]
    out: list[Fact] = []
    for mhz, fact, basis in observed[:1]:
        out.append(CpuFreqShortfall(node=fact.node, scope=fact.scope, source=fact.source, observed_mhz=mhz,
                                    max_mhz=max_mhz, ratio=round(mhz / max_mhz, 4), basis=basis))
    return out
