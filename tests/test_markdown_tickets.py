"""A ticket pasted as one post: each pasted output is read as its tool's, the words around it as
the user's (facts/posts.py; facts/embedded.py ``code_spans``). The same outputs in separate files and in one post must give
the same facts; one tool's indented output is never taken for a post."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterdx.facts.embedded import code_spans
from clusterdx.facts.ingest import ingest
from clusterdx.facts.posts import dedent, plain_spans, post_spans, sentences

HERE = Path(__file__).parent
FORMATS = HERE / "fixtures" / "formats"

NCCL = """gpu-a17:22473:22473 [0] NCCL INFO NCCL version 2.18.5+cuda12.2
gpu-a17:22473:22473 [0] NCCL INFO Channel 00/0 : 0[14000] -> 8[14000] [send] via NET/IB/1/GDRDMA
gpu-a17:22473:22473 [0] NCCL INFO Channel 01/0 : 16[1b000] -> 0[14000] [receive] via NET/IB/1/GDRDMA"""
LSCPU = (FORMATS / "lscpu-x86-baremetal-hier.txt").read_text()
WORDS = ("We run the job on two nodes and the all-reduce is much slower than we expected it to be. "
         "Each node has eight GPUs and the logs of one rank are below.")


def _post(tmp_path: Path, body: str, name: str = "issue.md") -> list:
    p = tmp_path / name
    p.write_text(body)
    return ingest([p]).inputs


def _formats(inputs) -> dict[str, str]:
    return {r.path.rsplit("/", 1)[-1]: r.format for r in inputs}


def test_code_spans_finds_indented_blocks():
    lines = ["Some words of mine here:", "", "    first line", "    second line", "", "after"]
    assert code_spans(lines) == [(2, 4)]


def test_dedent_keeps_a_lines_own_indent():
    assert dedent(["    00:01.0 bridge", "    \tLnkSta: x4", "", "    next"]) == ["00:01.0 bridge", "\tLnkSta: x4", "", "next"]
    assert dedent(["a", "  b"]) == ["a", "  b"]


def test_sentences_are_the_users_words_not_a_tools_status_line():
    assert sentences(WORDS) == 2
    assert sentences("Performance counter stats for process id '481203':") == 0
    assert sentences("00:01.0 PCI bridge: Intel Corporation Device 09a2 (rev 04)") == 0


def test_issue_body_with_two_fenced_outputs_reads_each_block(tmp_path):
    body = f"# Slow all-reduce\n\n{WORDS}\n\n**nccl.log**\n\n```\n{NCCL}\n```\n\n**lscpu**\n\n```\n{LSCPU}```\n"
    got = _formats(_post(tmp_path, body))
    assert got["issue.md#code1"] == "nccl-debug"
    assert got["issue.md#code2"] == "lscpu"
    assert got["issue.md"] == "prose"


def test_forum_post_with_indented_outputs_reads_each_block(tmp_path):
    indent = lambda t: "\n".join("    " + ln if ln.strip() else "" for ln in t.splitlines())  # noqa: E731
    body = f"{WORDS}\n\nnccl.log:\n\n{indent(NCCL)}\n\nlscpu:\n\n{indent(LSCPU)}\n"
    got = _formats(_post(tmp_path, body, "post.txt"))
    assert got["post.txt#code1"] == "nccl-debug" and got["post.txt#code2"] == "lscpu"


def test_same_facts_as_separate_files(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "nccl.log").write_text(NCCL + "\n")
    (tmp_path / "a" / "lscpu.txt").write_text(LSCPU)
    post = tmp_path / "issue.md"
    post.write_text(f"{WORDS}\n\n```\n{NCCL}\n```\n\n```\n{LSCPU}```\n")

    def measured(facts):
        return {f.fact_type for f in facts if getattr(f, "origin", "measured") != "reported"}

    apart = measured(ingest([tmp_path / "a"]).facts)
    assert apart and apart <= measured(ingest([post]).facts)


@pytest.mark.parametrize("sample", sorted(p.name for p in FORMATS.iterdir() if p.suffix in (".txt", ".log")))
def test_no_sample_tool_output_is_a_post(sample):
    """Every real tool output we keep is one tool's, never a post."""
    lines = (FORMATS / sample).read_text(errors="replace").splitlines()
    assert not post_spans(lines), sample


@pytest.mark.parametrize("sample", ["lspci-vvv.txt", "nsys-stats-stdout.txt", "ibstat.txt", "nvidia-smi-q.txt", "perf-report-smmu-callgraph.txt", "perf-report-smmu.txt", "perf-stat-default.txt", "nvidia-smi-q-legacy.txt", "lspci-vvv-legacy.txt", "turbostat.txt", "numactl-hardware-x86.txt", "megatron-train.log", "dmesg-iommu-x86.txt"])
def test_one_tools_indented_output_is_not_a_post(sample):
    """Look-alike: tools that indent their own lines, with blank lines between sections."""
    lines = (FORMATS / sample).read_text().splitlines()
    assert not post_spans(lines)


def test_one_fenced_block_without_words_is_not_a_post(tmp_path):
    assert not post_spans(["nccl.log:", "", "```", *NCCL.splitlines(), "```"])
    # with the user's words around it, the block is read on its own
    assert post_spans([WORDS, "", "```", *NCCL.splitlines(), "```"])


