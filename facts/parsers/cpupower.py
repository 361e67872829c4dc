"""cpupower frequency-info / cpupower idle-info - Commands

``cpupower frequency-info`` prints, per analysed CPU (``analyzing CPU 37:``, the CPU the tool ran
on unless ``-c`` says otherwise), two-space indented ``key: value`` lines: the scaling driver,
hardware limits, governors, the current policy (whose governor sits on a continuation line),
the current frequency (asked from the hardware and from the kernel) and the boost state.
Frequencies auto-scale (``81.0 MHz``, ``3.44 GHz``). Without a cpufreq driver (VMs) it says
``no or unknown cpufreq driver is active on this CPU`` and ``Not Available``.

``cpupower idle-info`` prints the cpuidle driver and governor, then per CPU the number of idle
states and a block per state (``C6 (DISABLED) :``, ``Latency:``, ``Residency:`` (newer versions),
``Usage:``, ``Duration:``); ``CPU 0: No idle states`` when no idle driver is loaded. State names
may contain spaces (``haltpoll idle``), so state blocks are found by their ``NAME:`` headers,
not by splitting ``Available idle states``.

Sample input (frequency-info)::

    analyzing CPU 37:
      driver: intel_pstate
      energy performance preference: balance_performance
      hardware limits: 800 MHz - 3.80 GHz
      available cpufreq governors: performance powersave
      current policy: frequency should be within 800 MHz and 3.80 GHz.
                      The governor "powersave" may decide which speed to use
                      within this range.
      current CPU frequency: 2.07 GHz (asserted by call to kernel)
      boost state support:
        Supported: yes
        Active: yes

Sample input (idle-info)::

    CPUidle driver: intel_idle
    CPUidle governor: menu
    analyzing CPU 0:

    Number of idle states: 2
    Available idle states: POLL C6
    POLL:
    Flags/Description: CPUIDLE CORE POLL IDLE
    Latency: 0
    Usage: 1840532
    Duration: 612088431
    C6 (DISABLED) :
    Flags/Description: MWAIT 0x20
    Latency: 170
    Residency: 650
    Usage: 4102
    Duration: 3308771

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE_FREQ)
    >>> ctx = ParseContext(doc, "cpupower-frequency-info"); parse_frequency_info(doc, ctx)
    >>> p = ctx.facts[0]
    >>> (p.cpu, p.driver, p.governor, p.epp, p.hw_min_mhz, p.hw_max_mhz, p.current_mhz, p.boost_active)
    (37, 'intel_pstate', 'powersave', 'balance_performance', 800.0, 3800.0, 2070.0, True)
    >>> s = ctx.facts[1]; (s.fact_type, s.governors, s.all_performance)
    ('cpu.governor_summary', ['powersave'], False)
    >>> doc = Document.from_text(SAMPLE_IDLE)
    >>> ctx = ParseContext(doc, "cpupower-idle-info"); parse_idle_info(doc, ctx)
    >>> [(f.name, f.latency_us, f.disabled, f.source.line) for f in ctx.facts if f.fact_type == "cpu.idle_state"]
    [('POLL', 0.0, False, 7), ('C6', 170.0, True, 12)]
    >>> s = ctx.facts[-1]; (s.state_count, s.enabled_count, s.deepest_enabled, s.any_disabled)
    (2, 1, 'POLL', True)
    >>> sniff_frequency_info(Document.from_text(SAMPLE_FREQ)), sniff_idle_info(doc)
    (0.95, 0.95)
"""

from __future__ import annotations

import re

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable
from clusterdx.facts.coverage import WHOLE
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.cpu import (
    CpuFreqPolicy,
    CpuGovernorSummary,
    CpuIdleDriver,
    CpuIdleState,
    CpuIdleSummary,
)


SAMPLE_FREQ = """\
analyzing CPU 37:
  driver: intel_pstate
  energy performance preference: balance_performance
  hardware limits: 800 MHz - 3.80 GHz
  available cpufreq governors: performance powersave
  current policy: frequency should be within 800 MHz and 3.80 GHz.
                  The governor "powersave" may decide which speed to use
                  within this range.
  current CPU frequency: 2.07 GHz (asserted by call to kernel)
  boost state support:
    Supported: yes
    Active: yes
"""

SAMPLE_IDLE = """\
CPUidle driver: intel_idle
CPUidle governor: menu
analyzing CPU 0:

Number of idle states: 2
Available idle states: POLL C6
POLL:
Flags/Description: CPUIDLE CORE POLL IDLE
Latency: 0
Usage: 1840532
Duration: 612088431
C6 (DISABLED) :
Flags/Description: MWAIT 0x20
Latency: 170
Residency: 650
Usage: 4102
Duration: 3308771
"""

