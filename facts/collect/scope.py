"""Host, container or VM guest? Decided from the collected outputs plus a few marker files.

Container: ``systemd-detect-virt`` naming a container runtime, ``/.dockerenv`` (Docker),
``/run/.containerenv`` (Podman), the ``container`` variable (systemd-nspawn, Podman, LXC),
``KUBERNETES_SERVICE_HOST``, or PID 1's cgroup naming a runtime (docker, kubepods, containerd,
libpod, crio, lxc). VM guest: ``systemd-detect-virt`` naming a hypervisor, DMI naming one
(QEMU, VMware, Hyper-V, EC2 non-metal ...), ``/sys/hypervisor/type`` or the x86 ``hypervisor``
CPU flag. A container wins over a VM (the bundle shows what the container sees); ``vm`` still
says whether the container runs in a guest.

>>> env = detect({"systemd-detect-virt": b"kvm\\n"}, root="/nonexistent", environ={})
>>> env.scope, env.vm, env.container
('vm-guest', 'kvm', None)
>>> detect({"systemd-detect-virt": b"docker\\n"}, root="/nonexistent", environ={}).scope
'container'
>>> detect({"systemd-detect-virt": b"none\\n"}, root="/nonexistent", environ={}).scope
'host'
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Mapping

from clusterdx.facts import lazyre


CONTAINER_IDS = frozenset({"docker", "podman", "lxc", "lxc-libvirt", "systemd-nspawn", "openvz", "wsl",
                           "proot", "pouch", "rkt", "container-other"})
_CGROUP_RUNTIME = lazyre.compile(r"\b(docker|kubepods|containerd|libpod|crio|cri-containerd|lxc)\b")
_DMI_LINE = lazyre.compile(r"^/sys/class/dmi/id/(\w+):(.*)$", re.M)
_DMI_VM = (("qemu", "kvm"), ("vmware", "vmware"), ("innotek", "oracle"), ("xen", "xen"),
           ("google", "google"), ("parallels", "parallels"), ("openstack", "kvm"))


@dataclass
class Environment:
    scope: str = "host"
    container: str | None = None
    vm: str | None = None
    evidence: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"scope": self.scope, "container": self.container, "vm": self.vm, "evidence": self.evidence}


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(65536)
    except OSError:
        return ""


def _dmi_vm(vendor: str, product: str) -> str | None:
    v, p = vendor.strip().lower(), product.strip().lower()
    if v.startswith("amazon ec2"):
        return None if p.endswith(".metal") else "amazon"
    if v.startswith("microsoft") and "virtual machine" in p:
        return "microsoft"
    if "kvm" in p:
        return "kvm"
    for prefix, name in _DMI_VM:
        if v.startswith(prefix):
            return name
    return None


def detect(outputs: Mapping[str, bytes], root: str = "", environ: Mapping[str, str] | None = None) -> Environment:
    """``outputs``: collected bytes by probe name (``systemd-detect-virt``, ``dmi-id``)."""
    environ = os.environ if environ is None else environ
    env = Environment()
    virt = outputs.get("systemd-detect-virt", b"").decode(errors="replace").strip().splitlines()
    virt_id = virt[0].strip() if virt else ""
    if virt_id in CONTAINER_IDS:
        env.container = virt_id
        env.evidence.append(f"systemd-detect-virt: {virt_id}")
    elif virt_id and virt_id != "none":
        env.vm = virt_id
        env.evidence.append(f"systemd-detect-virt: {virt_id}")
    for marker, runtime in (("/.dockerenv", "docker"), ("/run/.containerenv", "podman")):
        if os.path.exists(root + marker):
            env.container = env.container or runtime
            env.evidence.append(f"{marker} exists")
    if environ.get("container"):
        env.container = env.container or environ["container"]
        env.evidence.append(f"container={environ['container']} in the environment")
    if environ.get("KUBERNETES_SERVICE_HOST"):
        env.container = env.container or "kubernetes"
        env.evidence.append("KUBERNETES_SERVICE_HOST is set")
    m = _CGROUP_RUNTIME.search(_read(root + "/proc/1/cgroup"))
    if m:
        env.container = env.container or m.group(1)
        env.evidence.append(f"/proc/1/cgroup names {m.group(1)}")
    if env.vm is None:
        dmi = {m.group(1): m.group(2) for m in _DMI_LINE.finditer(outputs.get("dmi-id", b"").decode(errors="replace"))}
        guess = _dmi_vm(dmi.get("sys_vendor", ""), dmi.get("product_name", ""))
        if guess:
            env.vm = guess
            env.evidence.append(f"DMI sys_vendor={dmi.get('sys_vendor', '').strip()!r}")
        elif _read(root + "/sys/hypervisor/type").strip():
            env.vm = _read(root + "/sys/hypervisor/type").strip()
            env.evidence.append("/sys/hypervisor/type")
        elif re.search(r"^flags\s*:.*\bhypervisor\b", _read(root + "/proc/cpuinfo"), re.M):
            env.vm = "vm-other"
            env.evidence.append("hypervisor CPU flag")
    env.scope = "container" if env.container else "vm-guest" if env.vm else "host"
    return env
