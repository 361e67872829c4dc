"""echo $VAR / printenv VAR / env | grep VAR - Command

What people paste when asked "is NCCL_IB_HCA set?": ``echo $NCCL_IB_HCA``,
``echo "NCCL_IB_HCA=$NCCL_IB_HCA"``, ``echo ${NCCL_IB_HCA:-unset}``, several ``echo`` commands
joined by ``;`` or ``&&`` (one output line each), and ``printenv NAME`` or ``env | grep NAME``
that printed nothing. The variable names come from the command (``doc.command``), so this format
needs a transcript prompt (``$ echo $NCCL_IB_HCA``) or a command the collector recorded.

A value printed becomes an ``env.var``. An empty value (an empty line, ``NCCL_IB_HCA=``, or the
``:-`` default) is evidence that the variable is *not set* (for ``echo``: not set or set to the
empty string): it is recorded in ``env.dump.not_set``, never as an ``env.var``. Every command
gives one ``env.dump`` with ``complete=False`` (the command looked at chosen names only).
``printenv NAME`` that printed its value and a non-empty ``env | grep`` are left to the ``env``
format.

Sample input (the output of ``echo "NCCL_IB_HCA=$NCCL_IB_HCA"; echo $NCCL_SOCKET_IFNAME``)::

    NCCL_IB_HCA=mlx5_0,mlx5_3

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE, command=SAMPLE_COMMAND)
    >>> ctx = ParseContext(doc, "shell-echo"); parse(doc, ctx)
    >>> [(f.fact_type, f.name, f.value, f.source.line) for f in ctx.facts[:1]]
    [('env.var', 'NCCL_IB_HCA', 'mlx5_0,mlx5_3', 1)]
    >>> d = ctx.facts[1]
    >>> d.names, d.not_set, d.complete
    (['NCCL_IB_HCA'], ['NCCL_SOCKET_IFNAME'], False)
    >>> doc = Document.from_text("", command="printenv NCCL_DEBUG")
    >>> ctx = ParseContext(doc, "shell-echo"); parse(doc, ctx)
    >>> ctx.facts[0].not_set
    ['NCCL_DEBUG']
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.env import EnvDump, EnvVar
from clusterdx.facts.redact import redact_value


SAMPLE = "NCCL_IB_HCA=mlx5_0,mlx5_3\n"
SAMPLE_COMMAND = 'echo "NCCL_IB_HCA=$NCCL_IB_HCA"; echo $NCCL_SOCKET_IFNAME'

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_VARREF = lazyre.compile(r"\$(?:\{(" + _NAME + r")(?:(:?[-=])([^}]*))?\}|(" + _NAME + r"))")
_PRINTENV = lazyre.compile(r"^\s*(?:/usr/bin/)?printenv((?:\s+" + _NAME + r")+)\s*$")
_GREP = lazyre.compile(r"^\s*(?:/usr/bin/)?(?:env|printenv)\s*\|\s*grep((?:\s+-[A-Za-z]+)*)\s+(['\"]?)\^?(" + _NAME
                   + r")=?\2\s*$")
_ECHO = lazyre.compile(r"^\s*(?:builtin\s+)?echo((?:\s+-[neE]+)*)(?:\s+(.*))?$", re.S)
_UNSAFE = lazyre.compile(r"[|<>`]|\$\(|\$\[|\\")


@dataclass
class Part:
    literal: str = ""
    var: str = ""
    #: the ``${X:-default}`` text shown when X is unset (or empty, with ``:``)
    default: str | None = None


def split_commands(command: str) -> list[str] | None:
    """``a; b && c`` -> ['a', 'b', 'c'] outside quotes; None when a quote is left open."""
    out, cur, quote, i = [], [], "", 0
    while i < len(command):
        ch = command[i]
        if quote:
            quote = "" if ch == quote else quote
            cur.append(ch)
        elif ch in "'\"":
            quote = ch
            cur.append(ch)
        elif ch == ";" or command.startswith("&&", i):
            out.append("".join(cur).strip())
            cur = []
            i += 2 if ch == "&" else 1
            continue
        else:
            cur.append(ch)
        i += 1
    if quote:
        return None
    out.append("".join(cur).strip())
    return [c for c in out if c]


def echo_template(args: str) -> list[Part] | None:
    """The words of an ``echo`` as literal text and variable references, joined as echo prints
    them (one space between unquoted words). None for what the shell would do more with.

    >>> [(p.literal, p.var) for p in echo_template('"HCA=$NCCL_IB_HCA"  x')]
    [('HCA=', ''), ('', 'NCCL_IB_HCA'), (' x', '')]
    """
    parts: list[Part] = []
    quote = ""
    i, n = 0, len(args)
    pending_space = False

    def lit(text: str) -> None:
        if parts and not parts[-1].var:
            parts[-1].literal += text
        else:
            parts.append(Part(literal=text))

    while i < n:
        ch = args[i]
        if not quote and ch in " \t":
            pending_space = True
            i += 1
            continue
        if pending_space:
            lit(" ")
            pending_space = False
        if quote == "'":
            j = args.find("'", i)
            if j < 0:
                return None
            lit(args[i:j])
            quote, i = "", j + 1
            continue
        if ch in "'\"" and (not quote or ch == quote):
            quote = "" if quote else ch
            i += 1
            continue
        if ch == "$":
            m = _VARREF.match(args, i)
            if not m:
                return None  # $?, $1, $$ ...
            name = m.group(1) or m.group(4)
            default = m.group(3) if m.group(2) in (":-", "-") else None
            parts.append(Part(var=name, default=default))
            i = m.end()
            continue
        if not quote and ch in "*?[~{":
            return None  # globbing and brace expansion
        lit(ch)
        i += 1
    if quote:
        return None
    return parts


def _match(parts: list[Part], line: str) -> dict[str, str] | None:
    regex = "".join(re.escape(p.literal) if not p.var else "(.*?)" for p in parts)
    m = re.fullmatch(regex, line)
    if not m:
        return None
    names = [p for p in parts if p.var]
    return {p.var: ("" if p.default is not None and v == p.default else v) for p, v in zip(names, m.groups())}


def parse(doc: Document, ctx: ParseContext) -> None:
    command = (doc.command or "").strip()
    pieces = split_commands(command) if command else None
    if not pieces:
        raise NotApplicable("no echo / printenv / env | grep command")
    lines = list(doc.lines)
    while lines and not lines[-1].strip():
        lines.pop()
    if len(pieces) == 1 and (m := _PRINTENV.match(pieces[0]) or _GREP.match(pieces[0])):
        if any(ln.strip() for ln in lines):
            raise NotApplicable("printenv / env | grep printed values: the env format reads them")
        if m.re is _GREP.compiled and "v" in m.group(1):
            raise NotApplicable("grep -v: an empty output says nothing about one name")
        names = m.group(1).split() if m.re is _PRINTENV.compiled else [m.group(3)]
        ctx.add(EnvDump, var_count=0, names=[], complete=False, filter=command,
                container_markers=[], not_set=sorted(set(names)))
        return
    templates = []
    for piece in pieces:
        e = _ECHO.match(piece)
        if not e or _UNSAFE.search(piece) or "n" in (e.group(1) or ""):
            raise NotApplicable(f"not a plain echo of variables: {piece[:60]!r}")
        parts = echo_template(e.group(2) or "")
        if parts is None or not any(p.var for p in parts):
            raise NotApplicable(f"echo without a plain variable reference: {piece[:60]!r}")
        templates.append(parts)
    if len(lines) > len(templates):
        raise NotApplicable(f"{len(lines)} output lines for {len(templates)} echo commands")
    lines += [""] * (len(templates) - len(lines))
    seen: dict[str, str] = {}
    not_set: set[str] = set()
    for k, (parts, line) in enumerate(zip(templates, lines)):
        values = _match(parts, line.rstrip())
        if values is None:
            ctx.warn(k if k < len(doc.lines) else None,
                     f"output {line[:80]!r} does not match the echo command {pieces[k][:60]!r}")
            continue
        for name, value in values.items():
            if value == "":
                not_set.add(name)
                continue
            shown = redact_value(name, value) if doc.redact else value
            ctx.add(EnvVar, k, name=name, value=shown,
                    redacted=shown != value)
            seen[name] = value
    if not seen and not not_set:
        raise NotApplicable("no echo output line matched its command")
    not_set -= set(seen)
    span = (0, len(doc.lines) - 1) if doc.lines else (None, None)
    ctx.add(EnvDump, *span, var_count=len(seen), names=sorted(seen), complete=False, filter=command,
            container_markers=[], not_set=sorted(not_set))


def sniff(doc: Document) -> float:
    """Only the command tells this format: any one-line output could be an echo."""
    return 0.0


FORMATS = [
    Format(
        name="shell-echo",
        command='echo "NCCL_IB_HCA=$NCCL_IB_HCA"',
        facts=("env.var", "env.dump"),
        sniff=sniff,
        parse=parse,
        command_patterns=(
            r"^\s*(?:builtin\s+)?echo\s[^|<>`]*\$\{?[A-Za-z_]",
            r"^\s*(?:/usr/bin/)?printenv(?:\s+[A-Za-z_]\w*)+\s*$",
            r"^\s*(?:/usr/bin/)?(?:env|printenv)\s*\|\s*grep\b",
        ),
        description="echo $VAR, printenv VAR, env | grep VAR: values, and names shown to be not set",
        empty_output=True,
    )
]
