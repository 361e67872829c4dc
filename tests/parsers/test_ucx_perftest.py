"""ucx_perftest command lines and results, and where the two halves of a loopback pair run."""

import doctest

from clusterdx.facts.derive import bench_pairs
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.ingest import ingest
from clusterdx.facts.parsers import ucx_perftest


def _runs(text: str, command: str | None = None):
    doc = Document.from_text(text, command=command)
    ctx = ParseContext(doc, "ucx-perftest")
    ucx_perftest.parse(doc, ctx)
    return ctx.facts


def test_doctests():
    assert doctest.testmod(ucx_perftest).failed == 0


def test_server_in_background_and_client_by_hostname():
    runs = _runs("ucx_perftest -t tag_bw -c 2 &\nucx_perftest $(hostname) -t tag_bw -c 2\n")
    assert [(r.role, r.server, r.cpu, r.loopback) for r in runs] == [
        ("server", "", 2, False), ("client", "$(hostname)", 2, True)]


def test_remote_server_is_not_loopback():
    (r,) = _runs("ucx_perftest gpu-node-02 -t tag_bw -m cuda -s 1048576 -c 0\n")
    assert (r.role, r.loopback, r.mem_type, r.size_bytes) == ("client", False, "cuda", 1048576)


def test_pairs_across_inputs(tmp_path):
    t = tmp_path / "t.txt"
    t.write_text("$ ucx_perftest -t tag_bw -c 2 &\n$ ucx_perftest localhost -t tag_bw -c 2\n")
    pairs = bench_pairs.derive(ingest([str(t)]).facts)
    assert [(p.client_cpu, p.server_cpu, p.server_shown, p.shared_core) for p in pairs] == [(2, 2, True, True)]
    t.write_text("$ ucx_perftest -t tag_bw -c 2 &\n$ ucx_perftest localhost -t tag_bw -c 3\n")
    pairs = bench_pairs.derive(ingest([str(t)]).facts)
    assert [(p.client_cpu, p.server_cpu, p.shared_core) for p in pairs] == [(3, 2, False)]


def test_unpinned_or_remote_clients_give_no_pair(tmp_path):
    t = tmp_path / "t.txt"
    t.write_text("$ ucx_perftest localhost -t tag_bw\n$ ucx_perftest node2 -t tag_bw -c 0\n")
    assert bench_pairs.derive(ingest([str(t)]).facts) == []


def test_results_rows_split_on_blanks_and_a_huge_blank_line_is_no_row():
    # found by the fuzz bench: the row regex's two optional blank runs split a 200 KB line of
    # blanks every way (minutes); the row is now read from its words
    assert ucx_perftest._row("Final:        1000     0.000     2.345     2.345     3.210   3.210   426437   426437") == \
        [0.0, 2.345, 2.345, 3.21, 3.21, 426437.0, 426437.0]
    assert ucx_perftest._row("[thread 0]   1000  0.1 0.2 0.3 0.4 0.5 6 7") == [0.1, 0.2, 0.3, 0.4, 0.5, 6.0, 7.0]
    assert ucx_perftest._row(" " * 200_000 + "1") is None
    assert ucx_perftest._row("1000 0.1 0.2 0.3 0.4 0.5 6") is None          # six figures
    assert ucx_perftest._row("1000 0.1 0.2 0.3 0.4 0.5 6 x") is None        # not a number
