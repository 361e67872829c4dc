"""Small node bundles built from the format samples, and one loaded knowledge base per module."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pytest

FORMATS = Path(__file__).parents[1] / "fixtures" / "formats"

CPUPOWER = (FORMATS / "cpupower-frequency-info.txt").read_text()
NCCL_LOG = (FORMATS / "nccl-debug-info.log").read_text()
NCCL_TESTS = (FORMATS / "nccl-tests-allreduce.txt").read_text()


def scale_busbw(text: str, factor: float) -> str:
    out = []
    for line in text.splitlines(keepends=True):
        cols = line.split()
        if len(cols) >= 13 and cols[0].isdigit() and int(cols[0]) >= 1 << 26:
            for k in (7, 11):
                cols[k] = f"{float(cols[k]) * factor:.2f}"
            line = "  ".join(cols) + "\n"
        out.append(line)
    return "".join(out)


def write_node(root: Path, host: str, *, numa: int = 0, governor: str = "performance", nccl: str = "2.23.4",
               busbw: float = 1.0, peer: str = "gpu-peer", tests: bool = False) -> Path:
    """A node bundle: manifest, sysctl, cpupower, NCCL log (and nccl-tests when ``tests``)."""
    d = root / host
    d.mkdir(parents=True)
    (d / "manifest.json").write_text(json.dumps({"host": host, "scope": "host"}))
    (d / "sysctl-a.txt").write_text(f"kernel.numa_balancing = {numa}\nvm.swappiness = 60\n")
    cp = CPUPOWER.replace('The governor "powersave"', f'The governor "{governor}"')
    if governor == "performance":
        cp = cp.replace("balance_performance", "performance")
    (d / "cpupower.txt").write_text(cp)
    log = NCCL_LOG.replace("gpu-h100-017", host).replace("gpu-h100-018", peer)
    (d / "nccl.log").write_text(log.replace("NCCL version 2.23.4", f"NCCL version {nccl}"))
    if tests:
        t = NCCL_TESTS.replace("gpu-h100-017", host).replace("gpu-h100-018", peer)
        (d / "all_reduce.txt").write_text(scale_busbw(t, busbw) if busbw != 1.0 else t)
    return d


@pytest.fixture(scope="session")
def kb():
    from tests.kbshare import shipped_kb

    return shipped_kb()


@pytest.fixture
def make_node(tmp_path: Path) -> Callable[..., Path]:
    def make(host: str, **kw) -> Path:
        return write_node(tmp_path / "fleet", host, **kw)

    return make
