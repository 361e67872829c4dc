"""ib-sysfs - File

A ``grep . /sys/class/infiniband/*/ports/*/{state,phys_state,rate,link_layer}`` (or
``grep -r . /sys/class/infiniband/<dev>/ports/<n>/counters``) dump: ``<path>:<value>`` lines,
also ``head`` output (``==> <path> <==`` then the value). Port attributes (``state: 4: ACTIVE``,
``phys_state: 5: LinkUp``, ``rate: 400 Gb/sec (4X NDR)``, ``link_layer``, ``lid``, ``sm_lid``)
give ``ib.port``; ``counters/*`` and ``hw_counters/*`` give ``ib.counters``; device attributes
(``fw_ver``, ``node_guid``, ``hca_type``, ``board_id``) give ``ib.device``. Sysfs
``port_xmit_data``/``port_rcv_data`` count 4-byte words.

The ``perfquery`` format (``perfquery [-x] [-C <ca> -P <port>]``, ``Key:.....value`` lines) lives
here too and yields ``ib.counters`` (device from ``-C`` in the command, else '').

Sample input::

    /sys/class/infiniband/mlx5_5/fw_ver:28.39.2048
    /sys/class/infiniband/mlx5_5/ports/1/state:4: ACTIVE
    /sys/class/infiniband/mlx5_5/ports/1/phys_state:5: LinkUp
    /sys/class/infiniband/mlx5_5/ports/1/rate:200 Gb/sec (4X HDR)
    /sys/class/infiniband/mlx5_5/ports/1/link_layer:InfiniBand
    /sys/class/infiniband/mlx5_5/ports/1/counters/symbol_error:27
    /sys/class/infiniband/mlx5_5/ports/1/counters/link_downed:1
    /sys/class/infiniband/mlx5_5/ports/1/counters/port_xmit_wait:0

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "ib-sysfs"); parse(doc, ctx)
    >>> p = [f for f in ctx.facts if f.fact_type == "ib.port"][0]
    >>> (p.device, p.port, p.state, p.phys_state, p.rate_gbps, p.width, p.speed, p.fw_version)
    ('mlx5_5', 1, 'Active', 'LinkUp', 200.0, '4X', 'HDR', '28.39.2048')
    >>> c = [f for f in ctx.facts if f.fact_type == "ib.counters"][0]
    >>> (c.symbol_error, c.link_downed, c.port_xmit_wait, c.port_rcv_errors, c.errors_nonzero)
    (27, 1, 0, None, ['symbol_error', 'link_downed'])
    >>> c.source.line, c.source.end_line
    (6, 8)
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
from clusterdx.facts.model.net import IbCounters
from clusterdx.facts.parsers.ibstat import (
    CA_MODELS, ca_type_of, device_from_command, emit_ports, norm_guid, norm_phys, norm_state,
    parse_rate, to_int)


SAMPLE = """\
/sys/class/infiniband/mlx5_5/fw_ver:28.39.2048
/sys/class/infiniband/mlx5_5/ports/1/state:4: ACTIVE
/sys/class/infiniband/mlx5_5/ports/1/phys_state:5: LinkUp
/sys/class/infiniband/mlx5_5/ports/1/rate:200 Gb/sec (4X HDR)
/sys/class/infiniband/mlx5_5/ports/1/link_layer:InfiniBand
/sys/class/infiniband/mlx5_5/ports/1/counters/symbol_error:27
/sys/class/infiniband/mlx5_5/ports/1/counters/link_downed:1
/sys/class/infiniband/mlx5_5/ports/1/counters/port_xmit_wait:0
"""

_PATH = r"(?:/sys)?[\w./:-]*?/infiniband/(?P<dev>[^/\s:]+)/(?:ports/(?P<port>\d+)/)?(?P<attr>[\w./-]+)"
_LINE = lazyre.compile(r"^\s*" + _PATH + r":(?P<value>.*)$")
_HEAD = lazyre.compile(r"^\s*==>\s*" + _PATH + r"\s*<==\s*$")
_CAT = lazyre.compile(r"\bcat\s+" + _PATH + r"\s*$")
#: a sysfs path fits in PATH_MAX (4096); the path regexes backtrack quadratically on long lines,
#: so only a line's head is matched (the value after the path may be longer)
_MAX_MATCH = 4200


def _match_line(line: str) -> tuple[re.Match[str], str] | None:
    """(match, value) for an ``attribute:value`` line, the value taken from the whole line."""
    m = _LINE.match(line[:_MAX_MATCH])
    if m is None:
        return None
    return m, line[m.start("value"):]


def _match_head(line: str) -> re.Match[str] | None:
    return _HEAD.match(line) if len(line) <= _MAX_MATCH else None

#: counter file / perfquery name -> IbCounters field
COUNTER_FIELDS = {
    "symbol_error": "symbol_error", "SymbolErrorCounter": "symbol_error",
    "link_error_recovery": "link_error_recovery", "LinkErrorRecoveryCounter": "link_error_recovery",
    "link_downed": "link_downed", "LinkDownedCounter": "link_downed",
    "port_rcv_errors": "port_rcv_errors", "PortRcvErrors": "port_rcv_errors",
    "port_rcv_remote_physical_errors": "port_rcv_remote_physical_errors",
    "PortRcvRemotePhysicalErrors": "port_rcv_remote_physical_errors",
    "port_rcv_switch_relay_errors": "port_rcv_switch_relay_errors",
    "PortRcvSwitchRelayErrors": "port_rcv_switch_relay_errors",
    "port_xmit_discards": "port_xmit_discards", "PortXmitDiscards": "port_xmit_discards",
    "port_xmit_constraint_errors": "port_xmit_constraint_errors",
    "PortXmitConstraintErrors": "port_xmit_constraint_errors",
    "port_rcv_constraint_errors": "port_rcv_constraint_errors",
    "PortRcvConstraintErrors": "port_rcv_constraint_errors",
    "local_link_integrity_errors": "local_link_integrity_errors",
    "LocalLinkIntegrityErrors": "local_link_integrity_errors",
    "excessive_buffer_overrun_errors": "excessive_buffer_overrun_errors",
    "ExcessiveBufferOverrunErrors": "excessive_buffer_overrun_errors",
    "VL15_dropped": "vl15_dropped", "VL15Dropped": "vl15_dropped",
    "port_xmit_wait": "port_xmit_wait", "PortXmitWait": "port_xmit_wait",
    "port_xmit_data": "port_xmit_data", "PortXmitData": "port_xmit_data",
    "port_rcv_data": "port_rcv_data", "PortRcvData": "port_rcv_data",
    "port_xmit_packets": "port_xmit_packets", "PortXmitPkts": "port_xmit_packets",
    "port_rcv_packets": "port_rcv_packets", "PortRcvPkts": "port_rcv_packets",
    "out_of_sequence": "out_of_sequence", "packet_seq_err": "packet_seq_err",
    "local_ack_timeout_err": "local_ack_timeout_err", "rnr_nak_retry_err": "rnr_nak_retry_err",
    "implied_nak_seq_err": "implied_nak_seq_err", "np_cnp_sent": "np_cnp_sent",
    "rp_cnp_handled": "rp_cnp_handled", "np_ecn_marked_roce_packets": "np_ecn_marked_roce_packets",
}
ERROR_COUNTERS = (
    "symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors",
    "port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors", "port_xmit_discards",
    "port_xmit_constraint_errors", "port_rcv_constraint_errors", "local_link_integrity_errors",
    "excessive_buffer_overrun_errors", "vl15_dropped", "out_of_sequence", "packet_seq_err",
    "local_ack_timeout_err", "rnr_nak_retry_err", "implied_nak_seq_err",
)


def add_counters(ctx: ParseContext, device: str, port: int | None, values: dict[str, int],
                 first: int, last: int) -> None:
    nonzero = [name for name in ERROR_COUNTERS if values.get(name)]
    ctx.add(IbCounters, first, last, device=device, port=port, errors_nonzero=nonzero, **values)


def sniff(doc: Document) -> float:
    lines = [ln for ln in doc.lines[:200] if ln.strip()]
    if not lines:
        return 0.0
    hits = sum(1 for ln in lines if _match_line(ln) or _match_head(ln))
    if not hits:
        return 0.0
    return 0.6 + 0.35 * min(1.0, hits / len(lines))


def parse(doc: Document, ctx: ParseContext) -> None:
    ports: dict[tuple[str, int], dict[str, Any]] = {}
    counters: dict[tuple[str, int], tuple[int, int, dict[str, int]]] = {}
    devices: dict[str, tuple[int, dict[str, Any]]] = {}
    pending: tuple[int, re.Match[str]] | None = None
    cat = _CAT.search(doc.command or "")
    if cat and not any(c in cat.group(0) for c in "*?{["):
        # ``cat /sys/class/infiniband/mlx5_0/ports/1/rate``: the output is the bare value
        pending = (0, cat)
    for i, line in enumerate(doc.lines):
        if not line.strip():
            continue
        m = _match_head(line)
        if m:
            pending = (i, m)
            continue
        found = _match_line(line)
        if found:
            _record(ctx, i, i, found[0], found[1], ports, counters, devices)
            pending = None
        elif pending is not None:
            _record(ctx, pending[0], i, pending[1], line, ports, counters, devices)
            pending = None
        elif line.lstrip().startswith(("grep:", "cat:", "head:")) or "No such file" in line \
                or "Permission denied" in line:
            ctx.warn(i, line.strip()[:160])
        else:
            ctx.warn(i, f"unrecognized line: {line.strip()[:80]}")
    if not ports and not counters and not devices:
        raise NotApplicable("no /sys/class/infiniband attribute lines")
    port_list = [p for p in ports.values()
                 if any(k in p for k in ("state", "phys_state", "rate_gbps", "link_layer", "lid"))]
    for name, (index, fields) in devices.items():
        if fields.get("ca_type"):
            fields["model"] = CA_MODELS.get(fields["ca_type"], "")
    if port_list or devices:
        emit_ports(ctx, "ib-sysfs", port_list, devices)
    for (dev, port), (first, last, values) in counters.items():
        add_counters(ctx, dev, port, values, first, last)


def _record(ctx: ParseContext, first: int, i: int, m: re.Match[str], value: str,
            ports: dict[tuple[str, int], dict[str, Any]],
            counters: dict[tuple[str, int], tuple[int, int, dict[str, int]]],
            devices: dict[str, tuple[int, dict[str, Any]]]) -> None:
    dev, attr, value = m.group("dev"), m.group("attr"), value.strip()
    if m.group("port") is None:
        _device_attr(dev, attr, value, first, devices)
        return
    port = int(m.group("port"))
    if attr.startswith(("counters/", "hw_counters/")):
        name = attr.split("/", 1)[1]
        field = COUNTER_FIELDS.get(name)
        if field is None:
            return
        n = to_int(value)
        if n is None:
            ctx.warn(i, f"{dev}/{port} {name}: not a number {value[:40]!r}")
            return
        start, _, values = counters.get((dev, port), (first, i, {}))
        values[field] = n
        counters[(dev, port)] = (start, i, values)
        return
    p = ports.setdefault((dev, port), {"_line": first, "_end": first, "device": dev, "port": port})
    p["_end"] = max(p["_end"], i)
    if attr == "state":
        p["state"] = norm_state(value)
    elif attr == "phys_state":
        p["phys_state"] = norm_phys(value)
    elif attr == "rate":
        rate, width, speed = parse_rate(value)
        if rate is None:
            ctx.warn(i, f"{dev}/{port}: bad rate {value[:40]!r}")
        p.update(rate_gbps=rate, width=width, speed=speed)
    elif attr == "link_layer":
        p["link_layer"] = value
    elif attr == "lid":
        p["lid"] = to_int(value)
    elif attr == "sm_lid":
        p["sm_lid"] = to_int(value)


def _device_attr(dev: str, attr: str, value: str, i: int,
                 devices: dict[str, tuple[int, dict[str, Any]]]) -> None:
    dest = {"fw_ver": "fw_version", "node_guid": "node_guid", "sys_image_guid": "sys_image_guid",
            "hca_type": "ca_type", "board_id": "board_id", "hw_rev": "hw_version"}.get(attr)
    if dest is None:
        return
    fields = devices.setdefault(dev, (i, {}))[1]
    if "guid" in dest:
        value = norm_guid(value)
    elif dest == "ca_type":
        value = ca_type_of(value)
    fields[dest] = value


# -- perfquery -----------------------------------------------------------------------------------

_PQ_HEADER = lazyre.compile(r"^#\s*Port (?:extended )?counters:\s*Lid\s+(\d+)\s+port\s+(\d+|all)", re.IGNORECASE)
_PQ_LINE = lazyre.compile(r"^\s*([A-Za-z][A-Za-z0-9]*)\s*:\.*\s*(\S*)\s*$")


def sniff_perfquery(doc: Document) -> float:
    header = dots = 0
    for line in doc.lines[:200]:
        if _PQ_HEADER.match(line):
            header += 1
        elif _PQ_LINE.match(line) and ":..." in line:
            dots += 1
    if header and dots:
        return 0.95
    return 0.6 if dots >= 5 else 0.0


def parse_perfquery(doc: Document, ctx: ParseContext) -> None:
    device = device_from_command(doc.command, "perfquery")
    blocks: list[tuple[int, int, int | None, dict[str, int]]] = []
    current: list[Any] | None = None
    for i, line in enumerate(doc.lines):
        if not line.strip():
            continue
        m = _PQ_HEADER.match(line)
        if m:
            port = int(m.group(2)) if m.group(2).isdigit() else None
            current = [i, i, port, {}]
            blocks.append(current)  # type: ignore[arg-type]
            continue
        m = _PQ_LINE.match(line)
        if not m:
            ctx.warn(i, f"unrecognized line: {line.strip()[:80]}")
            continue
        if current is None:
            current = [i, i, None, {}]
            blocks.append(current)  # type: ignore[arg-type]
        key, value = m.group(1), m.group(2)
        if key == "PortSelect" and current[2] is None:
            current[2] = to_int(value)
        field = COUNTER_FIELDS.get(key)
        if field is None:
            continue
        n = to_int(value)
        if n is None:
            ctx.warn(i, f"{key}: not a number {value[:40]!r}")
            continue
        current[3][field] = n
        current[1] = i
    made = 0
    for first, last, port, values in blocks:
        if values:
            add_counters(ctx, device, port, values, first, last)
            made += 1
    if not made:
        raise NotApplicable("no perfquery counters")


FORMATS = [
    Format(
        name="ib-sysfs",
        command="grep . /sys/class/infiniband/*/ports/*/{state,phys_state,rate,link_layer} "
                "/sys/class/infiniband/*/ports/*/counters/*",
        facts=("ib.port", "ib.device", "ib.summary", "ib.counters"),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"/sys/class/infiniband\b",),
        description="grep . dump of /sys/class/infiniband port attributes and counters",
    ),
    Format(
        name="perfquery",
        command="perfquery -x",
        facts=("ib.counters",),
        sniff=sniff_perfquery,
        parse=parse_perfquery,
        command_patterns=(r"\bperfquery\b",),
        description="perfquery [-x] (infiniband-diags): IB port error and data counters",
    ),
]
