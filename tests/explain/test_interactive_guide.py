"""The interactive loop guides: help, a cause's evidence and fix on demand, the format a paste was
read as, undo of the last step, and a closing summary with the fix and its verification."""

from __future__ import annotations

import io
import shutil

import pytest

from clusterdx.interactive import Loop, Session

from .conftest import CASES


@pytest.fixture
def numa_case(tmp_path):
    """The NUMA-balancing case without its decisive file (the sysctl output)."""
    src = CASES / "cp-numa-balancing-grace-perf" / "input"
    dst = tmp_path / "case"
    dst.mkdir()
    for name in ("lscpu.txt", "perf-report.txt"):
        shutil.copy(src / name, dst / name)
    return dst


def run(kb, tmp_path, paths, typed: str) -> tuple[int, str]:
    out = io.StringIO()
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    loop = Loop(Session(paths=[str(p) for p in paths]), kb, None, io.StringIO(typed), out, work)
    return loop.run(), out.getvalue()


def test_help_evidence_fix_and_a_recognised_paste_end_on_the_fix(kb, tmp_path, numa_case):
    typed = "?\ne 1\nx numa-balancing-enabled\nx 99\np\nkernel.numa_balancing = 1\n.\n"
    rc, out = run(kb, tmp_path, [numa_case], typed)
    assert rc == 0
    assert "e N    show the evidence" in out and "u      undo" in out
    # e 1: the leading cause's evidence lines, as the report has them
    assert "  + [" in out
    # x: the fix's commands, root marked, its rollback and what to expect after it
    assert "$ sysctl -w kernel.numa_balancing=0 (as root)" in out and "rollback:" in out and "expect: 0" in out
    assert "no cause '99'" in out
    assert "recognised as sysctl (parsed" in out
    tail = out[out.index("Summary"):]
    assert tail.startswith("Summary (1 pasted output(s)") and "  Confirmed: " in tail and "$ sysctl -w kernel.numa_balancing=0" in tail
    assert "verify:" in tail and "bye" not in out


def test_an_unrecognised_paste_is_named_and_undone(kb, tmp_path, numa_case):
    typed = "p\nhello there, nothing to parse\n.\nu\nu\nq\n"
    rc, out = run(kb, tmp_path, [numa_case], typed)
    assert rc == 0
    assert "not recognised as any known format" in out
    assert "undid the last paste" in out and "nothing to undo" in out
    summary = out[out.rindex("Summary"):]
    assert summary.startswith("Summary (0 pasted output(s)") and "bye" not in out
    # not confirmed: the summary says so and names the probe that would confirm it
    assert "not yet confirmed" in summary or "unconfirmed" in summary
    assert "to confirm it, run: $ " in summary


def test_undo_takes_back_an_answer(kb, tmp_path):
    # an answer here confirms at once and ends the session, so undo is driven on the loop itself
    loop = Loop(Session(paths=[str(CASES / "td-env-docker-missing" / "input")]), kb, None,
                io.StringIO(""), io.StringIO(), tmp_path)
    loop.s.answers.append({"question": "gap-only-in-containers", "answer": "yes, only in containers"})
    loop.history.append(("answer", None))
    loop.undo()
    assert loop.s.answers == [] and loop.history == []
    _rc, out = run(kb, tmp_path, [CASES / "td-env-docker-missing" / "input"], "a\n1\n")
    assert "  Confirmed: " in out and "Summary (0 pasted output(s), 0 file(s), 1 answer(s)" in out
