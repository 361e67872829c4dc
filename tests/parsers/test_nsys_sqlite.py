"""nsys SQLite export: databases are built here, with the real schema (the CREATE TABLE statements of
tests/fixtures/formats/nsys-sqlite-schema.sql) and synthetic but realistic rows.

Every variant has 6 training steps of 9 ms as NVTX ``train_step`` ranges (a registered string, so the
name comes from StringIds through textId), nested ``forward``/``backward`` ranges, NCCL-domain
ranges, a one-off ``checkpoint_save``, GEMM/flash compute kernels on stream 7, one
``ncclDevKernel_AllGather_RING_LL`` kernel per step on stream 21, a memcpy, and a
``cudaLaunchKernel``/``cudaMemcpyAsync`` runtime row per GPU activity. Times below are ms from the
step start:

* ``healthy``: 8 compute kernels back to back 0.1-8.1, NCCL 4.5-8.5, launches 0.7 ms ahead.
  Per step: busy 8.4 -> idle 6.667 %, comm 4.0 -> 44.444 %, exposed 8.1-8.5 -> 4.444 %, host 0.
* ``host_bound``: 8 kernels of 0.8 ms every 1.0 ms (gaps of 0.2), NCCL 4.5-8.5, each launch 10 us
  before its kernel (after the gap began). Gaps at 0.9, 1.9, 2.9, 3.9 (0.8), plus the step boundary
  gap 8.5-9.1 (0.5 + 0.1): host 1.4 -> 15.556 % (the last step lacks the 0.5 after it), idle the
  same, comm 44.444 %, exposed 4.5-8.5 minus compute 2.8 = 1.2 -> 13.333 %.
* ``comm_bound``: 4 compute kernels 0.1-4.1, NCCL 4.1-8.5 after them: comm = exposed = 4.4 ->
  48.889 %, idle 6.667 %.
"""

import doctest
import re
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.ingest import Limits, ingest
from clusterdx.facts.parsers import nsys_sqlite
from tests.parsers.helpers import FORMATS, of_type, parse_fixture

SCHEMA = (FORMATS / "nsys-sqlite-schema.sql").read_text()
MS = 1_000_000
US = 1_000
STEP = 9 * MS
T0 = 1_000 * MS

GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas"
FLASH = "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>>(Flash_fwd_params)"
NCCL = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)"
STRINGS = {1: "cudaLaunchKernel", 2: GEMM, 3: "sm90_xmma_gemm", 4: FLASH, 5: "flash_fwd_kernel", 6: NCCL,
           7: "ncclDevKernel_AllGather_RING_LL", 8: "train_step", 9: "pt_main_thread", 10: "cudaMemcpyAsync",
           11: "cudaStreamSynchronize"}


def schema_statements() -> list[str]:
    out, buf = [], []
    for line in SCHEMA.splitlines():
        buf.append(line)
        stmt = "\n".join(buf)
        if sqlite3.complete_statement(stmt):
            buf = []
            if re.match(r"\s*(--[^\n]*\n\s*)*CREATE TABLE", stmt):
                out.append(stmt)
    return out


def gtid(pid: int, tid: int | None = None) -> int:
    return (pid << 24) | (pid if tid is None else tid)


def step_layout(variant: str) -> tuple[list[tuple[float, float]], tuple[float, float], float]:
    """(compute kernels, NCCL kernel, launch lead) in ms from the step start."""
    if variant == "healthy":
        return [(0.1 + j, 1.1 + j) for j in range(8)], (4.5, 8.5), 0.7
    if variant == "host_bound":
        return [(0.1 + j, 0.9 + j) for j in range(8)], (4.5, 8.5), 0.01
    if variant == "comm_bound":
        return [(0.1 + j, 1.1 + j) for j in range(4)], (4.1, 8.5), 0.7
    raise ValueError(variant)


