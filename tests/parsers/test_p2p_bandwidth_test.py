import doctest

import pytest

from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document
from clusterdx.facts.parsers import p2p_bandwidth_test as p2p
from tests.parsers.helpers import of_type, parse_text

FMT = "p2p-bandwidth-latency-test"

# the shape of stas00/ml-engineering#1: three RTX A6000, peer copies far below the staged ones;
# the bidirectional matrices cut after their first row, a latency matrix after them
FULL = """\
[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]
Device: 0, NVIDIA RTX A6000, pciBusID: 3, pciDeviceID: 0, pciDomainID:0
Device: 1, NVIDIA RTX A6000, pciBusID: 21, pciDeviceID: 0, pciDomainID:0
Device: 2, NVIDIA RTX A6000, pciBusID: 49, pciDeviceID: 0, pciDomainID:0
Device=0 CAN Access Peer Device=1
Device=0 CAN Access Peer Device=2
Device=1 CAN Access Peer Device=0
Device=1 CAN Access Peer Device=2
Device=2 CAN Access Peer Device=0
Device=2 CAN Access Peer Device=1

***NOTE: In case a device doesn't have P2P access to other one, it falls back to normal memcopy procedure.
So you can see lesser Bandwidth (GB/s) and unstable Latency (us) in those cases.

P2P Connectivity Matrix
     D\\D     0     1     2
     0\t     1     1     1
     1\t     1     1     1
     2\t     1     1     1
Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)
   D\\D     0      1      2
     0 673.20  13.15  13.15
     1  12.99 673.20  22.20
     2  13.00  21.98 673.78
Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)
   D\\D     0      1      2
     0 673.49   2.60   1.58
     1   2.12 672.33   1.70
     2   2.12   1.60 673.78
Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)
   D\\D     0      1      2
     0 677.73  18.01  18.02
Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)
   D\\D     0      1      2
     0 678.10   3.20   2.90
P2P=Disabled Latency Matrix (us)
   GPU     0      1      2
     0   1.59  14.55  14.71
"""

# a consumer board without peer-to-peer (older driver output, no pciDomainID), healthy copies
CONSUMER = """\
Device: 0, NVIDIA GeForce RTX 4090, pciBusID: 1, pciDeviceID: 0, pciDomainID:0
Device: 1, NVIDIA GeForce RTX 4090, pciBusID: 2, pciDeviceID: 0, pciDomainID:0
Device=0 CANNOT Access Peer Device=1
Device=1 CANNOT Access Peer Device=0
Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)
   D\\D     0      1
     0 909.21  21.80
     1  21.95 913.49
Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)
   D\\D     0      1
     0 911.03  21.77
     1  21.90 912.80
"""


def test_doctests():
    assert doctest.testmod(p2p).failed == 0


def test_full_output_compares_peer_and_staged_copies():
    ctx = parse_text(FMT, FULL)
    assert [(d.device, d.bus) for d in of_type(ctx, "p2ptest.device")] == [(0, 3), (1, 33), (2, 73)]
    s, = of_type(ctx, "p2ptest.summary")
    assert (s.devices, s.pairs_can, s.pairs_cannot, s.min_bus_gap) == (3, 6, 0, 30)
    uni, bi = of_type(ctx, "p2ptest.compare")
    assert (uni.direction, uni.pairs, uni.enabled_median_gbps, uni.disabled_median_gbps, uni.pairs_slower) == \
        ("unidirectional", 6, 1.91, 13.15, 6)
    assert uni.ratio < 0.2
    # the cut bidirectional matrices still give their one row; the latency matrix is not bandwidth
    assert (bi.direction, bi.pairs, bi.enabled_median_gbps, bi.disabled_median_gbps) == ("bidirectional", 2, 3.05, 18.015)


def test_head_only_gives_devices_and_access():
    head = "\n".join(FULL.splitlines()[:10]) + "\n"
    ctx = parse_text(FMT, head)
    s, = of_type(ctx, "p2ptest.summary")
    assert (s.devices, s.pairs_can) == (3, 6)
    assert not of_type(ctx, "p2ptest.compare")


def test_consumer_board_refuses_peer_access_and_copies_match():
    ctx = parse_text(FMT, CONSUMER)
    s, = of_type(ctx, "p2ptest.summary")
    assert (s.pairs_can, s.pairs_cannot, s.min_bus_gap) == (0, 2, 1)
    c, = of_type(ctx, "p2ptest.compare")
    assert 0.95 < c.ratio < 1.05 and c.pairs_slower == 2


def test_fenced_paste_with_a_title_line_is_sniffed():
    text = "p2pBandwidthLatencyTest\n\n```\n" + "\n".join(FULL.splitlines()[:8]) + "\n```\n"
    assert p2p.sniff(Document.from_text(text)) >= 0.9


@pytest.mark.parametrize("text", [
    # nvidia-smi's own listing and a topology matrix are not this test
    "GPU 0: NVIDIA RTX A6000 (UUID: GPU-1d2f3a4b-5c6d-7e8f-9a0b-1c2d3e4f5a6b)\n",
    "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tSYS\t0-31\nGPU1\tSYS\t X \t0-31\n",
    "Device 0 can access peer device 1 according to the docs\n",
])
def test_lookalikes_are_not_sniffed(text):
    assert p2p.sniff(Document.from_text(text)) == 0.0


def test_nothing_of_it_is_not_applicable():
    with pytest.raises(NotApplicable):
        parse_text(FMT, "Result = PASS\n")
