"""The node's effective role, ``platform.role``, from every signal, in one place.

Rules used to work out "is this a VM guest?" themselves, from five signals in seven
combinations (``platform.virtualization``, lscpu's ``Hypervisor vendor``, a fact scoped
``vm-guest``, ...). This deriver is the one owner (an insights-core combiner): one
``platform.role`` per node, always, with ``unknown`` when no input says.

Signals, per node:

- ``platform.virtualization`` (systemd-detect-virt, virt-what, /sys/hypervisor, DMI, the x86
  ``hypervisor`` flag): its role, hypervisor and container;
- ``cpu.info`` with a ``Hypervisor vendor`` (lscpu): a VM guest;
- ``platform.dmi`` naming a virtual machine (QEMU, KVM, VMware, VirtualBox, Xen HVM, Hyper-V,
  OpenStack, Google Compute Engine): a VM guest;
- ``env.dump`` with container markers: a container;
- a fact scoped ``vm-guest``, ``container`` or ``hypervisor``: by content (a transcript command run
  through a container runtime, a container id as the prompt's host) or by the documented
  override (a manifest, ``--scope``). A folder name never is one.

Role: ``container`` when a container is seen (``guest`` still tells a container inside a VM), else
``vm-guest`` on any guest sign, else ``hypervisor`` when facts are scoped so, else ``bare-metal``
when a probe answered ``none`` (and nothing says guest), else ``unknown``. Signals that disagree
are kept in ``conflicts``.

Examples:

    >>> from clusterdx.facts.base import Scope, SourceRef
    >>> from clusterdx.facts.model.cpu import CpuInfo
    >>> src = SourceRef(input="lscpu.txt", line=9, parser="lscpu")
    >>> (r,) = derive([CpuInfo(node="vm1", source=src, arch="aarch64", hypervisor_vendor="KVM")])
    >>> (r.role, r.guest, r.hypervisor, r.signals)
    ('vm-guest', True, 'KVM', ['cpu.info: Hypervisor vendor KVM'])
    >>> (r,) = derive([CpuInfo(node="n", source=src, arch="x86_64")])
    >>> (r.role, r.guest, r.signals)
    ('unknown', None, [])
"""

from __future__ import annotations

import re
from typing import Sequence

from clusterdx.facts import lazyre
from clusterdx.facts.base import Fact, Scope
from clusterdx.facts.model.platform import PlatformRole


#: DMI product / vendor names of virtual machines (not cloud bare-metal instances)
_VM_DMI = lazyre.compile(r"\b(?:QEMU|KVM|VMware|VirtualBox|innotek|Bochs|HVM domU|Virtual Machine|OpenStack Nova|"
                     r"Google Compute Engine|Standard PC \((?:Q35|i440FX))", re.IGNORECASE)


#: when only a scope (manifest, --scope, a container command) decides the role, the fact the role
#: points at is one that describes the machine, in this order, rather than whichever came first
_IDENTITY_TYPES = ("cpu.info", "kernel.version", "dmesg.summary", "platform.dmi", "numa.topology")


def _better_scoped(current: Fact | None, f: Fact) -> Fact:
    def rank(x: Fact) -> int:
        return _IDENTITY_TYPES.index(x.fact_type) if x.fact_type in _IDENTITY_TYPES else len(_IDENTITY_TYPES)
    return f if current is None or rank(f) < rank(current) else current


def _node_role(node: str, facts: Sequence[Fact]) -> PlatformRole:
    guest: list[str] = []
    container: list[str] = []
    bare: list[str] = []
    hyper: list[str] = []
    hypervisor = ""
    in_vm_container = False
    first = facts[0]
    decider: Fact | None = None
    scoped: Fact | None = None  # the fact to point at when only a scope decided
    for f in facts:
        t = f.fact_type
        if t == "platform.virtualization":
            role, hyp, ctr = getattr(f, "role"), getattr(f, "hypervisor"), getattr(f, "container")
            if role == "guest":
                guest.append(f"{t}: guest ({hyp})")
                hypervisor = hypervisor or (hyp if hyp not in ("none", "unknown") else "")
                decider = decider or f
            elif role == "container":
                container.append(f"{t}: container ({ctr})")
                if hyp not in ("none", "unknown", ""):
                    in_vm_container = True
                    guest.append(f"{t}: container in a VM ({hyp})")
                    hypervisor = hypervisor or hyp
                decider = decider or f
            elif role == "bare-metal":
                bare.append(f"{t}: bare-metal")
        elif t == "cpu.info" and getattr(f, "hypervisor_vendor", ""):
            vendor = getattr(f, "hypervisor_vendor")
            guest.append(f"{t}: Hypervisor vendor {vendor}")
            hypervisor = hypervisor or vendor
            decider = decider or f
        elif t == "platform.dmi":
            names = " / ".join(x for x in (getattr(f, "sys_vendor"), getattr(f, "product_name")) if x)
            if names and _VM_DMI.search(names):
                guest.append(f"{t}: {names}")
                decider = decider or f
        elif t == "env.dump" and getattr(f, "container_markers", None):
            container.append(f"{t}: container markers {', '.join(getattr(f, 'container_markers')[:3])}")
            decider = decider or f
        if f.scope == Scope.vm_guest and t != "platform.virtualization":
            sig = f"scope: vm-guest ({f.source.input})"
            if sig not in guest:
                guest.append(sig)
            scoped = _better_scoped(scoped, f)
        elif f.scope == Scope.container and t != "env.dump":
            sig = f"scope: container ({f.source.input})"
            if sig not in container:
                container.append(sig)
            scoped = _better_scoped(scoped, f)
        elif f.scope == Scope.hypervisor:
            sig = f"scope: hypervisor ({f.source.input})"
            if sig not in hyper:
                hyper.append(sig)
    conflicts: list[str] = []
    if container:
        role, signals = "container", container + guest
        conflicts = hyper
    elif guest:
        role, signals = "vm-guest", guest
        conflicts = bare + hyper
    elif hyper:
        role, signals = "hypervisor", hyper
    elif bare:
        role, signals = "bare-metal", bare
    else:
        role, signals = "unknown", []
    src = (decider or scoped or first).source
    return PlatformRole(node=node, scope=Scope.unknown, source=src, role=role,
                        guest=True if guest else (False if bare or hyper else None),
                        in_container=True if container else (False if bare or guest else None),
                        hypervisor=hypervisor, signals=signals[:8], conflicts=conflicts[:8])


def derive(facts: Sequence[Fact]) -> list[Fact]:
    """One ``platform.role`` per node that has facts (unless one is already given)."""
    by_node: dict[str, list[Fact]] = {}
    given: set[str] = set()
    for f in facts:
        if f.fact_type == "platform.role":
            given.add(f.node)
        elif not f.fact_type.startswith(("fleet.", "compare.")):
            by_node.setdefault(f.node, []).append(f)
    return [_node_role(n, fs) for n, fs in by_node.items() if n not in given]
