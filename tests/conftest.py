from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
FORMATS = FIXTURES / "formats"


@pytest.fixture
def formats_dir() -> Path:
    return FORMATS
