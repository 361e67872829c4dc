"""/proc/PID/status - File

``cat /proc/<pid>/status`` (whole file) or a grep of it (``grep -E '^(Cpus|Mems)_allowed_list'
/proc/<pid>/status``): ``Key:<TAB>value`` lines, memory keys in ``kB``. Also several processes
in one input: ``grep Cpus_allowed_list /proc/*/status`` (``/proc/<pid>/status:`` prefixes) and
``srun -l grep ... /proc/self/status`` (``N: `` task labels, taken as the rank). A repeated key
starts a new record. Keys vary with the kernel version; unknown keys are ignored.

One ``proc.status`` per process and, when the CPU list is shown, one ``proc.affinity``
(method ``status``).

Sample input::

    Name:	python3
    State:	S (sleeping)
    Pid:	2214097
    VmLck:	       0 kB
    VmPin:	 4202496 kB
    VmRSS:	66328156 kB
    Threads:	187
    Cpus_allowed:	00000000,000000ff,ffffffff,ffff0000,00000000,00ffffff,ffffffff
    Cpus_allowed_list:	0-55,112-167
    Mems_allowed_list:	0-1

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "proc-status"); parse(doc, ctx)
    >>> st, aff = ctx.facts
    >>> st.pid, st.name, st.threads, st.vm_pin_kb, st.mems, len(st.cpus)
    (2214097, 'python3', 187, 4202496, [0, 1], 112)
    >>> aff.method, aff.cpus[55:57], aff.source.line
    ('status', [55, 112], 9)
    >>> sniff(doc) > 0.5
    True
"""

from __future__ import annotations

from dataclasses import dataclass, field

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.process import ProcAffinity, ProcStatus
from clusterdx.facts.parsers._util import cpu_list, hex_mask_cpus


SAMPLE = """\
Name:\tpython3
State:\tS (sleeping)
Pid:\t2214097
VmLck:\t       0 kB
VmPin:\t 4202496 kB
VmRSS:\t66328156 kB
Threads:\t187
Cpus_allowed:\t00000000,000000ff,ffffffff,ffff0000,00000000,00ffffff,ffffffff
Cpus_allowed_list:\t0-55,112-167
Mems_allowed_list:\t0-1
"""

# Keys proc(5) documents across kernel versions; a line must use one to count as status output.
_KNOWN = frozenset("""
Name Umask State Tgid Ngid Pid PPid TracerPid Uid Gid FDSize Groups NStgid NSpid NSpgid NSsid
Kthread VmPeak VmSize VmLck VmPin VmHWM VmRSS RssAnon RssFile RssShmem VmData VmStk VmExe VmLib
VmPTE VmPMD VmSwap HugetlbPages CoreDumping THP_enabled untag_mask Threads SigQ SigPnd ShdPnd
SigBlk SigIgn SigCgt CapInh CapPrm CapEff CapBnd CapAmb NoNewPrivs Seccomp Seccomp_filters
Speculation_Store_Bypass SpeculationIndirectBranch Cpus_allowed Cpus_allowed_list Mems_allowed
Mems_allowed_list voluntary_ctxt_switches nonvoluntary_ctxt_switches x86_Thread_features
x86_Thread_features_locked""".split())
_STRONG = frozenset({"Cpus_allowed", "Cpus_allowed_list", "Mems_allowed_list", "VmRSS", "VmPin",
                     "Tgid", "PPid", "TracerPid", "SigCgt", "CapEff", "voluntary_ctxt_switches"})

_LINE = lazyre.compile(
    r"^\s*(?:(?P<label>\d{1,6}):\s?)?(?:(?P<path>/proc/(?P<ppid>\d+|self|thread-self)(?:/task/\d+)?/status):)?"
    r"(?P<key>[A-Za-z_][A-Za-z0-9_]*):[ \t]*(?P<val>.*?)\s*$"
)
_KB = lazyre.compile(r"^(\d+)\s*kB$")
_CMD_PID = lazyre.compile(r"/proc/(\d+)/status")


@dataclass
class _Record:
    start: int
    label: int | None
    path_pid: int | None
    values: dict[str, tuple[int, str]] = field(default_factory=dict)
    end: int = 0


