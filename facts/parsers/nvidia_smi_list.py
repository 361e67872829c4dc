"""nvidia-smi -L - Command

``nvidia-smi -L`` (``--list-gpus``) prints one line per GPU: its index, product name and UUID,
and under a GPU in MIG mode one line per MIG device. It is the most pasted GPU inventory: the
product name says the model and the form factor ("NVIDIA A100 80GB PCIe", "NVIDIA H100 80GB
HBM3" for SXM), the count says how many GPUs the machine shows. Yields one ``gpu.device`` per GPU
(index, name, UUID) and one ``gpu.summary`` (count and models); MIG lines are counted in the
summary's warnings, not as GPUs. When nvidia-smi failed instead ("No devices were found",
"NVIDIA-SMI has failed ..."), the summary has ``gpus=0`` and that error.

Sample input::

    GPU 0: NVIDIA A100 80GB PCIe (UUID: GPU-5b1c1f0e-3a44-9c1d-8e0b-2f6d0c7a1b11)
    GPU 1: NVIDIA A100 80GB PCIe (UUID: GPU-0d7e2a91-6c55-4e2b-b1a0-9a3f4c8e2d22)
      MIG 3g.40gb     Device  0: (UUID: MIG-1e2f3a4b-5c6d-5e7f-8a9b-0c1d2e3f4a5b)

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "nvidia-smi-list"); parse(doc, ctx)
    >>> [(f.gpu, f.name, f.source.line) for f in ctx.facts if f.fact_type == "gpu.device"]
    [(0, 'NVIDIA A100 80GB PCIe', 1), (1, 'NVIDIA A100 80GB PCIe', 2)]
    >>> s = [f for f in ctx.facts if f.fact_type == "gpu.summary"][0]
    >>> s.gpus, s.models
    (2, ['NVIDIA A100 80GB PCIe'])
    >>> sniff(doc) >= 0.9
    True
    >>> sniff(Document.from_text("GPU 0 is slow, GPU 1 is fine\\n"))
    0.0
"""

from __future__ import annotations

import re

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.gpu import GpuDevice, GpuSummary


SAMPLE = """GPU 0: NVIDIA A100 80GB PCIe (UUID: GPU-5b1c1f0e-3a44-9c1d-8e0b-2f6d0c7a1b11)
GPU 1: NVIDIA A100 80GB PCIe (UUID: GPU-0d7e2a91-6c55-4e2b-b1a0-9a3f4c8e2d22)
  MIG 3g.40gb     Device  0: (UUID: MIG-1e2f3a4b-5c6d-5e7f-8a9b-0c1d2e3f4a5b)
"""

_GPU = lazyre.compile(r"^\s{0,4}GPU (\d{1,3}): (\S[^(\n]{0,80}?)\s{0,4}\(UUID: (GPU-[0-9a-fA-F-]{8,40})\)\s*$")
_MIG = lazyre.compile(r"^\s{1,12}MIG \S{1,20}\s{1,10}Device\s{1,4}\d{1,3}: \(UUID: MIG-[0-9a-fA-F-]{8,40}\)\s*$")
_FAILED = lazyre.compile(r"^\s*(No devices were found|NVIDIA-SMI has failed because[^\n]{0,200})")


def sniff(doc: Document) -> float:
    lines = [ln for ln in doc.lines[:400] if ln.strip()]
    if not lines:
        return 0.0
    gpus = sum(bool(_GPU.match(ln)) for ln in lines)
    mig = sum(bool(_MIG.match(ln)) for ln in lines)
    if gpus and gpus + mig >= 0.8 * len(lines):
        return 0.95
    if gpus:
        return 0.5
    if doc.command and re.search(r"\bnvidia-smi\s+(?:-L|--list-gpus)\b", doc.command) and _FAILED.match(lines[0]):
        return 0.9
    return 0.0


def parse(doc: Document, ctx: ParseContext) -> None:
    models: list[str] = []
    first = last = None
    count = mig = 0
    for i, ln in enumerate(doc.lines):
        if m := _GPU.match(ln):
            name = m.group(2).strip()
            ctx.add(GpuDevice, i, gpu=int(m.group(1)), name=name, uuid=m.group(3))
            if name not in models:
                models.append(name)
            count += 1
            first = i if first is None else first
            last = i
        elif _MIG.match(ln):
            mig += 1
        elif (f := _FAILED.match(ln)) and not count:
            ctx.add(GpuSummary, i, gpus=0, error=f.group(1).strip())
            return
    if not count:
        raise NotApplicable("no 'GPU N: name (UUID: ...)' line")
    if mig:
        ctx.warn(first, f"{mig} MIG device line(s) not counted as GPUs")
    ctx.add(GpuSummary, first, last, gpus=count, models=models)


FORMATS = [
    Format(
        name="nvidia-smi-list",
        command="nvidia-smi -L",
        facts=("gpu.device", "gpu.summary"),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\bnvidia-smi\s+(?:-L|--list-gpus)\b",),
        description="one line per GPU: index, product name and UUID (nvidia-smi -L)",
    )
]
