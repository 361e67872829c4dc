"""Two NCCL releases held against each other in one sentence: one works, one fails."""

import doctest

from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.parsers import prose, prose_release


def _facts(text: str) -> list:
    doc = Document.from_text(text + "\n")
    ctx = ParseContext(doc, "prose")
    try:
        prose.parse(doc, ctx)
    except NotApplicable:
        return []
    return ctx.facts


def _contrast(text: str) -> list[tuple[str, str]]:
    return sorted((f.from_version, f.to_version) for f in _facts(text)
                  if f.fact_type == "reported.change" and f.direction == "fails" and f.component == "nccl")


def test_doctests():
    assert doctest.testmod(prose_release).failed == 0


def test_works_then_fails_in_several_wordings():
    assert _contrast("I found nccl-2.17.1 can work, but v2.22.3 will core dumped.") == [("2.17.1", "2.22.3")]
    assert _contrast("Across the two nodes, NCCL 2.7.8 is good, but 2.8.4 fails every time.") == [("2.7.8", "2.8.4")]
    assert _contrast("With NCCL 2.18.3 the job runs fine while 2.19.3 hangs at init.") == [("2.18.3", "2.19.3")]
    # the failing release first, the working one after
    assert _contrast("NCCL 2.21.5 segfaults in ncclCommInitRank while 2.20.5 works.") == [("2.20.5", "2.21.5")]
    # the outcome said before the release in its clause
    assert _contrast("NCCL 2.26.2 works for us, but with 2.27.3 it crashes on the first allreduce.") == [("2.26.2", "2.27.3")]


def test_failing_bare_release_becomes_an_nccl_version():
    versions = sorted(f.version for f in _facts("I found nccl-2.17.1 can work, but v2.22.3 will core dumped.")
                      if f.fact_type == "nccl.version")
    assert versions == ["2.17.1", "2.22.3"]


def test_both_fail_or_both_work_is_no_contrast():
    assert _contrast("NCCL 2.8.4 fails every time, and 2.7.8 fails the same way.") == []
    assert _contrast("NCCL 2.18.3 works and 2.19.3 works too.") == []
    assert _contrast("NCCL 2.19.3 hangs, but 2.18.3 does not work either.") == []
    # negated outcomes: "does not work" is a failure, "did not crash" is not a working statement by itself
    assert _contrast("NCCL 2.18.3 does not work, 2.19.3 does not work.") == []


def test_other_components_and_paths_are_not_releases():
    # one NCCL release against a CUDA or torch release: not two NCCL releases
    assert _contrast("NCCL 2.18.3 works fine, but CUDA 12.1.1 fails to install.") == []
    assert _contrast("nccl 2.18.3 is good, but torch 2.1.0 crashes at import.") == []
    # no NCCL named at all: two releases of something else
    assert _contrast("Version 1.2.3 works, but 1.3.0 fails.") == []
    # a release inside a path is not a statement
    assert _contrast("NCCL 2.18.3 works, but /opt/nccl-2.19.3/lib crashes.") == []


def _from_on(text: str) -> list[str]:
    return sorted(f.to_version for f in _facts(text)
                  if f.fact_type == "reported.change" and f.component == "nccl" and f.direction == "slower"
                  and not f.from_version and f.to_version)


def test_slowdown_from_a_release_on():
    assert _from_on("# Performance drop on >= 8 nodes (32 GH200) for NCCL >= 2.20") == ["2.20"]
    assert _from_on("alltoall is slower with NCCL 2.20 and later.") == ["2.20"]
    assert _from_on("Bus bandwidth regression with nccl 2.19.3+ on our H100 nodes.") == ["2.19.3"]
    assert _from_on("Training got worse since NCCL 2.21.5.") == ["2.21.5"]


def test_a_bound_without_a_slowdown_or_on_something_else_is_not_one():
    # a requirement, not a slowdown
    assert _from_on("The plugin needs NCCL >= 2.18 to load.") == []
    # the bound is on the node count, not on NCCL
    assert _from_on("Performance drop on >= 8 nodes with NCCL 2.20.5.") == []
    # negated: no drop
    assert _from_on("There is no drop for NCCL >= 2.20 on 2 nodes.") == []
    # another component's bound
    assert _from_on("NCCL tests are slower with CUDA >= 12.4.") == []
