"""`diagnose --interactive` driven through a real pseudo-terminal (pexpect)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time

import pytest

from .conftest import CASES, ROOT

pexpect = pytest.importorskip("pexpect")

PROMPT = "clusterdx> "


def spawn(*args: str):
    child = pexpect.spawn(sys.executable, ["-m", "clusterdx", "diagnose", "--interactive", *args], cwd=str(ROOT),
                          encoding="utf-8", timeout=60, dimensions=(60, 200))
    return child


def finish(child) -> int:
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


@pytest.fixture
def numa_case(tmp_path):
    """The NUMA-balancing case without its decisive file (the sysctl output)."""
    src = CASES / "cp-numa-balancing-grace-perf" / "input"
    dst = tmp_path / "case"
    dst.mkdir()
    for name in ("lscpu.txt", "perf-report.txt"):
        shutil.copy(src / name, dst / name)
    return dst


@pytest.mark.slow  # an interactive session in a pseudo-terminal (about 3 s)
def test_pasting_the_probe_output_confirms_the_cause(numa_case):
    child = spawn(str(numa_case))
    child.expect(r"Next probe: .*\[sysctl-numa-balancing\]")
    child.expect(PROMPT)
    child.sendline("p")
    child.expect("only '.'")
    child.sendline("$ sysctl kernel.numa_balancing")
    child.sendline("kernel.numa_balancing = 1")
    child.sendline(".")
    child.expect(r"read 2 lines")
    child.expect(r"1\. numa-balancing-enabled\s+confidence (0\.[89]|1\.0)")
    child.expect(r"Confirmed: .*\(numa-balancing-enabled\)")
    assert finish(child) == 0


@pytest.mark.slow  # an interactive session in a pseudo-terminal (about 4 s)
def test_answering_a_question_confirms_the_cause():
    child = spawn(str(CASES / "td-env-docker-missing" / "input"))
    child.expect(r"1\. container-nccl-env-not-propagated\s+confidence 0\.[0-7]")
    child.expect(r"Question: Does the gap appear only .*\[gap-only-in-containers\]")
    child.expect(PROMPT)
    child.sendline("a")
    child.expect(r"1\. yes, only in containers")
    child.expect("Answer number: ")
    child.sendline("1")
    child.expect(r"Confirmed: .*\(container-nccl-env-not-propagated\), confidence (0\.[89]|1\.0)")
    assert finish(child) == 0


@pytest.mark.slow  # two interactive sessions in a pseudo-terminal (about 8 s)
def test_save_and_resume(tmp_path, numa_case):
    saved = tmp_path / "session.json"
    child = spawn(str(CASES / "td-env-docker-missing" / "input"))
    child.expect(PROMPT)
    child.sendline("a")
    child.expect("Answer number: ")
    child.sendline("3")  # don't know: recorded, moves nothing
    child.expect(PROMPT)
    child.sendline("p")
    child.expect("only '.'")
    child.sendline("some pasted line")
    child.sendeof()  # Ctrl-D ends a paste too
    child.expect("read 1 lines")
    child.expect(PROMPT)
    child.sendline("s")
    child.expect(r"Save the session to")
    child.sendline(str(saved))
    child.expect("saved to")
    child.expect(PROMPT)
    child.sendline("q")
    assert finish(child) == 0
    data = json.loads(saved.read_text())
    assert data["schema"] == "clusterdx.session/1"
    assert data["answers"] == [{"question": "gap-only-in-containers", "answer": "don't know"}]
    assert [p["text"] for p in data["pasted"]] == ["some pasted line\n"]

    # resume: the answered question is not asked again; the pasted input is read again
    child = spawn("--resume", str(saved))
    child.expect(r"1\. container-nccl-env-not-propagated")
    child.expect(PROMPT)
    assert "[gap-only-in-containers]" not in child.before
    child.sendline("q")
    assert finish(child) == 0


def test_not_a_terminal_fails_at_once():
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "clusterdx", "diagnose", "--interactive",
                           str(CASES / "td-env-docker-missing" / "input")], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=30, cwd=ROOT)
    assert proc.returncode == 2
    assert "needs a terminal" in proc.stderr
    assert time.monotonic() - start < 15
