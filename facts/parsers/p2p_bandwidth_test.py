"""CUDA sample p2pBandwidthLatencyTest - Command

The test lists the GPUs, asks the driver whether each ordered pair can access each other's memory,
then copies between every pair with peer access off (staged through host memory) and on. Lines
read: ``Device: N, <name>, pciBusID: <hex>, pciDeviceID: ..., pciDomainID:<n>``,
``Device=N CAN Access Peer Device=M`` (or ``CANNOT``), and the bandwidth matrices headed
``Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)`` / ``... P2P=Enabled Bandwidth (P2P Writes)
Matrix (GB/s)`` / ``Bidirectional ...``, one row per source GPU. A pasted head (only the device
list and the access lines) or a matrix cut after a few rows yields what it holds. Latency matrices
are skipped. Yields ``p2ptest.device`` per GPU, ``p2ptest.access`` per pair line, one
``p2ptest.summary``, and ``p2ptest.compare`` per direction that has both matrices.

Sample input::

    [P2P (Peer-to-Peer) GPU Bandwidth Latency Test]
    Device: 0, NVIDIA RTX A6000, pciBusID: 3, pciDeviceID: 0, pciDomainID:0
    Device: 1, NVIDIA RTX A6000, pciBusID: 21, pciDeviceID: 0, pciDomainID:0
    Device=0 CAN Access Peer Device=1
    Device=1 CAN Access Peer Device=0
    Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)
       D\\D     0      1
         0 673.20  13.15
         1  12.99 673.20
    Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)
       D\\D     0      1
         0 673.49   2.60
         1   2.12 672.33

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "p2p-bandwidth-latency-test"); parse(doc, ctx)
    >>> [(f.device, f.name, f.bus) for f in ctx.facts if f.fact_type == "p2ptest.device"]
    [(0, 'NVIDIA RTX A6000', 3), (1, 'NVIDIA RTX A6000', 33)]
    >>> s = next(f for f in ctx.facts if f.fact_type == "p2ptest.summary")
    >>> (s.devices, s.pairs_can, s.pairs_cannot, s.min_bus_gap)
    (2, 2, 0, 30)
    >>> c = next(f for f in ctx.facts if f.fact_type == "p2ptest.compare")
    >>> (c.direction, c.pairs, c.enabled_median_gbps, c.disabled_median_gbps, c.ratio, c.pairs_slower, c.all_slower)
    ('unidirectional', 2, 2.36, 13.07, 0.181, 2, True)
    >>> round(sniff(doc), 2), sniff(Document.from_text("Device 0 is fine\\n"))
    (0.95, 0.0)
"""

from __future__ import annotations

import re
from statistics import median

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.p2ptest import P2pTestAccess, P2pTestCompare, P2pTestDevice, P2pTestSummary


SAMPLE = (
    "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]\n"
    "Device: 0, NVIDIA RTX A6000, pciBusID: 3, pciDeviceID: 0, pciDomainID:0\n"
    "Device: 1, NVIDIA RTX A6000, pciBusID: 21, pciDeviceID: 0, pciDomainID:0\n"
    "Device=0 CAN Access Peer Device=1\n"
    "Device=1 CAN Access Peer Device=0\n"
    "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n"
    "   D\\D     0      1\n"
    "     0 673.20  13.15\n"
    "     1  12.99 673.20\n"
    "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n"
    "   D\\D     0      1\n"
    "     0 673.49   2.60\n"
    "     1   2.12 672.33\n"
)

_TITLE = lazyre.compile(r"\[P2P \(Peer-to-Peer\) GPU Bandwidth Latency Test\]|p2pBandwidthLatencyTest", re.I)
_DEVICE = lazyre.compile(r"^\s*Device:\s*(\d{1,3}),\s*([^,]{1,80}?),\s*pciBusID:\s*([0-9a-fA-F]{1,4})"
                     r"(?:,\s*pciDeviceID:\s*[0-9a-fA-F]{1,4})?(?:,\s*pciDomainID:\s*([0-9a-fA-F]{1,8}))?")
