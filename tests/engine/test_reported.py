"""Reported facts (the ticket's prose) are weighed below measured ones, and never above them."""

from __future__ import annotations

from clusterdx.engine.diagnose import WEAKER, Collected, run_diagnosis
from clusterdx.facts.base import SourceRef
from clusterdx.facts.derive import derive_all
from clusterdx.facts.model.nccl import NcclVersion

from tests.kbshare import shipped_kb


def _version(provenance: str, version: str = "2.19.4", node: str = "gpu-01") -> NcclVersion:
    num = int(version.split(".")[0]) * 10000 + int(version.split(".")[1]) * 100 + int(version.split(".")[2])
    return NcclVersion(node=node, version=version, version_num=num, provenance=provenance,
                       source=SourceRef(input="t.md" if provenance == "reported" else "nccl.log", line=3))


def _evidence(facts):
    report = run_diagnosis(Collected([], list(facts), ["t"]), next_probes=False, kb=shipped_kb()).report
    [h] = [h for h in report.hypotheses if h.id == "nccl-version-regression"]
    [ev] = [e for e in h.evidence if e.rule == "nccl-version-known-regression"]
    [term] = [t for t in h.score if t.rule == "nccl-version-known-regression"]
    return ev, term, h


def test_measured_fact_carries_the_rule_strength():
    ev, term, _ = _evidence([_version("measured")])
    assert (ev.strength, ev.reported, term.strength, term.reported, term.rule_strength) == \
        ("strong", False, "strong", False, "")
    assert not ev.facts[0].reported


def test_reported_fact_drops_one_level_and_says_so():
    ev, term, h = _evidence([_version("reported")])
    assert (ev.strength, ev.reported) == ("moderate", True)
    assert (term.strength, term.reported, term.rule_strength) == ("moderate", True, "strong")
    assert ev.facts[0].reported
    measured_ev, measured_term, measured_h = _evidence([_version("measured")])
    assert term.delta_logit < measured_term.delta_logit and h.confidence < measured_h.confidence


def test_a_measurement_replaces_the_statement():
    # the user says 2.19.4 (on the list), the NCCL log says 2.20.3: the log wins, nothing fires
    facts = derive_all([_version("reported", "2.19.4", node="node"), _version("measured", "2.20.3")])
    assert [(f.version, f.provenance) for f in facts if f.fact_type == "nccl.version"] == [("2.20.3", "measured")]
    report = run_diagnosis(Collected([], [_version("reported", "2.19.4", node="node"),
                                          _version("measured", "2.20.3")], ["t"]), next_probes=False, kb=shipped_kb()).report
    assert "nccl-version-regression" not in [h.id for h in report.hypotheses]


def test_a_statement_without_a_measured_twin_is_kept():
    facts = derive_all([_version("reported")])
    assert [f.provenance for f in facts if f.fact_type == "nccl.version"] == ["reported"]


def test_weaker_is_one_level_down_and_weak_is_the_floor():
    assert [WEAKER[w] for w in ("decisive", "strong", "moderate", "weak")] == ["strong", "moderate", "weak", "weak"]


def test_explainers_mark_reported_evidence():
    from clusterdx.explainers import html, markdown, text

    reported = run_diagnosis(Collected([], [_version("reported")], ["t"]), next_probes=False, kb=shipped_kb()).report
    measured = run_diagnosis(Collected([], [_version("measured")], ["t"]), next_probes=False, kb=shipped_kb()).report
    assert "*(reported by the user)*" in markdown.render(reported)
    assert "reported by the user" not in markdown.render(measured)
    assert "(reported by the user)" in html.render(reported)
    assert "reported by the user" in _text(text, reported) and "reported by the user" not in _text(text, measured)


def _text(module, report) -> str:
    return module.render(report, width=200, verbose=True)
