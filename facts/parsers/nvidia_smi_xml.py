"""nvidia-smi -q -x - Command

The XML form of ``nvidia-smi -q``: root ``<nvidia_smi_log>`` (DOCTYPE ``nvsmi_device_vNN.dtd``,
NN grows with the driver) with ``<driver_version>``, ``<cuda_version>``, ``<attached_gpus>`` and
one ``<gpu id="00000000:18:00.0">`` per GPU. Element names are snake_case versions of the text
keys and values are the same strings, units included; older drivers use
``<clocks_throttle_reasons>``/``<power_readings>``/``<gpu_temp_slow_threshold>``, newer ones
``<clocks_event_reasons>``/``<gpu_power_readings>``/``<gpu_temp_slow_tlimit_threshold>``.

The input is untrusted: it is parsed with ``defusedxml`` (no entity expansion, no external
references). Leaf elements of each GPU become a path -> value map that the shared extraction of
:mod:`nvidia_smi_q` turns into the same facts as the text report; each fact points at the line
of the first element it was built from. A document cut short still yields the GPUs that were
read, with a warning.

Sample input (trimmed)::

    <?xml version="1.0" ?>
    <!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">
    <nvidia_smi_log>
        <driver_version>570.133.20</driver_version>
        <cuda_version>12.8</cuda_version>
        <attached_gpus>8</attached_gpus>
        <gpu id="00000000:18:00.0">
            <product_name>NVIDIA H100 80GB HBM3</product_name>
            <persistence_mode>Enabled</persistence_mode>
            <pci>
                <pci_gpu_link_info>
                    <pcie_gen>
                        <max_link_gen>5</max_link_gen>
                        <current_link_gen>5</current_link_gen>
                    </pcie_gen>
                    <link_widths>
                        <max_link_width>16x</max_link_width>
                        <current_link_width>16x</current_link_width>
                    </link_widths>
                </pci_gpu_link_info>
                <replay_counter>0</replay_counter>
            </pci>
            <clocks_event_reasons>
                <clocks_event_reason_gpu_idle>Not Active</clocks_event_reason_gpu_idle>
                <clocks_event_reason_sw_power_cap>Active</clocks_event_reason_sw_power_cap>
            </clocks_event_reasons>
        </gpu>
    </nvidia_smi_log>

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "nvidia-smi-q-xml"); parse(doc, ctx)
    >>> d = ctx.facts[0]
    >>> (d.fact_type, d.gpu, d.bus_id, d.name, d.persistence_mode, d.source.line)
    ('gpu.device', 0, '0000:18:00.0', 'NVIDIA H100 80GB HBM3', True, 8)
    >>> p = [f for f in ctx.facts if f.fact_type == "gpu.pcie"][0]
    >>> (p.gen_current, p.width_current, p.downgraded, p.source.line)
    (5, 16, False, 13)
    >>> [(f.active, f.power) for f in ctx.facts if f.fact_type == "gpu.throttle"]
    [(['sw_power_cap'], True)]
    >>> (ctx.facts[-1].gpus, ctx.facts[-1].driver_version)
    (1, '570.133.20')
    >>> sniff(doc) > 0.9
    True
"""

from __future__ import annotations

import re
from typing import Any

import defusedxml.ElementTree as DET
from defusedxml.common import DefusedXmlException

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.parsers.nvidia_smi_q import (
    FACTS, Block, Keys, emit_all, integer, norm_bus_id, word,
)

SAMPLE = """\
<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">
<nvidia_smi_log>
    <driver_version>570.133.20</driver_version>
    <cuda_version>12.8</cuda_version>
    <attached_gpus>8</attached_gpus>
    <gpu id="00000000:18:00.0">
        <product_name>NVIDIA H100 80GB HBM3</product_name>
        <persistence_mode>Enabled</persistence_mode>
        <pci>
            <pci_gpu_link_info>
                <pcie_gen>
                    <max_link_gen>5</max_link_gen>
                    <current_link_gen>5</current_link_gen>
                </pcie_gen>
                <link_widths>
                    <max_link_width>16x</max_link_width>
                    <current_link_width>16x</current_link_width>
                </link_widths>
            </pci_gpu_link_info>
            <replay_counter>0</replay_counter>
        </pci>
        <clocks_event_reasons>
            <clocks_event_reason_gpu_idle>Not Active</clocks_event_reason_gpu_idle>
            <clocks_event_reason_sw_power_cap>Active</clocks_event_reason_sw_power_cap>
        </clocks_event_reasons>
    </gpu>
</nvidia_smi_log>
"""


def _p(*alts: str) -> tuple[str, ...]:
    return alts


