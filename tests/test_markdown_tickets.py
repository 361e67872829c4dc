"""A ticket pasted as one Markdown post: each code block is read as its tool's output, the words
around it as the user's (facts/ingest.py ``_is_post``, ``_words_beside_blocks``, ``_dedent``;
facts/embedded.py ``code_spans``). The same outputs in separate files and in one post must give
the same facts; one tool's indented output is never taken for a post."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterdx.facts.document import Document
from clusterdx.facts.embedded import code_spans
from clusterdx.facts.ingest import _dedent, _sentences, _is_post, ingest

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
    assert _dedent(["    00:01.0 bridge", "    \tLnkSta: x4", "", "    next"]) == ["00:01.0 bridge", "\tLnkSta: x4", "", "next"]
    assert _dedent(["a", "  b"]) == ["a", "  b"]


def test_sentences_are_the_users_words_not_a_tools_status_line():
    assert _sentences(WORDS) == 2
    assert _sentences("SKIPPED: step_profile_rank0.sqlite does not contain OS Runtime trace data.") == 0
    assert _sentences("00:01.0 PCI bridge: Intel Corporation Device 09a2 (rev 04)") == 0


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


@pytest.mark.parametrize("sample", ["lspci-vvv.txt", "nsys-stats-stdout.txt", "ibstat.txt", "nvidia-smi-q.txt", "perf-report-smmu-callgraph.txt", "perf-report-smmu.txt", "perf-stat-default.txt", "nvidia-smi-q-legacy.txt", "lspci-vvv-legacy.txt", "turbostat.txt", "numactl-hardware-x86.txt", "megatron-train.log", "dmesg-iommu-x86.txt"])
def test_one_tools_indented_output_is_not_a_post(sample):
    """Look-alike: tools that indent their own lines, with blank lines between sections."""
    lines = (FORMATS / sample).read_text().splitlines()
    assert not _is_post(Document(name=sample, lines=lines))


def test_one_fenced_block_without_words_is_not_a_post(tmp_path):
    doc = Document(name="x.md", lines=["nccl.log:", "", "```", *NCCL.splitlines(), "```"])
    assert not _is_post(doc)
    # with the user's words around it, the block is read on its own
    assert _is_post(Document(name="x.md", lines=[WORDS, "", "```", *NCCL.splitlines(), "```"]))


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