def build(conn: sqlite3.Connection, ranks=((4242, 0, "healthy"),), steps: int = 6,
          nvtx: bool = True, step_name: str | None = "train_step", runtime: bool = True) -> None:
    for stmt in schema_statements():
        conn.execute(stmt)
    conn.execute("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.21.2')")
    conn.execute("INSERT INTO ANALYSIS_DETAILS VALUES (0, ?, 0, ?)", (T0 + steps * STEP + MS, T0 + steps * STEP + MS))
    conn.executemany("INSERT INTO StringIds VALUES (?, ?)", STRINGS.items())
    conn.executemany(
        "INSERT INTO TARGET_INFO_GPU (vmId,id,name,busLocation,totalMemory,smCount,uuid,chipName,computeMajor,computeMinor)"
        " VALUES (0, ?, 'NVIDIA H100 80GB HBM3', ?, 85520809984, 132, ?, 'GH100', 9, 0)",
        [(dev, f"0000:{0x18 + dev:02x}:00.0", f"GPU-{dev}") for _, dev, _ in ranks])
    for pid, dev, variant in ranks:
        tid = gtid(pid)
        conn.execute("INSERT INTO ThreadNames VALUES (9, 0, ?)", (tid,))
        compute, nccl, lead = step_layout(variant)
        nv, rt, kr, mc = [], [], [], []
        corr = 100
        for k in range(steps):
            s = T0 + k * STEP
            if nvtx:
                if step_name == "train_step":
                    nv.append((s, s + STEP, 59, None, tid, 8, 0))
                elif step_name:
                    nv.append((s, s + STEP, 59, step_name, tid, None, 0))
                nv.append((s + 50 * US, s + 4 * MS, 59, "forward", tid, None, 0))
                nv.append((s + 4 * MS, s + 8 * MS, 59, "backward", tid, None, 0))
                nv.append((s + int((nccl[0] - 0.2) * MS), s + int((nccl[0] - 0.1) * MS), 59, "ncclAllGather", tid, None, 1))
            for j, (a, b) in enumerate(compute):
                corr += 1
                name = (2, 3) if j % 2 == 0 else (4, 5)
                start, end = s + round(a * MS), s + round(b * MS)
                launch = start - round(lead * MS)
                rt.append((launch, launch + 5 * US, 0, tid, corr, 1, 0, None))
                kr.append((start, end, dev, 1, 7, corr, pid << 24, name[0], name[1], None, 0, 0, 168, 132, 1, 1,
                           384, 1, 1, 0, 232448, 0, 0, 1000 + corr, 233472, None, 0))
                if j == 0:
                    corr += 1
                    rt.append((launch, launch + 4 * US, 0, tid, corr, 10, 0, None))
                    mc.append((start + 100 * US, start + 200 * US, dev, 1, 9, corr, pid << 24, 1 << 20, 1, 0, 2, None, None, None))
            corr += 1
            start, end = s + round(nccl[0] * MS), s + round(nccl[1] * MS)
            launch = start - round(lead * MS) if variant != "host_bound" else start - MS
            rt.append((launch, launch + 6 * US, 0, tid, corr, 1, 0, None))
            kr.append((start, end, dev, 1, 21, corr, pid << 24, 6, 7, None, 0, 0, 96, 32, 1, 1, 640, 1, 1, 0, 10240,
                       0, 0, 1000 + corr, 16384, None, 0))
        if nvtx:
            nv.append((T0 + steps * STEP + 100 * US, T0 + steps * STEP + 900 * US, 59, "checkpoint_save", tid, None, 0))
            nv.append((T0 + 10, None, 34, "mark", tid, None, 0))  # a mark: no end
            conn.executemany("INSERT INTO NVTX_EVENTS (start,end,eventType,text,globalTid,textId,domainId) "
                             "VALUES (?,?,?,?,?,?,?)", nv)
        if runtime:
            conn.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?,?,?,?)", rt)
        conn.executemany(
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start,end,deviceId,contextId,streamId,correlationId,globalPid,"
            "demangledName,shortName,mangledName,launchType,cacheConfig,registersPerThread,gridX,gridY,gridZ,"
            "blockX,blockY,blockZ,staticSharedMemory,dynamicSharedMemory,localMemoryPerThread,localMemoryTotal,"
            "gridId,sharedMemoryExecuted,graphNodeId,sharedMemoryLimitConfig) VALUES "
            "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", kr)
        conn.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", mc)
    if not runtime:
        conn.execute("DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME")
    conn.commit()


def db_bytes(**kw) -> bytes:
    conn = sqlite3.connect(":memory:")
    build(conn, **kw)
    data = conn.serialize()
    conn.close()
    return data


def db_file(tmp_path: Path, name: str = "rank0.sqlite", **kw) -> Path:
    path = tmp_path / name
    conn = sqlite3.connect(path)
    build(conn, **kw)
    conn.close()
    return path


def run(data: bytes, name: str = "rank0.sqlite", path: str | None = None) -> ParseContext:
    doc = Document(name=name, lines=[], raw=data, path=path)
    ctx = ParseContext(doc=doc, parser="nsys-sqlite")
    nsys_sqlite.parse(doc, ctx)
    return ctx


