"""Inputs to facts: files, directories, archives and transcripts, every one accounted for.

:func:`ingest` takes whatever the user pointed at (single files of any name, directories walked
recursively in sorted order, tar / zip / gzip archives recognised by their magic bytes) and
returns an :class:`IngestResult`: the facts, and one :class:`InputRecord` per document that says
what became of it (parsed, partial, unrecognized, error or skipped, with the reason). Nothing is
dropped silently and nothing in the input can make it raise.

Each file is decoded (UTF-8 with or without BOM, UTF-16/32 with BOM, else latin-1 with a
warning); a file with NUL bytes in its first 8 KiB is binary and offered only to binary formats.
A text file with shell prompts is split into one document per command
(:mod:`clusterdx.facts.transcript`). Every document is sniffed (:mod:`clusterdx.facts.sniff`)
and parsed by the winner.

A file over :data:`STREAM_THRESHOLD` whose head sniffs as a format that can stream (``Format.
stream``, e.g. NCCL debug logs) is parsed in chunks, in bounded memory and without the per-file
cap; its record says ``streamed``. Other big files are read up to ``Limits.max_file_bytes``.
What one input may cost is bounded in :mod:`clusterdx.facts.bounds` (identical facts, facts of one
type, lines, warnings, repeated transcript segments); whatever a bound leaves out is counted in
the input's record, and a record cut short is ``partial`` and says so.

Node: the ``node`` argument, else the ``host`` of the nearest ``manifest.json`` above the file
(a bundle root, in a directory or an archive), else the host name of a transcript prompt, else
``"node"`` (unlabelled); the NCCL debug parser names each line's host itself. The names are then
resolved to machines in one place, :func:`clusterdx.facts.nodes.resolve` (aliases, and in a
one-host ticket the unlabelled files join that host). Scope: the ``scope`` argument, else
``container`` for a transcript command run through ``docker exec``, ``kubectl exec``,
``srun --container-image`` and the like or a prompt whose host is a container id, else the
manifest's ``files: {path: {scope}}`` entry for the file, else the manifest's ``scope``, else
``unknown`` -- and a parser may scope its facts from their content (an environment dump with
container markers, ``docker inspect``). A folder or file name is never evidence of scope.

Examples:

    >>> from clusterdx.facts.document import Document
    >>> res = ingest_documents([Document.from_text("vm.swappiness = 60\\n", name="s.txt")])
    >>> r = res.inputs[0]
    >>> (r.path, r.format, r.status, r.facts)
    ('s.txt', 'sysctl', 'parsed', 1)
"""

from __future__ import annotations

import codecs
import dataclasses
import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Sequence

from pydantic import BaseModel, Field, PrivateAttr

from clusterdx.facts import lazyre
from clusterdx.facts.archive import (Budget, Limits, Quota, detect, human, open_archive,
                                     unsupported)
from clusterdx.facts.base import Fact, NotApplicable, ParseError, Scope, printable
from clusterdx.facts import bounds
from clusterdx.facts.bounds import MAX_REPEATS, Keeper, cap_lines
from clusterdx.facts.deadline import NO_DEADLINE, Deadline
from clusterdx.facts.document import Document, ParseContext, split_lines
from clusterdx.facts.embedded import cited_lines, code_spans, embedded_facts
from clusterdx.facts.posts import LOG_LINE, MAX_SCAN, dedent, post_spans
from clusterdx.facts.redact import redact_text
from clusterdx.facts.sniff import MIN_CONFIDENCE, FormatsArg, format_list, rank_formats
from clusterdx.facts.transcript import CONTAINER_ID_HOST, Segment, split_transcript


__all__ = ["InputWarning", "InputRecord", "IngestResult", "Limits", "ingest", "ingest_documents",
           "scope_from_command"]

DEFAULT_NODE = "node"
MANIFEST_NAME = "manifest.json"
_MANIFEST_MAX_BYTES = 1 << 20
_BINARY_PROBE = 8192
#: files above this size, of a format that can stream, are parsed in chunks; not capped and not
#: charged to ``Limits.max_total_bytes`` beyond their head, as they are never held in memory
STREAM_THRESHOLD = 8 << 20
STREAM_HEAD_BYTES = 256 << 10
STREAM_CHUNK_BYTES = 1 << 20
STREAM_MAX_LINE = 16 << 20

Status = Literal["parsed", "partial", "unrecognized", "error", "skipped"]


class InputWarning(BaseModel):
    line: int
    message: str


class InputRecord(BaseModel):
    """What became of one document (a file, an archive member or a transcript segment)."""

    #: as given by the user; archive members as ``a.tgz!/sub/x.txt``; transcript segments ``s.txt#3``
    path: str
    format: str | None
    confidence: float
    status: Status
    reason: str = ""
    first_line: str = ""
    line_start: int = 1
    line_end: int = 0
    command: str | None = None
    node: str
    scope: str
    size_bytes: int = 0
    facts: int = 0
    warnings: list[InputWarning] = Field(default_factory=list)
    #: the nodes this input's facts went to, when they went to more than one (a job-wide NCCL log)
    nodes: list[str] = Field(default_factory=list)
    #: warnings a parser made past the ones it keeps (facts/bounds.py), counted in the last line
    _more_warnings: int = PrivateAttr(default=0)


@dataclass
class IngestResult:
    inputs: list[InputRecord] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    #: names the inputs gave a machine that resolved to another name (alias -> node); see
    #: :mod:`clusterdx.facts.nodes`
    aliases: dict[str, str] = field(default_factory=dict)


def _resolved(result: IngestResult, node: str | None) -> IngestResult:
    """The result with every fact's and record's node resolved in one place (facts/nodes.py)."""
    from clusterdx.facts.nodes import apply_to_records, resolve

    res = resolve(result.facts, [r.node for r in result.inputs], node=node)
    return IngestResult(apply_to_records(result.inputs, res), res.facts, res.aliases)


# -- node and scope attribution -----------------------------------------------------------------

_SCOPE_WORDS = {
    "container": Scope.container, "containers": Scope.container, "pod": Scope.container,
    "docker": Scope.container,
    "guest": Scope.vm_guest, "vm": Scope.vm_guest,
    "host": Scope.host, "baremetal": Scope.host, "bare-metal": Scope.host,
    "bare_metal": Scope.host,
    "hypervisor": Scope.hypervisor,
}
_WORD_SPLIT = lazyre.compile(r"[-_.\s]+")

_MANIFEST_SCOPES = {
    **{s.value: s for s in Scope}, **_SCOPE_WORDS,
    "vm_guest": Scope.vm_guest, "vm-guest": Scope.vm_guest,
}

_CONTAINER_COMMAND = lazyre.compile(
    r"""\b(?:
        (?:docker|podman|nerdctl)\s+(?:container\s+)?(?:exec|run)\b
      | kubectl\s+(?:\S+\s+)*?exec\b
      | oc\s+(?:\S+\s+)*?(?:exec|rsh)\b
      | srun\b[^|;&]*?--container-(?:image|name)\b
      | enroot\s+(?:start|exec)\b
      | (?:apptainer|singularity)\s+(?:exec|run|shell)\b
    )""",
    re.VERBOSE,
)


def scope_from_command(command: str | None) -> Scope | None:
    """``container`` for a command run inside a container runtime, else None.

    >>> scope_from_command("docker exec -it trainer env")
    <Scope.container: 'container'>
    >>> scope_from_command("systemd-detect-virt --container") is None
    True
    """
    if command and _CONTAINER_COMMAND.search(command):
        return Scope.container
    return None


