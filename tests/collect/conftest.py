"""Fake tools on PATH: small shell scripts that print recorded outputs, hang or fail."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
FORMATS = ROOT / "tests" / "fixtures" / "formats"


def make_tool(bindir: Path, name: str, body: str) -> Path:
    path = bindir / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def cat_tool(bindir: Path, name: str, cases: dict[str, Path | str], default: Path | str | None = None) -> Path:
    """A tool that prints a recorded output chosen by its arguments (``"$*"``)."""
    lines = ['case "$*" in']
    for args, out in cases.items():
        lines.append(f'  "{args}") {_emit(out)} ;;')
    lines.append(f'  *) {_emit(default) if default is not None else "echo unexpected arguments: $* >&2; exit 2"} ;;')
    lines.append("esac")
    return make_tool(bindir, name, "\n".join(lines))


def _emit(out: Path | str) -> str:
    if isinstance(out, Path):
        return f"/bin/cat '{out}'"
    return "printf '%s\\n' " + " ".join("'" + s.replace("'", "'\\''") + "'" for s in out.splitlines())


@pytest.fixture
def bindir(tmp_path: Path) -> Path:
    d = tmp_path / "bin"
    d.mkdir()
    return d


def run_cli(*args: str, path: str | None = None, cwd: Path | None = None, timeout: float = 60,
            env_extra: dict[str, str] | None = None):
    """``clusterdx ARGS`` run in this process (tests/clirun.py) with ``PATH`` set to ``path``:
    the probes it starts are real processes all the same; what is saved is the interpreter's
    start-up and imports, once per call. :func:`run_process` is the real process."""
    from tests.clirun import cli

    return cli(*args, path=path, cwd=cwd or ROOT, env=env_extra, timeout=timeout)


def run_process(*args: str, path: str | None = None, cwd: Path | None = None, timeout: float = 60,
                env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if path is not None:
        env["PATH"] = path
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "clusterdx", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd or ROOT, env=env)
