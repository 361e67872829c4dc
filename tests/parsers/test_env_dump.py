import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError, Scope
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.parsers import env_dump

FIXTURES = Path(__file__).parents[1] / "fixtures"


def run(text: str, command: str | None = None, **kw) -> ParseContext:
    doc = Document.from_text(text, name="<test>", command=command, **kw)
    ctx = ParseContext(doc=doc, parser="env")
    env_dump.parse(doc, ctx)
    return ctx


def fixture(name: str, command: str | None = None) -> ParseContext:
    return run((FIXTURES / name).read_bytes().decode("utf-8", "replace"), command=command)


def of(ctx, fact_type):
    return [f for f in ctx.facts if f.fact_type == fact_type]


def var(ctx, name):
    [f] = [f for f in of(ctx, "env.var") if f.name == name]
    return f


def test_doctests():
    assert doctest.testmod(env_dump).failed == 0


def test_env_dump_fixture_pyxis_container():
    ctx = fixture("formats/env-dump.txt")
    assert ctx.warnings == []
    [dump] = of(ctx, "env.dump")
    assert dump.var_count == 86 and dump.complete and dump.filter == ""
    assert dump.container_markers == ["NVIDIA_VISIBLE_DEVICES", "PYTORCH_VERSION"]
    assert dump.scope == Scope.container and dump.rank is None
    assert dump.names == sorted(dump.names) and "NCCL_IB_HCA" in dump.names
    assert (dump.source.line, dump.source.end_line) == (1, 96)
    hca = var(ctx, "NCCL_IB_HCA")
    assert hca.value == "mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11"
    assert hca.source.line == 16 and hca.scope == Scope.container
    # values keep '=', ';', spaces and quotes verbatim
    assert var(ctx, "NCCL_ALGO").value == "Ring;allreduce:Tree"
    assert var(ctx, "NVIDIA_REQUIRE_CUDA").value.startswith("cuda>=12.8 brand=tesla,driver>=470")
    assert var(ctx, "EXTRA_ARGS").value == "--seq-length 8192 --micro-batch-size 1 --tensor-model-parallel-size 8"
    func = var(ctx, "BASH_FUNC_module%%")
    assert (func.source.line, func.source.end_line) == (85, 95)
    assert func.value.startswith("() {  local _mlshdbg='';\n") and func.value.endswith("\n}")
    assert var(ctx, "_").value == "/usr/bin/env"
    assert not any(f.redacted for f in of(ctx, "env.var"))


def test_slurm_pyxis_transcript_gives_one_dump_per_command():
    ctx = fixture("formats/slurm-pyxis-env.txt")
    assert ctx.warnings == []
    dumps = of(ctx, "env.dump")
    assert [(d.source.line, d.var_count, d.complete) for d in dumps] == [(11, 7, False), (23, 1, False), (33, 1, False)]
    assert dumps[0].filter == "grep -E '^(NCCL_|SLURM_JOB_ID|SLURM_PROCID|CUDA_VISIBLE)'"
    assert dumps[0].container_markers == ["cmd:srun --container-image"]
    assert [d.scope for d in dumps] == [Scope.container, Scope.container, Scope.unknown]
    sl = [(f.value, f.source.line) for f in of(ctx, "env.var") if f.name == "NCCL_IB_SL"]
    # image value 1 wins without --container-env, host value 3 with it, /proc environ shows 1
    assert sl == [("1", 14), ("3", 23), ("1", 33)]
    # "$ export ..." is a command, not output; "grep -c" printed a count, not variables
    assert "pyxis" not in " ".join(f.name for f in of(ctx, "env.var"))


def test_secrets_are_redacted_unless_document_says_not():
    text = "HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123456789\nPIP_INDEX_URL=https://bob:pw@pypi.example/simple\nNCCL_IB_PKEY=0x8001\nPATH=/bin\n"
    ctx = run(text)
    assert (var(ctx, "HF_TOKEN").value, var(ctx, "HF_TOKEN").redacted) == ("<redacted>", True)
    assert var(ctx, "PIP_INDEX_URL").value == "https://bob:<redacted>@pypi.example/simple"
    assert (var(ctx, "NCCL_IB_PKEY").value, var(ctx, "NCCL_IB_PKEY").redacted) == ("0x8001", False)
    raw = run(text, redact=False)
    assert var(raw, "HF_TOKEN").value.startswith("hf_abc") and not var(raw, "HF_TOKEN").redacted


def test_declare_export_forms_and_quoting():
    text = (
        'declare -x NCCL_DEBUG="INFO"\n'
        'declare -x MSG="say \\"hi\\" \\$HOME"\n'
        "export OMP_NUM_THREADS='1'\n"
        "export QUOTE='it'\\''s'\n"
        "declare -x UNSET\n"
        'declare -x MULTI="line one\n'
        'line two"\n'
        'declare -x PATH="/usr/bin:/bin"\n'
    )
    ctx = run(text, command="export -p")
    assert var(ctx, "NCCL_DEBUG").value == "INFO"
    assert var(ctx, "MSG").value == 'say "hi" $HOME'
    assert var(ctx, "OMP_NUM_THREADS").value == "1"
    assert var(ctx, "QUOTE").value == "it's"
    assert var(ctx, "MULTI").value == "line one\nline two"
    assert (var(ctx, "MULTI").source.line, var(ctx, "MULTI").source.end_line) == (6, 7)
    assert "UNSET" not in of(ctx, "env.dump")[0].names
    assert of(ctx, "env.dump")[0].complete