@dataclass(frozen=True)
class _Manifest:
    host: str | None
    scope: Scope | None
    #: the command that produced each file, by path below the manifest's folder (``probes`` of a
    #: ``clusterdx collect`` bundle): it picks the parser as a transcript's ``$ command`` does
    commands: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    #: the scope of single files, by path below the manifest's folder (``files: {path: {scope}}``):
    #: the override for a ticket whose files come from both sides of a boundary (guest and
    #: hypervisor, host and container) and whose content does not say which is which
    scopes: dict[str, Scope] = field(default_factory=dict, compare=False, hash=False)
    #: files the collector cut at its size cap (``truncated`` probes), by path: why
    truncated: dict[str, str] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class _Where:
    """Where a document sits: its path components and the nearest manifest above it."""

    parts: tuple[str, ...]
    manifest: _Manifest | None = None
    #: components ``parts[manifest_depth:]`` lie below the manifest's directory
    manifest_depth: int = 0

    def child(self, rel: str, manifests: dict[tuple[str, ...], _Manifest],
              base_len: int) -> "_Where":
        rel_parts = tuple(p for p in rel.split("/") if p)
        parts = self.parts + rel_parts
        dirs = rel_parts[:-1]
        for k in range(len(dirs), -1, -1):
            m = manifests.get(dirs[:k])
            if m is not None:
                return _Where(parts, m, base_len + k)
        return _Where(parts, self.manifest, self.manifest_depth)


# -- the ingestion run --------------------------------------------------------------------------


def ingest(paths: Sequence[str | Path], *, node: str | None = None, scope: str | None = None,
           redact: bool = True, limits: Limits | None = None,
           formats: FormatsArg = None, deadline: Deadline | None = None) -> IngestResult:
    """Read, split, sniff and parse every file under ``paths``; see the module docstring.
    Past ``deadline`` nothing more is read: each input left is recorded ``skipped`` and noted
    in the deadline's ledger."""
    run = _Run(limits or Limits(), node, scope, redact, formats, deadline)
    for p in paths:
        run.add_path(p)
    return _resolved(run.finish(), node)


def ingest_documents(docs: Sequence[Document], *, node: str | None = None,
                     scope: str | None = None, redact: bool | None = None,
                     formats: FormatsArg = None, deadline: Deadline | None = None) -> IngestResult:
    """Sniff and parse prepared documents (live collection, tests); no splitting, no files.

    ``node``/``scope``/``redact`` override what the documents carry when given.
    """
    run = _Run(Limits(), node, scope, True if redact is None else redact, formats, deadline)
    for doc in docs:
        changes: dict = {}
        if node:
            changes["node"] = node
        if run.scope_arg is not None:
            changes["scope"] = run.scope_arg
        if redact is not None:
            changes["redact"] = redact
        d = dataclasses.replace(doc, **changes) if changes else doc
        size = len(d.raw) if d.raw is not None else len(d.text.encode("utf-8", "replace"))
        start = d.first_line
        end = d.first_line + len(d.lines) - 1 if d.lines else 0
        run.keeper = Keeper()
        run.process(d, path=d.name, size=size, line_start=start, line_end=end)
    return _resolved(run.finish(), node)


def _coerce_scope(scope: str | Scope | None) -> Scope | None:
    if scope is None:
        return None
    if isinstance(scope, Scope):
        return scope
    key = str(scope).strip().lower()
    if key in _MANIFEST_SCOPES:
        return _MANIFEST_SCOPES[key]
    raise ValueError(f"unknown scope {scope!r}; expected one of "
                     f"{', '.join(s.value for s in Scope)}")


#: characters of a first line shown in a record (after redaction)
FIRST_LINE_CHARS = 120
#: characters of it kept until then: a secret cut in two no longer looks like one, so the cut to
#: FIRST_LINE_CHARS comes after the redactor has seen the line whole (up to here)
_FIRST_LINE_KEPT = 4096


def _first_nonempty(lines: Sequence[str]) -> str:
    for ln in lines:
        s = ln.strip()
        if s:
            return s[:_FIRST_LINE_KEPT]
    return ""


def _shown_first(first: str, redact: bool) -> str:
    """A first line as a record shows it: redacted, then cut."""
    return (redact_text(first) if redact else first)[:FIRST_LINE_CHARS]


def _binary_preview(data: bytes) -> str:
    # line breaks and tabs become spaces, so a NAME=secret pair after one still reads as a pair
    # to the redactor
    head = data[:_FIRST_LINE_KEPT]
    return "".join(chr(b) if 32 <= b < 127 else " " if b in (9, 10, 13) else "." for b in head)


#: warnings kept per input; the rest are counted in one last line
MAX_WARNINGS = 50


def dedupe(facts: list[Fact]) -> tuple[list[Fact], list[InputWarning]]:
    """Facts with copies beyond :data:`MAX_REPEATS` of an identical one dropped, and a warning
    per fact type saying how many."""
    counts: dict[tuple, int] = {}
    dropped: dict[str, int] = {}
    kept: list[Fact] = []
    for f in facts:
        try:
            key = (type(f), tuple((k, tuple(v) if isinstance(v, list) else v)
                                  for k, v in f.__dict__.items() if k != "source"))
            n = counts.get(key, 0) + 1
            counts[key] = n
        except TypeError:  # an unhashable field: keep the fact
            n = 1
        if n > MAX_REPEATS:
            dropped[f.fact_type] = dropped.get(f.fact_type, 0) + 1
            continue
        kept.append(f)
    return kept, [InputWarning(line=0, message=f"{n} more identical {t} facts not kept "
                                                f"(first {MAX_REPEATS} kept)")
                  for t, n in dropped.items()]


def clean_record(rec: InputRecord, redact: bool = True) -> InputRecord:
    """A record safe to show: its path and command printable (invalid UTF-8 and control
    characters escaped), and, unless ``redact`` is False, every text it carries from the input
    (command, first line, reason, warnings) through the one redactor; warnings capped at
    :data:`MAX_WARNINGS`."""
    def text(value: str) -> str:
        return printable(redact_text(value) if redact else value, keep_newlines=False)

    warnings = rec.warnings
    if len(warnings) > MAX_WARNINGS or rec._more_warnings:
        rest = max(0, len(warnings) - MAX_WARNINGS) + rec._more_warnings
        warnings = warnings[:MAX_WARNINGS] + [InputWarning(line=0, message=f"{rest} more warnings")]
    return rec.model_copy(update=dict(
        path=printable(rec.path, keep_newlines=False),
        command=text(rec.command) if rec.command is not None else None,
        first_line=text(rec.first_line)[:FIRST_LINE_CHARS],  # redacted whole, then cut
        reason=text(rec.reason),
        node=printable(rec.node, keep_newlines=False),
        warnings=[InputWarning(line=w.line, message=text(w.message)) for w in warnings],
    ))


