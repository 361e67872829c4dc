"""The causal graph: root causes -> mechanisms -> observables and symptoms, as a networkx DiGraph.

Edges point from cause to effect. Every root cause must reach the top symptom
(``throughput-gap``): a cause that explains no slowdown has no place in this knowledge base.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import networkx as nx

from clusterdx.engine.schema import Node
from clusterdx.engine.weights import EDGE_WEIGHT

TOP_SYMPTOM = "throughput-gap"


@dataclass
class CausalGraph:
    nodes: dict[str, Node]
    graph: nx.DiGraph = field(default_factory=nx.DiGraph)

    @classmethod
    def build(cls, nodes: dict[str, Node]) -> "CausalGraph":
        g = nx.DiGraph()
        for node in nodes.values():
            g.add_node(node.id, kind=node.kind)
        for node in nodes.values():
            for edge in node.causes:
                if edge.node in nodes:
                    g.add_edge(node.id, edge.node, weight=EDGE_WEIGHT[edge.strength], strength=edge.strength)
        return cls(nodes=nodes, graph=g)

    def root_causes(self) -> list[str]:
        return sorted(n for n, node in self.nodes.items() if node.kind == "root_cause")

    def cycles(self) -> list[list[str]]:
        return [c for c in nx.simple_cycles(self.graph)][:10]

    def unreachable_root_causes(self) -> list[str]:
        if TOP_SYMPTOM not in self.graph:
            return self.root_causes()
        return [r for r in self.root_causes() if not nx.has_path(self.graph, r, TOP_SYMPTOM)]

    @cached_property
    def attenuation(self) -> dict[str, dict[str, float]]:
        """cause -> {downstream node: strongest path product of edge weights}; itself is 1.0."""
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
        """Root causes upstream of ``node_id`` with their attenuation."""
        return {r: att[node_id] for r, att in self.attenuation.items() if node_id in att}

    def path_to_top(self, root: str) -> list[str]:
        """The strongest path from a cause to the top symptom, for explanations."""
        if TOP_SYMPTOM not in self.graph or not nx.has_path(self.graph, root, TOP_SYMPTOM):
            return [root]
        # the strongest path: the largest product of edge weights is the smallest sum of -log(weight)
        return nx.shortest_path(self.graph, root, TOP_SYMPTOM, weight=lambda u, v, d: -math.log(d["weight"]))

    def neighbourhood(self, focus: str, radius: int = 2) -> "nx.DiGraph":
        und = self.graph.to_undirected(as_view=True)
        keep = nx.single_source_shortest_path_length(und, focus, cutoff=radius)
        return self.graph.subgraph(keep).copy()
