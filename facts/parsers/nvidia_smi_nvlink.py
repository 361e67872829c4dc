"""nvidia-smi nvlink -s / nvidia-smi nvlink -e / nvidia-smi --query-gpu=...fabric... - Command

Three small NVLink/NVSwitch views of the GPUs:

* ``nvidia-smi nvlink -s`` (link status): per GPU a line ``GPU 0: <name> (UUID: GPU-...)`` then
  one tab-indented line per link, ``Link 0: 26.562 GB/s`` or ``Link 3: <inactive>``. When every
  link is down, drivers print ``NVML: Unable to retrieve NVLink information as all links are
  inActive`` instead of the link lines. Yields ``gpu.nvlink`` per link and
  ``gpu.nvlink_summary`` per GPU (a GB200/GB300 NVL72 compute tray: 4 x 18 links up).
* ``nvidia-smi nvlink -e`` (error counters): per link ``Link 0: Replay Errors: 0``,
  ``Recovery Errors``, ``CRC Errors`` (flit CRC; some drivers split ``Flit``/``Data CRC``) and,
  on recent drivers, ``Effective Errors``, ``Effective BER``, ``Symbol Errors``,
  ``Symbol BER``. The healthy BER baseline is printed as ``15e-255``. A layout with a bare
  ``Link 0:`` line followed by indented ``Name: value`` lines is read too. Yields
  ``gpu.nvlink_errors`` per link.
* ``nvidia-smi --query-gpu=index,pci.bus_id,fabric.state,fabric.status --format=csv``: CSV
  with a header of the queried field names (or none with ``noheader``, then the names come from
  the command). Yields ``gpu.fabric`` per GPU when fabric columns are present, and
  ``gpu.pcie`` when ``pcie.link.*`` columns are.

Sample input (``nvlink -s``, tabs then a space before ``Link``)::

    GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-4b1d5c7e-9a2f-7c63-1e0b-55a8d3f2c901)
    	 Link 0: 26.562 GB/s
    	 Link 1: <inactive>

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "nvidia-smi-nvlink-status"); parse_status(doc, ctx)
    >>> [(f.gpu, f.link, f.active, f.speed_gbps, f.source.line) for f in ctx.facts[:2]]
    [(0, 0, True, 26.562, 2), (0, 1, False, None, 3)]
    >>> s = ctx.facts[2]
    >>> (s.fact_type, s.links, s.active, s.inactive)
    ('gpu.nvlink_summary', 2, 1, 1)
    >>> doc = Document.from_text(SAMPLE_ERRORS)
    >>> ctx = ParseContext(doc, "nvidia-smi-nvlink-errors"); parse_errors(doc, ctx)
    >>> e = ctx.facts[0]
    >>> (e.gpu, e.link, e.replay, e.crc_flit, e.effective_ber, e.ber_healthy, e.source.line)
    (0, 0, 0, 0, '15e-255', True, 2)
    >>> (ctx.facts[1].replay, ctx.facts[1].symbol_ber, ctx.facts[1].ber_healthy)
    (412, '2e-10', False)
    >>> doc = Document.from_text(SAMPLE_FABRIC)
    >>> ctx = ParseContext(doc, "nvidia-smi-query-gpu"); parse_query(doc, ctx)
    >>> [(f.gpu, f.bus_id, f.state, f.status) for f in ctx.facts]
    [(0, '0008:01:00.0', 'Completed', 'Success'), (1, '0009:01:00.0', 'In Progress', '')]
    >>> sniff_status(Document.from_text(SAMPLE)) > 0.9, sniff_errors(Document.from_text(SAMPLE))
    (True, 0.0)
"""

from __future__ import annotations

import csv
import re

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.gpu import GpuFabric, GpuNvlink, GpuNvlinkErrors, GpuNvlinkSummary, GpuPcie
from clusterdx.facts.parsers.nvidia_smi_q import integer, norm_bus_id, number, slug, word


SAMPLE = (
    "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-4b1d5c7e-9a2f-7c63-1e0b-55a8d3f2c901)\n"
    "\t Link 0: 26.562 GB/s\n"
    "\t Link 1: <inactive>\n"
)
SAMPLE_ERRORS = (
    "GPU 0: NVIDIA GB200 (UUID: GPU-d4a1c2e3-5b6f-4789-a0b1-c2d3e4f5a6b7)\n"
    "\t Link 0: Replay Errors: 0\n"
    "\t Link 0: Recovery Errors: 0\n"
    "\t Link 0: CRC Errors: 0\n"
    "\t Link 0: Effective BER: 15e-255\n"
    "\t Link 0: Symbol BER: 15e-255\n"
    "\t Link 1: Replay Errors: 412\n"
    "\t Link 1: Recovery Errors: 3\n"
    "\t Link 1: CRC Errors: 57\n"
    "\t Link 1: Effective BER: 7e-13\n"
    "\t Link 1: Symbol BER: 2e-10\n"
)
SAMPLE_FABRIC = (
    "index, pci.bus_id, fabric.state, fabric.status\n"
    "0, 00000008:01:00.0, Completed, Success\n"
    "1, 00000009:01:00.0, In Progress, N/A\n"
)