_ANALYZING = lazyre.compile(r"^\s*analyzing CPU (\d{1,6}):\s*$")
_FREQ = lazyre.compile(r"(\d{1,9}(?:\.\d{1,6})?)\s*(GHz|MHz|kHz|KHz|Hz)\b")
_SCALE = {"GHz": 1000.0, "MHz": 1.0, "kHz": 0.001, "KHz": 0.001, "Hz": 1e-6}
_KV = lazyre.compile(r"^\s*([A-Za-z][\w /()-]{0,80}?)\s*:\s*(.*?)\s*$")
_GOVERNOR = lazyre.compile(r'^\s*The governor "([^"]*)" may decide')
_PROMPT = lazyre.compile(r"^\s*(?:\[[^\]]*\]\s*)?\S*[$#%>]\s*(?:sudo\s+)?cpupower\b")
# lines cpupower prints that carry nothing the facts need
_FREQ_NOISE = lazyre.compile(
    r"^(?:\s*(?:within this range\.|Not Available|Unable to determine current policy)\s*$|\s*Pstate-P\d+:"
    r"|.*max turbo \d+ active cores?\s*$|.*\bno or unknown cpufreq driver\b)"
)


def _mhz(text: str) -> float | None:
    m = _FREQ.search(text)
    return float(m.group(1)) * _SCALE[m.group(2)] if m else None


def _yes(text: str) -> bool | None:
    t = text.strip().lower()
    return True if t == "yes" else False if t == "no" else None


def _is_prompt(line: str) -> bool:
    return bool(_PROMPT.match(line))


# --- frequency-info -------------------------------------------------------------------------

def sniff_frequency_info(doc: Document) -> float:
    head = doc.lines[:200]
    if not any(_ANALYZING.match(ln) for ln in head):
        return 0.0
    keys = ("driver:", "hardware limits:", "cpufreq governors:", "no or unknown cpufreq driver",
            "current policy:", "boost state support:")
    hits = sum(1 for ln in head if any(k in ln for k in keys))
    if any(ln.lstrip().startswith("CPUidle driver:") for ln in head[:20]):
        return 0.0
    return 0.95 if hits >= 2 else 0.5 if hits else 0.2


def parse_frequency_info(doc: Document, ctx: ParseContext) -> None:
    blocks: list[dict] = []
    in_boost = False
    for i, line in enumerate(doc.lines):
        if not line.strip():
            continue
        if m := _ANALYZING.match(line):
            blocks.append({"cpu": int(m.group(1)), "line": i, "end": i, "fields": {}})
            in_boost = False
            continue
        if not blocks:
            if _is_prompt(line):
                continue
            if not (_KV.match(line) or _GOVERNOR.match(line)) or (doc.coverage or WHOLE).complete:
                ctx.warn(i, f"before any 'analyzing CPU': {line.strip()[:80]!r}")
                continue
            # an excerpt without its 'analyzing CPU N:' line (``cpupower frequency-info | grep
            # governor``): the CPU is the command's -c N, else -1 (not shown)
            cm = re.search(r"\s-c\s*(\d{1,6})\b", doc.command or "")
            blocks.append({"cpu": int(cm.group(1)) if cm else -1, "line": i, "end": i, "fields": {},
                           "excerpt": True})
        block = blocks[-1]
        block["end"] = i
        fields = block["fields"]
        if "no or unknown cpufreq driver" in line:
            fields["driver"] = ""
            continue
        if m := _GOVERNOR.match(line):
            fields["governor"] = m.group(1)
            continue
        if _FREQ_NOISE.match(line):
            continue
        m = _KV.match(line)
        if not m:
            # older cpupower: "current CPU frequency is 2.07 GHz (asserted by call to hardware)."
            if line.strip().startswith("current CPU frequency is"):
                _current(fields, line)
            else:
                ctx.warn(i, f"unexpected line: {line.strip()[:80]!r}")
            continue
        key, value = m.group(1).strip().lower(), m.group(2)
        if key == "boost state support":
            in_boost = True
            fields["boost_seen"] = True
        elif in_boost and key == "supported":
            fields["boost_supported"] = _yes(value)
        elif in_boost and key == "active":
            fields["boost_active"] = _yes(value)
        elif key == "driver":
            fields["driver"] = value
        elif key == "energy performance preference":
            fields["epp"] = value
        elif key == "hardware limits":
            parts = value.split(" - ")
            if len(parts) == 2:
                fields["hw_min_mhz"], fields["hw_max_mhz"] = _mhz(parts[0]), _mhz(parts[1])
        elif key == "available cpufreq governors":
            if value.lower() != "not available":
                fields["available_governors"] = value.split()
        elif key == "current policy":
            m2 = re.search(r"within (.+?) and (.+?)\.?$", value)
            if m2:
                fields["policy_min_mhz"], fields["policy_max_mhz"] = _mhz(m2.group(1)), _mhz(m2.group(2))
        elif key == "current cpu frequency":
            _current(fields, line)
        # cpupower grows keys over versions (amd-pstate, latency, frequency steps): not needed here

    if not blocks:
        raise NotApplicable("no 'analyzing CPU N:' block")
    for block in blocks:
        f = block["fields"]
        ctx.add(
            CpuFreqPolicy, block["line"], block["end"],
            cpu=block["cpu"], driver=f.get("driver", ""), governor=f.get("governor", ""),
            available_governors=f.get("available_governors", []),
            hw_min_mhz=f.get("hw_min_mhz"), hw_max_mhz=f.get("hw_max_mhz"),
            policy_min_mhz=f.get("policy_min_mhz"), policy_max_mhz=f.get("policy_max_mhz"),
            current_mhz=f.get("current_hw", f.get("current_kernel")),
            boost_supported=f.get("boost_supported"), boost_active=f.get("boost_active"),
            epp=f.get("epp", ""),
        )
    last = blocks[-1]
    # plain frequency-info always ends with the boost block; its absence means the paste was cut
    if not last["fields"].get("boost_seen") and not (doc.command and re.search(r"frequency-info\s+-", doc.command)) \
            and (doc.coverage or WHOLE).believes_absence("  boost state support:"):
        ctx.warn(last["end"], "output ends before 'boost state support' (truncated?)")
    governed = [b for b in blocks if b["fields"].get("governor")]
    if governed:
        governors = sorted({b["fields"]["governor"] for b in governed})
        epps = sorted({b["fields"]["epp"] for b in governed if b["fields"].get("epp")})
        ctx.add(
            CpuGovernorSummary, governed[0]["line"], governed[-1]["end"],
            governors=governors, all_performance=governors == ["performance"],
            cpu_count=len(governed), epps=epps,
        )


