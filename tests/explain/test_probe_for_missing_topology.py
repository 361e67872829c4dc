"""With the topology removed from an HCA-subset case, the probe that lets the NIC comparison run
(nvidia-smi topo -m, or the IB ports) is proposed; the NCCL log it already holds is not asked for."""

from __future__ import annotations

import shutil

from clusterdx.engine.diagnose import collect_paths, diagnose

from .conftest import CASES


def test_topology_probe_is_proposed_when_only_the_nccl_log_is_attached(kb, tmp_path):
    shutil.copy(CASES / "nc-hca-subset-4of8" / "input" / "nccl_rank0.log", tmp_path / "nccl_rank0.log")
    report = diagnose(collect_paths([tmp_path]), kb=kb)
    ids = [p.id for p in report.next_probes]
    assert "nvidia-smi-topo" in ids, ids
    topo = next(p for p in report.next_probes if p.id == "nvidia-smi-topo")
    assert "nccl-hca-subset-selected" in topo.bears_on
    assert "nccl-debug-log" not in ids
