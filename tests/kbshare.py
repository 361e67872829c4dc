"""One shipped knowledge base for the whole test run.

Loading it (from the run's compiled cache) and compiling its rule engine cost about half a second
each time; the session fixture ``kb`` (tests/conftest.py) and module helpers that need the KB
outside a fixture (at a helper's call, not at import: collection loads no KB) share this one.
Tests treat it as read-only: a test that changes a KB loads its own (tests/engine/test_kb.py).
"""

from __future__ import annotations

import functools


@functools.lru_cache(maxsize=1)
def shipped_kb():
    from clusterdx.engine.kb import load_kb

    return load_kb(cache=True)
