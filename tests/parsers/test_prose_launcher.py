"""NCCL settings the user says a framework or launcher forces on the job."""

import doctest

from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.parsers import prose, prose_launcher


def _forced(text: str) -> list[str]:
    doc = Document.from_text(text + "\n")
    ctx = ParseContext(doc, "prose")
    try:
        prose.parse(doc, ctx)
    except NotApplicable:
        return []
    return sorted(f.name for f in ctx.facts if f.fact_type == "reported.setting" and f.by == "launcher")


def test_doctests():
    assert doctest.testmod(prose_launcher).failed == 0


def test_forced_in_words_and_by_name():
    assert _forced("# [Train] Ray Train sets wrong interface on NCCL") == ["NCCL_SOCKET_IFNAME"]
    assert _forced("DeepSpeed hard-codes NCCL_IB_DISABLE=1 in its launcher.") == ["NCCL_IB_DISABLE"]
    assert _forced("The wrapper silently forces NCCL shared memory off.") == ["NCCL_SHM_DISABLE"]


def test_not_a_claim_of_injection():
    assert _forced("accelerate doesn't override p2p env variables on you for NCCL") == []
    assert _forced("I set NCCL_P2P_DISABLE=1 and it works") == []
    assert _forced("We override NCCL_IB_HCA in our launcher") == []
    assert _forced("NCCL sets the interface to eth0") == []
    # a plain 'sets' without a word saying the value is not the user's
    assert _forced("The launcher sets NCCL_DEBUG=INFO for us") == []
    assert _forced("You should disable NCCL P2P on this box") == []
