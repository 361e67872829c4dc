"""The HTML report: one self-contained page, every input string escaped, the graph as inline SVG."""

from __future__ import annotations

from html.parser import HTMLParser

from clusterdx.explainers.html import render, svg_graph
from clusterdx.explainers.common import causal_graph


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def parse(html: str) -> Page:
    p = Page()
    p.feed(html)
    p.close()
    return p


def test_page_is_self_contained(docker_report):
    html = render(docker_report)
    page = parse(html)
    names = [t for t, _ in page.tags]
    assert "script" not in names and "link" not in names and "img" not in names and "iframe" not in names
    for _, attrs in page.tags:
        assert "src" not in attrs
        assert not str(attrs.get("href", "")).startswith(("http", "//"))
    assert names.count("style") == 1 and "svg" in names
    text = "".join(page.text)
    for h in docker_report.hypotheses:
        assert h.id in text
    for heading in ("Ranked hypotheses", "Causal path of the leading hypothesis", "What we could not check",
                    "Next probes", "Inputs", "Remediation", "Verify the fix", "Evidence"):
        assert heading in text
    assert docker_report.next_probes[0].command in text
    assert "HOSTNAME=gpu-h100-021" in text  # quoted attachment line


def test_crafted_input_shows_as_text(evil_report):
    html = render(evil_report)
    page = parse(html)
    assert all(t != "script" for t, _ in page.tags)
    assert "<script" not in html.lower()
    text = "".join(page.text)
    # the evidence message built from the crafted line and the quoted line itself, both as text
    assert 'could not load the topology file /opt/topo/<script>alert(1)</script>|`x`.xml' in text
    assert "NCCL WARN Could not open XML topology file /opt/topo/<script>alert(1)</script>" in text


def test_svg_layout_by_depth(docker_report):
    g, titles, path = causal_graph(docker_report)
    svg = svg_graph(g, titles, path[0], path)
    page = parse(svg)
    rects = [a for t, a in page.tags if t == "rect"]
    assert len(rects) == g.number_of_nodes()
    xs = {float(a["x"]) for a in rects}
    assert len(xs) == len(path)  # one column per step of the leading path, root cause to throughput-gap
    assert sum(1 for t, a in page.tags if t == "path" and a.get("stroke-width") == "3") == len(path) - 1
