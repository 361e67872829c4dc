"""kubectl describe node - Command

The GPU labels NVIDIA's GPU feature discovery puts on a Kubernetes node, as users paste them:
the ``Labels:`` block of ``kubectl describe node`` (indented ``key=value`` lines), the LABELS
column of ``kubectl get node --show-labels`` (``key=value`` joined by commas, one node per row),
the ``labels:`` map of ``kubectl get node -o yaml`` (``key: value``), or the bare lines cut out
of any of them. Only ``nvidia.com/*`` labels are read: ``gpu.product`` (the nvidia-smi name with
spaces turned to dashes, ``NVIDIA-A100-SXM4-80GB``), ``gpu.count``, ``cuda.driver-version.full``
(or ``cuda.driver.major/minor/rev``) and ``cuda.runtime-version.full`` (or ``cuda.runtime.major/
minor``). Each node's labels yield one ``gpu.summary`` (its GPU model and count, driver and CUDA
versions). A node starts at its name (``Name:`` of describe, ``name:`` of the YAML, the first
column of ``--show-labels``) or, without one, where a label repeats, as when a ticket pastes two
nodes' blocks one after the other; the facts stay on the input's node (which host a name is, is
node resolution's business, :mod:`clusterdx.facts.nodes`). A node whose labels
name neither a GPU product nor a count yields nothing: driver labels alone do not say what GPUs
the node has, and a ``gpu.summary`` without GPUs would read as "no GPU found".

Sample input::

    Name:               dgx-07
    Labels:             beta.kubernetes.io/arch=amd64
                        nvidia.com/cuda.driver-version.full=550.54.15
                        nvidia.com/cuda.runtime-version.full=12.4
                        nvidia.com/gpu.count=8
                        nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "k8s-node-labels"); parse(doc, ctx)
    >>> s = ctx.facts[0]
    >>> s.gpus, s.models, s.driver_version, s.cuda_version, s.source.line
    (8, ['NVIDIA-A100-SXM4-80GB'], '550.54.15', '12.4', 6)
    >>> sniff(doc) >= 0.8
    True
    >>> sniff(Document.from_text("nvidia.com/gpu: 8\\n"))
    0.0
"""

from __future__ import annotations

import re

from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.gpu import GpuSummary

SAMPLE = """\
Name:               dgx-07
Labels:             beta.kubernetes.io/arch=amd64
                    nvidia.com/cuda.driver-version.full=550.54.15
                    nvidia.com/cuda.runtime-version.full=12.4
                    nvidia.com/gpu.count=8
                    nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB
"""

#: one label: ``nvidia.com/<dotted name>`` then ``=`` (describe, --show-labels) or ``: `` (YAML).
#: The resource ``nvidia.com/gpu: 8`` of Capacity/Allocatable has no dot and is not a label.
_COUNT = re.compile(r"[0-9]{1,4}")
_LABEL = re.compile(r"(?<![\w.\-/])nvidia\.com/([a-z][\w\-]*\.[\w.\-]+)\s{0,2}(?:=|:\s{1,40})\s{0,2}\"?([\w.\-]{1,80})\"?")
_NAME = re.compile(r"^\s{0,4}(?:Name:\s{1,40}|name:\s{1,4})([\w.\-]{1,253})\s*$")
_SHOW_ROW = re.compile(r"^([\w.\-]{1,253})\s{1,40}(?:Ready|NotReady|Unknown)\S*\s")
_WANTED = ("gpu.product", "gpu.count", "cuda.driver-version.full", "cuda.driver.major", "cuda.driver.minor",
           "cuda.driver.rev", "cuda.runtime-version.full", "cuda.runtime.major", "cuda.runtime.minor")


def _labels(line: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in _LABEL.finditer(line)]


def sniff(doc: Document) -> float:
    lines = [ln for ln in doc.lines[:400] if ln.strip()]
    if not lines:
        return 0.0
    labelled = [ln for ln in lines if _labels(ln)]
    if not any(k in _WANTED for ln in labelled for k, _ in _labels(ln)):
        return 0.0
    share = len(labelled) / len(lines)
    if share >= 0.5 or any(_SHOW_ROW.match(ln) for ln in labelled):
        return 0.85
    return 0.6 if len(labelled) >= 3 else 0.0


class _Node:
    def __init__(self, name: str | None, line: int):
        self.name, self.line = name, line
        self.labels: dict[str, str] = {}
        self.first: dict[str, int] = {}


def _nodes(doc: Document) -> list[_Node]:
    nodes: list[_Node] = []
    cur: _Node | None = None
    for i, ln in enumerate(doc.lines):
        row = _SHOW_ROW.match(ln)
        named = _NAME.match(ln)
        name = row.group(1) if row else named.group(1) if named else None
        if name is not None:
            cur = _Node(name, i)
            nodes.append(cur)
        for key, value in _labels(ln):
            if key not in _WANTED:
                continue
            if cur is None or key in cur.labels:
                # the same label again without a node name: the next node's block
                cur = _Node(None, i)
                nodes.append(cur)
            cur.labels[key] = value
            cur.first.setdefault(key, i)
    return [n for n in nodes if n.labels]


def _version(lab: dict[str, str], full: str, parts: tuple[str, ...]) -> str:
    if lab.get(full):
        return lab[full]
    got = [lab.get(p) for p in parts]
    got = got[: next((k for k, v in enumerate(got) if not v), len(got))]
    return ".".join(v for v in got if v) if len(got) >= 2 else ""


def parse(doc: Document, ctx: ParseContext) -> None:
    found = False
    for n in _nodes(doc):
        lab = n.labels
        product = lab.get("gpu.product", "")
        # isdigit() takes superscripts that int() refuses
        count = int(lab["gpu.count"]) if _COUNT.fullmatch(lab.get("gpu.count", "")) else None
        if not product and count is None:
            continue
        anchor = n.first.get("gpu.product", n.first.get("gpu.count", n.line))
        ctx.add(GpuSummary, anchor, gpus=count or 0, attached_gpus=count, models=[product] if product else [],
                driver_version=_version(lab, "cuda.driver-version.full", ("cuda.driver.major", "cuda.driver.minor", "cuda.driver.rev")),
                cuda_version=_version(lab, "cuda.runtime-version.full", ("cuda.runtime.major", "cuda.runtime.minor")))
        found = True
    if not found:
        raise NotApplicable("no node labels naming a GPU product or count")


FORMATS = [
    Format(
        name="k8s-node-labels",
        command="kubectl describe node <node>",
        facts=("gpu.summary",),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\bkubectl\b.*\bdescribe\s+nodes?\b", r"\bkubectl\b.*\bget\s+nodes?\b.*--show-labels\b",
                          r"\bkubectl\b.*\bget\s+nodes?\b.*-o\s*=?\s*(?:yaml|json)\b"),
        description="GPU feature discovery labels of a Kubernetes node (describe node, --show-labels, -o yaml): "
                    "GPU product and count, driver and CUDA versions",
    )
]