class _Run:
    def __init__(self, limits: Limits, node: str | None, scope: str | None, redact: bool,
                 formats: FormatsArg, deadline: Deadline | None = None):
        self.limits = limits
        self.deadline = deadline or NO_DEADLINE
        self.node_arg = node or None
        self.scope_arg = _coerce_scope(scope)
        self.redact = redact
        self.formats = format_list(formats)
        self.budget = Budget(limits.max_total_bytes)
        self.result = IngestResult()
        #: the bounds of the top-level input being read (one file, all its segments)
        self.keeper = Keeper()

    def finish(self) -> IngestResult:
        """Every record through :func:`clean_record` (names shown safely, secrets redacted)."""
        self.result.inputs = [clean_record(r, self.redact) for r in self.result.inputs]
        return self.result

    # -- attribution

    def node_for(self, where: _Where, prompt_host: str | None = None) -> str:
        if self.node_arg:
            return self.node_arg
        if where.manifest is not None and where.manifest.host:
            return where.manifest.host
        if prompt_host and not CONTAINER_ID_HOST.match(prompt_host):
            return prompt_host
        return DEFAULT_NODE

    def scope_for(self, where: _Where, command: str | None = None,
                  prompt_host: str | None = None) -> Scope:
        if self.scope_arg is not None:
            return self.scope_arg
        by_cmd = scope_from_command(command)
        if by_cmd is not None:
            return by_cmd
        if prompt_host and CONTAINER_ID_HOST.match(prompt_host):
            return Scope.container
        # a folder or file name is never evidence of scope: only the manifest (or --scope) is
        m = where.manifest
        if m is not None and m.scopes:
            own = m.scopes.get("/".join(where.parts[where.manifest_depth:]))
            if own is not None:
                return own
        if m is not None and m.scope is not None:
            return m.scope
        return Scope.unknown

    # -- records

    def record(self, where: _Where | None, **kw) -> InputRecord:
        w = where or _Where(())
        kw.setdefault("node", self.node_for(w))
        kw.setdefault("scope", self.scope_for(w).value)
        kw.setdefault("format", None)
        kw.setdefault("confidence", 0.0)
        rec = InputRecord(**kw)
        self.result.inputs.append(rec)
        return rec

    # -- paths

    def add_path(self, given: str | Path) -> None:
        display = os.fspath(given)
        p = Path(display)
        # only the name the user gave and what lies below it say anything about scope: the folders
        # above (a checkout under /home/u/vm-tests, rules/container/fixtures) are not evidence
        where = _Where((p.name,) if p.name not in ("", ".", "..") else ())
        try:
            st = os.stat(p)
        except FileNotFoundError:
            self.record(where, path=display, status="error", reason="no such file or directory")
            return
        except OSError as exc:
            self.record(where, path=display, status="skipped", reason=f"cannot read: {exc.strerror or exc}")
            return
        if stat.S_ISDIR(st.st_mode):
            self.add_dir(p, display, where)
        else:
            self.add_file(p, display, where, st)

    def add_dir(self, root: Path, display: str, where: _Where) -> None:
        entries = walk_folder(root)  # (rel parts, skip reason)
        if not entries:
            self.record(where, path=display, status="skipped", reason="empty directory")
            return
        entries.sort(key=lambda e: e[0])
        files = {parts: reason for parts, reason in entries}

        def load(parts: tuple[str, ...]) -> bytes | None:
            path = root.joinpath(*parts)
            try:
                with open(path, "rb") as fh:
                    return fh.read(_MANIFEST_MAX_BYTES)
            except OSError:
                return None

        manifests, manifest_records = self._manifests(
            [parts for parts, reason in entries if reason is None], load,
            lambda parts: os.path.join(display, *parts), where)
        base_len = len(where.parts)
        for parts, reason in entries:
            rel = "/".join(parts)
            path_display = os.path.join(display, *parts)
            w = where.child(rel, manifests, base_len)
            if parts in manifest_records:
                self.result.inputs.append(manifest_records[parts])
                continue
            if files[parts] is not None:
                self.record(w, path=path_display, status="skipped", reason=files[parts] or "")
                continue
            full = root.joinpath(*parts)
            try:
                st = os.stat(full)
            except OSError as exc:
                self.record(w, path=path_display, status="skipped",
                            reason=f"cannot read: {exc.strerror or exc}")
                continue
            self.add_file(full, path_display, w, st)

    def late(self, where: _Where, display: str, **kw) -> bool:
        """True (and the input recorded as not read) when the run's deadline has passed."""
        if not self.deadline.passed():
            return False
        self.deadline.not_read(display)
        self.record(where, path=display, status="skipped", reason=self.deadline.reason(), **kw)
        return True

    def add_file(self, path: Path, display: str, where: _Where, st: os.stat_result) -> None:
        if self.late(where, display, size_bytes=st.st_size):
            return
        if not stat.S_ISREG(st.st_mode):
            self.record(where, path=display, status="skipped",
                        reason="not a regular file (device, FIFO or socket)")
            return
        size = st.st_size
        cap = self.limits.max_file_bytes
        try:
            with open(path, "rb") as fh:
                head = fh.read(512)
                kind = detect(head)
                if kind is not None:
                    if size > self.budget.left:
                        self.record(where, path=display, status="skipped", size_bytes=size,
                                    reason=f"{kind} archive of {human(size)} is over the "
                                           f"remaining size budget ({human(self.budget.left)} of "
                                           f"{human(self.limits.max_total_bytes)})")
                        return
                    data = head + fh.read(max(0, size - len(head)))
                    self.budget.take(len(data))
                    self.add_archive(data, display, where, depth=0, quota=Quota(self.limits.max_members), kind=kind)
                    return
                if size > STREAM_THRESHOLD and unsupported(head[:16]) is None \
                        and self.try_stream(fh, head, path, display, where, size):
                    return
                want = min(cap, self.budget.left)
                if want <= 0 and size > 0:
                    self.record(where, path=display, status="skipped", size_bytes=size,
                                reason=f"total size limit of {human(self.limits.max_total_bytes)} reached")
                    return
                fh.seek(len(head[:want]))
                data = head[:want] + (fh.read(want - len(head)) if want > len(head) else b"")
        except OSError as exc:
            self.record(where, path=display, status="skipped", size_bytes=size,
                        reason=f"cannot read: {exc.strerror or exc}")
            return
        self.budget.take(len(data))
        truncated = size > len(data)
        note = ""
        if truncated:
            if len(data) < cap:
                note = (f"truncated at {human(len(data))} of {human(size)}: total size limit of "
                        f"{human(self.limits.max_total_bytes)} reached")
            else:
                note = f"truncated at {human(cap)} of {human(size)}"
        self.add_blob(data, display, where, size=size, truncated_note=note, depth=0,
                      quota=None, path=str(path))

    # -- big files, streamed

    def try_stream(self, fh, head: bytes, path: Path, display: str, where: _Where,
                   size: int) -> bool:
        """Parse a big text file with a streaming format, reading it in chunks; False: not done.

        The head (:data:`STREAM_HEAD_BYTES`) is decoded and sniffed like a small file; if it is
        plain UTF-8 (or latin-1) text, no transcript, and its best format can stream, the whole
        file is handed to that format in batches of lines, never held in memory. Otherwise
        (binary, UTF-16, a transcript, a format that cannot stream or declines) the caller reads
        the file the ordinary, capped way.
        """
        head += fh.read(max(0, STREAM_HEAD_BYTES - len(head)))
        if b"\x00" in head[:_BINARY_PROBE] or head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            return False
        cut = head.rfind(b"\n")
        if cut < 0:
            return False
        head_text, warning = _decode(head[:cut + 1])
        if head_text is None:
            return False
        head_lines = split_lines(head_text)
        segments = split_transcript(head_lines)
        if len(segments) != 1 or segments[0].command is not None or segments[0].host is not None:
            return False
        node, scope = self.node_for(where), self.scope_for(where)
        doc = Document(name=display, lines=head_lines, path=str(path), node=node, scope=scope,
                       redact=self.redact)
        sniff_warnings: list[str] = []
        try:
            ranked = rank_formats(doc, self.formats, sniff_warnings)
        except Exception:
            return False
        if not ranked or ranked[0][1] < MIN_CONFIDENCE or ranked[0][0].stream is None:
            return False
        fmt, score = ranked[0]
        self.budget.take(len(head))
        warnings = [InputWarning(line=0, message=w) for w in sniff_warnings]
        if warning:
            warnings.append(InputWarning(line=0, message=warning))
        reader = _LineStream(fh, warnings)
        if warning:
            reader.codec = "latin-1"
        ctx = ParseContext(doc=doc, parser=fmt.name, keeper=Keeper())
        base = dict(path=display, first_line=_first_nonempty(head_lines), line_start=1,
                    command=None, node=node, scope=Scope(scope).value, size_bytes=size,
                    format=fmt.name, confidence=score)
        try:
            fmt.stream(reader.batches(), ctx)
        except NotApplicable:
            fh.seek(0)
            return False
        except ParseError as exc:
            line = getattr(exc, "line", 0) or 0
            msg = str(exc) or type(exc).__name__
            self.result.inputs.append(InputRecord(
                **base, line_end=reader.lines, status="error", warnings=warnings,
                reason=f"line {line}: {msg}" if line else msg))
            return True
        except Exception as exc:
            self.result.inputs.append(InputRecord(
                **base, line_end=reader.lines, status="error", warnings=warnings,
                reason=f"internal parser error: {type(exc).__name__}: {exc}"))
            return True
        bad = [f for f in ctx.facts if not isinstance(f, Fact)]
        if bad:
            self.result.inputs.append(InputRecord(
                **base, line_end=reader.lines, status="error", warnings=warnings,
                reason=f"internal parser error: parser produced {type(bad[0]).__name__}, not a Fact"))
            return True
        for line, message in ctx.warnings:
            warnings.append(InputWarning(line=line if isinstance(line, int) else 0,
                                         message=str(message)))
        warnings += [InputWarning(line=line, message=m) for line, m in ctx.keeper.notes()]
        reasons = [f"streamed ({human(size)})"]
        if ctx.warnings:
            reasons.append(f"{len(ctx.warnings) + ctx.warnings_dropped} parser warning(s)")
        cut = _cut_reason(ctx.keeper)
        if cut:
            reasons.append(cut)
        if reader.error:
            reasons.append(reader.error)
        self.result.facts.extend(ctx.facts)
        rec = InputRecord(
            **base, line_end=reader.lines, facts=len(ctx.facts), warnings=warnings,
            status="partial" if ctx.warnings or reader.error or cut else "parsed",
            reason="; ".join(reasons))
        rec._more_warnings = ctx.warnings_dropped
        self.result.inputs.append(rec)
        return True

    # -- archives

    def add_archive(self, data: bytes, display: str, where: _Where, depth: int,
                    quota: Quota, kind: str | None = None) -> None:
        kind = kind or detect(data[:512])
        if depth > self.limits.max_nesting:
            self.record(where, path=display, status="skipped", size_bytes=len(data),
                        reason=f"{kind} archive nested more than {self.limits.max_nesting} "
                               "level(s) deep (not opened)")
            return
        try:
            listing = open_archive(data, display, self.limits, self.budget, quota, kind=kind)
        except Exception as exc:  # never let one archive cost the report
            self.record(where, path=display, status="error", size_bytes=len(data),
                        reason=f"internal archive error: {type(exc).__name__}: {exc}")
            return
        for status, reason in listing.problems:
            self.record(where, path=display, status=status, size_bytes=len(data),
                        reason=f"{listing.kind} archive: {reason}")
        if not listing.members:
            if not listing.problems:
                self.record(where, path=display, status="skipped", size_bytes=len(data),
                            reason=f"{listing.kind} archive holds no files")
            return
        members = {m.name: m for m in listing.members if m.status == "" and m.data is not None}

        def load(parts: tuple[str, ...]) -> bytes | None:
            m = members.get("/".join(parts))
            return m.data[:_MANIFEST_MAX_BYTES] if m is not None and m.data is not None else None

        readable = [tuple(m.name.split("/")) for m in listing.members
                    if m.status == "" and m.data is not None]
        manifests, manifest_records = self._manifests(
            readable, load, lambda parts: f"{display}!/{'/'.join(parts)}", where)
        base_len = len(where.parts)
        copies: dict[str, int] = {}
        for m in listing.members:
            sep = "!" if m.name.startswith("/") else "!/"
            mdisplay = f"{display}{sep}{m.name}"
            # an archive may hold one name twice: each copy is its own input, and says which it is
            copies[m.name] = copies.get(m.name, 0) + 1
            if copies[m.name] > 1:
                mdisplay = f"{mdisplay} (copy {copies[m.name]})"
            parts = tuple(m.name.split("/"))
            w = where.child(m.name, manifests, base_len)
            if m.status == "" and parts in manifest_records:
                self.result.inputs.append(manifest_records[parts])
                continue
            if m.status or m.data is None:
                self.record(w, path=mdisplay, status=m.status or "skipped", reason=m.reason,
                            size_bytes=m.size)
                continue
            note = ""
            if m.truncated:
                note = m.reason or f"truncated at {human(self.limits.max_file_bytes)} of {human(m.size)}"
            self.add_blob(m.data, mdisplay, w, size=m.size, truncated_note=note,
                          depth=depth + 1, quota=quota, path=mdisplay)

    # -- manifests

    def _manifests(self, files: list[tuple[str, ...]], load, display_of,
                   where: _Where) -> tuple[dict[tuple[str, ...], _Manifest], dict[tuple[str, ...], InputRecord]]:
        manifests: dict[tuple[str, ...], _Manifest] = {}
        records: dict[tuple[str, ...], InputRecord] = {}
        for parts in files:
            if parts[-1] != MANIFEST_NAME:
                continue
            data = load(parts)
            if data is None:
                continue
            display = display_of(parts)
            parsed = _parse_manifest(data)
            if parsed is None:
                continue  # not a manifest: an ordinary file, sniffed like any other
            manifest, warnings, error = parsed
            rel_where = where.child("/".join(parts), manifests, len(where.parts))
            if error:
                rec = InputRecord(path=display, format="manifest", confidence=1.0, status="error",
                                  reason=error, first_line=_first_nonempty(
                                      data.decode("utf-8", "replace").splitlines()[:5]),
                                  node=self.node_for(rel_where), scope=self.scope_for(rel_where).value,
                                  size_bytes=len(data))
                records[parts] = rec
                continue
            manifests[parts[:-1]] = manifest
            mwhere = _Where(where.parts + parts, manifest, len(where.parts) + len(parts) - 1)
            rec = InputRecord(path=display, format="manifest", confidence=1.0,
                              status="partial" if warnings else "parsed",
                              reason="; ".join(warnings),
                              first_line=_first_nonempty(data.decode("utf-8", "replace").splitlines()[:5]),
                              node=self.node_for(mwhere), scope=self.scope_for(mwhere).value,
                              size_bytes=len(data),
                              warnings=[InputWarning(line=0, message=w) for w in warnings])
            records[parts] = rec
        return manifests, records

    # -- one blob of bytes: archive, binary, text, transcript

    def add_blob(self, data: bytes, display: str, where: _Where, *, size: int,
                 truncated_note: str, depth: int, quota: Quota | None, path: str | None) -> None:
        truncated_note = truncated_note or _manifest_truncated(where)
        self.keeper = Keeper()
        kind = detect(data[:512])
        if kind is not None:
            self.add_archive(data, display, where, depth=depth,
                             quota=quota or Quota(self.limits.max_members), kind=kind)
            return
        if not data:
            self.record(where, path=display, status="unrecognized", reason="empty file",
                        size_bytes=size)
            return
        other = unsupported(data[:16])
        if other is not None:
            self.record(where, path=display, status="skipped", size_bytes=size,
                        reason=f"{other} compressed data is not supported; unpack it first",
                        first_line=_binary_preview(data[:40]))
            return
        text, warning = _decode(data, truncated=bool(truncated_note))
        ingest_warnings = [InputWarning(line=0, message=warning)] if warning else []
        if text is not None:
            text, cut = cap_lines(text)
            if cut:
                # the rest of a huge file costs time and memory the run has not got; said, not hidden
                top = bounds.MAX_LINES
                note = f"lines {top + 1}-{top + cut} not read: limit of {top} lines per input"
                truncated_note = f"{truncated_note}; {note}" if truncated_note else note
        if text is None:
            doc = Document(name=display, lines=[], raw=data, path=path,
                           node=self.node_for(where), scope=self.scope_for(where),
                           redact=self.redact, command=_manifest_command(where))
            self.process(doc, path=display, size=size, line_start=1, line_end=0,
                         extra_warnings=ingest_warnings, truncated_note=truncated_note)
            return
        lines = split_lines(text)
        # a Markdown post keeps its blocks whole: prompts inside them are split block by block
        # (_code_blocks), never across a fence
        post = bool(post_spans(lines))
        segments = [Segment(None, lines, 1)] if post else split_transcript(lines)
        # labelled output (==> file <== heads, mpirun tags) is cut into segments even without prompts
        is_transcript = len(segments) > 1 or any(
            s.command is not None or s.host is not None or s.label is not None for s in segments)
        if not segments:
            self.record(where, path=display, status="unrecognized",
                        reason="file holds only blank lines" if not any(
                            ln.strip() for ln in lines) else "file holds only annotation lines",
                        size_bytes=size, line_end=len(lines), warnings=ingest_warnings,
                        first_line=_first_nonempty(lines))
            return
        command = _manifest_command(where)
        if command is not None or not is_transcript:
            seg = segments[0] if command is None else Segment(None, lines, 1)
            doc = Document(name=display, lines=seg.lines, first_line=seg.first_line, path=path,
                           node=self.node_for(where), scope=self.scope_for(where),
                           redact=self.redact, command=command)
            self.process(doc, path=display, size=size, line_start=1, line_end=len(lines),
                         extra_warnings=ingest_warnings, truncated_note=truncated_note)
            return
        limit = self.limits.max_segments
        copies: dict[tuple, list[int]] = {}
        repeats: list[tuple[int, Segment, int]] = []
        for k, seg in enumerate(segments[:limit], start=1):
            last = k == len(segments)
            # a pasted session running the same commands over and over: the same command with
            # the same output is read MAX_SEGMENT_REPEATS times, the rest listed in one record
            same = copies.setdefault((seg.command, seg.host, seg.label, tuple(seg.lines)), [])
            same.append(k)
            if len(same) > bounds.MAX_SEGMENT_REPEATS and not last:
                repeats.append((k, seg, same[0]))
                continue
            self.add_segment(seg, k, display, where, path, ingest_warnings,
                             truncated_note if last else "")
        if repeats:
            first, last_seg = repeats[0], repeats[-1]
            self.record(where, path=f"{display}#{first[0]}-{last_seg[0]}", status="skipped",
                        reason=f"{len(repeats)} transcript segments not read again: the same "
                               f"command and output as an earlier segment (first: "
                               f"#{first[0]} repeats #{first[2]})",
                        line_start=first[1].prompt_line, line_end=last_seg[1].last_line)
        if len(segments) > limit:
            rest = segments[limit:]
            self.record(where, path=f"{display}#{limit + 1}-{len(segments)}", status="skipped",
                        reason=f"{len(rest)} more transcript segments not read: limit of "
                               f"{limit} segments reached",
                        line_start=rest[0].prompt_line, line_end=rest[-1].last_line)

    def _reads_empty(self, command: str | None) -> bool:
        """Some format takes a command's empty output as evidence (``echo $X``: X not set)."""
        return bool(command) and any(f.empty_output and f.matches_command(command or "")
                                     for f in format_list(self.formats))

    def add_segment(self, seg: Segment, k: int, display: str, where: _Where, path: str | None,
                    ingest_warnings: list[InputWarning], truncated_note: str) -> None:
        seg_path = f"{display}#{k}"
        # a node label (pdsh 'node12: ...', a loop echoing $(hostname)) names the node of that output
        node = self.node_for(where, seg.label if seg.label_kind == "node" and seg.label else seg.host)
        scope = self.scope_for(where, seg.command, seg.host)
        size = len("\n".join(seg.lines).encode("utf-8", "replace"))
        empty = not any(ln.strip() for ln in seg.lines)

        def skip() -> None:
            self.record(where, path=seg_path, status="skipped", command=seg.command,
                        reason="command printed no output", node=node, scope=scope.value,
                        line_start=seg.prompt_line, line_end=seg.last_line,
                        warnings=list(ingest_warnings))

        if empty and not self._reads_empty(seg.command):
            skip()
            return
        doc = Document(name=seg_path, lines=seg.lines, first_line=seg.first_line,
                       command=seg.command, node=node, scope=scope, path=path, redact=self.redact,
                       label=seg.label, label_kind=seg.label_kind, line_map=seg.line_map)
        rec = self.process(doc, path=seg_path, size=size, line_start=seg.prompt_line,
                           line_end=seg.last_line, extra_warnings=ingest_warnings,
                           truncated_note=truncated_note)
        if empty and rec.status == "unrecognized" and self.result.inputs and self.result.inputs[-1] is rec:
            self.result.inputs.pop()  # every format declined the empty output: as before
            skip()

    # -- sniff and parse one document

    def process(self, doc: Document, *, path: str, size: int, line_start: int, line_end: int,
                extra_warnings: list[InputWarning] | None = None,
                truncated_note: str = "") -> InputRecord:
        if self.deadline.passed():
            self.deadline.not_read(path)
            return self.record(None, path=path, status="skipped", reason=self.deadline.reason(),
                               command=redact_text(doc.command) if doc.redact and doc.command else doc.command,
                               node=doc.node, scope=Scope(doc.scope).value, size_bytes=size,
                               line_start=line_start, line_end=line_end)
        warnings = list(extra_warnings or [])
        sniff_warnings: list[str] = []
        if doc.redact and doc.command:
            doc = dataclasses.replace(doc, command=redact_text(doc.command))
        binary = doc.raw is not None
        first = _binary_preview(doc.raw) if binary and doc.raw is not None else _first_nonempty(doc.lines)
        base = dict(path=path, first_line=first, line_start=line_start, line_end=line_end,
                    command=doc.command, node=doc.node, scope=Scope(doc.scope).value,
                    size_bytes=size)
        try:
            ranked = rank_formats(doc, self.formats, sniff_warnings)
        except Exception as exc:  # rank_formats guards each sniffer; this is belt and braces
            ranked = []
            sniff_warnings.append(f"ranking failed: {type(exc).__name__}: {exc}")
        warnings += [InputWarning(line=0, message=w) for w in sniff_warnings]
        candidates = [(f, s) for f, s in ranked if s >= MIN_CONFIDENCE]
        # the prose reader is the format of last resort: every tool format is tried before it
        candidates.sort(key=lambda c: c[0].name == "prose")

        def finish(**kw) -> InputRecord:
            reason = kw.pop("reason", "")
            launched = _launch_facts(doc, kw.get("format"))
            if launched:
                self.result.facts.extend(launched)
                kw["facts"] = kw.get("facts", 0) + len(launched)
                if kw.get("status") == "unrecognized":
                    kw.update(format="launch-cmdline", status="partial")
                reason = "; ".join(filter(None, [reason, "the command line's launch settings read"]))
            sigs = _signatures(doc, kw.get("format"), kw.get("status"))
            if sigs:
                self.result.facts.extend(sigs)
                kw["facts"] = kw.get("facts", 0) + len(sigs)
                note = f"{len(sigs)} known error/log signature(s) found"
                if kw.get("status") == "unrecognized":
                    kw.update(format="text", status="parsed")
                    reason = f"no tool format matched; {note}"
                else:
                    reason = "; ".join(filter(None, [reason, note]))
            elif kw.get("status") == "unrecognized" and any(f.name == "prose" and sc >= MIN_CONFIDENCE
                                                              for f, sc in ranked):
                # the user's words, read: nothing in them the rules use, which is not "unrecognized"
                kw.update(format="prose", status="parsed")
                reason = "read as the user's own words; no statement in it that the rules use"
            if truncated_note:
                reason = f"{truncated_note}; {reason}" if reason else truncated_note
                if kw.get("status") == "parsed":
                    kw["status"] = "partial"
            rec = InputRecord(**base, reason=reason, warnings=warnings, **kw)
            self.result.inputs.append(rec)
            return rec

        if not binary and not getattr(self, "_in_block", False) and post_spans(doc.lines):
            # a ticket's Markdown with several pasted outputs: no one tool format is the whole
            # document, so each block is read on its own and the words around them as prose
            return self._post_record(doc, path, finish, warnings)
        if not candidates:
            prose = _read_prose(doc, self.formats) if not binary else None
            if prose is not None:
                return self._prose_record(prose, finish, warnings, "no tool format matched", doc)
            if not binary:
                n_emb, note = self._embedded(doc, None, set(), warnings)
                if n_emb:
                    return finish(format="text", confidence=0.0, status="partial",
                                  reason=f"no format matched the whole document; {note}", facts=n_emb)
            top = ranked[0] if ranked else None
            if binary:
                reason = "binary file"
                if top is not None and top[1] > 0:
                    reason += f"; no binary format matched (best guess {top[0].name} {top[1]:.2f})"
            else:
                reason = "no format matched"
                if top is not None and top[1] > 0:
                    reason += f"; best guess {top[0].name} ({top[1]:.2f})"
                reason += f"; first line: {_shown_first(first, doc.redact)!r}"
            return finish(format=None, confidence=round(top[1], 4) if top else 0.0,
                          status="unrecognized", reason=reason)

        declined: list[str] = []
        for fmt, score in candidates:
            ctx = ParseContext(doc=doc, parser=fmt.name, keeper=self.keeper)
            mark = self.keeper.mark()
            try:
                fmt.parse(doc, ctx)
            except NotApplicable as exc:
                self.keeper.rollback(mark)
                declined.append(f"{fmt.name} ({score:.2f}) declined: {exc or 'not applicable'}")
                continue
            except ParseError as exc:
                self.keeper.rollback(mark)
                line = getattr(exc, "line", 0) or 0
                msg = str(exc) or type(exc).__name__
                return finish(format=fmt.name, confidence=score, status="error",
                              reason=f"line {line}: {msg}" if line else msg)
            except Exception as exc:
                self.keeper.rollback(mark)
                return finish(format=fmt.name, confidence=score, status="error",
                              reason=f"internal parser error: {type(exc).__name__}: {exc}")
            bad = [f for f in ctx.facts if not isinstance(f, Fact)]
            if bad:
                return finish(format=fmt.name, confidence=score, status="error",
                              reason=f"internal parser error: parser produced "
                                     f"{type(bad[0]).__name__}, not a Fact")
            for line, message in ctx.warnings:
                warnings.append(InputWarning(line=line if isinstance(line, int) else 0,
                                             message=str(message)))
            warnings += [InputWarning(line=line, message=m) for line, m in self.keeper.notes(mark)]
            cut = _cut_reason(self.keeper, mark)
            status: Status = "partial" if ctx.warnings or cut else "parsed"
            reason = ""
            if ctx.warnings:
                reason = f"{len(ctx.warnings) + ctx.warnings_dropped} parser warning(s)"
            reason = "; ".join(filter(None, [reason, cut]))
            more_warnings = ctx.warnings_dropped
            if declined:
                reason = "; ".join(filter(None, [reason, *declined]))
            self.result.facts.extend(ctx.facts)
            around = _prose_around(doc, ctx, self.formats) if fmt.name != "prose" else []
            if around:
                self.result.facts.extend(around)
                reason = "; ".join(filter(None, [reason, f"{len(around)} reported fact(s) from the "
                                                          "user's words around the tool output"]))
            cited = cited_lines(ctx.facts) if fmt.name != "prose" else self._code_blocks(doc, path)
            n_emb, note = self._embedded(doc, fmt.name, cited, warnings)
            reason = "; ".join(filter(None, [reason, note]))
            rec = finish(format=fmt.name, confidence=score, status=status, reason=reason,
                         facts=len(ctx.facts) + len(around) + n_emb)
            rec._more_warnings = more_warnings
            return rec
        prose = _read_prose(doc, self.formats, declined) if not binary else None
        if prose is not None:
            return self._prose_record(prose, finish, warnings, "; ".join(declined), doc)
        if not binary:
            n_emb, note = self._embedded(doc, None, set(), warnings)
            if n_emb:
                return finish(format="text", confidence=0.0, status="partial",
                              reason="; ".join([*declined, note]), facts=n_emb)
        return finish(format=None, confidence=round(candidates[0][1], 4), status="unrecognized",
                      reason="; ".join(declined) + f"; first line: {_shown_first(first, doc.redact)!r}")

    def _prose_record(self, ctx: ParseContext, finish, warnings: list[InputWarning],
                      why: str, doc: Document) -> InputRecord:
        """The record of a document only the prose reader got facts from (see _read_prose)."""
        for line, message in ctx.warnings:
            warnings.append(InputWarning(line=line, message=str(message)))
        self.result.facts.extend(ctx.facts)
        n_emb, note = self._embedded(doc, "prose", self._code_blocks(doc, doc.name), warnings)
        reason = f"read as the user's own words (facts reported, not measured): {why}"
        reason = "; ".join(filter(None, [reason, note]))
        return finish(format="prose", confidence=0.0, status="partial" if ctx.warnings else "parsed",
                      reason=reason, facts=len(ctx.facts) + n_emb)

    def _post_record(self, doc: Document, path: str, finish, warnings: list[InputWarning]) -> InputRecord:
        """A post's record: its code blocks first, each an input of its own, then the user's words
        on the lines no block's tool took, as prose."""
        taken = self._code_blocks(doc, path)
        # a line no block's tool took stays the user's (a title quoting an error is a symptom)
        lines = ["" if doc.lineno(i) in taken else ln for i, ln in enumerate(doc.lines)]
        ctx = _read_prose(dataclasses.replace(doc, lines=lines), self.formats)
        facts = list(ctx.facts) if ctx is not None else []
        for line, message in (ctx.warnings if ctx is not None else []):
            warnings.append(InputWarning(line=line, message=str(message)))
        self.result.facts.extend(facts)
        n_emb, note = self._embedded(doc, "prose", taken, warnings)
        reason = "; ".join(filter(None, ["the user's words (facts reported, not measured) around pasted output; "
                                         "each code block read as an input of its own", note]))
        return finish(format="prose", confidence=0.0, status="partial" if ctx is not None and ctx.warnings else "parsed",
                      reason=reason, facts=len(facts) + n_emb)

    def _code_blocks(self, doc: Document, path: str) -> set[int]:
        """Tool output pasted in the code blocks of a ticket's Markdown, read as inputs of their
        own (``notes.md#code2``) by the tool formats (never by prose: a block of Python is not the
        user's words). Returns the input lines of the blocks a format took; a block no tool
        format recognises stays the prose record's (its settings and versions are read there)."""
        if doc.raw is not None or getattr(self, "_in_block", False):
            return set()
        spans = post_spans(doc.lines) or code_spans(doc.lines)
        if not spans:
            return set()
        tools = [f for f in self.formats if getattr(f, "name", "") != "prose"]
        taken: set[int] = set()
        saved = self.formats
        self._in_block = True
        try:
            self.formats = tools
            for k, (a, b) in enumerate(spans, 1):
                inner = dedent(doc.lines[a:b])
                if not any(ln.strip() for ln in inner):
                    continue
                if doc.line_map is None:
                    segs = split_transcript(list(inner), first_line=doc.lineno(a))
                else:
                    segs = [Segment(None, list(inner), doc.lineno(a), line_map=[doc.lineno(i) for i in range(a, b)])]
                for j, seg in enumerate(segs, 1):
                    sub = Document(name=f"{path}#code{k}" + (f".{j}" if len(segs) > 1 else ""),
                                   lines=seg.lines, first_line=seg.first_line, line_map=seg.line_map,
                                   command=seg.command, node=seg.host or doc.node, scope=doc.scope,
                                   path=doc.path, redact=doc.redact)
                    # a block whose prompt line starts a launcher ("$ srun --gpus-per-task 1 python
                    # train.py" over the script's own output) is read for its launch settings even
                    # when no tool format knows the output
                    if not any(sc >= MIN_CONFIDENCE for _, sc in rank_formats(sub, tools)) \
                            and not (sub.command and any(f.matches_command(sub.command) for f in tools)) \
                            and not _starts_launcher(sub.command):
                        continue
                    rec = self.process(sub, path=sub.name, size=len("\n".join(sub.lines).encode()),
                                       line_start=seg.prompt_line or seg.first_line,
                                       line_end=seg.last_line or (seg.first_line + len(seg.lines) - 1))
                    if rec.status in ("parsed", "partial"):
                        taken.update(sub.lineno(i) for i in range(len(sub.lines)))
                    elif rec.status == "unrecognized" and self.result.inputs and self.result.inputs[-1] is rec:
                        # a block that looked like a tool's output and was not: it stays the
                        # prose record's lines (accounted for there), not an input of its own
                        self.result.inputs.pop()
        finally:
            self.formats = saved
            self._in_block = False
        return taken

    def _embedded(self, doc: Document, primary: str | None, cited: set[int],
                  warnings: list[InputWarning]) -> tuple[int, str]:
        """Facts of log lines inside ``doc`` that its own format does not read (facts/embedded.py)."""
        try:
            facts, warns, used = embedded_facts(doc, primary, cited, self.formats)
        except Exception as exc:  # never costs the document its record
            warnings.append(InputWarning(line=0, message=f"embedded lines not read: {exc}"))
            return 0, ""
        for line, message in warns:
            warnings.append(InputWarning(line=line if isinstance(line, int) else 0, message=str(message)))
        if not facts:
            return 0, ""
        facts, repeats = dedupe(facts)
        warnings += repeats
        self.result.facts.extend(facts)
        return len(facts), f"{len(facts)} fact(s) from {', '.join(used)} lines inside it"


