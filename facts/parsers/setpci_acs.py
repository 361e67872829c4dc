"""setpci ECAP_ACS+6.w - Command

A read of the ACS Control register with ``setpci`` (pciutils), the register NCCL's guide has
users clear: ``setpci -s <bdf> ECAP_ACS+0x6.w`` (``ECAP0d+6``, the same capability by number),
or on PLX/Broadcom PEX switches, whose ACS capability sits at 0xf24, the raw offset ``f2a.w``.
setpci prints one 16-bit hex word per device read (``-v`` prefixes the address: ``0000:03:08.0
@f2a = 001d``); a loop over several devices prints one word per line, in order and without
addresses. The word's bits are those lspci prints as ACSCtl (PCIe base spec, ACS Control):
SrcValid (0), TransBlk (1), ReqRedir (2), CmpltRedir (3), UpstreamFwd (4), EgressCtrl (5),
DirectTrans (6). Only the command line says the word is ACS Control: without one naming it, the
input is not this format (a bare hex word could be any register). A write (``=0000``) prints
nothing and yields nothing.

Yields ``pcie.acs`` per word read, the same fact the lspci ACSCtl reader gives (``cap`` empty:
setpci does not read ACSCap). ``bdf`` is the address when printed, else "". ``kind`` is
``switch_port`` when the command picks switch ports (``grep -i plx``/``pex``/``'PCI bridge'``, ``lspci
-d 10b5:`` (PLX) or ``-d 1000:`` (Broadcom, whose endpoints have no ACS to read)),
else "unknown"; such a port that reads a redirect bit is a downstream port (the redirect bits
are defined for downstream and root ports only), the others' port type stays "".

Sample input::

    for plx in $(lspci | grep -i plx | awk '{print $1}'); do sudo setpci -s ${plx} f2a.w; done
    0000
    001d
    001d

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE_OUTPUT, command=SAMPLE_COMMAND)
    >>> ctx = ParseContext(doc, "setpci-acs"); parse(doc, ctx)
    >>> [(f.kind, f.port_type, f.ctl_enabled, f.redirect) for f in ctx.facts][:2]
    [('switch_port', '', [], False), ('switch_port', 'Downstream Port', ['SrcValid', 'ReqRedir', 'CmpltRedir', 'UpstreamFwd'], True)]
    >>> doc = Document.from_text("0000:41:00.0 @f2a = 0011\\n", command="setpci -v -s 41:00.0 ECAP_ACS+6.w")
    >>> ctx = ParseContext(doc, "setpci-acs"); parse(doc, ctx)
    >>> [(f.bdf, f.kind, f.ctl_enabled, f.redirect) for f in ctx.facts]
    [('0000:41:00.0', 'unknown', ['SrcValid', 'UpstreamFwd'], False)]
    >>> sniff(Document.from_text("001d\\n0000\\n"))
    0.0
"""

from __future__ import annotations

import re

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.pcie import PcieAcs


SAMPLE_COMMAND = "for plx in $(lspci | grep -i plx | awk '{print $1}'); do sudo setpci -s ${plx} f2a.w; done"
SAMPLE_OUTPUT = "0000\n001d\n001d\n"

#: ACS Control read: ECAP_ACS+6 / ECAP0d+6 (any spelling of 6), or PLX/PEX's fixed 0xf2a; not a write
_ACS_READ = lazyre.compile(r"\bsetpci\b[^|;]*?\s(?:ECAP_ACS|ECAP0?d)\s*\+\s*(?:0x)?0*6\.w(?!\s*=)"
                       r"|\bsetpci\b[^|;]*?\s(?:0x)?f2a\.w(?!\s*=)", re.I)
#: the loop or filter picks PCIe switch ports (PLX/Broadcom PEX bridges, PLX's vendor id)
_SWITCH_PICK = lazyre.compile(r"grep\s+(?:-\w+\s+)*['\"]?[^|]*\b(?:plx|pex|PCI bridge)|lspci\s[^|]*-d\s*(?:10b5|1000):", re.I)
_WORD = lazyre.compile(r"^\s*(?:(?:([0-9a-f]{4}:)?([0-9a-f]{2}:[0-9a-f]{2}\.[0-7]))[^=]*=\s*)?([0-9a-f]{4})\s*$", re.I)
#: lines a pasted loop carries that are no output of setpci
_NOISE = lazyre.compile(r"^\s*(?:\[sudo\]|password|sudo:)", re.I)
_BITS = ("SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl", "DirectTrans")


def _is_acs_read(command: str | None) -> bool:
    return bool(command and _ACS_READ.search(command))


def sniff(doc: Document) -> float:
    # the words alone are any register's: only the command names ACS Control
    if not _is_acs_read(doc.command):
        return 0.0
    lines = [ln for ln in doc.lines[:400] if ln.strip() and not _NOISE.match(ln)]
    if lines and sum(1 for ln in lines if _WORD.match(ln)) >= 0.8 * len(lines):
        return 0.9
    return 0.0


def parse(doc: Document, ctx: ParseContext) -> None:
    if not _is_acs_read(doc.command):
        raise NotApplicable("no setpci read of ACS Control on the command line")
    switch = bool(_SWITCH_PICK.search(doc.command or ""))
    seen = 0
    for i, line in enumerate(doc.lines):
        if not line.strip() or _NOISE.match(line):
            continue
        m = _WORD.match(line)
        if m is None:
            ctx.warn(i, f"not a setpci word: {line.strip()[:40]!r}")
            continue
        word = int(m.group(3), 16)
        flags = [name for bit, name in enumerate(_BITS) if word & (1 << bit)]
        redirect = bool(word & 0b1100)
        bdf = f"{(m.group(1) or '0000:').lower()}{m.group(2).lower()}" if m.group(2) else ""
        ctx.add(PcieAcs, i, bdf=bdf, kind="switch_port" if switch else "unknown",
                port_type="Downstream Port" if switch and redirect else "",
                ctl_enabled=flags, any_enabled=bool(flags), redirect=redirect)
        seen += 1
    if not seen:
        raise ParseError("no ACS Control word", doc.lineno(0) if doc.lines else 1)


FORMATS = [
    Format(
        name="setpci-acs",
        command="setpci -s <bdf> ECAP_ACS+0x6.w",
        facts=("pcie.acs",),
        sniff=sniff,
        parse=parse,
        command_patterns=(_ACS_READ.pattern,),
        description="ACS Control register read with setpci (ECAP_ACS+6.w, PLX f2a.w): the lspci ACSCtl bits",
    )
]
