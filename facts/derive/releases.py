"""Which entries of the NCCL release table (:mod:`clusterdx.facts.releases`) bite on this node.

For every NCCL version the facts show (the NCCL log's banner, nccl-tests' header), each table
entry whose range holds it becomes an ``nccl.release_issue`` when none of its conditions is
contradicted by the facts. Conditions the facts cannot decide are listed (``applies:
possible``, or ``likely`` when the table says those conditions usually hold): rules act on
``applies`` and some on ``likely``, never on ``possible`` alone, since every old release would
otherwise be suspect on every ticket. Each condition is decided in one function here, from every fact that can tell.
A framework release-table change (``framework.release_issue``) is derived from a reported slowdown
across framework releases whose slow side is in the change's range and fast side outside it.
An entry with ``shows`` is a bug that a specific warning identifies (NIC fusion's invalid NET id):
it is derived only where a ``text.signature`` fact shows one of those warnings.
Where the ticket holds two releases against each other (a ``reported.change`` of NCCL: "2.17.1 works,
2.22.3 core dumps", "from 2.18.3 to 2.19.3 it is twice as slow", "a drop for NCCL >= 2.20" beside a
2.19.4 run), the release said to be good is not where the problem is: no entry is derived for it,
nor any entry whose range also holds it, since what both releases share cannot explain what only
one of them does; the entries left on the slow side are ``crossed``.
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

from clusterdx.facts import lazyre
from clusterdx.facts.base import Fact
from clusterdx.facts.derive._common import of_type
from clusterdx.facts.model.derived_runs import FrameworkReleaseIssue, NcclReleaseIssue
from clusterdx.facts.images import nccl_for_image
from clusterdx.facts.releases import entries_for, framework_changes_for, table
from clusterdx.facts.versions import compare_versions, version_key


#: GPU names of Grace superchips (NVLink-C2C between CPU and GPU)
_C2C = lazyre.compile(r"\b(GH200|GB200|GB300|Grace)\b", re.I)
#: multi-node NVLink systems
_MNNVL = lazyre.compile(r"\b(GB200|GB300)\b", re.I)
#: Blackwell GPUs (tool names such as "NVIDIA B200" and "NVIDIA GB200" too)
_BLACKWELL = lazyre.compile(r"\b(B200|B300|GB200|GB300|Blackwell)\b", re.I)
#: the Hopper part with 8 NVLink links, which NCCL fixed for separately (2.18.3, 2.19.3)
_H800 = lazyre.compile(r"\bH800\b", re.I)
#: GPUs without NVLink between them in common servers
_PCIE = lazyre.compile(r"\bPCIe\b|\bRTX\b|GeForce|\bL4\b|\bL40S?\b|\bA10G?\b|\bA40\b|\bT4\b|\bA16\b|\bA2\b", re.I)
_SXM = lazyre.compile(r"SXM|HBM3|\bH200\b|\bB200\b|\bB300\b|\bGB200\b|\bGB300\b|\bGH200\b|A100-SXM|H100 80GB HBM3", re.I)

Decision = bool | None


def _gpu_names(facts: Sequence[Fact]) -> list[str]:
    names = [getattr(f, "name", "") for f in of_type(facts, "gpu.device")]
    names += [getattr(f, "gpu_model", "") for f in of_type(facts, "nccltests.run")]
    names += [getattr(f, "gpu_model", "") for f in of_type(facts, "nccltests.device")]
    # what the user states counts where no tool named the GPUs: "H100 PCIe", "4x GH200"
    if not any(names):
        names += [f"{f.model} {f.form}".strip() for f in of_type(facts, "reported.inventory")
                  if getattr(f, "item", "") == "gpu"]
    return [n for n in names if n]


def _roce(facts: Sequence[Fact]) -> Decision:
    nets = [f for f in of_type(facts, "nccl.net") if getattr(f, "net", "") == "IB" or getattr(f, "transport", "") == "IB"]
    if any(f.roce for f in nets):
        return True
    layers = {str(getattr(f, "link_layer", "")).lower() for f in of_type(facts, "ib.port")}
    if "ethernet" in layers:
        return True
    if nets or "infiniband" in layers:
        return False
    stated = {str(getattr(f, "interconnect", "")).lower() for f in of_type(facts, "reported.inventory")
              if getattr(f, "item", "") == "nic"} - {""}
    if "roce" in stated:
        return True
    if stated & {"infiniband", "efa"}:
        return False
    return None


def _ib(facts: Sequence[Fact]) -> Decision:
    r = _roce(facts)
    return None if r is None else not r


def _amd(facts: Sequence[Fact]) -> Decision:
    vendors = [str(getattr(f, "vendor", "") or getattr(f, "model_name", "")) for f in of_type(facts, "cpu.info")]
    vendors = [v for v in vendors if v]
    if not vendors:
        return None
    return any("amd" in v.lower() for v in vendors)


def _by_gpu(pattern: re.Pattern[str]) -> Callable[[Sequence[Fact]], Decision]:
    def decide(facts: Sequence[Fact]) -> Decision:
        names = _gpu_names(facts)
        if not names:
            return None
        return any(pattern.search(n) for n in names)
    return decide


def _pcie(facts: Sequence[Fact]) -> Decision:
    names = _gpu_names(facts)
    if any(_PCIE.search(n) for n in names):
        return True
    if any(_SXM.search(n) for n in names):
        return False
    return None


def _mnnvl(facts: Sequence[Fact]) -> Decision:
    if of_type(facts, "nccl.mnnvl") or any(getattr(f, "mnnvl", None) for f in of_type(facts, "nccl.comm")):
        return True
    return _by_gpu(_MNNVL)(facts)


def _multi_node(facts: Sequence[Fact]) -> Decision:
    counts = [f.nnodes for f in of_type(facts, "nccl.comm") if getattr(f, "nnodes", None)]
    counts += [f.nodes for f in of_type(facts, "nccltests.run")]
    counts += [f.nodes for f in of_type(facts, "reported.workload") if getattr(f, "nodes", None)]
    # the launch line's node count (srun -N, torchrun --nnodes, the hosts mpirun is given)
    counts += [f.nodes for f in of_type(facts, "launch.command") if getattr(f, "nodes", None)]
    if not counts:
        if any(getattr(f, "where", "") == "multi-node" for f in of_type(facts, "reported.symptom")):
            return True
        return None
    return max(counts) >= 2


def _sendrecv(facts: Sequence[Fact]) -> Decision:
    colls = {f.collective for f in of_type(facts, "nccltests.run")}
    colls |= {f.collective for f in of_type(facts, "reported.workload") if getattr(f, "collective", "")}
    if colls & {"sendrecv", "alltoall", "all_to_all", "send_recv", "hypercube"}:
        return True
    return None


def _hang(facts: Sequence[Fact]) -> Decision:
    """A hang is something seen, never ruled out: a ticket silent about it leaves it undecided."""
    if any(getattr(f, "kind", "") == "hang" for f in of_type(facts, "reported.symptom")):
        return True
    return None


def _nvlink(facts: Sequence[Fact]) -> Decision:
    p = _pcie(facts)
    return None if p is None else not p


CONDITIONS: dict[str, Callable[[Sequence[Fact]], Decision]] = {
    "roce": _roce, "ib": _ib, "amd-cpu": _amd, "c2c": _by_gpu(_C2C), "mnnvl": _mnnvl,
    "blackwell": _by_gpu(_BLACKWELL), "h800": _by_gpu(_H800),
    "pcie-gpus": _pcie, "nvlink-gpus": _nvlink, "multi-node": _multi_node, "sendrecv": _sendrecv,
    "hang": _hang,
}


def _settings(facts: Sequence[Fact]) -> dict[str, str]:
    out: dict[str, str] = {}
    for f in of_type(facts, "nccl.setting") + of_type(facts, "nccl.env") + of_type(facts, "env.var"):
        name = getattr(f, "name", "")
        if name.startswith("NCCL_"):
            out.setdefault(name, str(getattr(f, "value", "")))
    return out


def _workaround_set(entry, settings: dict[str, str]) -> bool:
    """The entry's setting is in force; with a ``workaround`` value, set to that value."""
    if not entry.setting or entry.setting not in settings:
        return False
    return not entry.workaround or settings[entry.setting].strip().lower() == entry.workaround.lower()


