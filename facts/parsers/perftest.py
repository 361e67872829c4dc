"""perftest - Command

Output of the perftest micro-benchmarks (``ib_write_bw``, ``ib_read_bw``, ``ib_send_bw``,
``ib_atomic_bw`` and the ``*_lat`` tests), client or server side: the parameter block between
dashed lines (``RDMA_Write BW Test``, ``Device``, ``Number of qps``, ``Link type``, ``Mtu``),
the CUDA initialisation lines of ``--use_cuda`` / ``--use_cuda_dmabuf``, and the results table
(``#bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]``; ``MB/sec`` without
``--report_gbits``, converted here, perftest's MB being 2^20 bytes; latency tests print
``t_min[usec] ... 99% percentile[usec]``). One ``perftest.result`` per run: the row at the
largest message size and the highest average bandwidth over all rows (``-a`` sweeps). A run
that failed before its table (``Couldn't connect``, CUDA allocation errors) still gives a
result, with ``error`` set and no bandwidth.

Sample input::

    initializing CUDA
    Picking device No. 3
    [pid = 48211, dev = 3] device name = [NVIDIA H100 80GB HBM3]
    ---------------------------------------------------------------------------------------
                        RDMA_Write BW Test
     Dual-port       : OFF		Device         : mlx5_5
     Number of qps   : 4		Transport type : IB
     Connection type : RC		Using SRQ      : OFF
     Mtu             : 4096[B]
     Link type       : IB
    ---------------------------------------------------------------------------------------
     #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
     65536      20000            196.32             196.10  		   0.374031
     1048576    20000            196.41             196.38  		   0.023410
    ---------------------------------------------------------------------------------------

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE, command="ib_write_bw -d mlx5_5 -i 1 -q 4 --use_cuda=3 -a --report_gbits peer")
    >>> ctx = ParseContext(doc, "perftest"); parse(doc, ctx)
    >>> r = ctx.facts[0]
    >>> (r.test, r.device, r.port, r.qps, r.msg_size_bytes, r.bw_avg_gbps, r.bw_peak_gbps, r.bw_avg_max_gbps)
    ('ib_write_bw', 'mlx5_5', 1, 4, 1048576, 196.38, 196.41, 196.38)
    >>> (r.use_cuda, r.cuda_device, r.link_type, r.mtu, r.rows, r.units)
    (True, 3, 'IB', 4096, 2, 'Gb/sec')
    >>> (r.source.line, r.source.end_line)
    (1, 15)
    >>> sniff(doc) > 0.9
    True
"""

from __future__ import annotations

import math
import re
from typing import Any

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.net import PerftestResult


SAMPLE = """\
initializing CUDA
Picking device No. 3
[pid = 48211, dev = 3] device name = [NVIDIA H100 80GB HBM3]
---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF\t\tDevice         : mlx5_5
 Number of qps   : 4\t\tTransport type : IB
 Connection type : RC\t\tUsing SRQ      : OFF
 Mtu             : 4096[B]
 Link type       : IB
---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
 65536      20000            196.32             196.10  \t\t   0.374031
 1048576    20000            196.41             196.38  \t\t   0.023410
---------------------------------------------------------------------------------------
"""

_TITLE = lazyre.compile(
    r"^\s*(Send|RDMA_Write|RDMA_Read|Atomic)\s+(?:(?:CMP_AND_SWAP|FETCH_AND_ADD)\s+)?"
    r"(Bidirectional\s+)?(?:Post List\s+)?(BW|Latency)\b.*\bTest\s*$")
_VERB = {"Send": "send", "RDMA_Write": "write", "RDMA_Read": "read", "Atomic": "atomic"}
_SEPARATOR = lazyre.compile(r"^\s*-{20,}\s*$")
_MAX_HEADER_LINE = 1024
_KV = lazyre.compile(r"([A-Za-z][A-Za-z0-9 .*_/-]*?)\s*:\s*(.*?)(?=\s{2,}[A-Za-z][A-Za-z0-9 .*_/-]*?\s*:|\s*$)")
_COLUMN = lazyre.compile(r"#\w+|tps average|(?<![A-Za-z0-9_.%])[A-Za-z0-9_.%]+(?: [A-Za-z0-9_.%]+){0,4}\[[^\]]*\]")
_NUMBER = lazyre.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$")
_CUDA = lazyre.compile(r"initializing CUDA|Picking device No\.|cuMemAlloc|allocated GPU buffer|"
                   r"creating CUDA Ctx|using DMA-BUF|CUDA device \d+:|device name = \[")
