import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.ingest import ingest
from clusterdx.facts.parsers import shell_echo
from clusterdx.facts.sniff import best_format
from tests.parsers.helpers import of_type, parse_text

FMT = "shell-echo"


def test_doctests():
    assert doctest.testmod(shell_echo).failed == 0


def test_bare_echo_value_and_empty():
    ctx = parse_text(FMT, "mlx5_0,mlx5_3,mlx5_4\n", command="echo $NCCL_IB_HCA")
    [v] = of_type(ctx, "env.var")
    assert (v.name, v.value, v.source.line) == ("NCCL_IB_HCA", "mlx5_0,mlx5_3,mlx5_4", 1)
    [d] = of_type(ctx, "env.dump")
    assert d.complete is False and d.not_set == [] and d.names == ["NCCL_IB_HCA"]
    # an empty output line: not set (or empty), recorded as such and not as a variable
    for out in ("\n", ""):
        ctx = parse_text(FMT, out, command="echo ${NCCL_IB_HCA}")
        assert of_type(ctx, "env.var") == [] and ctx.facts[0].not_set == ["NCCL_IB_HCA"]


def test_name_equals_form_and_default_form():
    ctx = parse_text(FMT, "NCCL_IB_HCA=\n", command='echo "NCCL_IB_HCA=$NCCL_IB_HCA"')
    assert of_type(ctx, "env.var") == [] and ctx.facts[0].not_set == ["NCCL_IB_HCA"]
    ctx = parse_text(FMT, "unset\n", command="echo ${NCCL_IB_HCA:-unset}")
    assert ctx.facts[0].not_set == ["NCCL_IB_HCA"]
    ctx = parse_text(FMT, "mlx5_0\n", command="echo ${NCCL_IB_HCA:-unset}")
    assert of_type(ctx, "env.var")[0].value == "mlx5_0"
    ctx = parse_text(FMT, "HCA=mlx5_0 IF=ib0\n", command="echo HCA=$NCCL_IB_HCA IF=$NCCL_SOCKET_IFNAME")
    assert {v.name: v.value for v in of_type(ctx, "env.var")} == {"NCCL_IB_HCA": "mlx5_0", "NCCL_SOCKET_IFNAME": "ib0"}


def test_several_echoes_one_line_each():
    cmd = "echo $NCCL_DEBUG; echo $NCCL_IB_HCA && echo $NCCL_NET_GDR_LEVEL"
    ctx = parse_text(FMT, "INFO\n\nPHB\n", command=cmd)
    assert [(v.name, v.value, v.source.line) for v in of_type(ctx, "env.var")] == [
        ("NCCL_DEBUG", "INFO", 1), ("NCCL_NET_GDR_LEVEL", "PHB", 3)]
    assert of_type(ctx, "env.dump")[0].not_set == ["NCCL_IB_HCA"]
    with pytest.raises(NotApplicable):  # more lines than echoes: not what the command printed
        parse_text(FMT, "a\nb\nc\n", command="echo $A; echo $B")


def test_secret_values_are_redacted():
    ctx = parse_text(FMT, "hf_abcdef0123456789\n", command="echo $HF_TOKEN")
    [v] = of_type(ctx, "env.var")
    assert v.redacted and "abcdef" not in v.value


def test_printenv_and_env_grep_that_print_nothing():
    ctx = parse_text(FMT, "", command="printenv NCCL_IB_HCA NCCL_DEBUG")
    assert ctx.facts[0].not_set == ["NCCL_DEBUG", "NCCL_IB_HCA"]
    ctx = parse_text(FMT, "", command="env | grep NCCL_IB_HCA")
    assert ctx.facts[0].not_set == ["NCCL_IB_HCA"] and ctx.facts[0].filter == "env | grep NCCL_IB_HCA"
    with pytest.raises(NotApplicable):
        parse_text(FMT, "", command="env | grep -v NCCL_IB_HCA")
    with pytest.raises(NotApplicable):  # values printed: the env format's job
        parse_text(FMT, "mlx5_0\n", command="printenv NCCL_IB_HCA")


def test_not_plain_echo_is_refused():
    for cmd in ("echo $(hostname)", "echo $NCCL_IB_HCA | tr , ' '", "echo $?", "echo hello",
                "echo -n $A", "echo $A > /tmp/x", "ls $HOME", None):
        with pytest.raises(NotApplicable):
            parse_text(FMT, "x\n", command=cmd)


