"""NCCL topology XML - File

The topology NCCL detected, written by ``NCCL_TOPO_DUMP_FILE=topo.xml`` (or the file given to
``NCCL_TOPO_FILE``, e.g. a cloud's ``/var/run/nvidia-topologyd/virtualTopology.xml``). Root
``<system version="1">``; ``<cpu numaid affinity arch vendor familyid modelid>`` per NUMA node;
nested ``<pci busid class link_speed link_width>`` elements for switches (class ``0x0604xx``)
and devices; ``<gpu dev sm rank gdr>`` with ``<nvlink target count tclass>`` children;
``<nic>`` with ``<net name dev speed port gdr ...>`` (speed in Mb/s).

One ``nccl.topo_xml`` summary and one ``nccl.topo_xml_gpu`` per GPU. ``flattened`` is True when
every GPU and NIC ``<pci>`` hangs directly under a ``<cpu>`` (no PCIe switch level): the view a
VM without a topology file gives NCCL, which then cannot pair GPUs with their local NICs.
``nic_local`` is True when a NIC sits under the same PCI switch as the GPU. Parsed with
defusedxml (no entities, no DTD).

Users paste the head of a dump (``cat topo.xml`` cut where the post or the terminal ended). A
document that is only cut short (every closing tag matches its opening one, the last tag maybe
half written) is closed where it stops and parsed: the summary says ``truncated`` and counts only
what the excerpt shows, with a warning on the line where it ends. Mismatched tags stay an error.

Sample input::

    <system version="1">
      <cpu numaid="0" affinity="0000ffff" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">
        <pci busid="0000:15:00.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">
          <pci busid="0000:17:00.0" class="0x020700" link_speed="32.0 GT/s PCIe" link_width="16">
            <nic><net name="mlx5_0" dev="0" speed="400000" port="1" gdr="1"/></nic>
          </pci>
          <pci busid="0000:18:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">
            <gpu dev="0" sm="90" rank="0" gdr="1"><nvlink target="0000:05:00.0" count="18" tclass="0x068000"/></gpu>
          </pci>
        </pci>
      </cpu>
    </system>

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "nccl-topo-xml"); parse(doc, ctx)
    >>> s = ctx.facts[0]
    >>> s.cpus, s.gpus, s.nics, s.nets, s.net_speeds_mbps, s.nvlinks, s.flattened
    (1, 1, 1, ['mlx5_0'], [400000], 18, False)
    >>> g = ctx.facts[1]
    >>> g.busid, g.numa, g.nic_local, g.gdr, g.source.line
    ('0000:18:00.0', '0', True, 1, 8)
    >>> sniff(doc) > 0.9
    True
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as StdET
from typing import Iterator

import defusedxml.ElementTree as ET
from defusedxml import DefusedXmlException

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.ncclcfg import NcclTopoXml, NcclTopoXmlGpu

SAMPLE = """\
<system version="1">
  <cpu numaid="0" affinity="0000ffff" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">
    <pci busid="0000:15:00.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">
      <pci busid="0000:17:00.0" class="0x020700" link_speed="32.0 GT/s PCIe" link_width="16">
        <nic><net name="mlx5_0" dev="0" speed="400000" port="1" gdr="1"/></nic>
      </pci>
      <pci busid="0000:18:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">
        <gpu dev="0" sm="90" rank="0" gdr="1"><nvlink target="0000:05:00.0" count="18" tclass="0x068000"/></gpu>
      </pci>
    </pci>
  </cpu>
