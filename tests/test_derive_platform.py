"""platform.role: the node's effective role, decided once from every signal (issue 14 item 4)."""

from __future__ import annotations

import doctest
import os
from pathlib import Path

import pytest

from clusterdx.engine.ruletest import make_facts
from clusterdx.facts.base import load_fact_types

load_fact_types()
from clusterdx.facts.derive import derive_all
from clusterdx.facts.derive import platform as platform_role
from clusterdx.facts.ingest import ingest


def role(spec):
    facts = make_facts(spec, "t")
    return {r.node: r for r in platform_role.derive(facts)}


def test_doctests():
    assert doctest.testmod(platform_role).failed == 0


@pytest.mark.parametrize("spec, want, guest", [
    ({"platform.virtualization": {"role": "guest", "hypervisor": "kvm"}}, "vm-guest", True),
    ({"platform.virtualization": {"role": "bare-metal", "hypervisor": "none", "container": "none"}}, "bare-metal", False),
    ({"platform.virtualization": {"role": "container", "hypervisor": "none", "container": "docker"}}, "container", None),
    # a container inside a VM: the role is container, and guest still says VM
    ({"platform.virtualization": {"role": "container", "hypervisor": "kvm", "container": "docker"}}, "container", True),
    ({"cpu.info": {"arch": "x86_64", "hypervisor_vendor": "Microsoft"}}, "vm-guest", True),
    ({"platform.dmi": {"sys_vendor": "QEMU", "product_name": "Standard PC (Q35 + ICH9, 2009)"}}, "vm-guest", True),
    ({"env.dump": {"var_count": 3, "names": ["A"], "complete": True, "container_markers": ["container"]}}, "container", None),
    ({"kernel.sysctl": {"key": "vm.nr_hugepages", "value": "0", "scope": "hypervisor"}}, "hypervisor", False),
    ({"kernel.sysctl": {"key": "vm.nr_hugepages", "value": "0", "scope": "vm-guest"}}, "vm-guest", True),
    ({"cpu.info": {"arch": "x86_64"}}, "unknown", None),
])
def test_signals(spec, want, guest):
    (r,) = role(spec).values()
    assert (r.role, r.guest) == (want, guest)
    assert bool(r.signals) == (want != "unknown")


def test_look_alike_dmi_of_a_server_is_not_a_guest():
    (r,) = role({"platform.dmi": {"sys_vendor": "Supermicro", "product_name": "SYS-821GE-TNHR"}}).values()
    assert r.role == "unknown"
    (r,) = role({"platform.dmi": {"sys_vendor": "Amazon EC2", "product_name": "p5.48xlarge"}}).values()
    assert r.role == "unknown"  # a cloud instance type alone does not say VM or metal


def test_disagreeing_signals_are_kept():
    (r,) = role({"platform.virtualization": {"role": "bare-metal", "hypervisor": "none"},
                 "cpu.info": {"arch": "x86_64", "hypervisor_vendor": "KVM"}}).values()
    assert r.role == "vm-guest" and r.conflicts == ["platform.virtualization: bare-metal"]


def test_one_role_per_node():
    roles = role({"cpu.info": [{"node": "vm-1", "arch": "x86_64", "hypervisor_vendor": "KVM"},
                               {"node": "bm-1", "arch": "x86_64"}]})
    assert {n: r.role for n, r in roles.items()} == {"vm-1": "vm-guest", "bm-1": "unknown"}


def test_given_role_is_not_derived_again():
    facts = make_facts({"platform.role": {"role": "hypervisor"}, "cpu.info": {"arch": "x86_64", "hypervisor_vendor": "KVM"}}, "t")
    assert platform_role.derive(facts) == []


def test_folder_named_like_a_vm_is_no_signal(tmp_path):
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        Path("vm-container-test").mkdir()
        Path("vm-container-test/guest-sysctl.txt").write_text("vm.swappiness = 60\n")
        facts = derive_all(ingest(["vm-container-test"]).facts)
    finally:
        os.chdir(old)
    (r,) = [f for f in facts if f.fact_type == "platform.role"]
    assert r.role == "unknown" and r.guest is None
