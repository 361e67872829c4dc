import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError, Scope
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.parsers import proc_environ

FIXTURES = Path(__file__).parents[1] / "fixtures"


def run_raw(raw: bytes, **kw) -> ParseContext:
    doc = Document(name="<environ>", lines=[], raw=raw, **kw)
    ctx = ParseContext(doc=doc, parser="proc-environ")
    proc_environ.parse(doc, ctx)
    return ctx


def of(ctx, fact_type):
    return [f for f in ctx.facts if f.fact_type == fact_type]


def test_doctests():
    assert doctest.testmod(proc_environ).failed == 0


def test_fixture_rank_environ():
    ctx = run_raw((FIXTURES / "formats/proc-environ.bin").read_bytes())
    assert ctx.warnings == []
    [dump] = of(ctx, "env.dump")
    assert dump.var_count == 31 and dump.complete and dump.filter == ""
    assert dump.scope == Scope.unknown and dump.container_markers == []
    values = {f.name: (f.value, f.source.line) for f in of(ctx, "env.var")}
    assert values["HOSTNAME"] == ("gpu-node-017", 2)
    assert values["SLURM_PROCID"] == ("3", 8)
    assert values["NCCL_ALGO"][0] == "Ring;allreduce:Tree"
    assert values["EXTRA_ARGS"][0] == "--seq-length 8192 --micro-batch-size 1"
    # a literal newline inside a value stays inside it
    assert values["BASH_FUNC_module%%"][0].endswith('"$@")"\n}')
    assert values["HOME"] == ("/home/mlops", 31)


def test_truncated_and_bad_entries_warn():
    ctx = run_raw(b"PATH=/bin\0garbage-without-equals\0\0HF_TOKEN=hf_secret\0NCCL_DEBUG=IN")
    names = [(f.name, f.value) for f in of(ctx, "env.var")]
    assert names == [("PATH", "/bin"), ("HF_TOKEN", "<redacted>"), ("NCCL_DEBUG", "IN")]
    assert [line for line, _ in ctx.warnings] == [2, 3, 5]
    assert "truncated" in ctx.warnings[-1][1]


def test_empty_and_not_environ():
    with pytest.raises(NotApplicable):
        run_raw(b"")
    with pytest.raises(ParseError):
        run_raw(b"\x00\x01\x02binary\0junk\0")
    with pytest.raises(NotApplicable):
        doc = Document.from_text("PATH=/bin\n")
        proc_environ.parse(doc, ParseContext(doc=doc, parser="proc-environ"))


def test_text_with_nuls_is_accepted():
    doc = Document.from_text("PATH=/bin\0HOME=/root\0")
    ctx = ParseContext(doc=doc, parser="proc-environ")
    proc_environ.parse(doc, ctx)
    assert [f.name for f in of(ctx, "env.var")] == ["PATH", "HOME"]


def test_real_environ_from_this_machine():
    ctx = run_raw((FIXTURES / "real/proc-environ-sandbox.bin").read_bytes())
    [dump] = of(ctx, "env.dump")
    assert "PATH" in dump.names and dump.var_count >= 10 and ctx.warnings == []


@pytest.mark.parametrize("path", sorted((FIXTURES / "formats").iterdir()), ids=lambda p: p.name)
def test_sniff(path):
    raw = path.read_bytes()
    score = proc_environ.sniff(Document(name=path.name, lines=[], raw=raw))
    if path.name == "proc-environ.bin":
        assert score > 0.8
    else:
        assert score < 0.3
    # text inputs carry no raw bytes
    assert proc_environ.sniff(Document.from_text(raw.decode("latin-1"))) == 0.0


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000))
def test_never_raises_anything_else_binary(raw):
    try:
        run_raw(raw)
    except (ParseError, NotApplicable):
        pass


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=2000), st.binary(max_size=2000).map(lambda b: b.decode("latin-1"))))
def test_never_raises_anything_else_text(text):
    doc = Document.from_text(text)
    try:
        proc_environ.parse(doc, ParseContext(doc=doc, parser="proc-environ"))
        run_raw(text.encode("utf-8", "surrogatepass"))
    except (ParseError, NotApplicable):
        pass


@pytest.mark.parametrize("command,expected", [
    ("cat /proc/2214097/environ", True), ("sudo cat /proc/self/environ > env.bin", True),
    ("tr '\\0' '\\n' < /proc/1/environ", False), ("cat /proc/1/status", False),
])
def test_command_patterns(command, expected):
    assert proc_environ.FORMATS[0].matches_command(command) is expected
