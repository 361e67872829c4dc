r"""/proc/PID/environ - File

The environment a process was started with (``cat /proc/<pid>/environ``): ``NAME=value``
entries each ended by a NUL byte, no newlines except inside values. It is what ``execve``
received, so it is the authoritative value a rank used for variables read at start-up (NCCL
reads its variables once), even when the launcher or the image changed them on the way.
Changes the process made later (``os.environ[...] =``) are not in it.

Binary input: the parser reads ``doc.raw``. Facts are the same as for ``env`` (``env.var``,
``env.dump`` with ``complete=True``). A fact's source line is the 1-based entry number, which is
the line number ``tr '\0' '\n'`` would give for single-line values.

Sample input (``\0`` = NUL byte)::

    PATH=/usr/local/cuda/bin:/usr/bin\0HOSTNAME=gpu-node-017\0NCCL_IB_HCA=mlx5_0,mlx5_3\0
    PYTORCH_VERSION=2.7.0a0+79aa17489c\0NVIDIA_VISIBLE_DEVICES=all\0HF_TOKEN=hf_abc\0

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document(name="environ", lines=[], raw=SAMPLE)
    >>> ctx = ParseContext(doc, "proc-environ"); parse(doc, ctx)
    >>> [(f.name, f.value, f.source.line) for f in ctx.facts if f.fact_type == "env.var"][2:]
    [('NCCL_IB_HCA', 'mlx5_0,mlx5_3', 3), ('PYTORCH_VERSION', '2.7.0a0+79aa17489c', 4), ('NVIDIA_VISIBLE_DEVICES', 'all', 5), ('HF_TOKEN', '<redacted>', 6)]
    >>> dump = ctx.facts[-1]
    >>> dump.var_count, dump.complete, dump.scope.value
    (6, True, 'container')
    >>> sniff(doc) > 0.8
    True
"""

from __future__ import annotations

import re

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.parsers.env_dump import Var, emit


SAMPLE = (
    b"PATH=/usr/local/cuda/bin:/usr/bin\0HOSTNAME=gpu-node-017\0NCCL_IB_HCA=mlx5_0,mlx5_3\0"
    b"PYTORCH_VERSION=2.7.0a0+79aa17489c\0NVIDIA_VISIBLE_DEVICES=all\0HF_TOKEN=hf_abc\0"
)

# environ allows any byte but '=' and NUL in a name; real names are identifiers (plus the %% of
# exported bash functions)
_ENTRY = lazyre.compile(rb"^([A-Za-z_][A-Za-z0-9_]*(?:%%)?)=(.*)$", re.S)


def _raw(doc: Document) -> bytes | None:
    if doc.raw is not None:
        return doc.raw
    # a text document that kept its NULs (pasted without tr) is still environ
    text = doc.text
    return text.encode("utf-8", "replace") if "\0" in text else None


def sniff(doc: Document) -> float:
    if doc.raw is None:
        return 0.0
    head = doc.raw[:8192]
    if b"\0" not in head:
        return 0.0
    entries = head.split(b"\0")
    if len(head) == 8192:
        entries = entries[:-1]
    entries = [e for e in entries if e]
    if not entries:
        return 0.0
    good = sum(1 for e in entries if _ENTRY.match(e))
    # NUL-separated NAME=value is distinctive; the other binary input (SQLite) starts with a magic
    if not _ENTRY.match(entries[0]):
        return 0.3 * good / len(entries)
    return 0.5 + 0.5 * good / len(entries)


def parse(doc: Document, ctx: ParseContext) -> None:
    raw = _raw(doc)
    if raw is None:
        raise NotApplicable("no raw bytes: not a NUL-separated environ")
    if not raw.strip(b"\0\n"):
        raise NotApplicable("empty environ (kernel thread, zombie, or no permission)")
    entries = raw.split(b"\0")
    truncated = not raw.endswith(b"\0")
    if not truncated:
        entries.pop()  # the empty string after the final NUL
    variables: list[Var] = []
    for n, entry in enumerate(entries):
        if not entry:
            ctx.warn(n, "empty entry")
            continue
        m = _ENTRY.match(entry)
        if not m:
            text = entry.decode("utf-8", "replace")
            if ctx.doc.redact:  # before the cut: a cut secret no longer looks like one
                from clusterdx.facts.redact import redact_text

                text = redact_text(text)
            ctx.warn(n, f"entry is not NAME=value: {text[:60]!r}")
            continue
        name = m.group(1).decode("ascii")
        value = m.group(2).decode("utf-8", "replace")
        variables.append(Var(name, value, n, n))
    if not variables:
        raise ParseError("NUL-separated input without any NAME=value entry", 1)
    if truncated:
        # environ always ends with NUL; without it the copy was cut (or re-encoded)
        ctx.warn(len(entries) - 1, "no NUL after the last entry: input truncated?")
    emit(doc, ctx, variables, complete=True, filt="", command=doc.command)


FORMATS = [
    Format(
        name="proc-environ",
        command="cat /proc/<pid>/environ > environ.bin",
        facts=("env.var", "env.dump"),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"^(?:cat|sudo\s+cat)\s+/proc/(?:\d+|self)/environ\s*(?:>|$)",),
        description="/proc/PID/environ, NUL-separated environment a process was started with (binary)",
        binary=True,
    )
]