def _cut_reason(keeper: Keeper, since=None) -> str:
    """The reason-line part for facts turned away by the per-type limit (the input was not read
    whole); empty when nothing was."""
    cut = keeper.cut_types(since)
    return f"not read whole: more {', '.join(cut)} facts than the limit per input" if cut else ""


def _starts_launcher(command: str | None) -> bool:
    """The command line starts a launcher (mpirun, srun, docker run, torchrun ...)."""
    if not command:
        return False
    from clusterdx.facts.parsers import launch_cmdline

    try:
        return bool(launch_cmdline.find_launches(launch_cmdline.tokenize(command)))
    except Exception:  # a command line it cannot read is no launcher
        return False


def _launch_facts(doc: Document, fmt: str | None) -> list[Fact]:
    """The launch line of a transcript segment (``$ mpirun -x NCCL_TOPO_FILE=... all_reduce_perf``)
    as launch facts: what the command passed to the job is part of the ticket whatever its output
    was. Only commands that start a launcher (mpirun, srun, docker run, torchrun ...)."""
    if not doc.command or fmt == "launch-cmdline":
        return []
    from clusterdx.facts.parsers import launch_cmdline

    if not launch_cmdline.find_launches(launch_cmdline.tokenize(doc.command)):
        return []
    sub = Document(name=doc.name, lines=[doc.command], first_line=max(1, doc.first_line - 1),
                   node=doc.node, scope=doc.scope, path=doc.path, redact=doc.redact)
    ctx = ParseContext(doc=sub, parser="launch-cmdline")
    try:
        launch_cmdline.parse(sub, ctx)
    except Exception:  # a command line it cannot read costs nothing else
        return []
    return [f for f in ctx.facts if isinstance(f, Fact) and f.fact_type in ("launch.command", "container.spec")]


