"""Pasted terminal transcripts: split a file into one segment per shell command.

A support ticket often holds one text file with several commands and their output pasted one
after the other::

    $ lscpu
    Architecture:            x86_64
    ...
    [root@gpu-node-017 ~]# nvidia-smi topo -m
    ...

:func:`split_transcript` cuts such a file at every prompt line. Recognised prompts:
``$ cmd``, ``user@host:~$ cmd``, ``user@host$ cmd``, ``[user@host dir]$ cmd``,
``root@host:~# cmd``, ``[root@host ~]# cmd``, ``(venv) user@host$ cmd`` (and ``%`` as the
prompt character after ``user@host``). A bare ``# ...`` line is never a prompt: perf report and
nccl-tests print such lines. A command ending in a backslash continues on the next lines.

Lines starting with ``## `` are annotations (added by whoever assembled the file, never tool
output): leading and trailing ones are cut off a segment, ones inside a segment are blanked so
that line numbers stay true. Text before the first prompt is its own segment (command
``None``); a file without any prompt is one segment. A segment holding labelled output (a loop's
``echo`` labels, ``==> file <==`` headers, ``pdsh``/``srun -l``/``mpirun --tag-output`` prefixes)
is cut once more per label by :func:`clusterdx.facts.labels.split_labels`.

Examples:

    >>> segs = split_transcript(["## note", "$ uname -r", "6.8.0", "root@gpu-7:~# hostname", "gpu-7"])
    >>> [(s.command, s.lines, s.first_line, s.host) for s in segs]
    [('uname -r', ['6.8.0'], 3, None), ('hostname', ['gpu-7'], 5, 'gpu-7')]
    >>> segs[1].prompt_line
    4
    >>> has_prompt(["# Overhead  Command", "#  Rank  0 Group  0"])
    False
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from clusterdx.facts import lazyre
from clusterdx.facts.labels import split_labels


#: ``user@host`` with an optional ``:path`` (``:~``, ``:/data/x``) or `` path`` inside brackets
_USER = r"[A-Za-z0-9_][\w.+-]{0,63}"
_HOST = r"[A-Za-z0-9][\w.-]{0,252}"
_PROMPT = lazyre.compile(
    r"""^[ \t]{0,4}
    (?:\([^()\s]{1,64}\)[ \t]*)?                      # (venv) / (base)
    (?:
        \$                                             # bare "$ "
      | \[(?P<u1>""" + _USER + r""")@(?P<h1>""" + _HOST + r""")(?:[ \t:][^\]]{0,256})?\][ \t]?[$#%]
      | (?P<u2>""" + _USER + r""")@(?P<h2>""" + _HOST + r""")(?::[^\s$#%]{0,256})?(?:[ \t]+[~/][^\s$#%]{0,256})?[ \t]?[$#%]
    )
    (?:[ \t]+(?P<cmd>.*?))?[ \t]*$
    """,
    re.VERBOSE,
)
_ANNOTATION = lazyre.compile(r"^##(?: |$)")
#: a command continued on the next line (``srun -N1 \``), which may be shown after ``> ``
_CONT_PREFIX = lazyre.compile(r"^\s*>\s?")
_MAX_CONTINUATION = 50

#: Docker and similar runtimes name a container's host after the first 12 hex digits of its id
CONTAINER_ID_HOST = lazyre.compile(r"^[0-9a-f]{12}$")


@dataclass
class Segment:
    """One command and its output, or the text before the first prompt (``command`` None)."""

    command: str | None
    lines: list[str]
    #: 1-based line number of ``lines[0]`` in the original input
    first_line: int
    #: host name shown in the prompt, if any
    host: str | None = None
    #: 1-based line of the prompt (first line of the command); equals ``first_line`` without one
    prompt_line: int = 0
    #: last line of the segment in the original input (annotation lines cut off excluded)
    last_line: int = 0
    user: str | None = None
    notes: list[str] = field(default_factory=list)
    #: label printed before or in front of this output (see clusterdx.facts.labels)
    label: str | None = None
    #: what the label names: 'device' | 'node' | 'rank' | 'pid' | 'file' | 'label'
    label_kind: str = ""
    #: input line of each of ``lines`` when they are not contiguous (per-line prefixes)
    line_map: list[int] | None = None


@dataclass(frozen=True)
class Prompt:
    command: str
    host: str | None
    user: str | None


def parse_prompt(line: str) -> Prompt | None:
    """The command (possibly empty), host and user of a prompt line, or None.

    >>> parse_prompt("[root@dgx-b07 ~]# ibstat")
    Prompt(command='ibstat', host='dgx-b07', user='root')
    >>> parse_prompt("(venv) alice@login01:~/runs$ python train.py")
    Prompt(command='python train.py', host='login01', user='alice')
    >>> parse_prompt("# Samples: 48K of event 'cycles'") is None
    True
    """
    if len(line) > 8192 or not line:
        return None
    m = _PROMPT.match(line)
    if not m:
        return None
    host = m.group("h1") or m.group("h2")
    user = m.group("u1") or m.group("u2")
    cmd = (m.group("cmd") or "").strip()
    return Prompt(command=cmd, host=host, user=user)


def is_annotation(line: str) -> bool:
    return bool(_ANNOTATION.match(line))


def has_prompt(lines: list[str]) -> bool:
    return any(parse_prompt(ln) is not None for ln in lines)


def split_transcript(lines: list[str], first_line: int = 1) -> list[Segment]:
    """Split ``lines`` (numbered from ``first_line``) at prompt lines; see the module docstring.

    Segments that hold neither a command nor any non-blank line are dropped. A file without
    prompts gives at most one segment.
    """
    segments: list[Segment] = []
    # (command, host, user, prompt_line, body_start_index)
    cur: tuple[str | None, str | None, str | None, int, int] = (None, None, None, first_line, 0)
    i = 0
    n = len(lines)
    body_start = 0

    def close(end_index: int) -> None:
        command, host, user, prompt_line, start = cur
        seg = _make_segment(lines, start, end_index, first_line, command, host, user, prompt_line)
        if seg is not None:
            segments.extend(split_labels(seg))

    while i < n:
        line = lines[i]
        prompt = None if is_annotation(line) else parse_prompt(line)
        if prompt is None:
            i += 1
            continue
        close(i)
        prompt_line = first_line + i
        command = prompt.command
        # backslash continuation
        extra = 0
        while command.endswith("\\") and i + 1 < n and extra < _MAX_CONTINUATION:
            i += 1
            extra += 1
            nxt = _CONT_PREFIX.sub("", lines[i], count=1)
            command = command[:-1].rstrip() + " " + nxt.strip()
        body_start = i + 1
        cur = (command if command else None, prompt.host, prompt.user, prompt_line, body_start)
        i += 1
    close(n)
    return segments


def _make_segment(lines: list[str], start: int, end: int, first_line: int, command: str | None,
                  host: str | None, user: str | None, prompt_line: int) -> Segment | None:
    body = lines[start:end]
    lo, hi = 0, len(body)
    while lo < hi and (is_annotation(body[lo]) or not body[lo].strip()):
        lo += 1
    while hi > lo and (is_annotation(body[hi - 1]) or not body[hi - 1].strip()):
        hi -= 1
    kept = ["" if is_annotation(ln) else ln for ln in body[lo:hi]]
    if command is None and not kept:
        return None
    seg_first = first_line + start + lo
    has_prompt_line = command is not None or host is not None
    return Segment(
        command=command,
        lines=kept,
        first_line=seg_first,
        host=host,
        prompt_line=prompt_line if has_prompt_line else seg_first,
        last_line=(first_line + start + hi - 1) if kept else prompt_line,
        user=user,
    )
