"""nccl-tests - Command

Report of the NVIDIA nccl-tests benchmarks (``all_reduce_perf``, ``all_gather_perf``,
``reduce_scatter_perf``, ``alltoall_perf``, ``broadcast_perf``, ``sendrecv_perf`` ...), every
layout from the pre-2.13 one (no ``Group``/``root``, ``error`` column) to 2.19+ (``unalign``,
``GPU memory usage`` trailer). ``srun --label`` / ``mpirun --tag-output`` tags are stripped and
each tag is followed separately, so processes launched without MPI (each printing its own
1-rank header) come out as separate runs. Interleaved NCCL debug lines and warnings are skipped
(the nccl-debug format reads those).

Sample input::

    # nccl-tests version 2.17.6 nccl-headers=22105 nccl-library=22105
    # Collective test starting: all_reduce_perf
    # nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
    #
    # Using devices
    #  Rank  0 Group  0 Pid 481203 on gpu-h100-017 device  0 [0000:18:00] NVIDIA H100 80GB HBM3
    #  Rank  1 Group  0 Pid 1190442 on gpu-h100-018 device  0 [0000:18:00] NVIDIA H100 80GB HBM3
    #
    #                                                              out-of-place                       in-place
    #       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
    #        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)
               8             2     float     sum      -1    30.91    0.00    0.00       0    31.11    0.00    0.00       0
      8589934592    2147483648     float     sum      -1  43557.3  197.21  197.21       0  43877.2  195.77  195.77       0
    # Out of bounds values : 0 OK
    # Avg bus bandwidth    : 98.6

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "nccl-tests"); parse(doc, ctx)
    >>> run = [f for f in ctx.facts if f.fact_type == "nccltests.run"][0]
    >>> (run.collective, run.nranks, run.nodes, run.nccl_version, run.busbw_at_max_size, run.ok)
    ('all_reduce', 2, 2, '2.21.5', 197.21, True)
    >>> rows = [f for f in ctx.facts if f.fact_type == "nccltests.result"]
    >>> (rows[1].size_bytes, rows[1].oop_busbw, rows[1].ip_time_us, rows[1].wrong, rows[1].source.line)
    (8589934592, 197.21, 43877.2, 0, 13)
    >>> dev = [f for f in ctx.facts if f.fact_type == "nccltests.device"][1]
    >>> (dev.node, dev.rank, dev.pci_bus, dev.gpu_model)
    ('gpu-h100-018', 1, '18', 'NVIDIA H100 80GB HBM3')
    >>> sniff(doc) > 0.9
    True
"""

from __future__ import annotations

import math
from typing import Any

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.nccltests import NcclTestsDevice, NcclTestsResult, NcclTestsRun


SAMPLE = """\
# nccl-tests version 2.17.6 nccl-headers=22105 nccl-library=22105
# Collective test starting: all_reduce_perf
# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid 481203 on gpu-h100-017 device  0 [0000:18:00] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid 1190442 on gpu-h100-018 device  0 [0000:18:00] NVIDIA H100 80GB HBM3
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)
           8             2     float     sum      -1    30.91    0.00    0.00       0    31.11    0.00    0.00       0
  8589934592    2147483648     float     sum      -1  43557.3  197.21  197.21       0  43877.2  195.77  195.77       0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 98.6
"""

_TAG = lazyre.compile(r"^(?:\s*(\d+): ?|\[(\d+,\d+)\]<\w+>:\s?)")
_TESTS_VERSION = lazyre.compile(r"^#\s*nccl-tests version (\S+)(?: nccl-headers=(\d+))?(?: nccl-library=(\d+))?")
_STARTING = lazyre.compile(r"^#\s*Collective test (starting|concluded): (\S+)")
_PARAMS = lazyre.compile(r"^#\s*nThread (\d+) nGpus (\d+) minBytes (\d+) maxBytes (\d+)")
_STEP = lazyre.compile(r"step: (\d+)\((factor|bytes)\)")
_ITERS = lazyre.compile(r"warmup iters: (\d+) iters: (\d+)")
_AGG = lazyre.compile(r"agg iters: (\d+)")
_VALIDATION = lazyre.compile(r"validation: (\d+)")
_GRAPH = lazyre.compile(r"graph: (\d+)")
#: the host may be blank ("Pid 4349 on        device  0": no hostname, or the user cut it out)
_DEVICE = lazyre.compile(
    r"^#\s*Rank\s+(\d+)(?:\s+Group\s+(\d+))?\s+Pid\s+(\d+)\s+on\s+(?:(?!device\s)(\S+)\s+)?device\s+(\d+)\s+"
    r"\[([^\]]*)\]\s*(.*?)\s*$")