def _shown(facts: Sequence[Fact]) -> set[str]:
    return {getattr(f, "signature", "") for f in of_type(facts, "text.signature")}


def _versions(facts: Sequence[Fact]) -> list[tuple[str, Fact]]:
    seen: dict[str, Fact] = {}
    for f in of_type(facts, "nccl.version"):
        seen.setdefault(f.version, f)
    for f in of_type(facts, "nccltests.run"):
        v = getattr(f, "nccl_version", "")
        if v and version_key(v):
            seen.setdefault(v, f)
    # a release series in the user's words ("NCCL 2.25", "v2.22"): every release of it is meant
    for f in of_type(facts, "reported.version"):
        v = str(getattr(f, "version", ""))
        if getattr(f, "component", "") == "nccl" and _SERIES.match(v):
            seen.setdefault(v, f)
    if not seen:  # only the image named: the NCCL it ships (kb/reference/ngc-containers.yaml)
        for f in of_type(facts, "launch.command") + of_type(facts, "container.spec"):
            got = nccl_for_image(getattr(f, "container_image", "") or getattr(f, "image", ""))
            if got:
                seen.setdefault(got[0], f)
    return sorted(seen.items(), key=lambda kv: version_key(kv[0]))


#: a two-part NCCL version: a release series, not one release
_SERIES = lazyre.compile(r"^\d{1,2}\.\d{1,3}$")


