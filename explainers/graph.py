"""The causal graph as DOT or Mermaid text (no reasoning: the graph comes from the engine)."""

from __future__ import annotations

import re

import networkx as nx

SHAPES = {"root_cause": "box", "mechanism": "ellipse", "observable": "note", "symptom": "octagon"}
MERMAID = {"root_cause": ("[", "]"), "mechanism": ("(", ")"), "observable": ("[/", "/]"), "symptom": ("{{", "}}")}


def _mid(node: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", node)


def _label(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', "'")


def to_dot(graph: nx.DiGraph, titles: dict[str, str], focus: str | None = None) -> str:
    lines = ["digraph clusterdx {", "  rankdir=LR;", '  node [fontname="Helvetica", fontsize=10];']
    for n, data in sorted(graph.nodes(data=True)):
        kind = data.get("kind", "mechanism")
        style = ', style="filled", fillcolor="#ffe9a8"' if n == focus else ""
        lines.append(f'  "{_label(n)}" [shape={SHAPES.get(kind, "ellipse")}, '
                     f'tooltip="{_label(titles.get(n, n))}"{style}];')
    for a, b, data in sorted(graph.edges(data=True)):
        width = {"weak": 0.6, "moderate": 1.2, "strong": 2.0}.get(data.get("strength", "moderate"), 1.0)
        lines.append(f'  "{_label(a)}" -> "{_label(b)}" [penwidth={width}];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_mermaid(graph: nx.DiGraph, titles: dict[str, str], focus: str | None = None,
               path: list[str] | None = None) -> str:
    lines = ["flowchart LR"]
    for n, data in sorted(graph.nodes(data=True)):
        left, right = MERMAID.get(data.get("kind", "mechanism"), ("(", ")"))
        lines.append(f'  {_mid(n)}{left}"{_label(n)}"{right}')
    for a, b, data in sorted(graph.edges(data=True)):
        arrow = "==>" if path and a in path and b in path else "-->"
        lines.append(f"  {_mid(a)} {arrow} {_mid(b)}")
    if focus:
        lines.append(f"  style {_mid(focus)} fill:#ffe9a8")
    return "\n".join(lines) + "\n"
