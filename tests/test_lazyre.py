"""clusterdx.facts.lazyre: a module-level pattern compiles on first use and then behaves as the
pattern re.compile gives."""

from __future__ import annotations

import re

from clusterdx.facts import lazyre

TEXT = "NCCL INFO Channel 00/02 : 0 1\nNCCL WARN Call to ibv_reg_mr failed\n"


def test_nothing_is_compiled_until_first_use():
    lazy = lazyre.compile(r"^NCCL (INFO|WARN)", re.M)
    assert lazy._compiled is None and lazy.pattern == r"^NCCL (INFO|WARN)"
    assert lazy.search(TEXT).group(1) == "INFO"
    assert isinstance(lazy._compiled, re.Pattern)


def test_behaves_as_the_compiled_pattern():
    src, flags = r"(?P<kind>INFO|WARN)\s+(\w+)", re.I
    lazy, plain = lazyre.compile(src, flags), re.compile(src, flags)
    assert [m.groups() for m in lazy.finditer(TEXT)] == [m.groups() for m in plain.finditer(TEXT)]
    assert lazy.findall(TEXT) == plain.findall(TEXT)
    assert lazy.sub("X", TEXT) == plain.sub("X", TEXT) and lazy.split(TEXT) == plain.split(TEXT)
    assert lazy.match("warn x").group("kind") == "warn" and lazy.fullmatch("WARN") is None
    assert (lazy.flags, lazy.groups, dict(lazy.groupindex)) == (plain.flags, plain.groups, dict(plain.groupindex))


def test_a_match_names_the_compiled_pattern_and_methods_are_its_own():
    lazy = lazyre.compile(r"WARN")
    m = lazy.search(TEXT)
    assert m.re is lazy.compiled
    # after the first use the compiled pattern's own bound method answers, not the stand-in
    assert lazy.search.__self__ is lazy.compiled
    assert re.sub(lazy.compiled, "W", "WARN") == "W"
