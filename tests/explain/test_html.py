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


def test_no_edge_runs_under_a_box_it_does_not_join():
    """An edge that skips a column takes a free slot there; it never crosses another node's box."""
    import networkx as nx

    from clusterdx.explainers.html import NODE_H, NODE_W, layout

    g = nx.DiGraph()
    # a -> b -> c -> d is the leading path; a -> d and x -> d skip columns where b and c sit
    g.add_edges_from([("a", "b"), ("b", "c"), ("c", "d"), ("a", "d"), ("x", "c"), ("x", "d")])
    pos, lines, _w, _h = layout(g, ["a", "b", "c", "d"])

    def inside(px, py, n):
        x, y = pos[n]
        return x < px < x + NODE_W and y < py < y + NODE_H

    for (a, b), pts in lines.items():
        assert pts[0] == (pos[a][0] + NODE_W, pos[a][1] + NODE_H / 2)
        assert pts[-1] == (pos[b][0], pos[b][1] + NODE_H / 2)
        for (x1, y1), (x2, y2) in zip(pts, pts[1:]):
            # sampled along the segment's straight line and its curve's bounding box corners
            for t in (0.1, 0.3, 0.5, 0.7, 0.9):
                for py in (y1 + (y2 - y1) * t, y1, y2):
                    px = x1 + (x2 - x1) * t
                    assert not any(inside(px, py, n) for n in g), f"{a}->{b} crosses a box at {px:.0f},{py:.0f}"
    # the skipping edge really needed a detour: drawn straight it would cross b or c
    assert len(lines[("a", "d")]) > 2


def test_answer_and_probes_come_first_with_contents_and_folded_lists(docker_report):
    page = render(docker_report)
    order = [page.index(f'id="{i}"') for i in ("answer", "next-probes", "ranking", "checked", "not-evaluated")]
    assert order == sorted(order)
    toc = page[page.index('<nav class="toc"'):page.index("</nav>")]
    for anchor in ("#answer", "#next-probes", "#ranking", "#not-evaluated", "#inputs"):
        assert f'href="{anchor}"' in toc and f'id="{anchor[1:]}"' in page
    # the not-checked rules are in <details>, never a bare list of hundreds of items
    nc = page[page.index('id="not-evaluated"'):page.index('id="inputs"')]
    assert nc.count("<details>") >= 1 and nc.count("<li>") == len(docker_report.not_evaluated)
    top = docker_report.hypotheses[0]
    answer = page[page.index('id="answer"'):page.index('id="next-probes"')]
    assert top.remediation[0].title.split(" ")[0] in answer and "Expect:" in answer
