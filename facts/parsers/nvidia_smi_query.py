"""nvidia-smi --query-gpu=... / --query-compute-apps=... --format=csv - Command

The CSV that ``nvidia-smi --query-gpu=FIELD,... --format=csv[,noheader][,nounits]`` prints: one
row per GPU, the queried fields in the order asked. With a header the first line names the
fields, units in brackets (``clocks.current.sm [MHz]``, ``power.draw [W]``, ``utilization.gpu
[%]``); values then carry units too (``1980 MHz``, ``690.21 W``, ``0 %``, ``81559 MiB``) unless
``nounits`` was given. ``noheader`` drops the header: the field names then come from the command
(``doc.command``, e.g. a pasted ``$ nvidia-smi --query-gpu=index,pcie.link.width.current
--format=csv,noheader``). Missing values print ``[N/A]``, ``N/A`` or ``[Not Supported]``.

Known fields map onto the fact types of ``nvidia-smi -q`` (see clusterdx.facts.model.gpu), so the
same rules read either: ``gpu.device`` (name, uuid, driver, power, utilization, memory),
``gpu.pcie`` (``pcie.link.gen.*``, ``pcie.link.width.*``), ``gpu.clocks`` (``clocks.*``,
``pstate``), ``gpu.throttle`` (``clocks_throttle_reasons.*`` / ``clocks_event_reasons.*``,
either per reason ``Active``/``Not Active`` or the ``.active`` bit mask), ``gpu.ecc``
(``ecc.*``, ``retired_pages.*``, ``remapped_rows.*``), ``gpu.temperature`` and ``gpu.fabric``.
A fact type is produced only when one of its fields was queried. Unknown fields are ignored.
``--query-compute-apps`` rows become ``gpu.process``. When nvidia-smi printed its own failure
instead of rows (``No devices were found``, ``NVIDIA-SMI has failed because it couldn't
communicate with the NVIDIA driver``), the document gives one ``gpu.summary`` with ``gpus=0`` and
that ``error``.

The narrower format ``nvidia-smi-query-gpu`` (facts/parsers/nvidia_smi_nvlink.py) reads only the
fabric and PCIe columns; when a query holds nothing else it keeps the document (the facts are
the same), otherwise this one scores higher.

Sample input::

    index, name, pci.bus_id, pcie.link.gen.current, pcie.link.gen.max, pcie.link.width.current, pcie.link.width.max, clocks_event_reasons.sw_power_cap, clocks_event_reasons.hw_thermal_slowdown, clocks.sm [MHz], clocks.max.sm [MHz], pstate
    0, NVIDIA H100 80GB HBM3, 00000000:18:00.0, 5, 5, 16, 16, Not Active, Not Active, 1980 MHz, 1980 MHz, P0
    3, NVIDIA H100 80GB HBM3, 00000000:5D:00.0, 5, 5, 8, 16, Active, Not Active, 1410 MHz, 1980 MHz, P0

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "nvidia-smi-query"); parse(doc, ctx)
    >>> sorted({f.fact_type for f in ctx.facts})
    ['gpu.clocks', 'gpu.device', 'gpu.pcie', 'gpu.throttle']
    >>> p = [f for f in ctx.facts if f.fact_type == "gpu.pcie"][1]
    >>> p.gpu, p.bus_id, p.width_current, p.width_max, p.downgraded, p.source.line
    (3, '0000:5d:00.0', 8, 16, True, 3)
    >>> t = [f for f in ctx.facts if f.fact_type == "gpu.throttle"][1]
    >>> t.active, t.power, t.thermal
    (['sw_power_cap'], True, False)
    >>> [f.sm_pct_of_max for f in ctx.facts if f.fact_type == "gpu.clocks"]
    [100.0, 71.2]
    >>> doc = Document.from_text("0, 8\\n1, 16\\n",
    ...     command="nvidia-smi --query-gpu=index,pcie.link.width.current --format=csv,noheader")
    >>> ctx = ParseContext(doc, "nvidia-smi-query"); parse(doc, ctx)
    >>> [(f.gpu, f.width_current) for f in ctx.facts]
    [(0, 8), (1, 16)]
    >>> sniff(Document.from_text(SAMPLE)) > 0.9
    True
"""

from __future__ import annotations

import csv
import re

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.gpu import (
    GpuClocks, GpuDevice, GpuEcc, GpuFabric, GpuPcie, GpuSummary, GpuTemperature, GpuThrottle,
)
from clusterdx.facts.model.gpu_process import GpuProcess
from clusterdx.facts.parsers.nvidia_smi_q import (
    _FAILURE, _reason_name, flag, gpu_index_from_command, integer, norm_bus_id, number, word,
)


