"""Collect from the machine clusterdx runs on, in memory: ``clusterdx diagnose`` with no path.

The collection is the one ``clusterdx collect`` writes into a bundle (:mod:`clusterdx.facts.collect`:
read-only, argument lists, time limits, no root, no GPU tools required), handed to the normal
sniff-and-parse path with each probe's command recorded, so a live diagnosis, a diagnosis of the
bundle and a diagnosis of the same outputs pasted into a ticket agree.

Documents are named ``live:<bundle file>`` (``live:commands/lscpu.txt``). A probe that produced
nothing (tool missing, permission denied, timed out, failed) becomes a note in the report's
inputs, never an abort; so does output that no parser reads yet (it is kept in bundles).
"""

from __future__ import annotations

from typing import Sequence

from clusterdx.facts.base import Scope
from clusterdx.facts.document import Document, split_lines

_NOTE_STATUS = {"missing": "skipped", "denied": "skipped", "skipped": "skipped", "timeout": "error",
                "error": "error"}


def _note(res, node: str, scope: str):
    from clusterdx.facts.ingest import InputRecord

    if res.status == "ok":
        status, reason = "skipped", "collected (kept in bundles by `clusterdx collect`); no parser reads it yet"
    else:
        status = _NOTE_STATUS.get(res.status, "error")
        reason = f"{res.status}: {res.reason}" if res.reason else res.status
    return InputRecord(path=f"live:{res.probe.file}", format=None, confidence=0.0, status=status,  # type: ignore[arg-type]
                       reason=reason, command=res.command or res.probe.command, node=node, scope=scope,
                       size_bytes=len(res.data))


def collect_documents(redact: bool = True, probes: Sequence | None = None):
    """Run the default probes; return (documents, notes for what could not be collected or read)."""
    from clusterdx.facts.collect import CollectOptions, collect

    col = collect(CollectOptions(redact=redact, probes=probes))
    scope = Scope(col.scope)
    docs: list[Document] = []
    notes = []
    for res in col.results:
        probe = res.probe
        if not res.has_output or probe.format is None:
            notes.append(_note(res, col.host, scope.value))
            continue
        name = f"live:{probe.file}"
        common = dict(name=name, command=probe.command, node=col.host, scope=scope, redact=redact)
        if probe.suffix == ".bin":
            docs.append(Document(lines=[], raw=res.data, **common))
        else:
            docs.append(Document(lines=split_lines(res.data.decode("utf-8", errors="replace")), **common))
    return docs, notes