_GPU = lazyre.compile(r"^\s*GPU\s+(\d{1,4}):\s*(.*?)\s*(?:\(UUID:\s*([^)]*?)\s*\))?\s*$")
_LINK = lazyre.compile(r"^\s*Link\s+(\d{1,3})\s*:\s*(.*?)\s*$")
_SPEED = lazyre.compile(r"^(\d{1,6}(?:\.\d{1,6})?)\s*GB/s$", re.I)
_INACTIVE = lazyre.compile(r"^<?\s*inactive\s*>?$", re.I)
_ALL_INACTIVE = lazyre.compile(r"all links are in\s*active", re.I)
_COUNTER = lazyre.compile(r"^([A-Za-z][\w .()/-]*?)\s*:\s*(.*?)\s*$")

#: the BER nvidia-smi prints for a link without errors
BER_BASELINE = 15e-255


# -- nvlink -s ------------------------------------------------------------------------------------


def sniff_status(doc: Document) -> float:
    head = doc.lines[:200]
    gpus = sum(1 for ln in head if _GPU.match(ln) and "UUID" in ln)
    links = 0
    for ln in head:
        m = _LINK.match(ln)
        if m and (_SPEED.match(m.group(2)) or _INACTIVE.match(m.group(2))):
            links += 1
    if gpus and links:
        return 0.95
    if gpus and any(_ALL_INACTIVE.search(ln) for ln in head):
        return 0.9
    return 0.1 if links else 0.0


def parse_status(doc: Document, ctx: ParseContext) -> None:
    gpu: int | None = None
    header = 0
    name = uuid = ""
    links: list[GpuNvlink] = []
    all_inactive = False
    seen_any = False

    def close() -> None:
        if gpu is None:
            return
        active = [lk for lk in links if lk.active]
        speeds = [lk.speed_gbps for lk in active if lk.speed_gbps is not None]
        last = links[-1].source.line - doc.first_line if links else header
        ctx.add(GpuNvlinkSummary, header, last, gpu=gpu, links=len(links), active=len(active),
                inactive=len(links) - len(active), name=name, uuid=uuid,
                total_gbps=round(sum(speeds), 3) if speeds else None, all_inactive=all_inactive)

    for i, line in enumerate(doc.lines):
        if not line.strip():
            continue
        g = _GPU.match(line)
        if g and not _LINK.match(line):
            close()
            gpu, header, name, uuid = int(g.group(1)), i, g.group(2), g.group(3) or ""
            links, all_inactive = [], False
            seen_any = True
            continue
        m = _LINK.match(line)
        if m and gpu is not None:
            value = m.group(2)
            sp = _SPEED.match(value)
            if sp:
                _keep(links, ctx.add(GpuNvlink, i, gpu=gpu, link=int(m.group(1)), active=True,
                                     speed_gbps=float(sp.group(1)), uuid=uuid))
            elif _INACTIVE.match(value):
                _keep(links, ctx.add(GpuNvlink, i, gpu=gpu, link=int(m.group(1)), active=False,
                                     uuid=uuid))
            else:
                ctx.warn(i, f"unreadable link status {value[:60]!r}")
            continue
        if gpu is not None and _ALL_INACTIVE.search(line):
            all_inactive = True
            continue
        if gpu is not None:
            ctx.warn(i, f"unexpected line {line.strip()[:80]!r}")
    close()
    summaries = [f for f in ctx.facts if isinstance(f, GpuNvlinkSummary)]
    if not any(f.links or f.all_inactive for f in summaries):
        if seen_any and any(_LINK.match(ln) for ln in doc.lines):
            raise NotApplicable("link lines carry no speed or <inactive> (nvlink -e or -c output?)")
        raise NotApplicable("no nvidia-smi nvlink -s link status lines")


# -- nvlink -e ------------------------------------------------------------------------------------

_ERROR_FIELDS = {
    "replay_errors": "replay", "replay": "replay",
    "recovery_errors": "recovery", "recovery": "recovery",
    "crc_errors": "crc_flit", "flit_crc_errors": "crc_flit", "crc_flit_errors": "crc_flit",
    "data_crc_errors": "crc_data", "crc_data_errors": "crc_data",
    "effective_errors": "effective_errors", "symbol_errors": "symbol_errors",
    "effective_ber": "effective_ber", "symbol_ber": "symbol_ber",
}


