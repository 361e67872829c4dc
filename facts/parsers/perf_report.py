"""perf report - Command

Output of ``perf report --stdio`` (any ``--sort`` keys, with or without ``--no-children``,
``--header``, call graphs, several events). One ``perf.profile`` per event block, one
``perf.symbol_share`` per top-level row at or above 0.05 % (Self or Children; at most 500 per
event), and one ``perf.symbol_family`` per known kernel symbol family and event, also when the
family is absent (share 0), so that a rule can tell "SMMU not hot" from "no profile".

Rows are split at the columns given by the dotted line under the header (perf pads every
column to its widest value); rows that do not fit fall back to splitting on whitespace around
the ``[k]``/``[.]`` marker. Call-chain lines under a row are skipped.

Sample input::

    # Total Lost Samples: 0
    #
    # Samples: 1M of event 'cycles'
    # Event count (approx.): 1871042233519
    #
    # Overhead  Command          Shared Object      Symbol
    # ........  ...............  .................  ...................................
    #
        31.87%  pt_main_thread   [kernel.kallsyms]  [k] arm_smmu_cmdq_issue_cmdlist
        11.42%  python3          [kernel.kallsyms]  [k] arm_smmu_cmdq_issue_cmdlist
         6.91%  pt_main_thread   libcuda.so.570.1   [.] 0x0000000000341a8c
         0.97%  python3          [kernel.kallsyms]  [k] clear_page

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "perf-report"); parse(doc, ctx)
    >>> [prof] = [f for f in ctx.facts if f.fact_type == "perf.profile"]
    >>> (prof.event, prof.samples, prof.event_count, prof.has_callgraph)
    ('cycles', 1000000, 1871042233519, False)
    >>> rows = [f for f in ctx.facts if f.fact_type == "perf.symbol_share"]
    >>> [(f.symbol, f.share_pct, f.command, f.kernel) for f in rows[:2]]  # doctest: +NORMALIZE_WHITESPACE
    [('arm_smmu_cmdq_issue_cmdlist', 31.87, 'pt_main_thread', True),
     ('arm_smmu_cmdq_issue_cmdlist', 11.42, 'python3', True)]
    >>> {f.family: round(f.share_pct, 2) for f in ctx.facts if f.fact_type == "perf.symbol_family"}["arm_smmu"]
    43.29
    >>> ctx.facts[1].source.line
    9
    >>> sniff(doc) > 0.9
    True
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.perf import PerfProfile, PerfSymbolFamily, PerfSymbolShare
from clusterdx.facts.model.platform import KernelVersion
from clusterdx.facts.parsers.dmesg import page_size_hint


SAMPLE = """\
# Total Lost Samples: 0
#
# Samples: 1M of event 'cycles'
# Event count (approx.): 1871042233519
#
# Overhead  Command          Shared Object      Symbol
# ........  ...............  .................  ...................................
#
    31.87%  pt_main_thread   [kernel.kallsyms]  [k] arm_smmu_cmdq_issue_cmdlist
    11.42%  python3          [kernel.kallsyms]  [k] arm_smmu_cmdq_issue_cmdlist
     6.91%  pt_main_thread   libcuda.so.570.1   [.] 0x0000000000341a8c
     0.97%  python3          [kernel.kallsyms]  [k] clear_page
