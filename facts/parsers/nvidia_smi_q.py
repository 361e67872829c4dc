"""nvidia-smi -q - Command

The full per-GPU report of ``nvidia-smi -q`` (also ``-q -i N`` and ``-q -d SECTION,...``):
a preamble with driver and CUDA versions, then one block per GPU opened by ``GPU 00000000:18:00.0``.
Inside a block every nesting level is indented by 4 spaces; a line without `` : `` is a section
header, the others are ``Key   : value`` leaves. The colon column differs between drivers (42 on
470, 55 on 570, 42 again in the 570 ``Processes`` block), so lines are split on the first
whitespace-preceded colon and nesting is taken from the indentation. Section names changed over
time (``Clocks Throttle Reasons`` -> ``Clocks Event Reasons``, ``Power Readings`` ->
``GPU Power Readings``, absolute ``GPU Slowdown Temp`` -> relative ``GPU Slowdown T.Limit Temp``);
both spellings are read.

Yields per GPU ``gpu.device``, ``gpu.pcie``, ``gpu.clocks``, ``gpu.throttle``, ``gpu.ecc``,
``gpu.temperature`` and (NVSwitch systems, state not ``N/A``) ``gpu.fabric``; plus one
``gpu.summary`` per document. ``gpu`` is the position of the block (nvidia-smi prints GPUs in
index order) or the ``-i N`` of the command. The value extraction is shared with the XML parser
(:mod:`nvidia_smi_xml`), which feeds the same tables with element names.

Sample input (trimmed)::

    ==============NVSMI LOG==============

    Timestamp                                 : Thu Oct 13 08:02:44 2022
    Driver Version                            : 470.141.03
    CUDA Version                              : 11.4

    Attached GPUs                             : 8
    GPU 00000000:4E:00.0
        Product Name                          : NVIDIA A100-SXM4-80GB
        Persistence Mode                      : Disabled
        PCI
            Bus Id                            : 00000000:4E:00.0
            GPU Link Info
                PCIe Generation
                    Max                       : 4
                    Current                   : 4
                Link Width
                    Max                       : 16x
                    Current                   : 8x
            Replays Since Reset               : 1129
        Performance State                     : P0
        Clocks Throttle Reasons
            Idle                              : Active
            SW Power Cap                      : Not Active
            HW Slowdown                       : Not Active
                HW Thermal Slowdown           : Not Active

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "nvidia-smi-q"); parse(doc, ctx)
    >>> d = ctx.facts[0]
    >>> (d.fact_type, d.gpu, d.bus_id, d.name, d.persistence_mode, d.driver_version)
    ('gpu.device', 0, '0000:4e:00.0', 'NVIDIA A100-SXM4-80GB', False, '470.141.03')
    >>> p = [f for f in ctx.facts if f.fact_type == "gpu.pcie"][0]
    >>> (p.width_current, p.width_max, p.downgraded, p.idle_gen_drop, p.replay_counter, p.source.line)
    (8, 16, True, False, 1129, 15)
    >>> [f.active for f in ctx.facts if f.fact_type == "gpu.throttle"]
    [['idle']]
    >>> s = ctx.facts[-1]
    >>> (s.fact_type, s.gpus, s.attached_gpus, s.models)
    ('gpu.summary', 1, 8, ['NVIDIA A100-SXM4-80GB'])
    >>> sniff(doc) > 0.9
    True
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.gpu import (
    GpuClocks, GpuDevice, GpuEcc, GpuFabric, GpuPcie, GpuSummary, GpuTemperature, GpuThrottle,
)


SAMPLE = """\
==============NVSMI LOG==============

Timestamp                                 : Thu Oct 13 08:02:44 2022
Driver Version                            : 470.141.03
CUDA Version                              : 11.4

Attached GPUs                             : 8
GPU 00000000:4E:00.0
    Product Name                          : NVIDIA A100-SXM4-80GB
    Persistence Mode                      : Disabled
    PCI
        Bus Id                            : 00000000:4E:00.0
        GPU Link Info
            PCIe Generation
                Max                       : 4
                Current                   : 4
            Link Width
                Max                       : 16x
                Current                   : 8x
        Replays Since Reset               : 1129
    Performance State                     : P0
    Clocks Throttle Reasons
        Idle                              : Active
        SW Power Cap                      : Not Active
        HW Slowdown                       : Not Active
            HW Thermal Slowdown           : Not Active
