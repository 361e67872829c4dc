"""docs/authoring.md, executed: every file it shows is written, every command it shows is run,
in order, in a fresh folder; a command's expected output lines must appear in what it prints.

This is also the acceptance test of knowledge-base authoring: a new pattern (the NMI watchdog,
which domain.md describes and the shipped knowledge base lacks) is added with YAML and test files
only, and kb lint, kb test and a case bundle prove it."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

GUIDE = Path(__file__).parents[1] / "docs" / "authoring.md"
BLOCK = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```", re.S | re.M)


def blocks():
    text = GUIDE.read_text()
    for m in BLOCK.finditer(text):
        lang, info, body = m.group(1), m.group(2).strip(), m.group(3)
        yield lang, info, body


def run(line: str, cwd: Path) -> subprocess.CompletedProcess:
    argv = shlex.split(line)
    if argv[0] == "rm":
        for p in argv[1:]:
            (cwd / p).unlink()
        return subprocess.CompletedProcess(argv, 0, "", "")
    assert argv[0] == "clusterdx", f"the guide runs only clusterdx and rm: {line}"
    env = dict(os.environ, COLUMNS="200")
    env.pop("CLUSTERDX_CONFIG", None)
    return subprocess.run([sys.executable, "-m", "clusterdx", *argv[1:]], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env=env)


@pytest.mark.slow  # runs every command of the guide as a subprocess (about 10 s)
def test_guide_runs_end_to_end(tmp_path):
    files = commands = 0
    for lang, info, body in blocks():
        if info.startswith("file="):
            target = tmp_path / info.removeprefix("file=")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(body)
            files += 1
        elif lang == "console":
            lines = body.splitlines()
            i = 0
            while i < len(lines):
                line = lines[i]
                assert line.startswith("$ "), f"console blocks start with '$ ': {line!r}"
                expected = []
                i += 1
                while i < len(lines) and not lines[i].startswith("$ "):
                    expected.append(lines[i])
                    i += 1
                proc = run(line[2:], tmp_path)
                assert proc.returncode == 0, f"{line}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
                for want in expected:
                    assert want.strip() in proc.stdout, f"{line}: {want!r} not in output:\n{proc.stdout[-3000:]}"
                commands += 1
    assert files >= 8 and commands >= 6
    # the pattern really was added without Python: only YAML and text files were written
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert not [p for p in written if p.suffix == ".py"]
