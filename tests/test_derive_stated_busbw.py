"""A multi-node busbw stated in a ticket's words, held against the NICs the ticket reports."""

from __future__ import annotations

import pytest

from clusterdx.facts.base import NotApplicable
from clusterdx.facts.derive import derive_all
from tests.parsers.helpers import parse_text


def _efficiency(text: str):
    try:
        facts = parse_text("prose", text).facts
    except NotApplicable:
        return []
    return [f for f in derive_all(facts) if f.fact_type == "nccltests.efficiency"]


def test_a_stated_two_node_busbw_against_the_stated_nics():
    [e] = _efficiency("all_reduce_perf between two nodes only gives 12 GB/s busbw.\n"
                      "We have 8x H100 per node and 8x 400G InfiniBand.")
    assert (e.nodes, e.busbw, e.size_bytes, e.provenance) == (2, 12.0, 0, "reported")
    assert e.expected_busbw == pytest.approx(376.0) and e.fraction == pytest.approx(12 / 376, abs=1e-4)
    assert "reported by the user" in e.basis


def test_without_stated_nics_the_gpus_reference_sets_the_figure():
    [e] = _efficiency("Two nodes with 8x H100 SXM each: all_reduce_perf over 2 nodes reaches 180 GB/s busbw.")
    assert e.expected_busbw > 180 and 0.3 < e.fraction < 0.7


@pytest.mark.parametrize("text", [
    # a bound, not a measurement: the busbw "exceeds" the network figure
    "When running all_reduce test with 2 nodes, reported busbw exceeds 100Gbps. 8x H100 per node, 8x 400G InfiniBand.",
    # a target: what it should reach
    "On 2 nodes the busbw should reach 370 GB/s. We have 8x H100 per node and 8x 400G InfiniBand.",
    # one node: the network is not in the path
    "all_reduce_perf on one node only gives 120 GB/s busbw. We have 8x H100 per node and 8x 400G InfiniBand.",
    # no hardware said: nothing to hold the number against
    "all_reduce_perf between two nodes only gives 12 GB/s busbw.",
])
def test_no_figure_from_a_bound_a_single_node_or_unknown_hardware(text):
    assert _efficiency(text) == []