XML_KEYS = Keys(
    name=_p("product_name"), uuid=_p("uuid"), serial=_p("serial"), vbios=_p("vbios_version"),
    minor=_p("minor_number"), arch=_p("product_architecture"), bus_id=_p("pci/pci_bus_id"),
    persistence=_p("persistence_mode"), virt=_p("gpu_virtualization_mode/virtualization_mode"),
    mig=_p("mig_mode/current_mig"), compute=_p("compute_mode"), gsp=_p("gsp_firmware_version"),
    power_limit=_p("gpu_power_readings/current_power_limit", "power_readings/enforced_power_limit",
                   "power_readings/current_power_limit", "power_readings/power_limit"),
    default_power_limit=_p("gpu_power_readings/default_power_limit", "power_readings/default_power_limit"),
    min_power_limit=_p("gpu_power_readings/min_power_limit", "power_readings/min_power_limit"),
    max_power_limit=_p("gpu_power_readings/max_power_limit", "power_readings/max_power_limit"),
    power_draw=_p("gpu_power_readings/average_power_draw", "power_readings/average_power_draw",
                  "power_readings/power_draw", "gpu_power_readings/power_draw"),
    instant_power=_p("gpu_power_readings/instant_power_draw", "power_readings/instant_power_draw"),
    gpu_util=_p("utilization/gpu_util"), mem_util=_p("utilization/memory_util"),
    gen_current=_p("pci/pci_gpu_link_info/pcie_gen/current_link_gen"),
    gen_max=_p("pci/pci_gpu_link_info/pcie_gen/max_link_gen"),
    gen_dev_current=_p("pci/pci_gpu_link_info/pcie_gen/device_current_link_gen"),
    gen_dev_max=_p("pci/pci_gpu_link_info/pcie_gen/max_device_link_gen"),
    gen_host_max=_p("pci/pci_gpu_link_info/pcie_gen/max_host_link_gen"),
    width_current=_p("pci/pci_gpu_link_info/link_widths/current_link_width"),
    width_max=_p("pci/pci_gpu_link_info/link_widths/max_link_width"),
    replay=_p("pci/replay_counter"), rollovers=_p("pci/replay_rollover_counter"),
    tx=_p("pci/tx_util"), rx=_p("pci/rx_util"),
    sm=_p("clocks/sm_clock"), mem=_p("clocks/mem_clock"), graphics=_p("clocks/graphics_clock"),
    max_sm=_p("max_clocks/sm_clock"), max_mem=_p("max_clocks/mem_clock"),
    max_graphics=_p("max_clocks/graphics_clock"),
    app_sm=_p("applications_clocks/graphics_clock"), app_mem=_p("applications_clocks/mem_clock"),
    default_app_sm=_p("default_applications_clocks/graphics_clock"),
    pstate=_p("performance_state", "gpu_power_readings/power_state"),
    reasons=_p("clocks_event_reasons", "clocks_throttle_reasons"),
    reason_counters=_p("clocks_event_reasons_counters", "clocks_throttle_reasons_counters"),
    ecc_current=_p("ecc_mode/current_ecc"), ecc_pending=_p("ecc_mode/pending_ecc"),
    ecc_volatile="ecc_errors/volatile", ecc_aggregate="ecc_errors/aggregate",
    sram_threshold=_p("ecc_errors/aggregate/sram_threshold_exceeded"),
    remap_corr=_p("remapped_rows/remapped_row_corr"), remap_unc=_p("remapped_rows/remapped_row_unc"),
    remap_pending=_p("remapped_rows/remapped_row_pending"),
    remap_failure=_p("remapped_rows/remapped_row_failure"),
    retired_pending=_p("retired_pages/pending_blacklist", "retired_pages/pending_retirement"),
    retired_sbe=_p("retired_pages/multiple_single_bit_retirement/retired_count"),
    retired_dbe=_p("retired_pages/double_bit_retirement/retired_count"),
    temp_gpu=_p("temperature/gpu_temp"), temp_mem=_p("temperature/memory_temp"),
    temp_slowdown=_p("temperature/gpu_temp_slow_threshold"),
    temp_shutdown=_p("temperature/gpu_temp_max_threshold"),
    temp_max_op=_p("temperature/gpu_temp_max_gpu_threshold"),
    tlimit=_p("temperature/gpu_temp_tlimit"),
    tlimit_slowdown=_p("temperature/gpu_temp_slow_tlimit_threshold"),
    tlimit_shutdown=_p("temperature/gpu_temp_max_tlimit_threshold"),
    fabric="fabric",
)

_ROOT = "nvidia_smi_log"


