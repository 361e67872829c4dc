from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "kb" / "cases"
#: an NCCL WARN line that the NCCL parser turns into evidence, with markup in the file name
EVIL = ("gpu-h100-021:3122:3122 [0] NCCL WARN Could not open XML topology file "
        "/opt/topo/<script>alert(1)</script>|`x`.xml : No such file or directory")


@pytest.fixture(scope="session")
def kb():
    from tests.kbshare import shipped_kb

    return shipped_kb()


@pytest.fixture(scope="session")
def evil_case(tmp_path_factory) -> Path:
    """The docker case with a crafted NCCL WARN line appended to its NCCL log."""
    d = tmp_path_factory.mktemp("evil")
    src = CASES / "td-env-docker-missing" / "input"
    shutil.copytree(src, d / "input")
    log = d / "input" / "container" / "log2.log"
    log.write_text(log.read_text() + EVIL + "\n")
    return d / "input"


@pytest.fixture(scope="session")
def evil_report(kb, evil_case):
    from clusterdx.engine.diagnose import collect_paths, diagnose

    return diagnose(collect_paths([evil_case]), kb=kb)


@pytest.fixture(scope="session")
def docker_report(kb):
    from clusterdx.engine.diagnose import collect_paths, diagnose

    return diagnose(collect_paths([CASES / "td-env-docker-missing" / "input"]), kb=kb)
