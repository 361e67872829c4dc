"""The Markdown report: sections, ranking, quoted evidence with file:line, trimming, Mermaid, escaping."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt

from clusterdx.explainers import FORMATS, renderer
from clusterdx.explainers.common import QUOTE_LINES, QUOTE_WIDTH, quote
from clusterdx.explainers.markdown import code, fenced, render, text

SECTIONS = ["**Summary.**", "## Ranked hypotheses", "## Causal path of the leading hypothesis",
            "## What we could not check", "## Please run these and attach the output", "## Inputs"]


def _html(md: str) -> str:
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(md)


def test_registered():
    assert {"markdown", "html"} <= set(FORMATS)
    assert renderer("markdown") is render


def test_sections_ranking_and_mermaid(docker_report):
    md = render(docker_report)
    positions = [md.index(s) for s in SECTIONS]
    assert positions == sorted(positions)
    top = docker_report.hypotheses[0]
    assert top.id == "container-nccl-env-not-propagated"
    assert f"| 1 | {text(top.title)} (`{top.id}`) | {top.confidence:.2f} |" in md
    block = re.search(r"^```mermaid\n(.*?)^```$", md, re.S | re.M)
    assert block, "no fenced mermaid block"
    body = block.group(1)
    assert body.startswith("flowchart LR")
    assert "container_nccl_env_not_propagated ==> wrong_nccl_path" in body
    assert "style container_nccl_env_not_propagated" in body
    # remediation and verification for the leading hypothesis, with its commands in code blocks
    assert "**Remediation**" in md and "**Verify the fix**" in md
    # commands in fenced blocks, indented under their step so the numbered list holds together
    assert "     ```sh\n     export NCCL_IB_QPS_PER_CONNECTION=4\n     ```" in md


def test_evidence_is_quoted_with_file_and_line_and_trimmed(docker_report):
    md = render(docker_report)
    src = next(f.source for f in docker_report.hypotheses[0].evidence[0].facts)
    span = re.search(r"docker-env\.txt#1:(\d+)-(\d+)$", src)
    assert span, src
    assert f"`{src}`" in md
    # the quoted lines of the attachment, in a fenced block, trimmed with a marker ...
    assert "    HOSTNAME=gpu-h100-021" in md
    hidden = int(span.group(2)) - int(span.group(1)) + 1 - QUOTE_LINES
    assert hidden > 0
    assert f"… {hidden} more lines trimmed (see {src})" in md
    assert "WORLD_SIZE=16" not in md.split("## Ranked hypotheses")[1].split("### 2.")[0]
    # ... but the conclusion, the rule's message, is never trimmed
    message = docker_report.hypotheses[0].evidence[0].message
    assert text(message) in md
    assert "NCCL in the container falls back to its defaults for them." in message


def test_long_quoted_line_is_clipped(tmp_path):
    f = tmp_path / "x.log"
    f.write_text("a\n" + "b" * 1000 + "\nHF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123456789\n")
    q = quote(f"{f}:2-3")
    assert q is not None and q.trimmed == 0
    assert q.lines[0].startswith("b" * QUOTE_WIDTH)
    assert q.lines[0].endswith(f"[{1000 - QUOTE_WIDTH} more characters trimmed]")
    assert q.lines[1] == "HF_TOKEN=<redacted>"
    assert quote(f"{f}:3", redact=False).lines == ["HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123456789"]
    assert quote("bundle.tgz!/x.log:3") is None and quote(f"{tmp_path}/gone.log:1") is None


def test_not_evaluated_and_probes(docker_report):
    md = render(docker_report)
    could_not = md.split("## What we could not check")[1].split("## Please run")[0]
    assert "not known to be fine" in could_not
    for ne in docker_report.not_evaluated[:5]:
        assert f"`{ne.rule}`" in could_not
    probes = md.split("## Please run these and attach the output")[1].split("## Inputs")[0]
    first = docker_report.next_probes[0]
    assert f"```sh\n   {first.command}\n   ```" in probes
    assert "no root needed" in probes or "needs root" in probes
    assert "run on " in probes


def test_escaping_of_crafted_input(evil_report):
    md = render(evil_report)
    html = _html(md)
    assert "<script" not in html.lower()
    # shown as text: the escaped markup renders back to the characters
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    # the raw line sits in a fenced block, verbatim
    assert "    gpu-h100-021:3122:3122 [0] NCCL WARN Could not open XML topology file /opt/topo/<script>" in md
    # outside fenced blocks, no raw '<' from the input and no unescaped pipe that could split a table row
    outside = re.sub(r"^( *)(`{3,})[a-z]*\n.*?^\1\2$", "", md, flags=re.S | re.M)
    assert "<script>" not in outside
    assert "|`x`" not in outside


def test_fences_outgrow_backtick_runs():
    lines = ["plain", "a ````` run"]
    block = fenced(lines)
    assert block[0] == "``````text" and block[-1] == "``````"
    assert code("a `b` c") == "``a `b` c``"
    assert code("`x`") == "`` `x` ``"
    assert code("a|b") == "`a\\|b`"
    assert text("# not a heading") == "\\# not a heading"
    assert text("<b>*x*</b>") == "&lt;b&gt;\\*x\\*&lt;/b&gt;"


def test_empty_report_still_has_every_section(kb, tmp_path):
    from clusterdx.engine.diagnose import collect_paths, diagnose

    (tmp_path / "notes.txt").write_text("nothing to see\n")
    report = diagnose(collect_paths([tmp_path]), kb=kb)
    md = render(report)
    assert "No root cause is supported" in md
    for s in ["## What we could not check", "## Please run these and attach the output", "## Inputs"]:
        assert s in md
    assert "```mermaid" not in md


def test_summary_names_hosts_not_the_placeholder_of_unlabelled_files():
    from types import SimpleNamespace as NS

    from clusterdx.explainers.common import summary

    def report(nodes):
        return NS(inputs=[NS(status="parsed")], nodes=nodes, gap=None, hypotheses=[], not_evaluated=[])

    assert "from gpu-017, gpu-018 (and inputs that name no host)." in summary(report(["gpu-017", "gpu-018", "node"]))
    assert "from gpu-017." in summary(report(["gpu-017"]))
    assert "from unknown nodes." in summary(report(["node"]))