def stats(ctx: ParseContext):
    return of_type(ctx, "nsys.step_stats")


HEALTHY = db_bytes()


# -- tests --------------------------------------------------------------------------------------


def test_doctests():
    assert doctest.testmod(nsys_sqlite).failed == 0


def test_healthy_file_on_disk(tmp_path):
    path = db_file(tmp_path)
    ctx = run(path.read_bytes(), path=str(path))
    assert ctx.warnings == []
    [prof] = of_type(ctx, "nsys.profile")
    assert (prof.duration_ms, prof.kernels, prof.nvtx_ranges, prof.has_nvtx, prof.gpus, prof.processes) == (
        1055.0, 54, 25, True, 1, 1)
    assert (prof.gpu_model, prof.schema_version, prof.has_runtime, prof.has_osrt, prof.iteration_range) == (
        "NVIDIA H100 80GB HBM3", "3.21.2", True, True, "train_step")
    assert prof.source.line == 0 and prof.source.input == "rank0.sqlite"
    [s] = stats(ctx)
    assert (s.pid, s.iteration_range, s.iteration_source, s.iterations, s.warmup_excluded) == (
        4242, "train_step", "pattern", 5, 1)
    assert (s.median_step_ms, s.mean_step_ms, s.max_step_ms, s.cv) == (9.0, 9.0, 9.0, 0.0)
    assert (s.gpu_idle_pct, s.comm_pct, s.exposed_comm_pct, s.host_bound_gap_pct) == (6.667, 44.444, 4.444, 0.0)
    assert (s.kernels, s.kernels_per_step, s.devices, s.has_launch_data) == (45, 9.0, 1, True)


def test_host_bound_variant():
    [s] = stats(run(db_bytes(ranks=((4242, 0, "host_bound"),))))
    assert (s.gpu_idle_pct, s.host_bound_gap_pct) == (15.556, 15.556)
    assert (s.comm_pct, s.exposed_comm_pct, s.median_step_ms) == (44.444, 13.333, 9.0)


def test_comm_bound_variant():
    ctx = run(db_bytes(ranks=((4242, 0, "comm_bound"),)))
    [s] = stats(ctx)
    assert (s.gpu_idle_pct, s.comm_pct, s.exposed_comm_pct, s.host_bound_gap_pct) == (6.667, 48.889, 48.889, 0.0)
    assert s.kernels_per_step == 5.0
    [tot] = of_type(ctx, "nsys.kernel_totals")
    assert (tot.kernels, tot.instances, tot.top_kernel, tot.top_kernel_category) == (3, 30, NCCL, "nccl")
    assert (tot.nccl_pct, tot.gemm_pct, tot.attention_pct) == (52.381, 23.81, 23.81)


def test_kernel_summary_from_the_export():
    ctx = run(HEALTHY)
    rows = of_type(ctx, "nsys.kernel_sum")
    assert sorted((r.category, r.instances, r.total_ns, r.time_pct) for r in rows) == [
        ("attention", 24, 24.0 * MS, 33.333), ("gemm", 24, 24.0 * MS, 33.333), ("nccl", 6, 24.0 * MS, 33.333)]
    gemm = [r for r in rows if r.category == "gemm"][0]
    assert gemm.name == GEMM and gemm.avg_ns == 1.0 * MS and gemm.med_ns is None
    assert gemm.profile == "rank0.sqlite" and gemm.source.line == 0


def test_two_ranks_in_one_export_with_repeating_correlation_ids():
    ctx = run(db_bytes(ranks=((1001, 0, "healthy"), (1002, 1, "host_bound"))))
    by_pid = {s.pid: s for s in stats(ctx)}
    assert sorted(by_pid) == [1001, 1002]
    assert (by_pid[1001].host_bound_gap_pct, by_pid[1001].devices) == (0.0, 1)
    assert (by_pid[1002].host_bound_gap_pct, by_pid[1002].exposed_comm_pct) == (15.556, 13.333)
    [prof] = of_type(ctx, "nsys.profile")
    assert (prof.gpus, prof.processes, prof.kernels) == (2, 2, 108)


def test_repeating_top_level_range_when_no_step_name():
    [s] = stats(run(db_bytes(step_name="loop_body")))
    assert (s.iteration_range, s.iteration_source, s.iterations) == ("loop_body", "repeating", 5)
    assert s.gpu_idle_pct == 6.667