</system>
"""

MAX_XML_CHARS = 16 * 1024 * 1024
MAX_MENDED_CHARS = 1024 * 1024


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    t = text.strip()
    try:
        return int(t, 16) if t.lower().startswith("0x") else int(float(t)) if re.fullmatch(r"[+-]?\d+(?:\.\d*)?", t) else None
    except (ValueError, OverflowError):
        return None


def _walk(el, parents: tuple) -> Iterator[tuple[object, tuple]]:
    yield el, parents
    for child in list(el):
        yield from _walk(child, parents + (el,))


def _start(doc: Document) -> int:
    for i, ln in enumerate(doc.lines[:500]):
        s = ln.lstrip()
        if s.startswith("<?xml") or s.startswith("<system") or s.startswith("<!--"):
            return i
    raise NotApplicable("no <system> element")


_TAG = re.compile(r"<!--.*?-->|<\?.*?\?>|<(/?)([A-Za-z_][\w.:-]*)[^<>]*?(/?)>", re.S)


def _closed(text: str) -> tuple[str, int] | None:
    """``text`` with the elements a cut left open closed, and how many; None when the tags do not
    nest (a malformed document, not a cut one) or nothing is open."""
    last = text.rfind(">")
    if text.rfind("<") > last:  # the cut fell inside a tag: drop its half
        text = text[:last + 1]
    stack: list[str] = []
    for m in _TAG.finditer(text):
        close, name, empty = m.group(1), m.group(2), m.group(3)
        if name is None or empty:
            continue
        if close:
            if not stack or stack[-1] != name:
                return None
            stack.pop()
        else:
            stack.append(name)
    if not stack:
        return None
    return text + "".join(f"</{n}>" for n in reversed(stack)), len(stack)


def parse(doc: Document, ctx: ParseContext) -> None:
    start = _start(doc)
    text = "\n".join(doc.lines[start:])
    if len(text) > MAX_XML_CHARS:
        raise ParseError(f"XML larger than {MAX_XML_CHARS} characters", doc.lineno(start))
    truncated = False
    try:
        root = ET.fromstring(text)
    except StdET.ParseError as exc:
        line = start + max(exc.position[0] - 1, 0) if getattr(exc, "position", None) else start
        line = min(line, len(doc.lines) - 1)
        # a pasted excerpt is small; a huge malformed file is not worth a second pass
        mended = _closed(text) if len(text) <= MAX_MENDED_CHARS else None
        root = None
        if mended is not None:
            try:
                root = ET.fromstring(mended[0])
            except (StdET.ParseError, DefusedXmlException, ValueError, RecursionError):
                root = None
        if root is None:
            raise ParseError(f"malformed or truncated XML: {exc}", doc.lineno(line)) from None
        truncated = True
        end = max((i for i, ln in enumerate(doc.lines) if ln.strip()), default=start)
        ctx.warn(end, f"topology XML cut short here ({mended[1]} elements left open): "
                      "counts cover only what the excerpt shows")
    except (DefusedXmlException, ValueError, RecursionError) as exc:
        raise ParseError(f"XML refused: {type(exc).__name__}: {exc}", doc.lineno(start)) from None
    if root.tag != "system":
        raise NotApplicable(f"root element is <{root.tag}>, not <system>")

    cpus = gpus = nics = nvlinks = 0
    nets: list[str] = []
    speeds: list[int] = []
    widths: list[int] = []
    gdrs: list[int] = []
    flat = True
    devices = 0
    gpu_rows = []
    try:
        walked = list(_walk(root, ()))
    except RecursionError:
        raise ParseError("XML nested too deeply", doc.lineno(start)) from None
    for el, parents in walked:
        tag = el.tag
        if tag == "cpu":
            cpus += 1
        elif tag == "pci":
            w = _int(el.get("link_width"))
            if w is not None:
                widths.append(w)
        elif tag == "nic":
            nics += 1
        elif tag == "net":
            nets.append(el.get("name", ""))
            sp = _int(el.get("speed"))
            if sp is not None:
                speeds.append(sp)
        elif tag == "gpu":
            gpus += 1
            gdr = _int(el.get("gdr"))
            gdrs.append(1 if gdr == 1 else 0)
            links = sum(_int(n.get("count")) or 0 for n in el.findall("nvlink"))
            nvlinks += links
            gpu_rows.append((el, parents))
        if tag in ("gpu", "nic"):
            pcis = [p for p in parents if p.tag == "pci"]
            if pcis:
                devices += 1
                own = pcis[-1]
                parent = parents[parents.index(own) - 1] if parents.index(own) > 0 else None
                if parent is None or parent.tag != "cpu":
                    flat = False

    cursor = start
    gpu_facts = []
    for el, parents in gpu_rows:
        pcis = [p for p in parents if p.tag == "pci"]
        own = pcis[-1] if pcis else None
        busid = own.get("busid", "") if own is not None else ""
        cpu = next((p for p in reversed(parents) if p.tag == "cpu"), None)
        switch = None
        if own is not None:
            k = parents.index(own)
            if k > 0 and parents[k - 1].tag == "pci":
                switch = parents[k - 1]
        nic_local = switch is not None and switch.find(".//nic") is not None
        dev = _int(el.get("dev"))
        line = _find(doc, cursor, busid, el.get("dev", ""))
        cursor = line
        gpu_facts.append(dict(index=line, dev=dev if dev is not None else len(gpu_facts), busid=busid,
                              rank=_int(el.get("rank")), gdr=_int(el.get("gdr")),
                              numa=cpu.get("numaid", "") if cpu is not None else "",
                              affinity=cpu.get("affinity", "") if cpu is not None else "",
                              nic_local=nic_local,
                              link_width=_int(own.get("link_width")) if own is not None else None))
    if cpus == 0 and gpus == 0 and nics == 0:
        raise NotApplicable("topology without CPUs, GPUs or NICs")
    ctx.add(NcclTopoXml, start, len(doc.lines) - 1, version=root.get("version", ""), cpus=cpus, gpus=gpus,
            nics=nics, nets=nets, net_speeds_mbps=speeds, pci_link_widths=widths, gpu_gdr=gdrs,
            nvlinks=nvlinks, flattened=flat and devices > 0, truncated=truncated)
    for g in gpu_facts:
        ctx.add(NcclTopoXmlGpu, g.pop("index"), **g)


def _find(doc: Document, start: int, busid: str, dev: str) -> int:
    """Line of the <gpu> element of ``busid`` (approximate: ElementTree keeps no line numbers)."""
    seen_bus = not busid
    for i in range(start, len(doc.lines)):
        ln = doc.lines[i]
        if busid and f'busid="{busid}"' in ln:
            seen_bus = True
        if seen_bus and "<gpu" in ln and (not dev or f'dev="{dev}"' in ln):
            return i
    return start


def sniff(doc: Document) -> float:
    head = [ln.strip() for ln in doc.lines[:200] if ln.strip()]
    if not head:
        return 0.0
    system = any(re.match(r"<system(?:\s+version=|\s*>)", ln) for ln in head[:10])
    cpu = any(ln.startswith("<cpu ") and ("numaid=" in ln or "affinity=" in ln) for ln in head)
    dev = any(re.match(r"<(?:gpu\s+dev=|net\s+name=|nic\s*>|pci\s+busid=)", ln) for ln in head)
    if not (system or (cpu and dev)):
        return 0.0
    return min(0.98, (0.5 if system else 0.3) + (0.25 if cpu else 0.0) + (0.2 if dev else 0.0))


FORMATS = [
    Format(
        name="nccl-topo-xml",
        command="NCCL_TOPO_DUMP_FILE=topo.xml <nccl program>; cat topo.xml",
        facts=("nccl.topo_xml", "nccl.topo_xml_gpu"),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\bcat\s+\S*(?:topo\w*|virtualTopology)\.xml\b",),
        description="NCCL topology XML (NCCL_TOPO_DUMP_FILE / NCCL_TOPO_FILE): CPUs, PCI tree, GPUs, NICs, NVLinks",
    )
]
