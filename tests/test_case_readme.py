"""kb/cases/README.md lists every case, and says truthfully which were written after the rules."""

from __future__ import annotations

import re
from pathlib import Path

from clusterdx.engine.cases import case_dirs
from clusterdx.engine.yamlsafe import load_plain

README = Path(__file__).parents[1] / "kb" / "cases" / "README.md"


def test_readme_lists_every_case_and_its_held_out_flag():
    text = README.read_text()
    rows = dict(re.findall(r"^\| `([\w.-]+)` \| (yes|no) \|", text, re.M))
    cases = {c.name: bool((load_plain(c / "expect.yaml") or {}).get("written_after_rules")) for c in case_dirs()}
    assert set(rows) == set(cases), sorted(set(rows) ^ set(cases))
    for name, held in cases.items():
        assert rows[name] == ("yes" if held else "no"), name
    assert sum(cases.values()) * 5 >= len(cases), "at least a fifth of the library is held out"
