"""Posts: a ticket written as one text, the user's words with tool output pasted into them.

A GitHub issue or forum post pastes each output in a code block (a ```` ``` ```` fence, a
four-space indent); an e-mail or a web form pastes it as is, between paragraphs of words. Either
way no one tool format is the whole document: each pasted output is read as an input of its own
(``issue.md#code2``) and the words around them as prose. This module tells a post from one tool's
output and finds the pasted spans; ingestion reads them.

Sample (a plain post)::

    We see a much lower bus bandwidth between the two nodes than we expected to get.
    Here is the output of the test on one of them:

    #       size         count      type   redop    root     time   algbw   busbw
      1073741824     268435456     float     sum      -1   8200.1   130.9   245.5

    The ACS setting in the BIOS is the default one, and we have not changed it.
"""

from __future__ import annotations

import os.path
from typing import Sequence

from clusterdx.facts import lazyre
from clusterdx.facts.embedded import code_spans


#: paragraphs of a plain post looked at for its opening words
OPENING_PARAGRAPHS = 4
#: lines looked at for a fence or a paragraph of words before a document is taken for a post
MAX_SCAN = 5000

#: a log line, cited or not, is never the user's words: host:pid:tid prefixes, timestamps, levels
#: (the leading blanks are possessive: a long line of blanks would otherwise cost time squared)
LOG_LINE = lazyre.compile(r"^\s*+(?:\S+:\d+:\d+\s+\[|\[?\d{4}-\d\d-\d\d[ T]\d|\[?\d\d:\d\d:\d\d|"
                      r"\S*\s*(?:NCCL|NVSHMEM)\s+(?:INFO|WARN|TRACE)\b|(?:INFO|WARN(?:ING)?|ERROR|DEBUG)[:\s\]])")
#: the share of plain lower-case words in the user's words: a technical sentence ("I have two
#: machines, each with 8 H100-80G GPUs and 4 400Gbps CX7 RDMA cards") is about half plain words,
#: a tool's line far fewer
PLAIN_SHARE = 0.45
_SENTENCE_END = lazyre.compile(r"(?<=[.?!])\s+")
#: a tool's ``key: value`` line (cpupower, nvidia-smi -q, ibstat): output, however wordy its key
_KEY_VALUE = lazyre.compile(r"^\s*[\w .()/+-]{1,48}:\s+\S")
_FENCE = ("```", "~~~")
#: a Markdown heading: the title of a post ("# NCCL all-reduce slower on two nodes")
_HEADING = lazyre.compile(r"^#{1,6} +[A-Z\[`'\"](?!.*\d\d:\d\d).*[A-Za-z]")


def sentences(text: str) -> int:
    """How many sentences of the user's words ``text`` holds: six or more words each, most of
    them plain lower-case words, ended as a sentence is (a tool's line ends in a value). A
    heading of a tool ends in a colon too ("Performance counter stats for process id 'N':"), so
    a colon ends a sentence only after ten words."""
    text = text.strip()
    if len(text) < 30 or text[-1] not in ".?!:":
        return 0
    n = 0
    for part in _SENTENCE_END.split(text):
        words = part.split()
        n += len(words) >= (10 if part.endswith(":") else 6) and _plain(words) >= PLAIN_SHARE * len(words)
    return n


def _plain(words: Sequence[str]) -> int:
    return sum(w.strip(".,;:!?()\"'").isalpha() and w.strip(".,;:!?()\"'").islower() for w in words)


def dedent(lines: Sequence[str]) -> list[str]:
    """A code block's lines without the indent they share (a four-space block, a fence inside a
    list item), so the tool's output reads as the tool printed it; a line's own indent stays."""
    prefix = os.path.commonprefix([ln[:len(ln) - len(ln.lstrip())] for ln in lines if ln.strip()])
    return [ln[len(prefix):] if ln.startswith(prefix) else ln.lstrip() for ln in lines] if prefix else list(lines)


def _words_outside(lines: Sequence[str], spans: Sequence[tuple[int, int]]) -> bool:
    inside = {i for a, b in spans for i in range(a, b)}
    # a tool's comment lines ("# To display the perf.data header info, please use ...") are not
    # the user's words
    return any(sentences(ln) for i, ln in enumerate(lines) if i not in inside and not ln.lstrip().startswith("#"))


def _paragraphs(lines: Sequence[str]) -> list[tuple[int, int]]:
    out, start = [], None
    for i, ln in enumerate(lines):
        if ln.strip() and start is None:
            start = i
        elif not ln.strip() and start is not None:
            out.append((start, i))
            start = None
    if start is not None:
        out.append((start, len(lines)))
    return out


def _is_words(lines: Sequence[str]) -> bool:
    """A paragraph of the user's words: a Markdown heading, or no log line, mostly not ``key:
    value`` lines, and read as one text (wrapped lines joined) six or more words, most of them
    plain lower-case words."""
    lines = [ln for ln in lines if ln.strip()]
    if not lines:
        return False
    if _is_heading(lines):
        return True
    if any(LOG_LINE.match(ln) for ln in lines):
        return False
    if sum(bool(_KEY_VALUE.match(ln)) for ln in lines) * 2 >= len(lines) and len(lines) > 1:
        return False
    words = " ".join(ln.strip() for ln in lines).split()
    return len(words) >= 6 and _plain(words) >= PLAIN_SHARE * len(words)


def _is_heading(lines: Sequence[str]) -> bool:
    lines = [ln for ln in lines if ln.strip()]
    return len(lines) == 1 and bool(_HEADING.match(lines[0]))


def _opens_with_words(lines: Sequence[str]) -> bool:
    """A post's opening paragraph (after its title): words with a whole sentence in them, which
    a tool's title line ("Performance counter stats for process id 'N':") is not."""
    return _is_words(lines) and not _is_heading(lines) and sentences(" ".join(ln.strip() for ln in lines)) > 0


