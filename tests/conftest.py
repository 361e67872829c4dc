from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
FORMATS = FIXTURES / "formats"


_CACHE_ENV = "CLUSTERDX_CACHE_DIR"
_saved_cache_env: list[str | None] = []


_made: list[str] = []


def pytest_configure(config):
    """Every test, and every clusterdx process a test starts, keeps its compiled knowledge base in
    a folder of this run (never the user's cache folder), removed at the end."""
    _saved_cache_env.append(os.environ.get(_CACHE_ENV))
    _made.append(tempfile.mkdtemp(prefix="clusterdx-test-cache-"))
    os.environ[_CACHE_ENV] = _made[-1]


def pytest_unconfigure(config):
    if _made:
        shutil.rmtree(_made.pop(), ignore_errors=True)
    previous = _saved_cache_env.pop() if _saved_cache_env else None
    if previous is None:
        os.environ.pop(_CACHE_ENV, None)
    else:
        os.environ[_CACHE_ENV] = previous


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(config, items):
    """Property-based fuzz tests (hypothesis, 60 to 300 generated inputs each) are slow tests: the
    quick default run leaves them out and CI runs them with the rest (``-m "slow or not slow"``).
    Marked here, in one place, rather than in each of the hundred test functions."""
    for item in items:
        if getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
            item.add_marker(pytest.mark.slow)
    # Deselect by -m now, not only in pytest's own hook (which runs last): the hypothesis plugin's
    # hook, which runs in between, scans every loaded module for constants (about a second) when
    # any property test is still among the items, even one the default run leaves out.
    try:
        from _pytest.mark import deselect_by_mark
    except ImportError:  # a pytest without it: pytest's own hook still deselects, only later
        return
    deselect_by_mark(items, config)


@pytest.fixture
def formats_dir() -> Path:
    return FORMATS


@pytest.fixture(scope="session")
def kb():
    """The shipped knowledge base, loaded once per session (not at import, so collection stays quick),
    compiled once per test run (tests/engine/test_kb.py loads it from source)."""
    from tests.kbshare import shipped_kb

    return shipped_kb()
