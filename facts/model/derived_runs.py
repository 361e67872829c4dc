"""Comparisons between runs inside one ticket: what differs between a fast and a slow run.

A ticket often holds the fast and the slow run side by side (two NCCL versions, two node pairs,
host and pod). These facts keep them apart and say what differs, so rules can read "slower only
on pairs that include node X" or "slower only after the upgrade" instead of the two runs'
evidence cancelling out.
"""

from clusterdx.facts.base import Fact


class RunPair(Fact):
    fact_type = "compare.run_pair"
    doc = ("Two runs of the same benchmark, in one ticket or a target run against the --baseline one: the slower "
           "one's bus bandwidth as a fraction of the faster one's, and what differs between them (hosts, NCCL "
           "version, scope, rank count).")
    collective: str
    #: "ticket": two runs inside the inputs; "baseline": a target run (the slow one) against the
    #: baseline's run of the same collective on as many nodes
    against: str = "ticket"
    #: message size both busbw figures are taken at (0: each run's largest size)
    size_bytes: int = 0
    slow_busbw: float
    fast_busbw: float
    #: slow / fast, 0..1
    ratio: float
    #: the dimensions that differ: "hosts", "nccl_version", "scope", "nranks", "nodes" (against a
    #: baseline the hosts are other machines by choice, so "hosts" is not one of them)
    differs: list[str] = []
    #: how many dimensions differ (1: the comparison isolates one change)
    n_differs: int = 0
    slow_nccl_version: str = ""
    fast_nccl_version: str = ""
    #: 1 when the slow run's NCCL version is newer than the fast run's, -1 older, 0 same/unknown
    slow_is_newer_nccl: int = 0
    slow_scope: str = ""
    fast_scope: str = ""
    slow_hosts: list[str] = []
    fast_hosts: list[str] = []
    nodes: int = 0


class PairDependence(Fact):
    fact_type = "compare.node_pair_dependence"
    doc = ("Runs of one benchmark on different sets of nodes, same size and software: bandwidth depends on "
           "which nodes ran. common_slow_host is the one host in every slow run and in no fast run, or else the "
           "one host in two or more runs, all slow, whose every partner is fast elsewhere, if any.")
    collective: str
    runs: int
    slow_runs: int
    fast_runs: int
    #: slowest busbw over fastest busbw among the compared runs
    ratio: float
    common_slow_host: str = ""
    slow_host_sets: list[str] = []
    fast_host_sets: list[str] = []


class SizeFalloff(Fact):
    fact_type = "nccltests.size_falloff"
    doc = ("One nccl-tests run whose bus bandwidth peaks at a mid-size message and falls as messages grow "
           "(what a fabric without working flow control does under load).")
    run_index: int
    collective: str
    nodes: int
    peak_busbw: float
    peak_size: int
    busbw_at_max_size: float
    max_size: int
    #: busbw at the largest size / peak busbw
    ratio: float


class NcclReleaseIssue(Fact):
    fact_type = "nccl.release_issue"
    doc = ("An entry of the NCCL release table that the NCCL version in use falls in: a known regression or a "
           "changed default, the root cause it points at, and whether its conditions hold here.")
    version: str
    entry: str
    #: "regression", "changed-default" or "predates-platform"
    kind: str
    #: the root cause the entry is evidence for
    cause: str
    #: "applies": every condition holds; "likely": the undecided ones are those the table says usually
    #: hold; "possible": none fails but others could not be decided; "version-unknown": a
    #: predates-platform entry whose GPUs are there while the ticket shows no NCCL version
    applies: str
    #: conditions the facts could not decide
    unknown: list[str] = []
    #: the variable that works around the entry, and whether it is set
    setting: str = ""
    setting_set: bool = False
    summary: str = ""
    remedy: str = ""
    #: the first release without the problem: the version to move to
    fixed_in: str = ""
    reference: str = ""
    #: the ticket holds a release it calls good, outside the entry's range, against this one: the
    #: entry is among what the two releases differ by
    crossed: bool = False


class FrameworkReleaseIssue(Fact):
    fact_type = "framework.release_issue"
    doc = ("A change of the framework release table (kb/reference/framework-releases.yaml) that a reported "
           "slowdown crossed: the slow release falls in the entry's range, the fast one outside it.")
    framework: str
    #: the slow release and the fast one the ticket holds it against
    version: str
    from_version: str
    entry: str
    #: the root cause the entry is evidence for
    cause: str
    #: the variable that works around the entry, and whether the ticket shows it set
    setting: str = ""
    setting_set: bool = False
    summary: str = ""
    remedy: str = ""
    reference: str = ""
