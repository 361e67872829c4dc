"""The nccl-debug line loop's caches (facts/parsers/nccl_debug.py ``feed_lines``) change no fact.

Repeated connection lines are counted by one look-up of (prefix, text after the channel number) and
repeated lines whose handling changed nothing are skipped by their text. These tests feed logs
built to trip those shortcuts (look-alikes of a cached line, torn lines, a bare version line after
a cached line of another process, application output in between, CRLF, a line longer than the
stream's chunk, a cut last line) and check the facts equal those of the loop with its caches
emptied after every line, whatever the batches or chunks the log comes in.
"""

from __future__ import annotations

import pytest

from clusterdx.facts import ingest as ingest_mod
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.ingest import ingest
from clusterdx.facts.parsers import nccl_debug

A = "gpu-h100-017:481203:481321 [0] NCCL INFO "
B = "gpu-h100-018:77312:77460 [6] NCCL INFO "


def log_lines() -> list[str]:
    out = [A + "cudaDriverVersion 12060", "NCCL version 2.23.4+cuda12.6"]  # bare: A's
    for rep in range(3):
        out += [
            A + "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1/IB [RO]; OOB ens10f0np0:10.40.12.17<0>",
            A + "NVLS multicast support is available on dev 0",
            A + "Setting affinity for GPU 0 to ff,ffffffff",
            " [2025-07-14 02:11:47] iteration 10/ 500000 | consumed samples: 1024 |",
            A + "32 coll channels, 32 collnet channels, 16 nvls channels, 32 p2p channels, 32 p2p channels per peer",
            B + "cudaDriverVersion 12060",
        ]
        for c in range(4):
            out.append(A + f"Channel {c:02d}/0 : 8[0] -> 0[0] [receive] via NET/IB/{c % 2}/GDRDMA")
            out.append(B + f"Channel {c:02d}/0 : 14[6] -> 15[7] via P2P/CUMEM/read")
            out.append(A + f"Ring {c:02d} : 0[0] -> 7[7] via P2P/IPC")  # 2.4-2.6 form
        # a bare version line right after another process's cached connection line is that one's
        out.append(B + "Channel 07/0 : 14[6] -> 15[7] via P2P/CUMEM/read")
        out.append("NCCL version 2.23.4+cuda12.6")
        # look-alikes of cached lines: glued to another line; a different prefix; no " -> "
        out.append(A + "Channel 01/0 NCCL INFO x : 8[0] -> 0[0] [receive] via NET/IB/1/GDRDMA")
        out.append("gpu-h100-017:481203:481321 [1] NCCL INFO Channel 02/0 : 8[0] -> 0[0] [receive] via NET/IB/1/GDRDMA")
        out.append(A + "Channel 03/0 : 8[0] 0[0] [receive] via NET/IB/1/GDRDMA")
        out.append(A + "Channel 03/0 : 8[0] -> 0[0] [receive] via NET/IB/0/GDRDMA" + B + "Channel 00/0 : 1[1] -> 2[2] via P2P/IPC")
        out.append("Channel 05/0 : 3[3] -> 4[4] [send] via NET/IB/0")  # a grep'd excerpt without prefix
        out.append(A + "ncclCommInitRank comm 0x55f0a8e3c2a0 rank 0 nranks 16 cudaDev 0 busId 18000 commId 0x9d2e - Init COMPLETE")
        out.append(A + f"Init timings - ncclCommInitRank: rank 0 nranks 16 total {2.0 + rep} (kernels 0.19)")
        out.append(A + "")  # an empty message
    return out


def facts_of(lines: list[str], batch: int | None) -> tuple[list[dict], list]:
    doc = Document.from_text("\n".join(lines), name="x.log")
    ctx = ParseContext(doc=doc, parser="nccl-debug")
    n = len(doc.lines)
    step = batch or n
    nccl_debug.stream(((b, doc.lines[b:b + step]) for b in range(0, n, step)), ctx)
    return [dict(f.model_dump(mode="json"), fact_type=f.fact_type) for f in ctx.facts], list(ctx.warnings)


@pytest.fixture
def uncached(monkeypatch):
    """Facts of the loop whose caches are emptied on every insertion (each line parsed afresh)."""
    def run(lines):
        with monkeypatch.context() as mp:
            mp.setattr(nccl_debug, "_MAX_CACHE", 1)
            return facts_of(lines, 1)
    return run


def test_caches_change_no_fact_whatever_the_batches(uncached):
    lines = log_lines()
    want = uncached(lines)
    assert any(f["fact_type"] == "nccl.channel" for f in want[0])
    for batch in (None, 1, 2, 5, 17):
        assert facts_of(lines, batch) == want, batch


def test_the_shortcuts_are_taken_and_their_look_alikes_are_not():
    facts, warnings = facts_of(log_lines(), None)
    recv = {(f["nic"], f["gdr"]): (f["connections"], f["processes"]) for f in facts
            if f["fact_type"] == "nccl.channel" and f["node"] == "gpu-h100-017"}
    # NIC 0: two counted lines per repeat; the first half of the torn line (its GDRDMA cut) apart
    assert recv[("0", True)] == (6, 1) and recv[("0", False)] == (3, 1)
    # NIC 1: two per repeat, the other device's line with a cached line's text (a second process),
    # and the line with a second "NCCL INFO" inside (read whole, as without the caches)
    assert recv[("1", True)] == (12, 2)
    p2p = {f["transport"]: f["connections"] for f in facts if f["fact_type"] == "nccl.transport_summary"
           and f["node"] == "gpu-h100-018"}
    assert p2p["P2P/CUMEM"] == 15 and p2p["P2P/IPC"] == 3  # the torn line's second half
    # the line without " -> " is no connection, cached text or not
    assert sum(f["connections"] for f in facts if f["fact_type"] == "nccl.transport_summary") == 21 + 15 + 12 + 3 + 3
    versions = {f["node"]: f["source"]["line"] for f in facts if f["fact_type"] == "nccl.version"}
    assert versions == {"gpu-h100-017": 2, "gpu-h100-018": 22}
    assert [w for w in warnings if "glued" in str(w[1])] and len(warnings) == 3
    assert [f["count"] for f in facts if f["fact_type"] == "nccl.nvls"] == [1]


def test_streamed_in_tiny_chunks_with_crlf_a_long_line_and_a_cut_last_line(tmp_path, monkeypatch):
    lines = log_lines()
    lines.insert(30, "x" * 5000)  # application noise longer than the chunk
    text = "\r\n".join(lines) + "\r\n" + A + "Channel 00/0 : 8[0] -> 0[0] [rec"  # cut mid-line
    small = tmp_path / "crlf.log"
    small.write_bytes(text.encode())
    expected = ingest([small])
    assert not expected.inputs[0].reason.startswith("streamed")
    monkeypatch.setattr(ingest_mod, "STREAM_THRESHOLD", 1000)
    monkeypatch.setattr(ingest_mod, "STREAM_HEAD_BYTES", 1024)
    for chunk in (97, 1024, 4099):  # odd sizes split lines and \r\n pairs
        monkeypatch.setattr(ingest_mod, "STREAM_CHUNK_BYTES", chunk)
        got = ingest([small])
        rec = got.inputs[0]
        assert rec.reason.startswith("streamed"), rec.reason
        assert rec.line_end == len(lines) + 1
        assert [f.model_dump(mode="json") for f in got.facts] == [
            f.model_dump(mode="json") for f in expected.facts], chunk
