"""The shipped knowledge base loads cleanly, and broken files give pinned codes and locations."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from clusterdx.engine.graph import TOP_SYMPTOM
from clusterdx.engine.kb import load_kb, shipped_dirs

INVALID = Path(__file__).parents[1] / "kb_invalid"


@pytest.fixture(scope="module")
def kb():
    return load_kb()


def test_shipped_kb_has_no_errors(kb):
    assert kb.errors == []


def test_graph_is_acyclic_and_every_root_cause_reaches_the_top(kb):
    assert kb.graph is not None
    assert kb.graph.cycles() == []
    assert kb.graph.unreachable_root_causes() == []
    assert TOP_SYMPTOM in kb.nodes


def test_seed_causes_exist_with_rules(kb):
    seeds = ["vm-vsmmu-cmdq-trap-overhead", "grace-4k-page-kernel", "bios-deep-cstates-disabled-turbo-loss",
             "cpu-governor-epp-powersave", "rank-numa-misbinding", "numa-balancing-enabled",
             "container-nccl-env-not-propagated", "nccl-topology-invisible",
             "nccl-ib-qp-concurrency-insufficient", "nccl-channel-count-insufficient"]
    for cause in seeds:
        assert kb.nodes[cause].kind == "root_cause"
        assert kb.rules_for_node(cause), f"no rule gives evidence for {cause}"


def test_package_ships_kb_inside_clusterdx():
    rules, kbdir = shipped_dirs()
    assert (rules / "__init__.py").exists() and (kbdir / "__init__.py").exists()


def _cases():
    return sorted(INVALID.glob("*.yaml"))


@pytest.fixture(scope="module")
def invalid_kb(tmp_path_factory):
    """The whole invalid corpus loaded once, on top of the shipped KB so that references resolve.
    Each corpus file breaks one thing of its own (an id of its own, no graph cycle), so one load
    reports every file's problem as a load of that file alone would."""
    work = tmp_path_factory.mktemp("site")
    for path in _cases():
        (work / path.name).write_text(path.read_text())
    rules, kbdir = shipped_dirs()
    return load_kb([rules, kbdir, work], strict=False)


@pytest.mark.parametrize("path", _cases(), ids=lambda p: p.name)
def test_invalid_corpus_gives_pinned_code_and_location(invalid_kb, path):
    header = path.read_text().splitlines()[0]
    m = re.match(r"# expect: (KB\d+) at (\d+):(\d+)", header)
    assert m, f"{path.name} lacks an '# expect: KBnnn at L:C' header"
    code, line, col = m.group(1), int(m.group(2)), int(m.group(3))
    found = [p for p in invalid_kb.problems if p.file.endswith(path.name)]
    assert any(p.code == code and (p.line, p.col) == (line, col) for p in found), [str(p) for p in found]


def test_failure_nodes_are_observables_or_symptoms_and_reach_follows_the_edges(kb):
    fails = {n.id for n in kb.nodes.values() if n.fails}
    assert fails and all(kb.nodes[n].kind in ("observable", "symptom") for n in fails)
    g = kb.graph
    # a forced protocol acts through wrong-nccl-path, which only slows collectives
    assert not g.can_fail("wrong-nccl-path") and not g.can_fail("cpu-governor-epp-powersave")
    # the cause as a whole can fail the job (a legacy IPC path switched off), memory errors crash it
    assert g.can_fail("nccl-stale-debug-overrides") and g.can_fail("gpu-memory-ecc-remap-pending")
    assert g.can_fail("multi-node-hang")


def test_every_via_is_downstream_of_its_evidence_node(kb):
    from clusterdx.engine.graph import downstream

    vias = [(r.id, e.node, e.via) for r in kb.rules.values() for e in r.evidence if e.via]
    assert vias
    assert all(via in downstream(kb.nodes, node) for _, node, via in vias), vias
