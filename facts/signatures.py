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
    [('nccl-net-socket-in-use', 'nccl-net-socket', 2)]
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from clusterdx.facts.base import SourceRef
from clusterdx.facts.document import Document
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
    node: str
    summary: str
    reference: str

    def compiled(self) -> re.Pattern[str] | None:
        return re.compile(self.pattern, re.I) if self.pattern else None


class SignatureTable(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    schema_: Literal["clusterdx/signatures/v1"] = Field(alias="schema")
    entries: list[Signature]


@lru_cache(maxsize=1)
def table() -> SignatureTable:
    text = resources.files("clusterdx.kb").joinpath("reference/signatures.yaml").read_text("utf-8")
    from clusterdx.engine.kbcache import table_data

    return SignatureTable.model_validate(table_data(text))


@lru_cache(maxsize=1)
def _compiled() -> list[tuple[Signature, re.Pattern[str] | None]]:
    return [(s, s.compiled()) for s in table().entries]


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
    for sig, i, count in found.values():
        text = doc.lines[i].strip()
        if doc.redact:
            from clusterdx.facts.redact import redact_text

            text = redact_text(text)
        out.append(TextSignature(
            node=doc.node, scope=doc.scope, provenance="reported" if reported else "measured",
            source=SourceRef(input=doc.name, line=doc.lineno(i), parser="signatures"),
            signature=sig.id, node_id=sig.node, text=text[:200], count=count))
    return out
