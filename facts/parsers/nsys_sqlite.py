"""nsys SQLite export - Command

The SQLite export of an Nsight Systems report (``nsys export --type sqlite``, also written by
``nsys stats``), and its text form (``sqlite3 report.sqlite .dump``). Per-iteration GPU timeline
metrics are computed as domain.md section 2.3 asks, with interval unions, never summed kernel time:

* iterations: NVTX ranges (push/pop or start/end) whose name is a training step
  (``train_step``, ``iteration``, ``step 12``, ``ProfilerStep#3``, then ``forward_backward``...),
  else the repeating NVTX range with the largest total time; per process, on the thread that
  opened most of them, nested repeats dropped; the first one is left out as warm-up when there
  are five or more;
* per iteration and GPU: ``U_gpu`` = union of kernel, memcpy and memset intervals; idle share
  ``1 - U_gpu/T_step``; ``U_comm`` = union of NCCL/NVSHMEM kernels; exposed communication = comm
  time when no compute kernel runs; host-bound gaps = GPU idle gaps over 20 us where the CUDA API
  call that launched the next GPU activity started after the gap had begun (launch arrived late);
* medians over iterations go to ``nsys.step_stats`` (one per process with iterations).

Also ``nsys.profile`` (what the export holds) and, from the kernel table, the same
``nsys.kernel_sum`` (top 50) and ``nsys.kernel_totals`` facts that ``nsys stats`` gives.

The file is not trusted: it is read from memory (``deserialize``) or, when the ingested bytes were
cut at the size cap, from its path read-only and immutable; queries run under an authorizer that
allows reads only, ``trusted_schema=OFF``, a value-size limit and a time limit. A ``.dump`` is
loaded into an in-memory database allowing only CREATE TABLE/INDEX, INSERT and transactions, with
a page cap. Rows are streamed in start order (SQL sorts, Python sweeps), never loaded all at once.

Sample input (a ``.dump``, trimmed)::

    CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
    INSERT INTO StringIds VALUES (1,'cudaLaunchKernel'), (2,'sm90_xmma_gemm_bf16_cublas'),
      (3,'ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)');
    CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
      text TEXT, globalTid INTEGER, textId INTEGER, domainId INTEGER);
    INSERT INTO NVTX_EVENTS VALUES (0,10000000,59,'train_step',16777217,NULL,0),
      (10000000,20000000,59,'train_step',16777217,NULL,0);
    CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
      eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
      returnValue INTEGER NOT NULL, callchainId INTEGER);
    INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (100000,105000,0,16777217,1,1,0,NULL),
      (5000000,5005000,0,16777217,2,1,0,NULL), (10100000,10105000,0,16777217,3,1,0,NULL),
      (16000000,16005000,0,16777217,4,1,0,NULL);
    CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
      deviceId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
      demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL);
    INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (200000,6000000,0,7,1,16777216,2,2),
      (5100000,9000000,0,21,2,16777216,3,3), (10200000,15000000,0,7,3,16777216,2,2),
      (16100000,19000000,0,21,4,16777216,3,3);

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "nsys-sqlite-dump"); parse_dump(doc, ctx)
    >>> s = [f for f in ctx.facts if f.fact_type == "nsys.step_stats"][0]
    >>> (s.pid, s.iteration_range, s.iterations, s.median_step_ms, s.devices, s.kernels)
    (1, 'train_step', 2, 10.0, 1, 4)
    >>> (s.gpu_idle_pct, s.comm_pct, s.exposed_comm_pct, s.host_bound_gap_pct)
    (17.5, 34.0, 29.5, 12.5)
    >>> p = ctx.facts[0]
    >>> (p.fact_type, p.kernels, p.nvtx_ranges, p.gpus, p.duration_ms)
    ('nsys.profile', 4, 2, 1, 20.0)
    >>> sniff_dump(doc) > 0.8
    True
"""

from __future__ import annotations

import heapq
import math
import os
import re
import sqlite3
import statistics
import time
from bisect import bisect_right
from pathlib import Path
from typing import Any, Iterator

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.nsys import NsysKernelSum, NsysKernelTotals, NsysProfile, NsysStepStats
from clusterdx.facts.parsers.nsys_stats import MAX_NAME, MAX_ROWS, kernel_category


SAMPLE = """\
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1,'cudaLaunchKernel'), (2,'sm90_xmma_gemm_bf16_cublas'),
  (3,'ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)');
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
  text TEXT, globalTid INTEGER, textId INTEGER, domainId INTEGER);
INSERT INTO NVTX_EVENTS VALUES (0,10000000,59,'train_step',16777217,NULL,0),
  (10000000,20000000,59,'train_step',16777217,NULL,0);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
  eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
  returnValue INTEGER NOT NULL, callchainId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (100000,105000,0,16777217,1,1,0,NULL),
  (5000000,5005000,0,16777217,2,1,0,NULL), (10100000,10105000,0,16777217,3,1,0,NULL),
  (16000000,16005000,0,16777217,4,1,0,NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (200000,6000000,0,7,1,16777216,2,2),
  (5100000,9000000,0,21,2,16777216,3,3), (10200000,15000000,0,7,3,16777216,2,2),
  (16100000,19000000,0,21,4,16777216,3,3);
"""

