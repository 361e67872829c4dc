"""`clusterdx triage` on a shipped case plus a pasted description."""

from __future__ import annotations

import subprocess
import sys

import yaml

from .conftest import CASES, ROOT


def test_triage_reply_on_shipped_case(tmp_path):
    case = CASES / "td-env-docker-missing"
    expect = yaml.safe_load((case / "expect.yaml").read_text())
    desc = tmp_path / "description.txt"
    desc.write_text("Subject: slow in docker\n\n" + expect["description"]
                    + "\nHF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123456789\n")
    out = tmp_path / "reply.md"
    proc = subprocess.run([sys.executable, "-m", "clusterdx", "triage", str(case / "input"), str(desc), "-o", str(out)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    md = out.read_text()
    assert md.startswith("## clusterdx triage")
    head = md.split("**Summary.**")[0]
    assert "Subject: slow in docker" in head and "Llama 70B runs 30% slower" in head
    assert "HF_TOKEN=<redacted>" in head and "hf_abcdef" not in md
    assert f"`{expect['expect']['top']}`" in md.split("## Ranked hypotheses")[1].split("\n| 2 |")[0]
    for section in ("## What we could not check", "## Please run these and attach the output", "```mermaid"):
        assert section in md
    # the description is accounted for as an input, read as the user's own words
    assert "description.txt` | prose |" in md


def test_triage_missing_path_is_usage_error(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "clusterdx", "triage", str(tmp_path / "nope")],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 2 and "no such file or folder" in proc.stderr