def test_numbered_step_names():
    conn = sqlite3.connect(":memory:")
    build(conn, step_name="ignored")
    conn.execute("UPDATE NVTX_EVENTS SET text = 'ProfilerStep#' || ((start - ?) / ?) WHERE text = 'ignored'", (T0, STEP))
    conn.commit()
    [s] = stats(run(conn.serialize()))
    assert (s.iteration_range, s.iteration_source, s.iterations) == ("ProfilerStep#0", "pattern", 5)


def test_no_nvtx_gives_profile_without_step_stats():
    ctx = run(db_bytes(nvtx=False))
    [prof] = of_type(ctx, "nsys.profile")
    assert (prof.has_nvtx, prof.nvtx_ranges, prof.iteration_range, prof.kernels) == (False, 0, "", 54)
    assert stats(ctx) == [] and len(of_type(ctx, "nsys.kernel_sum")) == 3


def test_no_runtime_table_cannot_classify_host_gaps():
    [s] = stats(run(db_bytes(ranks=((4242, 0, "host_bound"),), runtime=False)))
    assert (s.has_launch_data, s.host_bound_gap_pct, s.gpu_idle_pct) == (False, 0.0, 15.556)


def test_schema_dump_fixture():
    ctx = parse_fixture("nsys-sqlite-dump", "nsys-sqlite-schema.sql")
    assert ctx.warnings == []
    [prof] = of_type(ctx, "nsys.profile")
    assert (prof.duration_ms, prof.kernels, prof.nvtx_ranges, prof.gpus, prof.has_osrt) == (9000.0, 4, 4, 1, True)
    [s] = stats(ctx)
    # steps of 2010.0 and 2014.7 ms; the 28.95 ms gap between them: launch arrived late -> host-bound
    assert (s.pid, s.iterations, s.median_step_ms, s.max_step_ms, s.warmup_excluded) == (48211, 2, 2012.35, 2014.7, 0)
    assert (s.gpu_idle_pct, s.host_bound_gap_pct, s.comm_pct, s.exposed_comm_pct) == (0.642, 0.592, 88.918, 88.918)


def test_sqlite3_dump_of_an_export_gives_the_same_metrics():
    conn = sqlite3.connect(":memory:")
    build(conn, ranks=((4242, 0, "host_bound"),))
    text = "\n".join(conn.iterdump())
    assert text.startswith("BEGIN TRANSACTION;") and 'INSERT INTO "CUPTI_ACTIVITY_KIND_KERNEL"' in text
    doc = Document.from_text(text, name="rank0.sql", command="sqlite3 rank0.sqlite .dump")
    assert nsys_sqlite.sniff_dump(doc) >= 0.9
    ctx = ParseContext(doc=doc, parser="nsys-sqlite-dump")
    nsys_sqlite.parse_dump(doc, ctx)
    assert ctx.warnings == []
    [s] = stats(ctx)
    assert (s.gpu_idle_pct, s.host_bound_gap_pct, s.exposed_comm_pct, s.iterations) == (15.556, 15.556, 13.333, 5)
    [ref] = stats(run(conn.serialize()))
    assert s.model_dump(exclude={"source"}) == ref.model_dump(exclude={"source"})


def test_dump_with_several_statements_on_one_line():
    text = nsys_sqlite.SAMPLE.replace(";\nCREATE", "; CREATE")
    doc = Document.from_text(text)
    ctx = ParseContext(doc=doc, parser="nsys-sqlite-dump")
    nsys_sqlite.parse_dump(doc, ctx)
    [s] = stats(ctx)
    assert (s.iterations, s.comm_pct) == (2, 34.0)


def test_dump_skips_disallowed_statements(tmp_path):
    target = tmp_path / "x.db"
    text = (f"ATTACH DATABASE '{target}' AS x;\nCREATE TABLE x.t (a);\nPRAGMA writable_schema = ON;\n"
            + SCHEMA + "\nCREATE TRIGGER t AFTER INSERT ON StringIds BEGIN SELECT 1; END;\n"
            "INSERT INTO StringIds VALUES (99, 'x');\n")
    doc = Document.from_text(text, name="d.sql")
    ctx = ParseContext(doc=doc, parser="nsys-sqlite-dump")
    nsys_sqlite.parse_dump(doc, ctx)
    assert len(stats(ctx)) == 1
    assert not target.exists()