_OOB = lazyre.compile(r"^#\s*Out of bounds values\s*:\s*(\d+)")
_AVG = lazyre.compile(r"^#\s*Avg bus bandwidth\s*:\s*(\S+)\s*(OK|FAILED)?")
#: a time column: a decimal number, never a reduction op (sum) or a root (an integer, -1)
_TIME = lazyre.compile(r"^\d{1,9}\.\d{1,4}$")
_FAILURE = lazyre.compile(r"\bTest (?:NCCL |CUDA )?failure\b.*")
_NCCL_VERSION = lazyre.compile(r"NCCL version (\d+\.\d+\.\d+)")
_BINARY = lazyre.compile(r"\b([a-z_]+)_perf(?:_mpi)?\b")

_MAX_PROBLEMS = 50


def sniff(doc: Document) -> float:
    score = 0.0
    for line in doc.lines[:200]:
        body = _strip_tag(line).lstrip()
        if not body.startswith("#"):
            continue
        if body.startswith("# nThread") and "nGpus" in body and "minBytes" in body:
            return 0.95
        if _DEVICE.match(body) or body.startswith("# nccl-tests version"):
            score = max(score, 0.85)
        elif "out-of-place" in body and "in-place" in body:
            score = max(score, 0.8)
        elif body.startswith("# Avg bus bandwidth") or body.startswith("# Out of bounds values"):
            score = max(score, 0.8)
    return score


def _one_process(devices: list[dict]) -> int:
    """1 when ranks printed without hosts all run in one process (one machine, then), else 0 (unknown)."""
    return 1 if devices and len({d["pid"] for d in devices}) == 1 else 0


def _interleaved(run: _Run) -> int:
    """Result tables of separate processes printed into this one run, 0 when it holds one.

    One launched job prints one table (rank 0 prints it) and one summary; processes that each
    run their own test, writing into the same output untagged, interleave their rows (the same
    size twice in a row) and each end with a summary of its own. A run repeated with ``-N``
    prints the sweep again from the smallest size, never one size twice in a row; two runs pasted
    one after the other without their headers have two summaries but no size twice in a row.
    """
    if run.summaries >= 2 and run.repeated_sizes >= 1:
        return run.summaries
    return 2 if run.repeated_sizes >= 2 else 0


def _strip_tag(line: str) -> str:
    mt = _TAG.match(line)
    return line[mt.end():] if mt else line


class _Run:
    def __init__(self, index: int, meta: dict[str, Any]):
        self.index = index
        self.last = index
        self.meta = dict(meta)
        self.devices: list[dict[str, Any]] = []
        self.rows: list[tuple[int, dict[str, Any]]] = []
        self.columns: list[str] | None = None
        self.error_style = False
        self.oob: int | None = None
        self.avg: float | None = None
        self.bw_check = ""
        self.completed = False
        self.failure = ""
        #: 'Avg bus bandwidth' summaries seen, and data rows repeating the size of the row before
        self.summaries = 0
        self.repeated_sizes = 0