def test_grep_filter_from_command_and_from_content():
    ctx = run("NCCL_DEBUG=INFO\nNCCL_IB_HCA=mlx5_0\n", command="env | grep NCCL | sort")
    [dump] = of(ctx, "env.dump")
    assert (dump.complete, dump.filter) == (False, "grep NCCL")
    # no command and no PATH: probably filtered, so absence proves nothing
    [dump] = of(run("NCCL_DEBUG=INFO\nNCCL_IB_HCA=mlx5_0\n"), "env.dump")
    assert (dump.complete, dump.filter) == (False, "")


def test_srun_labels_split_per_task_with_noise_and_crlf():
    text = (
        "srun: job 918273 queued and waiting for resources\r\n"
        "0: SLURM_PROCID=0\r\n1: SLURM_PROCID=1\r\n"
        "WARNING: underlying device is busy\r\n"
        "0: NCCL_IB_HCA=mlx5_0\r\n1: NCCL_IB_HCA=mlx5_3\r\n"
        "0: PATH=/bin\r\n1: PATH=/bin\r\n"
        "srun: error: gpu-node-018: task 1: Exited with exit code 1\r\n"
    )
    ctx = run(text, command="srun -l env")
    dumps = of(ctx, "env.dump")
    assert [(d.rank, d.var_count, d.complete) for d in dumps] == [(0, 3, True), (1, 3, True)]
    assert [(f.rank, f.value) for f in of(ctx, "env.var") if f.name == "NCCL_IB_HCA"] == [(0, "mlx5_0"), (1, "mlx5_3")]
    assert [w[0] for w in ctx.warnings] == [9]


def test_docker_exec_and_kubectl_set_container_scope():
    for cmd, marker in (("docker exec -it trainer env", "cmd:docker exec"),
                        ("kubectl exec -n ml pod-0 -- env", "cmd:kubectl exec"),
                        ("enroot start pytorch env", "cmd:enroot start")):
        [dump] = of(run("PATH=/bin\nHOME=/root\n", command=cmd), "env.dump")
        assert dump.scope == Scope.container and marker in dump.container_markers
    [dump] = of(run("PATH=/bin\nHOME=/root\n", command="env"), "env.dump")
    assert dump.scope == Scope.unknown and dump.container_markers == []
    # a known scope is kept even with markers
    [dump] = of(run("PATH=/bin\ncontainer=oci\n", scope=Scope.host), "env.dump")
    assert dump.scope == Scope.host and dump.container_markers == ["container"]


def test_printenv_single_name_prints_bare_value():
    ctx = run("mlx5_0,mlx5_3\n", command="printenv NCCL_IB_HCA")
    assert var(ctx, "NCCL_IB_HCA").value == "mlx5_0,mlx5_3"
    assert of(ctx, "env.dump")[0].filter == "printenv NCCL_IB_HCA"


def test_prompt_lines_and_truncated_function():
    text = "user@gpu-node-017:~$ env\nPATH=/bin\nBASH_FUNC_ml%%=() {  module ml \"$@\"\n local x=1\n"
    ctx = run(text)
    assert var(ctx, "BASH_FUNC_ml%%").value.endswith("local x=1")
    assert any("never closed" in msg for _, msg in ctx.warnings)
    assert ctx.warnings[0][0] == 3


def test_garbage_is_not_applicable():
    with pytest.raises(NotApplicable):
        run("hello world\nthis is not an environment\n")
    with pytest.raises(NotApplicable):
        run("")


def test_real_env_from_this_machine():
    ctx = fixture("real/env-sandbox.txt", command="env")
    [dump] = of(ctx, "env.dump")
    assert dump.complete and dump.var_count >= 10 and "PATH" in dump.names and "HOME" in dump.names
    assert var(ctx, "_").value == "/usr/bin/env"
    assert ctx.warnings == []


_MINE = {"env-dump.txt", "slurm-pyxis-env.txt"}


@pytest.mark.parametrize("path", sorted((FIXTURES / "formats").iterdir()), ids=lambda p: p.name)
def test_sniff(path):
    doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
    score = env_dump.sniff(doc)
    if path.name in _MINE:
        assert score > 0.8
    else:
        assert score < 0.3


def test_sniff_real_env():
    doc = Document.from_text((FIXTURES / "real/env-sandbox.txt").read_text())
    assert env_dump.sniff(doc) > 0.8


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=2000), st.binary(max_size=2000).map(lambda b: b.decode("latin-1"))))
def test_never_raises_anything_else(text):
    try:
        run(text)
        run(text, command="srun -l --container-image=x env | grep NCCL")
    except (ParseError, NotApplicable):
        pass


def test_environ_with_nuls_printed_as_text():
    ctx = run("PATH=/bin\0NCCL_IB_SL=1\0", command="cat /proc/1/environ")
    assert [(f.name, f.value, f.source.line) for f in of(ctx, "env.var")] == [("PATH", "/bin", 1), ("NCCL_IB_SL", "1", 1)]


@pytest.mark.parametrize("command,expected", [
    ("env", True), ("env | grep NCCL", True), ("docker exec -it c env", True), ("kubectl exec p -- env", True),
    ("srun -l --container-image=img env | sort", True), ("printenv", True), ("printenv NCCL_IB_HCA", True),
    ("bash -c 'env'", True), ("export -p", True), ("declare -px", True),
    ("tr '\\0' '\\n' < /proc/123/environ | grep NCCL", True),
    # env and printenv running or naming something else
    ("env NCCL_DEBUG=INFO ./all_reduce_perf -b 8", False), ("/usr/bin/env python3 train.py", False),
    ("cat .env", False), ("conda env list", False),
])
def test_command_patterns(command, expected):
    assert env_dump.FORMATS[0].matches_command(command) is expected
