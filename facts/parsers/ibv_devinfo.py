"""ibv_devinfo - Command

Output of ``ibv_devinfo`` and ``ibv_devinfo -v`` (rdma-core): ``hca_id:<TAB>mlx5_0`` blocks
with ``key:<TABs>value`` device attributes (transport, fw_ver, node_guid, vendor_part_id,
board_id, phys_port_cnt; ``-v`` adds capabilities and flag lists, which are skipped), then one
``port:<TAB>n`` block per port (state, MTUs, LIDs, link layer; ``-v`` adds ``active_width``,
``active_speed`` and ``phys_state``). With ``-v`` the rate is width x per-lane speed
(``4X`` x ``50.0 Gbps`` = 200 Gb/s, HDR). ``No IB devices found`` yields an ``ib.summary``
with zero devices. Yields ``ib.port``, ``ib.device`` and one ``ib.summary``.

Sample input::

    hca_id:	mlx5_5
    	transport:			InfiniBand (0)
    	fw_ver:				28.39.2048
    	node_guid:			a088:c203:00b1:c46c
    	vendor_part_id:			4129
    	board_id:			MT_0000000838
    	phys_port_cnt:			1
    		port:	1
    			state:			PORT_ACTIVE (4)
    			max_mtu:		4096 (5)
    			active_mtu:		4096 (5)
    			sm_lid:			1
    			port_lid:		124
    			link_layer:		InfiniBand
    			active_width:		4X (2)
    			active_speed:		50.0 Gbps (64)
    			phys_state:		LINK_UP (5)

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "ibv_devinfo"); parse(doc, ctx)
    >>> p = [f for f in ctx.facts if f.fact_type == "ib.port"][0]
    >>> (p.device, p.port, p.state, p.phys_state, p.width, p.speed, p.rate_gbps, p.active_mtu)
    ('mlx5_5', 1, 'Active', 'LinkUp', '4X', 'HDR', 200.0, 4096)
    >>> (p.ca_type, p.node_guid, p.lid, p.source.line)
    ('MT4129', '0xa088c20300b1c46c', 124, 8)
    >>> d = [f for f in ctx.facts if f.fact_type == "ib.device"][0]
    >>> (d.board_id, d.model, d.transport, d.ports)
    ('MT_0000000838', 'ConnectX-7', 'InfiniBand', 1)
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
from clusterdx.facts.model.net import IbSummary
from clusterdx.facts.parsers.ibstat import (
    CA_MODELS, LANE_GBPS, SPEED_ENUM, WIDTH_ENUM, ca_type_of, device_from_command, emit_ports, norm_guid, norm_phys,
    norm_state, to_int)


SAMPLE = """\
hca_id:\tmlx5_5
\ttransport:\t\t\tInfiniBand (0)
\tfw_ver:\t\t\t\t28.39.2048
\tnode_guid:\t\t\ta088:c203:00b1:c46c
\tvendor_part_id:\t\t\t4129
\tboard_id:\t\t\tMT_0000000838
\tphys_port_cnt:\t\t\t1
\t\tport:\t1
\t\t\tstate:\t\t\tPORT_ACTIVE (4)
\t\t\tmax_mtu:\t\t4096 (5)
\t\t\tactive_mtu:\t\t4096 (5)
\t\t\tsm_lid:\t\t\t1
\t\t\tport_lid:\t\t124
\t\t\tlink_layer:\t\tInfiniBand
\t\t\tactive_width:\t\t4X (2)
\t\t\tactive_speed:\t\t50.0 Gbps (64)
\t\t\tphys_state:\t\tLINK_UP (5)
"""

_HCA = lazyre.compile(r"^\s*hca_id:\s*(\S+)\s*$")
_PORT = lazyre.compile(r"^\s*port:\s*(\d+)\s*$")
_KV = lazyre.compile(r"^\s*([A-Za-z_][\w ]*?|GID\[\s*\d+\])\s*:\s*(.*?)\s*$")
_SPEED = lazyre.compile(r"^\s*(\d+(?:\.\d+)?)\s*Gbps(?:\s*\((\d+)\))?")
_WIDTH = lazyre.compile(r"^\s*(\d+X)(?:\s*\((\d+)\))?")
_NO_DEVICES = lazyre.compile(r"No IB devices found|Failed to get IB devices list")

_PORT_KEYS = {"state", "phys_state", "max_mtu", "active_mtu", "sm_lid", "port_lid", "link_layer",
              "active_width", "active_speed"}
_DEVICE_KEYS = ("transport", "fw_ver", "node_guid", "sys_image_guid", "vendor_id", "vendor_part_id",
                "hw_ver", "board_id", "phys_port_cnt")


def sniff(doc: Document) -> float:
    hca = keys = 0
    for line in doc.lines[:200]:
        if _HCA.match(line):
            hca += 1
        s = line.strip()
        if s.startswith(("fw_ver:", "phys_port_cnt:", "vendor_part_id:", "active_mtu:", "max_mtu:", "port_lid:")):
            keys += 1
        if _NO_DEVICES.search(line) and len(doc.lines) < 5:
            return 0.7
    if hca and keys:
        return 0.95
    if hca or keys >= 3:
        return 0.6
    return 0.0


def parse(doc: Document, ctx: ParseContext) -> None:
    devices: dict[str, tuple[int, dict[str, Any]]] = {}
    ports: list[dict[str, Any]] = []
    device = ""
    dev: dict[str, Any] | None = None
    port: dict[str, Any] | None = None
    headerless = not any(_HCA.match(ln) for ln in doc.lines)
    for i, line in enumerate(doc.lines):
        if not line.strip():
            continue
        if _NO_DEVICES.search(line):
            ctx.add(IbSummary, i, tool="ibv_devinfo", devices=0, ports=0, ports_active=0, ports_down=0)
            continue
        m = _HCA.match(line)
        if m:
            device = m.group(1)
            dev = {}
            if device in devices:
                ctx.warn(i, f"hca_id {device!r} listed twice")
            devices[device] = (i, dev)
            port = None
            continue
        m = _PORT.match(line)
        if m and dev is not None:
            port = {"_line": i, "_end": i, "device": device, "port": int(m.group(1))}
            ports.append(port)
            continue
        m = _KV.match(line)
        if m and headerless and m.group(1).strip() in _PORT_KEYS:
            # port lines without hca_id/port (``ibv_devinfo | grep -E 'state|active_'``): a key
            # seen again starts the next port (number unknown: 0)
            key = m.group(1).strip()
            if port is None or key in port["_keys"]:
                port = {"_line": i, "_end": i, "port": 0, "_anonymous": True, "_keys": set(),
                        "device": device_from_command(doc.command, "ibv_devinfo")
                        or (doc.label or "" if doc.label_kind == "device" else "")}
                ports.append(port)
            port["_keys"].add(key)
        if not m or (dev is None and port is None):
            continue  # -v flag lists, 'tag matching not supported', text before the first hca_id
        key, value = m.group(1).strip(), m.group(2)
        if port is not None:
            port["_end"] = i
            _port_field(port, key, value)
        elif key in _DEVICE_KEYS:
            _device_field(dev, key, value)
    if not ports and not devices:
        if any(f.fact_type == "ib.summary" for f in ctx.facts):
            return
        raise NotApplicable("no ibv_devinfo hca_id blocks")
    for name, (index, fields) in devices.items():
        seen = sum(1 for p in ports if p["device"] == name)
        declared = fields.get("ports")
        if declared is not None and seen < declared:
            ctx.warn(index, f"{name}: phys_port_cnt {declared}, {seen} port blocks (truncated?)")
    cov = doc.coverage or WHOLE
    for p in ports:
        if "state" not in p and cov.believes_absence("\t\t\tstate:\t\t\tPORT_ACTIVE (4)"):
            ctx.warn(p["_line"], f"port {p['device']}/{p['port']} has no state line (truncated?)")
        p.pop("_anonymous", None)
        p.pop("_keys", None)
        _rate(p)
    emit_ports(ctx, "ibv_devinfo", ports, devices)


def _device_field(dev: dict[str, Any], key: str, value: str) -> None:
    if key == "transport":
        dev["transport"] = re.sub(r"\s*\(\d+\)\s*$", "", value)
    elif key == "fw_ver":
        dev["fw_version"] = value
    elif key in ("node_guid", "sys_image_guid"):
        dev[key] = norm_guid(value)
    elif key == "vendor_part_id":
        dev["ca_type"] = ca_type_of(value)
        dev["model"] = CA_MODELS.get(dev["ca_type"], "")
    elif key == "hw_ver":
        dev["hw_version"] = value
    elif key == "board_id":
        dev["board_id"] = value
    elif key == "phys_port_cnt":
        dev["ports"] = to_int(value)


def _port_field(port: dict[str, Any], key: str, value: str) -> None:
    if key == "state":
        port["state"] = norm_state(value)
    elif key == "phys_state":
        port["phys_state"] = norm_phys(value)
    elif key in ("max_mtu", "active_mtu"):
        port[key] = to_int(value)
    elif key == "sm_lid":
        port["sm_lid"] = to_int(value)
    elif key == "port_lid":
        port["lid"] = to_int(value)
    elif key == "link_layer":
        port["link_layer"] = value
    elif key == "active_width":
        m = _WIDTH.match(value)
        if m:
            port["width"] = m.group(1)
        elif to_int(value) in WIDTH_ENUM:
            port["width"] = WIDTH_ENUM[to_int(value) or 0]
    elif key == "active_speed":
        m = _SPEED.match(value)
        if m:
            code = int(m.group(2)) if m.group(2) else None
            lane = float(m.group(1))
            if not math.isfinite(lane):
                return
            port["_lane"] = lane
            if code in SPEED_ENUM:
                port["speed"] = SPEED_ENUM[code]
            else:
                port["speed"] = next((n for n, g in LANE_GBPS.items() if g == lane and n != "FDR10"), "")


def _rate(port: dict[str, Any]) -> None:
    width, lane = port.get("width", ""), port.pop("_lane", None)
    if width and lane is not None:
        try:
            lanes = int(width.rstrip("X"))
        except ValueError:
            return
        rate = lanes * lane
        if math.isfinite(rate):
            port["rate_gbps"] = round(rate, 3)


FORMATS = [
    Format(
        name="ibv_devinfo",
        command="ibv_devinfo -v",
        facts=("ib.port", "ib.device", "ib.summary"),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\bibv_devinfo\b",),
        description="ibv_devinfo [-v] (rdma-core): RDMA devices, port state, MTU, width x speed",
    )
]
