"""bonding - File

``/proc/net/bonding/<bond>``: the Linux bonding driver's status. A header
(``Ethernet Channel Bonding Driver: v...``), the bond settings (``Bonding Mode``,
``Transmit Hash Policy``, ``MII Status``, ``Currently Active Slave``; 802.3ad adds ``LACP rate``
and ``Active Aggregator Info``), then one ``Slave Interface:`` block per slave (MII status, speed
in Mbps or ``Unknown``, duplex, link failure count, aggregator id; the per-slave LACP ``details``
blocks are skipped). The bond name comes from the file name or the command (``cat
/proc/net/bonding/bond0``), or from ``==> /proc/net/bonding/bond0 <==`` headers of ``head``/
``tail``; several bonds in one input are split at each driver header. A bond whose name
the input does not tell is called ``bond?`` (``bond?1`` ... for further ones). Yields one ``net.bond`` per
bond and one ``net.bond_slave`` per slave.

Sample input::

    Ethernet Channel Bonding Driver: v5.15.0-105-generic

    Bonding Mode: IEEE 802.3ad Dynamic link aggregation
    Transmit Hash Policy: layer3+4 (1)
    MII Status: up
    LACP rate: fast
    Active Aggregator Info:
    	Aggregator ID: 1

    Slave Interface: ens10f0np0
    MII Status: up
    Speed: 200000 Mbps
    Duplex: full
    Link Failure Count: 0
    Aggregator ID: 1

    Slave Interface: ens10f1np1
    MII Status: down
    Speed: Unknown
    Duplex: Unknown
    Link Failure Count: 3
    Aggregator ID: 2

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE, name="/proc/net/bonding/bond0")
    >>> ctx = ParseContext(doc, "bonding"); parse(doc, ctx)
    >>> b = [f for f in ctx.facts if f.fact_type == "net.bond"][0]
    >>> (b.bond, b.mode, b.slaves, b.active_slaves, b.down_slaves, b.speed_mbps, b.link_failures)
    ('bond0', '802.3ad', ['ens10f0np0', 'ens10f1np1'], 1, ['ens10f1np1'], [200000], 3)
    >>> (b.xmit_hash_policy, b.lacp_rate, b.active_aggregator_id, b.source.line)
    ('layer3+4', 'fast', 1, 1)
    >>> s = [f for f in ctx.facts if f.fact_type == "net.bond_slave"][1]
    >>> (s.slave, s.mii_status, s.speed_mbps, s.link_failure_count, s.source.line)
    ('ens10f1np1', 'down', None, 3, 17)
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
from clusterdx.facts.model.net import NetBond, NetBondSlave


SAMPLE = """\
Ethernet Channel Bonding Driver: v5.15.0-105-generic

Bonding Mode: IEEE 802.3ad Dynamic link aggregation
Transmit Hash Policy: layer3+4 (1)
MII Status: up
LACP rate: fast
Active Aggregator Info:
\tAggregator ID: 1

Slave Interface: ens10f0np0
MII Status: up
Speed: 200000 Mbps
Duplex: full
Link Failure Count: 0
Aggregator ID: 1

