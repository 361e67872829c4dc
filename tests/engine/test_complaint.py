"""The complaint's kind: a failure only, or (also) a slowdown."""

from clusterdx.engine.complaint import FAILS, complaint
from clusterdx.facts.model.reported import ReportedChange, ReportedMetric, ReportedSymptom


def sym(kind):
    return ReportedSymptom(node="node", text="...", kind=kind)


def test_a_hang_or_an_error_alone_is_a_failure_complaint():
    assert complaint([sym("hang")]) == FAILS
    assert complaint([sym("error"), sym("hang")]) == FAILS
    assert complaint([sym("multi-gpu-wrong-data")]) == FAILS


def test_a_slowdown_said_beside_the_failure_is_no_failure_only_complaint():
    assert complaint([sym("hang"), sym("no-speedup")]) == ""
    assert complaint([sym("error"), ReportedMetric(node="node", text="15% slower", metric="slowdown_pct",
                                                   value=15.0, unit="%", value_norm=15.0)]) == ""
    assert complaint([sym("hang"), ReportedChange(node="node", text="slower since", direction="slower")]) == ""
    assert complaint([sym("hang")], slow_measured=True) == ""


def test_lookalikes_are_no_complaint_of_either_kind():
    # a step time in a progress bar is a number, not a complaint; no symptom: nothing to say
    bar = ReportedMetric(node="node", text="3.44s/it", metric="step_time", value=3.44, unit="s/it", value_norm=3440.0)
    assert complaint([bar]) == ""
    assert complaint([sym("hang"), bar]) == FAILS
    assert complaint([sym("low-bandwidth")]) == ""
    assert complaint([]) == ""
