"""CLI conventions: whole one-line descriptions in listings, POSIX usage lines, and fleet exit
codes that gate a pipeline (--fail-on, a node that could not be diagnosed)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, TYPER_USE_RICH="0", COLUMNS="100")
    return subprocess.run([sys.executable, "-m", "clusterdx", *args], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=300)


def test_listings_show_whole_descriptions():
    for args in ([], ["kb"]):
        out = cli(*args, "--help").stdout
        commands = out[out.index("Commands:"):]
        assert "..." not in commands, commands


def test_usage_lines_name_arguments_plainly():
    assert "clusterdx fleet [OPTIONS] BUNDLE...\n" in cli("fleet", "-h").stdout
    assert "clusterdx check [OPTIONS] [BUNDLE]...\n" in cli("check", "-h").stdout
    assert "clusterdx diagnose [OPTIONS] [PATH]...\n" in cli("diagnose", "-h").stdout
    for args in (["check", "-h"], ["fleet", "-h"]):
        out = cli(*args).stdout
        assert "{" not in out.splitlines()[0]
        # the options both commands share say what they do, in the same words
        for words in ("Output format", "Write the", "Keep secret-looking values", "Site configuration file"):
            assert words in out, (args, words)


def test_fleet_exits_8_when_a_node_is_not_diagnosed_and_4_on_fail_on(tmp_path):
    for n in ("a", "b"):
        (tmp_path / n).mkdir()
        (tmp_path / n / "sysctl.txt").write_text("kernel.numa_balancing = 1\n")
    ok = cli("fleet", str(tmp_path), "-j", "1", "--no-progress")
    assert ok.returncode == 0, ok.stderr
    assert cli("fleet", str(tmp_path), "-j", "1", "--no-progress", "--fail-on", "0.9").returncode == 4
    assert cli("fleet", str(tmp_path), "-j", "1", "--no-progress", "--fail-on", "0.999").returncode == 0
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "blob.bin").write_bytes(b"\x00\x01garbage")
    bad = cli("fleet", str(tmp_path), "-j", "1", "--no-progress")
    assert bad.returncode == 8
    assert "1 of 3 nodes not diagnosed: c" in bad.stderr