class _Parser:
    def __init__(self, doc: Document, ctx: ParseContext):
        self.doc = doc
        self.ctx = ctx
        self.runs: list[_Run] = []
        self.current: dict[str | None, _Run] = {}
        self.pre: dict[str | None, dict[str, Any]] = {}
        self.nccl_version = ""
        self.problems = 0

    def problem(self, index: int, message: str) -> None:
        self.problems += 1
        if self.problems <= _MAX_PROBLEMS:
            self.ctx.warn(index, message)

    def new_run(self, index: int, key: str | None) -> _Run:
        run = _Run(index, self.pre.pop(key, {}))
        self.runs.append(run)
        self.current[key] = run
        return run

    def feed(self, i: int, line: str) -> None:
        mt = _TAG.match(line)
        key = (mt.group(1) or mt.group(2)) if mt else None
        body = (line[mt.end():] if mt else line).strip()
        if not body:
            return
        if "NCCL INFO" in body or "NCCL WARN" in body or body.startswith("NCCL version"):
            v = _NCCL_VERSION.search(body)
            if v and not self.nccl_version:
                self.nccl_version = v.group(1)
            return
        if body[0] == "#":
            self.on_comment(i, key, body)
            return
        if body[0].isdigit():
            tokens = body.split()
            if len(tokens) >= 7 and tokens[0].isdigit() and tokens[1].isdigit():
                self.on_row(i, key, tokens)
                return
        f = _FAILURE.search(body)
        if f:
            run = self.current.get(key) or (self.runs[-1] if self.runs else None)
            if run is not None and not run.failure:
                run.failure = body[:300]
                run.last = i

    def on_comment(self, i: int, key: str | None, body: str) -> None:
        run = self.current.get(key)
        if body.startswith("# nThread") or body.startswith("#nThread"):
            run = self.new_run(i, key)
            p = _PARAMS.match(body)
            if p is None:
                self.problem(i, "unreadable nccl-tests parameter line")
                return
            meta = run.meta
            meta.update(nthread=int(p.group(1)), gpus_per_proc=int(p.group(2)),
                        min_bytes=int(p.group(3)), max_bytes=int(p.group(4)))
            if s := _STEP.search(body):
                meta["step_factor" if s.group(2) == "factor" else "step_bytes"] = int(s.group(1))
            if s := _ITERS.search(body):
                meta.update(warmup_iters=int(s.group(1)), iters=int(s.group(2)))
            if s := _AGG.search(body):
                meta["agg_iters"] = int(s.group(1))
            if s := _VALIDATION.search(body):
                meta["check"] = s.group(1) != "0"
            if s := _GRAPH.search(body):
                meta["graph"] = int(s.group(1))
            return
        if (v := _TESTS_VERSION.match(body)) is not None:
            pre = self.pre.setdefault(key, {})
            pre["tests_version"] = v.group(1)
            if v.group(3) or v.group(2):
                pre["nccl_version"] = _version_from_code(int(v.group(3) or v.group(2)))
            return
        if (s := _STARTING.match(body)) is not None:
            if s.group(1) == "starting":
                self.pre.setdefault(key, {})["binary"] = s.group(2)
            elif run is not None:
                run.meta.setdefault("binary", s.group(2))
                run.last = i
            return
        if run is None:
            if _DEVICE.match(body) or "size" in body and "count" in body:
                run = self.new_run(i, key)
                self.problem(i, "nccl-tests output without its parameter line (cut at the top?)")
            else:
                return
        if (d := _DEVICE.match(body)) is not None:
            bus = d.group(6).strip()
            run.devices.append(dict(
                rank=int(d.group(1)), group=int(d.group(2)) if d.group(2) else None,
                pid=int(d.group(3)), host=d.group(4) or "", device=int(d.group(5)), bus_id=bus,
                pci_bus=_pci_bus(bus), gpu_model=d.group(7), _line=i))
            return
        if "size" in body and "count" in body and "time" in body:
            run.columns = body.lstrip("#").split()
            run.error_style = run.columns[-1] == "error"
            return
        if (o := _OOB.match(body)) is not None:
            run.oob = int(o.group(1))
            run.last = i
            return
        if (a := _AVG.match(body)) is not None:
            try:
                avg = float(a.group(1))
                run.avg = avg if math.isfinite(avg) else None
            except ValueError:
                self.problem(i, "unreadable average bus bandwidth")
            run.bw_check = a.group(2) or ""
            run.completed = True
            run.summaries += 1
            run.last = i

    def on_row(self, i: int, key: str | None, tokens: list[str]) -> None:
        run = self.current.get(key)
        if run is None:
            run = self.new_run(i, key)
            self.problem(i, "nccl-tests data row before any header (output cut at the top?)")
        cols = run.columns
        if cols and "time" in cols:
            n_desc = cols.index("time")
            names = cols[:n_desc]
        elif len(tokens) in (9, 13):
            n_desc, names = 5, ["size", "count", "type", "redop", "root"]
        else:
            n_desc = 4
            root_like = tokens[3].lstrip("-").isdigit() if len(tokens) > 3 else False
            names = ["size", "count", "type", "root" if root_like else "redop"]
        rest = tokens[n_desc:]
        if len(rest) not in (4, 8) and n_desc > 3 and len(tokens) - 3 in (4, 8) and _TIME.match(tokens[3]):
            # a row that lost its redop/root column in the paste ("65536 8192 float 16.57 1.98 ..."
            # under a header with redop): the numbers after the type are still time, algbw, busbw
            n_desc, names = 3, names[:3]
            rest = tokens[3:]
        if len(rest) not in (4, 8) or len(tokens) < n_desc:
            self.problem(i, f"nccl-tests row with {len(tokens)} columns not understood")
            return
        desc = dict(zip(names, tokens))
        try:
            row: dict[str, Any] = dict(size_bytes=int(tokens[0]), count=int(tokens[1]),
                                       dtype=desc.get("type", ""), redop=desc.get("redop", ""))
            if "root" in desc:
                row["root"] = int(desc["root"])
            for prefix, block in (("oop", rest[:4]), ("ip", rest[4:8])):
                if not block:
                    continue
                row[f"{prefix}_time_us"] = _finite(block[0])
                row[f"{prefix}_algbw"] = _finite(block[1])
                row[f"{prefix}_busbw"] = _finite(block[2])
                wrong, err = _wrong(block[3], run.error_style)
                row[f"{prefix}_wrong"] = wrong
                if err is not None:
                    row["max_error"] = max(err, row.get("max_error") or 0.0)
        except ValueError:
            self.problem(i, "nccl-tests row with unreadable numbers")
            return
        if row["oop_time_us"] is None or row["oop_algbw"] is None or row["oop_busbw"] is None:
            self.problem(i, "nccl-tests row without out-of-place numbers")
            return
        wrongs = [w for w in (row.get("oop_wrong"), row.get("ip_wrong")) if w is not None]
        row["wrong"] = sum(wrongs) if wrongs else None
        if run.rows and run.rows[-1][1]["size_bytes"] == row["size_bytes"]:
            run.repeated_sizes += 1
        run.rows.append((i, row))
        run.last = i

    def finish(self) -> None:
        single = sum(1 for r in self.runs if len(r.devices) == 1)
        cmd_binary = ""
        if self.doc.command and (b := _BINARY.search(self.doc.command)):
            cmd_binary = b.group(1)
        for n, run in enumerate(self.runs):
            self.emit_run(n, run, single, cmd_binary)

    def emit_run(self, n: int, run: _Run, single: int, cmd_binary: str) -> None:
        ctx, meta = self.ctx, run.meta
        hosts: list[str] = []
        for d in run.devices:
            if d["host"] and d["host"] not in hosts:
                hosts.append(d["host"])
        node = self.doc.node
        if node == "unknown" and run.devices and run.devices[0]["host"]:
            node = run.devices[0]["host"]
        nranks = len(run.devices)
        rows = [r for _, r in run.rows]
        binary = meta.get("binary", "")
        collective, inferred = "", False
        if binary:
            collective = _collective_of(binary)
        elif cmd_binary:
            collective = cmd_binary
        elif rows:
            collective = _infer_collective(rows, nranks)
            inferred = bool(collective)
        summary: dict[str, Any] = {}
        if rows:
            top = max(rows, key=lambda r: r["size_bytes"])
            peak = max(rows, key=lambda r: max(r["oop_busbw"], r.get("ip_busbw") or 0.0))
            nonzero = [r for r in rows if r["size_bytes"] > 0]
            wrongs = [r["wrong"] for r in rows if r["wrong"] is not None]
            summary = dict(
                dtype=rows[0]["dtype"], max_size=top["size_bytes"], busbw_at_max_size=top["oop_busbw"],
                peak_busbw=max(peak["oop_busbw"], peak.get("ip_busbw") or 0.0),
                peak_busbw_size=peak["size_bytes"],
                latency_us=min(nonzero, key=lambda r: r["size_bytes"])["oop_time_us"] if nonzero else None,
                wrong_total=sum(wrongs) if wrongs and meta.get("check", True) else None)
        if not run.completed:
            self.problem(run.last, "nccl-tests run ends without 'Avg bus bandwidth' (truncated or failed)")
        ok = (run.completed and not run.failure and run.oob in (None, 0) and run.bw_check != "FAILED"
              and summary.get("wrong_total") in (None, 0))
        fields = {k: v for k, v in meta.items() if k in NcclTestsRun.model_fields}
        fields.setdefault("nccl_version", self.nccl_version)
        ctx.add(NcclTestsRun, run.index, run.last, node=node, run_index=n, collective=collective,
                collective_inferred=inferred, nranks=nranks, nodes=len(hosts) or _one_process(run.devices), hosts=hosts,
                gpu_model=run.devices[0]["gpu_model"] if run.devices else "", rows=len(rows),
                avg_busbw=run.avg, bw_check=run.bw_check, out_of_bounds=run.oob,
                failure=run.failure, completed=run.completed, ok=ok,
                single_rank_processes=single, interleaved_tables=_interleaved(run),
                min_bus_gap=_min_bus_gap(run.devices), **fields, **summary)
        for d in run.devices:
            line = d.pop("_line")
            # a rank printed without a host belongs to the document's node
            ctx.add(NcclTestsDevice, line, node=d["host"] or node, run_index=n, **d)
        for line, row in run.rows:
            ctx.add(NcclTestsResult, line, node=node, run_index=n, collective=collective,
                    nranks=nranks, **row)


