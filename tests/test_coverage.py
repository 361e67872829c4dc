"""Coverage of an excerpt from the command line that produced it."""

import doctest
import time

import pytest

from clusterdx.facts import coverage
from clusterdx.facts.coverage import coverage_of
from clusterdx.facts.document import Document

ACSCTL = "\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-"
LNKSTA = "\t\tLnkSta:\tSpeed 32GT/s, Width x16"


def test_doctests():
    assert doctest.testmod(coverage).failed == 0


@pytest.mark.parametrize("cmd", [None, "", "lspci -vvv", "sudo lspci -vvv 2>&1 | less", "dmesg | cat",
                                 "dmesg -T | tee /tmp/d.log", "env LC_ALL=C lscpu"])
def test_whole_output(cmd):
    c = coverage_of(cmd)
    assert c.complete and c.would_show(ACSCTL) is True and c.believes_absence(LNKSTA)


@pytest.mark.parametrize("cmd,acs,lnk", [
    ("lspci -vvv | grep -i acs", True, False),
    ("lspci -vvv | grep ACS", True, False),
    ("lspci -vvv | grep acs", False, False),            # case matters without -i
    ("lspci -vvv | grep -iE 'acsctl|lnksta'", True, True),
    ("lspci -vvv | grep -e ACSCtl -e LnkSta", True, True),
    ("lspci -vvv | grep 'ACSCtl\\|LnkSta'", True, True),  # BRE alternation
    ("lspci -vvv | grep 'ACSCtl|LnkSta'", False, False),  # BRE: '|' is a literal
    ("lspci -vvv | egrep 'ACSCtl|LnkSta'", True, True),
    ("lspci -vvv | grep -F 'ACSCtl|LnkSta'", False, False),
    ("lspci -vvv | grep -v ACS", False, True),
    ("lspci -vvv | grep -w ACS", False, False),          # 'ACSCtl' is not the word 'ACS'
    ("lspci -vvv | grep --ignore-case --regexp=acsctl", True, False),
    ("lspci -vvv | sed -n '/ACSCtl/p'", True, False),
    ("lspci -vvv | grep -i acs | grep -v Cap", True, False),
])
def test_grep_filters_both_sides(cmd, acs, lnk):
    c = coverage_of(cmd)
    assert not c.complete
    assert c.would_show(ACSCTL) is acs
    assert c.would_show(LNKSTA) is lnk
    assert c.believes_absence(ACSCTL) is acs


@pytest.mark.parametrize("cmd,cut", [
    ("dmesg | head -20", "end"), ("dmesg | head -n 20", "end"), ("dmesg | tail -n 50", "start"),
    ("dmesg | sed -n '100,200p'", "both"), ("dmesg | sed -n '5,$p'", "start"), ("dmesg | grep -m 3 DMAR", "end"),
])
def test_cuts_make_absence_unknown(cmd, cut):
    c = coverage_of(cmd)
    assert (c.complete, c.cut) == (False, cut)
    assert c.would_show("DMAR: IOMMU enabled") in (None, True) and not c.believes_absence("DMAR: IOMMU enabled")


def test_a_filter_that_drops_the_line_wins_over_a_cut():
    assert coverage_of("dmesg | grep -i smmu | tail -5").would_show("DMAR: IOMMU enabled") is False


@pytest.mark.parametrize("cmd", ["dmesg | awk '/DMAR/'", "dmesg | cut -c1-80", "dmesg | grep -o iommu.*",
                                 "dmesg | grep -A2 DMAR", "dmesg | grep -f pats.txt", "dmesg | sed s/a/b/"])
def test_opaque_stages_say_nothing(cmd):
    assert coverage_of(cmd).would_show("iommu: Default domain type: Translated") is None


def test_unsafe_or_broken_patterns_are_not_evaluated():
    for pat in ["(a+)+$", "(x|xx)*y", "a.*b.*c.*d.*e", "[unclosed"]:
        c = coverage_of(f"dmesg | grep -E '{pat}'")
        assert c.would_show("a" * 5000) is None, pat
    assert coverage_of("dmesg | grep 'unbalanced").opaque


def test_long_repeated_lines_stay_fast():
    c = coverage_of("dmesg | grep -iE 'iommu|dmar|smmu.*cmdq'")
    line = "smmu " * 20000
    t = time.perf_counter()
    for _ in range(20):
        c.would_show(line)
    assert time.perf_counter() - t < 1.0


def test_document_computes_coverage_from_its_command():
    doc = Document.from_text("x\r\ny\r\n", command="lspci -vvv | grep -i acs")
    assert doc.lines == ["x", "y"] and doc.coverage.would_show(ACSCTL) is True
    assert Document.from_text("x").coverage.complete


def test_loops_keep_the_filters_of_their_body():
    c = coverage_of("for i in 0 1; do echo \"== mlx5_$i\"; ibstat mlx5_$i | grep -E 'State|Rate'; done")
    assert c.would_show("\t\tRate: 400") is True and c.would_show("\t\tBase lid: 7") is False
    c = coverage_of("for d in /sys/class/infiniband/*; do echo $d; cat $d/ports/1/rate; done")
    assert c.would_show("400 Gb/sec (4X NDR)") is True
    assert coverage_of("for d in a b; do ibstat $d | awk '{print $2}'; done").would_show("x") is None
