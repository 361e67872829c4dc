"""Hostile tickets: one bad value, name or link costs that input (recorded), never the report.

Each test reproduces a finding of the robustness audit (issue 13) and checks that the report still
comes out, with the bad input accounted for in it.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from clusterdx.engine.diagnose import collect_paths, run_diagnosis
from clusterdx.engine.evaluate import safe_payloads
from clusterdx.explainers import json_out, markdown, text
from clusterdx.facts.base import Fact
from clusterdx.facts.derive import derive_all, run_deriver
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.ingest import MAX_WARNINGS, ingest, ingest_documents
from clusterdx.facts.model.derived import NcclSetting

from tests.kbshare import shipped_kb

ROOT = Path(__file__).parents[1]
FORMATS = ROOT / "tests" / "fixtures" / "formats"


def _report(paths, redact=True):
    target = collect_paths([str(p) for p in paths], redact=redact)
    return run_diagnosis(target, redact=redact, next_probes=False, kb=shipped_kb()).report


def _all_output(report) -> str:
    return json_out.render(report) + text.render(report) + markdown.render(report)


# -- 1. one number kills the run ------------------------------------------------------------------


def test_integer_beyond_64_bits_drops_that_fact_only(tmp_path):
    (tmp_path / "lsmod.txt").write_text("Module                  Size  Used by\n"
                                        "nvidia_uvm           99999999999999999999999  0\n"
                                        "nvidia              56315904  1 nvidia_uvm\n")
    report = _report([tmp_path])
    rec = next(i for i in report.inputs if i.path.endswith("lsmod.txt"))
    assert rec.status == "partial"
    assert rec.facts >= 1  # the nvidia line still parsed
    assert any("outside the signed 64-bit range" in w.message and w.line == 2 for w in rec.warnings)
    _all_output(report)


def test_fact_model_refuses_out_of_range_and_non_finite_numbers():
    doc = Document.from_text("x\n", name="t.txt")
    ctx = ParseContext(doc=doc, parser="test")
    assert ctx.add(NcclSetting, 0, name="NCCL_X", value="1", value_num=1.0, origin="env-dump") is not None
    assert ctx.add(NcclSetting, 0, name="NCCL_X", value="inf", value_num=float("inf"), origin="env-dump") is None
    assert ctx.add(NcclSetting, 0, name="NCCL_X", value="nan", value_num=float("nan"), origin="env-dump") is None
    assert len(ctx.facts) == 1
    assert [line for line, _ in ctx.warnings] == [1, 1]


def test_nccl_setting_inf_or_nan_does_not_stop_the_report(tmp_path):
    (tmp_path / "env.txt").write_text("NCCL_X=inf\nNCCL_Y=nan\nNCCL_DEBUG=INFO\nPATH=/usr/bin\n")
    report = _report([tmp_path])
    assert [i.status for i in report.inputs] == ["parsed"]
    _all_output(report)


def test_a_raising_deriver_costs_its_output_and_is_reported():
    def broken(facts):
        raise ValueError("boom")

    warnings: list[str] = []
    assert run_deriver(broken, [], None, warnings) == []
    assert warnings and "boom" in warnings[0]
    # the real derivers still run around a fact they cannot use
    facts = ingest_documents([Document.from_text("NCCL_IB_QPS_PER_CONNECTION=1e300\nNCCL_DEBUG=INFO\n",
                                                 name="env.txt")]).facts
    out = derive_all(facts, None, warnings)
    assert len(out) >= len(facts)


def _smuggled_huge_int():
    """A fact holding what no validator lets through (as a model_construct'ed or mutated fact
    from a future code path would)."""
    from clusterdx.facts.model.modules import KernelModule

    good = KernelModule(name="nvidia", size=56315904)
    bad = KernelModule(name="nvidia_uvm", size=1)
    object.__setattr__(bad, "size", 1 << 70)
    return good, bad


def test_a_fact_durable_cannot_take_is_dropped_with_a_warning():
    good, bad = _smuggled_huge_int()
    kept, payloads, warnings = safe_payloads([good, bad])
    assert kept == [good] and len(payloads) == 1
    assert len(warnings) == 1 and "kernel.module" in warnings[0]
    # nothing wrong: nothing dropped
    assert safe_payloads([good])[2] == []


def test_engine_evaluates_the_rest_when_one_fact_is_bad():
    from clusterdx.engine.diagnose import engine_for
    from clusterdx.engine.kb import load_kb

    good, bad = _smuggled_huge_int()
    results, warnings = engine_for(load_kb(cache=True)).evaluate([good, bad])
    assert results and any("kernel.module" in w and "not evaluated" in w for w in warnings)


# -- 2. secrets -----------------------------------------------------------------------------------


def test_pasted_commands_first_lines_and_reasons_are_redacted(tmp_path):
    (tmp_path / "ticket.txt").write_text(
        "$ docker run -e HF_TOKEN=hf_live_s3cret -e NCCL_DEBUG=INFO img env\n"
        "PATH=/usr/bin\nNCCL_DEBUG=INFO\n"
        "$ curl -u bob:hunter2pw https://x.example/api\n"
        "password = hunter3pw and nothing else\n")
    (tmp_path / "notes.txt").write_text("mysql -uroot -pS3cretpw db  # no format here\n")
    report = _report([tmp_path])
    out = _all_output(report)
    for secret in ("hf_live_s3cret", "hunter2pw", "hunter3pw", "S3cretpw"):
        assert secret not in out
    assert any(i.command and "HF_TOKEN=<redacted>" in i.command for i in report.inputs)
    assert "NCCL_DEBUG=INFO" in out  # not a secret: kept


def test_no_redact_keeps_them(tmp_path):
    (tmp_path / "notes.txt").write_text("mysql -uroot -pS3cretpw db  # no format here\n")
    report = _report([tmp_path], redact=False)
    assert "S3cretpw" in json_out.render(report)


def test_facts_are_redacted_at_the_source():
    doc = Document.from_text("x\n", name="t.txt")
    ctx = ParseContext(doc=doc, parser="test")
    f = ctx.add(NcclSetting, 0, name="NCCL_X", value="https://bob:pw1234@h/x", value_num=None, origin="env-dump")
    assert f is not None and f.value == "https://bob:<redacted>@h/x"


# -- 3. symbolic links ----------------------------------------------------------------------------


def test_link_out_of_the_given_folder_is_not_followed(tmp_path):
    secret = tmp_path / "outside" / "id_rsa"
    secret.parent.mkdir()
    secret.write_text("vm.swappiness = 60\n")
    ticket = tmp_path / "ticket"
    ticket.mkdir()
    (ticket / "sysctl.txt").write_text("vm.swappiness = 10\n")
    os.symlink(secret, ticket / "stolen.txt")
    os.symlink(ticket / "sysctl.txt", ticket / "inside.txt")
    res = ingest([ticket])
    by = {Path(r.path).name: r for r in res.inputs}
    assert by["stolen.txt"].status == "skipped"
    assert str(secret) in by["stolen.txt"].reason and "outside" in by["stolen.txt"].reason
    assert by["inside.txt"].status == "parsed"
    assert by["sysctl.txt"].status == "parsed"


# -- 4. a ticket is data, never configuration ----------------------------------------------------


def test_site_config_in_the_working_directory_is_ignored(tmp_path, monkeypatch):
    from clusterdx.engine.site import candidates, load_site

    (tmp_path / "clusterdx.yaml").write_text("schema: clusterdx/site/v1\nname: evil\nrules: {disable: [x]}\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CLUSTERDX_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert all(tmp_path not in p.parents or "cfg" in p.parts for p in candidates())
    assert load_site().name != "evil"
    (tmp_path / "cfg" / "clusterdx").mkdir(parents=True)
    (tmp_path / "cfg" / "clusterdx" / "site.yaml").write_text("schema: clusterdx/site/v1\nname: mine\n")
    assert load_site().name == "mine"


# -- 6. names -------------------------------------------------------------------------------------


@pytest.mark.skipif(sys.platform == "darwin", reason="APFS refuses non-UTF-8 names")
def test_invalid_utf8_and_escape_in_file_names(tmp_path):
    ticket = tmp_path / "ticket"
    ticket.mkdir()
    bad = os.fsencode(ticket) + b"/sysctl-\xff\xfe.txt"
    with open(bad, "wb") as fh:
        fh.write(b"vm.swappiness = 60\n")
    (ticket / "esc-\x1b[31mred.txt").write_text("vm.swappiness = 60\n")
    report = _report([ticket])
    out = _all_output(report)
    assert "\x1b" not in out
    assert "\\xff\\xfe" in out and "\\x1b[31mred" in out
    json.loads(json_out.render(report))
    # -o and JSON on the command line
    proc = subprocess.run([sys.executable, "-m", "clusterdx", "diagnose", str(ticket), "--format", "json",
                           "-o", str(tmp_path / "r.json")], capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    json.loads((tmp_path / "r.json").read_text())


def test_duplicate_archive_members_stay_distinct(tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for body in (b"vm.swappiness = 60\n", b"vm.swappiness = 61\n"):
            info = tarfile.TarInfo("b/sysctl.txt")
            info.size = len(body)
            tf.addfile(info, io.BytesIO(body))
    (tmp_path / "t.tar").write_bytes(buf.getvalue())
    res = ingest([tmp_path / "t.tar"])
    paths = sorted(r.path.rsplit("!/", 1)[-1] for r in res.inputs)
    assert paths == ["b/sysctl.txt", "b/sysctl.txt#2"]
    assert sorted(f.value for f in res.facts if f.fact_type == "kernel.sysctl") == ["60", "61"]


# -- 5. bounded work (the parts that are not regexes) --------------------------------------------


def test_warnings_per_input_are_capped():
    bad = "".join(f"\t Link {i}: ??? {i}\n" for i in range(300))
    text_ = "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0d3c)\n\t Link 0: 26.562 GB/s\n" + bad
    rec = ingest_documents([Document.from_text(text_, name="nvlink.txt")]).inputs[0]
    assert rec.format == "nvidia-smi-nvlink-status" and rec.status == "partial"
    assert len(rec.warnings) == MAX_WARNINGS + 1
    assert rec.warnings[-1].message == f"{300 - MAX_WARNINGS} more warnings"
    few = "".join(text_.splitlines(True)[:2 + MAX_WARNINGS])
    small = ingest_documents([Document.from_text(few, name="n.txt")]).inputs[0]
    assert len(small.warnings) == MAX_WARNINGS and not small.warnings[-1].message.endswith("more warnings")


# -- 5. bounded work: YAML aliases, KB regexes, repeated facts -----------------------------------


BOMB = ("a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{n}: &{n} [{', '.join(['*' + p] * 10)}]\n" for p, n in zip("abcde", "bcdef")))


def test_yaml_alias_bomb_is_refused(tmp_path):
    from clusterdx.engine.site import SiteConfigError, load_site
    from clusterdx.engine.yamlsafe import YamlError, load_plain, load_text

    with pytest.raises(YamlError, match="aliases expand"):
        load_text(BOMB)
    (tmp_path / "bomb.yaml").write_text(BOMB)
    with pytest.raises(YamlError, match="aliases expand"):
        load_plain(tmp_path / "bomb.yaml")
    (tmp_path / "site.yaml").write_text("schema: clusterdx/site/v1\n" + BOMB.replace("a:", "x_a:", 1))
    with pytest.raises(SiteConfigError, match="aliases expand"):
        load_site(tmp_path / "site.yaml")
    # ordinary aliases are fine, and a self-referring one is an error, not a crash
    assert load_text("a: &x [1, 2]\nb: *x\n").data == {"a": [1, 2], "b": [1, 2]}
    with pytest.raises(YamlError):
        load_text("a: &a [1, *a]\n")


@pytest.mark.parametrize("pattern, nested", [
    (r"^(a+)+$", True), (r"(\w+\.?)*x", True), (r"(?:[./][\w.:*-]+)+", True), (r"(a|b*)+", True),
    (r"mlx5_\d+", False), (r"^(?:ab|cd){2,3}$", False), (r"(a)+b*", False), (r"(?:x\d)*", False),
])
def test_kb_lint_flags_nested_quantifiers(pattern, nested):
    from clusterdx.engine.kb import nested_quantifier

    assert bool(nested_quantifier(pattern)) is nested


def test_kb_regex_sees_a_capped_value():
    from clusterdx.engine.ir import MAX_MATCH_INPUT, Test
    from clusterdx.engine.oracle import test_holds

    t = Test("value", "matches", "needle")
    assert test_holds(t, {"value": "x" * (MAX_MATCH_INPUT - 10) + "needle"})
    assert not test_holds(t, {"value": "x" * MAX_MATCH_INPUT + "needle"})


def test_repeated_identical_facts_are_kept_once_up_to_the_cap():
    from clusterdx.facts.ingest import MAX_REPEATS

    text_ = "Module                  Size  Used by\n" + "nvidia 56315904 1 nvidia_uvm\n" * (MAX_REPEATS + 50)
    res = ingest_documents([Document.from_text(text_, name="lsmod.txt")])
    mods = [f for f in res.facts if f.fact_type == "kernel.module"]
    assert len(mods) == MAX_REPEATS
    assert any("50 more identical kernel.module facts" in w.message for w in res.inputs[0].warnings)
    under = ingest_documents([Document.from_text(text_.splitlines(True)[0] + "nvidia 1 0\n" * MAX_REPEATS,
                                                 name="lsmod.txt")])
    assert len([f for f in under.facts if f.fact_type == "kernel.module"]) == MAX_REPEATS


# -- 7. everything accounted for -----------------------------------------------------------------


@pytest.mark.slow  # builds and reads archives past the decompression cap (about 9 s)
def test_members_after_a_decompression_stop_are_accounted_for(tmp_path):
    import gzip

    from clusterdx.facts.archive import Limits

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for name, body in (("a/sysctl.txt", b"vm.swappiness = 60\n"), ("b/zeros.txt", b"0" * (5 << 20)),
                           ("c/sysctl.txt", b"vm.swappiness = 61\n")):
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tf.addfile(info, io.BytesIO(body))
    (tmp_path / "t.tgz").write_bytes(gzip.compress(buf.getvalue()))
    res = ingest([tmp_path / "t.tgz"], limits=Limits(max_ratio=50))
    by = {r.path.rsplit("!/", 1)[-1]: r for r in res.inputs if "!/" in r.path}
    assert by["a/sysctl.txt"].status == "parsed"
    assert by["b/zeros.txt"].status == "skipped" and "decompression stopped" in by["b/zeros.txt"].reason
    # the member after the stop has a record of its own, not a line about "entries after"
    assert by["c/sysctl.txt"].status == "skipped" and "not read: decompression stopped" in by["c/sysctl.txt"].reason
    whole = [r for r in res.inputs if "!/" not in r.path]
    assert not any("not listed" in r.reason for r in whole)
    # without the stop, all three are read
    full = ingest([tmp_path / "t.tgz"], limits=Limits(max_ratio=100_000))
    assert sum(1 for r in full.inputs if r.path.endswith("sysctl.txt") and r.status == "parsed") == 2


def _tar_of(entries, mode: str = "w", fmt=tarfile.PAX_FORMAT) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode, format=fmt) as tf:
        for name, body in entries:
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tf.addfile(info, io.BytesIO(body))
    return buf.getvalue()


@pytest.mark.parametrize("compress", ["gz", "bz2", "xz"])
def test_every_member_after_a_stop_has_its_own_record(tmp_path, compress):
    """The audit's case: a bomb second of six members; the four after it are each listed, long
    (pax) names and duplicates included, and nothing after the stop is parsed."""
    import bz2
    import gzip
    import lzma

    from clusterdx.facts.archive import Limits

    long = "d/" + "x" * 150 + ".txt"
    entries = [("a/sysctl.txt", b"vm.swappiness = 60\n"), ("b/zeros.txt", b"0" * (8 << 20)),
               ("c/sysctl.txt", b"vm.swappiness = 61\n"), (long, b"vm.swappiness = 62\n"),
               ("c/sysctl.txt", b"vm.swappiness = 63\n"), ("e/lscpu.txt", b"CPU(s): 4\n")]
    pack = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}[compress]
    path = tmp_path / f"t.tar.{compress}"
    path.write_bytes(pack(_tar_of(entries)))
    res = ingest([path], limits=Limits(max_ratio=20))
    members = [r for r in res.inputs if "!/" in r.path]
    assert len(members) == 6, [r.path for r in members]
    assert [r.status for r in members] == ["parsed"] + ["skipped"] * 5
    assert len({r.path for r in members}) == 6  # the two c/sysctl.txt stay distinct
    assert any(r.path.endswith(long) for r in members)
    assert not any("not listed" in r.reason for r in res.inputs)


def test_duplicate_member_names_stay_distinct(tmp_path):
    path = tmp_path / "dup.tar"
    path.write_bytes(_tar_of([("x/sysctl.txt", b"vm.swappiness = 1\n"), ("x/sysctl.txt", b"vm.swappiness = 2\n"),
                              ("x/sysctl.txt", b"vm.swappiness = 3\n")]))
    res = ingest([path])
    paths = [r.path for r in res.inputs]
    assert len(paths) == 3 and len(set(paths)) == 3, paths
    assert {f.source.input for f in res.facts} == set(paths)  # each fact names the copy it came from


def test_a_raising_comparison_costs_the_comparison_only(monkeypatch):
    from clusterdx.facts import derive
    from clusterdx.facts.derive import compare

    def broken(target, baseline):
        raise ValueError("bad pair")

    monkeypatch.setattr(derive._compare, "compare", broken)
    warnings: list[str] = []
    assert compare([], [], warnings) == ([], [])
    assert "bad pair" in warnings[0]


# -- the hostile bench, small (tests/bench/bench_hostile.py runs it at scale) ----------------------


def _bench(monkeypatch, **kw):
    import argparse
    import signal

    from tests.bench import bench_hostile

    monkeypatch.setenv("CLUSTERDX_BENCH_CANARY", bench_hostile.CANARY)
    previous = signal.getsignal(signal.SIGALRM)
    try:
        opts = dict(inputs=40, batch=40, seed=7, timeout=120.0, no_redact=False) | kw
        return bench_hostile.inprocess(argparse.Namespace(**opts))
    finally:
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.slow  # the hostile bench's 40-input batch (about 20 s of CPU); the 15-input run below stays quick
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="the bench plants FIFOs and links")
def test_hostile_batch_through_the_whole_pipeline(monkeypatch):
    """A folder of mutated real outputs with planted secrets, links out of it, a FIFO, a hostile
    archive and a ticket configuration, through ingestion, rules, ranking and every explainer."""
    c = _bench(monkeypatch)
    assert c.inputs >= 40 and c.planted > 0
    assert (c.crashes, c.hangs, c.missing, c.leaks, c.outside_reads, c.ticket_config) == (0, 0, 0, 0, 0, 0), c.examples


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="the bench plants FIFOs and links")
def test_hostile_bench_counts_leaks_when_nothing_is_redacted(monkeypatch):
    c = _bench(monkeypatch, inputs=15, batch=15, seed=3, no_redact=True)
    assert c.planted > 0 and c.leaks > 0
