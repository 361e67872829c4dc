"""The causal graph: root causes -> mechanisms -> observables and symptoms, as a networkx DiGraph.

Edges point from cause to effect. Every root cause must reach the top symptom
(``throughput-gap``): a cause that explains no slowdown has no place in this knowledge base.

A diagnosis needs only two tables of the graph: each root cause's attenuation to every node
downstream, and its strongest path to the top symptom. The compiled knowledge base
(:mod:`clusterdx.engine.kbcache`) stores both, so a diagnosis from it never imports networkx; the
DiGraph itself is built on first use (lint, ``kb graph``).
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import TYPE_CHECKING, Any

from clusterdx.engine.weights import EDGE_WEIGHT

if TYPE_CHECKING:
    import networkx as nx

    from clusterdx.engine.schema import Node

TOP_SYMPTOM = "throughput-gap"


class CausalGraph:
    def __init__(self, nodes: "dict[str, Node]", graph: "nx.DiGraph | None" = None,
                 attenuation: dict[str, dict[str, float]] | None = None,
                 paths: dict[str, list[str]] | None = None):
        self.nodes = nodes
        self._graph = graph
        if attenuation is not None:
            self.__dict__["attenuation"] = attenuation
        self._paths: dict[str, list[str]] = dict(paths or {})
        self._causes_of: dict[str, dict[str, float]] = {}
        self._can_fail: dict[str, bool] = {}

    @classmethod
    def build(cls, nodes: "dict[str, Node]") -> "CausalGraph":
        return cls(nodes=nodes, graph=_digraph(nodes))

    @classmethod
    def from_tables(cls, nodes: "dict[str, Node]", attenuation: dict[str, dict[str, float]],
                    paths: dict[str, list[str]]) -> "CausalGraph":
        """The graph of a compiled knowledge base: the tables a diagnosis reads, the DiGraph on demand."""
        return cls(nodes=nodes, attenuation=attenuation, paths=paths)

    def tables(self) -> dict[str, Any]:
        """What :meth:`from_tables` needs, as plain data (for the compiled knowledge base)."""
        return {"attenuation": self.attenuation, "paths": {r: self.path_to_top(r) for r in self.root_causes()}}

    @property
    def graph(self) -> "nx.DiGraph":
        if self._graph is None:
            self._graph = _digraph(self.nodes)
        return self._graph

    def root_causes(self) -> list[str]:
        return sorted(n for n, node in self.nodes.items() if node.kind == "root_cause")

    def cycles(self) -> list[list[str]]:
        import networkx as nx

        return [c for c in nx.simple_cycles(self.graph)][:10]

    def unreachable_root_causes(self) -> list[str]:
        import networkx as nx

        if TOP_SYMPTOM not in self.graph:
            return self.root_causes()
        return [r for r in self.root_causes() if not nx.has_path(self.graph, r, TOP_SYMPTOM)]

    @cached_property
    def attenuation(self) -> dict[str, dict[str, float]]:
        """cause -> {downstream node: strongest path product of edge weights}; itself is 1.0."""
        import networkx as nx

        out: dict[str, dict[str, float]] = {}
        order = list(nx.topological_sort(self.graph))
        for root in self.root_causes():
            best = {root: 1.0}
            for n in order:
                if n not in best:
                    continue
                for _, succ, data in self.graph.out_edges(n, data=True):
                    w = best[n] * data["weight"]
                    if w > best.get(succ, 0.0):
                        best[succ] = w
            out[root] = best
        return out

    def causes_of(self, node_id: str) -> dict[str, float]:
        """Root causes upstream of ``node_id`` with their attenuation (a copy: callers may keep it)."""
        found = self._causes_of.get(node_id)
        if found is None:
            # the ranking asks this for every evidence item of every re-ranking: look it up once
            found = self._causes_of[node_id] = {r: att[node_id] for r, att in self.attenuation.items()
                                                if node_id in att}
        return dict(found)

    def can_fail(self, node_id: str) -> bool:
        """True when ``node_id`` is, or leads to, a failure the user sees (a node marked ``fails``):
        what a ticket that complains of a hang, crash or error needs a cause to reach."""
        found = self._can_fail.get(node_id)
        if found is None:
            found = self._can_fail[node_id] = any(
                getattr(self.nodes.get(n), "fails", False) for n in {node_id} | downstream(self.nodes, node_id))
        return found

    def path_to_top(self, root: str) -> list[str]:
        """The strongest path from a cause to the top symptom, for explanations."""
        if root in self._paths:
            return list(self._paths[root])
        import networkx as nx

        if TOP_SYMPTOM not in self.graph or not nx.has_path(self.graph, root, TOP_SYMPTOM):
            return [root]
        # the strongest path: the largest product of edge weights is the smallest sum of -log(weight)
        return nx.shortest_path(self.graph, root, TOP_SYMPTOM, weight=lambda u, v, d: -math.log(d["weight"]))

    def neighbourhood(self, focus: str, radius: int = 2) -> "nx.DiGraph":
        import networkx as nx

        und = self.graph.to_undirected(as_view=True)
        keep = nx.single_source_shortest_path_length(und, focus, cutoff=radius)
        return self.graph.subgraph(keep).copy()


def downstream(nodes: "dict[str, Node]", start: str) -> set[str]:
    """Every node reachable from ``start`` along its effect edges (``causes``), ``start`` excluded.
    Plain data, no networkx: load-time checks and the ranking call it on the node table."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        node = nodes.get(todo.pop())
        for edge in getattr(node, "causes", None) or ():
            if edge.node not in seen and edge.node != start:
                seen.add(edge.node)
                todo.append(edge.node)
    return seen


def _digraph(nodes: "dict[str, Node]") -> "nx.DiGraph":
    import networkx as nx

    g = nx.DiGraph()
    for node in nodes.values():
        g.add_node(node.id, kind=node.kind)
    for node in nodes.values():
        for edge in node.causes:
            if edge.node in nodes:
                g.add_edge(node.id, edge.node, weight=EDGE_WEIGHT[edge.strength], strength=edge.strength)
    return g
