"""nsys stats - Command

Summary reports of Nsight Systems ``nsys stats``: ``cuda_gpu_kern_sum``, ``cuda_api_sum``,
``osrt_sum`` and ``nvtx_sum`` (and their 2021-2022 names ``gpukernsum``, ``cudaapisum``,
``osrtsum``, ``nvtxsum``/``nvtxppsum``), as CSV (``--format csv``, one report per file or several
concatenated on stdout) or as the default terminal column format. ``Processing [...] with [...]``
progress lines, `` ** Title (report):`` lines, old ``CUDA Kernel Statistics:`` titles, blank lines
and ``SKIPPED: ... does not contain ... data.`` notices are understood; columns are found by name
(``Time (%)``/``Time(%)``, ``Avg (ns)``/``Average``, ``--timeunit`` variants such as
``Total Time (ms)``, extra ``GridXYZ`` columns). Other reports are skipped.

One fact per row for the top 50 rows of each report (by total time; a warning says when rows were
left out) and one ``nsys.kernel_totals`` per kernel report, computed over all its rows.

Sample input::

    Processing [rank0.sqlite] with [/opt/nvidia/nsight-systems/2025.3.2/host-linux-x64/reports/cuda_gpu_kern_sum.py]...
    Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name
    60.0,6000000,100,60000.0,59000.0,50000,70000,1000.0,sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_cublas
    40.0,4000000,10,400000.0,400000.0,300000,500000,1000.0,ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)

    Processing [rank0.sqlite] with [/opt/nvidia/nsight-systems/2025.3.2/host-linux-x64/reports/osrt_sum.py]...
    SKIPPED: rank0.sqlite does not contain OS Runtime trace data.

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "nsys-stats"); parse(doc, ctx)
    >>> [(f.category, f.total_ns, f.instances, f.profile) for f in ctx.facts if f.fact_type == "nsys.kernel_sum"]
    [('gemm', 6000000.0, 100, 'rank0.sqlite'), ('nccl', 4000000.0, 10, 'rank0.sqlite')]
    >>> tot = ctx.facts[-1]
    >>> (tot.fact_type, tot.total_ns, tot.nccl_pct, tot.gemm_pct, tot.source.line, tot.source.end_line)
    ('nsys.kernel_totals', 10000000.0, 40.0, 60.0, 2, 4)
    >>> kernel_category("void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128>>(Flash_fwd_params)")
    'attention'
    >>> sniff(doc) > 0.9
    True
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from typing import Any

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.nsys import (NsysApiSum, NsysKernelSum, NsysKernelTotals, NsysNvtxSum,
                                        NsysOsrtSum)


SAMPLE = """\
Processing [rank0.sqlite] with [/opt/nvidia/nsight-systems/2025.3.2/host-linux-x64/reports/cuda_gpu_kern_sum.py]...
Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name
60.0,6000000,100,60000.0,59000.0,50000,70000,1000.0,sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_cublas
40.0,4000000,10,400000.0,400000.0,300000,500000,1000.0,ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)

