"""lscpu - Command

Output of ``lscpu`` (util-linux): one ``Key: value`` per line, in the flat layout (piped output,
older versions) or the hierarchical one (util-linux >= 2.38 on a terminal: sub-keys indented
under ``CPU(s):``, ``Vendor ID:``, ``Caches (sum of all):``, ``NUMA:`` ...). Long values such as
``Flags`` are wrapped at the terminal width, mid-word, onto lines indented to the value column.
``lscpu -J`` (JSON, flat or with ``children``) is read too. Yields one ``cpu.info`` and one
``numa.node`` per ``NUMA nodeN CPU(s):`` line (CPU-less nodes, e.g. GH200 GPU memory, have an
empty list).

Sample input (GH200, hierarchical, shortened)::

    Architecture:             aarch64
      CPU op-mode(s):         64-bit
    CPU(s):                   72
      On-line CPU(s) list:    0-71
    Vendor ID:                ARM
      Model name:             Neoverse-V2
        Thread(s) per core:   1
        Core(s) per socket:   72
        Socket(s):            1
        CPU max MHz:          3438.0000
        CPU min MHz:          81.0000
    NUMA:
      NUMA node(s):           2
      NUMA node0 CPU(s):      0-71
      NUMA node1 CPU(s):

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "lscpu"); parse(doc, ctx)
    >>> info = ctx.facts[0]
    >>> (info.arch, info.isa, info.model_name, info.cpus, info.sockets, info.is_grace)
    ('aarch64', 'arm64', 'Neoverse-V2', 72, 1, True)
    >>> (info.max_mhz, info.hypervisor_vendor)
    (3438.0, '')
    >>> [(f.node_id, len(f.cpus), f.source.line) for f in ctx.facts[1:]]
    [(0, 72, 14), (1, 0, 15)]
    >>> sniff(doc) > 0.9
    True
"""

from __future__ import annotations

import json
import re
from typing import Any

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.coverage import WHOLE
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.cpu import CpuInfo
from clusterdx.facts.model.numa import NumaNode
from clusterdx.facts.parsers._util import cpu_list


SAMPLE = """\
Architecture:             aarch64
  CPU op-mode(s):         64-bit
CPU(s):                   72
  On-line CPU(s) list:    0-71
Vendor ID:                ARM
  Model name:             Neoverse-V2
    Thread(s) per core:   1
    Core(s) per socket:   72
    Socket(s):            1
    CPU max MHz:          3438.0000
    CPU min MHz:          81.0000
NUMA:
  NUMA node(s):           2
  NUMA node0 CPU(s):      0-71
  NUMA node1 CPU(s):
"""

_KEY = lazyre.compile(r"^(\s*)([A-Za-z][^:]{0,60}?):(\s*)(.*)$")
_NUMA_NODE = lazyre.compile(r"^NUMA node(\d+) CPU\(s\)$")
_PROMPT = lazyre.compile(r"^\s*(?:\[[^\]]*\]\s*)?\S*[$#%>]\s*(?:sudo\s+)?lscpu\b")
_KNOWN = {
    "Architecture", "CPU op-mode(s)", "Byte Order", "CPU(s)", "On-line CPU(s) list",
    "Off-line CPU(s) list", "Vendor ID", "Model name", "CPU family", "Thread(s) per core",
    "Core(s) per socket", "Core(s) per cluster", "Socket(s)", "Cluster(s)", "NUMA node(s)",
    "BogoMIPS", "Flags", "Stepping", "CPU max MHz", "CPU min MHz", "Address sizes",
    "Hypervisor vendor", "Virtualization type", "L1d cache", "L2 cache",
}


def sniff(doc: Document) -> float:
    head = doc.lines[:200]
    text = "\n".join(head[:5]).lstrip()
    if text.startswith("{") and '"lscpu"' in text:
        return 0.95
    keys = set()
    for line in head:
        m = _KEY.match(line)
        if m:
            keys.add(m.group(2).strip())
    hits = len(keys & _KNOWN)
    if hits >= 4 and "Architecture" in keys:
        return 0.95
    if hits >= 4:
        return 0.8
    return 0.1 * hits if hits >= 2 else 0.0


def parse(doc: Document, ctx: ParseContext) -> None:
    text = doc.text.lstrip()
    if text.startswith("{"):
        pairs = _json_pairs(doc, text)
    else:
        pairs = _text_pairs(doc, ctx)
    if not any(key in _KNOWN for key, _, _ in pairs):
        raise NotApplicable("no lscpu keys")
    _emit(pairs, ctx)


