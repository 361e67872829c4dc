"""ibdev2netdev - Command

Output of ``ibdev2netdev`` and ``ibdev2netdev -v`` (MLNX_OFED / DOCA script): one line per RDMA
port, ``<ibdev> port <n> ==> <netdev> (Up|Down)``; with ``-v`` the line starts with the PCI
address, the CA type and ordering part number, the card description and firmware, and carries the
port state (``(ACTIVE)``, ``(DOWN  )``) before the arrow. The description states what the card
supports (``400GbE / NDR IB``, ``200GbE / NDR200 IB``, ``HDR IB (200Gb/s)``), which becomes
``max_rate_gbps`` of the port. Yields ``net.netdev_map`` and ``ib.port`` per line, ``ib.device``
per device (``-v``) and one ``ib.summary`` (port state from ``-v``, else the netdev state).

Sample input::

    mlx5_0 port 1 ==> ibp23s0 (Up)
    mlx5_9 port 1 ==> ibp170s0 (Down)
    0000:5c:00.0 mlx5_5 (MT4129 - MCX75310AAS-NEAT) NVIDIA ConnectX-7 HHHL Adapter card, 400GbE / NDR IB (default mode), Single-port OSFP, PCIe 5.0 x16, Crypto Disabled, Secure Boot Enabled fw 28.39.2048 port 1 (ACTIVE) ==> ibp92s0 (Up)

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "ibdev2netdev"); parse(doc, ctx)
    >>> maps = [f for f in ctx.facts if f.fact_type == "net.netdev_map"]
    >>> [(m.device, m.port, m.netdev, m.state, m.port_state) for m in maps]
    [('mlx5_0', 1, 'ibp23s0', 'Up', ''), ('mlx5_9', 1, 'ibp170s0', 'Down', ''), ('mlx5_5', 1, 'ibp92s0', 'Up', 'Active')]
    >>> (maps[2].pci_bus, maps[2].ca_type, maps[2].part_number, maps[2].fw_version)
    ('0000:5c:00.0', 'MT4129', 'MCX75310AAS-NEAT', '28.39.2048')
    >>> p = [f for f in ctx.facts if f.fact_type == "ib.port"][2]
    >>> (p.device, p.netdev, p.state, p.max_rate_gbps, p.source.line)
    ('mlx5_5', 'ibp92s0', 'Active', 400.0, 3)
    >>> sniff(doc) > 0.9
    True
"""

from __future__ import annotations

import re
from typing import Any

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.net import NetdevMap
from clusterdx.facts.parsers.ibstat import CA_MODELS, emit_ports, norm_state


SAMPLE = """\
mlx5_0 port 1 ==> ibp23s0 (Up)
mlx5_9 port 1 ==> ibp170s0 (Down)
0000:5c:00.0 mlx5_5 (MT4129 - MCX75310AAS-NEAT) NVIDIA ConnectX-7 HHHL Adapter card, 400GbE / NDR IB \
(default mode), Single-port OSFP, PCIe 5.0 x16, Crypto Disabled, Secure Boot Enabled fw 28.39.2048 port 1 \
(ACTIVE) ==> ibp92s0 (Up)
"""

_SHORT = lazyre.compile(r"^\s*(\S+)\s+port\s+(\d+)\s+==>\s+(\S+)\s+\((\w+)\)\s*$")
_VERBOSE = lazyre.compile(
    r"^\s*(?P<bdf>(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+(?P<dev>\S+)\s+"
    r"(?:\((?P<ca>[^)\s]*)\s*-\s*(?P<opn>[^)]*?)\s*\)\s*)?(?P<desc>.*?)"
    r"(?:\s+fw\s+(?P<fw>\S+))?\s+port\s+(?P<port>\d+)\s+\((?P<pstate>[A-Za-z_ ]+)\)\s+==>\s+"
    r"(?P<netdev>\S+)\s+\((?P<state>\w+)\)\s*$")