def test_dump_cut_mid_statement_warns():
    text = SCHEMA[: SCHEMA.index("INSERT INTO OSRT_API") + 30]
    doc = Document.from_text(text, name="d.sql")
    ctx = ParseContext(doc=doc, parser="nsys-sqlite-dump")
    nsys_sqlite.parse_dump(doc, ctx)
    assert any("ends inside a statement" in w for _, w in ctx.warnings)
    assert len(stats(ctx)) == 1


def test_not_nsys_sqlite_is_not_applicable():
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (a)")
    conn.commit()
    data = conn.serialize()
    assert nsys_sqlite.sniff(Document(name="x", lines=[], raw=data)) < 0.6
    with pytest.raises(NotApplicable):
        run(data)
    with pytest.raises(NotApplicable):
        run(b"\x7fELF\x00\x00")


def test_corrupt_file_is_a_parse_error():
    data = bytearray(HEALTHY)
    data[100:len(data)] = b"\xff" * (len(data) - 100)
    with pytest.raises((ParseError, NotApplicable)):
        run(bytes(data))
    with pytest.raises(ParseError):
        run(nsys_sqlite.MAGIC + b"\x10\x00" + b"\x00" * 200)


def test_truncated_export_is_partial_or_error():
    cut = HEALTHY[: len(HEALTHY) // 2]
    try:
        ctx = run(cut)
    except ParseError:
        return
    assert any("cut at" in w for _, w in ctx.warnings)


def test_ingest_cap_reads_the_file_from_its_path(tmp_path):
    path = db_file(tmp_path, "rank7.sqlite", ranks=((77, 0, "host_bound"),))
    res = ingest([path], limits=Limits(max_file_bytes=8192))
    [rec] = res.inputs
    assert rec.format == "nsys-sqlite" and rec.status == "partial"  # ingest notes the size cap
    [s] = [f for f in res.facts if f.fact_type == "nsys.step_stats"]
    assert (s.pid, s.host_bound_gap_pct) == (77, 15.556)


def test_ingest_picks_the_sqlite_format(tmp_path):
    path = db_file(tmp_path)
    [rec] = ingest([path]).inputs
    assert (rec.format, rec.status) == ("nsys-sqlite", "parsed")


def test_query_time_limit(monkeypatch):
    monkeypatch.setattr(nsys_sqlite, "QUERY_SECONDS", -1.0)
    monkeypatch.setattr(nsys_sqlite, "_PROGRESS_OPS", 1)
    with pytest.raises(ParseError, match="longer than"):
        run(HEALTHY)


def _doc_for(path: Path) -> Document:
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        return Document(name=path.name, lines=[], raw=data)
    return Document.from_text(data.decode("utf-8", "replace"), name=path.name)


def test_sniff_over_all_fixtures():
    for path in sorted(FORMATS.iterdir()):
        doc = _doc_for(path)
        assert nsys_sqlite.sniff(doc) == 0.0, path.name
        dump = nsys_sqlite.sniff_dump(doc)
        if path.name == "nsys-sqlite-schema.sql":
            assert dump >= 0.9
        else:
            assert dump < 0.3, (path.name, dump)
    assert nsys_sqlite.sniff(Document(name="r", lines=[], raw=HEALTHY)) >= 0.9


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=3000))
def test_random_bytes_never_raise_anything_else(data):
    for raw in (data, nsys_sqlite.MAGIC + data, HEALTHY[:100] + data):
        try:
            run(raw)
        except (ParseError, NotApplicable):
            pass


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=len(HEALTHY)), st.binary(min_size=1, max_size=64))
def test_truncated_or_damaged_real_file_never_raises_anything_else(cut, noise):
    damaged = HEALTHY[:cut] + noise + HEALTHY[cut + len(noise):]
    for raw in (HEALTHY[:cut], damaged):
        try:
            run(raw)
        except (ParseError, NotApplicable):
            pass


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=1500))
def test_dump_text_never_raises_anything_else(text):
    for body in (text, "CREATE TABLE NVTX_EVENTS (start, end, eventType, text);\n" + text):
        doc = Document.from_text(body, name="d.sql")
        try:
            nsys_sqlite.parse_dump(doc, ParseContext(doc=doc, parser="nsys-sqlite-dump"))
        except (ParseError, NotApplicable):
            pass


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=1500))
def test_dump_latin1_never_raises_anything_else(data):
    doc = Document.from_text("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start, end);\n" + data.decode("latin-1"))
    try:
        nsys_sqlite.parse_dump(doc, ParseContext(doc=doc, parser="nsys-sqlite-dump"))
    except (ParseError, NotApplicable):
        pass
