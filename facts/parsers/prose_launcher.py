"""prose_launcher - NCCL settings the user says a framework or launcher forces (part of the prose reader)

"accelerate overrides the NCCL P2P (and IB) environment variables on me when it detects RTX 3090
cards", "Ray Train sets wrong interface on NCCL", "DeepSpeed hard-codes NCCL_IB_DISABLE=1": the
job's NCCL configuration is not the user's or the site's, a tool between them and NCCL injects it
(a launcher's table of per-GPU workarounds, a framework's default). The sentence must have a
subject that is neither the user ("I", "we") nor NCCL itself, a verb of forcing (override, force,
inject, hard-code, disable; a plain "sets" only with "wrong", "its own", "a default", "on me"), and
name NCCL with a variable: written out (``NCCL_SOCKET_IFNAME``) or in words (P2P, IB, SHM, the
interface). Each variable becomes a ``reported.setting`` with ``by: launcher`` (its value, when the
words give none, is '').

A negated statement ("accelerate doesn't override p2p env variables") and advice ("you should set
NCCL_P2P_DISABLE") are not a claim about the job and are left out.

Sample input::

    When I run training through `accelerate launch`, accelerate overrides the NCCL P2P (and IB)
    environment variables on me when it detects RTX 3090 cards.

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> from clusterdx.facts.parsers import prose
    >>> doc = Document.from_text(SAMPLE.replace("\\n", " ")); ctx = ParseContext(doc, "prose"); prose.parse(doc, ctx)
    >>> sorted((s.name, s.by) for s in ctx.facts if s.fact_type == "reported.setting")
    [('NCCL_IB_DISABLE', 'launcher'), ('NCCL_P2P_DISABLE', 'launcher')]
"""

from __future__ import annotations

import re
from typing import Any

SAMPLE = ("When I run training through `accelerate launch`, accelerate overrides the NCCL P2P (and IB)\n"
          "environment variables on me when it detects RTX 3090 cards.\n")

_FORCE = r"(?:overrides?|overwrites?|overrode|forces?|forced|injects?|injected|hard-?codes?|hard-?coded|disables?|disabled)"
_SETS = r"(?:sets?|exports?|exported)"
#: subject word right before the verb (up to three words: "Ray Train", "the accelerate launcher")
_CLAIM = re.compile(rf"(?P<who>(?:[\w.`'-]{{1,40}}\s{{1,3}}){{0,2}}[\w.`'-]{{1,40}})\s{{1,3}}"
                    rf"(?:(?:unilaterally|silently|always|automatically|now|also)\s{{1,3}})?"
                    rf"(?P<verb>{_FORCE}|{_SETS})\b(?P<rest>.{{0,160}})", re.I)
#: subjects that are the user, the site or NCCL itself: their settings are not injected
_NOT_INJECTOR = re.compile(r"(?:^|\s)(?:I|we|you|they|he|she|user|users|admins?|sysadmins?|NCCL|nccl|which|that|"
                           r"who|it|this|script|one|env|environment|variable|to|and|or|not|also|then)$", re.I)
_NEGATED = re.compile(r"(?:\b(?:not|never|no longer|cannot|should|must|could|would|might|please|to|if|whether)|n't)"
                      r"\s{1,3}(?:\w+\s{1,3})?$", re.I)
#: a plain "sets" is a claim of injection only with a word that says the value is not the user's
_SETS_MARK = re.compile(r"\b(?:wrong|incorrect|bad|its own|a default|hard-?coded|on (?:me|us|you|the user)|"
                        r"behind|without asking)\b", re.I)
_NAMED = re.compile(r"\bNCCL_[A-Z0-9_]{2,60}\b")
#: the variables NCCL's documentation names for each transport or choice said in words
_WORDS = (
    (re.compile(r"\bp2p\b|\bpeer[- ]to[- ]peer\b", re.I), "NCCL_P2P_DISABLE"),
    (re.compile(r"\bIB\b|\bInfiniBand\b"), "NCCL_IB_DISABLE"),
    (re.compile(r"\bSHM\b|\bshared memory\b", re.I), "NCCL_SHM_DISABLE"),
    (re.compile(r"\b(?:network\s{1,3})?interfaces?\b|\bifname\b", re.I), "NCCL_SOCKET_IFNAME"),
)


def sentence(reader: Any, index: int, text: str) -> None:
    from clusterdx.facts.model.reported import ReportedSetting

    if "nccl" not in text.lower():
        return
    for m in _CLAIM.finditer(text):
        who = m.group("who").strip("`' ")
        if not who or _NOT_INJECTOR.search(" " + who) or _NEGATED.search(text[:m.start("verb")]):
            continue
        rest = m.group("rest")
        if "nccl" not in rest.lower():
            continue
        if re.fullmatch(_SETS, m.group("verb"), re.I) and not _SETS_MARK.search(rest):
            continue
        names = list(dict.fromkeys(_NAMED.findall(rest)))
        if not names:
            names = [name for rx, name in _WORDS if rx.search(rest)]
        for name in names:
            reader.add(ReportedSetting, index, ("injected", name), name=name, value="", state="set",
                       kind="env", by="launcher", text=" ".join(text.split())[:200])
        if names:
            return
