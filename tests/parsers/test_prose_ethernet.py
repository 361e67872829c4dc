"""The prose reader's plain-Ethernet link: machines joined by a NIC named only by its rate."""

import doctest

import pytest

from clusterdx.facts.base import NotApplicable
from clusterdx.facts.parsers import prose_ethernet
from tests.parsers.helpers import parse_text


def nics(text: str) -> list[tuple[str, float | None]]:
    try:
        facts = parse_text("prose", text + "\n").facts
    except NotApplicable:
        return []
    return [(f.interconnect, f.gbps) for f in facts
            if f.fact_type == "reported.inventory" and f.item == "nic" and f.interconnect == "Ethernet"]


def test_doctests():
    assert doctest.testmod(prose_ethernet).failed == 0


@pytest.mark.parametrize("text, gbps", [
    ("My internet interface controller(NIC) is GB NIC， whose highest bandwidth is around 1000 Mbit/s.", 1.0),
    ("The machines are connected with gigabit Ethernet (1 Gbps switch).", 1.0),
    ("both servers sit on a 10GbE switch", 10.0),
    ("nodes are linked over a 10-gigabit network", 10.0),
    ("user@node1:~$ ethtool eno1 says the NIC is at 1000Mb/s\r", 1.0),
    ("Our cluster network is 25 Gbps Ethernet", 25.0),
])
def test_a_link_named_by_its_ethernet_rate(text, gbps):
    assert nics(text) == [("Ethernet", gbps)]


@pytest.mark.parametrize("text", [
    "Each node has a 1 GbE port for management and SSH only.",       # not the job's link
    "8x 200G HDR InfiniBand per node, 1 Gbps to the storage network",  # a fabric and a side port
    "Do I need to upgrade my NIC to 40 Gbps or 100 Gbps?",             # a wish, not the installed NIC
    "The dataset download ran at 1000 Mbit/s.",                        # no network word: a transfer
    "We read 12 GB/s from the NVMe array over the PCIe switch",        # GB/s of a disk, no Ethernet rate
])
def test_lookalikes_are_not_the_machines_link(text):
    assert nics(text) == []