def _signatures(doc: Document, fmt: str | None, status: str | None) -> list[Fact]:
    """Known error and log signatures in a text document (kb/reference/signatures.yaml); in the
    user's own words (prose, or no format at all) they are reported, in a tool's output measured."""
    if doc.raw is not None or status == "error":
        return []
    from clusterdx.facts.signatures import scan

    try:
        return list(scan(doc, reported=fmt in (None, "prose")))
    except Exception:  # a broken signature table must not cost the document its record
        return []


def _read_prose(doc: Document, formats: Sequence, declined: Sequence[str] = ()) -> ParseContext | None:
    """The prose reader on a text document no format took (statements with provenance
    ``reported``); None when it holds none, when prose was tried already or is not offered."""
    if not any(getattr(f, "name", "") == "prose" for f in formats):
        return None
    if any(d.startswith("prose ") for d in declined):
        return None
    from clusterdx.facts.parsers.prose import read_leftover

    try:
        return read_leftover(doc)
    except Exception:  # the reader is a last resort: it never costs the document its record
        return None


def _prose_around(doc: Document, ctx: ParseContext, formats: Sequence) -> list[Fact]:
    """Reported facts from the prose around a tool's output in one Markdown document (a ticket
    body with a pasted log in a code fence, or under ``##`` headings): the prose reader on the
    lines no fact of the tool's parser came from, log-looking lines left out. Plain text with a
    log and no Markdown is the tool's alone (a log's own uncited lines are not prose)."""
    if not any(getattr(f, "name", "") == "prose" for f in formats) or not doc.lines:
        return []
    cited = cited_lines(ctx.facts)
    head = doc.lines[:MAX_SCAN]
    if not any(ln.lstrip().startswith(("```", "~~~", "## ", "### ")) for ln in head) and not post_spans(head):
        return []
    lines = ["" if doc.lineno(i) in cited or LOG_LINE.match(ln) else ln for i, ln in enumerate(doc.lines)]
    rest = dataclasses.replace(doc, lines=lines)
    got = _read_prose(rest, formats)
    return list(got.facts) if got is not None else []


