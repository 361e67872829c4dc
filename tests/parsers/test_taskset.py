import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.parsers import taskset

FIXTURES = Path(__file__).parents[1] / "fixtures"
NODE0 = list(range(0, 56)) + list(range(112, 168))


def run(text: str, command: str | None = None) -> ParseContext:
    doc = Document.from_text(text, name="<test>", command=command)
    ctx = ParseContext(doc=doc, parser="taskset")
    taskset.parse(doc, ctx)
    return ctx


def test_doctests():
    assert doctest.testmod(taskset).failed == 0


def test_process_affinity_transcript():
    ctx = run((FIXTURES / "formats/process-affinity.txt").read_text())
    assert ctx.warnings == []
    # 2214097 shown as mask and as list with the same CPUs: one fact, from the mask line
    assert [(f.pid, f.source.line, f.method, f.rank) for f in ctx.facts] == [
        (2214097, 2, "taskset", None), (2214095, 6, "taskset", None)]
    assert ctx.facts[0].cpus == NODE0
    assert ctx.facts[1].cpus == list(range(224))


def test_mask_and_list_agree():
    mask = run("pid 1's current affinity mask: ffffffffffffff00000000000000ffffffffffffff\n").facts[0]
    lst = run("pid 1's current affinity list: 0-55,112-167\n").facts[0]
    assert mask.cpus == lst.cpus == NODE0


def test_per_rank_with_srun_labels_and_rank_lines():
    text = (
        "0: SLURM_LOCALID=0\n1: SLURM_LOCALID=1\n"
        "0: pid 100's current affinity list: 0-55\n"
        "1: pid 101's current affinity list: 56-111\n"
    )
    ctx = run(text, command="srun -l bash -c 'echo SLURM_LOCALID=$SLURM_LOCALID; taskset -cp $$'")
    assert [(f.pid, f.rank, f.local_rank, f.cpus[0]) for f in ctx.facts] == [(100, 0, 0, 0), (101, 1, 1, 56)]
    text = "RANK=9 LOCAL_RANK=1\npid 7's current affinity list: 1\nrank 10 local_rank 2\npid 8's new affinity list: 2\n"
    assert [(f.rank, f.local_rank, f.cpus) for f in run(text).facts] == [(9, 1, [1]), (10, 2, [2])]


def test_threads_with_a_flag_and_prompts():
    text = ("[user@node ~]$ taskset -a -cp 55\r\n"
            "pid 55's current affinity list: 0-3\r\npid 56's current affinity list: 4\r\n")
    assert [(f.pid, f.cpus) for f in run(text).facts] == [(55, [0, 1, 2, 3]), (56, [4])]


def test_errors_and_bad_values_warn():
    text = ("taskset: failed to get pid 999's affinity: No such process\n"
            "pid 5's current affinity list: 7-2\n"
            "pid 6's current affinity mask: zz\n"
            "pid 7's current affinity list: 0-3\n"
            "pid 8's current affinity list: \n")
    ctx = run(text)
    assert [f.pid for f in ctx.facts] == [7]
    assert [line for line, _ in ctx.warnings] == [1, 2, 3, 5]


def test_nothing_relevant():
    with pytest.raises(NotApplicable):
        run("taskset: invalid PID argument: 'abc'\n")


def test_real_taskset_output():
    ctx = run((FIXTURES / "real/taskset-sandbox.txt").read_text())
    assert len(ctx.facts) == 1 and ctx.facts[0].cpus and ctx.facts[0].pid > 0


_MINE = {"process-affinity.txt"}


@pytest.mark.parametrize("path", sorted((FIXTURES / "formats").iterdir()), ids=lambda p: p.name)
def test_sniff(path):
    doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
    score = taskset.sniff(doc)
    if path.name in _MINE:
        assert score > 0.6
    else:
        assert score < 0.3


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=2000), st.binary(max_size=2000).map(lambda b: b.decode("latin-1"))))
def test_never_raises_anything_else(text):
    try:
        run(text)
        run(f"pid 1's current affinity mask: {text[:40]}\npid 2's current affinity list: {text[:40]}\n")
    except (ParseError, NotApplicable):
        pass


@pytest.mark.parametrize("command,expected", [
    ("taskset -p 1", True), ("taskset -cp 1", True), ("taskset -a -cp 1", True), ("taskset --pid 1", True),
    ("taskset -c 0-55 python train.py", False), ("taskset 0x3 ./bench", False),
])
def test_command_patterns(command, expected):
    assert taskset.FORMATS[0].matches_command(command) is expected