MAGIC = b"SQLite format 3\x00"
#: largest export opened from its path when the ingested bytes were cut
MAX_DB_BYTES = 16 << 30
#: wall-clock limit on all queries (and on loading a .dump)
QUERY_SECONDS = 120.0
#: GPU idle gaps shorter than this are not classified (domain.md 2.3, heuristic)
GAP_NS = 20_000
MAX_ITERATIONS = 100_000
MAX_PROCESSES = 64
MAX_DEVICES = 64
#: distinct NVTX names tracked while looking for the iteration range
MAX_RANGE_NAMES = 50_000
#: largest string value SQLite may produce (names are cut further when read)
MAX_VALUE_BYTES = 16 << 20
#: in-memory database cap for a .dump (pages of 4 KiB)
MAX_DUMP_PAGES = 65_536
#: SQLite VM steps between two looks at the clock
_PROGRESS_OPS = 10_000

_MARKERS = (b"CUPTI_ACTIVITY_KIND_", b"NVTX_EVENTS", b"TARGET_INFO_GPU", b"ANALYSIS_DETAILS",
            b"TARGET_INFO_SESSION_START_TIME")
_NSYS_TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL", "NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_RUNTIME",
                "TARGET_INFO_GPU", "ANALYSIS_DETAILS", "OSRT_API", "CUPTI_ACTIVITY_KIND_MEMCPY")
KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"
RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"
NVTX = "NVTX_EVENTS"
_RANGE_TYPES = "(59, 60)"

# iteration range names, best first (matched on the name lower-cased, trailing numbers removed)
_STEP_PATTERNS = (
    re.compile(r"^(?:train(?:ing)?[ _-]?(?:step|iter(?:ation)?|batch)|iter(?:ation)?|step|"
               r"profiler ?step|global[ _-]?step|train)$"),
    re.compile(r"^(?:forward[ _-]?backward|fwd[ _-]?bwd)\w*$"),
    re.compile(r"(?:step|iteration)"),
)
_NOT_STEP = lazyre.compile(r"optim|lr[ _]|sched|zero_grad|ema|warm|eval|valid|data|load|ckpt|checkpoint|"
                       r"save|nccl|log")
# a trailing "_3", "#2", " 1/4" (a rank or a run number), matched on the reversed name: anchored
# there, one attempt, where searching for it from every position of a long digit run is quadratic
_TRAILING_NUMBER_REVERSED = lazyre.compile(r"^\s*\d+(?:\s*/\s*\d+)?[\s_#:=/-]*")

_READ_ACTIONS = {sqlite3.SQLITE_READ, sqlite3.SQLITE_SELECT, sqlite3.SQLITE_FUNCTION}
_DUMP_ACTIONS = _READ_ACTIONS | {sqlite3.SQLITE_CREATE_TABLE, sqlite3.SQLITE_CREATE_INDEX,
                                 sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE,
                                 sqlite3.SQLITE_TRANSACTION, sqlite3.SQLITE_SAVEPOINT}


# -- opening, safely -------------------------------------------------------------------------------


class _Deadline:
    def __init__(self, seconds: float):
        self.until = time.monotonic() + seconds
        self.hit = False

    def __call__(self) -> int:
        if time.monotonic() > self.until:
            self.hit = True
            return 1
        return 0


def _harden(conn: sqlite3.Connection, deadline: _Deadline, allowed: set[int]) -> None:
    conn.execute("PRAGMA trusted_schema = OFF")
    conn.execute("PRAGMA cell_size_check = ON")
    conn.execute("PRAGMA mmap_size = 0")
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)

    def authorize(action: int, arg1: Any, arg2: Any, db: Any, source: Any) -> int:
        if action in allowed:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_PRAGMA and arg1 == "table_info":
            return sqlite3.SQLITE_OK
        return sqlite3.SQLITE_DENY

    conn.set_authorizer(authorize)
    conn.set_progress_handler(deadline, _PROGRESS_OPS)


