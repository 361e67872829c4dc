"""/proc/cmdline - File

The kernel command line: one line of space-separated ``name`` / ``name=value`` tokens; values may
hold ``=``, ``,`` and ``:`` (``root=UUID=...``, ``isolcpus=managed_irq,domain,2-55``) and double
quotes protect spaces (``dyndbg="file x.c +p"``). Everything after a lone ``--`` belongs to init,
not to the kernel. Several command lines may come in one input, one per line (lines starting
with ``## `` are annotations, not output). Yields ``kernel.cmdline`` per line and
``kernel.boot_param`` per parameter, in order (later duplicates override earlier ones in the
kernel, so rules should take the last).

Sample input::

    BOOT_IMAGE=/boot/vmlinuz-6.8.0-1021-nvidia-64k root=UUID=c0a9 ro iommu.passthrough=1 quiet

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "proc-cmdline"); parse(doc, ctx)
    >>> ctx.facts[0].image
    'vmlinuz-6.8.0-1021-nvidia-64k'
    >>> [(f.name, f.value) for f in ctx.facts[1:]]
    [('BOOT_IMAGE', '/boot/vmlinuz-6.8.0-1021-nvidia-64k'), ('root', 'UUID=c0a9'), ('ro', ''), ('iommu.passthrough', '1'), ('quiet', '')]
    >>> sniff(doc)
    0.9
    >>> split_params('a="x y" "b=1 2" c')
    ['a=x y', 'b=1 2', 'c']
"""

from __future__ import annotations

import re

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable
from clusterdx.facts.coverage import WHOLE
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.kernel import BootParam, Cmdline


SAMPLE = """\
BOOT_IMAGE=/boot/vmlinuz-6.8.0-1021-nvidia-64k root=UUID=c0a9 ro iommu.passthrough=1 quiet
"""

_TOKEN = lazyre.compile(r"^[A-Za-z0-9_][\w.\-]*(?:=.*)?$", re.DOTALL)
_PROMPT = lazyre.compile(r"^\s*(?:\[[^\]]*\]\s*)?\S*[$#%>]\s*(?:sudo\s+)?(?:cat|tr|xargs|echo)\b.*cmdline")
# parameters (almost) every booted kernel has; one of them makes a line a command line
_TYPICAL = {"BOOT_IMAGE", "root", "ro", "rw", "quiet", "console", "init", "rdinit", "initrd", "splash",
            "crashkernel", "earlycon", "panic", "nomodule", "intel_iommu", "iommu", "iommu.passthrough",
            "mitigations", "rootfstype", "systemd.unified_cgroup_hierarchy"}


def split_params(text: str) -> list[str]:
    """Split like the kernel's ``next_arg``: on blanks outside double quotes, quotes dropped."""
    params: list[str] = []
    current: list[str] = []
    quoted = False
    has = False
    for ch in text:
        if ch == '"':
            quoted = not quoted
            has = True
            continue
        if ch.isspace() and not quoted:
            if has:
                params.append("".join(current))
                current, has = [], False
            continue
        current.append(ch)
        has = True
    if has:
        params.append("".join(current))
    return params


def _kernel_part(line: str) -> str:
    # a lone "--" hands the rest to init
    parts = re.split(r"(?:^|\s)--(?:\s|$)", line, maxsplit=1)
    return parts[0]


#: bare flags (no ``=``) a command line commonly carries; any other bare word must look like a
#: parameter name (``nokaslr``, ``usbcore.autosuspend``, ``nohz_full``), not like prose
_FLAGS = {"ro", "rw", "quiet", "splash", "nosplash", "rhgb", "single", "debug", "nomodeset", "pti",
          "noapic", "acpi", "text", "emergency", "rescue"}
_FLAG_SHAPE = re.compile(r"^(?:no[a-z]|[a-z0-9]+[._][a-z0-9])[\w.\-]*$")


#: keys of a logfmt log line (Go's slog/logrus: ``time=... level=DEBUG source=gpu.go:592 msg="..."``),
#: which is name=value tokens too but never a kernel parameter
_LOGFMT = {"time", "level", "msg", "ts", "caller", "logger"}


def _looks_like_cmdline(line: str) -> bool:
    tokens = split_params(_kernel_part(line))
    if not tokens or not all(_TOKEN.match(t) for t in tokens):
        return False
    assigned = [t for t in tokens if "=" in t]
    # "Training hangs at init on 8 GPUs." is all tokens too: a sentence of bare words with a
    # parameter name among them ("init", "root", "quiet") is prose, so every command line needs a
    # name=value and no more words that are not flags than it has assignments (halved)
    prose_like = sum(1 for t in tokens if "=" not in t and t not in _FLAGS and not _FLAG_SHAPE.match(t))
    if not assigned or 2 * prose_like > len(assigned):
        return False
    names = {t.split("=", 1)[0] for t in tokens}
    if names & _LOGFMT:
        return False
    return bool(names & _TYPICAL) or (len(tokens) >= 3 and len(assigned) >= 2)


def sniff(doc: Document) -> float:
    lines = [ln for ln in doc.lines[:200] if ln.strip() and not ln.startswith("## ")]
    if not lines or len(lines) > 20:
        return 0.0
    good = sum(1 for ln in lines if _looks_like_cmdline(ln))
    if good == len(lines):
        return 0.9
    return 0.5 if good and good >= len(lines) - 1 else 0.0


#: ``tr ' ' '\n'``, ``xargs -n1``, ``grep -o``: one parameter per line
_ONE_PER_LINE = lazyre.compile(r"\btr\s+(?:-s\s+)?['\"]?(?:\s|\[:space:\]|\[:blank:\])['\"]?\s+['\"]?\\n|"
                           r"\bxargs\s+-n\s?1\b|\bgrep\s+(?:-\w*o|--only-matching)")


def parse(doc: Document, ctx: ParseContext) -> None:
    cov = doc.coverage or WHOLE
    per_line = bool(doc.command) and bool(_ONE_PER_LINE.search(doc.command or ""))
    for i, line in enumerate(doc.lines):
        if not line.strip() or line.startswith("## "):
            continue
        if per_line and _TOKEN.match(line.strip()) and " " not in line.strip():
            # one parameter per line (``tr ' ' '\n' < /proc/cmdline | grep iommu``): parameters
            # only, no kernel.cmdline (the line is not the whole command line)
            name, _, value = line.strip().partition("=")
            ctx.add(BootParam, i, name=name, value=value)
            continue
        if not _looks_like_cmdline(line):
            if not _PROMPT.match(line):
                ctx.warn(i, f"not a kernel command line: {line.strip()[:80]!r}")
            continue
        raw = line.strip()
        params = split_params(_kernel_part(raw))
        image = ""
        for p in params:
            if p.startswith("BOOT_IMAGE="):
                image = re.split(r"[/)]", p.split("=", 1)[1])[-1]
        if cov.complete:
            # an excerpt (``| grep -o ...``, ``| cut``) proves its parameters, not the whole line
            ctx.add(Cmdline, i, raw=raw, image=image)
        for p in params:
            name, _, value = p.partition("=")
            ctx.add(BootParam, i, name=name, value=value)
    if not ctx.facts:
        raise NotApplicable("no kernel command line")


FORMATS = [
    Format(
        name="proc-cmdline",
        command="cat /proc/cmdline",
        facts=("kernel.cmdline", "kernel.boot_param"),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"/proc/cmdline\b",),
        description="kernel command line (/proc/cmdline)",
    )
]
