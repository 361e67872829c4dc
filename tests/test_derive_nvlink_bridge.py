"""Two NVLink-bridged PCIe cards' nccl-tests busbw, in links' worth (nvlink.bridge_bandwidth)."""

from __future__ import annotations

import pytest

from clusterdx.facts.derive import derive_all
from tests.parsers.helpers import parse_text


def _run(plateau: float, ranks: int = 2, model: str = "GeForce RTX 2080 Ti", max_bytes: int = 1 << 27) -> str:
    """An nccl-tests all_reduce_perf table as it prints it, reaching ``plateau`` GB/s at its largest sizes."""
    lines = [f"# nThread 1 nGpus {ranks} minBytes 1048576 maxBytes {max_bytes} step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0",
             "#", "# Using devices"]
    lines += [f"#  Rank  {r} Group  0 Pid   3795 on w-system device  {r} [0x{r + 1:02x}] {model}" for r in range(ranks)]
    lines += ["#",
              "#                                                              out-of-place                       in-place          ",
              "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
              "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       "]
    size = 1 << 20
    factor = 2 * (ranks - 1) / ranks
    while size <= max_bytes:
        t = 12.0 + size / (plateau / factor * 1e3)
        alg = size / t / 1e3
        lines.append(f"{size:>12}  {size // 4:>12}     float     sum      -1  {t:>7.1f}  {alg:>6.2f}  {alg * factor:>6.2f}      0"
                     f"  {t:>7.1f}  {alg:>6.2f}  {alg * factor:>6.2f}      0")
        size *= 2
    lines += ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 10.0", "#"]
    return "\n".join(lines) + "\n"


BRIDGED = "GPU: 2 2080ti on 2 PCIE 3.0 *8,  with a NVlink bridge between them\r\n"


def _bridge(notes: str, table: str):
    facts = parse_text("prose", notes).facts + parse_text("nccl-tests", table).facts
    return [f for f in derive_all(facts) if f.fact_type == "nvlink.bridge_bandwidth"]


def test_one_links_worth_on_a_two_link_bridge():
    [b] = _bridge(BRIDGED, _run(21.5))
    assert (b.model, b.links_by_design, b.link_gbs, b.bridge_seen) == ("RTX 2080 Ti", 2, 25.0, "reported")
    assert b.links_worth == pytest.approx(21.5 / 25, abs=0.02)


def test_both_links_carrying_is_read_as_such():
    [b] = _bridge("Two Quadro RTX 8000 bridged with NVLink.\n", _run(40.0, model="Quadro RTX 8000"))
    assert b.links_worth == pytest.approx(1.6, abs=0.02)


@pytest.mark.parametrize("notes,table", [
    # no bridge said: two cards on PCIe have no links to count
    ("GPU: 2 2080ti on 2 PCIE 3.0 x8, no NVLink bridge.\n", _run(6.0)),
    ("GPU: 2 2080ti on 2 PCIE 3.0 x8.\n", _run(21.5)),
    # four cards: the ring also crosses PCIe between the bridged pairs
    (BRIDGED, _run(21.5, ranks=4)),
    # a run that stops at 4 MB never reaches the plateau a link's rate is held against
    (BRIDGED, _run(21.5, max_bytes=1 << 22)),
    # a card whose link rate the table does not give
    ("Two RTX 3090 with an NVLink bridge.\n", _run(21.5, model="NVIDIA GeForce RTX 3090")),
])
def test_no_links_worth_without_a_bridged_pair_at_its_plateau(notes, table):
    assert _bridge(notes, table) == []


@pytest.mark.parametrize("text,bridged", [
    ("GPU: 2 2080ti on 2 PCIE 3.0 *8,  with a NVlink bridge between them", True),
    ("Two Quadro RTX 8000, connected with an NVLink bridge (the 2-slot one)", True),
    ("Two Quadro RTX 8000 bridged with NVLink.", True),
    ("Two RTX 2080 Ti without an NVLink bridge.", False),
    ("Two RTX 2080 Ti; is an NVLink bridge worth buying?", False),  # a question fits no bridge
    ("Two RTX 4090 with an NVLink bridge.", False),  # the 4090 has no NVLink: nothing to bridge
])
def test_bridge_as_tickets_say_it(text, bridged):
    inv = [f for f in parse_text("prose", text + "\n").facts if f.fact_type == "reported.inventory" and f.item == "gpu"]
    assert inv and (inv[0].interconnect == "NVLink") is bridged, inv
