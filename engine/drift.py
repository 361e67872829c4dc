"""Configuration drift: which nodes differ from the majority of their peers, and in what.

A fleet is meant to be uniform. :func:`node_config` reduces one node's facts to a few comparable
strings (kernel command line and version, GPU driver, NCCL version and environment, firmware,
topology fingerprint, the NICs NCCL uses in their order); :func:`find_drift` compares them across
nodes. An item differs when a node's value is not the most common one and that value holds a
strict majority of the nodes reporting the item; with no majority every group is listed, none
is blamed.

Examples:

    >>> cfg = {f"n{i}": {"NCCL version": ("2.21.5", "x")} for i in range(4)}
    >>> cfg["n4"] = {"NCCL version": ("2.18.3", "y")}
    >>> d = find_drift(cfg)[0]
    >>> (d.what, d.majority_value, [(n, v) for n, v, _ in d.differing])
    ('NCCL version', '2.21.5', [('n4', '2.18.3')])
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from clusterdx.facts.base import Fact

#: fact types :func:`node_config` reads (the worker keeps only these)
FACT_TYPES = frozenset({
    "kernel.cmdline", "kernel.version", "gpu.summary", "gpu.device", "nccl.cuda_driver", "nccl.version",
    "nccltests.run", "nccl.env", "env.var", "env.dump", "ib.device", "ib.port", "topo.link", "nccl.net",
})

#: what -> category (rules match categories)
CATEGORIES = {
    "kernel command line": "kernel", "kernel version": "kernel", "GPU driver": "driver",
    "CUDA driver (NCCL)": "driver", "NCCL version": "nccl", "HCA firmware": "firmware",
    "GPU VBIOS": "firmware", "GPU GSP firmware": "firmware",
    "GPU/NIC topology": "topology", "NCCL NICs (in order)": "nic-order",
}
NCCL_ENV_PREFIX = "NCCL env "
UNSET = "(unset)"

#: what -> (value, source)
NodeConfig = dict[str, tuple[str, str]]

_VOLATILE_CMDLINE = re.compile(r"^(?:BOOT_IMAGE|initrd)=")


def category(what: str) -> str:
    if what.startswith(NCCL_ENV_PREFIX):
        return "nccl-env"
    return CATEGORIES.get(what, "other")


def _join(values: Sequence[str]) -> str:
    uniq = sorted({v for v in values if v})
    return " | ".join(uniq)


def _cmdline(raw: str) -> str:
    """The command line without the image path and initrd (kernel version is its own item)."""
    return " ".join(p for p in raw.split() if not _VOLATILE_CMDLINE.match(p))


def node_config(facts: Sequence[Fact]) -> NodeConfig:
    """The comparable configuration strings of one node."""
    by_type: dict[str, list] = {}
    for f in facts:
        if f.fact_type in FACT_TYPES:
            by_type.setdefault(f.fact_type, []).append(f)
    out: NodeConfig = {}

    def put(what: str, facts_: list, value: str) -> None:
        if value and facts_:
            out[what] = (value, str(facts_[0].source))

    get = by_type.get
    put("kernel command line", get("kernel.cmdline", []), _join([_cmdline(f.raw) for f in get("kernel.cmdline", [])]))
    put("kernel version", get("kernel.version", []), _join([f.release for f in get("kernel.version", [])]))
    drivers = [f for f in get("gpu.summary", []) + get("gpu.device", []) if f.driver_version]
    put("GPU driver", drivers, _join([f.driver_version for f in drivers]))
    if not drivers:
        put("CUDA driver (NCCL)", get("nccl.cuda_driver", []), _join([f.version for f in get("nccl.cuda_driver", [])]))
    versions = get("nccl.version", [])
    if versions:
        put("NCCL version", versions, _join([f.version for f in versions]))
    else:
        runs = [r for r in get("nccltests.run", []) if r.nccl_version]
        put("NCCL version", runs, _join([r.nccl_version for r in runs]))
    gpus = get("gpu.device", [])
    put("GPU VBIOS", [g for g in gpus if g.vbios], _join([g.vbios for g in gpus]))
    put("GPU GSP firmware", [g for g in gpus if g.gsp_firmware], _join([g.gsp_firmware for g in gpus]))
    fw = [f for f in get("ib.device", []) + get("ib.port", []) if f.fw_version]
    put("HCA firmware", fw, _join([f.fw_version for f in fw]))
    links = get("topo.link", [])
    if links:
        # the NIC's device name (from the legend) stands in for its matrix label, so a node whose
        # mlx5 names moved between sockets differs even though the NICn labels are the same
        text = "\n".join(sorted(f"{f.a}-{getattr(f, 'nic_device', '') or f.b}:{f.link}" for f in links))
        put("GPU/NIC topology", links, f"{len(links)} links, fingerprint "
                                       f"{hashlib.sha1(text.encode()).hexdigest()[:10]}")
    nets = [n for n in get("nccl.net", []) if n.selected and n.devices and n.transport != "Socket"]
    if nets:
        put("NCCL NICs (in order)", nets, ",".join(nets[0].devices))
    # NCCL environment: variables NCCL printed, and NCCL_* of complete environment dumps
    env: dict[str, tuple[str, str]] = {}
    for f in get("nccl.env", []):
        env.setdefault(f.name, (f.value, str(f.source)))
    if any(d.complete for d in get("env.dump", [])):
        for f in get("env.var", []):
            if f.name.startswith("NCCL_") and not f.redacted:
                env.setdefault(f.name, (f.value, str(f.source)))
        env.setdefault("", ("", ""))  # marks a complete environment: unset names mean unset
    for name, (value, src) in env.items():
        out[NCCL_ENV_PREFIX + name if name else NCCL_ENV_PREFIX.strip()] = (value, src)
    return out


@dataclass(frozen=True)
class Drift:
    what: str
    category: str
    majority_value: str
    #: nodes holding the majority value, and nodes reporting the item
    majority_nodes: int
    nodes_total: int
    #: (node, value, source) of each node that differs
    differing: list[tuple[str, str, str]] = field(default_factory=list)


def find_drift(configs: Mapping[str, NodeConfig], *, min_nodes: int = 3) -> list[Drift]:
    """Items on which some nodes differ from a strict majority, ordered by what."""
    marker = NCCL_ENV_PREFIX.strip()
    env_nodes = {n for n, c in configs.items() if marker in c}
    whats = sorted({w for c in configs.values() for w in c if w != marker})
    out: list[Drift] = []
    for what in whats:
        values: dict[str, tuple[str, str]] = {}
        for node, cfg in configs.items():
            if what in cfg:
                values[node] = cfg[what]
            elif what.startswith(NCCL_ENV_PREFIX) and node in env_nodes:
                values[node] = (UNSET, "")
        if len(values) < min_nodes:
            continue
        counts = Counter(v for v, _ in values.values())
        if len(counts) < 2:
            continue
        (top, n_top), *rest = counts.most_common()
        if n_top * 2 <= len(values) or (rest and rest[0][1] == n_top):
            continue  # no majority: nothing to blame
        differing = sorted((node, v, src) for node, (v, src) in values.items() if v != top)
        out.append(Drift(what=what, category=category(what), majority_value=top, majority_nodes=n_top,
                         nodes_total=len(values), differing=differing))
    return out


def drift_facts(drifts: Sequence[Drift]) -> dict[str, list[Fact]]:
    """``fleet.drift`` facts per differing node."""
    from clusterdx.facts.base import Scope, SourceRef
    from clusterdx.facts.model.fleet import FleetDrift

    out: dict[str, list[Fact]] = {}
    for d in drifts:
        for node, value, src in d.differing:
            out.setdefault(node, []).append(FleetDrift(
                node=node, scope=Scope.unknown, source=SourceRef(input=src or "<fleet>", parser="fleet"),
                what=d.what, category=d.category, value=value, majority_value=d.majority_value,
                nodes_differing=len(d.differing), nodes_total=d.nodes_total))
    return out
