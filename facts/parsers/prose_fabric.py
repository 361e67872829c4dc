"""prose_fabric - an RDMA timeout the ticket says came a while into a run (part of the prose reader)

NCCL's "error 12" is the InfiniBand work-completion status 12, transport retries exceeded: the
peer's NIC stopped acknowledging. When it comes right away the two NICs cannot talk at all (a RoCE
GID, a route, a rail); when it comes after the job ran fine for a while, the connection itself went
bad, a link that flaps or degrades (sjeaugey in NVIDIA/nccl#426 and #902). Users often quote only
the number: "the training hangs at some point with an error 12 message", "after about 5 hours every
rank reports NCCL error 12".

A sentence that names error (or status) 12 and says it came a while into the run ("at some
point", "after 5 hours", "in the middle of training", "randomly") becomes a ``reported.symptom``
``retry-exceeded-mid-run``. Left out: a sentence that says it came from the start ("right at the
first allreduce", "immediately", "at init"), errno 12 of a memory registration ("ibv_reg_mr ...
Cannot allocate memory"), CUDA error 12, and a pasted NCCL WARN line (the nccl-debug reader's).

Sample input::

    When I run multi-node training, the training hangs at some point with an error 12 message.
    The job hangs right at the first allreduce and NCCL prints error 12.

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> from clusterdx.facts.parsers import prose
    >>> doc = Document.from_text(SAMPLE); ctx = ParseContext(doc, "prose"); prose.parse(doc, ctx)
    >>> [s.kind for s in ctx.facts if s.fact_type == "reported.symptom" and s.kind == "retry-exceeded-mid-run"]
    ['retry-exceeded-mid-run']
"""

from __future__ import annotations

import re
from typing import Any

from clusterdx.facts import lazyre

SAMPLE = """\
When I run multi-node training, the training hangs at some point with an error 12 message.
The job hangs right at the first allreduce and NCCL prints error 12.
"""

#: the status as users quote it: "error 12", "status 12", "error code 12", "err=12"; not errno 12,
#: CUDA error 12 or a vendor error (129 is no 12)
_STATUS_12 = lazyre.compile(r"(?<!errno )(?<!cuda )(?<!vendor )\b(?:error|status|err)(?:\s{1,3}code)?\s{0,2}[=:#]?\s{0,2}12\b(?![.,]\d)", re.I)
#: errno 12 of a registration or allocation (ENOMEM): the memlock limit, not the fabric
_NO_MEMORY = lazyre.compile(r"\b(?:ENOMEM|cannot\s{1,3}allocate|out\s{1,3}of\s{1,3}memory|ibv_reg_mr|reg_mr|memlock|alloc\w{0,6})\b", re.I)
#: a pasted log line: the nccl-debug reader reads it with its fields
_LOG_LINE = lazyre.compile(r"\bNCCL\s{1,2}WARN\b|\bnet_ib\.cc\b|\bGot\s{1,3}completion\b", re.I)
#: a while into a run that worked
_MID_RUN = lazyre.compile(
    r"\b(?:at\s{1,3}some\s{1,3}point|"
    r"after\s{1,3}(?:about\s{1,3}|around\s{1,3}|roughly\s{1,3}|~\s{0,1})?(?:a\s{1,3}few\s{1,3}|a\s{1,3}couple\s{1,3}of\s{1,3}|several\s{1,3}|some\s{1,3}|many\s{1,3}|\d{1,6}\s{0,2})"
    r"(?:minutes|hours|h|days|steps|iterations|epochs)|"
    r"(?:in\s{1,3}the\s{1,3}middle|halfway|part\s{0,2}way)\s{1,3}(?:of|through)|mid[\s-]{0,2}(?:training|run|epoch)|"
    r"after\s{1,3}(?:running|training)\s{1,3}(?:fine\s{1,3}|well\s{1,3}|normally\s{1,3})?for|"
    r"randomly|sporadically|intermittently|unpredictabl[ey])\b", re.I)
#: from the start: the NICs never talked
_AT_START = lazyre.compile(r"\b(?:right\s{1,3}(?:away|at\s{1,3}(?:the\s{1,3})?(?:start|first|init\w{0,10}))|immediately|"
                       r"(?:at|during)\s{1,3}(?:NCCL\s{1,3})?(?:init\w{0,10}|start-?up)|from\s{1,3}the\s{1,3}(?:start|beginning|first)|"
                       r"(?:at|on)\s{1,3}the\s{1,3}(?:very\s{1,3})?first\s{1,3}(?:allreduce|all_reduce|collective|step|iteration|traffic))\b", re.I)


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 200 else text[:197] + "..."


def sentence(reader: Any, index: int, text: str) -> None:
    """Read one sentence: error 12 said to come a while into the run."""
    from clusterdx.facts.model.reported import ReportedSymptom

    if not _STATUS_12.search(text) or _LOG_LINE.search(text) or _NO_MEMORY.search(text):
        return
    if _MID_RUN.search(text) and not _AT_START.search(text):
        reader.add(ReportedSymptom, index, ("symptom", "retry-exceeded-mid-run", "multi-node"),
                   kind="retry-exceeded-mid-run", where="multi-node", text=_cut(text))