SAMPLE = """\
index, name, pci.bus_id, pcie.link.gen.current, pcie.link.gen.max, pcie.link.width.current, \
pcie.link.width.max, clocks_event_reasons.sw_power_cap, clocks_event_reasons.hw_thermal_slowdown, \
clocks.sm [MHz], clocks.max.sm [MHz], pstate
0, NVIDIA H100 80GB HBM3, 00000000:18:00.0, 5, 5, 16, 16, Not Active, Not Active, 1980 MHz, 1980 MHz, P0
3, NVIDIA H100 80GB HBM3, 00000000:5D:00.0, 5, 5, 8, 16, Active, Not Active, 1410 MHz, 1980 MHz, P0
"""

# -- field names ------------------------------------------------------------------------------

#: nvidia-smi accepts short aliases; map them to the long names first
_ALIASES = {
    "gpu_name": "name", "gpu_bus_id": "pci.bus_id", "gpu_uuid": "uuid", "gpu_serial": "serial",
    "clocks.gr": "clocks.current.graphics", "clocks.sm": "clocks.current.sm",
    "clocks.mem": "clocks.current.memory", "clocks.video": "clocks.current.video",
    "clocks.max.gr": "clocks.max.graphics", "clocks.max.mem": "clocks.max.memory",
    "clocks.applications.gr": "clocks.applications.graphics",
    "clocks.applications.mem": "clocks.applications.memory",
    "clocks.default_applications.gr": "clocks.default_applications.graphics",
    "clocks.default_applications.mem": "clocks.default_applications.memory",
    "enforced.power.limit": "power.limit", "power.draw.average": "power.draw",
    "retired_pages.sbe": "retired_pages.single_bit_ecc.count",
    "retired_pages.dbe": "retired_pages.double_bit.count",
    "vbios_version": "vbios", "mig.mode.current": "mig.mode",
}

_DEVICE = {
    "name": ("name", word), "uuid": ("uuid", word), "serial": ("serial", word), "vbios": ("vbios", word),
    "driver_version": ("driver_version", word), "persistence_mode": ("persistence_mode", flag),
    "compute_mode": ("compute_mode", word), "mig.mode": ("mig_mode", word),
    "power.limit": ("power_limit_w", number), "power.default_limit": ("default_power_limit_w", number),
    "power.min_limit": ("min_power_limit_w", number), "power.max_limit": ("max_power_limit_w", number),
    "power.draw": ("power_draw_w", number), "power.draw.instant": ("instant_power_draw_w", number),
    "utilization.gpu": ("gpu_util_pct", number), "utilization.memory": ("mem_util_pct", number),
    "memory.total": ("memory_total_mib", number), "memory.used": ("memory_used_mib", number),
    "minor_number": ("minor_number", integer),
}
_PCIE = {
    "pcie.link.gen.current": "gen_current", "pcie.link.gen.gpucurrent": "gen_device_current",
    "pcie.link.gen.max": "gen_max", "pcie.link.gen.gpumax": "gen_device_max",
    "pcie.link.gen.hostmax": "gen_host_max",
    "pcie.link.width.current": "width_current", "pcie.link.width.max": "width_max",
}
_CLOCKS = {
    "clocks.current.sm": "sm_mhz", "clocks.current.memory": "mem_mhz",
    "clocks.current.graphics": "graphics_mhz", "clocks.max.sm": "max_sm_mhz",
    "clocks.max.memory": "max_mem_mhz", "clocks.max.graphics": "max_graphics_mhz",
    "clocks.applications.graphics": "app_sm_mhz", "clocks.applications.memory": "app_mem_mhz",
    "clocks.default_applications.graphics": "default_app_sm_mhz",
}
_TEMP = {
    "temperature.gpu": "gpu_c", "temperature.memory": "mem_c",
    "temperature.gpu.tlimit": "tlimit_margin_c",
}
_FABRIC = {"fabric.state": "state", "fabric.status": "status", "fabric.cliqueid": "clique_id",
           "fabric.clusteruuid": "cluster_uuid", "fabric.health.summary": "health",
           "fabric.health.bandwidth": "bandwidth"}