def sniff_errors(doc: Document) -> float:
    head = doc.lines[:200]
    gpus = sum(1 for ln in head if _GPU.match(ln) and "UUID" in ln)
    hits = 0
    for ln in head:
        m = _LINK.match(ln)
        if m:
            c = _COUNTER.match(m.group(2))
            if c and slug(c.group(1)) in _ERROR_FIELDS:
                hits += 1
    if gpus and hits:
        return 0.95
    return 0.2 if hits else 0.0


def _ber(text: str) -> tuple[str, float | None]:
    t = text.strip()
    if not t or t.lower() in ("n/a", "[n/a]", "not supported", "[not supported]"):
        return "", None
    try:
        v = float(t)
    except ValueError:
        return t, None
    return t, v if v == v and v not in (float("inf"), float("-inf")) else None


def parse_errors(doc: Document, ctx: ParseContext) -> None:
    gpu: int | None = None
    seen_gpu = False
    # (gpu, link) -> [first line, last line, fields]
    links: dict[tuple[int, int], list] = {}
    current_link: int | None = None
    for i, line in enumerate(doc.lines):
        if not line.strip():
            continue
        g = _GPU.match(line)
        if g and not _LINK.match(line):
            gpu, current_link, seen_gpu = int(g.group(1)), None, True
            continue
        if gpu is None:
            continue
        m = _LINK.match(line)
        if m:
            link = int(m.group(1))
            rest = m.group(2)
            if not rest:
                current_link = link  # 'Link 0:' header, counters follow on their own lines
                continue
            current_link = None
            c = _COUNTER.match(rest)
        else:
            link = current_link
            c = _COUNTER.match(line.strip()) if link is not None else None
        if link is None or c is None:
            ctx.warn(i, f"unexpected line {line.strip()[:80]!r}")
            continue
        fname = _ERROR_FIELDS.get(slug(c.group(1)))
        if fname is None:
            continue  # other counters (FEC histogram, ECC data errors): not modelled
        entry = links.setdefault((gpu, link), [i, i, {}])
        entry[1] = i
        value = c.group(2)
        if fname.endswith("_ber"):
            text, num = _ber(value)
            entry[2].setdefault(fname, text)
            entry[2].setdefault(fname + "_value", num)
        else:
            n = integer(value)
            if n is None and word(value):
                ctx.warn(i, f"unreadable counter {value[:40]!r}")
            entry[2].setdefault(fname, n)
    if not links:
        if seen_gpu and any(_LINK.match(ln) for ln in doc.lines):
            raise NotApplicable("link lines carry no error counters (nvlink -s output?)")
        raise NotApplicable("no nvidia-smi nvlink -e counters")
    for (g, link), (first, last, fields) in links.items():
        bers = [fields.get(k) for k in ("effective_ber_value", "symbol_ber_value")]
        bers = [b for b in bers if b is not None]
        healthy = all(b <= BER_BASELINE * 1.000001 for b in bers) if bers else None
        ctx.add(GpuNvlinkErrors, first, last, gpu=g, link=link, ber_healthy=healthy, **fields)


# -- --query-gpu CSV ------------------------------------------------------------------------------

_QUERY_NAME = lazyre.compile(r"^[a-z][a-z_0-9]*(?:\.[a-zA-Z_0-9]+)*(?:\s*\[[^\]]*\])?$")
_QUERY_CMD = lazyre.compile(r"--query-gpu[=\s]+([\w.,]+)")
_FABRIC_COLS = {"fabric.state": "state", "fabric.status": "status", "fabric.cliqueid": "clique_id",
                "fabric.clusteruuid": "cluster_uuid", "fabric.health.summary": "health",
                "fabric.health.bandwidth": "bandwidth"}
_PCIE_COLS = {"pcie.link.gen.current": "gen_current", "pcie.link.gen.gpucurrent": "gen_device_current",
              "pcie.link.gen.max": "gen_max", "pcie.link.gen.gpumax": "gen_device_max",
              "pcie.link.gen.hostmax": "gen_host_max",
              "pcie.link.width.current": "width_current", "pcie.link.width.max": "width_max"}
_KNOWN_COLS = {"index", "pci.bus_id", "gpu_bus_id", "uuid", "name", "gpu_name", "pstate",
               "clocks_event_reasons.active", *_FABRIC_COLS, *_PCIE_COLS}


def _columns(cells: list[str]) -> list[str]:
    return [re.sub(r"\s*\[.*\]$", "", c.strip()).lower() for c in cells]