Slave Interface: ens10f1np1
MII Status: down
Speed: Unknown
Duplex: Unknown
Link Failure Count: 3
Aggregator ID: 2
"""

_DRIVER = lazyre.compile(r"^\s*Ethernet Channel Bonding Driver:")
_HEAD = lazyre.compile(r"^\s*==>\s*\S*/bonding/(\S+?)\s*<==\s*$")
_BOND_PATH = lazyre.compile(r"/bonding/([\w.:-]+)")
_BOND_FILE = lazyre.compile(r"^(bond\d+)(?:\.txt|\.log)?$")
_KV = lazyre.compile(r"^\s*([A-Za-z][\w ()/.-]*?)\s*:\s*(.*?)\s*$")
#: keys that may open a bond's status when the driver header line was cut off
_START_KEYS = {"bonding mode", "slave interface", "transmit hash policy", "currently active slave",
               "primary slave"}
_MODES = (
    ("802.3ad", "802.3ad"), ("active-backup", "active-backup"), ("round-robin", "balance-rr"),
    ("balance-rr", "balance-rr"), ("xor", "balance-xor"), ("broadcast", "broadcast"),
    ("transmit load balancing", "balance-tlb"), ("balance-tlb", "balance-tlb"),
    ("adaptive load balancing", "balance-alb"), ("balance-alb", "balance-alb"),
)


def canonical_mode(text: str) -> str:
    """``fault-tolerance (active-backup)`` -> ``active-backup``.

    >>> canonical_mode("load balancing (round-robin)"), canonical_mode("IEEE 802.3ad Dynamic link aggregation")
    ('balance-rr', '802.3ad')
    """
    low = text.lower()
    return next((name for key, name in _MODES if key in low), text.strip())


def sniff(doc: Document) -> float:
    driver = mode = slave = 0
    for line in doc.lines[:200]:
        if _DRIVER.match(line):
            driver += 1
        elif line.strip().startswith("Bonding Mode:"):
            mode += 1
        elif line.strip().startswith("Slave Interface:"):
            slave += 1
    if driver or mode:
        return 0.95
    return 0.6 if slave else 0.0


class _Bond:
    def __init__(self, index: int, name: str):
        self.index = index
        self.last = index
        self.name = name
        self.f: dict[str, Any] = {}
        self.slaves: list[dict[str, Any]] = []
        self.in_aggregator_info = False
        self.in_details = False


def parse(doc: Document, ctx: ParseContext) -> None:
    default_name = ""
    for text in (doc.command or "", doc.path or "", doc.name):
        m = _BOND_PATH.search(text)
        if m and "*" not in m.group(1):
            default_name = m.group(1)
            break
    else:
        m = _BOND_FILE.match(re.split(r"[/\\]", doc.name)[-1])
        if m:
            default_name = m.group(1)
    bonds: list[_Bond] = []
    head_name = ""
    bond: _Bond | None = None
    for i, line in enumerate(doc.lines):
        if not line.strip():
            if bond is not None:
                bond.in_aggregator_info = False
            continue
        m = _HEAD.match(line)
        if m:
            head_name = m.group(1)
            bond = None
            continue
        if _DRIVER.match(line):
            bond = _Bond(i, head_name or (default_name if not bonds else ""))
            head_name = ""
            bonds.append(bond)
            continue
        m = _KV.match(line)
        if not m:
            if line.strip() == "802.3ad info":
                continue
            if bond is None or not bond.in_details:
                ctx.warn(i, f"unrecognized line: {line.strip()[:80]}")
            continue
        key, value = m.group(1).lower(), m.group(2)
        if bond is None:
            if key not in _START_KEYS:
                ctx.warn(i, f"unrecognized line: {line.strip()[:80]}")
                continue
            bond = _Bond(i, head_name or default_name)
            bonds.append(bond)
        bond.last = i
        if key == "slave interface":
            bond.slaves.append({"_line": i, "slave": value})
            bond.in_aggregator_info = bond.in_details = False
            continue
        if key.startswith("details "):
            bond.in_details = True
            continue
        if bond.in_details and line[:1].isspace():
            continue
        if key == "active aggregator info":
            bond.in_aggregator_info = True
            continue
        if bond.slaves:
            _slave_field(bond.slaves[-1], key, value, ctx, i)
        elif bond.in_aggregator_info:
            if key == "aggregator id":
                bond.f["active_aggregator_id"] = _int(value)
        else:
            _bond_field(bond.f, key, value)
    if not bonds:
        raise NotApplicable("no bonding driver status")
    for n, b in enumerate(bonds):
        _emit(ctx, b, n)


def _bond_field(f: dict[str, Any], key: str, value: str) -> None:
    if key == "bonding mode":
        f["mode_text"] = value
        f["mode"] = canonical_mode(value)
    elif key == "mii status":
        f["mii_status"] = value
    elif key == "transmit hash policy":
        f["xmit_hash_policy"] = re.sub(r"\s*\(\d+\)\s*$", "", value)
    elif key == "lacp rate":
        f["lacp_rate"] = value
    elif key == "currently active slave":
        f["active_slave"] = "" if value.lower() == "none" else value


def _slave_field(s: dict[str, Any], key: str, value: str, ctx: ParseContext, i: int) -> None:
    if key == "mii status":
        s["mii_status"] = value
    elif key == "speed":
        m = re.match(r"(\d+)\s*Mbps", value)
        s["speed_mbps"] = int(m.group(1)) if m else None
        if not m and value.lower() != "unknown":
            ctx.warn(i, f"bad speed {value!r}")
    elif key == "duplex":
        s["duplex"] = value
    elif key == "link failure count":
        s["link_failure_count"] = _int(value)
    elif key == "aggregator id":
        s["aggregator_id"] = _int(value)


def _emit(ctx: ParseContext, b: _Bond, n: int) -> None:
    name = b.name or ("bond?" if n == 0 else f"bond?{n}")
    slaves = [s["slave"] for s in b.slaves]
    up = [s for s in b.slaves if s.get("mii_status", "").lower() == "up"]
    agg = b.f.get("active_aggregator_id")
    outside = []
    if b.f.get("mode") == "802.3ad" and agg is not None:
        outside = [s["slave"] for s in up if s.get("aggregator_id") not in (None, agg)]
    ctx.add(
        NetBond, b.index, b.last, bond=name, slaves=slaves, active_slaves=len(up),
        down_slaves=[s["slave"] for s in b.slaves if s not in up],
        speed_mbps=[s["speed_mbps"] for s in b.slaves if s.get("speed_mbps") is not None],
        link_failures=sum(s.get("link_failure_count") or 0 for s in b.slaves),
        slaves_outside_aggregator=outside, **b.f,
    )
    for s in b.slaves:
        fields = {k: v for k, v in s.items() if not k.startswith("_")}
        ctx.add(NetBondSlave, s["_line"], bond=name, **fields)


def _int(text: str) -> int | None:
    m = re.match(r"\s*(\d+)", text)
    return int(m.group(1)) if m else None


FORMATS = [
    Format(
        name="bonding",
        command="cat /proc/net/bonding/bond0",
        facts=("net.bond", "net.bond_slave"),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"/proc/net/bonding\b",),
        description="/proc/net/bonding/<bond>: bonding mode, slaves, link state and speed",
    )
]
