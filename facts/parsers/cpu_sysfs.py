"""cpufreq / cpuidle sysfs - Files

Dumps of ``/sys/devices/system/cpu``: ``grep . /sys/devices/system/cpu/cpu*/cpufreq/*``,
``grep . /sys/devices/system/cpu/cpu0/cpuidle/state*/*``, ``grep -r .`` of those folders and
``head`` of several files (``==> path <==``). Each line is ``path:value``; frequencies are in
kHz, latencies and times in us. Lines for other sysfs folders (THP, hugepages) are skipped.
Also the bare value printed by ``cat`` of one such file (``cat .../scaling_governor``,
``cat .../intel_pstate/no_turbo``, ``cat .../cpufreq/boost``, also ``| sort | uniq -c``): only
the command line says which file it was, so that form is recognised by command only.

Yields ``cpu.freq_policy`` per CPU, ``cpu.boost`` per turbo knob, ``cpu.idle_driver``,
``cpu.idle_state`` per CPU and state, and once per input ``cpu.governor_summary`` (when
governors are shown) and ``cpu.idle_summary`` (when idle states are shown, for the first CPU).

Sample input::

    /sys/devices/system/cpu/cpu0/cpufreq/scaling_driver:intel_pstate
    /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor:powersave
    /sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq:3800000
    /sys/devices/system/cpu/cpu0/cpufreq/energy_performance_preference:balance_performance
    /sys/devices/system/cpu/intel_pstate/no_turbo:0
    /sys/devices/system/cpu/cpuidle/current_driver:intel_idle
    /sys/devices/system/cpu/cpu0/cpuidle/state0/name:POLL
    /sys/devices/system/cpu/cpu0/cpuidle/state0/disable:0
    /sys/devices/system/cpu/cpu0/cpuidle/state0/latency:0
    /sys/devices/system/cpu/cpu0/cpuidle/state1/name:C6
    /sys/devices/system/cpu/cpu0/cpuidle/state1/disable:1
    /sys/devices/system/cpu/cpu0/cpuidle/state1/latency:170

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "cpu-sysfs"); parse(doc, ctx)
    >>> by = {f.fact_type: f for f in ctx.facts}
    >>> p = by["cpu.freq_policy"]; (p.cpu, p.driver, p.governor, p.hw_max_mhz, p.epp, p.boost_active)
    (0, 'intel_pstate', 'powersave', 3800.0, 'balance_performance', True)
    >>> b = by["cpu.boost"]; (b.enabled, b.knob, b.source.line)
    (True, 'intel_pstate/no_turbo', 5)
    >>> s = by["cpu.idle_summary"]; (s.state_count, s.enabled_count, s.deepest_enabled, s.any_disabled)
    (2, 1, 'POLL', True)
    >>> g = by["cpu.governor_summary"]; (g.governors, g.all_performance, g.epps)
    (['powersave'], False, ['balance_performance'])
    >>> sniff(doc)
    0.9
    >>> doc = Document.from_text("performance\\n", command="cat /sys/devices/system/cpu/cpu3/cpufreq/scaling_governor")
    >>> ctx = ParseContext(doc, "cpu-sysfs"); parse(doc, ctx)
    >>> [(f.fact_type, getattr(f, "governor", None)) for f in ctx.facts]
    [('cpu.freq_policy', 'performance'), ('cpu.governor_summary', None)]
"""

from __future__ import annotations

import re

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.cpu import CpuBoost, CpuFreqPolicy, CpuGovernorSummary, CpuIdleDriver, CpuIdleState
from clusterdx.facts.parsers.cpupower import add_idle_summary