def _header(doc: Document) -> tuple[int | None, list[str]]:
    for i, line in enumerate(doc.lines[:20]):
        if not line.strip():
            continue
        cells = [c.strip() for c in line.split(",")]
        if cells and all(_QUERY_NAME.match(c) for c in cells) and set(_columns(cells)) & _KNOWN_COLS:
            return i, _columns(cells)
        return None, []
    return None, []


def sniff_query(doc: Document) -> float:
    i, cols = _header(doc)
    if i is None:
        return 0.0
    relevant = set(cols) & (set(_FABRIC_COLS) | set(_PCIE_COLS))
    return 0.9 if relevant else 0.4


def parse_query(doc: Document, ctx: ParseContext) -> None:
    start, cols = _header(doc)
    if start is None:
        m = _QUERY_CMD.search(doc.command or "")
        if not m:
            raise NotApplicable("no --query-gpu CSV header")
        cols, start = _columns(m.group(1).split(",")), -1
    if not set(cols) & (set(_FABRIC_COLS) | set(_PCIE_COLS)):
        raise NotApplicable("query has no fabric.* or pcie.link.* column")
    rows = 0
    for i in range(start + 1, len(doc.lines)):
        line = doc.lines[i]
        if not line.strip():
            continue
        try:
            cells = next(csv.reader([line], skipinitialspace=True))
        except (csv.Error, StopIteration):
            cells = []
        if len(cells) != len(cols):
            ctx.warn(i, f"expected {len(cols)} comma-separated values, got {len(cells)}")
            continue
        row = dict(zip(cols, (c.strip() for c in cells)))
        idx = integer(row.get("index")) if "index" in row else None
        gpu = idx if idx is not None else rows
        bus = norm_bus_id(row.get("pci.bus_id", row.get("gpu_bus_id", "")))
        rows += 1
        fabric = {f: word(row[c]) for c, f in _FABRIC_COLS.items() if c in row}
        if fabric:
            ctx.add(GpuFabric, i, gpu=gpu, bus_id=bus, **fabric)
        pcie = {f: integer(row[c]) for c, f in _PCIE_COLS.items() if c in row}
        if pcie:
            gc, gm = pcie.get("gen_current"), pcie.get("gen_max")
            wc, wm = pcie.get("width_current"), pcie.get("width_max")
            wd = wc is not None and wm is not None and wc < wm
            gd = gc is not None and gm is not None and gc < gm
            ps = re.fullmatch(r"P(\d{1,2})", row.get("pstate", ""))
            idle = ps is not None and int(ps.group(1)) >= 5
            ctx.add(GpuPcie, i, gpu=gpu, bus_id=bus, width_downgraded=wd, gen_downgraded=gd,
                    downgraded=wd or gd, idle_gen_drop=gd and not wd and idle, **pcie)
    if not rows:
        if ctx.warnings:
            raise ParseError("no readable --query-gpu row", ctx.warnings[0][0])
        raise NotApplicable("--query-gpu CSV without rows")


FORMATS = [
    Format(
        name="nvidia-smi-nvlink-status",
        command="nvidia-smi nvlink -s",
        facts=("gpu.nvlink", "gpu.nvlink_summary"),
        sniff=sniff_status,
        parse=parse_status,
        command_patterns=(r"\bnvidia-smi\s+nvlink\b.*\s(?:-s|--status)\b",),
        description="nvidia-smi nvlink -s: per-link speed or <inactive>, per-GPU link counts",
    ),
    Format(
        name="nvidia-smi-nvlink-errors",
        command="nvidia-smi nvlink -e",
        facts=("gpu.nvlink_errors",),
        sniff=sniff_errors,
        parse=parse_errors,
        command_patterns=(r"\bnvidia-smi\s+nvlink\b.*\s(?:-e|--errorcounters)\b",),
        description="nvidia-smi nvlink -e: per-link replay/recovery/CRC counters and BER",
    ),
    Format(
        name="nvidia-smi-query-gpu",
        command="nvidia-smi --query-gpu=index,pci.bus_id,fabric.state,fabric.status,"
                "pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,"
                "pcie.link.width.max,pstate --format=csv",
        facts=("gpu.fabric", "gpu.pcie"),
        sniff=sniff_query,
        parse=parse_query,
        command_patterns=(r"\bnvidia-smi\b.*--query-gpu[=\s]\S*(?:fabric\.|pcie\.link\.)",),
        description="nvidia-smi --query-gpu CSV with fabric.* (NVSwitch registration) or "
                    "pcie.link.* columns",
    ),
]


def _keep(out: list, fact) -> None:
    """Append a fact ``ctx.add`` made (None when the fact was refused and dropped)."""
    if fact is not None:
        out.append(fact)