def _kb(ctx: ParseContext, rec: _Record, key: str) -> int | None:
    if key not in rec.values:
        return None
    i, val = rec.values[key]
    m = _KB.match(val)
    if not m:
        ctx.warn(i, f"{key}: expected '<n> kB', got {val[:40]!r}")
        return None
    return int(m.group(1))


def _int(ctx: ParseContext, rec: _Record, key: str) -> int | None:
    if key not in rec.values:
        return None
    i, val = rec.values[key]
    if not val.isdecimal():
        ctx.warn(i, f"{key}: expected a number, got {val[:40]!r}")
        return None
    return int(val)


def _cpus(ctx: ParseContext, rec: _Record, list_key: str, mask_key: str) -> tuple[list[int], int | None]:
    """CPU (or node) numbers from the list key, else from the hex mask; and the line used."""
    for key, conv in ((list_key, cpu_list), (mask_key, hex_mask_cpus)):
        if key in rec.values:
            i, val = rec.values[key]
            try:
                return conv(val), i
            except (ValueError, ParseError):
                ctx.warn(i, f"{key}: cannot read {val[:60]!r}")
    return [], None


def _records(doc: Document) -> list[_Record]:
    records: list[_Record] = []
    current: dict[tuple[int | None, int | None], _Record] = {}
    for i, line in enumerate(doc.lines):
        m = _LINE.match(line)
        if not m or m.group("key") not in _KNOWN:
            continue
        label = int(m.group("label")) if m.group("label") else None
        ppid = m.group("ppid")
        path_pid = int(ppid) if ppid and ppid.isdecimal() else None
        slot = (label, path_pid)
        rec = current.get(slot)
        key = m.group("key")
        if rec is None or key in rec.values:
            rec = _Record(start=i, label=label, path_pid=path_pid)
            records.append(rec)
            current[slot] = rec
        rec.values[key] = (i, m.group("val"))
        rec.end = i
    return records


def parse(doc: Document, ctx: ParseContext) -> None:
    records = _records(doc)
    if not records:
        raise NotApplicable("no /proc/PID/status keys")
    cmd_pid = None
    if doc.command:
        m = _CMD_PID.search(doc.command)
        cmd_pid = int(m.group(1)) if m else None
    for rec in records:
        pid = _int(ctx, rec, "Pid")
        if pid is None:
            pid = rec.path_pid if rec.path_pid is not None else (cmd_pid if len(records) == 1 else None)
        cpus, cpu_line = _cpus(ctx, rec, "Cpus_allowed_list", "Cpus_allowed")
        mems, _ = _cpus(ctx, rec, "Mems_allowed_list", "Mems_allowed")
        ctx.add(
            ProcStatus, rec.start, rec.end,
            pid=pid,
            name=rec.values.get("Name", (0, ""))[1],
            state=rec.values.get("State", (0, ""))[1].split(" ", 1)[0],
            threads=_int(ctx, rec, "Threads"),
            cpus=cpus,
            mems=mems,
            vm_rss_kb=_kb(ctx, rec, "VmRSS"),
            vm_lck_kb=_kb(ctx, rec, "VmLck"),
            vm_pin_kb=_kb(ctx, rec, "VmPin"),
            hugetlb_kb=_kb(ctx, rec, "HugetlbPages"),
            rank=rec.label,
        )
        if cpu_line is not None:
            ctx.add(ProcAffinity, cpu_line, pid=pid, cpus=cpus, method="status", rank=rec.label)


def sniff(doc: Document) -> float:
    keys: set[str] = set()
    total = hits = 0
    for line in doc.lines[:200]:
        if not line.strip() or line.lstrip().startswith(("$", "#")):
            continue
        total += 1
        m = _LINE.match(line)
        if m and m.group("key") in _KNOWN and "\t" in line or (m and m.group("path")):
            hits += 1
            keys.add(m.group("key"))
    if not hits:
        return 0.0
    strong = len(keys & _STRONG)
    if strong == 0:
        return 0.1
    return min(1.0, 0.3 + 0.1 * strong + 0.4 * hits / total)


FORMATS = [
    Format(
        name="proc-status",
        command="cat /proc/<pid>/status",
        facts=("proc.status", "proc.affinity"),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"/proc/(?:\d+|self|thread-self|\*|\$\w+|\$\$)(?:/task/\S+)?/status\b",),
        description="/proc/PID/status (whole or grep'd): name, threads, allowed CPUs/NUMA nodes, RSS, pinned memory",
    )
]
