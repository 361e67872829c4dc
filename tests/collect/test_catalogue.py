"""The probe catalogue against the knowledge base and the parsers."""

from __future__ import annotations

import doctest
import functools
import importlib

import pytest

from clusterdx.facts.collect.catalogue import (DEFAULT_PROBES, NOT_SNAPSHOT, Probe, default_probes,
                                               derived_probes, kb_coverage, snapshot_kb_probes)
from clusterdx.facts.collect.heavy import HEAVY, heavy_probes
from clusterdx.facts.collect.process import pid_probes
from clusterdx.facts.formats import all_formats

#: the probes written in the catalogue: known without importing a parser, so collection stays quick
STATIC = list(DEFAULT_PROBES) + list(pid_probes(1)) + heavy_probes(list(HEAVY), 5, "/tmp/x")


@functools.lru_cache(maxsize=1)
def _all() -> list[Probe]:
    """Every probe a bundle runs: the catalogue's and those derived from the KB (which reads the
    parsers' command patterns), computed when a test first needs them."""
    return list(default_probes()) + STATIC[len(DEFAULT_PROBES):]


def test_every_snapshot_kb_probe_is_collected_or_explained():
    rows = kb_coverage(tuple(_all()))
    assert {r["id"] for r in rows} == set(snapshot_kb_probes())
    for r in rows:
        assert r["collected_by"] or r["id"] in NOT_SNAPSHOT, f"KB probe {r['id']} has no collector"


def test_kb_probe_bindings_name_real_kb_probes():
    import yaml

    from clusterdx.facts.collect.catalogue import kb_probe_dir

    ids = {yaml.safe_load(p.read_text())["id"] for p in kb_probe_dir().glob("*.yaml")}
    assert {p.kb_probe for p in _all() if p.kb_probe} <= ids
    assert set(NOT_SNAPSHOT) <= ids


def _picks_its_parser(probe: Probe) -> None:
    fmt = all_formats()[probe.format]
    if fmt.command_patterns:
        assert fmt.matches_command(probe.command), (probe.command, fmt.command_patterns)
    others = [f.name for f in all_formats().values() if f.name != fmt.name and f.matches_command(probe.command)]
    assert not others, f"{probe.command!r} also matches {others}"


@pytest.mark.parametrize("probe", [p for p in STATIC if p.format], ids=lambda p: p.name)
def test_command_picks_the_probes_parser(probe):
    _picks_its_parser(probe)


def test_derived_probes_pick_their_parser():
    derived = [p for p in derived_probes() if p.format]
    assert derived == [p for p in _all() if p.format and p not in STATIC]
    for probe in derived:
        _picks_its_parser(probe)


def test_plain_kb_commands_are_derived_and_shell_ones_are_not(tmp_path):
    (tmp_path / "a.yaml").write_text("id: nvidia-smi-nvlink-errors-2\ncommand: nvidia-smi nvlink -e\n"
                                     "needs_root: false\ndisturbs_workload: false\nformat: nvidia-smi-nvlink-errors\n")
    (tmp_path / "b.yaml").write_text("id: piped\ncommand: dmesg | grep Xid\nneeds_root: false\n"
                                     "disturbs_workload: false\nformat: dmesg\n")
    (tmp_path / "c.yaml").write_text("id: rooted\ncommand: sudo lspci -vvv\nneeds_root: false\n"
                                     "disturbs_workload: false\nformat: lspci-vvv\n")
    (tmp_path / "d.yaml").write_text("id: heavy\ncommand: all_reduce_perf -b 8\nneeds_root: false\n"
                                     "disturbs_workload: true\nformat: nccl-tests\n")
    derived = derived_probes((), folder=tmp_path)
    assert [(p.name, p.argv, p.format) for p in derived] == [
        ("nvidia-smi-nvlink-errors-2", ("nvidia-smi", "nvlink", "-e"), "nvidia-smi-nvlink-errors")]
    assert isinstance(derived[0], Probe)


def test_bundle_file_names_are_unique():
    files = [p.file for p in _all()]
    assert len(files) == len(set(files))


def test_no_default_probe_needs_a_shell_or_root():
    for p in DEFAULT_PROBES:
        for arg in p.argv:
            assert not any(c in arg for c in "|;&<>`$"), p.name
        assert p.argv[:1] not in (("sudo",), ("perf",), ("turbostat",)), p.name


@pytest.mark.parametrize("module", ["probe", "runner", "secrets", "catalogue", "process", "heavy", "scope",
                                    "view"])
def test_doctests(module):
    mod = importlib.import_module(f"clusterdx.facts.collect.{module}")
    result = doctest.testmod(mod)
    assert result.failed == 0