_CUDA_DEV = lazyre.compile(r"Picking device No\.\s*(\d+)|\[pid = \d+, dev = (\d+)\]")
_ERROR = lazyre.compile(r"Couldn'?t|Unable to|Failed to|failed to|\bERROR\b|\berror[:=]|"
                    r"No IB devices found|IB device \S+ not found|Connection refused")
_TEST_CMD = lazyre.compile(r"\b((?:ib|raw_ethernet)_\w+_(?:bw|lat))\b")
_PORT_CMD = lazyre.compile(r"(?:\s-i\s*|--ib-port[= ])(\d+)")
_DEV_CMD = lazyre.compile(r"(?:\s-d\s*|--ib-dev[= ])(\S+)")
_QP_CMD = lazyre.compile(r"(?:\s-q\s*|--qp[= ])(\d+)")

_MB_TO_GBPS = 1048576 * 8 / 1e9


class _Run:
    def __init__(self, index: int, test: str, pending: dict[str, Any]):
        self.index = index
        self.last = index
        self.f: dict[str, Any] = {"test": test}
        self.f.update(pending)
        self.columns: list[str] | None = None
        self.rows: list[tuple[int, dict[str, float]]] = []
        self.done = False


def sniff(doc: Document) -> float:
    score = 0.0
    cuda_init = False
    for line in doc.lines[:200]:
        if line.startswith("initializing CUDA"):
            cuda_init = True
        elif cuda_init and line.startswith("Picking device No."):
            score = max(score, 0.6)
        if _TITLE.match(line):
            score = max(score, 0.9)
        elif "#bytes" in line and ("BW peak[" in line or "t_min[usec]" in line or "t_avg[usec]" in line):
            return 0.95
        elif line.strip().startswith(("Number of qps", "Dual-port")) and ":" in line:
            score = max(score, 0.7)
    return score


def parse(doc: Document, ctx: ParseContext) -> None:
    cmd = doc.command or ""
    cmd_test = (_TEST_CMD.search(cmd) or [None, ""])[1]
    runs: list[_Run] = []
    pending: dict[str, Any] = {}
    pending_line: int | None = None
    cur: _Run | None = None

    def current(i: int) -> _Run:
        nonlocal cur, pending, pending_line
        if cur is None or cur.done:
            cur = _Run(pending_line if pending_line is not None else i, cmd_test, pending)
            runs.append(cur)
            pending, pending_line = {}, None
        return cur

    for i, raw in enumerate(doc.lines):
        line = raw.rstrip()
        if not line.strip():
            continue
        m = _TITLE.match(line)
        if m:
            cur = None
            run = current(i)
            kind = "bw" if m.group(3) == "BW" else "lat"
            run.f["test"] = f"ib_{_VERB[m.group(1)]}_{kind}"
            run.f["bidirectional"] = bool(m.group(2))
            continue
        if _SEPARATOR.match(line):
            if cur is not None and cur.rows:
                cur.done = True
                cur.last = i
            continue
        if "#bytes" in line:
            run = current(i)
            run.columns = _COLUMN.findall(line)
            run.last = i
            continue
        tokens = line.split()
        if cur is not None and cur.columns and not cur.done and all(_NUMBER.match(t) for t in tokens):
            _row(ctx, cur, i, tokens)
            continue
        target_is_run = cur is not None and not cur.done and not cur.rows
        fields = cur.f if target_is_run and cur is not None else pending
        if not target_is_run and pending_line is None:
            pending_line = i
        if "Waiting for client" in line:
            fields["role"] = "server"
        elif _CUDA.search(line):
            fields["use_cuda"] = True
            if "DMA-BUF" in line or "dmabuf" in line:
                fields["use_cuda_dmabuf"] = True
            mc = _CUDA_DEV.search(line)
            if mc:
                fields["cuda_device"] = int(mc.group(1) or mc.group(2))
        elif "Conflicting CPU frequency" in line:
            fields["cpu_freq_warning"] = True
        elif _ERROR.search(line) and "doesn't support" not in line:
            if not fields.get("error"):
                fields["error"] = line.strip()[:200]
        elif target_is_run:
            _header(ctx, cur, i, line)  # type: ignore[arg-type]
        else:
            if pending_line == i and not pending:
                pending_line = None
    if pending.get("error") or (pending.get("use_cuda") and not runs):
        current(len(doc.lines) - 1).last = len(doc.lines) - 1
    if not runs:
        raise NotApplicable("no perftest header or results table")
    for run in runs:
        _emit(ctx, run, cmd)


