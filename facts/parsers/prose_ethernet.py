"""prose_ethernet - the machines' network named by its Ethernet rate alone (part of the prose reader)

"the machines are connected with gigabit Ethernet", "my NIC is GB NIC, whose highest bandwidth is
around 1000 Mbit/s", "the nodes sit on a 10GbE switch", "a 1 Gbps network between the servers":
no NIC model, no fabric, only the rate of plain Ethernet. It becomes a ``reported.inventory`` of
item ``nic`` with ``model`` '' (no gazetteer row), ``interconnect`` 'Ethernet' and ``gbps`` the rate.

The rate is read from an Ethernet word ("gigabit", "GbE", "10-gigabit") or from a number with a
unit ("1000 Mbit/s", "1 Gbps", "10 Gb/s") in a sentence that names a NIC, a network, Ethernet, a
switch or the link between machines. Look-alikes left out: a port kept for management, SSH, the
BMC or storage ("a 1 GbE port for management") is not the link the job's traffic takes; a rate
named with an RDMA fabric or a NIC model (InfiniBand, RoCE, EFA, ConnectX) is read by the NIC
gazetteer, not here; a rate in a question or a wish ("do I need 40 or 100 Gb?", "upgrade to 100G")
is not the installed link, so only the first rate of the sentence is taken, and a sentence whose
rates are all after "to", "need" or "upgrade" says nothing installed.

Sample input::

    My internet interface controller(NIC) is GB NIC, whose highest bandwidth is around 1000 Mbit/s.

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> from clusterdx.facts.parsers import prose
    >>> doc = Document.from_text(SAMPLE); ctx = ParseContext(doc, "prose"); prose.parse(doc, ctx)
    >>> [(f.item, f.interconnect, f.gbps) for f in ctx.facts if f.fact_type == "reported.inventory"]
    [('nic', 'Ethernet', 1.0)]
"""

from __future__ import annotations

import re
from typing import Any

from clusterdx.facts import lazyre


SAMPLE = "My internet interface controller(NIC) is GB NIC, whose highest bandwidth is around 1000 Mbit/s.\n"

#: "gigabit Ethernet", "10-gigabit", "1GbE", "10 GbE", "GB NIC" (a gigabit card, as users write it)
_WORD_RATE = lazyre.compile(r"(?<![\w.])(?:(\d{1,3})[\s-]{0,2})?(?:gigabit|GbE|GigE)\b|(?<![\w.])(GB)\s{1,2}NICs?\b", re.I)
#: "1000 Mbit/s", "1 Gbps", "10 Gb/s", "100Mbps"; the b stays lower case (see _gbps)
#: bits, not bytes: "12 GB/s" read from a disk is no link rate
_UNIT_RATE = lazyre.compile(r"(?<![\w.])(\d{1,5}(?:\.\d{1,2})?)\s{0,2}([MG](?:bit/s|b/s|bps))(?![\w/])", re.I)
#: the sentence is about the machines' network
_NETWORK = lazyre.compile(r"\b(?:NICs?|network\w{0,3}|ethernet|switch\w{0,2}|interface\s{1,3}controller|LAN|"
                          r"(?:connected|linked|joined)\s{1,3}(?:with|by|via|over|through))\b", re.I)
#: a port the job's traffic does not take
_SIDE_PORT = lazyre.compile(r"\b(?:management|mgmt|SSH|BMC|IPMI|iDRAC|iLO|admin\w{0,10}|storage|NFS|out[\s-]of[\s-]band)\b", re.I)
#: a fabric or NIC model: the gazetteer reads those sentences
_FABRIC = lazyre.compile(r"\b(?:InfiniBand|IB|RoCE\w{0,2}|RDMA|EFA|ConnectX[\w-]{0,4}|[HNX]DR|mlx5\w{0,6}|BlueField)\b", re.I)
#: the rate is what the user asks for or plans, not what is installed
_WISH_BEFORE = lazyre.compile(r"\b(?:to|need\w{0,3}|upgrad\w{1,3}|buy\w{0,3}|want\w{0,3}|or|than|vs\.?|versus)\s{1,3}(?:a\s{1,3}|an\s{1,3}|the\s{1,3})?$", re.I)


def _gbps(m: re.Match[str]) -> float | None:
    if m.re is _UNIT_RATE.compiled:
        if "B" in m.group(2):  # GB/s, MBps: bytes, a transfer rate rather than a link's
            return None
        value = float(m.group(1))
        return value / 1000.0 if m.group(2).lower().startswith("mb") else value
    if m.group(2):  # "GB NIC"
        return 1.0
    return float(m.group(1)) if m.group(1) else 1.0


def sentence(reader: Any, index: int, text: str) -> None:
    from clusterdx.facts.model.reported import ReportedInventory

    if not _NETWORK.search(text) or _SIDE_PORT.search(text) or _FABRIC.search(text):
        return
    found = sorted([*_WORD_RATE.finditer(text), *_UNIT_RATE.finditer(text)], key=lambda m: m.start())
    for m in found:
        if _WISH_BEFORE.search(text[:m.start()]):
            continue
        gbps = _gbps(m)
        if gbps is None:
            continue
        if not 0.01 <= gbps <= 100:
            return
        reader.add(ReportedInventory, index, ("inv", "nic", "", "Ethernet", gbps), item="nic", model="",
                   gbps=gbps, interconnect="Ethernet", text=" ".join(text.split())[:200])
        return