class _LineStream:
    """A text file read in chunks and handed out as batches of decoded lines.

    Each chunk is cut after its last line end, decoded as UTF-8 (a chunk that is not valid
    UTF-8, and every later one, as latin-1, with a warning) and split like
    :func:`~clusterdx.facts.document.split_lines`. A line longer than
    :data:`STREAM_MAX_LINE` is cut there. Only one chunk is held at a time.
    """

    def __init__(self, fh, warnings: list[InputWarning]):
        self.fh = fh
        self.warnings = warnings
        self.lines = 0
        self.codec = "utf-8"
        self.error = ""

    def decode(self, data: bytes, offset: int) -> str:
        if self.codec == "utf-8":
            if data.startswith(codecs.BOM_UTF8) and offset == 0:
                data = data[3:]
            try:
                return data.decode("utf-8")
            except UnicodeDecodeError as exc:
                self.codec = "latin-1"
                self.warnings.append(InputWarning(
                    line=self.lines + 1, message=f"not valid UTF-8 (byte {offset + exc.start}); "
                                                 f"decoded as latin-1 from line {self.lines + 1}"))
        return data.decode("latin-1")

    def batches(self):
        fh = self.fh
        try:
            fh.seek(0)
        except OSError as exc:
            self.error = f"cannot read: {exc.strerror or exc}"
            return
        carry = b""
        offset = 0
        pending_cr = False
        while True:
            try:
                block = fh.read(STREAM_CHUNK_BYTES)
            except OSError as exc:
                self.error = f"read stopped at byte {offset}: {exc.strerror or exc}"
                block = b""
            if block:
                data = carry + block
                cut = data.rfind(b"\n")
                if cut < 0:
                    if len(data) < STREAM_MAX_LINE:
                        carry = data
                        continue
                    cut = len(data) - 1
                carry = data[cut + 1:]
                data = data[:cut + 1]
            else:
                data, carry = carry, b""
                if not data:
                    return
            text = self.decode(data, offset)
            offset += len(data)
            if pending_cr and text.startswith("\n"):
                text = text[1:]  # the \n of a \r\n split over two chunks
            pending_cr = False
            if "\r" in text:
                pending_cr = text.endswith("\r")
                text = text.replace("\r\n", "\n").replace("\r", "\n")
            lines = text.split("\n")
            if lines[-1] == "":
                lines.pop()
            if lines:
                base = self.lines
                self.lines += len(lines)
                yield base, lines
            if not block:
                return