def _header(ctx: ParseContext, run: _Run, i: int, line: str) -> None:
    if len(line) > _MAX_HEADER_LINE:
        # _KV backtracks badly on long lines; header lines are under 100 characters
        ctx.warn(i, f"header line of {len(line)} characters not read: {line.strip()[:60]!r}")
        return
    if ":" not in line:
        return  # no key: value pair, and _KV would try every start
    for m in _KV.finditer(line):
        key, value = m.group(1).strip().lower(), m.group(2).strip()
        if key == "device":
            run.f["device"] = value
        elif key == "number of qps":
            run.f["qps"] = _int(value)
        elif key == "transport type":
            run.f["transport"] = value
        elif key == "connection type":
            run.f["connection"] = value
        elif key == "mtu":
            run.f["mtu"] = _int(value)
        elif key == "link type":
            run.f["link_type"] = value
        elif key == "gid index":
            run.f["gid_index"] = _int(value)


def _row(ctx: ParseContext, run: _Run, i: int, tokens: list[str]) -> None:
    cols = run.columns or []
    if len(tokens) != len(cols):
        ctx.warn(i, f"results row has {len(tokens)} values for {len(cols)} columns (truncated?)")
        if len(tokens) < 2:
            return
    row: dict[str, float] = {}
    for name, tok in zip(cols, tokens):
        value = float(tok)  # _NUMBER guarantees the syntax
        if not math.isfinite(value):
            ctx.warn(i, f"value out of range in results row: {tok[:40]!r}")
            return
        row[name] = value
    run.rows.append((i, row))
    run.last = i


def _emit(ctx: ParseContext, run: _Run, cmd: str) -> None:
    f = run.f
    if not f.get("test"):
        f["test"] = "perftest"
    if not f.get("device"):
        m = _DEV_CMD.search(" " + cmd)
        if m:
            f["device"] = m.group(1)
    m = _PORT_CMD.search(" " + cmd)
    if m:
        f["port"] = int(m.group(1))
    if f.get("qps") is None:
        m = _QP_CMD.search(" " + cmd)
        if m:
            f["qps"] = int(m.group(1))
    if "--use_cuda" in cmd or "--use_cuda_dmabuf" in cmd:
        f["use_cuda"] = True
        if "dmabuf" in cmd:
            f["use_cuda_dmabuf"] = True
    cols = run.columns or []
    units = next((c[c.index("[") + 1:-1] for c in cols if c.startswith("BW average[")), "")
    factor = _MB_TO_GBPS if units.startswith("MB") else 1.0
    f["units"] = units
    f["rows"] = len(run.rows)
    if run.rows:
        size_key = "#bytes"
        best_i, best = max(run.rows, key=lambda r: (r[1].get(size_key, 0.0), r[0]))
        size = best.get(size_key)
        f["msg_size_bytes"] = int(size) if size is not None and size < 2**63 else None
        it = best.get("#iterations")
        f["iterations"] = int(it) if it is not None and it < 2**63 else None

        def bw(name: str, row: dict[str, float]) -> float | None:
            key = next((c for c in row if c.startswith(name + "[")), None)
            return round(row[key] * factor, 4) if key is not None else None

        f["bw_peak_gbps"] = bw("BW peak", best)
        f["bw_avg_gbps"] = bw("BW average", best)
        f["msg_rate_mpps"] = best.get("MsgRate[Mpps]")
        avgs = [v for v in (bw("BW average", r) for _, r in run.rows) if v is not None]
        f["bw_avg_max_gbps"] = max(avgs) if avgs else None
        for col, dest in (("t_min[usec]", "lat_min_usec"), ("t_max[usec]", "lat_max_usec"),
                          ("t_typical[usec]", "lat_typical_usec"), ("t_avg[usec]", "lat_avg_usec"),
                          ("99% percentile[usec]", "lat_p99_usec")):
            if col in best:
                f[dest] = best[col]
    elif run.columns is not None and not f.get("error"):
        ctx.warn(run.last, f"{f['test']}: results table has no rows (truncated?)")
    ctx.add(PerftestResult, run.index, run.last, **f)


def _int(text: str) -> int | None:
    m = re.match(r"\s*(\d+)", text)
    return int(m.group(1)) if m else None


FORMATS = [
    Format(
        name="perftest",
        command="ib_write_bw -d mlx5_0 -q 4 -a --report_gbits <server>",
        facts=("perftest.result",),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\b(?:ib|raw_ethernet)_(?:write|read|send|atomic)_(?:bw|lat)\b",),
        description="perftest ib_write_bw / ib_read_bw / ib_send_bw / *_lat results (Gb/s, usec)",
    )
]
