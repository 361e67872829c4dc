"""CPU profiles from ``perf report``: per-event totals, hot symbols and symbol families."""

from clusterdx.facts.base import Fact


class PerfProfile(Fact):
    fact_type = "perf.profile"
    doc = "One event block of a perf report: event name, sample total, whether call graphs were recorded."
    event: str
    #: '# Samples: 48K' -> 48000 (perf rounds the display, so this is approximate); None if not printed
    samples: int | None = None
    event_count: int | None = None
    has_callgraph: bool = False
    lost_samples: int | None = None
    #: number of top-level rows in the block (all of them, not only those kept as facts)
    rows: int = 0
    #: report columns as printed, e.g. ['Overhead', 'Command', 'Shared Object', 'Symbol']
    columns: list[str] = []


class PerfSymbolShare(Fact):
    fact_type = "perf.symbol_share"
    doc = "One top-level perf report row: a symbol's share of an event's samples."
    symbol: str
    #: Self (or Overhead without call graphs) percentage of the event's samples
    share_pct: float
    #: Children percentage (self + callees) when the report has a Children column
    children_pct: float | None = None
    command: str = ""
    dso: str = ""
    event: str = ""
    #: the event block's total samples (perf.profile.samples)
    samples: int | None = None
    #: privilege marker was [k]
    kernel: bool = False
    #: the marker letter as printed: 'k', '.', 'g', 'u', 'H' ('' when there is no Symbol column)
    marker: str = ""


class PerfSymbolFamily(Fact):
    fact_type = "perf.symbol_family"
    doc = "Summed Self share of one family of kernel symbols (arm_smmu, page_zeroing, ...) in one event; 0 when absent."
    family: str
    share_pct: float
    #: distinct symbol names that contributed, largest first
    symbols: list[str] = []
    event: str = ""
    samples: int | None = None