def _entries_for(version: str) -> list:
    """The entries that hold ``version``; for a series (2.25) those that hold all of it, from its
    first patch release to its last (a range that starts or ends inside the series is undecided,
    so it says nothing)."""
    if not _SERIES.match(version):
        return entries_for(version)
    last = {e.id for e in entries_for(version + ".99")}
    return [e for e in entries_for(version + ".1") if e.id in last]


#: conditions that name a platform: an entry gated on one of them bites on every such system that
#: runs an affected release, so with the version unknown it stays a candidate
_PLATFORM = {"c2c", "mnnvl", "blackwell"}


def _unknown_version(facts: Sequence[Fact], decided: dict[str, Decision]) -> list[Fact]:
    """No NCCL version anywhere in the ticket, on GPUs that a platform entry names (a
    predates-platform entry, or a changed default gated on the platform: GPUDirect RDMA off over
    NVLink-C2C before 2.27.3): the entry is listed as ``version-unknown``, so the rules can ask
    for the version (never a finding alone). Entries known by a warning (``shows``) or needing a
    setting are not: without the version there is nothing to tie them to."""
    out: list[Fact] = []
    gpus = [f for f in of_type(facts, "gpu.device") + of_type(facts, "nccltests.run") + of_type(facts, "gpu.summary")
            + of_type(facts, "reported.inventory")]
    if not gpus:
        return out
    src = gpus[0]
    settings = _settings(facts)
    for entry in table().entries:
        platform = entry.kind == "predates-platform" or (
            bool(_PLATFORM & set(entry.when)) and not entry.shows and not entry.requires_setting)
        if not platform or not entry.when or not all(decided[c] is True for c in entry.when):
            continue
        out.append(NcclReleaseIssue(
            node=src.node, scope=src.scope, source=src.source, provenance=src.provenance,
            version="", entry=entry.id, kind=entry.kind, cause=entry.cause, applies="version-unknown",
            unknown=["version"], setting=entry.setting, setting_set=bool(entry.setting and entry.setting in settings),
            summary=" ".join(entry.summary.split()), remedy=entry.remedy,
            fixed_in=entry.fixed_in, reference=entry.reference))
    return out


def _gpu_count(facts: Sequence[Fact]) -> int | None:
    """GPUs on the node, from any fact that counts them; None when none does."""
    counts = [int(getattr(f, "gpus", 0) or 0) for f in of_type(facts, "gpu.summary")]
    counts.append(len({getattr(f, "gpu", None) for f in of_type(facts, "gpu.device")}))
    counts += [int(f.count or 0) for f in of_type(facts, "reported.inventory")
               if getattr(f, "item", "") == "gpu" and getattr(f, "count", None)]
    best = max(counts, default=0)
    return best or None


