import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.parsers import proc_status

FIXTURES = Path(__file__).parents[1] / "fixtures"


def run(text: str, command: str | None = None) -> ParseContext:
    doc = Document.from_text(text, name="<test>", command=command)
    ctx = ParseContext(doc=doc, parser="proc-status")
    proc_status.parse(doc, ctx)
    return ctx


def fixture(name: str, command: str | None = None) -> ParseContext:
    return run((FIXTURES / name).read_text(), command=command)


def of(ctx, fact_type):
    return [f for f in ctx.facts if f.fact_type == fact_type]


NODE0 = list(range(0, 56)) + list(range(112, 168))


def test_doctests():
    assert doctest.testmod(proc_status).failed == 0


def test_full_status_fixture():
    ctx = fixture("formats/proc-pid-status.txt")
    assert ctx.warnings == []
    [st_], [aff] = of(ctx, "proc.status"), of(ctx, "proc.affinity")
    assert (st_.pid, st_.name, st_.state, st_.threads) == (2214097, "python3", "S", 187)
    assert st_.cpus == NODE0 and st_.mems == [0, 1]
    assert (st_.vm_rss_kb, st_.vm_lck_kb, st_.vm_pin_kb, st_.hugetlb_kb) == (66328156, 0, 4202496, 0)
    assert (st_.source.line, st_.source.end_line) == (1, 59)
    assert (aff.pid, aff.cpus, aff.method, aff.source.line, aff.rank) == (2214097, NODE0, "status", 55, None)


def test_grepped_subset_inside_transcript():
    ctx = fixture("formats/process-affinity.txt")
    [st_] = of(ctx, "proc.status")
    assert st_.pid == 2214097 and st_.threads == 187 and st_.vm_pin_kb == 4202496
    assert st_.state == "" and st_.cpus == NODE0 and st_.source.line == 30
    [aff] = of(ctx, "proc.affinity")
    assert aff.source.line == 38


def test_per_rank_listing_with_srun_labels_and_mask_only():
    text = (
        "0: Cpus_allowed_list:\t0-55,112-167\n"
        "1: Cpus_allowed_list:\t0-223\n"
        "srun: warning: can't honor --ntasks-per-node\n"
        "2: Cpus_allowed:\tff\n"
    )
    ctx = run(text, command="srun -l grep Cpus_allowed /proc/self/status")
    affs = of(ctx, "proc.affinity")
    assert [(a.rank, len(a.cpus)) for a in affs] == [(0, 112), (1, 224), (2, 8)]
    assert all(a.pid is None for a in affs)


def test_proc_glob_prefix_and_pid_from_command():
    text = "/proc/11/status:Cpus_allowed_list:\t0-3\n/proc/12/status:Cpus_allowed_list:\t4-7\n"
    ctx = run(text, command="grep Cpus_allowed_list /proc/*/status")
    assert [(a.pid, a.cpus) for a in of(ctx, "proc.affinity")] == [(11, [0, 1, 2, 3]), (12, [4, 5, 6, 7])]
    ctx = run("Cpus_allowed_list:   0-1\n", command="grep Cpus /proc/4242/status")
    assert of(ctx, "proc.status")[0].pid == 4242


def test_repeated_keys_start_new_record_and_bad_values_warn():
    text = "Name:\ta\nPid:\t1\nVmRSS:\tlots\nName:\tb\nPid:\t2\nCpus_allowed_list:\t9-3\n"
    ctx = run(text)
    assert [(s.pid, s.name, s.vm_rss_kb) for s in of(ctx, "proc.status")] == [(1, "a", None), (2, "b", None)]
    assert [line for line, _ in ctx.warnings] == [3, 6]
    assert of(ctx, "proc.affinity") == []


def test_truncated_status_still_parses():
    text = (FIXTURES / "formats/proc-pid-status.txt").read_text().splitlines()[:22]
    ctx = run("\n".join(text) + "\nVmRSS:\t6632")
    [st_] = of(ctx, "proc.status")
    assert st_.pid == 2214097 and st_.vm_rss_kb is None and st_.cpus == []
    assert ctx.warnings and ctx.warnings[0][0] == 23


def test_not_status():
    with pytest.raises(NotApplicable):
        run("Foo: bar\nhello\n")


def test_real_status_of_this_machine():
    ctx = fixture("real/proc-status-self.txt")
    [st_] = of(ctx, "proc.status")
    assert st_.name == "cat" and st_.pid > 0 and st_.threads == 1 and st_.cpus and st_.mems == [0]
    assert ctx.warnings == []


_MINE = {"proc-pid-status.txt", "process-affinity.txt"}


@pytest.mark.parametrize("path", sorted((FIXTURES / "formats").iterdir()), ids=lambda p: p.name)
def test_sniff(path):
    doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
    score = proc_status.sniff(doc)
    if path.name in _MINE:
        assert score > 0.6
    else:
        assert score < 0.3


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=2000), st.binary(max_size=2000).map(lambda b: b.decode("latin-1"))))
def test_never_raises_anything_else(text):
    try:
        run(text)
    except (ParseError, NotApplicable):
        pass


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["Cpus_allowed_list", "Cpus_allowed", "Mems_allowed_list", "VmRSS", "Pid", "Threads"]),
                max_size=6), st.text(max_size=30))
def test_known_keys_with_any_value(keys, value):
    try:
        run("".join(f"{k}:\t{value}\n" for k in keys))
    except (ParseError, NotApplicable):
        pass


@pytest.mark.parametrize("command,expected", [
    ("cat /proc/2214097/status", True), ("grep -E '^(Name|Cpus)' /proc/self/status", True),
    ("grep Cpus_allowed_list /proc/*/status", True), ("cat /proc/1/task/7/status", True),
    ("cat /proc/cpuinfo", False), ("systemctl status", False),
])
def test_command_patterns(command, expected):
    assert proc_status.FORMATS[0].matches_command(command) is expected


def test_non_ascii_digits_are_not_numbers():
    # found by tests/bench/fuzz_parsers.py: "Pid:\t²" passed str.isdigit() and int() raised
    ctx = run("Name:\tpython3\nPid:\t\u00b2\nCpus_allowed_list:\t0-3\n")
    assert any("expected a number" in m for _, m in ctx.warnings)