"""

FACTS = ("gpu.device", "gpu.pcie", "gpu.clocks", "gpu.throttle", "gpu.ecc", "gpu.temperature",
         "gpu.fabric", "gpu.summary")

# -- value helpers (shared with the XML parser) ---------------------------------------------------

_BUS = lazyre.compile(r"^(?:([0-9a-fA-F]{1,8}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$")
_NUM = lazyre.compile(r"^([+-]?\d{1,15}(?:\.\d{1,15})?)\s*(?:[A-Za-z/%()]+(?:\s*[A-Za-z/%()]+)?)?$")
_MISSING = {"", "n/a", "[n/a]", "not supported", "[not supported]", "unknown error", "[unknown error]",
            "insufficient permissions", "[insufficient permissions]", "gpu requires reset",
            "[gpu requires reset]", "not available"}
_TRUE = {"enabled", "yes", "active", "true", "on"}
_FALSE = {"disabled", "no", "not active", "false", "off"}


def norm_bus_id(text: str) -> str:
    """``00000000:5D:00.0`` -> ``0000:5d:00.0``; '' when it is no PCI address.

    >>> norm_bus_id("00000000:5D:00.0"), norm_bus_id("00000008:01:00.0"), norm_bus_id("5d:00.0")
    ('0000:5d:00.0', '0008:01:00.0', '0000:5d:00.0')
    """
    m = _BUS.match(text.strip())
    if not m:
        return ""
    domain = int(m.group(1) or "0", 16)
    return f"{domain:04x}:{m.group(2)}:{m.group(3)}.{m.group(4)}".lower()


def number(text: str | None) -> float | None:
    """Leading number of a value with an optional unit (``688.41 W``, ``16x``); None for N/A."""
    if text is None:
        return None
    t = text.strip().replace(",", "")
    m = _NUM.match(t)
    if not m:
        return None
    try:
        return float(m.group(1))
    except ValueError:  # pragma: no cover - the regex only lets numbers through
        return None


def integer(text: str | None) -> int | None:
    v = number(text)
    if v is None or v != int(v):
        return None
    return int(v)


def flag(text: str | None) -> bool | None:
    if text is None:
        return None
    t = text.strip().lower()
    if t in _TRUE:
        return True
    if t in _FALSE:
        return False
    return None


def word(text: str | None) -> str:
    """The value as printed, '' when nvidia-smi had nothing to say (N/A and friends)."""
    if text is None:
        return ""
    t = text.strip()
    return "" if t.lower() in _MISSING else t


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


# -- one GPU's key/value map ----------------------------------------------------------------------


@dataclass
class Block:
    """One GPU: ``path -> (value, line index)``; paths are lowercase and '/'-joined."""

    index: int
    bus_id: str = ""
    values: dict[str, tuple[str, int]] = field(default_factory=dict)
    complete: bool = True

    def put(self, path: str, value: str, index: int) -> None:
        self.values.setdefault(path, (value, index))


class _Reader:
    """Looks keys up in a block and remembers which lines a fact was built from."""

    def __init__(self, block: Block):
        self.block = block
        self.lines: list[int] = []

    def get(self, *paths: str, record: bool = True) -> str | None:
        for p in paths:
            hit = self.block.values.get(p)
            if hit is not None:
                if record:
                    self.lines.append(hit[1])
                return hit[0]
        return None

    def children(self, prefix: str, record: bool = True) -> list[tuple[str, str]]:
        """(sub-path, value) of every key below ``prefix/``, in file order."""
        pre = prefix + "/"
        out = [(k[len(pre):], v) for k, v in self.block.values.items() if k.startswith(pre)]
        out.sort(key=lambda kv: kv[1][1])
        if record:
            self.lines.extend(i for _, (_, i) in out)
        return [(k, v) for k, (v, _) in out]

    def span(self) -> tuple[int, int]:
        if not self.lines:
            return self.block.index, self.block.index
        lo, hi = min(self.lines), max(self.lines)
        self.lines = []
        return lo, hi


@dataclass(frozen=True)
class Keys:
    """Where each value lives, for one flavour of output (text keys or XML element names)."""

    name: tuple[str, ...]
    uuid: tuple[str, ...]
    serial: tuple[str, ...]
    vbios: tuple[str, ...]
    minor: tuple[str, ...]
    arch: tuple[str, ...]
    bus_id: tuple[str, ...]
    persistence: tuple[str, ...]
    virt: tuple[str, ...]
    mig: tuple[str, ...]
    compute: tuple[str, ...]
    gsp: tuple[str, ...]
    power_limit: tuple[str, ...]
    default_power_limit: tuple[str, ...]
    min_power_limit: tuple[str, ...]
    max_power_limit: tuple[str, ...]
    power_draw: tuple[str, ...]
    instant_power: tuple[str, ...]
    gpu_util: tuple[str, ...]
    mem_util: tuple[str, ...]
    gen_current: tuple[str, ...]
    gen_max: tuple[str, ...]
    gen_dev_current: tuple[str, ...]
    gen_dev_max: tuple[str, ...]
    gen_host_max: tuple[str, ...]
    width_current: tuple[str, ...]
    width_max: tuple[str, ...]
    replay: tuple[str, ...]
    rollovers: tuple[str, ...]
    tx: tuple[str, ...]
    rx: tuple[str, ...]
    sm: tuple[str, ...]
    mem: tuple[str, ...]
    graphics: tuple[str, ...]
    max_sm: tuple[str, ...]
    max_mem: tuple[str, ...]
    max_graphics: tuple[str, ...]
    app_sm: tuple[str, ...]
    app_mem: tuple[str, ...]
    default_app_sm: tuple[str, ...]
    pstate: tuple[str, ...]
    reasons: tuple[str, ...]
    reason_counters: tuple[str, ...]
    ecc_current: tuple[str, ...]
    ecc_pending: tuple[str, ...]
    ecc_volatile: str
    ecc_aggregate: str
    sram_threshold: tuple[str, ...]
    remap_corr: tuple[str, ...]
    remap_unc: tuple[str, ...]
    remap_pending: tuple[str, ...]
    remap_failure: tuple[str, ...]
    retired_pending: tuple[str, ...]
    retired_sbe: tuple[str, ...]
    retired_dbe: tuple[str, ...]
    temp_gpu: tuple[str, ...]
    temp_mem: tuple[str, ...]
    temp_slowdown: tuple[str, ...]
    temp_shutdown: tuple[str, ...]
    temp_max_op: tuple[str, ...]
    tlimit: tuple[str, ...]
    tlimit_slowdown: tuple[str, ...]
    tlimit_shutdown: tuple[str, ...]
    fabric: str


def _p(*alts: str) -> tuple[str, ...]:
    return alts


TEXT_KEYS = Keys(
    name=_p("product name"), uuid=_p("gpu uuid"), serial=_p("serial number"),
    vbios=_p("vbios version"), minor=_p("minor number"), arch=_p("product architecture"),
    bus_id=_p("pci/bus id"), persistence=_p("persistence mode"),
    virt=_p("gpu virtualization mode/virtualization mode"), mig=_p("mig mode/current"),
    compute=_p("compute mode"), gsp=_p("gsp firmware version"),
    power_limit=_p("gpu power readings/current power limit", "power readings/enforced power limit",
                   "power readings/current power limit", "power readings/power limit"),
    default_power_limit=_p("gpu power readings/default power limit", "power readings/default power limit"),
    min_power_limit=_p("gpu power readings/min power limit", "power readings/min power limit"),
    max_power_limit=_p("gpu power readings/max power limit", "power readings/max power limit"),
    power_draw=_p("gpu power readings/average power draw", "power readings/average power draw",
                  "power readings/power draw", "gpu power readings/power draw"),
    instant_power=_p("gpu power readings/instantaneous power draw",
                     "power readings/instantaneous power draw"),
    gpu_util=_p("utilization/gpu"), mem_util=_p("utilization/memory"),
    gen_current=_p("pci/gpu link info/pcie generation/current"),
    gen_max=_p("pci/gpu link info/pcie generation/max"),
    gen_dev_current=_p("pci/gpu link info/pcie generation/device current"),
    gen_dev_max=_p("pci/gpu link info/pcie generation/device max"),
    gen_host_max=_p("pci/gpu link info/pcie generation/host max"),
    width_current=_p("pci/gpu link info/link width/current"),
    width_max=_p("pci/gpu link info/link width/max"),
    replay=_p("pci/replays since reset", "pci/replays"), rollovers=_p("pci/replay number rollovers"),
    tx=_p("pci/tx throughput"), rx=_p("pci/rx throughput"),
    sm=_p("clocks/sm"), mem=_p("clocks/memory"), graphics=_p("clocks/graphics"),
    max_sm=_p("max clocks/sm"), max_mem=_p("max clocks/memory"), max_graphics=_p("max clocks/graphics"),
    app_sm=_p("applications clocks/graphics"), app_mem=_p("applications clocks/memory"),
    default_app_sm=_p("default applications clocks/graphics"),
    pstate=_p("performance state"),
    reasons=_p("clocks event reasons", "clocks throttle reasons"),
    reason_counters=_p("clocks event reasons counters", "clocks throttle reasons counters"),
    ecc_current=_p("ecc mode/current"), ecc_pending=_p("ecc mode/pending"),
    ecc_volatile="ecc errors/volatile", ecc_aggregate="ecc errors/aggregate",
    sram_threshold=_p("ecc errors/aggregate/sram threshold exceeded"),
    remap_corr=_p("remapped rows/correctable error"), remap_unc=_p("remapped rows/uncorrectable error"),
    remap_pending=_p("remapped rows/pending"),
    remap_failure=_p("remapped rows/remapping failure occurred"),
    retired_pending=_p("retired pages/pending page blacklist", "retired pages/pending page retirement",
                       "retired pages/pending"),
    retired_sbe=_p("retired pages/single bit ecc"), retired_dbe=_p("retired pages/double bit ecc"),
    temp_gpu=_p("temperature/gpu current temp"), temp_mem=_p("temperature/memory current temp"),
    temp_slowdown=_p("temperature/gpu slowdown temp"), temp_shutdown=_p("temperature/gpu shutdown temp"),
    temp_max_op=_p("temperature/gpu max operating temp"),
    tlimit=_p("temperature/gpu t.limit temp"),
    tlimit_slowdown=_p("temperature/gpu slowdown t.limit temp"),
    tlimit_shutdown=_p("temperature/gpu shutdown t.limit temp"),
    fabric="fabric",
)

#: clock event reason names as printed (slugged) -> our names
_REASON_ALIASES = {
    "gpu_idle": "idle",
    "display_clocks_setting": "display_clock_setting",
    "hw_power_brake": "hw_power_brake_slowdown",
    "sw_power_capping": "sw_power_cap",
    "hw_thermal": "hw_thermal_slowdown",
    "sw_thermal": "sw_thermal_slowdown",
}
_COUNTER_FIELDS = {
    "sw_power_capping": "sw_power_cap_us", "sw_power_cap": "sw_power_cap_us",
    "sync_boost": "sync_boost_us",
    "sw_thermal_slowdown": "sw_thermal_us", "sw_therm_slowdown": "sw_thermal_us",
    "hw_thermal_slowdown": "hw_thermal_us", "hw_therm_slowdown": "hw_thermal_us",
    "hw_power_braking": "hw_power_brake_us", "hw_power_brake": "hw_power_brake_us",
    "hw_power_brake_slowdown": "hw_power_brake_us",
}
_REASON_PREFIXES = ("clocks_event_reasons_counters_", "clocks_throttle_reasons_counters_",
                    "clocks_event_reason_", "clocks_throttle_reason_")


def _reason_name(key: str) -> str:
    s = slug(key)
    for pre in _REASON_PREFIXES:
        if s.startswith(pre):
            s = s[len(pre):]
            break
    return _REASON_ALIASES.get(s, s)


def _pstate_number(pstate: str) -> int | None:
    m = re.fullmatch(r"P(\d{1,2})", pstate.strip())
    return int(m.group(1)) if m else None


def _ecc_totals(items: list[tuple[str, str]]) -> tuple[int | None, int | None]:
    """(correctable, uncorrectable) totals of one ECC counter group."""
    keys = [(k.replace("_", " ").lower(), v) for k, v in items]
    if any(k.startswith(("single bit", "double bit")) for k, _ in keys):
        # pre-Ampere layout: Single Bit / Double Bit groups, each with a Total
        corr = next((integer(v) for k, v in keys if k == "single bit/total"), None)
        unc = next((integer(v) for k, v in keys if k == "double bit/total"), None)
        return corr, unc
    corr: int | None = None
    unc: int | None = None
    for k, v in keys:
        if "/" in k:
            continue
        n = integer(v)
        if n is None:
            continue
        if "uncorrectable" in k:
            unc = (unc or 0) + n
        elif "correctable" in k:
            corr = (corr or 0) + n
    return corr, unc


def emit_gpu(ctx: ParseContext, gpu: int, block: Block, keys: Keys, driver: str, cuda: str) -> str:
    """Turn one GPU's key/value map into facts; returns the product name."""
    r = _Reader(block)
    bus = block.bus_id or norm_bus_id(r.get(*keys.bus_id, record=False) or "")
    name = word(r.get(*keys.name))
    device = dict(
        bus_id=bus, name=name, uuid=word(r.get(*keys.uuid)), serial=word(r.get(*keys.serial)),
        vbios=word(r.get(*keys.vbios)), driver_version=driver, cuda_version=cuda,
        minor_number=integer(r.get(*keys.minor)), architecture=word(r.get(*keys.arch)),
        persistence_mode=flag(r.get(*keys.persistence)), virtualization_mode=word(r.get(*keys.virt)),
        mig_mode=word(r.get(*keys.mig)), compute_mode=word(r.get(*keys.compute)),
        power_limit_w=number(r.get(*keys.power_limit)),
        default_power_limit_w=number(r.get(*keys.default_power_limit)),
        min_power_limit_w=number(r.get(*keys.min_power_limit)),
        max_power_limit_w=number(r.get(*keys.max_power_limit)),
        power_draw_w=number(r.get(*keys.power_draw)),
        instant_power_draw_w=number(r.get(*keys.instant_power)),
        gpu_util_pct=number(r.get(*keys.gpu_util)), mem_util_pct=number(r.get(*keys.mem_util)),
        gsp_firmware=word(r.get(*keys.gsp)),
    )
    ctx.add(GpuDevice, *r.span(), gpu=gpu, **device)

    pstate = word(r.get(*keys.pstate, record=False))
    reasons_prefix = next((p for p in keys.reasons if any(
        k.startswith(p + "/") for k in block.values)), None)
    active: list[str] = []
    reason_items: list[tuple[str, str]] = []
    if reasons_prefix is not None:
        reason_items = [(k, v) for k, v in r.children(reasons_prefix, record=False) if "/" not in k]
        for k, v in reason_items:
            if flag(v) is True:
                name_ = _reason_name(k)
                if name_ and name_ not in active:
                    active.append(name_)

    # PCIe
    pcie_fields = dict(
        gen_current=integer(r.get(*keys.gen_current)), gen_max=integer(r.get(*keys.gen_max)),
        gen_device_current=integer(r.get(*keys.gen_dev_current)),
        gen_device_max=integer(r.get(*keys.gen_dev_max)),
        gen_host_max=integer(r.get(*keys.gen_host_max)),
        width_current=integer(r.get(*keys.width_current)), width_max=integer(r.get(*keys.width_max)),
        replay_counter=integer(r.get(*keys.replay)), replay_rollovers=integer(r.get(*keys.rollovers)),
        tx_kbps=number(r.get(*keys.tx)), rx_kbps=number(r.get(*keys.rx)),
    )
    if r.lines:
        gc, gm = pcie_fields["gen_current"], pcie_fields["gen_max"]
        wc, wm = pcie_fields["width_current"], pcie_fields["width_max"]
        width_down = wc is not None and wm is not None and wc < wm
        gen_down = gc is not None and gm is not None and gc < gm
        pnum = _pstate_number(pstate)
        idle = "idle" in active or (pnum is not None and pnum >= 5)
        ctx.add(GpuPcie, *r.span(), gpu=gpu, bus_id=bus, width_downgraded=width_down,
                gen_downgraded=gen_down, downgraded=width_down or gen_down,
                idle_gen_drop=gen_down and not width_down and idle, **pcie_fields)

    # clocks
    clock_fields = dict(
        sm_mhz=number(r.get(*keys.sm)), mem_mhz=number(r.get(*keys.mem)),
        graphics_mhz=number(r.get(*keys.graphics)), max_sm_mhz=number(r.get(*keys.max_sm)),
        max_mem_mhz=number(r.get(*keys.max_mem)), max_graphics_mhz=number(r.get(*keys.max_graphics)),
        app_sm_mhz=number(r.get(*keys.app_sm)), app_mem_mhz=number(r.get(*keys.app_mem)),
        default_app_sm_mhz=number(r.get(*keys.default_app_sm)),
    )
    if pstate:
        r.get(*keys.pstate)
    if r.lines:
        sm, mx = clock_fields["sm_mhz"], clock_fields["max_sm_mhz"]
        pct = round(100.0 * sm / mx, 1) if sm is not None and mx else None
        ctx.add(GpuClocks, *r.span(), gpu=gpu, performance_state=pstate, sm_pct_of_max=pct,
                **clock_fields)

    # clock event reasons
    if reasons_prefix is not None:
        r.children(reasons_prefix)
        counters: dict[str, float | None] = {}
        cprefix = next((p for p in keys.reason_counters if any(
            k.startswith(p + "/") for k in block.values)), None)
        if cprefix is not None:
            for k, v in r.children(cprefix):
                fname = _COUNTER_FIELDS.get(_reason_name(k))
                if fname and fname not in counters:
                    counters[fname] = number(v)
        thermal = any(a in active for a in ("hw_thermal_slowdown", "sw_thermal_slowdown"))
        power = any(a in active for a in ("sw_power_cap", "hw_power_brake_slowdown"))
        ctx.add(GpuThrottle, *r.span(), gpu=gpu, active=active, thermal=thermal, power=power,
                **counters)

    # ECC, row remapping, page retirement
    mode = r.get(*keys.ecc_current)
    vol_c, vol_u = _ecc_totals(r.children(keys.ecc_volatile))
    agg_c, agg_u = _ecc_totals(r.children(keys.ecc_aggregate))
    ecc_fields = dict(
        mode_current=word(mode), mode_pending=word(r.get(*keys.ecc_pending)),
        volatile_correctable=vol_c, volatile_uncorrectable=vol_u,
        aggregate_correctable=agg_c, aggregate_uncorrectable=agg_u,
        sram_threshold_exceeded=flag(r.get(*keys.sram_threshold)),
        remap_pending=flag(r.get(*keys.remap_pending)),
        remap_failure=flag(r.get(*keys.remap_failure)),
        remapped_correctable=integer(r.get(*keys.remap_corr)),
        remapped_uncorrectable=integer(r.get(*keys.remap_unc)),
        retired_pages_pending=flag(r.get(*keys.retired_pending)),
        retired_single_bit=integer(r.get(*keys.retired_sbe)),
        retired_double_bit=integer(r.get(*keys.retired_dbe)),
    )
    if r.lines:
        ctx.add(GpuEcc, *r.span(), gpu=gpu, **ecc_fields)

    # temperatures
    temp_fields = dict(
        gpu_c=number(r.get(*keys.temp_gpu)), mem_c=number(r.get(*keys.temp_mem)),
        slowdown_c=number(r.get(*keys.temp_slowdown)), shutdown_c=number(r.get(*keys.temp_shutdown)),
        max_operating_c=number(r.get(*keys.temp_max_op)),
        tlimit_margin_c=number(r.get(*keys.tlimit)),
        slowdown_tlimit_c=number(r.get(*keys.tlimit_slowdown)),
        shutdown_tlimit_c=number(r.get(*keys.tlimit_shutdown)),
    )
    if r.lines:
        ctx.add(GpuTemperature, *r.span(), gpu=gpu, **temp_fields)

    # NVSwitch fabric registration (only where the GPU takes part in one)
    f = keys.fabric
    state = word(r.get(f + "/state"))
    if state:
        fabric = dict(
            state=state, status=word(r.get(f + "/status")), clique_id=word(r.get(f + "/cliqueid")),
            cluster_uuid=word(r.get(f + "/clusteruuid")), health=word(r.get(f + "/health/summary")),
            bandwidth=word(r.get(f + "/health/bandwidth")),
        )
        ctx.add(GpuFabric, *r.span(), gpu=gpu, bus_id=bus, **fabric)
    r.span()
    return name