def _framework(facts: Sequence[Fact]) -> list[Fact]:
    """The framework release-table changes a reported slowdown crossed: the slow release inside the
    entry's range and the fast one outside it, with the entry's conditions holding."""
    out: list[Fact] = []
    gpus = _gpu_count(facts)
    env = {getattr(v, "name", ""): v for v in of_type(facts, "env.var")}
    for c in of_type(facts, "reported.change"):
        if c.direction != "slower" or not c.to_version or not c.from_version:
            continue
        for entry in framework_changes_for(c.component, c.to_version):
            if framework_changes_for(c.component, c.from_version) and entry in framework_changes_for(c.component, c.from_version):
                continue  # both releases have it: not what changed
            if "multi-gpu" in entry.when and (gpus is None or gpus < 2):
                continue
            out.append(FrameworkReleaseIssue(
                node=c.node, scope=c.scope, source=c.source, provenance=c.provenance, framework=c.component,
                version=c.to_version, from_version=c.from_version, entry=entry.id, cause=entry.cause,
                setting=entry.setting, setting_set=bool(entry.setting and entry.setting in env),
                summary=" ".join(entry.summary.split()), remedy=entry.remedy, reference=entry.reference))
    return out


def derive(facts: Sequence[Fact]) -> list[Fact]:
    return _nccl(facts) + _framework(facts)


def _good_releases(facts: Sequence[Fact], seen: list[str]) -> set[str]:
    """The releases the ticket holds up as the good side of an NCCL contrast: the release it came
    from (or works with) in a change that got slower or fails, and for a slowdown said to hold from
    one release on ("for NCCL >= 2.20") every release the ticket shows below it."""
    good: set[str] = set()
    for c in of_type(facts, "reported.change"):
        if c.component != "nccl" or c.direction not in ("slower", "fails") or not c.to_version:
            continue
        if c.from_version and version_key(c.from_version) != version_key(c.to_version):
            good.add(c.from_version)
        elif not c.from_version:
            good |= {v for v in seen if (compare_versions(v, c.to_version) or 0) < 0}
    return {g for g in good if version_key(g)}


def _nccl(facts: Sequence[Fact]) -> list[Fact]:
    versions = _versions(facts)
    decided = {name: fn(facts) for name, fn in CONDITIONS.items()}
    if not versions:
        return _unknown_version(facts, decided)
    settings = _settings(facts)
    shown = _shown(facts)
    out: list[Fact] = []
    newest = versions[-1][0]
    good = _good_releases(facts, [v for v, _ in versions])
    on_good = {e.id for g in good for e in _entries_for(g)}
    for version, src in versions:
        if any(version_key(version) == version_key(g) for g in good):
            continue  # the release the user says works (or was fast)
        for entry in _entries_for(version):
            if entry.id in on_good:
                continue  # the good release has it too: not what differs between them
            if entry.kind == "predates-platform" and version != newest:
                continue  # the ticket also shows a newer library (a stale header, a second run): the newest decides
            states = [decided[c] for c in entry.when]
            if any(s is False for s in states):
                continue
            needs = entry.requires_setting
            if needs and any(settings.get(k) != v for k, v in needs.items()):
                continue
            if entry.shows and not shown & set(entry.shows):
                continue  # a bug known by its warning: without the warning the release is no evidence
            unknown = [c for c, s in zip(entry.when, states) if s is None]
            out.append(NcclReleaseIssue(
                node=src.node, scope=src.scope, source=src.source, provenance=src.provenance,
                version=version, entry=entry.id,
                kind=entry.kind, cause=entry.cause,
                applies="applies" if not unknown else "likely" if set(unknown) <= set(entry.unknown_ok) else "possible",
                unknown=unknown, setting=entry.setting, setting_set=_workaround_set(entry, settings),
                summary=" ".join(entry.summary.split()), remedy=entry.remedy, fixed_in=entry.fixed_in,
                reference=entry.reference, crossed=bool(good)))
    return out
