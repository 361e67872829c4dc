"""Known error and log signatures (``kb/reference/signatures.yaml``), found in any text input.

An expert reading a ticket spots ``NET/Socket : Using``, ``fi_getinfo: -61`` or ``IO_PAGE_FAULT``
wherever it is pasted: in a log, an error trace or a sentence. :func:`scan` looks for every
signature in a document's lines: a line is tried against a signature's regex only when it holds
the signature's lowercase ``needle``, so a big log costs one substring test per signature and
line. Each signature found yields one ``text.signature`` fact (first matching line, with a count).
A signature seen only in the user's own words (a prose document) is ``reported``.

    >>> from clusterdx.facts.document import Document
    >>> doc = Document.from_text("ok\\nnode3:41:41 [0] NCCL INFO NET/Socket : Using [0]eth0:10.1.1.3<0>\\n", name="l")
    >>> [(f.signature, f.node_id, f.source.line) for f in scan(doc)]
    [('nccl-net-socket-initialized', 'nccl-net-socket', 2)]

A signature whose ``unless`` line appears anywhere in the same document is not reported: the
socket transport's initialisation line next to ``NET/IB : Using`` is NCCL's bootstrap.

    >>> ib = "node3:41:41 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.2.0.3<0>\\n"
    >>> [f.signature for f in scan(Document.from_text(doc.text + ib, name="l"))]
    []
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from clusterdx.facts.base import SourceRef
from clusterdx.facts.document import Document
from clusterdx.facts.kbtables import shipped_table
from clusterdx.facts.model.signature import TextSignature

#: characters of a line a signature's regex sees
MAX_LINE = 2048
#: lines of one document scanned (a streamed big log is not scanned here)
MAX_LINES = 200_000


class Signature(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    needle: str
    pattern: str = ""
    #: a line that, anywhere in the same document, shows the signature's line means something
    #: else (NCCL before 2.4.8 prints ``NET/Socket : Using`` for its bootstrap on every run; next
    #: to ``NET/IB : Using`` it is not the transport)
    unless: str = ""
    node: str
    summary: str
    reference: str

    def compiled(self) -> re.Pattern[str] | None:
        return re.compile(self.pattern, re.I) if self.pattern else None

    def compiled_unless(self) -> re.Pattern[str] | None:
        return re.compile(self.unless, re.I) if self.unless else None


class SignatureTable(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    schema_: Literal["clusterdx/signatures/v1"] = Field(alias="schema")
    entries: list[Signature]


@lru_cache(maxsize=1)
def table() -> SignatureTable:
    return shipped_table("reference/signatures.yaml", SignatureTable)


@lru_cache(maxsize=1)
def _compiled() -> list[tuple[Signature, re.Pattern[str] | None]]:
    return [(s, s.compiled()) for s in table().entries]


@lru_cache(maxsize=1)
def _unless() -> dict[str, re.Pattern[str]]:
    return {s.id: rx for s in table().entries if (rx := s.compiled_unless()) is not None}


def _contradicted(doc: Document, rx: re.Pattern[str]) -> bool:
    return any(rx.search(line[:MAX_LINE]) for line in doc.lines[:MAX_LINES])


def scan(doc: Document, reported: bool = False) -> list[TextSignature]:
    if doc.raw is not None or not doc.lines:
        return []
    sigs = _compiled()
    found: dict[str, list] = {}
    for i, line in enumerate(doc.lines[:MAX_LINES]):
        low = line[:MAX_LINE].lower()
        for sig, rx in sigs:
            if sig.needle not in low:
                continue
            if rx is not None and not rx.search(line[:MAX_LINE]):
                continue
            hit = found.get(sig.id)
            if hit is None:
                found[sig.id] = [sig, i, 1]
            else:
                hit[2] += 1
    out = []
    unless = _unless()
    for sig, i, count in found.values():
        if sig.id in unless and _contradicted(doc, unless[sig.id]):
            continue
        text = doc.lines[i].strip()
        if doc.redact:
            from clusterdx.facts.redact import redact_text

            text = redact_text(text)
        out.append(TextSignature(
            node=doc.node, scope=doc.scope, provenance="reported" if reported else "measured",
            source=SourceRef(input=doc.name, line=doc.lineno(i), parser="signatures"),
            signature=sig.id, node_id=sig.node, text=text[:200], count=count))
    return out