def _outside(link: str, root: str) -> str | None:
    """The target of symbolic link ``link`` when it resolves outside ``root`` (a real path), else
    None: a ticket's folder may not make us read ``/etc/shadow`` or ``~/.ssh``."""
    target = os.path.realpath(link)
    try:
        if os.path.commonpath([target, root]) == root:
            return None
    except ValueError:  # different drives
        pass
    return printable(target, keep_newlines=False)


def walk_folder(root: Path) -> list[tuple[tuple[str, ...], str | None]]:
    """Every entry under ``root`` as (path parts, why it is not read, or None for a file to read):
    links are followed only to regular files inside ``root``, special files and macOS metadata are
    named with their reason. Ingestion reads from it; a stopped run lists from it."""
    out: list[tuple[tuple[str, ...], str | None]] = []
    _walk(root, (), os.path.realpath(root), out)
    return out


def _walk(d: Path, rel: tuple[str, ...], walk_root: str,
          out: list[tuple[tuple[str, ...], str | None]]) -> None:
    try:
        with os.scandir(d) as it:
            items = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        out.append((rel or (".",), f"cannot list directory: {exc.strerror or exc}"))
        return
    for e in items:
        parts = rel + (e.name,)
        if _is_macos_metadata(e.name):
            if e.is_dir(follow_symlinks=False):
                out.append((parts, "macOS metadata folder (not read)"))
            else:
                out.append((parts, "macOS metadata file (not read)"))
            continue
        try:
            if e.is_symlink():
                try:
                    st = os.stat(e.path)
                except OSError:
                    out.append((parts, "broken symbolic link"))
                    continue
                outside = _outside(e.path, walk_root)
                if outside is not None:
                    out.append((parts, f"symbolic link to {outside!r}, outside the folder "
                                       "given (not followed)"))
                elif stat.S_ISREG(st.st_mode):
                    out.append((parts, None))
                elif stat.S_ISDIR(st.st_mode):
                    out.append((parts, "symbolic link to a directory (not followed)"))
                else:
                    out.append((parts, "symbolic link to a special file (not read)"))
            elif e.is_dir(follow_symlinks=False):
                _walk(Path(e.path), parts, walk_root, out)  # an empty sub-folder adds nothing
            elif e.is_file(follow_symlinks=False):
                out.append((parts, None))
            else:
                out.append((parts, "not a regular file (device, FIFO or socket)"))
        except OSError as exc:
            out.append((parts, f"cannot read: {exc.strerror or exc}"))


