import doctest
import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.parsers import virt_detect
from tests.parsers.helpers import FORMATS, of_type, parse_text

REAL = Path(__file__).parents[1] / "fixtures" / "real"


def machines() -> list[str]:
    """virt-detect.txt bundles six machines; a user pastes one, so split at the '## ---' markers."""
    text = (FORMATS / "virt-detect.txt").read_text()
    parts = re.split(r"^## --- .*\n", text, flags=re.M)[1:]
    return ["\n".join(ln for ln in p.splitlines() if not ln.startswith("## ")) for p in parts]


def virt(ctx):
    [v] = of_type(ctx, "platform.virtualization")
    return v


def test_doctests():
    assert doctest.testmod(virt_detect).failed == 0


@pytest.mark.parametrize("n, role, hypervisor, container, vendor, product", [
    (0, "guest", "kvm", "none", "QEMU", "Standard PC (Q35 + ICH9, 2009)"),
    (1, "guest", "amazon", "unknown", "Amazon EC2", "p5.48xlarge"),
    (2, "guest", "microsoft", "unknown", "Microsoft Corporation", "Virtual Machine"),
    (3, "guest", "vmware", "unknown", "VMware, Inc.", "VMware20,1"),
    (4, "guest", "kvm", "unknown", "QEMU", "KVM Virtual Machine"),
    (5, "container", "none", "docker", "Supermicro", "SYS-821GE-TNHR"),
])
def test_fixture_machines(n, role, hypervisor, container, vendor, product):
    ctx = parse_text("virt-detect", machines()[n], name=f"machine{n}")
    v = virt(ctx)
    assert (v.role, v.hypervisor, v.container) == (role, hypervisor, container)
    [dmi] = of_type(ctx, "platform.dmi")
    assert (dmi.sys_vendor, dmi.product_name) == (vendor, product)
    assert not ctx.warnings


def test_machine_lines_and_evidence():
    ctx = parse_text("virt-detect", machines()[0])
    v = virt(ctx)
    assert v.source.line == 2
    assert "systemd-detect-virt vm=kvm" in v.evidence and "hypervisor flag on 208 CPUs" in v.evidence
    dmi = of_type(ctx, "platform.dmi")[0]
    assert (dmi.bios_vendor, dmi.source.line, dmi.source.end_line) == ("SeaBIOS", 6, 8)


def test_vmware_missing_bios_vendor_is_empty():
    assert of_type(parse_text("virt-detect", machines()[3]), "platform.dmi")[0].bios_vendor == ""


def test_bare_metal_plain_none_with_exit_status():
    text = "$ systemd-detect-virt; echo \"exit=$?\"\nnone\nexit=1\n"
    v = virt(parse_text("virt-detect", text))
    assert (v.role, v.hypervisor, v.container) == ("bare-metal", "none", "none")


def test_whole_bundle_as_one_doc_warns_about_several_machines():
    text = "\n".join(machines())
    ctx = parse_text("virt-detect", text)
    assert virt(ctx).hypervisor == "kvm"
    assert any("more than one machine" in w for _, w in ctx.warnings)


@pytest.mark.parametrize("output, command, role, hypervisor, container", [
    ("kvm\n", "systemd-detect-virt", "guest", "kvm", "unknown"),
    ("kvm\n", None, "guest", "kvm", "unknown"),
    ("none\n", "systemd-detect-virt --container", "unknown", "unknown", "none"),
    ("podman\n", "systemd-detect-virt -c", "container", "unknown", "podman"),
    ("none\n", "systemd-detect-virt --vm", "bare-metal", "none", "unknown"),
    ("", "virt-what", "bare-metal", "none", "unknown"),
    ("aws\nkvm\n", "sudo virt-what", "guest", "amazon", "unknown"),
    ("xen\n", "cat /sys/hypervisor/type", "guest", "xen", "unknown"),
    ("96\n", "grep -c hypervisor /proc/cpuinfo", "guest", "unknown", "unknown"),
])
def test_single_probe_outputs(output, command, role, hypervisor, container):
    v = virt(parse_text("virt-detect", output, command=command))
    assert (v.role, v.hypervisor, v.container) == (role, hypervisor, container)