def _is_label(lines: Sequence[str]) -> bool:
    """A one-line caption of what follows ("Output of lspci:", "nvidia-smi topo -m:")."""
    return len(lines) == 1 and lines[0].rstrip().endswith(":") and len(lines[0].split()) <= 8


def plain_spans(lines: Sequence[str]) -> list[tuple[int, int]]:
    """The pasted outputs of a plain post: runs of paragraphs that are not the user's words. A
    post opens with words (one tool's output opens with its own header), so a document whose
    first paragraph is not words has none."""
    paras = _paragraphs(lines[:MAX_SCAN])
    # the opening: words with a sentence among the first paragraphs, past at most a title, a
    # greeting ("Hi,") and a short list of versions ("Nccl 2.8.3", "Cuda 10.2") - short lines,
    # none of them a log line
    opened = False
    for a, b in paras[:OPENING_PARAGRAPHS]:
        if _opens_with_words(lines[a:b]):
            opened = True
            break
        if _is_heading(lines[a:b]):
            continue  # a title may quote the error ("# NCCL WARN NET/IB : Got completion ...")
        if b - a > 6 or any(LOG_LINE.match(ln) or len(ln) > 100 for ln in lines[a:b]):
            break
    if not opened:
        return []
    spans: list[tuple[int, int]] = []
    run: tuple[int, int] | None = None
    for a, b in paras:
        part = lines[a:b]
        if _is_words(part) or _is_label(part):
            if run is not None:
                spans.append(run)
                run = None
            continue
        run = (run[0], b) if run is not None else (a, b)
    if run is not None:
        spans.append(run)
    return spans


def post_spans(lines: Sequence[str]) -> list[tuple[int, int]]:
    """The spans of pasted output when ``lines`` are a post, else []: two or more non-empty
    fenced blocks; code blocks (fenced or indented) beside a sentence of the user's; or, with no
    Markdown at all, output between paragraphs of words (:func:`plain_spans`). Indented lines
    alone never make a post: ``lspci -vvv``, ``ibstat`` and ``nvidia-smi -q`` indent their own
    lines, and their output is one tool's."""
    head = lines[:MAX_SCAN]
    fences = any(ln.lstrip().startswith(_FENCE) for ln in head)
    marked = fences or any(ln.startswith(("    ", "\t")) for ln in head)
    if marked and not fences and not _words_outside(head, ()):
        # indented blocks count only beside the user's words; with no sentence anywhere (a tool
        # that indents its own lines) the Markdown parse cannot change the answer
        marked = False
    spans = [(a, b) for a, b in code_spans(lines) if any(ln.strip() for ln in lines[a:b])] if marked else []
    fenced = [sp for sp in spans if sp[0] > 0 and lines[sp[0] - 1].lstrip().startswith(_FENCE)]
    if len(fenced) >= 2 or (fenced and _words_outside(head, spans)):
        return sorted(spans + unfenced_spans(lines, spans))
    if fences:
        return []  # Markdown without the user's words around its one block: that block's tool's
    if spans and _words_outside(head, spans) and _only_words_outside(head, spans):
        return spans  # a forum post's four-space blocks
    return plain_spans(lines)


#: an output pasted outside the fences of a Markdown post is taken from this many lines on (a
#: shorter run is a list of versions or settings, which the prose reader reads as the user's)
UNFENCED_MIN_LINES = 6


def unfenced_spans(lines: Sequence[str], spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Output pasted outside the code blocks of a Markdown post: an issue template's fence closed
    too early (```` ```text ````, its caption, ```` ``` ````, then the report). Runs of paragraphs
    outside the blocks that are neither words nor captions, of :data:`UNFENCED_MIN_LINES` lines
    or more, as :func:`plain_spans` finds them in a post without Markdown."""
    inside = {i for a, b in spans for i in range(max(0, a - 1), b + 1)}  # with the fence lines
    rest = ["" if i in inside or ln.lstrip().startswith(_FENCE) else ln for i, ln in enumerate(lines[:MAX_SCAN])]
    out: list[tuple[int, int]] = []
    run: tuple[int, int] | None = None
    for a, b in _paragraphs(rest) + [(len(rest), len(rest))]:
        part = rest[a:b]
        if a == b or _is_words(part) or _is_label(part) or _is_markdown_list_or_table(part):
            if run is not None and sum(1 for ln in rest[run[0]:run[1]] if ln.strip()) >= UNFENCED_MIN_LINES:
                out.append(run)
            run = None
            continue
        run = (run[0], b) if run is not None else (a, b)
    return out


_LIST_OR_ROW = lazyre.compile(r"^\s{0,3}(?:[-*+]\s|\d{1,2}[.)]\s|\|)")


def _is_markdown_list_or_table(lines: Sequence[str]) -> bool:
    """A Markdown list or table the user wrote: the prose reader reads it (versions, settings, a
    busbw per node pair), never a tool."""
    body = [ln for ln in lines if ln.strip()]
    return bool(body) and all(_LIST_OR_ROW.match(ln) for ln in body)


def _only_words_outside(lines: Sequence[str], spans: Sequence[tuple[int, int]]) -> bool:
    """Whether every paragraph outside ``spans`` is words or a caption: then the indented blocks
    are the pastes. A tool's own indented lines (an lspci header above its detail lines) leave
    output outside."""
    inside = {i for a, b in spans for i in range(a, b)}
    rest = ["" if i in inside else ln for i, ln in enumerate(lines)]
    return all(_is_words(rest[a:b]) or _is_label(rest[a:b]) for a, b in _paragraphs(rest))
