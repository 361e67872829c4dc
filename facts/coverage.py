"""What an excerpt covers: the filters and cuts of the command line that produced a document.

Tickets paste excerpts: ``lspci -vvv | grep -i acs``, ``dmesg | grep -iE 'iommu|smmu'``,
``ibstat | head -20``. The command in a transcript says which lines of the tool's output could
have reached the paste. :func:`coverage_of` parses such a pipeline into a :class:`Coverage`;
parsers ask it before building a fact from *absence* ("no ACSCtl line, so ACS is off"):

- ``complete`` — nothing was filtered, cut or rewritten (``| cat``, ``| less``, ``2>&1``,
  ``| tee log`` pass everything through);
- ``would_show(line)`` — True when every filter of the pipeline keeps ``line`` (so its absence
  from the paste is real), False when a filter drops it, None when the pipeline cannot say (a cut
  by position such as ``head``/``tail``/``sed -n 'A,Bp'``, ``grep -A``/``-m``, ``awk``, ``cut``, a
  pattern we do not evaluate);
- :meth:`Coverage.believes_absence` — ``would_show(line) is True``: the excerpt would have shown
  such a line, so its absence is a finding.

grep filters understand ``-i``, ``-v``, ``-E``/``egrep``, ``-F``/``fgrep``, ``-w``, ``-x``,
``-e PAT`` (repeated), ``-P`` and combined short options (``-iE``); ``sed -n '/re/p'`` is a grep.
Patterns come from untrusted tickets: a pattern with a quantified group (a possible catastrophic
backtrack) or one that Python cannot compile is not evaluated (``would_show`` None).

Examples:

    >>> c = coverage_of("lspci -vvv | grep -i acs")
    >>> c.complete, c.would_show("\\t\\tACSCtl:\\tSrcValid+ ReqRedir+"), c.would_show("\\t\\tLnkSta:\\tSpeed 32GT/s")
    (False, True, False)
    >>> coverage_of("sudo dmesg -T 2>&1 | less").complete
    True
    >>> c = coverage_of("dmesg | grep -v audit | tail -n 50")
    >>> c.cut, c.would_show("iommu: Default domain type: Translated")
    ('start', None)
    >>> coverage_of("dmesg | grep -E 'DMAR|AMD-Vi|iommu'").believes_absence("AMD-Vi: Interrupt remapping enabled")
    True
    >>> coverage_of(None).complete, coverage_of(None).would_show("x")
    (True, True)
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from clusterdx.facts import lazyre


#: commands that pass their input through unchanged (as far as which lines show)
_PASS = {"cat", "less", "more", "tee", "most", "pv", "col", "expand", "unexpand", "strings"}
#: commands that reorder or deduplicate lines but drop no kind of line
_REORDER = {"sort", "uniq", "tac"}
#: prefixes that run the next word as the command
_WRAPPERS = {"sudo", "doas", "env", "timeout", "nice", "ionice", "stdbuf", "time", "command",
             "exec", "nohup", "chroot"}
_GREPS = {"grep": "G", "egrep": "E", "fgrep": "F", "zgrep": "G", "zegrep": "E", "zfgrep": "F"}
_REDIRECT_OPS = {">", ">>", ">&", "<", "&>", "&>>", "<<", "<<<", ">|"}
_LIST_OPS = {";", "&&", "||", "&"}
#: words that open a command inside a loop or branch (``do ibstat ...``) and control words whose
#: stage prints nothing itself (``for i in 0 1``, ``done``)
_LEADING_KEYWORDS = {"do", "then", "else", "!", "{"}
_CONTROL = {"for", "while", "until", "if", "elif", "case", "done", "fi", "esac", "}", "in"}
#: a quantifier right after a group or a class (``(a+)+``, ``[ab]*{2}``): not evaluated
_RISKY = lazyre.compile(r"\)[*+?{]|\][*+?{][*+?{]")
_MAX_PATTERN = 400
_MAX_LINE = 2048
_POSIX_CLASSES = {
    "[:digit:]": "0-9", "[:alpha:]": "A-Za-z", "[:alnum:]": "A-Za-z0-9", "[:upper:]": "A-Z",
    "[:lower:]": "a-z", "[:space:]": r"\s", "[:blank:]": r" \t", "[:xdigit:]": "0-9A-Fa-f",
    "[:punct:]": r"!-/:-@\[-`{-~", "[:print:]": r"\x20-\x7e", "[:graph:]": r"\x21-\x7e",
    "[:cntrl:]": r"\x00-\x1f",
}


@dataclass(frozen=True)
class LineFilter:
    """One grep-like stage: keeps lines matching any pattern (or none of them with ``invert``)."""

    patterns: tuple[str, ...]
    invert: bool = False
    #: the compiled alternation; None when the patterns could not be evaluated safely
    regex: re.Pattern[str] | None = None
    #: the stage also prints lines it did not select (``grep -A/-B/-C`` context)
    context: bool = False

    def keeps(self, line: str) -> bool | None:
        if self.regex is None:
            return None
        hit = self.regex.search(line[:_MAX_LINE]) is not None
        if self.invert:
            hit = not hit
        if not hit and self.context:
            return None
        return hit


@dataclass(frozen=True)
class Coverage:
    """What part of a tool's output a document can hold; see the module docstring."""

    command: str | None = None
    #: every line of the producer's output can be in the document (no filter, cut or rewrite)
    complete: bool = True
    filters: tuple[LineFilter, ...] = ()
    #: '' | 'start' (tail: the beginning is missing) | 'end' (head, grep -m) | 'both' (sed -n A,Bp)
    cut: str = ""
    #: a stage we cannot judge line by line (awk, cut, sed s///, grep -o/-c/-l, unknown command)
    opaque: bool = False
    notes: tuple[str, ...] = field(default=(), compare=False)

    def would_show(self, line: str) -> bool | None:
        """True: the pipeline keeps a line like ``line``; False: a filter drops it; None: unknown."""
        unknown = self.opaque or bool(self.cut)
        for f in self.filters:
            kept = f.keeps(line)
            if kept is False:
                return False
            if kept is None:
                unknown = True
        return None if unknown else True

    def believes_absence(self, line: str) -> bool:
        """A line like ``line`` missing from the document means the tool did not print it."""
        return self.would_show(line) is True

    @property
    def filtered(self) -> bool:
        return bool(self.filters)


