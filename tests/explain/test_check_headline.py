"""`check` says on its first line how much it could check: a node where most items could not be
checked never opens on a line that reads as ready."""

from __future__ import annotations

from types import SimpleNamespace as NS

from clusterdx.explainers.check_text import headline, render_markdown, render_text


def _report(checked: int, applicable: int, statuses: list[str], nodes=("n1",)):
    items = [NS(status=s, layer="l", seed=[], mandatory=False, cause=f"c{i}", reason="r", counts={},
                failing_nodes=[]) for i, s in enumerate(statuses)]
    return NS(nodes=list(nodes), items=items, exit_code=0,
              coverage=NS(checked=checked, applicable=applicable, mandatory=0, mandatory_checked=0))


def test_mostly_unchecked_node_says_so_first():
    r = _report(2, 50, ["pass", "pass"] + ["not checked"] * 48)
    first = render_text(r).splitlines()[0]
    assert "2 of 50 applicable items checked" in first and "most could not be checked" in first
    assert "48 are not known to be fine" in first


def test_a_well_covered_node_does_not_get_the_warning():
    r = _report(30, 50, ["pass"] * 29 + ["fail"] + ["not checked"] * 20)
    line = headline(r)
    assert "most could not be checked" not in line and "1 fail, 29 pass" in line
    assert "30 of 50" in render_markdown(r)


def test_many_nodes_do_not_make_a_header_of_thousands_of_characters():
    r = _report(2, 4, ["pass", "pass"], nodes=[f"gpu-node-{i:03d}" for i in range(200)])
    first = render_text(r).splitlines()[0]
    assert "+197 more" in first and len(first) < 200