def _finite(token: str) -> float | None:
    value = float(token)
    return value if math.isfinite(value) else None


def _wrong(token: str, error_style: bool) -> tuple[int | None, float | None]:
    """(#wrong, max error) from the last column of a block: an int, N/A, or old '0e+00'."""
    if token.upper() == "N/A":
        return None, None
    if not error_style and token.isdigit():
        return int(token), None
    err = float(token)
    return None, (err if math.isfinite(err) else None)


def _min_bus_gap(devices: list[dict[str, Any]]) -> int | None:
    """Smallest bus-number difference between two GPUs of one host (same PCI domain), or None."""
    by_host: dict[tuple[str, str], set[int]] = {}
    for d in devices:
        if not d.get("pci_bus"):
            continue
        b = d["bus_id"].strip().lower()
        domain = b.split(":")[0] if b.count(":") >= 2 else ""
        by_host.setdefault((d["host"], domain), set()).add(int(d["pci_bus"], 16))
    gaps = [y - x for buses in by_host.values() for x, y in zip(sorted(buses), sorted(buses)[1:])]
    return min(gaps) if gaps else None


def _pci_bus(bus_id: str) -> str:
    """'0000:18:00' or '0x18' -> '18'."""
    b = bus_id.strip().lower()
    if b.startswith("0x"):
        return b[2:].zfill(2)[-2:]
    parts = b.split(":")
    if len(parts) >= 2:
        return parts[-2][-2:] if len(parts) == 2 else parts[1][-2:]
    return ""