def gpu_index_from_command(command: str | None) -> int | None:
    """``nvidia-smi -q -i 3`` / ``--id=3`` -> 3 (a single numeric index only)."""
    if not command:
        return None
    m = re.search(r"(?:\s-i\s*|\s--id[=\s])\s*(\d{1,3})(?=\s|$)", " " + command)
    return int(m.group(1)) if m else None


def emit_all(ctx: ParseContext, blocks: list[Block], keys: Keys, driver: str, cuda: str,
             attached: int | None, unreachable: list[str], error: str, summary_index: int | None) -> None:
    only = gpu_index_from_command(ctx.doc.command)
    models: list[str] = []
    for n, block in enumerate(blocks):
        gpu = only if only is not None and len(blocks) == 1 else n
        name = emit_gpu(ctx, gpu, block, keys, driver, cuda)
        if name and name not in models:
            models.append(name)
    ctx.add(GpuSummary, summary_index, gpus=len(blocks), attached_gpus=attached,
            driver_version=driver, cuda_version=cuda, models=models,
            unreachable_bus_ids=unreachable, error=error)


# -- text layout ----------------------------------------------------------------------------------

_BANNER = lazyre.compile(r"(?<!=)=+\s*NVSMI LOG\s*=")
_GPU_HEAD = lazyre.compile(r"^(\s*)GPU\s+((?:[0-9A-Fa-f]{4,8}:)?[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s*$")
# "key    : value": the key runs to the first blanks-then-colon; a blank run is taken into the key
# only when a word follows it, so a long blank run is scanned once (the lazy ``(\S.*?)\s+:`` took
# quadratic time on it)
_LEAF = lazyre.compile(r"^( *)(\S(?:\S|\s+(?=[^\s:]))*)\s+:(?:\s(.*))?$")
_UNREACHABLE = lazyre.compile(
    r"device handle for GPU\s*((?:[0-9A-Fa-f]{4,8}:)?[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])", re.I)
