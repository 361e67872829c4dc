"""The terminal report keeps bracketed labels and uses the terminal's width."""

from pathlib import Path

from clusterdx.engine.diagnose import collect_paths, diagnose
from clusterdx.explainers.text import render

CASE = Path(__file__).resolve().parents[2] / "kb" / "cases" / "cp-stacked-cstates-numa-balancing" / "input"


def test_bracketed_labels_survive_rich_markup():
    text = render(diagnose(collect_paths([CASE])), width=100)
    assert "+ [strong]" in text or "+ [moderate]" in text or "+ [weak]" in text
    assert "[sysctl]" in text or "[lscpu]" in text or "[cpupower" in text


def test_default_width_is_the_consoles(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    text = render(diagnose(collect_paths([CASE])))
    # every line wraps at the console width (80 here), not the old fixed 110
    assert max(len(line) for line in text.splitlines()) <= 80
