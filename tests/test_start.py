"""`clusterdx --help` is served from the text the last run printed, and only that command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]


def _run(args, cache: Path, **extra):
    env = {k: v for k, v in os.environ.items() if k != "CLUSTERDX_NO_CACHE"}
    env.update(CLUSTERDX_CACHE_DIR=str(cache), COLUMNS="80", **extra)
    return subprocess.run([sys.executable, "-m", "clusterdx", *args], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=120)


def test_help_is_kept_and_served_again(tmp_path):
    first = _run(["--help"], tmp_path)
    assert first.returncode == 0 and "diagnose" in first.stdout
    kept = list(tmp_path.glob("help-*.txt"))
    assert len(kept) == 1 and kept[0].read_text() == first.stdout
    # the second run prints what was kept (a marked copy proves it did not rebuild the text)
    kept[0].write_text(first.stdout + "MARK\n")
    second = _run(["--help"], tmp_path)
    assert second.returncode == 0 and second.stdout == first.stdout + "MARK\n"
    # with the cache off, typer builds the help again
    off = _run(["--help"], tmp_path, CLUSTERDX_NO_CACHE="1")
    assert off.stdout == first.stdout


def test_other_commands_and_sub_help_are_not_cached(tmp_path):
    sub = _run(["diagnose", "--help"], tmp_path)
    assert sub.returncode == 0 and "--baseline" in sub.stdout
    bad = _run(["--no-such-option"], tmp_path)
    assert bad.returncode == 2
    assert not list(tmp_path.glob("help-*.txt"))