def _db_size(raw: bytes) -> int | None:
    """Bytes the header says the database has (None when the header does not say)."""
    if len(raw) < 100:
        return None
    page = int.from_bytes(raw[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(raw[28:32], "big")
    if pages == 0 or raw[24:28] != raw[92:96]:
        return None
    return page * pages


def open_export(doc: Document, ctx: ParseContext, deadline: _Deadline) -> sqlite3.Connection:
    raw = doc.raw or b""
    if not raw.startswith(MAGIC):
        raise NotApplicable("not an SQLite database")
    conn: sqlite3.Connection | None = None
    try:
        expected = _db_size(raw)
        path = doc.path
        if path and expected is not None and len(raw) < expected:
            try:
                st = os.stat(path)
                with open(path, "rb") as fh:
                    same = fh.read(100) == raw[:100]
            except OSError:
                st, same = None, False
            if st is not None and same and len(raw) < st.st_size <= MAX_DB_BYTES:
                uri = Path(path).resolve().as_uri() + "?mode=ro&immutable=1"
                conn = sqlite3.connect(uri, uri=True)
        if conn is None:
            if expected is not None and len(raw) < expected:
                ctx.warn(None, f"SQLite file cut at {len(raw)} of {expected} bytes; tables may be incomplete")
            data = raw
            if data[18:20] != b"\x01\x01":  # WAL header bytes: read it as a rollback-journal database
                data = data[:18] + b"\x01\x01" + data[20:]
            conn = sqlite3.connect(":memory:")
            conn.deserialize(data)
        conn.execute("PRAGMA query_only = ON")
        _harden(conn, deadline, _READ_ACTIONS)
        return conn
    except (sqlite3.Error, OverflowError, MemoryError, ValueError) as exc:
        if conn is not None:
            conn.close()
        raise ParseError(f"cannot open the SQLite file: {exc}") from None


def load_dump(doc: Document, ctx: ParseContext, deadline: _Deadline) -> sqlite3.Connection:
    """An in-memory database built from ``.dump`` text; statements other than CREATE TABLE/INDEX,
    INSERT and transactions are skipped."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        conn.execute("PRAGMA page_size = 4096")
        conn.execute(f"PRAGMA max_page_count = {MAX_DUMP_PAGES}")
        _harden(conn, deadline, _DUMP_ACTIONS)
    except sqlite3.Error as exc:  # pragma: no cover - the sqlite3 module itself failed
        conn.close()
        raise ParseError(f"cannot create an in-memory database: {exc}") from None
    buf: list[str] = []
    first = 0
    loaded = skipped = 0
    size = 0
    for i, line in enumerate(doc.lines):
        if not buf:
            if not line.strip() or line.lstrip().startswith("--"):
                continue
            first = i
            size = 0
        line = line.replace("\x00", "\ufffd")
        buf.append(line)
        size += len(line) + 1
        if size > MAX_VALUE_BYTES:
            conn.close()
            raise ParseError("SQL statement too long", doc.lineno(first))
        if ";" not in line:
            continue
        stmt = "\n".join(buf)
        if not sqlite3.complete_statement(stmt):
            continue
        buf = []
        try:
            conn.execute(stmt.rstrip().rstrip(";"))
            loaded += 1
        except (sqlite3.Error, OverflowError, ValueError) as exc:
            if "one statement at a time" in str(exc):
                # several statements on one line: run them one by one
                ok, bad = _execute_many(conn, stmt)
                loaded += ok
                skipped += bad
                continue
            if deadline.hit:
                conn.close()
                raise ParseError(f"loading the SQL took longer than {QUERY_SECONDS:.0f} s",
                                 doc.lineno(first)) from None
            if "full" in str(exc).lower():
                ctx.warn(first, f"in-memory database cap reached; the rest of the SQL is not loaded")
                break
            skipped += 1
            if skipped <= 20 and not str(exc).startswith("not authorized"):
                ctx.warn(first, f"SQL statement not loaded: {exc}")
    if buf and any(ln.strip() for ln in buf):
        ctx.warn(first, "SQL text ends inside a statement (cut off?)")
    if loaded == 0:
        conn.close()
        raise NotApplicable("no SQL statement could be loaded")
    return conn


def _execute_many(conn: sqlite3.Connection, text: str) -> tuple[int, int]:
    ok = bad = 0
    rest = text
    while rest.strip():
        # find the shortest complete statement prefix
        cut = None
        for m in re.finditer(";", rest):
            if sqlite3.complete_statement(rest[:m.end()]):
                cut = m.end()
                break
        stmt, rest = (rest[:cut], rest[cut:]) if cut else (rest, "")
        try:
            conn.execute(stmt.strip().rstrip(";"))
            ok += 1
        except (sqlite3.Error, OverflowError, ValueError):
            bad += 1
    return ok, bad


# -- schema helpers --------------------------------------------------------------------------------


class _Db:
    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        self.tables = {r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'") if isinstance(r[0], str)}
        self._cols: dict[str, set[str]] = {}

    def cols(self, table: str) -> set[str]:
        if table not in self.tables:
            return set()
        if table not in self._cols:
            q = table.replace('"', '""')
            self._cols[table] = {str(r[1]) for r in self.conn.execute(f'PRAGMA table_info("{q}")')}
        return self._cols[table]

    def has(self, table: str, *cols: str) -> bool:
        have = self.cols(table)
        return bool(have) and all(c in have for c in cols)

    def one(self, sql: str, *args: Any) -> Any:
        row = self.conn.execute(sql, args).fetchone()
        return row[0] if row else None

    def strings(self, ids: set[int]) -> dict[int, str]:
        out: dict[int, str] = {}
        if not ids or not self.has("StringIds", "id", "value"):
            return out
        todo = sorted(i for i in ids if isinstance(i, int))
        for k in range(0, len(todo), 500):
            chunk = todo[k:k + 500]
            marks = ",".join("?" * len(chunk))
            for sid, value in self.conn.execute(
                    f"SELECT id, substr(value, 1, 4096) FROM StringIds WHERE id IN ({marks})", chunk):
                out[sid] = value if isinstance(value, str) else str(value)
        return out


def _pid_expr(col: str) -> str:
    return f"(({col} >> 24) & 16777215)"


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    v = float(value)
    return v if math.isfinite(v) else None


# -- the analysis ----------------------------------------------------------------------------------


def analyse(db: _Db, ctx: ParseContext, profile_name: str) -> None:
    if not any(t in db.tables for t in _NSYS_TABLES):
        raise NotApplicable("SQLite database without Nsight Systems tables")
    kernels = _kernel_summary(db)
    iteration = _find_iteration_range(db)
    _emit_profile(db, ctx, kernels, iteration)
    comm_ids = {nid for nid, (name, *_rest) in kernels.items() if kernel_category(name) in ("nccl", "nvshmem")}
    if iteration is not None:
        for pid, iters in _iterations(db, iteration[0])[:MAX_PROCESSES]:
            _step_stats(db, ctx, pid, iters, iteration, comm_ids)
    _emit_kernel_sums(ctx, kernels, profile_name)


def _kernel_name_col(db: _Db) -> str | None:
    for col in ("demangledName", "shortName", "name"):
        if db.has(KERNEL, col):
            return col
    return None


def _kernel_summary(db: _Db) -> dict[Any, tuple[str, int, float]]:
    """name id -> (name, instances, total ns)."""
    if not db.has(KERNEL, "start", "end"):
        return {}
    col = _kernel_name_col(db)
    key = f'"{col}"' if col else "NULL"
    rows = list(db.conn.execute(
        f'SELECT {key}, COUNT(*), SUM("end" - "start") FROM {KERNEL} GROUP BY 1 '
        f"ORDER BY 3 DESC LIMIT 100000"))
    names = db.strings({r[0] for r in rows if isinstance(r[0], int)})
    out: dict[Any, tuple[str, int, float]] = {}
    for nid, count, total in rows:
        name = names.get(nid) if isinstance(nid, int) else (nid if isinstance(nid, str) else None)
        out[nid] = (name or f"<kernel name id {nid}>", int(count or 0), max(0.0, _num(total) or 0.0))
    return out


def _normalize(name: str) -> str:
    """Lower case, without a trailing rank or run number.

    >>> _normalize("Step_12"), _normalize("iter 3/10"), _normalize("fwd-1/2/3"), _normalize("v2")
    ('step', 'iter', 'fwd-1', 'v')
    """
    text = name.strip().lower()
    m = _TRAILING_NUMBER_REVERSED.match(text[::-1])
    return (text[:len(text) - m.end()] if m else text).strip()


def _nvtx_ranges(db: _Db, where: str = "", args: tuple = ()) -> Iterator[tuple[int, int, Any, str]]:
    if not db.has(NVTX, "start", "end"):
        return iter(())
    cols = db.cols(NVTX)
    text = '"text"' if "text" in cols else "NULL"
    join = ""
    if "textId" in cols and db.has("StringIds", "id", "value"):
        text = f"COALESCE({text}, s.value)"
        join = "LEFT JOIN StringIds s ON s.id = e.textId"
    tid = "e.globalTid" if "globalTid" in cols else "NULL"
    etype = "AND e.eventType IN (59, 60)" if "eventType" in cols else ""
    sql = (f'SELECT e."start", e."end", {tid}, substr({text}, 1, 1000) FROM {NVTX} e {join} '
           f'WHERE e."end" IS NOT NULL AND e."end" > e."start" {etype} {where}')
    return (r for r in db.conn.execute(sql, args)
            if isinstance(r[0], int) and isinstance(r[1], int) and isinstance(r[3], str))


def _find_iteration_range(db: _Db) -> tuple[str, str, str] | None:
    """(normalized name, how chosen, example raw name) of the iteration range, or None."""
    stats: dict[str, list[Any]] = {}
    for start, end, _tid, name in _nvtx_ranges(db):
        key = _normalize(name)
        entry = stats.get(key)
        if entry is None:
            if len(stats) >= MAX_RANGE_NAMES:
                continue
            entry = stats[key] = [0, 0, name]
        entry[0] += 1
        entry[1] += end - start
    if not stats:
        return None
    for rank, pattern in enumerate(_STEP_PATTERNS):
        found = [(v[1], k) for k, v in stats.items()
                 if k and pattern.search(k) and (rank == 0 or not _NOT_STEP.search(k))]
        if found:
            _, key = max(found)
            return key, "pattern", stats[key][2]
    repeating = [(v[1], k) for k, v in stats.items() if v[0] >= 3 and k and not k.startswith("nccl")]
    if repeating:
        _, key = max(repeating)
        return key, "repeating", stats[key][2]
    return None


def _iterations(db: _Db, key: str) -> list[tuple[int | None, list[tuple[int, int]]]]:
    """Per process: the iteration intervals on the thread that opened most of them."""
    by_tid: dict[Any, list[tuple[int, int]]] = {}
    for start, end, tid, name in _nvtx_ranges(db):
        if _normalize(name) != key:
            continue
        lst = by_tid.setdefault(tid if isinstance(tid, int) else None, [])
        if len(lst) < MAX_ITERATIONS:
            lst.append((start, end))
    best: dict[int | None, tuple[Any, list[tuple[int, int]]]] = {}
    for tid, lst in by_tid.items():
        pid = (tid >> 24) & 0xFFFFFF if isinstance(tid, int) else None
        if pid not in best or len(lst) > len(best[pid][1]):
            best[pid] = (tid, lst)
    out = []
    for pid, (_tid, lst) in best.items():
        lst.sort()
        kept: list[tuple[int, int]] = []
        for s, e in lst:
            if kept and s < kept[-1][1]:
                continue  # nested or overlapping repeat: keep the outer one
            kept.append((s, e))
        out.append((pid, kept))
    out.sort(key=lambda item: (-len(item[1]), item[0] if item[0] is not None else -1))
    return out


class _Acc:
    """Per-iteration sums for one device: busy, comm, exposed comm, host-bound gap ns; kernels.

    Segments arrive in time order, so a cursor (not a search) finds their iteration.
    """

    def __init__(self, iters: list[tuple[int, int]]):
        self.iters = iters
        self.starts = [s for s, _ in iters]
        n = len(iters)
        self.sums = [[0.0] * n for _ in range(4)]
        self.kernels = [0] * n
        self.k = 0
        self.kk = 0
        self.seen = False

    def add(self, a: float, b: float, fields: tuple[int, ...]) -> None:
        iters = self.iters
        n = len(iters)
        k = self.k
        if k and a < iters[k - 1][1]:  # out of order: search
            k = max(0, bisect_right(self.starts, a) - 1)
        while k < n and iters[k][1] <= a:
            k += 1
        self.k = k
        sums = self.sums
        while k < n:
            s, e = iters[k]
            if s >= b:
                break
            d = (b if b < e else e) - (a if a > s else s)
            if d > 0:
                for f in fields:
                    sums[f][k] += d
            k += 1

    def count_kernel(self, t: int) -> None:
        iters = self.iters
        k = self.kk
        if k and t < iters[k - 1][1]:
            k = max(0, bisect_right(self.starts, t) - 1)
        while k < len(iters) and iters[k][1] <= t:
            k += 1
        self.kk = k
        if k < len(iters) and iters[k][0] <= t:
            self.kernels[k] += 1


_BUSY, _COMM, _EXPOSED, _HOST = range(4)
_CLS_COMPUTE, _CLS_COMM, _CLS_COPY = range(3)
_F_BUSY, _F_COMM, _F_EXPOSED, _F_HOST = (_BUSY,), (_BUSY, _COMM), (_BUSY, _COMM, _EXPOSED), (_HOST,)


def _sweep(rows: Iterator[tuple[Any, ...]], iters: list[tuple[int, int]], comm_ids: set[Any],
           window_start: int) -> dict[Any, _Acc]:
    """One ordered pass over (device, start, end, is_kernel, name id, launch start) rows.

    A heap holds the end times of the activities running now; between two consecutive start/end
    times the state (anything, comm, compute running) is constant and its span is added to the
    iterations it overlaps. ``gap`` is when the device last went idle.
    """
    accs: dict[Any, _Acc] = {}
    device: Any = object()
    acc = _Acc(iters)
    heap: list[tuple[int, int]] = []
    counts = [0, 0, 0]
    t = 0
    gap = window_start
    heappush, heappop = heapq.heappush, heapq.heappop

    def advance(x: float) -> None:
        nonlocal t, gap
        while heap and heap[0][0] <= x:
            m = heap[0][0]
            if m > t:
                acc.add(t, m, _F_BUSY if not counts[_CLS_COMM] else
                        _F_COMM if counts[_CLS_COMPUTE] else _F_EXPOSED)
                t = m
            while heap and heap[0][0] == m:
                counts[heappop(heap)[1]] -= 1
            if not heap:
                gap = m
        if heap and x > t:
            acc.add(t, x, _F_BUSY if not counts[_CLS_COMM] else
                    _F_COMM if counts[_CLS_COMPUTE] else _F_EXPOSED)
            t = int(x)

    for dev, start, end, is_kernel, nid, launch in rows:
        if not isinstance(start, int) or not isinstance(end, int) or end <= start:
            continue
        if dev != device:
            if device in accs:
                advance(math.inf)
            if len(accs) >= MAX_DEVICES or dev in accs:
                break  # more devices than we follow, or rows not ordered by device
            device = dev
            acc = accs[dev] = _Acc(iters)
            heap.clear()
            counts[:] = [0, 0, 0]
            t, gap = start, window_start
        acc.seen = True
        if heap and heap[0][0] <= start or heap and start > t:
            advance(start)
        if not heap:
            if start - gap > GAP_NS and isinstance(launch, (int, float)) and launch > gap:
                acc.add(gap, start, _F_HOST)
            t = start
        cls = _CLS_COPY if not is_kernel else (_CLS_COMM if nid in comm_ids else _CLS_COMPUTE)
        heappush(heap, (end, cls))
        counts[cls] += 1
        if is_kernel:
            acc.count_kernel(start)
    if device in accs:
        advance(math.inf)
    return accs


def _activity_rows(db: _Db, pid: int | None, lo: int, hi: int) -> Iterator[tuple[Any, ...]]:
    parts = []
    args: list[Any] = []
    name_col = _kernel_name_col(db)
    for table, is_kernel in ((KERNEL, 1), ("CUPTI_ACTIVITY_KIND_MEMCPY", 0), ("CUPTI_ACTIVITY_KIND_MEMSET", 0)):
        if not db.has(table, "start", "end", "deviceId"):
            continue
        cols = db.cols(table)
        nid = f'"{name_col}"' if is_kernel and name_col else "NULL"
        cid = "correlationId" if "correlationId" in cols else "NULL"
        has_pid = "globalPid" in cols
        ppid = _pid_expr("globalPid") if has_pid else "NULL"
        where = '"start" < ? AND "end" > ?'
        args += [hi, lo]
        if pid is not None and has_pid:
            where += f" AND {ppid} = ?"
            args.append(pid)
        parts.append(f'SELECT deviceId AS dev, "start" AS s, "end" AS e, {is_kernel} AS k, {nid} AS nid, '
                     f"{cid} AS cid, {ppid} AS pid FROM {table} WHERE {where}")
    if not parts:
        return iter(())
    union = " UNION ALL ".join(parts)
    if db.has(RUNTIME, "start", "correlationId"):
        rcols = db.cols(RUNTIME)
        rpid = _pid_expr("globalTid") if "globalTid" in rcols else "NULL"
        rwhere = ""
        rargs: list[Any] = []
        if pid is not None and "globalTid" in rcols:
            rwhere = f"WHERE {rpid} = ?"
            rargs.append(pid)
        sql = (f"SELECT a.dev, a.s, a.e, a.k, a.nid, r.ls FROM ({union}) a LEFT JOIN "
               f'(SELECT correlationId AS cid, {rpid} AS pid, MIN("start") AS ls FROM {RUNTIME} {rwhere} '
               f"GROUP BY 1, 2) r ON r.cid = a.cid AND (r.pid = a.pid OR r.pid IS NULL OR a.pid IS NULL) "
               f"ORDER BY a.dev, a.s")
        return iter(db.conn.execute(sql, args + rargs))
    return iter(db.conn.execute(f"SELECT dev, s, e, k, nid, NULL FROM ({union}) ORDER BY dev, s", args))


def _median(values: list[float]) -> float:
    return float(statistics.median(values)) if values else 0.0


def _step_stats(db: _Db, ctx: ParseContext, pid: int | None, iters: list[tuple[int, int]],
                iteration: tuple[str, str, str], comm_ids: set[Any]) -> None:
    if not iters:
        return
    rows = _activity_rows(db, pid, iters[0][0], iters[-1][1])
    accs = {d: a for d, a in _sweep(rows, iters, comm_ids, iters[0][0]).items() if a.seen}
    warm = 1 if len(iters) >= 5 else 0
    idx = range(warm, len(iters))
    steps = [float(iters[k][1] - iters[k][0]) for k in idx]

    def share(field: int) -> list[float]:
        out = []
        for k in idx:
            t = iters[k][1] - iters[k][0]
            vals = [a.sums[field][k] / t for a in accs.values()] if accs else [0.0]
            out.append(100.0 * sum(vals) / len(vals))
        return out

    busy = share(_BUSY)
    mean = statistics.fmean(steps)
    cv = statistics.stdev(steps) / mean if len(steps) > 1 and mean > 0 else 0.0
    per_step = [sum(a.kernels[k] for a in accs.values()) for k in idx]
    ctx.add(NsysStepStats, None,
            pid=pid, iteration_range=iteration[2].strip()[:MAX_NAME], iteration_source=iteration[1],
            iterations=len(steps), warmup_excluded=warm,
            median_step_ms=round(_median(steps) / 1e6, 4), mean_step_ms=round(mean / 1e6, 4),
            max_step_ms=round(max(steps) / 1e6, 4), cv=round(cv, 5),
            gpu_idle_pct=round(max(0.0, 100.0 - _median(busy)), 3),
            comm_pct=round(_median(share(_COMM)), 3), exposed_comm_pct=round(_median(share(_EXPOSED)), 3),
            host_bound_gap_pct=round(_median(share(_HOST)), 3),
            kernels=sum(per_step), kernels_per_step=float(_median([float(n) for n in per_step])),
            devices=len(accs), has_launch_data=db.has(RUNTIME, "start", "correlationId"))


def _emit_profile(db: _Db, ctx: ParseContext, kernels: dict[Any, tuple[str, int, float]],
                  iteration: tuple[str, str, str] | None) -> None:
    duration = None
    if db.has("ANALYSIS_DETAILS", "duration"):
        duration = _num(db.one("SELECT MAX(duration) FROM ANALYSIS_DETAILS"))
    if not duration:
        spans = []
        for table in (KERNEL, NVTX):
            if db.has(table, "start", "end"):
                lo_hi = db.conn.execute(f'SELECT MIN("start"), MAX("end") FROM {table}').fetchone()
                if lo_hi and _num(lo_hi[0]) is not None and _num(lo_hi[1]) is not None:
                    spans.append((lo_hi[0], lo_hi[1]))
        duration = float(max(e for _, e in spans) - min(s for s, _ in spans)) if spans else 0.0
    gpus = processes = 0
    if db.has(KERNEL, "deviceId"):
        gpus = int(db.one(f"SELECT COUNT(DISTINCT deviceId) FROM {KERNEL}") or 0)
    if db.has(KERNEL, "globalPid"):
        processes = int(db.one(f"SELECT COUNT(DISTINCT {_pid_expr('globalPid')}) FROM {KERNEL}") or 0)
    model = ""
    if db.has("TARGET_INFO_GPU", "name"):
        if not gpus:
            gpus = int(db.one("SELECT COUNT(*) FROM TARGET_INFO_GPU") or 0)
        value = db.one("SELECT substr(name, 1, 200) FROM TARGET_INFO_GPU WHERE name IS NOT NULL LIMIT 1")
        model = value if isinstance(value, str) else ""
    version = ""
    if db.has("META_DATA_EXPORT", "name", "value"):
        value = db.one("SELECT substr(value, 1, 40) FROM META_DATA_EXPORT WHERE name = 'EXPORT_SCHEMA_VERSION'")
        version = value if isinstance(value, str) else ""
    ranges = 0
    if db.has(NVTX, "start"):
        where = "WHERE eventType IN (59, 60)" if "eventType" in db.cols(NVTX) else ""
        ranges = int(db.one(f"SELECT COUNT(*) FROM {NVTX} {where}") or 0)
    ctx.add(NsysProfile, None, duration_ms=round(max(0.0, duration) / 1e6, 4),
            kernels=sum(n for _, n, _ in kernels.values()), nvtx_ranges=ranges, has_nvtx=ranges > 0,
            gpus=gpus, processes=processes, gpu_model=model, schema_version=version,
            has_runtime=RUNTIME in db.tables, has_osrt="OSRT_API" in db.tables,
            iteration_range=iteration[2].strip()[:MAX_NAME] if iteration else "")


def _emit_kernel_sums(ctx: ParseContext, kernels: dict[Any, tuple[str, int, float]], profile: str) -> None:
    if not kernels:
        return
    rows = sorted(kernels.values(), key=lambda r: -r[2])
    total = sum(r[2] for r in rows)

    def pct(x: float) -> float:
        return round(100.0 * x / total, 3) if total > 0 else 0.0

    for name, count, ns in rows[:MAX_ROWS]:
        ctx.add(NsysKernelSum, None, profile=profile, name=name[:MAX_NAME], name_truncated=len(name) > MAX_NAME,
                category=kernel_category(name), time_pct=pct(ns), total_ns=ns, instances=count,
                avg_ns=round(ns / count, 1) if count else 0.0)
    by_cat: dict[str, float] = {}
    for name, _, ns in rows:
        cat = kernel_category(name)
        by_cat[cat] = by_cat.get(cat, 0.0) + ns
    top = rows[0]
    comm = by_cat.get("nccl", 0.0) + by_cat.get("nvshmem", 0.0)
    ctx.add(NsysKernelTotals, None, profile=profile, kernels=len(rows), instances=sum(r[1] for r in rows),
            total_ns=total, nccl_ns=by_cat.get("nccl", 0.0), nccl_pct=pct(by_cat.get("nccl", 0.0)),
            comm_pct=pct(comm), gemm_pct=pct(by_cat.get("gemm", 0.0)),
            attention_pct=pct(by_cat.get("attention", 0.0)), top_kernel=top[0][:MAX_NAME],
            top_kernel_pct=pct(top[2]), top_kernel_category=kernel_category(top[0]))


def _run(conn: sqlite3.Connection, ctx: ParseContext, deadline: _Deadline, profile: str) -> None:
    try:
        analyse(_Db(conn), ctx, profile)
    except (sqlite3.Error, ArithmeticError, LookupError, MemoryError, ValueError, TypeError,
            statistics.StatisticsError) as exc:
        ctx.facts.clear()
        if deadline.hit:
            raise ParseError(f"SQLite queries took longer than {QUERY_SECONDS:.0f} s") from None
        raise ParseError(f"unreadable SQLite export: {type(exc).__name__}: {exc}") from None
    finally:
        conn.close()


def _profile_name(doc: Document) -> str:
    return doc.name.replace("\\", "/").rsplit("/", 1)[-1].split("#", 1)[0][:200]


# -- entry points ----------------------------------------------------------------------------------


def sniff(doc: Document) -> float:
    raw = doc.raw
    if raw is None or not raw.startswith(MAGIC):
        return 0.0
    head = raw[:4 << 20]
    if any(m in head for m in _MARKERS):
        return 0.95
    return 0.55


def parse(doc: Document, ctx: ParseContext) -> None:
    deadline = _Deadline(QUERY_SECONDS)
    conn = open_export(doc, ctx, deadline)
    _run(conn, ctx, deadline, _profile_name(doc))


_DUMP_TABLE = lazyre.compile(r'^\s*(?:CREATE\s+TABLE|INSERT\s+INTO)\s+(?:IF\s+NOT\s+EXISTS\s+)?["\'`\[]?'
                         r"(CUPTI_ACTIVITY_KIND_\w+|NVTX_EVENTS|TARGET_INFO_\w+|ANALYSIS_DETAILS|"
                         r"StringIds|OSRT_API)\b", re.I)


def sniff_dump(doc: Document) -> float:
    hits = 0
    for line in doc.lines[:2000]:
        m = _DUMP_TABLE.match(line)
        if m:
            hits += 2 if m.group(1).upper().startswith(("CUPTI", "NVTX")) else 1
            if hits >= 3:
                return 0.9
    return 0.4 if hits else 0.0


def parse_dump(doc: Document, ctx: ParseContext) -> None:
    if not any(_DUMP_TABLE.match(line) for line in doc.lines[:5000]):
        raise NotApplicable("no Nsight Systems table in this SQL")
    deadline = _Deadline(QUERY_SECONDS)
    conn = load_dump(doc, ctx, deadline)
    conn.set_authorizer(None)
    try:
        conn.execute("PRAGMA query_only = ON")
    except sqlite3.Error as exc:  # pragma: no cover
        conn.close()
        raise ParseError(f"in-memory database: {exc}") from None
    _harden(conn, deadline, _READ_ACTIONS)
    _run(conn, ctx, deadline, _profile_name(doc))


_FACTS = ("nsys.profile", "nsys.step_stats", "nsys.kernel_sum", "nsys.kernel_totals")

FORMATS = [
    Format(
        name="nsys-sqlite",
        command="nsys export --type sqlite -o report.sqlite report.nsys-rep",
        facts=_FACTS,
        sniff=sniff,
        parse=parse,
        command_patterns=(),
        description="Nsight Systems SQLite export: per-iteration GPU idle, communication and host-bound gaps",
        binary=True,
    ),
    Format(
        name="nsys-sqlite-dump",
        command="sqlite3 report.sqlite .dump",
        facts=_FACTS,
        sniff=sniff_dump,
        parse=parse_dump,
        command_patterns=(r"\bsqlite3\b.*\.dump\b",),
        description="SQL text dump of an Nsight Systems SQLite export (same metrics as nsys-sqlite)",
    ),
]