WHOLE = Coverage()


def coverage_of(command: str | None) -> Coverage:
    """The :class:`Coverage` of the output of ``command`` (None or '' -> the whole output)."""
    if not command or not command.strip():
        return WHOLE
    if len(command) > 4000:
        return Coverage(command=command, complete=False, opaque=True, notes=("command too long",))
    try:
        lex = shlex.shlex(command, posix=True, punctuation_chars=True)
        lex.whitespace_split = True
        tokens = list(lex)
    except ValueError:
        return Coverage(command=command, complete=False, opaque=True, notes=("unbalanced quotes",))
    stages: list[list[str]] = [[]]
    #: indexes of the stages that start a pipeline (their command produces the output)
    starts = {0}
    compound = False
    skip = False
    for tok in tokens:
        if skip:
            skip = False
            continue
        if tok in _REDIRECT_OPS:
            if stages[-1] and stages[-1][-1].isdigit():
                stages[-1].pop()  # the '2' of '2>&1'
            skip = True
            continue
        if tok in ("|", "|&"):
            stages.append([])
            continue
        if tok in _LIST_OPS or tok in ("(", ")"):
            compound = True
            starts.add(len(stages))
            stages.append([])
            continue
        stages[-1].append(tok)
    firsts = {id(stages[k]) for k in starts if k < len(stages)}
    stages = [s for s in stages if s]
    filters: list[LineFilter] = []
    cut = set()
    opaque = False
    complete = True
    notes: list[str] = []
    for stage in stages:
        producer = id(stage) in firsts
        while stage and stage[0] in _LEADING_KEYWORDS:
            stage = stage[1:]
        if not stage or stage[0] in _CONTROL:
            continue  # 'for i in 0 1', 'done', 'fi': loop and branch syntax, no output of its own
        words = _unwrap(stage)
        if not words:
            continue
        name = words[0].rsplit("/", 1)[-1]
        if compound and name in ("echo", "printf"):
            continue  # a label a loop prints (see clusterdx.facts.labels), not a filter
        if name in _GREPS:
            flt, grep_cut, grep_opaque = _grep(name, words[1:])
            complete = False
            if flt is not None:
                filters.append(flt)
            if grep_cut:
                cut.add("end")
            opaque = opaque or grep_opaque
            continue
        if name == "sed":
            flt, sed_cut, sed_opaque = _sed(words[1:])
            if flt is None and not sed_cut and not sed_opaque:
                continue
            complete = False
            if flt is not None:
                filters.append(flt)
            if sed_cut:
                cut.add(sed_cut)
            opaque = opaque or sed_opaque
            continue
        if name in ("head", "tail"):
            complete = False
            cut.add("end" if name == "head" else "start")
            continue
        if producer:
            continue  # the command whose output this is
        if name in _PASS:
            continue
        if name in _REORDER:
            complete = False
            continue
        complete = False
        opaque = True
        notes.append(f"{name}: output not judged line by line")
    if compound:
        # 'a; b' or a loop: several outputs in one document; filters still apply to their part
        complete = complete and not filters and not cut
    cut_s = "both" if ("both" in cut or {"start", "end"} <= cut) else (cut.pop() if cut else "")
    return Coverage(command=command, complete=complete and not opaque and not cut_s,
                    filters=tuple(filters), cut=cut_s, opaque=opaque, notes=tuple(notes))


