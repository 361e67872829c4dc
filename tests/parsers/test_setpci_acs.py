"""setpci reads of the ACS Control register: the same pcie.acs facts the lspci ACSCtl reader gives."""

import doctest

import pytest

from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document
from clusterdx.facts.ingest import ingest
from clusterdx.facts.parsers import lspci_vvv, setpci_acs
from tests.parsers.helpers import of_type, parse_text

FMT = "setpci-acs"
LOOP = "for b in $(lspci -d 10b5: | cut -d' ' -f1); do setpci -s $b ECAP_ACS+0x6.w; done"


def test_doctests():
    assert doctest.testmod(setpci_acs).failed == 0


def test_same_bits_as_lspci_acsctl():
    """0x1d is the lspci sample's ACSCtl line: SrcValid+ ReqRedir+ CmpltRedir+ UpstreamFwd+."""
    ctx = parse_text(FMT, "001d\n", command="setpci -s 16:01.0 ECAP_ACS+6.w")
    [acs] = of_type(ctx, "pcie.acs")
    doc = Document.from_text(lspci_vvv.SAMPLE)
    from clusterdx.facts.document import ParseContext
    lctx = ParseContext(doc, "lspci-vvv")
    lspci_vvv.parse(doc, lctx)
    ref = [f for f in lctx.facts if f.fact_type == "pcie.acs"][0]
    assert (acs.ctl_enabled, acs.redirect, acs.any_enabled) == (ref.ctl_enabled, ref.redirect, ref.any_enabled)


@pytest.mark.parametrize("word,redirect,flags", [
    ("0000", False, []),
    ("0004", True, ["ReqRedir"]),           # request redirect alone
    ("0008", True, ["CmpltRedir"]),         # completion redirect alone
    ("0013", False, ["SrcValid", "TransBlk", "UpstreamFwd"]),  # ACS on, no redirect
    ("007f", True, ["SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl", "DirectTrans"]),
])
def test_redirect_bits_on_both_sides(word, redirect, flags):
    ctx = parse_text(FMT, f"{word}\n", command=LOOP)
    [acs] = of_type(ctx, "pcie.acs")
    assert (acs.redirect, acs.ctl_enabled, acs.kind) == (redirect, flags, "switch_port")
    assert acs.port_type == ("Downstream Port" if redirect else "")


def test_verbose_form_names_the_device_and_unpicked_ports_stay_unknown():
    ctx = parse_text(FMT, "0000:41:00.0 @f2a = 001d\n", command="setpci -v -s 41:00.0 f2a.w")
    [acs] = of_type(ctx, "pcie.acs")
    assert (acs.bdf, acs.kind, acs.port_type, acs.redirect) == ("0000:41:00.0", "unknown", "", True)


def test_sudo_prompt_is_skipped_and_lines_are_kept():
    ctx = parse_text(FMT, "[sudo] password for me:\n0000\n001d\n", command=LOOP)
    assert [f.source.line for f in of_type(ctx, "pcie.acs")] == [2, 3]


@pytest.mark.parametrize("command", [
    None,                                         # a bare hex word is any register's
    "setpci -s 41:00.0 COMMAND.w",                # another register
    "setpci -s 41:00.0 ECAP_ACS+6.w=0000",        # a write: not a reading
    "setpci -s 41:00.0 ECAP_ACS+4.w",             # ACS Capability, not Control
])
def test_lookalikes_are_not_acs_control(command):
    doc = Document.from_text("001d\n", command=command)
    assert setpci_acs.sniff(doc) == 0.0
    with pytest.raises(NotApplicable):
        parse_text(FMT, "001d\n", command=command)


def test_transcript_with_prompt_reaches_the_parser(tmp_path):
    text = ("[me@host ~]$ for plx in $(lspci | grep -i plx | awk '{print $1}'); do sudo setpci -s ${plx} f2a.w; done\n"
            "0000\n001d\n001d\n")
    (tmp_path / "regs.txt").write_text(text)
    got = ingest([tmp_path / "regs.txt"])
    acs = [f for f in got.facts if f.fact_type == "pcie.acs"]
    assert [a.redirect for a in acs] == [False, True, True]