_ECC_INT = {
    "ecc.errors.corrected.volatile.total": "volatile_correctable",
    "ecc.errors.uncorrected.volatile.total": "volatile_uncorrectable",
    "ecc.errors.corrected.aggregate.total": "aggregate_correctable",
    "ecc.errors.uncorrected.aggregate.total": "aggregate_uncorrectable",
    "retired_pages.single_bit_ecc.count": "retired_single_bit",
    "retired_pages.double_bit.count": "retired_double_bit",
    "remapped_rows.correctable": "remapped_correctable",
    "remapped_rows.uncorrectable": "remapped_uncorrectable",
}
_ECC_FLAG = {
    "retired_pages.pending": "retired_pages_pending", "remapped_rows.pending": "remap_pending",
    "remapped_rows.failure": "remap_failure",
}
_ECC_WORD = {"ecc.mode.current": "mode_current", "ecc.mode.pending": "mode_pending"}
_REASON_ROOTS = ("clocks_throttle_reasons.", "clocks_event_reasons.")
#: bits of ``clocks_throttle_reasons.active`` (nvml.h nvmlClocksEventReason*)
_REASON_BITS = (
    (0x1, "idle"), (0x2, "applications_clocks_setting"), (0x4, "sw_power_cap"), (0x8, "hw_slowdown"),
    (0x10, "sync_boost"), (0x20, "sw_thermal_slowdown"), (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"), (0x100, "display_clock_setting"),
)
_APPS = {"pid", "process_name", "used_memory", "used_gpu_memory", "uuid", "pci.bus_id", "name"}
_OTHER = {"index", "pci.bus_id", "pstate", "count", "timestamp", "display_mode", "display_active",
          "fan.speed", "memory.free", "memory.reserved", "pci.domain", "pci.bus", "pci.device",
          "pci.device_id", "pci.sub_device_id", "accounting.mode", "inforom.img", "power.management",
          "clocks_throttle_reasons.supported", "clocks_event_reasons.supported", "ecc.mode.current"}
_PREFIXES = ("clocks.", "power.", "temperature.", "pcie.", "ecc.", "utilization.", "memory.", "fabric.",
             "retired_pages.", "remapped_rows.", "clocks_throttle_reasons.", "clocks_event_reasons.",
             "mig.", "encoder.", "inforom.", "pci.", "gom.", "driver_model.", "enforced.", "protected_memory.")

#: the fields the narrower ``nvidia-smi-query-gpu`` format reads in full
_NARROW = {"index", "pci.bus_id", "pstate", *_FABRIC, *_PCIE}

_NAME = lazyre.compile(r"^[a-z][a-z_0-9]*(?:\.[a-zA-Z_0-9]+)*(?:\s*\[[^\]]*\])?$")
_CMD = lazyre.compile(r"--query-(gpu|compute-apps|accounted-apps)[=\s]+([\w.,]+)")
_FORMAT_OPT = lazyre.compile(r"--format[=\s]+([\w,]+)")


def canon(cell: str) -> str:
    """A header cell or queried field as one canonical field name (units dropped, aliases mapped).

    >>> canon(" clocks.sm [MHz]"), canon("gpu_bus_id"), canon("Clocks_Event_Reasons.HW_Slowdown")
    ('clocks.current.sm', 'pci.bus_id', 'clocks_event_reasons.hw_slowdown')
    """
    name = re.sub(r"\s*\[[^\]]*\]\s*$", "", cell.strip()).lower()
    return _ALIASES.get(name, name)


def known(name: str) -> bool:
    return (name in _OTHER or name in _DEVICE or name in _APPS or name in _PCIE or name in _CLOCKS
            or name in _TEMP or name in _FABRIC or name in _ECC_INT or name in _ECC_FLAG
            or name.startswith(_PREFIXES))


def _cells(line: str) -> list[str]:
    try:
        return [c.strip() for c in next(csv.reader([line], skipinitialspace=True))]
    except (csv.Error, StopIteration):
        return []


def _header(doc: Document) -> tuple[int | None, list[str]]:
    """(index, canonical names) of the header line: the first non-blank line, when every cell is a
    field name and at least two (or the only one) are nvidia-smi fields."""
    for i, line in enumerate(doc.lines[:20]):
        if not line.strip():
            continue
        raw = [c.strip() for c in line.split(",")]
        if not raw or not all(_NAME.match(c) for c in raw):
            return None, []
        cols = [canon(c) for c in raw]
        hits = sum(known(c) for c in cols)
        if hits >= min(2, len(cols)) and hits * 2 >= len(cols):
            return i, cols
        return None, []
    return None, []


def command_fields(command: str | None) -> tuple[str, list[str], bool]:
    """(query kind, canonical fields, header expected) from an nvidia-smi command line.

    >>> command_fields("nvidia-smi --query-gpu=index,clocks.sm --format=csv,noheader,nounits")
    ('gpu', ['index', 'clocks.current.sm'], False)
    >>> command_fields("nvidia-smi -q")
    ('', [], True)
    """
    m = _CMD.search(command or "")
    if not m or not re.search(r"\bnvidia-smi\b", command or ""):
        return "", [], True
    f = _FORMAT_OPT.search(command or "")
    header = not (f and "noheader" in f.group(1).split(","))
    return m.group(1), [canon(c) for c in m.group(2).split(",") if c.strip()], header


def _rows(doc: Document, start: int, ncols: int, ctx: ParseContext | None,
          limit: int | None = None) -> list[tuple[int, list[str]]]:
    out = []
    end = len(doc.lines) if limit is None else min(len(doc.lines), start + limit)
    for i in range(start, end):
        line = doc.lines[i]
        if not line.strip():
            continue
        cells = _cells(line)
        if cells and all(_NAME.match(c) for c in cells) and any(known(canon(c)) for c in cells) \
                and not any(re.search(r"\d", c) for c in cells[:1]):
            continue  # the header again (nvidia-smi -l N repeats it)
        if len(cells) != ncols:
            if ctx is not None:
                ctx.warn(i, f"expected {ncols} comma-separated values, got {len(cells)}: {line[:80]!r}")
            continue
        out.append((i, cells))
    return out


def sniff(doc: Document) -> float:
    i, cols = _header(doc)
    if i is None:
        kind, fields, header = command_fields(doc.command)
        if not fields or header:
            return 0.0
        # noheader: the rows must have as many cells as the command asked for
        rows = _rows(doc, 0, len(fields), None, 200)
        return 0.6 if rows and len(rows) * 2 >= sum(1 for ln in doc.lines[:200] if ln.strip()) else 0.0
    if not _rows(doc, i + 1, len(cols), None, 200):
        return 0.3
    # leave a query the narrower fabric/PCIe format reads in full to it (it scores 0.9 there)
    return 0.85 if set(cols) <= _NARROW else 0.95


def parse(doc: Document, ctx: ParseContext) -> None:
    start, cols = _header(doc)
    kind, fields, _ = command_fields(doc.command)
    if start is None:
        if not fields:
            raise NotApplicable("no nvidia-smi --query CSV header and no --query-... command")
        cols, start = fields, -1
    elif not kind:
        kind = "compute-apps" if "pid" in cols and not (set(cols) & (set(_PCIE) | set(_CLOCKS))) else "gpu"
    failures = [(i, m.group(1)) for i, ln in enumerate(doc.lines[:50]) if (m := _FAILURE.search(ln))]
    if failures:
        # nvidia-smi printed its own failure instead of (or between) the rows
        rows = _rows(doc, start + 1, len(cols), None)
        if not rows:
            i, msg = failures[0]
            ctx.add(GpuSummary, i, gpus=0, error=msg.strip())
            return
    rows = _rows(doc, start + 1, len(cols), ctx)
    if not rows:
        if ctx.warnings:
            raise ParseError("no readable --query row", ctx.warnings[0][0])
        raise NotApplicable("--query CSV without rows")
    if kind == "gpu":
        only = gpu_index_from_command(doc.command)
        for n, (i, cells) in enumerate(rows):
            _gpu_row(ctx, i, dict(zip(cols, cells)), n if only is None else only)
    elif kind in ("compute-apps", "accounted-apps"):
        for i, cells in rows:
            row = dict(zip(cols, cells))
            pid = integer(row.get("pid"))
            if pid is None:
                ctx.warn(i, f"no pid in row: {doc.lines[i][:80]!r}")
                continue
            mem = row.get("used_memory", row.get("used_gpu_memory"))
            ctx.add(GpuProcess, i, pid=pid, process_name=word(row.get("process_name", row.get("name"))),
                    used_memory_mib=number(mem), gpu_uuid=word(row.get("uuid")),
                    bus_id=norm_bus_id(row.get("pci.bus_id", "")))
    if not ctx.facts:
        if ctx.warnings:
            raise ParseError("no readable --query row", ctx.warnings[0][0])
        raise NotApplicable("the query holds no field this parser knows")


def _reasons(row: dict[str, str]) -> list[str] | None:
    """Active clock event reasons, or None when no reason field was queried."""
    active: list[str] = []
    seen = False
    for col, value in row.items():
        root = next((r for r in _REASON_ROOTS if col.startswith(r)), None)
        if root is None:
            continue
        sub = col[len(root):]
        if sub == "supported":
            continue
        if sub == "active":
            try:
                mask = int(value.strip(), 16) if value.strip().lower().startswith("0x") else None
            except ValueError:
                mask = None
            if mask is not None:
                seen = True
                active += [name for bit, name in _REASON_BITS if mask & bit and name not in active]
            continue
        state = flag(value)
        if state is None:
            continue
        seen = True
        name = _reason_name(sub)
        if state and name not in active:
            active.append(name)
    return active if seen else None


def _gpu_row(ctx: ParseContext, i: int, row: dict[str, str], ordinal: int) -> None:
    idx = integer(row.get("index")) if "index" in row else None
    gpu = idx if idx is not None else ordinal
    bus = norm_bus_id(row.get("pci.bus_id", ""))
    pstate = word(row.get("pstate"))
    active = _reasons(row)

    device = {f: conv(row[c]) for c, (f, conv) in _DEVICE.items() if c in row}
    if device:
        ctx.add(GpuDevice, i, gpu=gpu, bus_id=bus, **device)

    pcie = {f: integer(row[c]) for c, f in _PCIE.items() if c in row}
    if pcie:
        gc, gm = pcie.get("gen_current"), pcie.get("gen_max")
        wc, wm = pcie.get("width_current"), pcie.get("width_max")
        wd = wc is not None and wm is not None and wc < wm
        gd = gc is not None and gm is not None and gc < gm
        ps = re.fullmatch(r"P(\d{1,2})", pstate)
        idle = (ps is not None and int(ps.group(1)) >= 5) or "idle" in (active or [])
        ctx.add(GpuPcie, i, gpu=gpu, bus_id=bus, width_downgraded=wd, gen_downgraded=gd,
                downgraded=wd or gd, idle_gen_drop=gd and not wd and idle, **pcie)

    clocks = {f: number(row[c]) for c, f in _CLOCKS.items() if c in row}
    if clocks or "pstate" in row:
        sm, mx = clocks.get("sm_mhz"), clocks.get("max_sm_mhz")
        pct = round(100.0 * sm / mx, 1) if sm is not None and mx else None
        ctx.add(GpuClocks, i, gpu=gpu, performance_state=pstate, sm_pct_of_max=pct, **clocks)

    if active is not None:
        thermal = any(a in active for a in ("hw_thermal_slowdown", "sw_thermal_slowdown"))
        power = any(a in active for a in ("sw_power_cap", "hw_power_brake_slowdown"))
        ctx.add(GpuThrottle, i, gpu=gpu, active=active, thermal=thermal, power=power)

    ecc: dict = {f: integer(row[c]) for c, f in _ECC_INT.items() if c in row}
    ecc.update({f: flag(row[c]) for c, f in _ECC_FLAG.items() if c in row})
    ecc.update({f: word(row[c]) for c, f in _ECC_WORD.items() if c in row})
    if ecc:
        ctx.add(GpuEcc, i, gpu=gpu, **ecc)

    temp = {f: number(row[c]) for c, f in _TEMP.items() if c in row}
    if temp:
        ctx.add(GpuTemperature, i, gpu=gpu, **temp)

    fabric = {f: word(row[c]) for c, f in _FABRIC.items() if c in row}
    if fabric:
        ctx.add(GpuFabric, i, gpu=gpu, bus_id=bus, **fabric)


FORMATS = [
    Format(
        name="nvidia-smi-query",
        command="nvidia-smi --query-gpu=index,name,pci.bus_id,pstate,clocks.sm,clocks.max.sm,power.draw,"
                "power.limit,temperature.gpu,pcie.link.gen.current,pcie.link.gen.max,"
                "pcie.link.width.current,pcie.link.width.max,clocks_throttle_reasons.active,"
                "ecc.errors.uncorrected.volatile.total --format=csv",
        facts=("gpu.device", "gpu.pcie", "gpu.clocks", "gpu.throttle", "gpu.ecc", "gpu.temperature",
               "gpu.fabric", "gpu.process", "gpu.summary"),
        sniff=sniff,
        parse=parse,
        # a fabric/PCIe-link-only field list is the narrower nvidia-smi-query-gpu format's
        command_patterns=(r"\bnvidia-smi\b.*--query-(?:compute-apps|accounted-apps)[=\s]",
                          r"\bnvidia-smi\b.*--query-gpu[=\s](?:[\w.]+,)*(?!(?:index|pci\.bus_id|pstate|fabric\.[\w.]+"
                          r"|pcie\.link\.[\w.]+)(?:[,\s]|$))[a-z]"),
        description="nvidia-smi --query-gpu / --query-compute-apps CSV with any field list "
                    "(header or noheader, with or without units)",
    )
]
