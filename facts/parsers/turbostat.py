"""turbostat - Command

Output of ``turbostat`` (x86, needs the msr module and root): a tab-separated header, a summary
row with ``-`` in the topology columns (``Package``, ``Die``, ``Node``, ``Core``, ``CPU``), then
one row per CPU. Rows are ragged: core-level columns (``CPU%c6``, ``CoreTmp``) are printed only
for a core's first thread and package-level ones (``PkgWatt``) only for a package's first CPU,
so later rows end early; cells map to columns from the left. The column set depends on
``--show`` and on the CPU. Command mode prints ``10.004311 sec`` first; interval mode repeats
the header before every block; without ``--quiet`` a preamble comes first. With ``--Summary``
or without topology columns every row is a summary. Yields one ``cpu.turbostat`` per row.

Sample input::

    10.004311 sec
    Core	CPU	Avg_MHz	Busy%	Bzy_MHz	TSC_MHz	CPU%c6	PkgWatt
    -	-	798	26.57	3002	2000	38.20	462.96
    0	0	2987	99.51	3002	2000	0.12	247.13
    0	112	14	0.47	2995	2000

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "turbostat"); parse(doc, ctx)
    >>> [(f.summary, f.cpu, f.bzy_mhz, f.c6_pct, f.pkg_watt) for f in ctx.facts]
    [(True, None, 3002.0, 38.2, 462.96), (False, 0, 3002.0, 0.12, 247.13), (False, 112, 2995.0, None, None)]
    >>> ctx.facts[2].source.line
    5
    >>> sniff(doc)
    0.95
"""

from __future__ import annotations

import re

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.cpu import TurbostatSample


SAMPLE = """\
10.004311 sec
Core\tCPU\tAvg_MHz\tBusy%\tBzy_MHz\tTSC_MHz\tCPU%c6\tPkgWatt
-\t-\t798\t26.57\t3002\t2000\t38.20\t462.96
0\t0\t2987\t99.51\t3002\t2000\t0.12\t247.13
0\t112\t14\t0.47\t2995\t2000
"""

_TOPOLOGY = ("Package", "Die", "Node", "Core", "CPU")
_METRICS = {"Busy%": "busy_pct", "Bzy_MHz": "bzy_mhz", "Avg_MHz": "avg_mhz", "TSC_MHz": "tsc_mhz",
            "IPC": "ipc", "PkgWatt": "pkg_watt", "RAMWatt": "ram_watt", "CoreTmp": "core_tmp",
            "PkgTmp": "pkg_tmp"}
_SECONDS = lazyre.compile(r"^\s*\d{1,9}\.\d+ sec\s*$")
_NUM = lazyre.compile(r"^-?[0-9]{1,15}(?:\.[0-9]{1,9})?$")


def _is_header(cells: list[str]) -> bool:
    names = set(cells)
    return bool(names & {"Busy%", "Bzy_MHz", "Avg_MHz"}) and all(not _NUM.match(c) for c in cells)


def sniff(doc: Document) -> float:
    head = doc.lines[:200]
    if any(_is_header(ln.split()) for ln in head):
        return 0.95
    # no table, but turbostat's own preamble or error (VMs: no MSR access): ours to explain
    if any(ln.startswith(("turbostat version", "turbostat: ")) for ln in head[:20]):
        return 0.6
    return 0.0


def parse(doc: Document, ctx: ParseContext) -> None:
    header: list[str] | None = None
    block = -1
    errors: list[str] = []
    for i, line in enumerate(doc.lines):
        cells = line.split()
        if not cells or _SECONDS.match(line):
            continue
        if _is_header(cells):
            header, block = cells, block + 1
            continue
        if header is None:
            # the preamble (version, CPUID, MSR decoding) carries nothing we keep
            if line.startswith("turbostat:") or ("msr" in line.lower() and "no " in line.lower()):
                errors.append(line.strip())
            continue
        if len(cells) > len(header):
            ctx.warn(i, f"row has {len(cells)} cells for {len(header)} columns")
            continue
        row = dict(zip(header, cells))
        if not all(_NUM.match(v) or v == "-" for v in row.values()):
            ctx.warn(i, f"not a turbostat row: {line.strip()[:80]!r}")
            continue
        _add_row(ctx, i, header, row, block)
    if not ctx.facts:
        reason = f": {errors[0][:120]}" if errors else ""
        raise NotApplicable(f"no turbostat table{reason}")
    last = max(i for i, ln in enumerate(doc.lines) if ln.strip())
    width = len(doc.lines[last].split())
    if header and width < _min_width(header) and not _SECONDS.match(doc.lines[last]):
        ctx.warn(last, "last row is shorter than any turbostat row (truncated?)")


def _min_width(header: list[str]) -> int:
    # a row always reaches past the per-thread columns up to the last one before core-level ones
    core_level = [k for k, name in enumerate(header) if name.startswith(("CPU%c", "Core", "Pkg", "RAM", "Cor", "GFX"))
                  and name not in _TOPOLOGY]
    return core_level[0] if core_level else len(header)


def _num(value: str | None) -> float | None:
    return float(value) if value is not None and _NUM.match(value) else None


def _int(value: str | None) -> int | None:
    return int(value) if value is not None and re.fullmatch(r"[0-9]{1,9}", value) else None


def _add_row(ctx: ParseContext, i: int, header: list[str], row: dict[str, str], block: int) -> None:
    topo = [row.get(name) for name in _TOPOLOGY if name in header]
    summary = not topo or all(v == "-" for v in topo)
    fields = {field: _num(row.get(col)) for col, field in _METRICS.items()}
    # CPU%c6 is the hardware core residency; C6% only what the OS asked for
    fields["c6_pct"] = _num(row.get("CPU%c6")) if "CPU%c6" in header else _num(row.get("C6%"))
    ctx.add(
        TurbostatSample, i, summary=summary, sample=max(block, 0),
        cpu=None if summary else _int(row.get("CPU")), core=None if summary else _int(row.get("Core")),
        package=None if summary else _int(row.get("Package")), **fields,
    )


FORMATS = [
    Format(
        name="turbostat",
        command="turbostat --quiet --show Core,CPU,Avg_MHz,Busy%,Bzy_MHz,TSC_MHz,CPU%c6,PkgWatt --interval 5",
        facts=("cpu.turbostat",),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\bturbostat\b",),
        description="turbostat: per-CPU busy %, busy/average MHz, C6 residency, package power",
    )
]