"""

MIN_SHARE = 0.05
MAX_ROWS = 500

_SAMPLES = lazyre.compile(r"^#\s*Samples:\s*([\d.]+)\s*([KMGkmg]?)\s+of event\s+'(.*)'\s*$")
# perf from the 2.6.3x era printed '# Events: 48K cycles'
_EVENTS_OLD = lazyre.compile(r"^#\s*Events:\s*([\d.]+)\s*([KMGkmg]?)\s+(\S.*?)\s*$")
_EVENT_COUNT = lazyre.compile(r"^#\s*Event count \(approx\.\):\s*(\d+)")
_LOST = lazyre.compile(r"^#\s*Total Lost Samples:\s*(\d+)")
_OS_RELEASE = lazyre.compile(r"^#\s*os release\s*:\s*(\S+)")
_ARCH = lazyre.compile(r"^#\s*arch\s*:\s*(\S+)")
_HEADER = lazyre.compile(r"^#\s+(Overhead|Children)\b")
_DOTS = lazyre.compile(r"^#\s+\.+(?:\s+\.+)*\s*$")
_ROW = lazyre.compile(r"^\s*\d+(?:\.\d+)?%")
_FLAT_CHAIN = lazyre.compile(r"^\s*\d+(?:\.\d+)?%\s*$")
_FOLDED_CHAIN = lazyre.compile(r"^\d+(?:\.\d+)?% [^\s\[]\S*$")
_MARKER = lazyre.compile(r"(?:^|\s)\[([k.guH])\]\s+(\S.*?)\s*$")
# compiler clones (foo.isra.0, foo.constprop.0) belong to foo's family
_CLONE = lazyre.compile(r"(?:\.(?:isra|constprop|part|cold|lto_priv|llvm)(?:\.\d+)?)+$")

_PCT_COLS = {"Overhead", "Children", "Self", "guest sys", "guest usr", "sys", "usr"}
_MULT = {"": 1, "K": 1_000, "M": 1_000_000, "G": 1_000_000_000}

#: family -> (exact names, name prefixes); matched after stripping compiler-clone suffixes
FAMILIES: dict[str, tuple[frozenset[str], tuple[str, ...]]] = {
    "arm_smmu": (
        frozenset({"queue_poll", "queue_poll_cons", "queue_remove_raw"}),
        ("arm_smmu_", "__arm_smmu_"),
    ),
    "page_zeroing": (
        frozenset({"clear_huge_page", "clear_subpage", "folio_zero_user", "clear_user_highpage",
                   "clear_highpage", "kernel_init_pages"}),
        ("clear_page", "__clear_page"),
    ),
    "numa_migration": (
        frozenset({"do_numa_page", "change_prot_numa", "numa_migrate_prep", "task_numa_work"}),
        ("migrate_pages", "migrate_misplaced_", "task_numa_"),
    ),
    "compaction": (
        frozenset({"compact_zone", "compaction_alloc", "try_to_compact_pages", "kcompactd"}),
        ("isolate_migratepages", "isolate_freepages", "compact_zone", "kcompactd_"),
    ),
    "iommu_map": (
        frozenset({"iommu_map", "iommu_unmap", "iommu_map_sg", "iommu_map_sgtable"}),
        ("__iommu_dma_", "iommu_dma_map", "iommu_dma_unmap", "__iommu_map", "__iommu_unmap",
         "iommu_map_", "iommu_unmap_", "__arm_lpae_map", "__arm_lpae_unmap", "arm_lpae_map",
         "arm_lpae_unmap"),
    ),
    # x86 counterparts of arm_smmu: VT-d queued invalidation and AMD-Vi
    "x86_iommu": (
        frozenset({"qi_submit_sync", "qi_flush_iotlb", "qi_flush_dev_iotlb"}),
        ("intel_iommu_", "amd_iommu_", "iommu_v1_", "iommu_flush_iotlb", "domain_flush_"),
    ),
}


def symbol_family(symbol: str) -> str:
    """The family a symbol belongs to, or ''.

    >>> symbol_family("arm_smmu_cmdq_issue_cmdlist"), symbol_family("clear_page_erms")
    ('arm_smmu', 'page_zeroing')
    >>> symbol_family("el0_svc_common.constprop.0")
    ''
    """
    name = _CLONE.sub("", symbol.strip())
    for family, (exact, prefixes) in FAMILIES.items():
        if name in exact or name.startswith(prefixes):
            return family
    return ""


def sniff(doc: Document) -> float:
    head = doc.lines[:200]
    has_samples = any(_SAMPLES.match(ln) or _EVENTS_OLD.match(ln) for ln in head)
    has_header = any(_HEADER.match(ln) for ln in head)
    has_dots = any(_DOTS.match(ln) for ln in head)
    rows = sum(1 for ln in head if _ROW.match(ln) and _MARKER.search(ln))
    if has_samples and (has_header or rows):
        return 0.95
    if has_header and has_dots and rows:
        return 0.85
    if has_header and has_dots:
        return 0.5
    return 0.0


@dataclass
class _Column:
    name: str
    start: int
    end: int | None


@dataclass
class _Block:
    index: int
    event: str
    samples: int | None
    event_count: int | None = None
    columns: list[_Column] = field(default_factory=list)
    header_index: int | None = None
    rows: list[tuple[int, dict]] = field(default_factory=list)
    callgraph: bool = False
    last_index: int = 0


def _samples(num: str, unit: str) -> int | None:
    if len(num) > 15:
        return None
    try:
        return int(round(float(num) * _MULT[unit.upper()]))
    except (ValueError, KeyError, OverflowError):
        return None


def _columns(header: str, dots: str) -> list[_Column]:
    spans = [(m.start(), m.end()) for m in re.finditer(r"\.+", dots)]
    cols: list[_Column] = []
    for n, (start, end) in enumerate(spans):
        nxt = spans[n + 1][0] if n + 1 < len(spans) else None
        name = header[start:nxt].strip() if start < len(header) else ""
        cols.append(_Column(name=name, start=start, end=nxt))
    return cols


def _int(text: str) -> int | None:
    return int(text) if len(text) <= 18 else None


def _pct(text: str) -> float | None:
    m = re.fullmatch(r"\s*(\d{1,4}(?:\.\d+)?)%\s*", text)
    return float(m.group(1)) if m else None


def _split_fixed(line: str, cols: list[_Column]) -> dict | None:
    """Slice a row at the dotted-line positions; None when the row does not line up."""
    out: dict = {}
    for col in cols:
        if col.start > 0 and col.start <= len(line) and not line[col.start - 1].isspace():
            return None
        value = line[col.start:col.end].strip() if col.start < len(line) else ""
        out[col.name] = value
    return _typed(out)


def _split_tokens(line: str, names: list[str]) -> dict | None:
    """Whitespace fallback for rows that lost their alignment (tabs, re-wrapped pastes)."""
    rest = line.strip()
    out: dict = {}
    pct_names = [n for n in names if n in _PCT_COLS]
    for name in pct_names:
        m = re.match(r"(\d{1,4}(?:\.\d+)?%)\s*", rest)
        if not m:
            return None
        out[name] = m.group(1)
        rest = rest[m.end():]
    others = [n for n in names if n not in _PCT_COLS]
    if "Symbol" in others:
        m = _MARKER.search(" " + rest)
        if not m:
            return None
        out["Symbol"] = f"[{m.group(1)}] {m.group(2)}"
        rest = (" " + rest)[: m.start()].strip()
        others.remove("Symbol")
    tokens = rest.split()
    if len(tokens) < len(others):
        if others:
            return None
    # thread names may contain spaces; everything else is one token, so extras go to the first
    extra = len(tokens) - len(others)
    if others and extra > 0:
        tokens = [" ".join(tokens[: extra + 1])] + tokens[extra + 1:]
    for name, tok in zip(others, tokens):
        out[name] = tok
    return _typed(out)


def _typed(raw: dict) -> dict | None:
    row: dict = {"share": None, "children": None, "command": raw.get("Command", ""),
                 "dso": raw.get("Shared Object", ""), "symbol": "", "marker": ""}
    if "Self" in raw:
        row["share"] = _pct(raw["Self"])
        if "Children" in raw:
            row["children"] = _pct(raw["Children"])
            if row["children"] is None:
                return None
    elif "Overhead" in raw:
        row["share"] = _pct(raw["Overhead"])
    elif "Children" in raw:
        row["share"] = _pct(raw["Children"])
    if row["share"] is None:
        return None
    if "Symbol" in raw:
        m = _MARKER.search(" " + raw["Symbol"])
        if not m:
            return None
        row["marker"], row["symbol"] = m.group(1), m.group(2)
    return row


def parse(doc: Document, ctx: ParseContext) -> None:
    try:
        _parse(doc, ctx)
    except (ValueError, OverflowError) as exc:
        # last line of defence for numbers no real tool prints (a 5000-digit count, 1e400 %)
        raise ParseError(f"unreadable value: {str(exc)[:120]}") from None


def _parse(doc: Document, ctx: ParseContext) -> None:
    blocks: list[_Block] = []
    block: _Block | None = None
    lost: int | None = None
    release = arch = ""
    release_index = 0
    pending_header: tuple[int, str] | None = None
    columns: list[_Column] = []
    last_kind = ""

    for i, raw_line in enumerate(doc.lines):
        line = raw_line.rstrip()
        stripped = line.strip()
        if line.startswith("#"):
            m = _SAMPLES.match(line) or _EVENTS_OLD.match(line)
            if m:
                block = _Block(index=i, event=m.group(3), samples=_samples(m.group(1), m.group(2)),
                               last_index=i)
                blocks.append(block)
                columns = []
                last_kind = "meta"
                continue
            if (m := _EVENT_COUNT.match(line)) and block is not None:
                block.event_count = _int(m.group(1))
            elif m := _LOST.match(line):
                lost = _int(m.group(1))
            elif m := _OS_RELEASE.match(line):
                release, release_index = m.group(1), i
            elif m := _ARCH.match(line):
                arch = m.group(1)
            elif _HEADER.match(line):
                pending_header = (i, line)
            elif _DOTS.match(line) and pending_header is not None:
                columns = _columns(pending_header[1], line)
                if block is None:
                    # the '# Samples' line was cut off: keep the rows under an unnamed event
                    block = _Block(index=pending_header[0], event="", samples=None)
                    blocks.append(block)
                    ctx.warn(i, "perf report header without '# Samples: ... of event' line; event unknown")
                block.columns = columns
                block.header_index = pending_header[0]
                pending_header = None
            last_kind = "meta"
            continue
        if not stripped:
            continue
        if _ROW.match(line) and not _is_chain_percent(line, block):
            if block is None:
                block = _Block(index=i, event="", samples=None)
                blocks.append(block)
                ctx.warn(i, "perf report rows without a header (truncated at the start?)")
            names = [c.name for c in block.columns] or _guess_names(line)
            row = _split_fixed(line, block.columns) if block.columns else None
            if row is None:
                row = _split_tokens(line, names)
            if row is None:
                ctx.warn(i, f"unreadable perf report row: {stripped[:80]!r}")
                continue
            block.rows.append((i, row))
            block.last_index = i
            last_kind = "row"
            continue
        if _ROW.match(line):
            # '-g flat' prints the chain's percentage alone, '-g folded' as 'N.NN% a;b;c'
            if block is not None:
                block.callgraph = True
            last_kind = "chain"
            continue
        if last_kind in ("row", "chain") and (line[:1].isspace() or stripped.startswith(("|", "---", "--"))):
            # call-chain frames under a top-level row
            if block is not None:
                block.callgraph = True
            last_kind = "chain"
            continue
        if stripped.startswith(("|", "---")):
            if block is not None:
                block.callgraph = True
            continue
        # 'Warning:' banners and shell prompts around the report are not rows
        continue

    if not blocks:
        raise NotApplicable("no perf report event block or rows")

    if release:
        ctx.add(KernelVersion, release_index, release=release, page_size_hint=page_size_hint(release),
                arch=arch, origin="perf_header")

    for block in blocks:
        _emit_block(ctx, block, lost)

    last = _last_content(doc)
    if last is not None and _ROW.match(doc.lines[last]) and not any(
        last == idx for b in blocks for idx, _ in b.rows
    ):
        ctx.warn(last, "last line is a cut-off perf report row (truncated input?)")


def _is_chain_percent(line: str, block: _Block | None) -> bool:
    if _FLAT_CHAIN.match(line):
        return True
    has_symbol = block is not None and any(c.name == "Symbol" for c in block.columns)
    return has_symbol and bool(_FOLDED_CHAIN.match(line))


def _guess_names(line: str) -> list[str]:
    pcts = len(re.findall(r"\d+(?:\.\d+)?%", line.split("[")[0]))
    names = ["Children", "Self"] if pcts >= 2 else ["Overhead"]
    m = _MARKER.search(line)
    if not m:
        return names
    before = len(line[: m.start()].split()) - len(names)
    if before >= 2:
        names += ["Command", "Shared Object"]
    elif before == 1:
        names += ["Shared Object"]
    return names + ["Symbol"]


def _last_content(doc: Document) -> int | None:
    for i in range(len(doc.lines) - 1, -1, -1):
        if doc.lines[i].strip():
            return i
    return None


def _emit_block(ctx: ParseContext, block: _Block, lost: int | None) -> None:
    names = [c.name for c in block.columns]
    has_children = "Children" in names or any(r["children"] is not None for _, r in block.rows)
    if not names and block.rows:
        names = _guess_names(ctx.doc.lines[block.rows[0][0]])
    end = block.rows[-1][0] if block.rows else block.index
    ctx.add(PerfProfile, block.index, end, event=block.event, samples=block.samples,
            event_count=block.event_count, has_callgraph=block.callgraph or has_children,
            lost_samples=lost, rows=len(block.rows), columns=names)
    if not block.rows:
        ctx.warn(block.index, f"perf report block for event {block.event!r} has no rows (truncated?)")
        return
    has_symbol = any(r["symbol"] for _, r in block.rows)
    kept = 0
    for i, row in block.rows:
        share = row["share"]
        top = max(share, row["children"] or 0.0)
        if top < MIN_SHARE:
            continue
        if kept >= MAX_ROWS:
            ctx.warn(i, f"more than {MAX_ROWS} rows for event {block.event!r}; the rest were not kept")
            break
        kept += 1
        ctx.add(PerfSymbolShare, i, symbol=row["symbol"], share_pct=share,
                children_pct=row["children"], command=row["command"], dso=row["dso"],
                event=block.event, samples=block.samples, kernel=row["marker"] == "k",
                marker=row["marker"])
    if not has_symbol:
        # '--sort dso' or 'comm' reports say nothing about symbols: no family can be ruled out
        return
    sums: dict[str, float] = {f: 0.0 for f in FAMILIES}
    syms: dict[str, dict[str, float]] = {f: {} for f in FAMILIES}
    for _, row in block.rows:
        fam = symbol_family(row["symbol"])
        if fam:
            sums[fam] += row["share"]
            syms[fam][row["symbol"]] = syms[fam].get(row["symbol"], 0.0) + row["share"]
    for fam in FAMILIES:
        ordered = sorted(syms[fam], key=lambda s: -syms[fam][s])
        ctx.add(PerfSymbolFamily, block.index, end, family=fam, share_pct=round(sums[fam], 4),
                symbols=ordered, event=block.event, samples=block.samples)


FORMATS = [
    Format(
        name="perf-report",
        command="perf report --stdio --no-children --sort comm,dso,sym",
        facts=("perf.profile", "perf.symbol_share", "perf.symbol_family", "kernel.version"),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\bperf\s+report\b",),
        description="perf report --stdio text (flat or call-graph, any sort keys, several events)",
    )
]
