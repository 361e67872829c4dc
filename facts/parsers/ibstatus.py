"""ibstatus - Command

Output of ``ibstatus`` (infiniband-diags shell script over ``/sys/class/infiniband``): one
``Infiniband device '<dev>' port <n> status:`` block per port with ``default gid``,
``base lid`` / ``sm lid`` (hex), ``state: 4: ACTIVE``, ``phys state: 5: LinkUp``,
``rate: 400 Gb/sec (4X NDR)`` and ``link_layer``; blocks are separated by a blank line. The rate
line gives width and per-lane generation explicitly. Yields ``ib.port`` per block and one
``ib.summary``.

Sample input::

    Infiniband device 'mlx5_5' port 1 status:
    	default gid:	 fe80:0000:0000:0000:a088:c203:00b1:c46c
    	base lid:	 0x7c
    	sm lid:		 0x1
    	state:		 4: ACTIVE
    	phys state:	 5: LinkUp
    	rate:		 200 Gb/sec (4X HDR)
    	link_layer:	 InfiniBand

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "ibstatus"); parse(doc, ctx)
    >>> p = ctx.facts[0]
    >>> (p.device, p.port, p.state, p.phys_state, p.rate_gbps, p.width, p.speed, p.lid, p.sm_lid)
    ('mlx5_5', 1, 'Active', 'LinkUp', 200.0, '4X', 'HDR', 124, 1)
    >>> (p.link_layer, p.source.line, ctx.facts[-1].fact_type)
    ('InfiniBand', 1, 'ib.summary')
    >>> sniff(doc) > 0.9
    True
"""

from __future__ import annotations

import re
from typing import Any

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable
from clusterdx.facts.coverage import WHOLE
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.parsers.ibstat import device_from_command, emit_ports, norm_phys, norm_state, parse_rate, to_int


SAMPLE = """\
Infiniband device 'mlx5_5' port 1 status:
\tdefault gid:\t fe80:0000:0000:0000:a088:c203:00b1:c46c
\tbase lid:\t 0x7c
\tsm lid:\t\t 0x1
\tstate:\t\t 4: ACTIVE
\tphys state:\t 5: LinkUp
\trate:\t\t 200 Gb/sec (4X HDR)
\tlink_layer:\t InfiniBand
"""

_HEADER = lazyre.compile(r"^\s*Infiniband device '([^']+)' port (\d+) status:\s*$", re.IGNORECASE)
# key words separated by single blanks, then the value without its trailing blanks; no two
# adjacent quantifiers can trade the same characters (the old lazy form took 69 s on 8 KB)
_KV = lazyre.compile(r"^\s*([a-z_]+(?:[ \t]+[a-z_]+)*)\s*:\s*((?:.*\S)?)\s*$", re.IGNORECASE)


_PORT_KEYS = {"state", "phys state", "rate", "base lid", "sm lid", "link layer", "default gid"}


def sniff(doc: Document) -> float:
    headers = keys = 0
    for line in doc.lines[:200]:
        if _HEADER.match(line):
            headers += 1
        elif line.strip().startswith(("phys state:", "default gid:")):
            keys += 1
    if headers:
        return 0.95
    return 0.5 if keys >= 2 else 0.0


def parse(doc: Document, ctx: ParseContext) -> None:
    ports: list[dict[str, Any]] = []
    port: dict[str, Any] | None = None
    # port lines without their header are read when the transcript says they are ibstatus output
    headerless = bool(doc.command and re.search(r"\bibstatus\b", doc.command))
    for i, line in enumerate(doc.lines):
        if not line.strip():
            continue
        m = _HEADER.match(line)
        if m:
            port = {"_line": i, "_end": i, "device": m.group(1), "port": int(m.group(2))}
            ports.append(port)
            continue
        m = _KV.match(line)
        key = m.group(1).lower().replace("_", " ") if m else ""
        if m and headerless and (port is None or port.get("_anonymous")) and key in _PORT_KEYS:
            # an excerpt without the 'Infiniband device ...' lines (``ibstatus | grep -E
            # 'state|rate'``): a key seen again starts the next port (device and number unknown)
            if port is None or key in port["_keys"]:
                port = {"_line": i, "_end": i, "device": device_from_command(doc.command, "ibstatus")
                        or (doc.label or "" if doc.label_kind == "device" else ""), "port": 0,
                        "_anonymous": True, "_keys": set()}
                ports.append(port)
            port["_keys"].add(key)
        if not m or port is None:
            ctx.warn(i, f"unrecognized line: {line.strip()[:80]}")
            continue
        value = m.group(2)
        port["_end"] = i
        if key == "state":
            port["state"] = norm_state(value)
        elif key == "phys state":
            port["phys_state"] = norm_phys(value)
        elif key == "rate":
            rate, width, speed = parse_rate(value)
            if rate is None:
                ctx.warn(i, f"bad rate {value[:40]!r}")
            port.update(rate_gbps=rate, width=width, speed=speed)
        elif key == "base lid":
            port["lid"] = to_int(value)
        elif key == "sm lid":
            port["sm_lid"] = to_int(value)
        elif key == "link layer":
            port["link_layer"] = value
        elif key != "default gid":
            ctx.warn(i, f"unknown attribute {m.group(1)!r}")
    if not ports:
        raise NotApplicable("no 'Infiniband device ... status:' blocks")
    cov = doc.coverage or WHOLE
    for p in ports:
        if "state" not in p and cov.believes_absence("\tstate:\t\t 4: ACTIVE"):
            ctx.warn(p["_line"], f"port {p['device']}/{p['port']} has no state line (truncated?)")
        p.pop("_anonymous", None)
        p.pop("_keys", None)
    emit_ports(ctx, "ibstatus", ports)


FORMATS = [
    Format(
        name="ibstatus",
        command="ibstatus",
        facts=("ib.port", "ib.summary"),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\bibstatus\b",),
        description="ibstatus: per-port state, physical state, rate with width/generation, LIDs",
    )
]