def test_a_json_pasted_in_a_fence_with_words_parses(tmp_path):
    inspect = (HERE / "fixtures" / "formats" / "docker-inspect.json").read_text()
    got = _post(tmp_path, f"{WORDS}\n\n```json\n{inspect}\n```\n")
    assert {r.path.rsplit('/', 1)[-1]: r.format for r in got}.get("issue.md#code1") == "docker-inspect"
    assert not any(r.status == "error" for r in got)


def test_prompts_inside_a_posts_blocks_split_per_block(tmp_path):
    """A transcript pasted in one block of a post is split at its prompts inside that block; the
    fences of the other blocks are never cut across."""
    body = (f"{WORDS}\n\n```\n$ lscpu\n{LSCPU}```\n\n```\n$ getconf PAGESIZE\n4096\n```\n")
    got = _formats(_post(tmp_path, body))
    assert got.get("issue.md#code1") == "lscpu", got
    assert got.get("issue.md#code2") == "getconf-page-size", got
    assert not any(r.status == "error" for r in _post(tmp_path, body))


def test_plain_post_finds_the_outputs_between_words():
    lines = [WORDS, "", "Output of lscpu:", "", *LSCPU.splitlines(), "", WORDS, "", *NCCL.splitlines()]
    spans = plain_spans(lines)
    assert [lines[a] for a, _ in spans] == [LSCPU.splitlines()[0], NCCL.splitlines()[0]]


def test_plain_post_reads_like_its_attachments(tmp_path):
    body = f"{WORDS}\n\nOutput of lscpu:\n\n{LSCPU}\n{WORDS}\n\n{NCCL}\n"
    got = _formats(_post(tmp_path, body, "ticket.txt"))
    assert "lscpu" in got.values() and "nccl-debug" in got.values(), got


def test_a_tools_output_opening_with_a_sentence_is_not_a_post():
    """Look-alike: a paragraph of words first and tool lines after it, but wrapped as one tool's
    status (cpupower's key: value lines are output, not words)."""
    lines = (FORMATS / "cpupower-frequency-info.txt").read_text().splitlines()
    assert not post_spans(lines)


def test_long_blank_and_character_lines_do_not_stall_post_detection():
    # the hostile bench's find: a 50 KB line of blanks cost LOG_LINE seven seconds, every time a
    # paragraph holding it was tested for the user's words; a hang detector, not a timing
    import signal

    def stalled(*_):
        raise TimeoutError("post detection took over 20 s on long lines")

    lines = ["# Slow all-reduce", "", "Hi, our two nodes are much slower than expected since the upgrade.", ""]
    for c in (" ", "\t", "a", ":", "NCCL "):
        lines += [c * (50_000 // len(c)) + "!", "", "The output above is from the first node, the second one looks the same.", ""]
    old = signal.signal(signal.SIGALRM, stalled)
    signal.alarm(20)
    try:
        spans = plain_spans(lines) + post_spans(lines)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert spans  # the long lines are pasted output between the user's words


# vLLM's issue template: the fence closes after its caption and the report follows unfenced
# (vllm-project/vllm#3842, shortened)
TEMPLATE_BROKEN = """### Your current environment

```text
The output of `python collect_env.py`
```
Collecting environment information...
PyTorch version: 2.1.2+cu121
Is debug build: False
CUDA used to build PyTorch: 12.1

OS: Ubuntu 22.04.3 LTS (x86_64)
Python platform: Linux-5.15.0-60-generic-x86_64-with-glibc2.35
Is CUDA available: True
GPU models and configuration:
GPU 0: NVIDIA A100-SXM4-80GB
GPU 1: NVIDIA A100-SXM4-80GB

Nvidia driver version: 535.104.05

### How would you like to use vllm

I want to run the model with tensor parallel 2 but the server hangs forever after NCCL init.
"""


def test_an_unfenced_report_after_a_closed_template_fence_is_an_input_of_its_own(tmp_path):
    lines = TEMPLATE_BROKEN.splitlines()
    spans = post_spans(lines)
    start = lines.index("Collecting environment information...")
    assert (start, lines.index("Nvidia driver version: 535.104.05") + 1) in spans
    p = tmp_path / "issue.md"
    p.write_text(TEMPLATE_BROKEN)
    res = ingest([p])
    formats = {r.path.split("#")[-1]: r.format for r in res.inputs}
    assert "torch-collect-env" in formats.values() and formats.get(str(p)) == "prose"
    assert [f.name for f in res.facts if f.fact_type == "gpu.device"] == ["NVIDIA A100-SXM4-80GB"] * 2
    # the user's words are still read as prose
    assert any(f.fact_type.startswith("reported.") for f in res.facts)


def test_short_lists_and_tables_outside_the_fences_stay_the_users_words():
    lines = ["We run NCCL all_reduce between two nodes and it is slow, see below.", "",
             "- NCCL 2.18.3", "- CUDA 12.2", "- driver 535", "",
             "| pair | busbw |", "|---|---|", "| a-b | 20 |", "| a-c | 40 |", "",
             "```", "#  size  count  type  redop  root  time  algbw  busbw", "```"]
    spans = post_spans(lines)
    assert all(lines[a - 1].startswith("```") for a, _ in spans), spans
