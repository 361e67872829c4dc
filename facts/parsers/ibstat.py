"""ibstat - Command

Output of ``ibstat`` (infiniband-diags): one ``CA '<name>'`` block per RDMA device with CA type,
firmware, GUIDs, then one ``Port <n>:`` block per port with state, physical state, rate (Gb/s),
LIDs, port GUID and link layer. ``ibstat <ca> <port>`` (a bare port block, the device then taken
from the command) and tab-less pastes are read too. An excerpt without CA and Port lines
(``ibstat | grep -E 'Rate|State'``) yields one port per run of port keys (port 0, device from the
command or a loop's device label). Yields one ``ib.port`` per port, one
``ib.device`` per CA and one ``ib.summary``.

ibstat prints no per-lane speed or width and nothing about what the card supports, so
``max_rate_gbps``/``degraded`` stay unknown here (ibdev2netdev -v and ibv_devinfo -v say more).
This module also holds the helpers the other IB state parsers share (state spelling, GUIDs,
rates, the summary fact).

Sample input::

    CA 'mlx5_5'
    	CA type: MT4129
    	Number of ports: 1
    	Firmware version: 28.39.2048
    	Hardware version: 0
    	Node GUID: 0xa088c20300b1c46c
    	System image GUID: 0xa088c20300b1c46c
    	Port 1:
    		State: Active
    		Physical state: LinkUp
    		Rate: 200
    		Base lid: 124
    		LMC: 0
    		SM lid: 1
    		Capability mask: 0xa751e84a
    		Port GUID: 0xa088c20300b1c46c
    		Link layer: InfiniBand

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "ibstat"); parse(doc, ctx)
    >>> p = [f for f in ctx.facts if f.fact_type == "ib.port"][0]
    >>> (p.device, p.port, p.state, p.phys_state, p.rate_gbps, p.link_layer, p.lid, p.sm_lid)
    ('mlx5_5', 1, 'Active', 'LinkUp', 200.0, 'InfiniBand', 124, 1)
    >>> (p.ca_type, p.fw_version, p.port_guid, p.source.line)
    ('MT4129', '28.39.2048', '0xa088c20300b1c46c', 8)
    >>> s = [f for f in ctx.facts if f.fact_type == "ib.summary"][0]
    >>> (s.devices, s.ports_active, s.ports_down, s.link_layers, s.rates_gbps)
    (1, 1, 0, ['InfiniBand'], [200.0])
    >>> sniff(doc) > 0.9
    True
"""

from __future__ import annotations

import math
import re
from typing import Any

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable
from clusterdx.facts.coverage import WHOLE
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.net import IbDevice, IbPort, IbSummary


SAMPLE = """\
CA 'mlx5_5'
\tCA type: MT4129
\tNumber of ports: 1
\tFirmware version: 28.39.2048
\tHardware version: 0
\tNode GUID: 0xa088c20300b1c46c
\tSystem image GUID: 0xa088c20300b1c46c
\tPort 1:
\t\tState: Active
\t\tPhysical state: LinkUp
\t\tRate: 200
\t\tBase lid: 124
\t\tLMC: 0
\t\tSM lid: 1
\t\tCapability mask: 0xa751e84a
\t\tPort GUID: 0xa088c20300b1c46c
\t\tLink layer: InfiniBand
"""

# -- helpers shared by the IB state parsers ------------------------------------------------------

_STATE_NUM = {1: "Down", 2: "Initializing", 3: "Armed", 4: "Active", 5: "ActiveDefer"}
_STATE_WORD = {
    "down": "Down", "init": "Initializing", "initializing": "Initializing", "initialize": "Initializing",
    "armed": "Armed", "active": "Active", "active_defer": "ActiveDefer", "activedefer": "ActiveDefer",
    "nop": "Nop",
}
_PHYS_NUM = {1: "Sleep", 2: "Polling", 3: "Disabled", 4: "PortConfigurationTraining", 5: "LinkUp",
             6: "LinkErrorRecovery", 7: "PhyTest"}