def _unwrap(words: list[str]) -> list[str]:
    """Drop ``sudo``, ``env X=1``, ``timeout 5`` ... in front of the real command."""
    i = 0
    while i < len(words):
        w = words[i]
        base = w.rsplit("/", 1)[-1]
        if "=" in w and not w.startswith("-") and re.match(r"^[A-Za-z_]\w*=", w):
            i += 1
            continue
        if base in _WRAPPERS:
            i += 1
            while i < len(words) and (words[i].startswith("-") or re.fullmatch(r"\d+[smhd]?", words[i])):
                i += 1
            continue
        break
    return words[i:]


def _grep(name: str, args: list[str]) -> tuple[LineFilter | None, bool, bool]:
    """(filter, cut at the end (-m), opaque (-o/-c/-l/-q)) of a grep stage."""
    mode = _GREPS[name]
    icase = invert = word = line = context = False
    cut = opaque = False
    patterns: list[str] = []
    positional: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a == "--":
            positional.extend(args[i:])
            break
        if a.startswith("--"):
            key, _, val = a[2:].partition("=")
            if key in ("regexp", "file") and not val and i < len(args):
                val = args[i]
                i += 1
            if key == "regexp":
                patterns.append(val)
            elif key == "file":
                opaque = True
            elif key == "ignore-case":
                icase = True
            elif key == "invert-match":
                invert = True
            elif key == "extended-regexp":
                mode = "E"
            elif key == "fixed-strings":
                mode = "F"
            elif key == "perl-regexp":
                mode = "P"
            elif key == "basic-regexp":
                mode = "G"
            elif key == "word-regexp":
                word = True
            elif key == "line-regexp":
                line = True
            elif key in ("max-count",):
                cut = True
            elif key in ("after-context", "before-context", "context"):
                context = True
                if not val and i < len(args):
                    i += 1
            elif key in ("only-matching", "count", "files-with-matches", "files-without-match", "quiet"):
                opaque = True
            continue
        if a.startswith("-") and len(a) > 1 and not a[1].isdigit():
            j = 1
            while j < len(a):
                ch = a[j]
                j += 1
                if ch in "eABCmf":
                    val = a[j:] if j < len(a) else (args[i] if i < len(args) else "")
                    if j >= len(a):
                        i += 1
                    j = len(a)
                    if ch == "e":
                        patterns.append(val)
                    elif ch == "f":
                        opaque = True
                    elif ch == "m":
                        cut = True
                    else:
                        context = True
                elif ch == "i" or ch == "y":
                    icase = True
                elif ch == "v":
                    invert = True
                elif ch == "E":
                    mode = "E"
                elif ch == "F":
                    mode = "F"
                elif ch == "G":
                    mode = "G"
                elif ch == "P":
                    mode = "P"
                elif ch == "w":
                    word = True
                elif ch == "x":
                    line = True
                elif ch in "oclLq":
                    opaque = True
            continue
        if a.startswith("-") and a[1:].isdigit():
            context = True  # grep -3: three lines of context
            continue
        positional.append(a)
    if not patterns:
        if not positional:
            return None, cut, True
        patterns = [positional[0]]
    regex = _compile(patterns, mode, icase, word, line)
    return LineFilter(tuple(patterns), invert, regex, context), cut, opaque


