import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.formats import all_formats
from clusterdx.facts.parsers import getconf
from tests.parsers.helpers import FORMATS, of_type, parse_text

REAL = Path(__file__).parents[1] / "fixtures" / "real"
ALL_FIXTURES = sorted(p for d in (FORMATS, REAL) for p in d.iterdir() if p.is_file())
FMT = "getconf-page-size"


def test_doctests():
    assert doctest.testmod(getconf).failed == 0


def test_real_page_size():
    ctx = parse_text(FMT, (REAL / "getconf-page-size.txt").read_text(), command="getconf PAGE_SIZE")
    [f] = of_type(ctx, "kernel.page_size")
    assert (f.bytes, f.source.line) == (4096, 1) and not ctx.warnings


def test_real_getconf_all():
    ctx = parse_text(FMT, (REAL / "getconf-all.txt").read_text(), command="getconf -a")
    [f] = of_type(ctx, "kernel.page_size")
    assert (f.bytes, f.source.line) == (4096, 44)


def test_grace_64k_with_prompt():
    ctx = parse_text(FMT, "user@gh200:~$ getconf PAGESIZE\n65536\n")
    [f] = ctx.facts
    assert (f.bytes, f.source.line) == (65536, 2)


def test_command_decides_and_odd_sizes_warn():
    assert all_formats()[FMT].matches_command("getconf PAGE_SIZE")
    assert all_formats()[FMT].matches_command("getconf PAGESIZE")
    ctx = parse_text(FMT, "12288\n", command="getconf PAGE_SIZE")
    assert ctx.facts[0].bytes == 12288 and ctx.warnings
    with pytest.raises(ParseError):
        parse_text(FMT, "getconf: Unrecognized variable `PAGE_SIZ'\n", command="getconf PAGE_SIZE")
    with pytest.raises(NotApplicable):
        parse_text(FMT, "4096\n8192\n")


@pytest.mark.parametrize("text,score", [("4096\n", 0.35), ("65536\n", 0.35), ("16384\n", 0.35),
                                        ("4097\n", 0.0), ("4096\n4096\n", 0.0), ("", 0.0)])
def test_sniff_bare_number(text, score):
    assert getconf.sniff(Document.from_text(text)) == score


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: p.name)
def test_sniff_is_specific(path):
    doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
    score = all_formats()[FMT].sniff(doc)
    if path.name == "getconf-all.txt":
        assert score >= 0.8
    elif path.name.startswith("getconf-"):
        assert score == 0.35  # a bare number: only the command can make it certain
    else:
        assert score < 0.3


def _never_raises_anything_else(text, command=None):
    try:
        parse_text(FMT, text, command=command)
    except (ParseError, NotApplicable):
        pass


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000), st.sampled_from([None, "getconf PAGE_SIZE"]))
def test_fuzz_text(text, command):
    _never_raises_anything_else(text, command)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000).map(lambda b: b.decode("latin-1")))
def test_fuzz_bytes(text):
    _never_raises_anything_else(text)
