"""Per-rank timing printouts: the slow group of local ranks, and what is not such a printout."""

import doctest

import pytest

from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.parsers import rank_times


def _parse(text: str):
    doc = Document.from_text(text)
    ctx = ParseContext(doc, "rank-times")
    rank_times.parse(doc, ctx)
    return ctx.facts[0]


def test_doctests():
    assert doctest.testmod(rank_times).failed == 0


def test_one_node_ms_and_bracket_labels():
    text = "".join(f"[rank{r}] step took {300 if r in (2, 3) else 200}.0 ms\n" for r in range(8))
    t = _parse(text)
    assert (t.nodes, t.ranks_per_node, t.slow_local_ranks, t.slow_count, t.consistent) == (1, 8, [2, 3], 2, True)
    assert t.slow_ratio == 1.5


def test_different_slow_ranks_per_node_are_not_consistent():
    text = "".join(f"node {n} rank {r}: {0.3 if r == (1 if n == 'a' else 5) else 0.2} sec\n"
                   for n in ("a", "b") for r in range(4))
    t = _parse(text)
    assert t.nodes == 2 and not t.consistent


def test_not_a_rank_printout():
    with pytest.raises(NotApplicable):
        _parse("rank 0 took 1.0 s\nrank 1 took 1.0 s\n")  # too few lines
    # NCCL log lines carry ranks and numbers but are the NCCL parser's
    log = "".join(f"h:1:1 [{r}] NCCL INFO rank {r} init took 0.5 s\n" for r in range(6))
    assert rank_times.sniff(Document.from_text(log)) == 0.0
    prose = "Rank 0 is slow.\nWe tried everything.\nThe job takes 3 s per step.\nNothing helps at all.\n"
    assert rank_times.sniff(Document.from_text(prose)) == 0.0


def test_sniff_reads_rows_that_come_after_other_lines():
    # the sniff stops early only when the rows can no longer outnumber the other lines four to one
    rows = [f"node_id {n} local_rank {r} 5313036288 bytes: 0.{4 if r < 2 else 2}3 sec" for n in range(3) for r in range(4)]
    text = "\n".join(["starting benchmark", "world size 12", *rows]) + "\n"
    assert rank_times.sniff(Document.from_text(text)) == 0.7
    noisy = "\n".join([f"step {i} loss 0.{i}" for i in range(5)] + rows[:8]) + "\n"
    assert rank_times.sniff(Document.from_text(noisy)) == 0.0  # 8 rows against 5 other lines
