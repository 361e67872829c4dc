"""Control characters in input names (ESC sequences in a file name) never reach the terminal,
Markdown or HTML raw."""

from __future__ import annotations

from clusterdx.engine.diagnose import collect_paths, diagnose
from clusterdx.explainers import renderer


def test_escape_sequences_in_file_names_are_shown_not_sent(kb, tmp_path):
    name = "sysctl\x1b[2J\x07.txt"
    (tmp_path / name).write_text("kernel.numa_balancing = 1\n")
    report = diagnose(collect_paths([tmp_path]), kb=kb)
    assert any("\x1b" in i.path or "\\x1b" in i.path for i in report.inputs)
    for fmt in ("text", "markdown", "html"):
        out = renderer(fmt)(report, verbose=True) if fmt == "text" else renderer(fmt)(report)
        assert "\x1b" not in out and "\x07" not in out, fmt
        assert "\\x1b" in out, fmt