def _json_pairs(doc: Document, text: str) -> list[tuple[str, str, int]]:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ParseError(f"lscpu -J output is not valid JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("lscpu"), list):
        raise NotApplicable("JSON without an 'lscpu' list")
    pairs: list[tuple[str, str, int]] = []

    # JSON carries no line numbers; point every fact at the line that holds its key
    def line_of(field: str) -> int:
        for i, line in enumerate(doc.lines):
            if f'"{field}"' in line:
                return i
        return 0

    def walk(items: Any, depth: int = 0) -> None:
        if depth > 10 or not isinstance(items, list):
            return
        for item in items:
            if not isinstance(item, dict):
                continue
            field, value = item.get("field"), item.get("data")
            if isinstance(field, str):
                key = field.strip().removesuffix(":")
                pairs.append((key, value if isinstance(value, str) else "", line_of(field)))
            walk(item.get("children"), depth + 1)

    walk(data["lscpu"])
    return pairs


def _text_pairs(doc: Document, ctx: ParseContext) -> list[tuple[str, str, int]]:
    pairs: list[list[Any]] = []
    value_col = 0
    for i, raw in enumerate(doc.lines):
        line = raw.expandtabs()
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        # a value wrapped at the terminal width continues at the value column, cut mid-word
        if pairs and value_col and indent >= value_col:
            pairs[-1][1] += line[value_col:]
            continue
        if not pairs and _PROMPT.match(line):
            continue
        m = _KEY.match(line)
        if m:
            key, value = m.group(2).strip(), m.group(4)
            if value:
                value_col = len(line) - len(value)
            pairs.append([key, value, i])
            continue
        ctx.warn(i, f"not a 'Key: value' line: {line.strip()[:80]!r}")
    return [(k, v.strip(), i) for k, v, i in pairs]


def _int(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value.strip())
    except ValueError:
        return None


def _float(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value.strip().rstrip("%").replace(",", "."))
    except ValueError:
        return None
    return number if number == number and abs(number) != float("inf") else None


def _cpus(value: str, i: int, ctx: ParseContext) -> list[int]:
    try:
        return cpu_list(value)
    except (ValueError, ParseError):
        ctx.warn(i, f"bad CPU list {value[:80]!r}")
        return []


def _emit(pairs: list[tuple[str, str, int]], ctx: ParseContext) -> None:
    values: dict[str, str] = {}
    lines: dict[str, int] = {}
    numa: list[tuple[int, str, int]] = []
    for key, value, i in pairs:
        m = _NUMA_NODE.match(key)
        if m:
            numa.append((int(m.group(1)), value, i))
            continue
        # the first occurrence wins: the hierarchical layout repeats no key, and a flat
        # "Model" must not be shadowed by a later BIOS line
        values.setdefault(key, value)
        lines.setdefault(key, i)

    arch = values.get("Architecture", "")
    cov = ctx.doc.coverage or WHOLE
    if not arch and cov.believes_absence("Architecture:                    x86_64"):
        ctx.warn(None, "no Architecture line (truncated or partial lscpu output?)")
    isa = "x86" if re.fullmatch(r"x86_64|i[3-6]86|amd64", arch) else "arm64" if arch in ("aarch64", "arm64") else ""
    vendor = values.get("Vendor ID", "")
    model_name = values.get("Model name", "")
    bios_vendor = values.get("BIOS Vendor ID", "")
    bios_model = values.get("BIOS Model name", "")
    offline = values.get("Off-line CPU(s) list", "")
    flags = values.get("Flags", "").split()

    first = lines.get("Architecture", pairs[0][2])
    last = max(i for _, _, i in pairs)
    # cpu.info says "no hypervisor" by an empty hypervisor_vendor: an excerpt (``lscpu | grep -i
    # numa``) that could not have shown the Hypervisor vendor line makes no cpu.info at all
    if "Hypervisor vendor" not in values and not cov.believes_absence("Hypervisor vendor:               KVM"):
        ctx.warn(first, "excerpt without the Hypervisor vendor line: no cpu.info made (only what the lines prove)")
    else:
        _cpu_info(ctx, values, lines, first, last, arch, flags, offline, vendor, model_name,
                  bios_vendor, bios_model, isa)
    for node_id, value, i in numa:
        cpus = _cpus(value, i, ctx)
        ctx.add(NumaNode, i, node_id=node_id, cpus=cpus, cpu_count=len(cpus))
    expected = _int(values.get("NUMA node(s)"))
    if expected is not None and len(numa) < expected:
        ctx.warn(last, f"NUMA node(s) says {expected} but only {len(numa)} node CPU lists follow (truncated?)")


def _cpu_info(ctx: ParseContext, values: dict, lines: dict, first: int, last: int, arch: str,
              flags: list[str], offline: str, vendor: str, model_name: str, bios_vendor: str,
              bios_model: str, isa: str) -> None:
    ctx.add(
        CpuInfo, first, last,
        arch=arch, isa=isa, vendor=vendor, model_name=model_name,
        cpus=_int(values.get("CPU(s)")),
        offline_cpus=_cpus(offline, lines.get("Off-line CPU(s) list", first), ctx),
        sockets=_int(values.get("Socket(s)")),
        cores_per_socket=_int(values.get("Core(s) per socket")),
        cores_per_cluster=_int(values.get("Core(s) per cluster")),
        threads_per_core=_int(values.get("Thread(s) per core")),
        numa_nodes=_int(values.get("NUMA node(s)")),
        max_mhz=_float(values.get("CPU max MHz")),
        min_mhz=_float(values.get("CPU min MHz")),
        scaling_pct=_float(values.get("CPU(s) scaling MHz")),
        frequency_boost=values.get("Frequency boost", ""),
        hypervisor_vendor=values.get("Hypervisor vendor", ""),
        virtualization_type=values.get("Virtualization type", ""),
        hypervisor_flag="hypervisor" in flags,
        bios_vendor=bios_vendor, bios_model_name=bios_model,
        is_grace=_is_grace(isa, vendor, model_name, bios_vendor, bios_model),
    )


def _is_grace(isa: str, vendor: str, model: str, bios_vendor: str, bios_model: str) -> bool:
    if isa != "arm64":
        return False
    bios = f"{bios_vendor} {bios_model}".lower()
    if "grace" in bios or "nvidia" in bios or vendor.upper() == "NVIDIA":
        return True
    # Graviton4 and Axion use the same Neoverse-V2 core; without a BIOS line (non-root, VMs)
    # the core alone is the best evidence, and in GPU clusters it is almost always Grace
    return "neoverse-v2" in model.lower() and not bios_vendor


FORMATS = [
    Format(
        name="lscpu",
        command="lscpu",
        facts=("cpu.info", "numa.node"),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"^\s*(?:sudo\s+)?lscpu(?:\s+(?:-J|--json|-y|--physical|-a|--all|--hierarchic\S*))*\s*$",),
        description="lscpu, flat or hierarchical layout, or lscpu -J",
    )
]