def _is_macos_metadata(name: str) -> bool:
    return name in (".DS_Store", "__MACOSX") or name.startswith("._")


def _parse_manifest(data: bytes) -> tuple[_Manifest, list[str], str] | None:
    """(manifest, warnings, error) for a bundle manifest; None when the file is no manifest."""
    try:
        obj = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        return None
    except json.JSONDecodeError as exc:
        if data.lstrip()[:1] == b"{":
            return _Manifest(None, None), [], f"invalid manifest: line {exc.lineno}: {exc.msg}"
        return None
    if not isinstance(obj, dict):
        return None
    keys = {"host", "hostname", "node", "scope", "files"}
    if not keys & set(obj):
        return None
    warnings: list[str] = []
    host = None
    for key in ("host", "hostname", "node"):
        value = obj.get(key)
        if isinstance(value, str) and value.strip():
            host = value.strip()
            break
        if value is not None and not isinstance(value, str):
            warnings.append(f"manifest {key!r} is not a string; ignored")
    scope = None
    raw_scope = obj.get("scope")
    if raw_scope is not None:
        if isinstance(raw_scope, str) and raw_scope.strip().lower() in _MANIFEST_SCOPES:
            scope = _MANIFEST_SCOPES[raw_scope.strip().lower()]
        else:
            warnings.append(f"manifest scope {raw_scope!r} is not one of "
                            f"{', '.join(s.value for s in Scope)}; ignored")
    commands: dict[str, str] = {}
    truncated: dict[str, str] = {}
    probes = obj.get("probes")
    if isinstance(probes, list):
        for p in probes:
            if isinstance(p, dict) and isinstance(p.get("file"), str) and isinstance(p.get("command"), str):
                commands[p["file"].strip("/")] = p["command"]
                if p.get("truncated") is True:
                    why = p.get("reason") if isinstance(p.get("reason"), str) else ""
                    truncated[p["file"].strip("/")] = f"cut by the collector: {why[:200]}" if why \
                        else "cut by the collector at its size cap"
    scopes: dict[str, Scope] = {}
    files = obj.get("files")
    if isinstance(files, dict):
        for name, spec in files.items():
            value = spec.get("scope") if isinstance(spec, dict) else None
            if isinstance(value, str) and value.strip().lower() in _MANIFEST_SCOPES:
                scopes[str(name).strip("/")] = _MANIFEST_SCOPES[value.strip().lower()]
            else:
                warnings.append(f"manifest files[{name!r}] scope {value!r} is not one of "
                                f"{', '.join(s.value for s in Scope)}; ignored")
    return _Manifest(host, scope, commands, scopes, truncated), warnings, ""


def _manifest_command(where: _Where) -> str | None:
    """The command a bundle manifest says produced this file, if any."""
    m = where.manifest
    if m is None or not m.commands:
        return None
    return m.commands.get("/".join(where.parts[where.manifest_depth:]))


def _manifest_truncated(where: _Where) -> str:
    """Why the collector cut this file, when its manifest says it did; else ''."""
    m = where.manifest
    if m is None or not m.truncated:
        return ""
    return m.truncated.get("/".join(where.parts[where.manifest_depth:]), "")


def _decode(data: bytes, truncated: bool = False) -> tuple[str | None, str | None]:
    """(text, warning), or (None, None) for binary data."""
    for bom, codec in ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                       (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):
        if data.startswith(bom):
            if codec == "utf-32" and data.startswith(codecs.BOM_UTF16_LE) and len(data) % 4:
                continue
            width = 4 if codec == "utf-32" else 2
            body = data[: len(data) - (len(data) % width)]
            text = body.decode(codec, errors="replace")
            warning = "invalid characters replaced" if "\ufffd" in text else None
            return text, warning
    if b"\x00" in data[:_BINARY_PROBE]:
        return None, None
    body = data
    if truncated:
        cut = body.rfind(b"\n")
        if cut > 0:
            body = body[: cut + 1]
    if body.startswith(codecs.BOM_UTF8):
        body = body[3:]
    try:
        return body.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return body.decode("latin-1"), (f"not valid UTF-8 (byte {exc.start}); decoded as latin-1")
