"""The HTML report in headless Chromium: visible text, no injected script, a non-trivial screenshot."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from clusterdx.explainers.html import render

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
BROWSER = next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no Chromium on PATH (.ci/run installs it from the "
                                "system packages where apt-get and root are available)")


def chromium(tmp_path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                           "--disable-component-update", "--disable-sync", "--no-first-run",
                           f"--user-data-dir={tmp_path / 'profile'}", *args],
                          capture_output=True, text=True, timeout=60)


class Visible(HTMLParser):
    SKIP = {"style", "title", "head"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag not in ("meta", "br", "link", "input", "path", "rect"):
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if tag in self.stack:
            while self.stack and self.stack.pop() != tag:
                pass

    def handle_data(self, data):
        if not self.SKIP & set(self.stack):
            self.text.append(data)


def test_page_in_headless_chromium(tmp_path, evil_report):
    page = tmp_path / "report.html"
    page.write_text(render(evil_report), encoding="utf-8")
    proc = chromium(tmp_path, "--dump-dom", page.as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = Visible()
    dom.feed(proc.stdout)
    assert "script" not in dom.tags, "a script element reached the DOM"
    text = " ".join(dom.text)
    for h in evil_report.hypotheses:
        assert h.id in text
    assert "<script>alert(1)</script>" in text
    assert "Ranked hypotheses" in text and "What we could not check" in text
    # the answer and the next probes open the page, after a table of contents; long lists fold
    assert "nav" in dom.tags and "details" in dom.tags
    assert text.index("Answer") < text.index("Next probes") < text.index("Ranked hypotheses") \
        < text.index("What we could not check")

    shot = tmp_path / "report.png"
    proc = chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,1600", "--hide-scrollbars", page.as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 10_000