_PHYS_WORD = {
    "sleep": "Sleep", "polling": "Polling", "disabled": "Disabled",
    "portconfigurationtraining": "PortConfigurationTraining",
    "portconfigurationtrainning": "PortConfigurationTraining",
    "linkup": "LinkUp", "linkerrorrecovery": "LinkErrorRecovery", "phytest": "PhyTest",
}
#: per-lane speed name -> Gb/s per lane, and ibv_devinfo enum -> name
LANE_GBPS = {"SDR": 2.5, "DDR": 5.0, "QDR": 10.0, "FDR10": 10.0, "FDR": 14.0, "EDR": 25.0,
             "HDR": 50.0, "NDR": 100.0, "XDR": 200.0}
SPEED_ENUM = {1: "SDR", 2: "DDR", 4: "QDR", 8: "FDR10", 16: "FDR", 32: "EDR", 64: "HDR",
              128: "NDR", 256: "XDR"}
WIDTH_ENUM = {1: "1X", 2: "4X", 4: "8X", 8: "12X", 16: "2X"}
#: CA type -> product family (only the well-known Mellanox/NVIDIA part ids)
CA_MODELS = {
    "MT4115": "ConnectX-4", "MT4117": "ConnectX-4 Lx", "MT4119": "ConnectX-5", "MT4121": "ConnectX-5 Ex",
    "MT4123": "ConnectX-6", "MT4125": "ConnectX-6 Dx", "MT4127": "ConnectX-6 Lx", "MT4129": "ConnectX-7",
    "MT4131": "ConnectX-8", "MT41682": "BlueField", "MT41686": "BlueField-2", "MT41692": "BlueField-3",
}
_NUM_PREFIX = lazyre.compile(r"^\s*(\d+)\s*:\s*(\S.*?)\s*$")
_NUM_SUFFIX = lazyre.compile(r"^\s*(\S.*?)\s*\((\d+)\)\s*$")
_RATE_TEXT = lazyre.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:Gb/sec|Gbps|Gb/s)?\s*(?:\(\s*(\d+X)\s+([A-Z]+\d*)\s*\))?")


def norm_state(text: str) -> str:
    """``PORT_ACTIVE (4)``, ``4: ACTIVE``, ``ACTIVE``, ``Active`` -> ``Active``.

    >>> [norm_state(t) for t in ("PORT_DOWN (1)", "4: ACTIVE", "DOWN  ", "INIT", "Armed")]
    ['Down', 'Active', 'Down', 'Initializing', 'Armed']
    """
    return _norm(text, _STATE_NUM, _STATE_WORD, strip_prefix="port_")


def norm_phys(text: str) -> str:
    """``LINK_UP (5)``, ``5: LinkUp``, ``Polling`` -> ``LinkUp`` / ``Polling``.

    >>> [norm_phys(t) for t in ("LINK_UP (5)", "3: Disabled", "Polling", "PORT_CONFIGURATION_TRAINNING (4)")]
    ['LinkUp', 'Disabled', 'Polling', 'PortConfigurationTraining']
    """
    return _norm(text, _PHYS_NUM, _PHYS_WORD)


def _norm(text: str, by_num: dict[int, str], by_word: dict[str, str], strip_prefix: str = "") -> str:
    t = text.strip()
    num = None
    m = _NUM_PREFIX.match(t)
    if m:
        num, t = int(m.group(1)), m.group(2)
    else:
        m = _NUM_SUFFIX.match(t)
        if m:
            t, num = m.group(1), int(m.group(2))
    key = t.lower().replace(" ", "").replace("-", "")
    if strip_prefix and key.startswith(strip_prefix):
        key = key[len(strip_prefix):]
    if key in by_word:
        return by_word[key]
    if key.replace("_", "") in by_word:
        return by_word[key.replace("_", "")]
    if num is not None and num in by_num:
        return by_num[num]
    return t


