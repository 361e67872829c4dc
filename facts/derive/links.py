"""IB/RoCE port rates versus what the port should run at, a per-node link health summary, the RoCE
QoS settings NCCL runs with, and thread load of rank processes.

The rate a port should run at is, in this order: the card's maximum when the tool states it
(``ibdev2netdev -v``), else the rate most Active ports of the same link layer and card type on the
node run at (with at least three such ports), else the NIC rate of the reference system in force
(InfiniBand ports only, when a reference is selected or inferred from the GPU model).
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from clusterdx.facts.base import Fact
from clusterdx.facts.derive._common import of_type
from clusterdx.facts.model.derived_fabric import IbLinkHealth, IbRateCheck, NcclRoceConfig, ProcThreadLoad
from clusterdx.facts.reference import Selected, infer, shipped

#: physical-layer counters a healthy cable/transceiver keeps at zero
PHYS_ERRORS = ("symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors",
               "local_link_integrity_errors", "excessive_buffer_overrun_errors",
               "port_rcv_remote_physical_errors")
#: physical states saying a cable is there but the link does not come up
NO_LINK_PHYS = ("Polling", "LinkErrorRecovery", "PortConfigurationTraining")
MIN_PEERS = 3


def _ports(facts: Sequence[Fact]) -> list[Fact]:
    """One ib.port per (node, device, port), preferring the listing that states the card maximum."""
    best: dict[tuple[str, str, int], Fact] = {}
    for p in of_type(facts, "ib.port"):
        key = (p.node, p.device, p.port)
        cur = best.get(key)
        if cur is None or (cur.max_rate_gbps is None and p.max_rate_gbps is not None) \
                or (not cur.link_layer and p.link_layer):
            best[key] = p
    return list(best.values())


def _reference_gbps(facts: Sequence[Fact], reference: Selected | None) -> tuple[float, str] | None:
    ref = reference or infer(facts)
    if ref is None:
        return None
    nic = ref.system.nic
    if nic.startswith("roce"):
        return None
    link = shipped().links.get(nic)
    if link is None or not link.gbps:
        return None
    return float(link.gbps), f"reference {ref.system.id} ({nic})"


def rate_checks(facts: Sequence[Fact], reference: Selected | None = None) -> list[Fact]:
    ports = _ports(facts)
    active = [p for p in ports if p.state == "Active" and p.rate_gbps]
    groups: dict[tuple[str, str, str], list[Fact]] = {}
    for p in active:
        groups.setdefault((p.node, p.link_layer, p.ca_type), []).append(p)
    ref = None
    out: list[Fact] = []
    for p in active:
        expected, basis = None, ""
        if p.max_rate_gbps:
            expected, basis = p.max_rate_gbps, "card max"
        else:
            peers = groups[(p.node, p.link_layer, p.ca_type)]
            if len(peers) >= MIN_PEERS:
                counts = Counter(q.rate_gbps for q in peers)
                rate, n = max(counts.items(), key=lambda kv: (kv[1], kv[0]))
                if n >= 2:
                    expected, basis = rate, f"peer ports ({n} of {len(peers)} {p.link_layer or 'ports'} at {rate:g} Gb/s)"
            if expected is None and p.link_layer == "InfiniBand":
                ref = ref if ref is not None else (_reference_gbps(facts, reference) or ())
                if ref:
                    expected, basis = ref
        if not expected:
            continue
        fraction = round(p.rate_gbps / expected, 4)
        out.append(IbRateCheck(node=p.node, scope=p.scope, source=p.source, device=p.device, port=p.port,
                               link_layer=p.link_layer, rate_gbps=float(p.rate_gbps), expected_gbps=float(expected),
                               fraction=fraction, below=fraction < 0.999, basis=basis))
    return out


def link_health(facts: Sequence[Fact], checks: Sequence[Fact]) -> list[Fact]:
    out: list[Fact] = []
    ports = _ports(facts)
    nodes = sorted({p.node for p in ports})
    for node in nodes:
        mine = [p for p in ports if p.node == node]
        below = sorted(f"{c.device}/{c.port}" for c in checks if c.node == node and c.below)
        no_link = sorted(f"{p.device}/{p.port}" for p in mine
                         if p.state != "Active" and p.phys_state in NO_LINK_PHYS)
        # a NIC with no port up while NICs of the same card type on the node's fabric are up: a
        # rail that is down (a job given that NIC fails or hangs). The fabric is the link layer most
        # up ports use (a side network, such as storage Ethernet beside IB rails, is not a rail);
        # the unused second port of a device that is up is not counted
        up = [p for p in mine if p.state == "Active"]
        layers = Counter(p.link_layer for p in up)
        top = max(layers.values()) if layers else 0
        fabric = {layer for layer, n in layers.items() if n == top}
        up_devices = {p.device for p in up}
        up_cards = {(p.ca_type, p.link_layer) for p in up if p.ca_type}
        dark = sorted(f"{p.device}/{p.port}" for p in mine
                      if p.state != "Active" and p.device not in up_devices and p.ca_type
                      and (p.ca_type, p.link_layer) in up_cards and p.link_layer in fabric)
        counters = [c for c in of_type(facts, "ib.counters") if c.node == node]
        errs = sorted({f"{c.device}/{c.port or 1}" for c in counters
                       if any(getattr(c, k) for k in PHYS_ERRORS)})
        first = mine[0]
        out.append(IbLinkHealth(node=node, scope=first.scope, source=first.source, ports=len(mine),
                                ports_active=sum(1 for p in mine if p.state == "Active"),
                                ports_checked=sum(1 for c in checks if c.node == node),
                                ports_below=len(below), below_ports=below, ports_no_link=len(no_link),
                                no_link_ports=no_link, ports_dark_beside_peers=len(dark),
                                dark_beside_peers=dark, counter_ports=len({(c.device, c.port) for c in counters}),
                                ports_with_errors=len(errs), error_ports=errs))
    return out


def roce_config(facts: Sequence[Fact]) -> list[Fact]:
    nets = [n for n in of_type(facts, "nccl.net") if n.roce and n.selected]
    if not nets:
        return []
    settings = {s.name: s for s in of_type(facts, "nccl.setting")}
    seen = bool(of_type(facts, "nccl.env")) or any(
        d.complete and any(n.startswith("NCCL_") for n in d.names) for d in of_type(facts, "env.dump"))
    if not seen:
        return []
    net = nets[0]
    val = lambda name: settings[name].value if name in settings else ""  # noqa: E731
    basis = "NCCL ENV log" if of_type(facts, "nccl.env") else "complete environment dump"
    return [NcclRoceConfig(node=net.node, scope=net.scope, source=net.source, tc=val("NCCL_IB_TC"),
                           gid_index=val("NCCL_IB_GID_INDEX"), sl=val("NCCL_IB_SL"),
                           roce_version=val("NCCL_IB_ROCE_VERSION_NUM"), tc_set="NCCL_IB_TC" in settings,
                           gid_index_set="NCCL_IB_GID_INDEX" in settings, basis=basis)]


def thread_load(facts: Sequence[Fact]) -> list[Fact]:
    out: list[Fact] = []
    for s in of_type(facts, "proc.status"):
        if s.threads is None or not s.cpus:
            continue
        out.append(ProcThreadLoad(node=s.node, scope=s.scope, source=s.source, pid=s.pid, name=s.name, rank=s.rank,
                                  threads=s.threads, allowed_cpus=len(s.cpus),
                                  ratio=round(s.threads / len(s.cpus), 3)))
    return out


def derive(facts: Sequence[Fact], reference: Selected | None = None) -> list[Fact]:
    checks = rate_checks(facts, reference)
    health = link_health(facts, checks) if of_type(facts, "ib.port") else []
    return checks + health + roce_config(facts) + thread_load(facts)
