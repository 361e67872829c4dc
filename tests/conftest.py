from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
FORMATS = FIXTURES / "formats"


@pytest.fixture
def formats_dir() -> Path:
    return FORMATS


@pytest.fixture(scope="session")
def kb():
    """The shipped knowledge base, loaded once per session (not at import, so collection stays quick)."""
    from clusterdx.engine.kb import load_kb

    return load_kb()
