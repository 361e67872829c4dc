"""The reliability table of the public corpus: computed by engine/cases.py, in `kb eval -f json`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clusterdx.cli import _register_commands, app
from clusterdx.engine.cases import CALIBRATION_BINS, CaseResult, calibration

CASES = Path(__file__).parents[1] / "kb" / "cases"


def _public(name: str, expect: dict, ranking: list) -> CaseResult:
    return CaseResult(name, True, [], ranking, expect, False, corpus="public")


def test_bins_counts_means_fractions_and_ece():
    results = [
        _public("a", {"top": "x"}, [("x", 0.9), ("y", 0.85), ("z", 0.1)]),
        _public("b", {"in_top_3": ["w"]}, [("w", 0.3)]),
        _public("control", {"max_confidence": 0.5}, [("x", 0.55)]),
        CaseResult("library-case", True, [], [("x", 0.99)], {"top": "y"}, False),  # not public: not counted
    ]
    cal = calibration(results)
    assert cal["predictions"] == 5 and len(cal["bins"]) == len(CALIBRATION_BINS)
    by_bin = {tuple(b["bin"]): b for b in cal["bins"]}
    assert by_bin[(0.8, 1.0)] == {"bin": [0.8, 1.0], "n": 2, "mean_confidence": 0.875, "right": 0.5}
    assert by_bin[(0.2, 0.4)]["right"] == 1.0 and by_bin[(0.0, 0.2)]["right"] == 0.0
    assert by_bin[(0.4, 0.6)]["n"] == 1 and by_bin[(0.6, 0.8)]["n"] == 0
    # 2/5 * |0.875 - 0.5| + 1/5 * (|0.3 - 1| + |0.1 - 0| + |0.55 - 0|)
    assert cal["ece"] == pytest.approx(0.42, abs=1e-4)
    assert cal["controls"] == 1 and cal["control_max_confidence"] == 0.55


def test_no_public_cases_no_table():
    cal = calibration([CaseResult("lib", True, [], [("x", 0.9)], {"top": "x"}, False)])
    assert cal["predictions"] == 0 and cal["ece"] is None


def test_kb_eval_json_has_the_reliability_table(tmp_path):
    # a library case copied into a folder of its own and marked as a public-corpus case
    case = tmp_path / "governor-as-public"
    shutil.copytree(CASES / "cp-governor-powersave-sysfs" / "input", case / "input")
    (case / "expect.yaml").write_text(
        "corpus: public\nsource: https://example.org/thread\nfirst_run: {ranking: []}\n"
        "expect:\n  top: cpu-governor-epp-powersave\n")
    _register_commands()
    out = CliRunner().invoke(app, ["kb", "eval", "-f", "json", "--cases", str(tmp_path)])
    assert out.exit_code == 0, out.output
    cal = json.loads(out.stdout)["calibration"]
    assert cal["predictions"] >= 1 and cal["ece"] is not None
    assert [tuple(b["bin"]) for b in cal["bins"]] == [(lo, min(hi, 1.0)) for lo, hi in CALIBRATION_BINS]
    assert all(set(b) == {"bin", "n", "mean_confidence", "right"} for b in cal["bins"])
    assert sum(b["n"] for b in cal["bins"]) == cal["predictions"]


def test_first_run_of_bare_ids_uses_the_flags_recorded_with_them():
    from clusterdx.engine.cases import _first_run_flags

    def case(first_run):
        r = _public("a", {"top": "x"}, [("x", 0.9)])
        r.first_run = first_run
        return r

    assert _first_run_flags(case({"ranking": ["x", "y"], "top1_ok": True, "top3_ok": True})) == (True, True)
    assert _first_run_flags(case({"ranking": ["y", "z"], "top1_ok": False, "top3_ok": False})) == (False, False)
    # no flags: the ids are judged as they stand
    assert _first_run_flags(case({"ranking": ["y", "x"]})) == (False, True)
    assert _first_run_flags(case({"ranking": [["x", 0.4]]})) == (True, True)