def test_mismatch_warns():
    with pytest.raises(NotApplicable):
        parse_text(FMT, "something else\n", command='echo "HCA=$NCCL_IB_HCA"')
    ctx = parse_text(FMT, "INFO\nsomething else\n", command='echo $NCCL_DEBUG; echo "HCA=$NCCL_IB_HCA"')
    assert ctx.warnings and ctx.warnings[0][0] == 2 and len(of_type(ctx, "env.var")) == 1


def test_transcript_end_to_end_with_empty_outputs(tmp_path):
    p = tmp_path / "ticket.txt"
    p.write_bytes(
        b"[root@gpu-node-07 ~]# echo $NCCL_IB_HCA\r\n"
        b"\r\n"
        b"[root@gpu-node-07 ~]# echo \"NCCL_SOCKET_IFNAME=$NCCL_SOCKET_IFNAME\"\r\n"
        b"NCCL_SOCKET_IFNAME=bond0\r\n"
        b"[root@gpu-node-07 ~]# printenv NCCL_DEBUG\r\n"
        b"[root@gpu-node-07 ~]# env | grep NCCL\r\n"
        b"NCCL_SOCKET_IFNAME=bond0\r\n"
        b"[root@gpu-node-07 ~]# ls /tmp\r\n"
    )
    res = ingest([p])
    fmts = [(r.command, r.format, r.status) for r in res.inputs]
    assert fmts[:4] == [("echo $NCCL_IB_HCA", FMT, "parsed"),
                        ('echo "NCCL_SOCKET_IFNAME=$NCCL_SOCKET_IFNAME"', FMT, "parsed"),
                        ("printenv NCCL_DEBUG", FMT, "parsed"), ("env | grep NCCL", "env", "parsed")]
    assert fmts[4][2] == "skipped"  # ls printed nothing: no format reads that
    dumps = [f for f in res.facts if f.fact_type == "env.dump"]
    assert [d.not_set for d in dumps] == [["NCCL_IB_HCA"], [], ["NCCL_DEBUG"], []]
    # an empty output has no line of its own: the dump points at the command's segment
    assert dumps[0].node == "gpu-node-07" and dumps[0].source.line == 0
    assert dumps[0].source.input.endswith("ticket.txt#1") and dumps[1].source.line == 4
    assert [(v.name, v.value) for v in res.facts if v.fact_type == "env.var"] == [
        ("NCCL_SOCKET_IFNAME", "bond0"), ("NCCL_SOCKET_IFNAME", "bond0")]


def test_content_alone_never_claims():
    assert shell_echo.sniff(Document.from_text("mlx5_0\n")) == 0.0
    best, _ = best_format(Document.from_text("mlx5_0\n"))
    assert best is None or best.name != FMT


@pytest.mark.slow  # 20,000-word lines (a linearity bench); the quick long-line tests of other parsers stay
def test_long_line_is_fast():
    cmd = "echo " + "$A" * 20000
    with pytest.raises(NotApplicable):
        parse_text(FMT, "x" * 40000 + "\n", command=cmd + " | x")
    ctx = parse_text(FMT, "a " * 20000 + "\n", command="echo " + "$A " * 20000)
    assert ctx.facts


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.text(max_size=300))
def test_never_raises_anything_else(out, cmd):
    try:
        parse_text(FMT, out, command="echo " + cmd)
    except (ParseError, NotApplicable):
        pass


def test_real_printenv_of_this_machine_is_the_env_formats(tmp_path):
    text = (Path(__file__).parents[1] / "fixtures" / "real" / "printenv-sandbox.txt").read_text()
    best, _ = best_format(Document.from_text(text, command="printenv"))
    assert best.name == "env"
    ctx = parse_text("env", text, command="printenv")
    [dump] = of_type(ctx, "env.dump")
    assert dump.complete and "NCCL_DEBUG" in dump.names and dump.not_set == []
    # printenv NAME that printed its value: read by env, declined here
    (tmp_path / "t.txt").write_text("[root@gpu-node-07 ~]# printenv NCCL_DEBUG\nWARN\n")
    res = ingest([tmp_path / "t.txt"])
    assert [(r.format, r.status) for r in res.inputs] == [("env", "parsed")]