def norm_guid(text: str) -> str:
    """``a088:c203:00b1:c2e0`` or ``0xA088C20300B1C2E0`` -> ``0xa088c20300b1c2e0``.

    >>> norm_guid("a088:c203:00b1:c2e0"), norm_guid("0xA088C20300B1C2E0"), norm_guid("junk")
    ('0xa088c20300b1c2e0', '0xa088c20300b1c2e0', 'junk')
    """
    t = text.strip().lower()
    h = t[2:] if t.startswith("0x") else t.replace(":", "")
    if h and len(h) <= 16 and all(c in "0123456789abcdef" for c in h):
        return "0x" + h.rjust(16, "0")
    return text.strip()


def to_int(text: str) -> int | None:
    """Decimal or ``0x`` hex integer at the start of ``text``; None when there is none.

    >>> to_int("0x76"), to_int(" 118 "), to_int("4096 (5)"), to_int("n/a")
    (118, 118, 4096, None)
    """
    m = re.match(r"\s*(0[xX][0-9a-fA-F]+|\d+)\b", text)
    if not m:
        return None
    try:
        return int(m.group(1), 0) if m.group(1).lower().startswith("0x") else int(m.group(1))
    except ValueError:
        return None


def parse_rate(text: str) -> tuple[float | None, str, str]:
    """``400 Gb/sec (4X NDR)`` -> (400.0, '4X', 'NDR'); ``200`` -> (200.0, '', '').

    >>> parse_rate("400 Gb/sec (4X NDR)"), parse_rate("200"), parse_rate("40 (FDR10)")
    ((400.0, '4X', 'NDR'), (200.0, '', ''), (40.0, '', ''))
    """
    m = _RATE_TEXT.match(text)
    if not m:
        return None, "", ""
    rate = float(m.group(1))
    if not math.isfinite(rate):
        return None, "", ""
    return rate, m.group(2) or "", m.group(3) or ""


def ca_type_of(part: str) -> str:
    """``4129`` or ``MT4129`` -> ``MT4129``; anything else unchanged."""
    p = part.strip()
    if p.isdigit():
        return "MT" + p
    return p


def emit_ports(ctx: ParseContext, tool: str, ports: list[dict[str, Any]],
               devices: dict[str, tuple[int, dict[str, Any]]] | None = None) -> None:
    """Add the ``ib.device`` facts, the ``ib.port`` facts (``_line`` = line index, ``_end``
    optional; device attributes copied in) and, when there is a port, one ``ib.summary``."""
    devices = devices or {}
    for name, (index, fields) in devices.items():
        ctx.add(IbDevice, index, device=name, **fields)
    port_facts = []
    for p in ports:
        fields = {k: v for k, v in p.items() if not k.startswith("_")}
        dev = devices.get(fields.get("device", ""))
        if dev:
            for src, dst in (("fw_version", "fw_version"), ("ca_type", "ca_type"),
                             ("node_guid", "node_guid"), ("pci_bus", "pci_bus")):
                if dev[1].get(src) and not fields.get(dst):
                    fields[dst] = dev[1][src]
        rate, top = fields.get("rate_gbps"), fields.get("max_rate_gbps")
        if rate is not None and top is not None and fields.get("state") == "Active":
            fields["degraded"] = rate < top
        port = ctx.add(IbPort, p["_line"], p.get("_end"), **fields)
        if port is not None:
            port_facts.append(port)
    if not port_facts:  # device-only listings (``ibstat -s``, sysfs fw_ver) say nothing about ports
        return
    names = {f.device for f in port_facts} | set(devices)
    first = min([p["_line"] for p in ports] + [d[0] for d in devices.values()])
    last = max([p.get("_end", p["_line"]) for p in ports] + [d[0] for d in devices.values()])

    def state_of(p: dict[str, Any]) -> str:
        return p.get("state") or p.get("_summary_state", "")

    active = [f for f, p in zip(port_facts, ports) if state_of(p) == "Active"]
    down = [f for f, p in zip(port_facts, ports) if state_of(p) == "Down"]
    fws = {f.fw_version for f in port_facts if f.fw_version}
    fws |= {d[1]["fw_version"] for d in devices.values() if d[1].get("fw_version")}
    ctx.add(
        IbSummary, first, last, tool=tool, devices=len(names), ports=len(port_facts),
        ports_active=len(active), ports_down=len(down),
        link_layers=sorted({f.link_layer for f in port_facts if f.link_layer}),
        rates_gbps=sorted({f.rate_gbps for f in active if f.rate_gbps is not None}),
        fw_versions=sorted(fws),
        down_ports=[f"{f.device}/{f.port}" for f in down],
        degraded_ports=[f"{f.device}/{f.port}" for f in port_facts if f.degraded],
    )