_ARROW = lazyre.compile(r"\bport\s+\d+\s.*==>")
#: _VERBOSE backtracks quadratically on long lines; real ibdev2netdev lines are ~150 characters
_MAX_LINE = 4096
_GBE = lazyre.compile(r"(?<!\d)(\d+)\s*Gb(?:E|/s)\b", re.IGNORECASE)
_IB_NAME = lazyre.compile(r"\b(XDR|NDR200|NDR|HDR100|HDR|EDR|FDR)\b")
_IB_RATE = {"XDR": 800.0, "NDR200": 200.0, "NDR": 400.0, "HDR100": 100.0, "HDR": 200.0,
            "EDR": 100.0, "FDR": 56.0}


def max_rate_from_description(desc: str) -> float | None:
    """The highest rate a card description states (``400GbE / NDR IB`` -> 400.0).

    >>> max_rate_from_description("ConnectX-6 VPI adapter card, HDR IB (200Gb/s) and 200GbE")
    200.0
    >>> max_rate_from_description("200GbE / NDR200 IB"), max_rate_from_description("BlueField-3")
    (200.0, None)
    """
    rates = [float(m.group(1)) for m in _GBE.finditer(desc)]
    rates += [_IB_RATE[m.group(1)] for m in _IB_NAME.finditer(desc)]
    rates = [r for r in rates if 1 <= r <= 1600]
    return max(rates) if rates else None


def sniff(doc: Document) -> float:
    lines = [ln for ln in doc.lines[:200] if ln.strip()]
    if not lines:
        return 0.0
    hits = sum(1 for ln in lines if len(ln) <= _MAX_LINE and (_SHORT.match(ln) or _VERBOSE.match(ln)))
    if hits == 0:
        return 0.0
    return 0.5 + 0.45 * hits / len(lines)


def parse(doc: Document, ctx: ParseContext) -> None:
    ports: list[dict[str, Any]] = []
    devices: dict[str, tuple[int, dict[str, Any]]] = {}
    for i, line in enumerate(doc.lines):
        if not line.strip():
            continue
        if len(line) > _MAX_LINE:
            ctx.warn(i, f"unrecognized line of {len(line)} characters: {line.strip()[:80]}")
            continue
        m = _VERBOSE.match(line)
        if m:
            dev = m.group("dev")
            ca = m.group("ca") or ""
            desc = m.group("desc").strip()
            fields = dict(device=dev, port=int(m.group("port")), netdev=m.group("netdev"),
                          state=m.group("state").capitalize(), port_state=norm_state(m.group("pstate")),
                          pci_bus=m.group("bdf"), ca_type=ca, part_number=(m.group("opn") or "").strip(),
                          description=desc, fw_version=m.group("fw") or "")
            ctx.add(NetdevMap, i, **fields)
            if dev not in devices:
                devices[dev] = (i, dict(fw_version=fields["fw_version"], ca_type=ca,
                                        model=CA_MODELS.get(ca, ""), pci_bus=fields["pci_bus"],
                                        part_number=fields["part_number"], description=desc))
            ports.append({"_line": i, "device": dev, "port": fields["port"], "netdev": fields["netdev"],
                          "state": fields["port_state"], "pci_bus": fields["pci_bus"],
                          "fw_version": fields["fw_version"], "ca_type": ca,
                          "max_rate_gbps": max_rate_from_description(desc)})
            continue
        m = _SHORT.match(line)
        if m:
            state = m.group(4).capitalize()
            ctx.add(NetdevMap, i, device=m.group(1), port=int(m.group(2)), netdev=m.group(3), state=state)
            ports.append({"_line": i, "device": m.group(1), "port": int(m.group(2)), "netdev": m.group(3),
                          "_summary_state": "Active" if state == "Up" else "Down"})
            continue
        if _ARROW.search(line):
            ctx.warn(i, f"unrecognized ibdev2netdev line (truncated?): {line.strip()[:80]}")
        else:
            ctx.warn(i, f"unrecognized line: {line.strip()[:80]}")
    if not ports:
        raise NotApplicable("no '<ibdev> port <n> ==> <netdev>' lines")
    emit_ports(ctx, "ibdev2netdev", ports, devices)


FORMATS = [
    Format(
        name="ibdev2netdev",
        command="ibdev2netdev -v",
        facts=("net.netdev_map", "ib.port", "ib.device", "ib.summary"),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\bibdev2netdev\b",),
        description="ibdev2netdev [-v] (MLNX_OFED/DOCA): RDMA port -> netdev, PCI address, card, state",
    )
]