def _version_from_code(code: int) -> str:
    """NCCL_VERSION_CODE -> 'X.Y.Z' (10000*major since 2.9, 1000*major before)."""
    if code >= 20900:
        return f"{code // 10000}.{code // 100 % 100}.{code % 100}"
    return f"{code // 1000}.{code // 100 % 10}.{code % 100}"


def _collective_of(binary: str) -> str:
    name = binary.rsplit("/", 1)[-1]
    for suffix in ("_perf_mpi", "_perf"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _infer_collective(rows: list[dict[str, Any]], nranks: int) -> str:
    """Name the collective from the busbw/algbw factor of the largest row (older builds print no name)."""
    top = max(rows, key=lambda r: r["size_bytes"])
    if nranks < 3 or top["oop_algbw"] <= 0:
        return ""
    ratio = top["oop_busbw"] / top["oop_algbw"]
    reduces = top.get("redop", "") not in ("", "none")
    root = top.get("root")

    def near(x: float) -> bool:
        return abs(ratio - x) <= 0.03 * x

    if near(2 * (nranks - 1) / nranks) and reduces:
        return "all_reduce"
    if near((nranks - 1) / nranks):
        return "reduce_scatter" if reduces else ""  # all_gather and alltoall look alike
    if near(1.0) and root is not None:
        if root >= 0:
            return "reduce" if reduces else "broadcast"
        return "" if reduces else "sendrecv"
    return ""


def parse(doc: Document, ctx: ParseContext) -> None:
    parser = _Parser(doc, ctx)
    for index, line in enumerate(doc.lines):
        parser.feed(index, line)
    if not parser.runs:
        raise NotApplicable("no nccl-tests header or result rows")
    parser.finish()
    if parser.problems > _MAX_PROBLEMS:
        ctx.warn(None, f"{parser.problems - _MAX_PROBLEMS} more problems not listed")


FORMATS = [
    Format(
        name="nccl-tests",
        command="all_reduce_perf -b 8 -e 8G -f 2 -g 1",
        facts=(NcclTestsRun.fact_type, NcclTestsResult.fact_type, NcclTestsDevice.fact_type),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\b[a-z_]+_perf(?:_mpi)?\b",),
        description="nccl-tests report (all_reduce_perf, all_gather_perf, alltoall_perf ...), all layouts",
    )
]
