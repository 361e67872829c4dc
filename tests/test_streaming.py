"""Big inputs are streamed: a multi-MiB NCCL debug log parses chunk by chunk with the same facts.

The benchmark (``tests/bench/bench_biglog.py``) measures memory and speed on 1 GiB; these tests
pin behaviour: the streamed path and the ordinary in-memory path give identical facts, chunk
boundaries (CRLF split over two chunks, long lines) change nothing, and files that cannot be
streamed still take the ordinary, capped path.
"""

from __future__ import annotations

import pytest

from clusterdx.facts import bounds
from clusterdx.facts import ingest as ingest_mod
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.ingest import ingest
from clusterdx.facts.parsers import nccl_debug
from tests.bench.bench_biglog import write_nccl_log

MiB = 1 << 20


def dump(facts):
    return [f.model_dump(mode="json") for f in facts]


@pytest.fixture(scope="module")
def biglog(tmp_path_factory):
    path = tmp_path_factory.mktemp("big") / "nccl-debug.log"
    size, lines = write_nccl_log(path, 20 * MiB, ranks=256, hosts=32, seed=3)
    assert size >= 20 * MiB
    return path, lines


@pytest.mark.slow  # parses a large generated log twice (about 25 s)
def test_big_log_is_streamed_with_the_same_facts_as_in_memory(biglog, monkeypatch):
    path, lines = biglog
    streamed = ingest([path])
    rec = streamed.inputs[0]
    assert (rec.format, rec.line_end) == ("nccl-debug", lines)
    assert rec.reason.startswith("streamed")
    assert rec.status == "parsed", rec.reason
    types = {f.fact_type for f in streamed.facts}
    assert {"nccl.transport_summary", "nccl.version", "nccl.warn", "nccl.init_complete"} <= types

    monkeypatch.setattr(ingest_mod, "STREAM_THRESHOLD", 1 << 40)
    monkeypatch.setattr(ingest_mod.Limits, "max_file_bytes", 64 * MiB)
    # the in-memory path reads at most bounds.MAX_LINES lines (tests/test_bounds.py); lifted here to
    # compare the two paths on the whole log
    monkeypatch.setattr(bounds, "MAX_LINES", 1 << 30)
    whole = ingest([path])
    assert whole.inputs[0].reason == "" and whole.inputs[0].status == "parsed"
    assert dump(streamed.facts) == dump(whole.facts)


@pytest.mark.slow  # builds and parses the large generated log in memory (about 5 s)
def test_in_memory_parse_of_the_same_text_matches(biglog):
    path, _ = biglog
    text = path.read_text()
    doc = Document.from_text(text, name=str(path))
    ctx = ParseContext(doc=doc, parser="nccl-debug")
    nccl_debug.parse(doc, ctx)
    streamed = ingest([path])
    assert dump(ctx.facts) == dump(streamed.facts)


def test_small_chunks_crlf_and_long_lines(tmp_path, monkeypatch):
    small = tmp_path / "small.log"
    write_nccl_log(small, 300_000, ranks=16, hosts=2, seed=5)
    text = small.read_text()
    lines = text.splitlines()
    lines.insert(40, "x" * 50_000)  # application noise: one very long line
    crlf = tmp_path / "crlf.log"
    crlf.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    lf = tmp_path / "lf.log"
    lf.write_text("\n".join(lines) + "\n")

    expected = ingest([lf])
    assert expected.inputs[0].reason == ""  # ordinary path: under the threshold
    monkeypatch.setattr(ingest_mod, "STREAM_THRESHOLD", 1000)
    monkeypatch.setattr(ingest_mod, "STREAM_HEAD_BYTES", 4096)
    for chunk in (4093, 4096, 65536):  # odd sizes split \r\n pairs and lines
        monkeypatch.setattr(ingest_mod, "STREAM_CHUNK_BYTES", chunk)
        for path in (lf, crlf):
            got = ingest([path])
            rec = got.inputs[0]
            assert rec.reason.startswith("streamed"), (chunk, path.name, rec.reason)
            assert rec.line_end == len(lines)
            norm = [dict(d, source=dict(d["source"], input="x")) for d in dump(got.facts)]
            want = [dict(d, source=dict(d["source"], input="x")) for d in dump(expected.facts)]
            assert norm == want, (chunk, path.name)


def test_invalid_utf8_midway_is_decoded_as_latin1_with_a_warning(tmp_path, monkeypatch):
    path = tmp_path / "mixed.log"
    write_nccl_log(path, 200_000, ranks=16, hosts=2, seed=1)
    with open(path, "ab") as fh:
        fh.write(b"gpu-h100-001:400000:400118 [0] NCCL INFO NCCL_DEBUG_FILE set by environment to /tmp/\xe9t\xe9\n")
    monkeypatch.setattr(ingest_mod, "STREAM_THRESHOLD", 1000)
    monkeypatch.setattr(ingest_mod, "STREAM_CHUNK_BYTES", 65536)
    res = ingest([path])
    rec = res.inputs[0]
    assert rec.reason.startswith("streamed")
    assert any("latin-1" in w.message for w in rec.warnings)
    env = [f for f in res.facts if f.fact_type == "nccl.env" and f.name == "NCCL_DEBUG_FILE"]
    assert env and env[0].value == "/tmp/\xe9t\xe9"


def test_big_files_that_cannot_stream_take_the_capped_path(tmp_path, monkeypatch):
    monkeypatch.setattr(ingest_mod, "STREAM_THRESHOLD", 1000)
    sysctl = tmp_path / "sysctl.txt"
    sysctl.write_text("".join(f"net.ipv4.conf.eth{i}.rp_filter = 1\n" for i in range(2000)))
    rec = ingest([sysctl]).inputs[0]
    assert rec.format == "sysctl" and not rec.reason.startswith("streamed")

    transcript = tmp_path / "session.txt"
    body = "".join(f"gpu-1:1:1 [0] NCCL INFO NCCL_IB_HCA set by environment to mlx5_{i}\n"
                   for i in range(200))
    transcript.write_text("$ NCCL_DEBUG=INFO ./train\n" + body + "$ sysctl vm.swappiness\nvm.swappiness = 60\n")
    res = ingest([transcript])
    assert [r.format for r in res.inputs] == ["nccl-debug", "sysctl"]
    assert not any(r.reason.startswith("streamed") for r in res.inputs)

    binary = tmp_path / "blob.bin"
    binary.write_bytes(b"\x00\x01" * 5000)
    assert ingest([binary]).inputs[0].status in ("unrecognized", "skipped")


def test_a_file_without_a_final_line_end_and_one_chunk(tmp_path, monkeypatch):
    monkeypatch.setattr(ingest_mod, "STREAM_THRESHOLD", 1000)
    path = tmp_path / "short.log"
    path.write_text("gpu-1:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n" * 49
                    + "gpu-1:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4")
    rec = ingest([path]).inputs[0]
    assert rec.reason.startswith("streamed") and rec.line_end == 50
    res = ingest([path])
    assert [f.fact_type for f in res.facts] == ["nccl.version"]