SAMPLE = """\
/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver:intel_pstate
/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor:powersave
/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq:3800000
/sys/devices/system/cpu/cpu0/cpufreq/energy_performance_preference:balance_performance
/sys/devices/system/cpu/intel_pstate/no_turbo:0
/sys/devices/system/cpu/cpuidle/current_driver:intel_idle
/sys/devices/system/cpu/cpu0/cpuidle/state0/name:POLL
/sys/devices/system/cpu/cpu0/cpuidle/state0/disable:0
/sys/devices/system/cpu/cpu0/cpuidle/state0/latency:0
/sys/devices/system/cpu/cpu0/cpuidle/state1/name:C6
/sys/devices/system/cpu/cpu0/cpuidle/state1/disable:1
/sys/devices/system/cpu/cpu0/cpuidle/state1/latency:170
"""

_CPU_ROOT = "/sys/devices/system/cpu/"
_PATH_VALUE = lazyre.compile(r"^\s*(/sys/[^:\s]+):(.*)$")
_HEAD = lazyre.compile(r"^==> (/sys/\S+) <==$")
_FREQ_FILE = lazyre.compile(r"^(?:cpu(\d{1,6})/cpufreq|cpufreq/policy(\d{1,6}))/(\w+)$")
_IDLE_FILE = lazyre.compile(r"^cpu(\d{1,6})/cpuidle/state(\d{1,3})/(\w+)$")
_UNIQ = lazyre.compile(r"^\s*(\d{1,9})\s+(\S+)\s*$")
_CMD_PATH = lazyre.compile(r"\b(?:cat|head|tail)\b(?:\s+-\S+)*\s+(/sys/devices/system/cpu/\S+)")
_KHZ = {"cpuinfo_min_freq": "hw_min_mhz", "cpuinfo_max_freq": "hw_max_mhz", "scaling_min_freq": "policy_min_mhz",
        "scaling_max_freq": "policy_max_mhz", "base_frequency": "base_mhz",
        "cpuinfo_cur_freq": "cur_hw", "scaling_cur_freq": "cur_kernel"}
_TEXT = {"scaling_driver": "driver", "scaling_governor": "governor", "energy_performance_preference": "epp"}


def sniff(doc: Document) -> float:
    lines = [ln for ln in doc.lines[:200] if ln.strip()]
    if not lines:
        return 0.0
    cpu_lines = sum(1 for ln in lines if ln.lstrip().startswith(_CPU_ROOT) and _PATH_VALUE.match(ln))
    sys_lines = sum(1 for ln in lines if _PATH_VALUE.match(ln) or _HEAD.match(ln))
    if cpu_lines and sys_lines >= 0.5 * len(lines):
        return 0.9
    return 0.0


def parse(doc: Document, ctx: ParseContext) -> None:
    entries = _path_values(doc, ctx)
    if not entries:
        if doc.command and (m := _CMD_PATH.search(doc.command)):
            _bare_values(m.group(1), doc, ctx)
            return
        raise NotApplicable("no /sys/devices/system/cpu path:value lines")
    _emit(entries, ctx)


def _path_values(doc: Document, ctx: ParseContext) -> list[tuple[str, str, int]]:
    entries: list[tuple[str, str, int]] = []
    pending: str | None = None
    for i, line in enumerate(doc.lines):
        if not line.strip():
            continue
        if m := _HEAD.match(line.strip()):
            pending = m.group(1)
            continue
        if pending is not None:
            entries.append((pending, line.strip(), i))
            pending = None
            continue
        if m := _PATH_VALUE.match(line):
            entries.append((m.group(1), m.group(2).strip(), i))
        elif entries or line.lstrip().startswith(("grep:", "cat:", "head:")):
            ctx.warn(i, f"not a sysfs path:value line: {line.strip()[:80]!r}")
    return [(p[len(_CPU_ROOT):], v, i) for p, v, i in entries if p.startswith(_CPU_ROOT)]


def _khz(value: str) -> float | None:
    return int(value) / 1000.0 if re.fullmatch(r"[0-9]{1,12}", value) else None


