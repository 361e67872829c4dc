import doctest
import math

from clusterdx.facts import sniff
from clusterdx.facts.document import Document
from clusterdx.facts.formats import Format
from clusterdx.facts.sniff import COMMAND_CONFIDENCE, best_format, rank_formats


def _noparse(doc, ctx):
    return None


def fake(name, score=0.0, patterns=(), binary=False, parse=_noparse):
    """A Format whose sniffer returns ``score`` (or calls it, if callable)."""
    sniffer = score if callable(score) else (lambda doc, s=score: s)
    return Format(name=name, command=name, facts=(), sniff=sniffer, parse=parse,
                  command_patterns=tuple(patterns), binary=binary)


def doc(text="x\n", command=None, raw=None):
    d = Document.from_text(text, name="t", command=command)
    if raw is not None:
        d.raw = raw
        d.lines = []
    return d


def names(ranked):
    return [f.name for f, _ in ranked]


def test_doctests():
    assert doctest.testmod(sniff).failed == 0


def test_content_scores_sorted_best_first_ties_by_name():
    fmts = [fake("b", 0.6), fake("a", 0.6), fake("c", 0.9), fake("d", 0.1)]
    ranked = rank_formats(doc(), fmts)
    assert names(ranked) == ["c", "a", "b", "d"]
    assert [s for _, s in ranked] == [0.9, 0.6, 0.6, 0.1]


def test_command_match_beats_any_content_score():
    fmts = [fake("content", 0.99), fake("bycmd", 0.0, patterns=[r"\blscpu\b"])]
    ranked = rank_formats(doc(command="lscpu -e"), fmts)
    assert ranked[0] == (fmts[1], COMMAND_CONFIDENCE)
    assert ranked[1] == (fmts[0], 0.99)


def test_several_command_matches_tie_broken_by_content():
    fmts = [fake("x", 0.2, patterns=["numactl"]), fake("y", 0.8, patterns=["numactl"])]
    ranked = rank_formats(doc(command="numactl --hardware"), fmts)
    assert names(ranked) == ["y", "x"]
    assert all(s == COMMAND_CONFIDENCE for _, s in ranked)


def test_command_patterns_ignored_without_command():
    fmts = [fake("bycmd", 0.3, patterns=[r"lscpu"])]
    assert rank_formats(doc(), fmts)[0][1] == 0.3


def test_raising_and_bad_sniffers_are_warnings_not_crashes():
    def boom(d):
        raise KeyError("oops")

    fmts = [fake("boom", boom), fake("nan", math.nan), fake("str", "0.9"),
            fake("big", 7.0), fake("neg", -1), fake("ok", 0.7)]
    warnings: list[str] = []
    ranked = dict((f.name, s) for f, s in rank_formats(doc(), fmts, warnings))
    assert ranked == {"boom": 0.0, "nan": 0.0, "str": 0.0, "big": 1.0, "neg": 0.0, "ok": 0.7}
    assert any("boom" in w and "KeyError" in w for w in warnings)
    assert any("nan" in w for w in warnings) and any("str" in w for w in warnings)


def test_broken_command_pattern_is_a_warning():
    fmts = [fake("badre", 0.6, patterns=["("])]
    warnings: list[str] = []
    ranked = rank_formats(doc(command="anything"), fmts, warnings)
    assert ranked[0][1] == 0.6 and warnings


def test_binary_documents_only_go_to_binary_formats():
    fmts = [fake("text", 1.0), fake("bin", 0.8, binary=True)]
    assert names(rank_formats(doc(raw=b"A=1\x00B=2\x00"), fmts)) == ["bin"]
    assert names(rank_formats(doc(), fmts)) == ["text"]


def test_best_format_threshold():
    assert best_format(doc(), [fake("low", 0.49)]) == (None, 0.49)
    fmt = fake("ok", 0.5)
    assert best_format(doc(), [fmt]) == (fmt, 0.5)
    assert best_format(doc(), []) == (None, 0.0)


def test_default_is_the_registry():
    ranked = rank_formats(Document.from_text("vm.swappiness = 60\n"))
    assert ranked[0][0].name == "sysctl"