def _current(fields: dict, line: str) -> None:
    mhz = _mhz(line)
    if mhz is None:
        return
    # the hardware reading (cpuinfo_cur_freq) is the real clock; the kernel one may be an average
    fields["current_hw" if "hardware" in line else "current_kernel"] = mhz


# --- idle-info ------------------------------------------------------------------------------

_IDLE_KEYS = {"flags/description": "description", "latency": "latency_us", "residency": "residency_us",
              "usage": "usage", "duration": "time_us"}
_STATE_HEADER = lazyre.compile(r"^\s*(\S.{0,60}?)\s*(\(DISABLED\))?\s*:\s*$")
_NO_STATES = lazyre.compile(r"^\s*CPU (\d{1,6}): No idle states\s*$")
_NUMBER = lazyre.compile(r"^[0-9]{1,20}$")


def sniff_idle_info(doc: Document) -> float:
    head = doc.lines[:200]
    keys = ("CPUidle driver:", "CPUidle governor:", "Number of idle states:", "Available idle states:",
            "Could not determine cpuidle driver")
    hits = sum(1 for ln in head if ln.lstrip().startswith(keys))
    if hits >= 2 or (hits and any(_NO_STATES.match(ln) for ln in head)):
        return 0.95
    return 0.5 if hits else 0.0