def device_from_command(command: str | None, tool: str) -> str:
    """``ibstat mlx5_0 1`` -> ``mlx5_0``; ``ibv_devinfo -d mlx5_0`` -> ``mlx5_0``."""
    if not command:
        return ""
    m = re.search(r"(?:-d|--ib-dev(?:ice)?|-C|--Ca)[ =](\S+)", command)
    if m:
        return m.group(1)
    m = re.search(rf"\b{re.escape(tool)}\s+(?:-\S+\s+)*([A-Za-z]\w*_\w+)", command)
    return m.group(1) if m else ""


# -- ibstat ----------------------------------------------------------------------------------------

_CA = lazyre.compile(r"^\s*CA:?\s+'([^']*)'\s*$")
_PORT = lazyre.compile(r"^\s*Port\s+(\d+):\s*$")
_KV = lazyre.compile(r"^\s*([A-Za-z][A-Za-z ]*?)\s*:\s*(.*?)\s*$")

#: port attribute keys and the field each fills (an excerpt's port starts again when one repeats)
_PORT_KEYS = {"state": "state", "physical state": "phys_state", "rate": "rate_gbps", "base lid": "lid",
              "sm lid": "sm_lid", "port guid": "port_guid", "link layer": "link_layer"}
_DEVICE_KEYS = {"ca type": "ca_type", "firmware version": "fw_version", "hardware version": "hw_version",
                "node guid": "node_guid", "system image guid": "sys_image_guid"}


def sniff(doc: Document) -> float:
    ca = ca_type = phys = rate = lid = state = other = 0
    for line in doc.lines[:200]:
        s = line.strip()
        if not s:
            continue
        if s.startswith("State:"):
            state += 1
        elif not _CA.match(line) and not _PORT.match(line) and not _KV.match(line):
            other += 1
        if _CA.match(line):
            ca += 1
        elif s.startswith("CA type:"):
            ca_type += 1
        elif s.startswith("Physical state:"):
            phys += 1
        elif s.startswith("Rate:"):
            rate += 1
        elif s.startswith("Base lid:") or s.startswith("SM lid:"):
            lid += 1
    if ca and (ca_type or phys):
        return 0.95
    if phys and rate and lid:
        return 0.85
    if ca_type:
        return 0.6
    if rate and state and other == 0:
        # a grep'd excerpt: ``State: Active`` / ``Rate: 400`` lines only
        return 0.55
    return 0.0