_FAILURE = lazyre.compile(
    r"(No devices were found|NVIDIA-SMI has failed[^\n]*|Failed to initialize NVML[^\n]*|"
    r"Unable to determine the device handle[^\n]*)", re.I)
_KNOWN_KEYS = ("product name", "gpu uuid", "persistence mode", "performance state", "vbios version",
               "minor number", "bus id", "fb memory usage", "driver version", "attached gpus")


def sniff(doc: Document) -> float:
    head = doc.lines[:200]
    if any(_BANNER.search(ln) for ln in head[:40]):
        return 0.95
    if any("<nvidia_smi_log" in ln for ln in head[:20]):
        return 0.0
    gpu_heads = sum(1 for ln in head if _GPU_HEAD.match(ln))
    keys = set()
    for ln in head:
        m = _LEAF.match(ln)
        if m:
            k = " ".join(m.group(2).lower().split())
            if k in _KNOWN_KEYS:
                keys.add(k)
    if gpu_heads and len(keys) >= 2:
        return 0.85
    if len(keys) >= 3:
        return 0.6
    return 0.0


def _indent(line: str) -> int:
    stripped = line.lstrip(" \t")
    return len(line[: len(line) - len(stripped)].expandtabs(4))


def parse(doc: Document, ctx: ParseContext) -> None:
    lines = doc.lines
    driver = cuda = ""
    attached: int | None = None
    unreachable: list[str] = []
    errors: list[str] = []
    blocks: list[Block] = []
    block: Block | None = None
    gpu_indent = 0
    stack: list[tuple[int, str]] = []
    banner = summary_index = None
    for i, raw in enumerate(lines):
        line = raw.replace("\t", "    ").rstrip()
        if not line.strip():
            continue
        if _BANNER.search(line):
            banner = i if banner is None else banner
            continue
        g = _GPU_HEAD.match(line)
        if g:
            block = Block(index=i, bus_id=norm_bus_id(g.group(2)))
            blocks.append(block)
            gpu_indent = _indent(line)
            stack = []
            continue
        u = _UNREACHABLE.search(line)
        e = _FAILURE.search(line)
        if u or e:
            if u:
                bus = norm_bus_id(u.group(1))
                if bus and bus not in unreachable:
                    unreachable.append(bus)
            if e and e.group(1).strip() not in errors:
                errors.append(e.group(1).strip())
            ctx.warn(i, line.strip()[:200])
            summary_index = i if summary_index is None else summary_index
            continue
        m = _LEAF.match(line)
        ind = _indent(line)
        if block is None:
            if m:
                key = " ".join(m.group(2).lower().split())
                val = (m.group(3) or "").strip()
                if key == "driver version":
                    driver = word(val)
                    summary_index = i if summary_index is None else summary_index
                elif key == "cuda version":
                    cuda = word(val)
                elif key == "attached gpus":
                    attached = integer(val)
                    summary_index = i if summary_index is None else summary_index
            continue
        if ind <= gpu_indent:
            # a stray line between GPU blocks (prompt, shell warning): not part of the tree
            ctx.warn(i, f"unexpected line inside a GPU block: {line.strip()[:80]!r}")
            continue
        while stack and stack[-1][0] >= ind:
            stack.pop()
        if m:
            key = " ".join(m.group(2).lower().split())
            path = "/".join([s for _, s in stack] + [key])
            block.put(path, (m.group(3) or "").strip(), i)
        else:
            stack.append((ind, " ".join(line.strip().lower().split())))

    if not blocks:
        if errors or unreachable:
            ctx.add(GpuSummary, summary_index, gpus=0, attached_gpus=attached, driver_version=driver,
                    cuda_version=cuda, unreachable_bus_ids=unreachable, error="; ".join(errors))
            return
        if banner is not None or attached:
            # the preamble alone (cut, or ``| head``): it proves no GPU's state, and a gpu.summary
            # with gpus=0 would say "no GPUs": a located warning and no facts
            ctx.warn(banner if banner is not None else (summary_index or 0),
                     "nvidia-smi -q output without any GPU block (truncated?)")
            return
        raise NotApplicable("no nvidia-smi -q GPU blocks")

    sizes = [len(b.values) for b in blocks]
    selective = bool(doc.command and re.search(r"\s(-d|--display)[=\s]", " " + doc.command))
    if len(blocks) > 1 and not selective and sizes[-1] < 0.5 * max(sizes):
        ctx.warn(len(lines) - 1, f"last GPU block has {sizes[-1]} values against up to {max(sizes)}: "
                 "output looks truncated")
    if summary_index is None:
        summary_index = blocks[0].index
    emit_all(ctx, blocks, TEXT_KEYS, driver, cuda, attached, unreachable, "; ".join(errors),
             summary_index)


FORMATS = [
    Format(
        name="nvidia-smi-q",
        command="nvidia-smi -q",
        facts=FACTS,
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\bnvidia-smi\b(?=.*(?:\s-q\b|\s--query(?:\s|$)))(?!.*\s(?:-x|--xml-format)\b)",),
        description="nvidia-smi -q per-GPU report (text): identity, PCIe link, clocks and clock event "
                    "reasons, ECC and row remapping, temperatures, power, fabric state",
    )
]