def _sed(args: list[str]) -> tuple[LineFilter | None, str, bool]:
    """``sed -n 'A,Bp'`` -> a cut; ``sed -n '/re/p'`` -> a filter; ``sed 's/../../'`` -> opaque."""
    quiet = any(a in ("-n", "--quiet", "--silent") or (a.startswith("-") and not a.startswith("--")
                                                        and "n" in a[1:] and "e" not in a[1:])
                for a in args)
    scripts = [a for a in args if not a.startswith("-")]
    if not scripts:
        return None, "", True
    script = scripts[0].strip()
    if quiet:
        m = re.fullmatch(r"(\d+)(?:,(\d+|\$))?p", script)
        if m:
            start = int(m.group(1))
            end = m.group(2)
            if start <= 1 and end == "$":
                return None, "", False
            return None, ("both" if start > 1 and end != "$" else "start" if start > 1 else "end"), False
        m = re.fullmatch(r"/((?:[^/\\]|\\.){1,%d})/(I?)p" % _MAX_PATTERN, script)
        if m:
            regex = _compile([m.group(1)], "G", bool(m.group(2)), False, False)
            return LineFilter((m.group(1),), False, regex), "", False
        return None, "", True
    m = re.fullmatch(r"(\d+)q", script)
    if m:
        return None, "end", False
    return None, "", True


def _compile(patterns: list[str], mode: str, icase: bool, word: bool, line: bool) -> re.Pattern[str] | None:
    parts = []
    for p in patterns:
        if len(p) > _MAX_PATTERN:
            return None
        for alt in p.split("\n"):
            if mode == "F":
                parts.append(re.escape(alt))
                continue
            py = _to_python(alt, basic=(mode == "G"))
            if py is None:
                return None
            parts.append(py)
    body = "|".join(f"(?:{p})" for p in parts) if parts else "(?!)"
    if word:
        body = rf"(?<!\w)(?:{body})(?!\w)"
    if line:
        body = rf"^(?:{body})$"
    try:
        return re.compile(body, re.I if icase else 0)
    except (re.error, RecursionError, OverflowError):
        return None


def _to_python(p: str, basic: bool) -> str | None:
    """A POSIX basic/extended regex as a Python one; None when it is not safe to evaluate."""
    for cls, py in _POSIX_CLASSES.items():
        p = p.replace(cls, py)
    if basic:
        out = []
        k = 0
        while k < len(p):
            ch = p[k]
            if ch == "\\" and k + 1 < len(p):
                nxt = p[k + 1]
                out.append(nxt if nxt in "|+?(){}" else "\\" + nxt)
                k += 2
                continue
            out.append("\\" + ch if ch in "|+?(){}" else ch)
            k += 1
        p = "".join(out)
    p = p.replace("\\<", r"\b").replace("\\>", r"\b")
    if _RISKY.search(p) or len(re.findall(r"(?<!\\)[*+]", p)) > 3:
        return None
    return p