def _emit(entries: list[tuple[str, str, int]], ctx: ParseContext) -> None:
    freq: dict[int, dict] = {}
    idle: dict[int, dict[int, dict]] = {}
    boosts: list[tuple[bool, str, int]] = []
    driver = governor = ""
    driver_line: int | None = None
    for rel, value, i in entries:
        if m := _IDLE_FILE.match(rel):
            cpu, state, name = int(m.group(1)), int(m.group(2)), m.group(3)
            st = idle.setdefault(cpu, {}).setdefault(state, {"line": i, "end": i})
            st["end"] = i
            _idle_field(st, name, value, i, ctx)
        elif m := _FREQ_FILE.match(rel):
            cpu, name = int(m.group(1) or m.group(2)), m.group(3)
            pol = freq.setdefault(cpu, {"line": i, "end": i})
            pol["end"] = i
            if name in _KHZ:
                mhz = _khz(value)
                if mhz is None and value != "<unknown>":
                    ctx.warn(i, f"{name} is not a kHz number: {value[:40]!r}")
                pol[_KHZ[name]] = mhz
            elif name in _TEXT:
                pol[_TEXT[name]] = value
            elif name == "scaling_available_governors":
                pol["available_governors"] = value.split()
        elif rel in ("intel_pstate/no_turbo", "cpufreq/boost"):
            if value not in ("0", "1"):
                ctx.warn(i, f"{rel} should be 0 or 1, not {value[:40]!r}")
                continue
            # no_turbo=1 means turbo off; boost=1 means turbo on
            boosts.append(((value == "0") == (rel == "intel_pstate/no_turbo"), rel, i))
        elif rel == "cpuidle/current_driver":
            driver, driver_line = value, i
        elif rel in ("cpuidle/current_governor", "cpuidle/current_governor_ro"):
            governor = governor or value
    boost_on = boosts[-1][0] if boosts else None
    for enabled, knob, i in boosts:
        ctx.add(CpuBoost, i, enabled=enabled, knob=knob)
    for cpu in sorted(freq):
        p = freq[cpu]
        ctx.add(
            CpuFreqPolicy, p["line"], p["end"], cpu=cpu, driver=p.get("driver", ""),
            governor=p.get("governor", ""), available_governors=p.get("available_governors", []),
            hw_min_mhz=p.get("hw_min_mhz"), hw_max_mhz=p.get("hw_max_mhz"),
            policy_min_mhz=p.get("policy_min_mhz"), policy_max_mhz=p.get("policy_max_mhz"),
            base_mhz=p.get("base_mhz"), current_mhz=p.get("cur_hw", p.get("cur_kernel")),
            boost_active=boost_on, epp=p.get("epp", ""),
        )
    governed = [freq[c] for c in sorted(freq) if freq[c].get("governor")]
    if governed:
        _governor_summary(ctx, [p["governor"] for p in governed], [p.get("epp", "") for p in governed],
                          governed[0]["line"], governed[-1]["end"])
    first_cpu = min(idle) if idle else None
    if driver_line is not None:
        count = len(idle[first_cpu]) if first_cpu is not None else None
        ctx.add(CpuIdleDriver, driver_line, cpu=None, driver=driver, governor=governor, state_count=count)
    for cpu in sorted(idle):
        for index in sorted(idle[cpu]):
            st = idle[cpu][index]
            ctx.add(
                CpuIdleState, st["line"], st["end"], cpu=cpu, state_index=index,
                name=st.get("name", f"state{index}"), latency_us=st.get("latency_us"),
                residency_us=st.get("residency_us"), disabled=st.get("disabled", False),
                usage=st.get("usage"), time_us=st.get("time_us"), description=st.get("description", ""),
            )
    if first_cpu is not None:
        states = [dict(idle[first_cpu][k], name=idle[first_cpu][k].get("name", f"state{k}"),
                       disabled=idle[first_cpu][k].get("disabled", False)) for k in sorted(idle[first_cpu])]
        add_idle_summary(ctx, first_cpu, states, states[0]["line"], max(s["end"] for s in states),
                         any_disabled=any(s.get("disabled") for c in idle.values() for s in c.values()))
    if not (freq or idle or boosts or driver_line is not None):
        raise NotApplicable("no cpufreq, cpuidle or turbo files in the dump")


