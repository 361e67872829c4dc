"""prose_release - two NCCL releases held against each other in one sentence (part of the prose reader)

"I found nccl-2.17.1 can work, but v2.22.3 will core dumped", "NCCL 2.7.8 is good, but 2.8.4 fails
every time", "2.18.3 runs fine while 2.19.3 hangs at init": the same hosts run two releases, one
goes right and one goes wrong, so the release is the difference. The sentence yields a
``reported.change`` (component nccl, ``from_version`` the release that works, ``to_version`` the
one that fails, direction ``fails``), and the failing release, when only its number is written
("v2.22.3" after "nccl-2.17.1"), becomes an ``nccl.version`` like the named one.

Each release takes the outcome said in its own clause (the text up to the next release or clause
break: a comma, "but", "while", "whereas", a semicolon). Both releases must be of one series
family (same major number) and at least one must be named as NCCL's, so "CUDA 12.1" or a torch
release beside them is not read. Look-alikes: both releases fail ("2.8.4 fails, and 2.7.8 fails the
same way"), a negated outcome ("2.7.8 does not work either"), or a word that puts both in one
boat ("too", "also", "either", "both") in the working release's clause give nothing.

A slowdown said to hold from one release on ("Performance drop on >= 8 nodes for NCCL >= 2.20",
"alltoall is slower with NCCL 2.20 and later", "worse since NCCL 2.19") is a ``reported.change``
with that release as ``to_version`` and no ``from_version``: the releases before it are the good
side. A bound without a slowdown word ("tested with NCCL >= 2.18") says nothing.

Sample input::

    I found nccl-2.17.1 can work, but v2.22.3 will core dumped.

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> from clusterdx.facts.parsers import prose
    >>> doc = Document.from_text(SAMPLE); ctx = ParseContext(doc, "prose"); prose.parse(doc, ctx)
    >>> [(c.component, c.from_version, c.to_version, c.direction) for c in ctx.facts if c.fact_type == "reported.change"]
    [('nccl', '2.17.1', '2.22.3', 'fails')]
    >>> sorted(v.version for v in ctx.facts if v.fact_type == "nccl.version")
    ['2.17.1', '2.22.3']
    >>> doc = Document.from_text("# Performance drop on >= 8 nodes for NCCL >= 2.20\\n")
    >>> ctx = ParseContext(doc, "prose"); prose.parse(doc, ctx)
    >>> [(c.from_version, c.to_version, c.direction) for c in ctx.facts if c.fact_type == "reported.change"]
    [('', '2.20', 'slower')]
"""

from __future__ import annotations

import re
from typing import Any

from clusterdx.facts import lazyre

SAMPLE = "I found nccl-2.17.1 can work, but v2.22.3 will core dumped.\n"

#: a release number standing alone ("v2.22.3", "2.8.4"), never inside a path, a longer token or a "+cuda" tail
_BARE = lazyre.compile(r"(?<![\w/.+=])v?(\d{1,2}\.\d{1,3}\.\d{1,3})(?![\w.]\d|[\w/])")
#: what another component's release looks like next to its name: "CUDA 12.1", "torch 2.1.0", "driver 535.104.05"
_OTHER_NAME = lazyre.compile(r"\b(?:cuda|torch|pytorch|driver|python|kernel|ubuntu|rhel|openmpi|mpi|ucx|hpcx|hpc-x|"
                             r"libfabric|efa|ofed|doca|plugin|aws-ofi-nccl|nccl-tests|container|image)[\s:=v-]{0,4}$", re.I)
_NCCL_BEFORE = lazyre.compile(r"(?:lib)?nccl2?[\s:=v-]{0,4}$", re.I)
_CLAUSE_BREAK = lazyre.compile(r"[,;]|\b(?:but|while|whereas|however|although|though|yet)\b", re.I)
_GOOD = lazyre.compile(r"\b(?:(?:can|does|do|did|still)\s{1,3})?(?:works?|worked|working|is\s{1,3}(?:good|fine|ok|okay|stable)|"
                       r"was\s{1,3}(?:good|fine|ok|okay|stable)|runs?\s{1,3}(?:fine|well|ok)|ran\s{1,3}(?:fine|well|ok)|passe[sd]|"
                       r"succeed\w{0,3}|(?:has|had|have)\s{1,3}no\s{1,3}(?:problems?|issues?))\b", re.I)
_BAD = lazyre.compile(r"\b(?:fail\w{0,3}|crash\w{0,3}|core[\s-]{0,2}dump\w{0,3}|segfault\w{0,3}|seg(?:mentation)?\s{1,3}fault\w{0,3}|"
                      r"hangs?|hung|hanging|deadlock\w{0,3}|abort\w{0,3}|errors?\s{1,3}out|breaks?|broke(?:n)?|"
                      r"(?:does|do|did)(?:n't|\s{1,3}not)\s{1,3}work|not\s{1,3}working|won't\s{1,3}work)\b", re.I)
