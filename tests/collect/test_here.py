"""Collection on this machine (no GPU, no InfiniBand), the live path of `clusterdx diagnose`."""

from __future__ import annotations

import json
import shutil
import tarfile
import time
from pathlib import Path

from clusterdx.facts.collect import CollectOptions, collect
from clusterdx.facts.collect.catalogue import DEFAULT_PROBES, default_probes
from clusterdx.facts.live import collect_documents

from tests.collect.conftest import run_cli


def test_collect_here_is_quick_and_reports_every_missing_tool(tmp_path: Path):
    out = tmp_path / "here.tar.gz"
    start = time.monotonic()
    proc = run_cli("collect", "-o", str(out))
    assert time.monotonic() - start < 30
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"wrote {out}")
    with tarfile.open(out) as tar:
        manifest = json.loads(next(tar.extractfile(m).read() for m in tar.getmembers()
                                   if m.name.endswith("/manifest.json")))
    by_name = {p["name"]: p for p in manifest["probes"]}
    assert set(by_name) == {p.name for p in default_probes()}
    for p in default_probes():
        if p.argv and shutil.which(p.argv[0]) is None:
            entry = by_name[p.name]
            if p.files and entry["status"] == "ok":
                continue  # read the files the tool would have read
            assert entry["status"] == "missing" and p.argv[0] in entry["reason"], entry
            assert f"missing  {p.name}" in proc.stderr
    assert by_name["rlimits"]["status"] == "ok" and by_name["proc-cmdline"]["status"] == "ok"


def test_default_name_is_host_and_utc_time(tmp_path: Path):
    proc = run_cli("collect", "-q", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    name = proc.stdout.strip()
    assert name.startswith("clusterdx-") and name.endswith("Z.tar.gz")
    assert (tmp_path / name).is_file()
    assert [p.name for p in tmp_path.iterdir()] == [name]  # nothing else written


def test_live_documents_carry_their_command_and_notes_explain_the_rest():
    docs, notes = collect_documents(redact=True)
    assert docs and all(d.name.startswith("live:") and d.command for d in docs)
    lscpu = next(d for d in docs if d.name == "live:commands/lscpu.txt")
    assert lscpu.command == "lscpu" and lscpu.lines
    assert all(n.path.startswith("live:") and n.reason for n in notes)
    if shutil.which("nvidia-smi") is None:
        assert any(n.path == "live:commands/nvidia-smi-topo.txt" and "not installed" in n.reason for n in notes)


def test_collect_options_probes_and_scope():
    col = collect(CollectOptions(probes=[p for p in DEFAULT_PROBES if p.name in ("lscpu", "systemd-detect-virt")]))
    assert [r.probe.name for r in col.results] == ["lscpu", "systemd-detect-virt"]
    assert col.scope in ("host", "container", "vm-guest")
    assert col.duration_s < 10
