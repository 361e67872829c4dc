"""NUMA layout of a node: which CPUs and how much memory each node has, and how far apart they are."""

from clusterdx.facts.base import Fact


class NumaNode(Fact):
    fact_type = "numa.node"
    doc = "One NUMA node: its CPUs (empty for memory-only nodes such as GH200 GPU memory), memory, distances."
    node_id: int
    cpus: list[int] = []
    #: len(cpus), so rules can test for CPU-less nodes without list arithmetic
    cpu_count: int = 0
    #: None when the input does not show memory (lscpu)
    size_mb: float | None = None
    free_mb: float | None = None
    #: this node's row of the distance matrix, in node order of the header; [] when unknown
    distances: list[int] = []