_NEGATED = lazyre.compile(r"\b(?:not|never|no\s{1,3}longer)\s{1,3}(?:\w+\s{1,3})?$|n't\s{1,3}$", re.I)
#: "NCCL >= 2.20", "NCCL 2.20+", "NCCL 2.20 and later", "since NCCL 2.19": every release from that one on
_FROM_ON = lazyre.compile(r"(?:\bsince\s{1,3}(?:lib)?nccl2?[\s:v-]{0,4}(\d{1,2}\.\d{1,3}(?:\.\d{1,3})?)(?![\w.]\d)|"
                          r"(?<![\w/.-])(?:lib)?nccl2?\s{0,3}(?:>=|≥|=>)\s{0,3}v?(\d{1,2}\.\d{1,3}(?:\.\d{1,3})?)(?![\w.]\d)|"
                          r"(?<![\w/.-])(?:lib)?nccl2?[\s:v-]{0,4}(\d{1,2}\.\d{1,3}(?:\.\d{1,3})?)\s{0,2}"
                          r"(?:\+(?!\w)|(?:and|or)\s{1,3}(?:later|above|newer|up)\b))", re.I)
_SLOWER = lazyre.compile(r"\b(?:slower|slowdown|drop(?:s|ped)?|regress\w{0,5}|degrad\w{0,5}|lower|worse|decreas\w{0,3})\b", re.I)
_NO_SLOWDOWN = lazyre.compile(r"\b(?:no|not|never|without|nor)\s{1,3}(?:\w+\s{1,3}){0,2}$|n't\s{1,3}(?:\w+\s{1,3}){0,2}$", re.I)
_BOTH = lazyre.compile(r"\b(?:too|also|as well|either|both|neither|same\s{1,3}(?:way|error|crash|hang|problem|result))\b", re.I)


def _releases(text: str) -> list[tuple[int, int, str]]:
    """(start, end, version) of each NCCL-looking release in the sentence, in order."""
    out: list[tuple[int, int, str]] = []
    named = False
    for m in _BARE.finditer(text):
        before = text[max(0, m.start() - 24):m.start()]
        if _OTHER_NAME.search(before):
            continue
        if before.endswith("-") and not _NCCL_BEFORE.search(before):
            continue  # "cuda-12.1.1", "/opt/x-2.3.4": a name's tail, not a release said on its own
        if _NCCL_BEFORE.search(before):
            named = True
        out.append((m.start(), m.end(), m.group(1)))
    return out if named else []


def _outcome(clause: str) -> str:
    """'good', 'bad' or '' for the words of one release's clause."""
    bad = next((m for m in _BAD.finditer(clause) if not _NEGATED.search(clause[:m.start()])), None)
    good = next((m for m in _GOOD.finditer(clause) if not _NEGATED.search(clause[:m.start()])), None)
    if bad and not good:
        return "bad"
    if good and not bad and not _BOTH.search(clause):
        return "good"
    return ""


def sentence(reader: Any, index: int, text: str) -> None:
    if "nccl" not in text.lower():
        return
    _slower_from(reader, index, text)
    _contrast(reader, index, text)


def _slower_from(reader: Any, index: int, text: str) -> None:
    from clusterdx.facts.model.reported import ReportedChange

    m = _FROM_ON.search(text)
    slow = _SLOWER.search(text)
    if m is None or slow is None or _NO_SLOWDOWN.search(text[:slow.start()]):
        return
    version = next(g for g in m.groups() if g)
    reader.add(ReportedChange, index, ("release-from", version), component="nccl", from_version="",
               to_version=version, direction="slower", factor=None, percent=None, text=" ".join(text.split())[:200])


def _contrast(reader: Any, index: int, text: str) -> None:
    from clusterdx.facts.model.nccl import NcclVersion
    from clusterdx.facts.model.reported import ReportedChange, ReportedVersion
    found = _releases(text)
    if len(found) < 2 or len({v.split(".")[0] for _, _, v in found}) != 1:
        return
    states: list[tuple[str, str]] = []
    for i, (_, end, version) in enumerate(found):
        stop = found[i + 1][0] if i + 1 < len(found) else len(text)
        clause = text[end:stop]
        brk = _CLAUSE_BREAK.search(clause)
        # the outcome may also come before the release in its clause ("..., but with 2.8.4 it fails");
        # words before it with no clause break belong to the release before
        head = text[found[i - 1][1] if i else 0:found[i][0]]
        parts = _CLAUSE_BREAK.split(head)
        head = parts[-1] if i == 0 or len(parts) > 1 else ""
        states.append((version, _outcome(head + " " + (clause[:brk.start()] if brk else clause))))
    good = [v for v, s in states if s == "good"]
    bad = [v for v, s in states if s == "bad"]
    if len(good) != 1 or not bad or good[0] in bad:
        return
    cut = " ".join(text.split())[:200]
    for version in bad:
        reader.add(ReportedChange, index, ("release-contrast", good[0], version), component="nccl",
                   from_version=good[0], to_version=version, direction="fails", factor=None, percent=None,
                   text=cut)
    for version in [good[0]] + bad:
        parts = [int(p) for p in version.split(".")]
        num = parts[0] * 10000 + parts[1] * 100 + parts[2]
        reader.add(ReportedVersion, index, ("version", "nccl", version), component="nccl", version=version,
                   version_num=num, text=cut)
        reader.add(NcclVersion, index, ("nccl.version", version), version=version, version_num=num)
