"""sysctl - Command

Output of ``sysctl -a`` (or ``sysctl kernel.numa_balancing``) and ``sysctl -n KEY``.
Also ``/etc/sysctl.conf`` style files (``key = value``), ``/proc/sys`` read directly
(``grep -H . /proc/sys/vm/*`` path:value lines, ``head`` ``==> /proc/sys/... <==`` headers, or
``cat /proc/sys/kernel/numa_balancing`` with the key from the command). One fact per key.

Sample input::

    kernel.numa_balancing = 1
    vm.swappiness = 60
    kernel.perf_event_paranoid = 2
    sysctl: permission denied on key 'fs.protected_hardlinks'

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "sysctl"); parse(doc, ctx)
    >>> [(f.key, f.value_num) for f in ctx.facts]
    [('kernel.numa_balancing', 1.0), ('vm.swappiness', 60.0), ('kernel.perf_event_paranoid', 2.0)]
    >>> ctx.facts[0].source.line
    1
    >>> sniff(doc) > 0.5
    True
"""

from __future__ import annotations

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.kernel import Sysctl
from clusterdx.facts.parsers._util import to_number


SAMPLE = """\
kernel.numa_balancing = 1
vm.swappiness = 60
kernel.perf_event_paranoid = 2
sysctl: permission denied on key 'fs.protected_hardlinks'
"""

# key: a name, then one or more [./]-separated parts; written without a nested quantifier (the
# old ``(?:[./][\w.:*-]+)+`` overlapped on "." and took a minute on 68 bytes)
_LINE = lazyre.compile(r"^\s*([a-z][\w-]*[./](?:[\w.:*-]|/(?=[\w.:*-]))+)\s*=\s*((?:.*\S)?)\s*$")
_N_COMMAND = lazyre.compile(r"sysctl\s+(?:-\w+\s+)*-n\s+([\w./-]+)")
#: ``grep -H . /proc/sys/vm/*`` (``path:value``), ``head /proc/sys/...`` (``==> path <==``), and
#: ``cat /proc/sys/kernel/numa_balancing`` (the key from the command)
_PROC_LINE = lazyre.compile(r"^/proc/sys/([\w][\w./-]{0,200}):(.*)$")
_PROC_HEAD = lazyre.compile(r"^==> /proc/sys/([\w][\w./-]{0,200}) <==$")
_CAT_COMMAND = lazyre.compile(r"^\s*(?:sudo\s+)?cat\s+/proc/sys/([\w][\w./-]{0,200})\s*$")


def sniff(doc: Document) -> float:
    lines = [ln for ln in doc.lines[:200] if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        return 0.0
    hits = sum(1 for ln in lines if _LINE.match(ln) and ln.split(".", 1)[0].strip() in _ROOTS)
    procs = sum(1 for ln in lines if _PROC_LINE.match(ln) or _PROC_HEAD.match(ln))
    return max(min(1.0, hits / len(lines)) * 0.9, 0.85 if procs and procs >= 0.5 * len(lines) else 0.0)


_ROOTS = {"kernel", "vm", "net", "fs", "dev", "abi", "debug", "user", "crypto", "sunrpc"}


def parse(doc: Document, ctx: ParseContext) -> None:
    key_from_cmd = None
    if doc.command:
        m = _N_COMMAND.search(doc.command) or _CAT_COMMAND.match(doc.command)
        if m:
            key_from_cmd = m.group(1).replace("/", ".")
    for i, line in enumerate(doc.lines):
        m = _LINE.match(line)
        p = None if m else (_PROC_LINE.match(line) or _PROC_HEAD.match(line))
        if p is not None and p.re is _PROC_HEAD.compiled:
            key_from_cmd = p.group(1).replace("/", ".")
            continue
        if m:
            key, value = m.group(1), m.group(2)
        elif p is not None:
            key, value = p.group(1).replace("/", "."), p.group(2).strip()
        elif key_from_cmd and line.strip():
            key, value = key_from_cmd, line.strip()
            key_from_cmd = None
        else:
            if line.startswith("sysctl:"):
                ctx.warn(i, line.strip())
            continue
        try:
            num = to_number(value)
        except ValueError:
            num = None
        ctx.add(Sysctl, i, key=key, value=value, value_num=num)
    if not ctx.facts:
        raise NotApplicable("no sysctl key = value lines")


FORMATS = [
    Format(
        name="sysctl",
        command="sysctl -a",
        facts=("kernel.sysctl",),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\bsysctl\b", r"^\s*(?:sudo\s+)?cat\s+/proc/sys/"),
        description="sysctl key = value listing (sysctl -a, sysctl KEY, sysctl -n KEY)",
    )
]
