"""What the node runs on: virtualization role, DMI identity, kernel release."""

from typing import Literal

from clusterdx.facts.base import Fact


class Virtualization(Fact):
    fact_type = "platform.virtualization"
    doc = "Whether the node is a VM guest, a container, or bare metal, and which hypervisor/container runtime."
    #: 'container' wins over 'guest' when both are seen; check hypervisor for a container inside a VM
    role: Literal["guest", "bare-metal", "container", "unknown"]
    #: systemd-detect-virt VM id ('kvm', 'amazon', 'microsoft', ...), 'none', or 'unknown' when not probed
    hypervisor: str = "unknown"
    #: container id ('docker', 'podman', ...), 'none', or 'unknown' when not probed
    container: str = "unknown"
    #: the probes and answers that decided it, '; '-separated
    evidence: str = ""


class Dmi(Fact):
    fact_type = "platform.dmi"
    doc = "DMI identity from /sys/class/dmi/id: vendor, product, BIOS vendor ('' when not read)."
    sys_vendor: str = ""
    product_name: str = ""
    bios_vendor: str = ""
    board_vendor: str = ""
    product_version: str = ""


class KernelVersion(Fact):
    fact_type = "kernel.version"
    doc = "Running kernel release (from the dmesg banner, the booted image name, or a perf header)."
    release: str
    #: '64k' / '16k' / '4k' when the release names its page size (-64k flavours), else ''
    page_size_hint: str = ""
    arch: str = ""
    #: where the release was read: 'banner' (Linux version ...), 'boot_image' (BOOT_IMAGE=), 'perf_header'
    origin: str = ""


class PlatformRole(Fact):
    fact_type = "platform.role"
    doc = ("The node's effective role (bare-metal, vm-guest, container, hypervisor, unknown), decided once "
           "from every signal the inputs hold; rules read it instead of re-deriving 'is this a VM guest?'.")
    #: container wins over vm-guest (a container in a VM: ``guest`` is still True); hypervisor only
    #: from an explicit scope (manifest, --scope); bare-metal only from a probe that says 'none';
    #: unknown when no input says
    role: Literal["bare-metal", "vm-guest", "container", "hypervisor", "unknown"]
    #: the machine is a VM guest (also for a container inside a VM); None when no input says
    guest: bool | None = None
    #: the machine runs in or as a container; None when no input says
    in_container: bool | None = None
    #: the hypervisor when known ('kvm', 'KVM', 'microsoft' ...), else ''
    hypervisor: str = ""
    #: every signal that decided it, '<fact type>: <what it said>'
    signals: list[str] = []
    #: signals that disagree with the role (a 'none' probe beside a hypervisor vendor ...)
    conflicts: list[str] = []


class CloudSign(Fact):
    fact_type = "platform.cloud_sign"
    doc = "A sign that the node is a cloud provider's instance (kb/gazetteers/cloud-signs.yaml): its host name, a managed mount, a fabric device."
    provider: str
    #: the gazetteer row ('aws-ec2-ip-hostname')
    sign: str
    #: 'hostname' | 'path' | 'device'
    kind: str
    #: the plugin-only fabric the sign belongs to ('EFA'), "" when it names only the provider
    fabric: str = ""
    #: what matched (the host name, the path, the device)
    text: str = ""