def _idle_field(st: dict, name: str, value: str, i: int, ctx: ParseContext) -> None:
    if name == "name":
        st["name"] = value
    elif name == "desc":
        st["description"] = value
    elif name == "disable":
        if value in ("0", "1"):
            st["disabled"] = value == "1"
        else:
            ctx.warn(i, f"disable should be 0 or 1, not {value[:40]!r}")
    elif name in ("latency", "residency", "time", "usage"):
        if not re.fullmatch(r"[0-9]{1,20}", value):
            ctx.warn(i, f"{name} is not a number: {value[:40]!r}")
        elif name == "usage":
            st["usage"] = int(value)
        else:
            st[{"latency": "latency_us", "residency": "residency_us", "time": "time_us"}[name]] = float(value)


def _governor_summary(ctx: ParseContext, governors: list[str], epps: list[str], line: int, end: int,
                      cpu_count: int | None = None) -> None:
    distinct = sorted(set(governors))
    ctx.add(CpuGovernorSummary, line, end, governors=distinct, all_performance=distinct == ["performance"],
            cpu_count=len(governors) if cpu_count is None else cpu_count, epps=sorted({e for e in epps if e}))


def _bare_values(path: str, doc: Document, ctx: ParseContext) -> None:
    """Output of ``cat`` of one sysfs file (or a glob of one file per CPU), named by the command."""
    values: list[tuple[str, int]] = []
    counts: list[int] = []  # "| uniq -c" folds CPUs with the same value into one line
    for i, line in enumerate(doc.lines):
        s = line.strip()
        if not s:
            continue
        if m := _UNIQ.match(s):
            values.append((m.group(2), i))
            counts.append(int(m.group(1)))
        elif len(s.split()) == 1:
            values.append((s, i))
            counts.append(1)
        else:
            ctx.warn(i, f"expected one value per line: {s[:80]!r}")
    if not values:
        raise NotApplicable("no values")
    rel = path[len(_CPU_ROOT):]
    concrete = re.fullmatch(r"cpu(\d{1,6})/cpufreq/(\w+)", rel)
    name = rel.rsplit("/", 1)[-1]
    first, last = values[0][1], values[-1][1]
    if rel in ("intel_pstate/no_turbo", "cpufreq/boost"):
        value, i = values[0]
        if value not in ("0", "1"):
            raise NotApplicable(f"{rel} value {value[:20]!r} is not 0 or 1")
        ctx.add(CpuBoost, i, enabled=(value == "0") == (rel == "intel_pstate/no_turbo"), knob=rel)
    elif concrete and name in _TEXT:
        ctx.add(CpuFreqPolicy, first, cpu=int(concrete.group(1)), **{_TEXT[name]: values[0][0]})
        if name == "scaling_governor":
            _governor_summary(ctx, [values[0][0]], [], first, first)
    elif name == "scaling_governor":
        _governor_summary(ctx, [v for v, _ in values], [], first, last, cpu_count=sum(counts))
    elif rel == "cpuidle/current_driver":
        ctx.add(CpuIdleDriver, first, driver=values[0][0])
    else:
        # e.g. EPP of every CPU via a glob: the values cannot be tied to CPUs
        raise NotApplicable(f"values of {rel} cannot be attributed without their paths")


FORMATS = [
    Format(
        name="cpu-sysfs",
        command="grep . /sys/devices/system/cpu/cpu*/cpufreq/* /sys/devices/system/cpu/cpu0/cpuidle/state*/*",
        facts=("cpu.freq_policy", "cpu.boost", "cpu.governor_summary", "cpu.idle_driver", "cpu.idle_state",
               "cpu.idle_summary"),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\b(?:grep|cat|head|tail)\b.*\s/sys/devices/system/cpu/",),
        description="cpufreq / cpuidle / turbo sysfs files (grep . path dump, or cat of one file)",
    )
]
