"""lsmod - Command

Output of ``lsmod`` (``Module  Size  Used by`` header, then ``name size refcount [holders]``)
and the raw ``/proc/modules`` it is built from (``name size refcount holders, state address
(taint)``). One ``kernel.module`` per module and one ``kernel.modules_summary`` listing the
GPU/RDMA-relevant modules present (nvidia, nvidia_uvm, nvidia_peermem / nv_peer_mem, gdrdrv,
mlx5_core, mlx5_ib, ib_core, ib_uverbs, rdma_ucm, nvidia_fs ...). A listing without the lsmod
header, or a command piped through ``grep``, is marked ``complete=False``: a module missing
from a filtered listing may still be loaded.

Sample input::

    Module                  Size  Used by
    nvidia_uvm           4956160  4
    nvidia_drm            122880  0
    nvidia_modeset       1355776  1 nvidia_drm
    nvidia              54226944  105 nvidia_uvm,nvidia_modeset
    mlx5_ib               471040  0
    ib_uverbs             196608  2 rdma_ucm,mlx5_ib
    mlx5_core            2211840  1 mlx5_ib

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "lsmod"); parse(doc, ctx)
    >>> m = [f for f in ctx.facts if f.fact_type == "kernel.module"][3]
    >>> (m.name, m.size, m.refcount, m.used_by, m.source.line)
    ('nvidia', 54226944, 105, ['nvidia_uvm', 'nvidia_modeset'], 5)
    >>> s = ctx.facts[-1]
    >>> (s.count, s.peermem_loaded, s.complete, "nvidia_peermem" in s.names, "mlx5_ib" in s.names)
    (7, False, True, False, True)
    >>> sniff(doc) > 0.9
    True
"""

from __future__ import annotations

import re

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.modules import RELEVANT_MODULES, KernelModule, KernelModulesSummary


SAMPLE = """\
Module                  Size  Used by
nvidia_uvm           4956160  4
nvidia_drm            122880  0
nvidia_modeset       1355776  1 nvidia_drm
nvidia              54226944  105 nvidia_uvm,nvidia_modeset
mlx5_ib               471040  0
ib_uverbs             196608  2 rdma_ucm,mlx5_ib
mlx5_core            2211840  1 mlx5_ib
"""

_HEADER = lazyre.compile(r"^\s*Module\s+Size\s+Used by\s*$")
_LSMOD = lazyre.compile(r"^\s*(\w+)\s+(\d+)\s+(-?\d+|-)(?:\s+(\S.*?))?\s*$")
_PROC = lazyre.compile(
    r"^\s*(\w+)\s+(\d+)\s+(\d+|-)\s+(\S+)\s+(Live|Loading|Unloading)\s+0x[0-9a-fA-F]+(?:\s+\(([A-Z+-]*)\))?\s*$")
_FILTER = lazyre.compile(r"\|\s*(?:grep|egrep|fgrep|rg|awk|sed|head|tail)\b|\bgrep\b")
_PEERMEM = ("nvidia_peermem", "nv_peer_mem")


def sniff(doc: Document) -> float:
    lines = [ln for ln in doc.lines[:200] if ln.strip()]
    if not lines:
        return 0.0
    if any(_HEADER.match(ln) for ln in lines[:5]):
        return 0.95
    if sum(1 for ln in lines if _PROC.match(ln)) > 0:
        return 0.0
    hits = sum(1 for ln in lines if _LSMOD.match(ln))
    if hits >= 2 and hits / len(lines) >= 0.8:
        return 0.55
    return 0.0


def sniff_proc_modules(doc: Document) -> float:
    lines = [ln for ln in doc.lines[:200] if ln.strip()]
    if not lines:
        return 0.0
    hits = sum(1 for ln in lines if _PROC.match(ln))
    return 0.95 * hits / len(lines) if hits else 0.0


def parse(doc: Document, ctx: ParseContext) -> None:
    _parse(doc, ctx, proc=False)


def parse_proc_modules(doc: Document, ctx: ParseContext) -> None:
    _parse(doc, ctx, proc=True)


def _parse(doc: Document, ctx: ParseContext, proc: bool) -> None:
    header = False
    names: list[str] = []
    first = last = None
    for i, line in enumerate(doc.lines):
        if not line.strip():
            continue
        if _HEADER.match(line):
            header = True
            continue
        m = _PROC.match(line)
        if m:
            holders = [h for h in m.group(4).split(",") if h and h != "-"]
            ctx.add(KernelModule, i, name=m.group(1), size=int(m.group(2)), refcount=_ref(m.group(3)),
                    used_by=holders, state=m.group(5), taint=m.group(6) or "")
        else:
            m = _LSMOD.match(line)
            if not m:
                ctx.warn(i, f"unrecognized line: {line.strip()[:80]}")
                continue
            rest = (m.group(4) or "").strip()
            holders = [h for h in re.split(r"[,\s]+", rest) if h and h not in ("-", "[permanent]")]
            ctx.add(KernelModule, i, name=m.group(1), size=int(m.group(2)), refcount=_ref(m.group(3)),
                    used_by=holders, state="permanent" if "[permanent]" in rest else "")
        names.append(m.group(1))
        first = i if first is None else first
        last = i
    if first is None:
        if header:  # an lsmod with only its header: no module loaded (e.g. a container view)
            ctx.add(KernelModulesSummary, 0, count=0, complete=not _filtered(doc))
            return
        raise NotApplicable("no module lines")
    present = set(names)
    complete = (header or proc) and not _filtered(doc)
    ctx.add(
        KernelModulesSummary, first, last, count=len(names),
        names=[n for n in RELEVANT_MODULES if n in present],
        peermem_loaded=any(n in present for n in _PEERMEM),
        gdrcopy_loaded="gdrdrv" in present, complete=complete,
    )


def _filtered(doc: Document) -> bool:
    return bool(doc.command and _FILTER.search(doc.command))


def _ref(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


FORMATS = [
    Format(
        name="lsmod",
        command="lsmod",
        facts=("kernel.module", "kernel.modules_summary"),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\blsmod\b",),
        description="lsmod: loaded kernel modules (size, refcount, holders)",
    ),
    Format(
        name="proc-modules",
        command="cat /proc/modules",
        facts=("kernel.module", "kernel.modules_summary"),
        sniff=sniff_proc_modules,
        parse=parse_proc_modules,
        command_patterns=(r"/proc/modules\b",),
        description="/proc/modules: loaded kernel modules with state and taint flags",
    ),
]