def test_root_prompt_and_grep_dmi_form():
    text = ("root@gpu-node-017:~# grep . /sys/class/dmi/id/sys_vendor /sys/class/dmi/id/product_name\n"
            "/sys/class/dmi/id/sys_vendor:Amazon EC2\n"
            "/sys/class/dmi/id/product_name:p5.48xlarge\n")
    ctx = parse_text("virt-detect", text)
    assert (virt(ctx).role, virt(ctx).hypervisor) == ("guest", "amazon")
    assert of_type(ctx, "platform.dmi")[0].product_name == "p5.48xlarge"


def test_dmi_cat_with_missing_file_keeps_order():
    text = ("cat: /sys/class/dmi/id/sys_vendor: No such file or directory\n"
            "KVM Virtual Machine\n")
    ctx = parse_text("virt-detect", text,
                     command="cat /sys/class/dmi/id/sys_vendor /sys/class/dmi/id/product_name")
    dmi = of_type(ctx, "platform.dmi")[0]
    assert (dmi.sys_vendor, dmi.product_name) == ("", "KVM Virtual Machine")
    assert virt(ctx).hypervisor == "kvm"


def test_truncated_dmi_output_warns():
    ctx = parse_text("virt-detect", "QEMU\n",
                     command="cat /sys/class/dmi/id/sys_vendor /sys/class/dmi/id/product_name")
    assert of_type(ctx, "platform.dmi")[0].sys_vendor == "QEMU"
    assert any("truncated" in w for _, w in ctx.warnings)


def test_garbage_systemd_detect_virt_output_is_parse_error():
    with pytest.raises(ParseError) as err:
        parse_text("virt-detect", "Failed to check for virtualization: Permission denied\n",
                   command="systemd-detect-virt")
    assert err.value.line == 1


def test_real_firecracker_container_in_vm():
    ctx = parse_text("virt-detect", (REAL / "virt-detect-firecracker-docker.txt").read_text())
    v = virt(ctx)
    assert (v.role, v.hypervisor, v.container) == ("container", "kvm", "docker")
    assert of_type(ctx, "platform.dmi") == []


def test_unrelated_text_is_not_applicable():
    with pytest.raises(NotApplicable):
        parse_text("virt-detect", "hello world\nthis is not a probe\n")


@pytest.mark.parametrize("path", sorted(FORMATS.iterdir()), ids=lambda p: p.name)
def test_sniff(path):
    doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
    score = virt_detect.sniff(doc)
    if path.name == "virt-detect.txt":
        assert score >= 0.9
    else:
        assert score < 0.3


def test_sniff_single_word_is_weak():
    assert virt_detect.sniff(Document.from_text("microsoft\n")) == 0.4
    assert virt_detect.sniff(Document.from_text("hello\n")) == 0.0
    assert virt_detect.sniff(Document.from_text((REAL / "virt-detect-firecracker-docker.txt").read_text())) >= 0.9


def test_command_patterns():
    fmt = virt_detect.FORMATS[0]
    assert fmt.matches_command("systemd-detect-virt --container")
    assert fmt.matches_command("cat /sys/class/dmi/id/sys_vendor")
    assert not fmt.matches_command("lscpu")


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=2000), st.binary(max_size=2000).map(lambda b: b.decode("latin-1"))),
       st.sampled_from([None, "systemd-detect-virt", "virt-what",
                        "cat /sys/class/dmi/id/sys_vendor /sys/class/dmi/id/product_name"]))
def test_never_raises_anything_else(text, command):
    try:
        parse_text("virt-detect", text, command=command)
    except (ParseError, NotApplicable):
        pass
