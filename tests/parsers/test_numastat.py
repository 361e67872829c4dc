import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.parsers import numastat

FIXTURES = Path(__file__).parents[1] / "fixtures"


def run(text: str, command: str | None = None) -> ParseContext:
    doc = Document.from_text(text, name="<test>", command=command)
    ctx = ParseContext(doc=doc, parser="numastat-p")
    numastat.parse(doc, ctx)
    return ctx


def test_doctests():
    assert doctest.testmod(numastat).failed == 0


def test_single_and_multi_pid_tables_in_transcript():
    ctx = run((FIXTURES / "formats/process-affinity.txt").read_text())
    assert ctx.warnings == []
    got = [(f.pid, f.name, f.node_mb, f.total_mb, f.dominant_node, round(f.dominant_share, 4), f.source.line)
           for f in ctx.facts]
    assert got == [
        (2214097, "python3", [61661.21, 3112.52], 64773.73, 0, 0.9519, 17),
        (2214094, "python3", [58011.62, 2904.18], 60915.8, 0, 0.9523, 23),
        # the rank whose memory sits on the other node
        (2214095, "python3", [3120.44, 57930.05], 61050.49, 1, 0.9489, 24),
        (2214096, "python3", [60877.91, 3210.77], 64088.68, 0, 0.9499, 25),
        (2214097, "python3", [61661.21, 3112.52], 64773.73, 0, 0.9519, 26),
    ]


def test_wrapped_wide_table_compressed_and_gap_nodes():
    text = (
        "\nPer-node process memory usage (in MBs)\n"
        "PID              Node 0 Node 1\n"
        "---------------- ------ ------\n"
        "11 (python3)       100     10\n"
        "12 (pt_main thread)  5    200\n"
        "\n"
        "PID              Node 3 Total\n"
        "---------------- ------ -----\n"
        "11 (python3)        90   200\n"
        "12 (pt_main thread)  0   205\n"
        "---------------- ------ -----\n"
        "Total              295   405\n"
    )
    ctx = run(text, command="numastat -c -p python")
    assert [(f.pid, f.name, f.node_mb, f.dominant_node) for f in ctx.facts] == [
        (11, "python3", [100.0, 10.0, 0.0, 90.0], 0),
        (12, "pt_main thread", [5.0, 200.0, 0.0, 0.0], 1),
    ]
    assert ctx.warnings == []


def test_truncated_single_table_sums_rows():
    text = (
        "Per-node process memory usage (in MBs) for PID 7 (python3)\n"
        "                           Node 0          Node 1           Total\n"
        "                  --------------- --------------- ---------------\n"
        "Heap                       100.00          300.00          400.00\n"
        "Private                    100.00          500.00          600.00\n"
        "Stack                        0.1\n"
    )
    ctx = run(text)
    [f] = ctx.facts
    assert (f.node_mb, f.total_mb, f.dominant_node, f.dominant_share) == ([200.0, 800.0], 1000.0, 1, 0.8)
    assert [line for line, _ in ctx.warnings] == [6, 5]


def test_zero_memory_process():
    text = ("Per-node process memory usage (in MBs) for PID 9 (sleep)\n"
            "                           Node 0           Total\n"
            "Total                        0.00            0.00\n")
    [f] = run(text).facts
    assert (f.total_mb, f.dominant_node, f.dominant_share) == (0.0, 0, 0.0)


def test_not_numastat():
    with pytest.raises(NotApplicable):
        run("                     node0           node1\nnuma_hit         1234            5678\n")


def test_real_numastat_of_this_machine():
    ctx = run((FIXTURES / "real/numastat-p-sandbox.txt").read_text())
    [f] = ctx.facts
    assert f.name == "bash" and len(f.node_mb) == 1 and f.dominant_share == 1.0 and ctx.warnings == []


_MINE = {"process-affinity.txt"}


@pytest.mark.parametrize("path", sorted((FIXTURES / "formats").iterdir()), ids=lambda p: p.name)
def test_sniff(path):
    doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
    score = numastat.sniff(doc)
    if path.name in _MINE:
        assert score > 0.8
    else:
        assert score < 0.3


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=2000), st.binary(max_size=2000).map(lambda b: b.decode("latin-1"))))
def test_never_raises_anything_else(text):
    try:
        run(text)
        run("Per-node process memory usage (in MBs)\nPID Node 0 Node 1 Total\n" + text)
        run("Per-node process memory usage (in MBs) for PID 1 (x)\n Node 0 Total\n" + text)
    except (ParseError, NotApplicable):
        pass


@pytest.mark.parametrize("command,expected", [
    ("numastat -p 2214097", True), ("numastat -c -p python3", True), ("numastat -cp python3", True),
    ("numastat", False), ("numastat -m", False), ("numactl --hardware", False),
])
def test_command_patterns(command, expected):
    assert numastat.FORMATS[0].matches_command(command) is expected


def test_absurd_node_number_is_skipped_not_a_crash():
    # found by tests/bench/fuzz_parsers.py: a header "Node 18446744073709551616" raised
    # OverflowError (and a merely large one would allocate a list that long)
    text = ("Per-node process memory usage (in MBs)\n"
            "PID   Node 0          Node 18446744073709551616           Total\n"
            "2214094        580   2904.18        6\n")
    doc = Document.from_text(text)
    ctx = ParseContext(doc, "numastat-p")
    numastat.FORMATS[0].parse(doc, ctx)
    assert ctx.facts == []
    assert any("out of range" in m for _, m in ctx.warnings)