def parse(doc: Document, ctx: ParseContext) -> None:
    devices: dict[str, tuple[int, dict[str, Any]]] = {}
    ports: list[dict[str, Any]] = []
    device = device_from_command(doc.command, "ibstat") or (doc.label or "" if doc.label_kind == "device" else "")
    dev_fields: dict[str, Any] | None = None
    port: dict[str, Any] | None = None
    declared: dict[str, int] = {}
    for i, line in enumerate(doc.lines):
        if not line.strip():
            continue
        m = _CA.match(line)
        if m:
            device = m.group(1)
            if device in devices:
                ctx.warn(i, f"CA {device!r} listed twice")
            dev_fields = {}
            devices[device] = (i, dev_fields)
            port = None
            continue
        m = _PORT.match(line)
        if m:
            port = {"_line": i, "_end": i, "device": device, "port": int(m.group(1))}
            ports.append(port)
            if not device:
                ctx.warn(i, "port block without a CA name")
            continue
        m = _KV.match(line)
        if not m:
            ctx.warn(i, f"unrecognized line: {line.strip()[:80]}")
            continue
        key, value = m.group(1).lower(), m.group(2)
        if dev_fields is None and key in _PORT_KEYS and (port is None or port.get("_anonymous")):
            # an excerpt without the CA and Port lines (``ibstat | grep -E 'Rate|State'``): each
            # port's lines in turn, a key seen again starts the next port (number unknown: 0)
            if port is None or _PORT_KEYS[key] in port:
                port = {"_line": i, "_end": i, "device": device, "port": 0, "_anonymous": True}
                ports.append(port)
        if port is not None:
            port["_end"] = i
            _port_field(port, key, value, ctx, i)
        elif dev_fields is not None:
            if key in _DEVICE_KEYS:
                dest = _DEVICE_KEYS[key]
                dev_fields[dest] = norm_guid(value) if "guid" in dest else value
            elif key == "number of ports":
                n = to_int(value)
                dev_fields["ports"] = n
                if n is not None:
                    declared[device] = n
            else:
                ctx.warn(i, f"unknown CA attribute {m.group(1)!r}")
        else:
            ctx.warn(i, f"line outside any CA block: {line.strip()[:80]}")
    if not ports and not devices:
        raise NotApplicable("no ibstat CA or port blocks")
    listed: dict[str, int] = {}
    for p in ports:  # counted once: per device, a scan of every port was quadratic
        listed[p["device"]] = listed.get(p["device"], 0) + 1
    for name, (index, fields) in devices.items():
        if "ca_type" in fields:
            fields["model"] = CA_MODELS.get(fields["ca_type"], "")
        seen = listed.get(name, 0)
        if name in declared and seen < declared[name]:
            ctx.warn(index, f"CA {name!r} declares {declared[name]} ports, {seen} listed (truncated?)")
    cov = doc.coverage or WHOLE
    for p in ports:
        if "state" not in p and cov.believes_absence("\t\tState: Active"):
            ctx.warn(p["_line"], f"port {p['device']}/{p['port']} has no State line (truncated?)")
        p.pop("_anonymous", None)
    emit_ports(ctx, "ibstat", ports, devices)


def _port_field(port: dict[str, Any], key: str, value: str, ctx: ParseContext, i: int) -> None:
    if key == "state":
        port["state"] = norm_state(value)
    elif key == "physical state":
        port["phys_state"] = norm_phys(value)
    elif key == "rate":
        rate, width, speed = parse_rate(value)
        if rate is None:
            ctx.warn(i, f"bad rate {value[:40]!r}")
        port["rate_gbps"] = rate
        if "FDR10" in value:
            port["speed"] = "FDR10"
    elif key == "base lid":
        port["lid"] = to_int(value)
    elif key == "sm lid":
        port["sm_lid"] = to_int(value)
    elif key == "port guid":
        port["port_guid"] = norm_guid(value)
    elif key == "link layer":
        port["link_layer"] = value
    elif key not in ("lmc", "capability mask"):
        ctx.warn(i, f"unknown port attribute {key!r}")


FORMATS = [
    Format(
        name="ibstat",
        command="ibstat",
        facts=("ib.port", "ib.device", "ib.summary"),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\bibstat\b(?!us)",),
        description="ibstat (infiniband-diags): CA and port state, rate, LIDs, GUIDs, link layer",
    )
]
