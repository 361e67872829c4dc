import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.formats import all_formats
from clusterdx.facts.parsers import cmdline
from tests.parsers.helpers import FORMATS, of_type, parse_fixture, parse_text

REAL = Path(__file__).parents[1] / "fixtures" / "real"
ALL_FIXTURES = sorted(p for d in (FORMATS, REAL) for p in d.iterdir() if p.is_file())
FMT = "proc-cmdline"


def params(ctx, line=None):
    return {p.name: p.value for p in of_type(ctx, "kernel.boot_param") if line is None or p.source.line == line}


def test_doctests():
    assert doctest.testmod(cmdline).failed == 0


def test_variants_file_one_cmdline_per_line():
    ctx = parse_fixture(FMT, "proc-cmdline-variants.txt")
    cmds = of_type(ctx, "kernel.cmdline")
    assert [c.source.line for c in cmds] == [2, 4, 6, 8, 10]
    assert [c.image for c in cmds] == ["vmlinuz-5.15.0-131-generic", "vmlinuz-6.8.0-1021-gcp",
                                       "vmlinuz-6.8.0-1021-nvidia-64k", "vmlinuz-6.8.0-1021-nvidia-64k",
                                       "vmlinuz-5.14.0-427.13.1.el9_4.x86_64"]
    x86 = params(ctx, 2)
    assert (x86["intel_iommu"], x86["iommu"], x86["intel_idle.max_cstate"], x86["pci"]) == ("on", "pt", "0", "realloc=off")
    assert x86["root"] == "UUID=3f1c2d9a-7b6e-4c11-9a0e-2f6b8d1e44a7" and x86["quiet"] == ""
    grace = params(ctx, 6)
    assert (grace["iommu.passthrough"], grace["iommu.strict"], grace["numa_balancing"]) == ("1", "0", "disable")
    tuned = params(ctx, 10)
    assert tuned["isolcpus"] == "managed_irq,domain,2-55,58-111" and tuned["idle"] == "poll"
    assert tuned["crashkernel"] == "1G-4G:192M,4G-64G:256M,64G-:512M"
    assert params(ctx, 4)["init_on_free"] == "1"
    assert not ctx.warnings


def test_real_cmdline_stops_at_init_arguments():
    ctx = parse_text(FMT, (REAL / "cmdline-firecracker-vm.txt").read_text())
    [cmd] = of_type(ctx, "kernel.cmdline")
    assert cmd.image == "" and "--firecracker-init" in cmd.raw
    p = params(ctx)
    assert p["mitigations"] == "auto,no_guest_host,no_guest_guest" and p["cpuidle_haltpoll.force"] == "1"
    assert p["rdinit"] == "/process_api" and "--addr" not in p and "--firecracker-init" not in p


def test_quotes_prompt_duplicates_and_crlf():
    text = '$ cat /proc/cmdline\r\nBOOT_IMAGE=(hd0,gpt2)/vmlinuz root=/dev/sda1 dyndbg="file x.c +p" iommu=pt iommu=off\r\n'
    ctx = parse_text(FMT, text)
    [cmd] = of_type(ctx, "kernel.cmdline")
    assert cmd.image == "vmlinuz" and cmd.source.line == 2
    values = [(p.name, p.value) for p in of_type(ctx, "kernel.boot_param")]
    assert ("dyndbg", "file x.c +p") in values
    # both duplicates are kept, in order: the kernel lets the last one win
    assert [v for n, v in values if n == "iommu"] == ["pt", "off"]
    assert not ctx.warnings


def test_malformed_lines_warn_and_empty_is_not_applicable():
    ctx = parse_text(FMT, "root=/dev/sda1 ro quiet\nthis is: not a cmdline!\n")
    assert len(of_type(ctx, "kernel.cmdline")) == 1 and ctx.warnings[0][0] == 2
    with pytest.raises(NotApplicable):
        parse_text(FMT, "\n## only an annotation\n")


@pytest.mark.parametrize("line", [
    # one-line ticket descriptions: every word is a valid token and some are parameter names
    "Training hangs at init with 8 A100 GPUs and NCCL 2.18.1.",
    "The root of the problem: all_reduce is quiet for minutes, then panics",
    "I set iommu=pt in the grub and rebooted",
    # a logfmt log line: name=value tokens, quoted message
    'time=2025-02-11T03:16:37.327Z level=DEBUG source=gpu.go:592 msg="Unable to load cudart library: cudart init failure: 802"',
])
def test_a_sentence_with_parameter_words_is_not_a_command_line(line):
    doc = Document.from_text(line + "\n")
    assert all_formats()[FMT].sniff(doc) == 0.0


@pytest.mark.parametrize("line", [
    "console=ttyS0",
    "BOOT_IMAGE=/boot/vmlinuz-5.15.0-91-generic root=UUID=ab-cd ro quiet splash vt.handoff=7",
    "root=/dev/sda1 ro nokaslr intel_iommu=on iommu=pt nosmt",
])
def test_short_command_lines_with_bare_flags_still_sniff(line):
    assert all_formats()[FMT].sniff(Document.from_text(line + "\n")) == 0.9


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: p.name)
def test_sniff_is_specific(path):
    doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
    score = all_formats()[FMT].sniff(doc)
    if path.name.startswith(("proc-cmdline", "cmdline-")):
        assert score >= 0.9
    else:
        assert score < 0.3


def _never_raises_anything_else(text):
    try:
        parse_text(FMT, text)
    except (ParseError, NotApplicable):
        pass


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000))
def test_fuzz_text(text):
    _never_raises_anything_else(text)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000).map(lambda b: b.decode("latin-1")))
def test_fuzz_bytes(text):
    _never_raises_anything_else(text)
