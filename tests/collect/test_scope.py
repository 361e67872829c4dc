"""Host, container or VM guest."""

from __future__ import annotations

from pathlib import Path

from clusterdx.facts.collect.scope import detect


def _root(tmp_path: Path, files: dict[str, str]) -> str:
    for rel, text in files.items():
        p = tmp_path / rel.lstrip("/")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return str(tmp_path)


def test_bare_metal_host(tmp_path: Path):
    root = _root(tmp_path, {"/proc/1/cgroup": "0::/init.scope\n", "/proc/cpuinfo": "flags\t: fpu vme\n"})
    env = detect({"systemd-detect-virt": b"none\n", "dmi-id": b"/sys/class/dmi/id/sys_vendor:Dell Inc.\n"},
                 root=root, environ={})
    assert (env.scope, env.container, env.vm) == ("host", None, None)


def test_container_markers_without_systemd_detect_virt(tmp_path: Path):
    root = _root(tmp_path, {"/run/.containerenv": "", "/proc/1/cgroup": "0::/\n"})
    assert detect({}, root=root, environ={}).container == "podman"
    root2 = _root(tmp_path / "k", {"/proc/1/cgroup": "0::/kubepods.slice/kubepods-pod1.slice/cri-containerd-ab.scope\n"})
    env = detect({}, root=root2, environ={})
    assert env.scope == "container" and "kubepods" in env.evidence[0]
    assert detect({}, root=str(tmp_path / "none"), environ={"KUBERNETES_SERVICE_HOST": "10.0.0.1"}).scope == "container"


def test_vm_guest_from_dmi_and_container_in_a_vm(tmp_path: Path):
    dmi = b"/sys/class/dmi/id/sys_vendor:QEMU\n/sys/class/dmi/id/product_name:Standard PC (Q35 + ICH9, 2009)\n"
    env = detect({"dmi-id": dmi}, root=str(tmp_path), environ={})
    assert (env.scope, env.vm) == ("vm-guest", "kvm")
    env = detect({"dmi-id": dmi, "systemd-detect-virt": b"docker\n"}, root=str(tmp_path), environ={})
    assert (env.scope, env.container, env.vm) == ("container", "docker", "kvm")
    ec2 = b"/sys/class/dmi/id/sys_vendor:Amazon EC2\n/sys/class/dmi/id/product_name:p5.48xlarge\n"
    assert detect({"dmi-id": ec2}, root=str(tmp_path), environ={}).vm == "amazon"
    metal = b"/sys/class/dmi/id/sys_vendor:Amazon EC2\n/sys/class/dmi/id/product_name:p5.metal\n"
    assert detect({"dmi-id": metal}, root=str(tmp_path), environ={}).scope == "host"