def parse_idle_info(doc: Document, ctx: ParseContext) -> None:
    driver = governor = ""
    driver_line: int | None = None
    blocks: list[dict] = []
    for i, line in enumerate(doc.lines):
        s = line.strip()
        if not s:
            continue
        if s.startswith("CPUidle driver:"):
            driver, driver_line = s.split(":", 1)[1].strip(), i
            continue
        if s.startswith("CPUidle governor:"):
            governor = s.split(":", 1)[1].strip()
            continue
        if s.startswith("Could not determine cpuidle"):
            continue
        if m := _ANALYZING.match(line):
            blocks.append({"cpu": int(m.group(1)), "line": i, "end": i, "count": None,
                           "available": [], "states": []})
            continue
        if m := _NO_STATES.match(line):
            if not blocks or blocks[-1]["cpu"] != int(m.group(1)):
                blocks.append({"cpu": int(m.group(1)), "line": i, "end": i, "count": None,
                               "available": [], "states": []})
            blocks[-1]["count"], blocks[-1]["end"] = 0, i
            continue
        if not blocks:
            if not _is_prompt(line):
                ctx.warn(i, f"before any 'analyzing CPU': {s[:80]!r}")
            continue
        block = blocks[-1]
        block["end"] = i
        key, _, value = s.partition(":")
        key_l = key.strip().lower()
        if key_l == "number of idle states":
            block["count"] = int(value) if _NUMBER.match(value.strip()) else None
        elif key_l == "available idle states":
            block["available"] = value.split()
        elif key_l in _IDLE_KEYS and block["states"]:
            _state_field(block["states"][-1], _IDLE_KEYS[key_l], value.strip(), i, ctx)
        elif m := _STATE_HEADER.match(line):
            block["states"].append({"name": m.group(1), "disabled": bool(m.group(2)), "line": i, "end": i})
        else:
            ctx.warn(i, f"unexpected line: {s[:80]!r}")

    if not blocks:
        if driver_line is None:
            raise NotApplicable("no cpuidle driver line and no 'analyzing CPU N:' block")
        ctx.add(CpuIdleDriver, driver_line, driver=driver, governor=governor)
        return
    for block in blocks:
        states = block["states"]
        # "cpupower idle-info -s" lists names only; trust them only when they add up
        if not states and block["count"] and len(block["available"]) == block["count"]:
            states = [{"name": n, "disabled": False, "line": block["line"], "end": block["line"]}
                      for n in block["available"]]
            block["states"] = states
        count = len(states) if states else block["count"]
        ctx.add(CpuIdleDriver, driver_line if driver_line is not None else block["line"], block["end"],
                cpu=block["cpu"], driver=driver, governor=governor, state_count=count)
        if block["count"] is not None and states and len(states) < block["count"]:
            ctx.warn(block["end"], f"{block['count']} idle states announced, {len(states)} shown (truncated?)")
        for index, st in enumerate(states):
            ctx.add(
                CpuIdleState, st["line"], st["end"], cpu=block["cpu"], state_index=index, name=st["name"],
                latency_us=st.get("latency_us"), residency_us=st.get("residency_us"),
                disabled=st["disabled"], usage=st.get("usage"), time_us=st.get("time_us"),
                description=st.get("description", ""),
            )
    first = next((b for b in blocks if b["states"] or b["count"] == 0), None)
    # the summary counts enabled states: an excerpt must have been able to show every state header
    cov = doc.coverage or WHOLE
    if first is not None and not (cov.believes_absence("C6 (DISABLED) :") and cov.believes_absence("POLL:")):
        ctx.warn(first["line"], "excerpt that could not show every idle state: no cpu.idle_summary")
        first = None
    if first is not None:
        add_idle_summary(ctx, first["cpu"], first["states"], first["line"], first["end"],
                         any_disabled=any(st["disabled"] for b in blocks for st in b["states"]))


def _state_field(state: dict, field: str, value: str, i: int, ctx: ParseContext) -> None:
    state["end"] = i
    if field == "description":
        state[field] = value
    elif _NUMBER.match(value):
        state[field] = int(value) if field == "usage" else float(value)
    else:
        ctx.warn(i, f"bad {field} value {value[:40]!r}")


def add_idle_summary(ctx: ParseContext, cpu: int, states: list[dict], line: int, end: int,
                     any_disabled: bool) -> None:
    """One ``cpu.idle_summary`` for a CPU's states (dicts with name, disabled, latency_us)."""
    enabled = [st for st in states if not st["disabled"]]
    latencies = [st["latency_us"] for st in enabled if st.get("latency_us") is not None]
    ctx.add(
        CpuIdleSummary, line, end, cpu=cpu, state_count=len(states), enabled_count=len(enabled),
        deepest_enabled=enabled[-1]["name"] if enabled else "", any_disabled=any_disabled,
        max_latency_us=max(latencies) if latencies else None,
    )


FORMATS = [
    Format(
        name="cpupower-frequency-info",
        command="cpupower frequency-info",
        facts=("cpu.freq_policy", "cpu.governor_summary"),
        sniff=sniff_frequency_info,
        parse=parse_frequency_info,
        command_patterns=(r"\bcpupower\b.*\bfrequency-info\b",),
        description="cpupower frequency-info: cpufreq driver, governor, EPP, limits, boost",
    ),
    Format(
        name="cpupower-idle-info",
        command="cpupower idle-info",
        facts=("cpu.idle_driver", "cpu.idle_state", "cpu.idle_summary"),
        sniff=sniff_idle_info,
        parse=parse_idle_info,
        command_patterns=(r"\bcpupower\b.*\bidle-info\b",),
        description="cpupower idle-info: cpuidle driver, governor and idle states",
    ),
]