class _Collector:
    """expat target: leaf values of each ``<gpu>`` as ``path -> (text, line index)``."""

    def __init__(self) -> None:
        self.expat: Any = None
        self.stack: list[tuple[str, int, bool]] = []  # tag, line index, has children
        self.text: list[str] = []
        self.root: str | None = None
        self.top: dict[str, tuple[str, int]] = {}
        self.blocks: list[Block] = []
        self.open_gpu: Block | None = None
        self.done = 0

    def _line(self) -> int:
        try:
            return max(int(self.expat.CurrentLineNumber) - 1, 0)
        except Exception:  # pragma: no cover - expat always has a line number
            return 0

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        tag = tag.lower()
        if self.stack:
            t, i, _ = self.stack[-1]
            self.stack[-1] = (t, i, True)
        elif self.root is None:
            self.root = tag
        line = self._line()
        self.stack.append((tag, line, False))
        self.text = []
        if len(self.stack) == 2 and tag == "gpu" and self.root == _ROOT:
            self.open_gpu = Block(index=line, bus_id=norm_bus_id(str(attrib.get("id", ""))),
                                  complete=False)
            self.blocks.append(self.open_gpu)

    def data(self, text: str) -> None:
        self.text.append(text)

    def end(self, tag: str) -> None:
        if not self.stack:
            return
        t, line, has_children = self.stack.pop()
        value = " ".join("".join(self.text).split())
        self.text = []
        if self.open_gpu is not None and len(self.stack) == 1 and t == "gpu":
            self.open_gpu.complete = True
            self.open_gpu = None
            return
        if has_children:
            return
        if self.open_gpu is not None and len(self.stack) >= 2:
            path = "/".join(s[0] for s in self.stack[2:])
            self.open_gpu.put(f"{path}/{t}" if path else t, value, line)
        elif len(self.stack) == 1:
            self.top.setdefault(t, (value, line))

    def close(self) -> None:
        return None


def sniff(doc: Document) -> float:
    head = doc.lines[:30]
    if any("<nvidia_smi_log" in ln for ln in head):
        return 0.97
    if any("nvsmi_device" in ln and "DOCTYPE" in ln for ln in head):
        return 0.95
    return 0.0


def parse(doc: Document, ctx: ParseContext) -> None:
    text = "\n".join(doc.lines)
    if "<" not in text:
        raise NotApplicable("not XML")
    col = _Collector()
    problem: str | None = None
    try:
        parser = DET.XMLParser(target=col)
        col.expat = parser.parser
        parser.feed(text)
        parser.close()
    except DefusedXmlException as exc:
        raise ParseError(f"forbidden XML construct: {type(exc).__name__}", 1) from None
    except Exception as exc:  # expat errors, bad encodings: the document is malformed
        problem = f"malformed XML: {str(exc)[:160]}"
    if col.root != _ROOT:
        if col.root is None and _ROOT in text:
            raise ParseError(problem or "nvidia-smi XML log without its root element", 1)
        raise NotApplicable(f"not an nvidia-smi XML log (root {col.root!r})")
    m = re.search(r"line (\d+)", problem or "")
    err_index = min(int(m.group(1)) - 1, len(doc.lines) - 1) if m else len(doc.lines) - 1
    if problem is not None:
        if not col.blocks:
            raise ParseError(problem, doc.lineno(max(err_index, 0)))
        ctx.warn(max(err_index, 0), problem + "; GPUs read so far are kept")
    for b in col.blocks:
        if not b.complete and problem is None:  # pragma: no cover - expat reports unclosed tags
            ctx.warn(b.index, "GPU element not closed")

    def top(key: str) -> tuple[str, int | None]:
        hit = col.top.get(key)
        return (hit[0], hit[1]) if hit else ("", None)

    driver, di = top("driver_version")
    cuda, _ = top("cuda_version")
    attached, ai = top("attached_gpus")
    summary_index = di if di is not None else ai if ai is not None else (
        col.blocks[0].index if col.blocks else 0)
    if not col.blocks:
        if attached or driver:
            # nvidia-smi found no GPU ('<attached_gpus>0</attached_gpus>')
            emit_all(ctx, [], XML_KEYS, word(driver), word(cuda), integer(attached), [], "",
                     summary_index)
            return
        raise NotApplicable("nvidia-smi XML log without GPUs or versions")
    emit_all(ctx, col.blocks, XML_KEYS, word(driver), word(cuda), integer(attached), [], "",
             summary_index)


FORMATS = [
    Format(
        name="nvidia-smi-q-xml",
        command="nvidia-smi -q -x",
        facts=FACTS,
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\bnvidia-smi\b.*\s(?:-x|--xml-format)\b",),
        description="nvidia-smi -q -x per-GPU report (XML, parsed with defusedxml): same facts as "
                    "the text report",
    )
]
