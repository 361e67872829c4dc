"""The shipped cases as test parameters, read once per run.

Several test modules parametrize over the case library at collection. Each used to parse every
``expect.yaml`` (about 370 files, three times over) at import; here the specs are read once, and a
public-thread case (a measure for ``kb eval``, never a pass/fail test) is told by its top-level
``corpus: public`` line without a YAML parse. A spec that the line test does not settle is parsed,
so the answer is always the YAML's own.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from clusterdx.engine.cases import case_dirs, case_spec

_PUBLIC_LINE = re.compile(r"""^corpus:[ \t]*(['"]?)public\1[ \t]*(#.*)?$""", re.M)


@functools.lru_cache(maxsize=1)
def _split() -> tuple[dict[Path, dict[str, Any]], tuple[Path, ...]]:
    library: dict[Path, dict[str, Any]] = {}
    public: list[Path] = []
    for case in case_dirs():
        if _PUBLIC_LINE.search((case / "expect.yaml").read_text(encoding="utf-8")):
            public.append(case)
            continue
        spec = case_spec(case)
        if spec.get("corpus") == "public":
            public.append(case)
        else:
            library[case] = spec
    return library, tuple(public)


def library_specs() -> dict[Path, dict[str, Any]]:
    """Case folder -> expect.yaml of every case written next to the rules (not public), sorted."""
    return _split()[0]


def library_cases() -> list[Path]:
    return list(_split()[0])


def public_cases() -> list[Path]:
    return list(_split()[1])
