"""Next probes: with the decisive file removed from a case, the probe that would produce it is
among the first three suggested.

A removal only makes a fair question when what is left still points somewhere: at least one of
the remaining inputs must be something the top cause's rules look at (the lscpu of a Grace node
whose page-size output was removed). A one-file case emptied by the removal leaves nothing but
priors, and any suggestion is then fishing; such pairs are counted, not tested.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from clusterdx.engine.cases import case_dirs
from clusterdx.engine.diagnose import collect_paths, diagnose
from clusterdx.engine.kb import load_kb
from clusterdx.engine.yamlsafe import load_plain

KB = load_kb()


STRENGTH = ["weak", "moderate", "strong", "decisive"]


def _file_of(source: str) -> str:
    return source.split("#")[0].rsplit(":", 1)[0] if ":" in source else source


def _decisive_files():
    """(case, file, fact types) for every file behind the top hypothesis' strongest evidence."""
    out = []
    for c in case_dirs():
        spec = load_plain(c / "expect.yaml") or {}
        top_id = (spec.get("expect") or {}).get("top")
        if not top_id or spec.get("corpus") == "public":
            continue
        report = diagnose(collect_paths([c / "input"]), kb=KB)
        top = next((h for h in report.hypotheses if h.id == top_id), None)
        if top is None:
            continue
        direct = [e for e in top.evidence if e.node == top.id] or top.evidence
        decisive = max(direct, key=lambda e: STRENGTH.index(e.strength))
        by_file: dict[str, set[str]] = {}
        for f in decisive.facts:
            by_file.setdefault(_file_of(f.source), set()).add(f.type)
        looked_at = set()
        for rule in KB.rules_for_node(top_id):
            looked_at |= {p.fact for p in rule.match.values()}
            looked_at |= {r if isinstance(r, str) else r.fact for r in rule.requires.facts}
        for file, types in sorted(by_file.items()):
            remaining = {f.type for e in top.evidence for f in e.facts if _file_of(f.source) != file}
            others = [i for i in report.inputs if _file_of(i.path) != file and i.status in ("parsed", "partial")]
            if not (remaining & looked_at) or not others:
                BARREN.append((c.name, file))
                continue
            out.append(pytest.param(c, file, types, id=f"{c.name}:{Path(file).name}"))
    return out


BARREN: list[tuple[str, str]] = []
PAIRS = _decisive_files()
#: the seed-pattern library (Grace VM, CPU placement, topology drift, fabric mismatch, and the
#: no-fault answers) must get it right every time; over the whole library the bar is a rate
SEED_PREFIXES = ("cp-", "gv-", "td-", "fm-", "ex-")
SEED_PAIRS = [p for p in PAIRS if p.values[0].name.startswith(SEED_PREFIXES)]
MIN_RATE = 0.65


def test_enough_fair_removals():
    assert len(PAIRS) >= 8 and len(SEED_PAIRS) >= 8, (len(PAIRS), BARREN)


def test_hit_rate_over_the_whole_library(tmp_path):
    misses = []
    for i, p in enumerate(PAIRS):
        case_dir, file, types = p.values
        if not _hit(tmp_path / str(i), case_dir, file, types)[0]:
            misses.append(p.id)
    rate = 1 - len(misses) / len(PAIRS)
    print(f"next-probe top-3 hit rate: {rate:.2f} over {len(PAIRS)} removals")
    assert rate >= MIN_RATE, (rate, misses)


def _hit(tmp_path, case_dir, file, types):
    work = tmp_path / "input"
    shutil.copytree(case_dir / "input", work)
    rel = Path(file).resolve().relative_to((case_dir / "input").resolve())
    (work / rel).unlink()
    after = diagnose(collect_paths([work]), kb=KB)
    top3 = after.next_probes[:3]
    yields = {t for p in top3 for t in _gives(p.id)}
    return bool(yields & types or yields & _derived_sources(types)), [p.id for p in top3]


def _gives(probe_id: str) -> set[str]:
    from clusterdx.facts.formats import all_formats

    probe = KB.probes[probe_id]
    fmt = all_formats().get(probe.format)
    return set(probe.yields) | set(fmt.facts if fmt else ())


@pytest.mark.parametrize("case_dir,file,types", SEED_PAIRS)
def test_probe_for_removed_decisive_file_is_in_top_three(tmp_path, case_dir, file, types):
    ok, top3 = _hit(tmp_path, case_dir, file, types)
    assert ok, f"removed {file} ({sorted(types)}); top probes {top3}"


def _derived_sources(types: set[str]) -> set[str]:
    """Derived fact types come from parsed ones: a probe yielding those counts."""
    from clusterdx.facts.derive import SOURCES

    sources = {
        "cpu.freq_shortfall": {"cpu.turbostat", "cpu.effective_freq", "cpu.info"},
        "placement.rank_binding": {"proc.affinity", "topo.gpu"},
        "env.propagation": {"env.dump", "env.var"},
        "nccl.setting": {"nccl.env", "env.var"},
        "nccl.qps_effective": {"nccl.env", "env.dump"},
        "nccltests.efficiency": {"nccltests.run"},
        "compare.metric": {"train.step_stats"},
    }
    out: set[str] = set()
    for t in types:
        out |= sources.get(t, set()) | set(SOURCES.get(t, ()))
    return out