_ACCESS = lazyre.compile(r"^\s*Device\s*=\s*(\d{1,3})\s+(CAN|CANNOT)\s+Access\s+Peer\s+Device\s*=\s*(\d{1,3})\s*$", re.I)
_MATRIX = lazyre.compile(r"^\s*(Unidirectional|Bidirectional)\s+P2P\s*=\s*(Enabled|Disabled)\s+Bandwidth\b.*Matrix", re.I)
_OTHER_HEAD = lazyre.compile(r"^\s*(?:P2P\s*=\s*(?:Enabled|Disabled)\s+Latency|P2P Connectivity Matrix|Unidirectional|Bidirectional)", re.I)
_ROW = lazyre.compile(r"^\s*(\d{1,3})((?:\s+\d{1,6}(?:\.\d{1,4})?)+)\s*$")
_HEADER_ROW = lazyre.compile(r"^\s*D\\D(?:\s+\d{1,3})+\s*$")


def sniff(doc: Document) -> float:
    head = doc.lines[:400]
    devices = sum(1 for ln in head if _DEVICE.match(ln))
    access = sum(1 for ln in head if _ACCESS.match(ln))
    matrices = sum(1 for ln in head if _MATRIX.match(ln))
    if (devices and (access or matrices)) or (access and any(_TITLE.search(ln) for ln in head[:20])):
        return 0.95
    if access >= 2 or matrices:
        return 0.8
    return 0.0


def _matrices(lines: list[str]) -> dict[tuple[str, bool], dict[tuple[int, int], float]]:
    """Off-diagonal cells of each bandwidth matrix, by (direction, P2P enabled)."""
    out: dict[tuple[str, bool], dict[tuple[int, int], float]] = {}
    current: dict[tuple[int, int], float] | None = None
    for ln in lines:
        m = _MATRIX.match(ln)
        if m:
            current = out.setdefault((m.group(1).lower(), m.group(2).lower() == "enabled"), {})
            continue
        if _OTHER_HEAD.match(ln):
            current = None  # a latency or connectivity matrix: not bandwidth
            continue
        if current is None or _HEADER_ROW.match(ln):
            continue
        r = _ROW.match(ln)
        if not r:
            if ln.strip():
                current = None
            continue
        src = int(r.group(1))
        for dst, cell in enumerate(r.group(2).split()):
            if dst != src:
                current[(src, dst)] = float(cell)
    return out


def parse(doc: Document, ctx: ParseContext) -> None:
    buses: list[int] = []
    devices = can = cannot = 0
    for i, ln in enumerate(doc.lines):
        m = _DEVICE.match(ln)
        if m:
            bus = int(m.group(3), 16)
            buses.append(bus)
            devices += 1
            ctx.add(P2pTestDevice, i, device=int(m.group(1)), name=m.group(2).strip(), bus=bus,
                    domain=int(m.group(4), 16) if m.group(4) else None)
            continue
        a = _ACCESS.match(ln)
        if a:
            ok = a.group(2).upper() == "CAN"
            can += ok
            cannot += not ok
            ctx.add(P2pTestAccess, i, a=int(a.group(1)), b=int(a.group(3)), can=ok)
    mats = _matrices(doc.lines)
    if not devices and not can and not cannot and not mats:
        raise NotApplicable("no device, peer-access or bandwidth line of p2pBandwidthLatencyTest")
    ordered = sorted(set(buses))
    gap = min((y - x for x, y in zip(ordered, ordered[1:])), default=None) if len(ordered) > 1 else None
    ctx.add(P2pTestSummary, None, devices=devices, pairs_can=can, pairs_cannot=cannot, min_bus_gap=gap)
    for direction in ("unidirectional", "bidirectional"):
        on, off = mats.get((direction, True), {}), mats.get((direction, False), {})
        both = sorted(set(on) & set(off))
        if not both:
            continue
        en = round(median(on[p] for p in both), 3)
        dis = round(median(off[p] for p in both), 3)
        ctx.add(P2pTestCompare, None, direction=direction, pairs=len(both), enabled_median_gbps=en,
                disabled_median_gbps=dis, ratio=round(en / dis, 3) if dis else 0.0,
                pairs_slower=sum(1 for p in both if on[p] < off[p]),
                all_slower=all(on[p] < off[p] for p in both))


FORMATS = [
    Format(
        name="p2p-bandwidth-latency-test",
        command="./p2pBandwidthLatencyTest",
        facts=("p2ptest.device", "p2ptest.access", "p2ptest.summary", "p2ptest.compare"),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"p2pBandwidthLatencyTest",),
        description="CUDA sample p2pBandwidthLatencyTest: peer access per GPU pair, P2P on/off copy bandwidth",
    )
]
