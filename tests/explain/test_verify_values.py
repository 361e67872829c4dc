"""Verification steps state the value to expect when the inputs give it (max turbo from lscpu, the
busbw the reference implies, the width a degraded link should train at), keep their generic words
when they do not, and the report shows what a fix costs and how to undo it."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from types import SimpleNamespace as NS

from clusterdx.engine.diagnose import collect_paths, diagnose
from clusterdx.engine.remedy import node_values
from clusterdx.explainers.html import render as html
from clusterdx.explainers.text import render as text

CASES = Path(__file__).resolve().parents[2] / "kb" / "cases"
CSTATES = CASES / "cp-stacked-cstates-numa-balancing" / "input"


def _turbo_step(report):
    h = next(h for h in report.hypotheses if h.id == "bios-deep-cstates-disabled-turbo-loss")
    return next(v for v in h.verification if "Bzy_MHz" in v.command)


def test_turbo_check_states_lscpus_max_mhz(kb):
    mhz = re.search(r"CPU max MHz:\s+([\d.]+)", (CSTATES / "lscpu.txt").read_text()).group(1)
    report = diagnose(collect_paths([CSTATES]), kb=kb)
    v = _turbo_step(report)
    assert f"near {float(mhz):g} MHz" in v.expect and "SKU" not in v.expect
    assert set(v.values) == {"cpu_max_mhz"}
    # the summary shows the step that carries the node's number
    assert f"{float(mhz):g} MHz" in text(report, width=100)


def test_without_lscpu_the_check_keeps_its_words(kb, tmp_path):
    shutil.copytree(CSTATES, tmp_path / "in")
    (tmp_path / "in" / "lscpu.txt").unlink()
    report = diagnose(collect_paths([tmp_path / "in"]), kb=kb)
    v = _turbo_step(report)
    assert "the SKU's max turbo" in v.expect and v.values == {}
    assert "{" not in v.expect


def test_degraded_link_check_names_the_width_to_expect(kb):
    report = diagnose(collect_paths([CASES / "hw-pcie-cx7-x8-lspci-dmesg" / "input"]), kb=kb)
    h = next(h for h in report.hypotheses if h.id == "pcie-link-degraded")
    widths = [v.values.get("link_width") for v in h.verification if v.values]
    assert widths and all(w == "x16" for w in widths)
    assert any("back at width x16" in v.expect for v in h.verification)


def test_reference_busbw_from_the_gap_only_when_the_reference_measured_it():
    ref = NS(basis="reference", reference=360.0, bar=0.95, metric="all_reduce busbw (GB/s)")
    assert node_values([], ref)["reference_busbw"].startswith("at least 342 GB/s")
    base = NS(basis="baseline", reference=410.0, bar=0.95, metric="step time (ms)")
    assert "baseline's 410" in node_values([], base)["reference_busbw"]
    assert "reference_busbw" not in node_values([], None)
    # a link that trained at its capability gives no width to expect
    fine = NS(fact_type="pcie.link", cap_width=16, width_downgraded=False)
    low = NS(fact_type="pcie.link", cap_width=8, width_downgraded=True)
    assert "link_width" not in node_values([fine])
    assert node_values([fine, low])["link_width"] == "x8"


def test_text_and_html_show_the_fixs_cost_and_rollback(kb):
    report = diagnose(collect_paths([CSTATES]), kb=kb)
    r = report.hypotheses[0].remediation[0]
    assert r.rollback and r.tradeoff
    out = text(report, width=100)
    assert "undo:   " + r.rollback[:30] in out and "cost:   " + r.tradeoff[:30] in out
    page = html(report)
    assert "Rollback:" in page and "Trade-off:" in page