Processing [rank0.sqlite] with [/opt/nvidia/nsight-systems/2025.3.2/host-linux-x64/reports/osrt_sum.py]...
SKIPPED: rank0.sqlite does not contain OS Runtime trace data.
"""

#: rows kept per report (by total time)
MAX_ROWS = 50
#: longest name kept in a fact
MAX_NAME = 200
_MAX_WARNINGS = 50

# -- kernel categories ---------------------------------------------------------------------------

_NCCL = lazyre.compile(r"nccl", re.I)
_NVSHMEM = lazyre.compile(r"nvshmem|deep_?ep|hybrid_?ep|\bmoe_comm", re.I)
_ATTENTION = lazyre.compile(r"flash|fmha|attention|attn|sdpa|\bmha|xformers|_mha_|paged_?kv|mla_", re.I)
_GEMM = lazyre.compile(r"gemm|gemv|xmma|cublas|cutlass|matmul|nvjet|wgmma|hgmma|s16816|h1688|s884|sm\d+_xmma", re.I)


def kernel_category(name: str) -> str:
    """'nccl' | 'nvshmem' | 'attention' | 'gemm' | 'other' from a kernel name.

    >>> kernel_category("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)")
    'nccl'
    >>> kernel_category("void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32>(T1::Params)")
    'gemm'
    >>> kernel_category("triton_per_fused__to_copy_add_mean_mul_pow_rsqrt_0")
    'other'
    """
    if _NCCL.search(name):
        return "nccl"
    if _NVSHMEM.search(name):
        return "nvshmem"
    if _ATTENTION.search(name):
        return "attention"
    if _GEMM.search(name):
        return "gemm"
    return "other"


# -- report names --------------------------------------------------------------------------------

_REPORT_KIND = {
    "cuda_gpu_kern_sum": "kernel", "gpukernsum": "kernel",
    "cuda_api_sum": "api", "cudaapisum": "api",
    "osrt_sum": "osrt", "osrtsum": "osrt",
    "nvtx_sum": "nvtx", "nvtxsum": "nvtx", "nvtxppsum": "nvtx", "nvtx_pushpop_sum": "nvtx",
    "nvtx_startend_sum": "nvtx", "nvtxsesum": "nvtx",
}
#: old terminal titles (2020.x-2022.x) -> kind; None = a report we do not read
_OLD_TITLES = {
    "cuda kernel statistics": "kernel",
    "cuda api statistics": "api",
    "operating system runtime api statistics": "osrt",
    "nvtx push-pop range statistics": "nvtx",
    "nvtx start-end range statistics": "nvtx",
    "nvtx range statistics": "nvtx",
}

_PROCESSING = lazyre.compile(r"^\s*Processing \[(.*?)\] with \[(.*?)\]\.*\s*$")
_REPORT_IN_PATH = lazyre.compile(r"(?<![A-Za-z0-9_])([A-Za-z0-9_]+?)(?:\.py)?(?::[^/\\]*)?$")
_TITLE = lazyre.compile(r"^\s*\*\*\s+(.*?)\s*\(([A-Za-z0-9_]+)(?::[^)]*)?\)\s*:\s*$")
_OLD_TITLE = lazyre.compile(r"^\s*([A-Za-z][A-Za-z -]*Statistics)(?:\s*\([^)]*\))?\s*:\s*$")
_SKIPPED = lazyre.compile(r"^\s*SKIPPED:\s.*does not contain", re.I)
_DASHES = lazyre.compile(r"^\s*-{3,}(?:\s+-{2,})+\s*$")
_COL_UNIT = lazyre.compile(r"^((?:.*\S)?)\s*\(\s*(ns|us|µs|μs|ms|s|sec|%)\s*\)$")
_REPORT_FROM_NAME = lazyre.compile(
    r"(cuda_gpu_kern_sum|gpukernsum|cuda_api_sum|cudaapisum|osrt_sum|osrtsum|nvtx_sum|nvtxsum|"
    r"nvtxppsum|nvtx_pushpop_sum|nvtx_startend_sum|nvtxsesum)")
_REPORT_IN_COMMAND = lazyre.compile(r"(?:--report|-r)[ =]\s*([\w:,]+)")
_CSV_HEAD = lazyre.compile(r"^\s*\"?Time ?\(%\)\"?,")

_UNIT_NS = {"ns": 1.0, "us": 1e3, "µs": 1e3, "μs": 1e3, "ms": 1e6, "s": 1e9, "sec": 1e9}

# canonical column keys
_COLUMN_KEYS = {
    "time": "time_pct", "time (%)": "time_pct", "time(%)": "time_pct",
    "total time": "total", "total": "total",
    "instances": "count", "num calls": "count", "calls": "count", "count": "count",
    "avg": "avg", "average": "avg", "mean": "avg",
    "med": "med", "median": "med",
    "min": "min", "minimum": "min",
    "max": "max", "maximum": "max",
    "stddev": "stddev", "std dev": "stddev",
    "style": "style",
    "name": "name", "range": "name",
}


@dataclass
class _Col:
    key: str
    scale: float = 1.0  # to nanoseconds


@dataclass
class _Block:
    kind: str | None
    profile: str
    header_index: int
    columns: list[_Col]
    csv: bool
    rows: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    last_index: int = 0


def _csv_fields(line: str) -> list[str] | None:
    try:
        return next(csv.reader([line]), [])
    except csv.Error:
        return None


def _columns(names: list[str]) -> list[_Col] | None:
    """Canonical columns for a header, or None when it is not an nsys summary header."""
    cols: list[_Col] = []
    for raw in names:
        text = raw.strip().strip('"').strip()
        scale = 1.0
        m = _COL_UNIT.match(text)
        base = text
        if m:
            base, unit = m.group(1), m.group(2)
            if unit == "%":
                base = base + " (%)"
            else:
                scale = _UNIT_NS[unit]
        key = _COLUMN_KEYS.get(base.strip().lower(), "")
        cols.append(_Col(key=key, scale=scale))
    keys = [c.key for c in cols]
    if "time_pct" not in keys or "total" not in keys or "name" not in keys or "count" not in keys:
        return None
    return cols


def _kind_from_header(names: list[str]) -> str | None:
    low = [n.strip().strip('"').lower() for n in names]
    if "range" in low or "style" in low:
        return "nvtx"
    if "instances" in low and "name" in low:
        return "kernel"
    if any(n.startswith("num calls") or n == "calls" for n in low):
        return "calls"  # api or osrt: decided from the names
    return None


def _kind_from_path(tool: str) -> str | None:
    name = tool.replace("\\", "/").rsplit("/", 1)[-1]
    m = _REPORT_IN_PATH.search(name)
    if not m:
        return None
    stem = m.group(1).lower()
    if stem in _REPORT_KIND:
        return _REPORT_KIND[stem]
    return "skip"


def _number(text: str) -> float:
    t = text.strip().strip('"').replace(",", "").replace("\u202f", "").replace("\xa0", "")
    if not t or t in ("-", "nan", "NaN"):
        raise ValueError(f"not a number: {text!r}")
    value = float(t)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"not a finite number: {text!r}")
    return value


class _Parser:
    def __init__(self, doc: Document, ctx: ParseContext):
        self.doc = doc
        self.ctx = ctx
        self.blocks: list[_Block] = []
        self.block: _Block | None = None
        self.kind: str | None = None  # from the last Processing/title line
        self.profile = ""
        self.default_kind = self._default_kind()
        self.problems = 0
        self.saw_nsys = False

    def warn(self, index: int | None, message: str) -> None:
        self.problems += 1
        if self.problems <= _MAX_WARNINGS:
            self.ctx.warn(index, message)

    def _default_kind(self) -> str | None:
        for text in (self.doc.name, self.doc.command or ""):
            m = _REPORT_FROM_NAME.search(text)
            if m:
                return _REPORT_KIND[m.group(1)]
        if self.doc.command:
            m = _REPORT_IN_COMMAND.search(self.doc.command)
            if m:
                kinds = {_REPORT_KIND.get(r.split(":")[0]) for r in m.group(1).split(",")}
                kinds.discard(None)
                if len(kinds) == 1:
                    return kinds.pop()
        return None

    def close(self) -> None:
        if self.block is not None:
            self.blocks.append(self.block)
            self.block = None

    def run(self) -> None:
        lines = self.doc.lines
        i = 0
        while i < len(lines):
            line = lines[i]
            stripped = line.strip()
            if not stripped:
                if self.block is not None and self.block.rows:
                    self.close()
                i += 1
                continue
            m = _PROCESSING.match(line)
            if m:
                self.close()
                self.saw_nsys = True
                self.profile = m.group(1).replace("\\", "/").rsplit("/", 1)[-1][:200]
                self.kind = _kind_from_path(m.group(2))
                i += 1
                continue
            m = _TITLE.match(line)
            if m:
                self.close()
                self.saw_nsys = True
                self.kind = _REPORT_KIND.get(m.group(2).lower(), "skip")
                i += 1
                continue
            m = _OLD_TITLE.match(line)
            if m:
                self.close()
                self.saw_nsys = self.saw_nsys or m.group(1).lower() in _OLD_TITLES
                self.kind = _OLD_TITLES.get(m.group(1).lower(), "skip")
                i += 1
                continue
            if _SKIPPED.match(line):
                self.close()
                self.saw_nsys = True
                self.kind = None
                i += 1
                continue
            # a CSV header
            if _CSV_HEAD.match(line):
                names = _csv_fields(line)
                cols = _columns(names) if names else None
                if names and cols is not None:
                    self.start_block(i, names, cols, is_csv=True)
                    i += 1
                    continue
            # a column-format header: names, then a line of dashes
            if i + 1 < len(lines) and "Time" in line and _DASHES.match(lines[i + 1]):
                names = self._split_header(line, lines[i + 1])
                cols = _columns(names)
                if cols is not None:
                    self.start_block(i, names, cols, is_csv=False)
                    self.block.last_index = i + 1  # type: ignore[union-attr]
                    i += 2
                    continue
            if self.block is not None:
                self.add_row(i, line)
            i += 1
        self.close()

    @staticmethod
    def _split_header(header: str, dashes: str) -> list[str]:
        spans = [(m.start(), m.end()) for m in re.finditer(r"-+", dashes)]
        names = re.split(r"\s{2,}", header.strip())
        if len(names) == len(spans):
            return names
        names = []
        for k, (a, b) in enumerate(spans):
            end = spans[k + 1][0] if k + 1 < len(spans) else len(header)
            start = spans[k - 1][1] if k > 0 else 0
            names.append(header[start:end].strip())
        return names

    def start_block(self, index: int, names: list[str], cols: list[_Col], is_csv: bool) -> None:
        self.close()
        self.saw_nsys = True
        kind = self.kind or self.default_kind
        from_header = _kind_from_header(names)
        if kind is None or (kind in ("kernel", "nvtx") and from_header not in (kind, None)):
            kind = from_header
        elif kind in ("api", "osrt") and from_header not in ("calls", None):
            kind = from_header
        self.block = _Block(kind=kind, profile=self.profile, header_index=index, columns=cols,
                            csv=is_csv, last_index=index)
        # the next header without a Processing line in between belongs to no known report
        self.kind = None

    def add_row(self, index: int, line: str) -> None:
        block = self.block
        assert block is not None
        if block.kind == "skip":
            block.last_index = index
            return
        ncols = len(block.columns)
        if block.csv:
            # an odd number of quotes: a quoted name cut off
            fields = (_csv_fields(line) or []) if line.count('"') % 2 == 0 else []
        else:
            fields = line.split(None, ncols - 1)
        if len(fields) != ncols:
            self.warn(index, f"row with {len(fields)} fields where the header has {ncols}; "
                             f"skipped (cut off?): {line.strip()[:80]!r}")
            return
        row: dict[str, Any] = {}
        try:
            for col, value in zip(block.columns, fields):
                if not col.key:
                    continue
                if col.key in ("name", "style"):
                    row[col.key] = value.strip()
                elif col.key == "count":
                    row[col.key] = int(_number(value))
                else:
                    row[col.key] = _number(value) * col.scale
        except (ValueError, OverflowError) as exc:
            self.warn(index, f"unreadable number in row: {exc}")
            return
        if not row.get("name"):
            self.warn(index, "row without a name; skipped")
            return
        block.rows.append((index, row))
        block.last_index = index

    # -- facts

    def emit(self) -> None:
        for report_index, block in enumerate(self.blocks):
            kind = block.kind
            if kind == "skip" or not block.rows and kind != "kernel":
                continue
            if kind is None or kind == "calls":
                kind = self._guess_calls_kind(block) if kind == "calls" else None
            if kind is None:
                self.warn(block.header_index, "summary table of an unknown nsys report; skipped")
                continue
            rows = sorted(block.rows, key=lambda r: -r[1].get("total", 0.0))
            if len(rows) > MAX_ROWS:
                self.warn(block.header_index, f"{kind} report has {len(rows)} rows; facts kept for the "
                                              f"top {MAX_ROWS} by total time")
            for index, row in rows[:MAX_ROWS]:
                self.emit_row(kind, report_index, block.profile, index, row)
            if kind == "kernel":
                self.emit_totals(report_index, block)

    @staticmethod
    def _guess_calls_kind(block: _Block) -> str:
        names = [r["name"] for _, r in block.rows]
        cuda = sum(1 for n in names if n.startswith(("cuda", "cu", "nvrtc", "cublas", "cudnn")))
        return "api" if cuda * 2 >= len(names) and names else "osrt"

    def emit_row(self, kind: str, report_index: int, profile: str, index: int, row: dict[str, Any]) -> None:
        name = row["name"]
        truncated = name.endswith("\u2026") or len(name) > MAX_NAME
        common: dict[str, Any] = dict(report_index=report_index, profile=profile,
                                      time_pct=row.get("time_pct", 0.0), total_ns=row["total"],
                                      avg_ns=row.get("avg", row["total"] / row["count"] if row["count"] else 0.0),
                                      med_ns=row.get("med"))
        if kind == "kernel":
            self.ctx.add(NsysKernelSum, index, name=name[:MAX_NAME], name_truncated=truncated,
                         category=kernel_category(name), instances=row["count"], **common)
        elif kind == "api":
            self.ctx.add(NsysApiSum, index, name=name[:MAX_NAME], calls=row["count"], **common)
        elif kind == "osrt":
            self.ctx.add(NsysOsrtSum, index, name=name[:MAX_NAME], calls=row["count"], **common)
        elif kind == "nvtx":
            domain, range_name = split_range(name)
            self.ctx.add(NsysNvtxSum, index, range=name[:MAX_NAME], range_name=range_name[:MAX_NAME],
                         domain=domain[:MAX_NAME], instances=row["count"], style=row.get("style", "")[:40],
                         min_ns=row.get("min"), max_ns=row.get("max"), **common)

    def emit_totals(self, report_index: int, block: _Block) -> None:
        total = nccl = comm = gemm = attention = 0.0
        instances = 0
        top: tuple[float, str] | None = None
        for _, row in block.rows:
            t = row["total"]
            cat = kernel_category(row["name"])
            total += t
            instances += row["count"]
            nccl += t if cat == "nccl" else 0.0
            comm += t if cat in ("nccl", "nvshmem") else 0.0
            gemm += t if cat == "gemm" else 0.0
            attention += t if cat == "attention" else 0.0
            if top is None or t > top[0]:
                top = (t, row["name"])

        def pct(x: float) -> float:
            return round(100.0 * x / total, 3) if total > 0 else 0.0

        top_name = top[1] if top else ""
        self.ctx.add(NsysKernelTotals, block.header_index, block.last_index, report_index=report_index,
                     profile=block.profile, kernels=len(block.rows), instances=instances, total_ns=total,
                     nccl_ns=nccl, nccl_pct=pct(nccl), comm_pct=pct(comm), gemm_pct=pct(gemm),
                     attention_pct=pct(attention), top_kernel=top_name[:MAX_NAME],
                     top_kernel_pct=pct(top[0]) if top else 0.0,
                     top_kernel_category=kernel_category(top_name) if top else "")


def split_range(text: str) -> tuple[str, str]:
    """(domain, name) of an nvtx_sum Range; a leading ``::`` (C++ scope) is not a domain.

    >>> split_range(":train_step"), split_range("NCCL:ncclAllReduce"), split_range("aten::mm")
    (('', 'train_step'), ('NCCL', 'ncclAllReduce'), ('', 'aten::mm'))
    """
    m = re.match(r"^([^:]*):(?!:)(.*)$", text)
    if m and not m.group(1).endswith(":"):
        return m.group(1), m.group(2)
    return "", text


def sniff(doc: Document) -> float:
    score = 0.0
    lines = doc.lines[:300]
    for k, line in enumerate(lines):
        if _CSV_HEAD.match(line) and "Total Time" in line and _columns(_csv_fields(line) or []):
            return 0.95
        if _PROCESSING.match(line) and "reports" in line.replace("\\", "/"):
            return 0.95
        m = _TITLE.match(line)
        if m and m.group(2).lower() in _REPORT_KIND:
            score = max(score, 0.9)
        elif _SKIPPED.match(line) and ".sqlite" in line:
            score = max(score, 0.8)
        elif ("Total Time" in line and k + 1 < len(lines) and _DASHES.match(lines[k + 1])
              and "Time" in line):
            score = max(score, 0.85)
        else:
            mt = _OLD_TITLE.match(line)
            if mt and mt.group(1).lower() in _OLD_TITLES:
                score = max(score, 0.6)
    return score


def parse(doc: Document, ctx: ParseContext) -> None:
    p = _Parser(doc, ctx)
    p.run()
    if not p.blocks:
        if p.saw_nsys:
            raise NotApplicable("nsys stats output without a summary table (every report skipped?)")
        raise NotApplicable("no nsys stats summary table")
    p.emit()
    if not ctx.facts:
        known = [b for b in p.blocks if b.kind != "skip"]
        if known and not any(b.rows for b in known):
            raise ParseError("nsys stats summary tables without a readable row",
                             doc.lineno(known[0].header_index))
        raise NotApplicable("no kernel, CUDA API, OS runtime or NVTX summary in this nsys stats output")


FORMATS = [
    Format(
        name="nsys-stats",
        command="nsys stats -r cuda_gpu_kern_sum,cuda_api_sum,osrt_sum,nvtx_sum --format csv report.nsys-rep",
        facts=("nsys.kernel_sum", "nsys.kernel_totals", "nsys.api_sum", "nsys.osrt_sum", "nsys.nvtx_sum"),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\bnsys\s+stats\b",),
        description="Nsight Systems summary reports (kernels, CUDA API, OS runtime, NVTX) as CSV or columns",
    )
]
