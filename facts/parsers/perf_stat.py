"""perf stat - Command

Output of ``perf stat`` (it writes to stderr). Human form: a ``Performance counter stats for
...:`` header, one line per event (``<count> [unit] <event>  # <metric>  (<enabled %>)``), then
``seconds time elapsed`` and, when perf started the command, ``seconds user``/``sys``. Counts
follow the locale (``119,847.31`` or ``119.847,31``); older perf names ``task-clock (msec)`` and
prints ``K/sec``; ``-A`` prefixes ``CPU12``, ``--per-socket`` ``S0  56``, ``-I`` a timestamp.
CSV form (``-x,``, any separator): ``[interval,][aggr,[n,]]value,unit,event,run_ns,enabled_%,
metric,metric_unit``, after an optional ``# started on`` line. ``<not supported>`` (no PMU for
the event, e.g. a VM without vPMU) and ``<not counted>`` keep their line with no value.

Yields ``perf.counter`` per line, one ``perf.stat_run``, and when the counters allow
``cpu.effective_freq`` (perf's GHz metric on cycles, or cycles / task-clock) and
``cpu.cycles_ref_ratio`` (cycles / ref-cycles), per interval and CPU.

Sample input::

     Performance counter stats for process id '481203':

            119,847.31 msec task-clock                #   11.984 CPUs utilized
       358,109,442,087      cycles                    #    2.988 GHz                (71.42%)
       251,203,118,440      ref-cycles                #    2.096 G/sec              (57.15%)
           <not supported>  stalled-cycles-frontend

          10.000831516 seconds time elapsed

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "perf-stat"); parse(doc, ctx)
    >>> [(f.event, f.value, f.unit, f.supported, f.enabled_pct) for f in ctx.facts if f.fact_type == "perf.counter"]
    [('task-clock', 119847.31, 'msec', True, 100.0), ('cycles', 358109442087.0, '', True, 71.42), ('ref-cycles', 251203118440.0, '', True, 57.15), ('stalled-cycles-frontend', None, '', False, None)]
    >>> run = [f for f in ctx.facts if f.fact_type == "perf.stat_run"][0]
    >>> (run.target, run.elapsed_s, run.hw_counters_supported)
    ("process id '481203'", 10.000831516, True)
    >>> [(f.fact_type, f.method, f.ghz) for f in ctx.facts if f.fact_type == "cpu.effective_freq"]
    [('cpu.effective_freq', 'perf-ghz-annotation', 2.988)]
    >>> round([f for f in ctx.facts if f.fact_type == "cpu.cycles_ref_ratio"][0].ratio, 3)
    1.426
    >>> sniff(doc)
    0.95
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable
from clusterdx.facts.coverage import WHOLE
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.cpu import CyclesRefRatio, EffectiveFreq, PerfCounter, PerfStatRun


SAMPLE = """\
 Performance counter stats for process id '481203':

        119,847.31 msec task-clock                #   11.984 CPUs utilized
   358,109,442,087      cycles                    #    2.988 GHz                (71.42%)
   251,203,118,440      ref-cycles                #    2.096 G/sec              (57.15%)
       <not supported>  stalled-cycles-frontend

      10.000831516 seconds time elapsed
"""

_HW_EVENTS = {"cycles", "cpu-cycles", "instructions", "branches", "branch-instructions", "branch-misses",
              "ref-cycles", "cache-references", "cache-misses", "stalled-cycles-frontend",
              "stalled-cycles-backend", "bus-cycles", "idle-cycles-frontend", "idle-cycles-backend"}
_SW_EVENTS = {"task-clock", "cpu-clock", "context-switches", "cs", "cpu-migrations", "migrations",
              "page-faults", "faults", "major-faults", "minor-faults", "alignment-faults",
              "emulation-faults", "duration_time", "user_time", "system_time"}
_NOT = ("<not supported>", "<not counted>")
_HEADER = lazyre.compile(r"Performance counter stats for (.*?)(?:\s*\((\d{1,9}) runs\))?\s*:\s*$")
_TIME = lazyre.compile(r"^\s*([\d.,]{1,30})\s*(?:\+-\s*[\d.,]{1,30}\s*)?seconds (time elapsed|user|sys)\b")
_AGGR = r"CPU\d{1,6}|S\d{1,4}(?:-D\d{1,4})?(?:-[CLN]\d{1,6})?|N\d{1,4}|D\d{1,4}"
_HUMAN = lazyre.compile(
    r"^\s*(?:(?P<interval>\d{1,9}\.\d{1,12})\s+)?"
    rf"(?:(?P<aggr>{_AGGR})\s+(?:(?P<ncpus>\d{{1,6}})\s+)?)?"
    r"(?P<value><not supported>|<not counted>|\d[\d.,]{0,40})\s+(?P<rest>\S.*)$"
)
_ENABLED = lazyre.compile(r"\(\s*(\d{1,3}(?:[.,]\d{1,4})?)%\s*\)\s*$")
_VARIANCE = lazyre.compile(r"\(\s*\+-\s*[\d.,]{1,20}%\s*\)\s*$")
_EVENT = lazyre.compile(r"^[A-Za-z_][\w\-./:=,@]{0,200}$")
_FLOAT = lazyre.compile(r"^\d{1,9}\.\d{1,12}$")
_METRIC = lazyre.compile(r"^\s*(-?[\d.,]{1,30})\s*(.*?)\s*$")
# perf's advice after a multiplexing problem; not output to parse
_NOISE = ("Some events weren't counted", "echo 0 > /proc/sys/kernel/nmi_watchdog",
          "echo 1 > /proc/sys/kernel/nmi_watchdog", "perf stat ...")


@dataclass
class _Line:
    index: int
    event: str
    value: float | None
    unit: str
    aggregation: str
    supported: bool
    counted: bool
    enabled_pct: float | None
    metric_value: float | None
    metric_unit: str
    annotation: str
    interval: float | None


def _number(text: str, decimal: str) -> float | None:
    t = text.strip()
    if not t or not re.fullmatch(r"-?[\d.,]{1,40}", t):
        return None
    thousands = "," if decimal == "." else "."
    t = t.replace(thousands, "").replace(decimal, ".")
    try:
        return float(t)
    except ValueError:
        return None


def _decimal_of(values: list[str]) -> str:
    """The locale's decimal mark: ``,`` only when a count proves it (``119.847,31``, ``0,95``)."""
    for v in values:
        if "," in v and "." in v:
            return "," if v.rfind(",") > v.rfind(".") else "."
        if re.fullmatch(r"\d+,\d{1,2}|\d+,\d{4,}|0,\d+", v):
            return ","
    return "."


# --- human form -----------------------------------------------------------------------------

def _human_lines(doc: Document, ctx: ParseContext, run: dict) -> list[_Line]:
    matches: list[tuple[int, re.Match[str]]] = []
    for i, line in enumerate(doc.lines):
        s = line.strip()
        if not s or s.startswith("#") or s.startswith(_NOISE):
            continue
        if m := _HEADER.search(s):
            target = m.group(1).strip()
            if len(target) >= 2 and target[0] == target[-1] == "'":
                target = target[1:-1]
            run.update(target=target, runs=int(m.group(2)) if m.group(2) else None, line=i)
            continue
        if m := _TIME.match(line):
            run.setdefault("times", []).append((m.group(2), m.group(1), i))
            continue
        if m := _HUMAN.match(line):
            matches.append((i, m))
        elif "line" in run or matches:
            ctx.warn(i, f"not a perf stat line: {s[:80]!r}")
    decimal = _decimal_of([m.group("value") for _, m in matches])
    run["decimal"] = decimal
    out: list[_Line] = []
    for i, m in matches:
        rest = m.group("rest").rstrip()
        enabled = None
        if em := _ENABLED.search(rest):
            enabled = _number(em.group(1), decimal)
            rest = rest[: em.start()].rstrip()
        if vm := _VARIANCE.search(rest):
            rest = rest[: vm.start()].rstrip()
        pre, _, comment = rest.partition("#")
        tokens = pre.split()
        if len(tokens) == 2 and tokens[1] == "(msec)":
            unit, event = "msec", tokens[0]
        elif len(tokens) == 2:
            unit, event = tokens
        elif len(tokens) == 1:
            unit, event = "", tokens[0]
        else:
            ctx.warn(i, f"cannot tell the event in {rest[:80]!r}")
            continue
        if not _EVENT.match(event):
            ctx.warn(i, f"not an event name: {event[:60]!r}")
            continue
        raw = m.group("value")
        counted = raw not in _NOT
        metric_value, metric_unit = None, ""
        if mm := _METRIC.match(comment):
            metric_value, metric_unit = _number(mm.group(1), decimal), " ".join(mm.group(2).split())
        if counted and enabled is None:
            enabled = 100.0  # perf prints the share only when the event was multiplexed
        out.append(_Line(
            index=i, event=event, value=_number(raw, decimal) if counted else None, unit=unit,
            aggregation=m.group("aggr") or "", supported=raw != "<not supported>", counted=counted,
            enabled_pct=enabled if counted else None, metric_value=metric_value, metric_unit=metric_unit,
            annotation=" ".join(comment.split()), interval=float(m.group("interval")) if m.group("interval") else None,
        ))
    return out


# --- CSV form -------------------------------------------------------------------------------

def _csv_line(line: str, sep: str) -> dict | None:
    f = [x.strip() for x in line.split(sep)]
    if len(f) < 3:
        return None
    k = 0
    interval = None

    def is_value(x: str) -> bool:
        return x in _NOT or bool(re.fullmatch(r"\d[\d.,]{0,40}", x))

    if len(f) >= 4 and _FLOAT.match(f[0]) and (is_value(f[1]) or re.fullmatch(_AGGR, f[1])):
        interval, k = float(f[0]), 1
    aggr = ""
    if k < len(f) and re.fullmatch(_AGGR, f[k]):
        aggr, k = f[k], k + 1
        # --per-socket/--per-core add the number of CPUs aggregated
        if not aggr.startswith("CPU") and k + 1 < len(f) and f[k].isdigit() and is_value(f[k + 1]):
            k += 1
    if len(f) < k + 3 or not is_value(f[k]) or not _EVENT.match(f[k + 2]):
        return None
    extra = f[k + 3:]
    return {"value": f[k], "unit": f[k + 1], "event": f[k + 2], "aggr": aggr, "interval": interval,
            "enabled": extra[1] if len(extra) > 1 else "", "metric": extra[2] if len(extra) > 2 else "",
            "metric_unit": extra[3] if len(extra) > 3 else ""}


def _csv_sep(doc: Document) -> tuple[str, int]:
    head = [ln for ln in doc.lines[:200] if ln.strip() and not ln.lstrip().startswith("#")]
    best, best_hits = ",", 0
    for sep in (",", ";", "\t", "|"):
        hits = 0
        for ln in head:
            p = _csv_line(ln, sep)
            if p and _base(p["event"]) in _HW_EVENTS | _SW_EVENTS:
                hits += 1
        if hits > best_hits:
            best, best_hits = sep, hits
    return best, best_hits


def _csv_lines(doc: Document, ctx: ParseContext, sep: str) -> list[_Line]:
    parsed: list[tuple[int, dict]] = []
    for i, line in enumerate(doc.lines):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        p = _csv_line(line, sep)
        if p is None:
            ctx.warn(i, f"not a perf stat CSV line: {s[:80]!r}")
            continue
        parsed.append((i, p))
    # with -x, the decimal mark cannot be a comma; with another separator it follows the locale
    decimal = "." if sep == "," else _decimal_of([p["value"] for _, p in parsed])
    out = []
    for i, p in parsed:
        raw = p["value"]
        counted = raw not in _NOT
        metric = _number(p["metric"], decimal) if p["metric"] else None
        out.append(_Line(
            index=i, event=p["event"], value=_number(raw, decimal) if counted else None, unit=p["unit"],
            aggregation=p["aggr"], supported=raw != "<not supported>", counted=counted,
            enabled_pct=_number(p["enabled"], decimal) if p["enabled"] and counted else None,
            metric_value=metric, metric_unit=p["metric_unit"] if metric is not None else "",
            annotation=f'{p["metric"]} {p["metric_unit"]}'.strip() if metric is not None else "",
            interval=p["interval"],
        ))
    return out


# --- both -----------------------------------------------------------------------------------

def _base(event: str) -> str:
    return re.sub(r":[ukhHGpPSDIW]+$", "", event)


def sniff(doc: Document) -> float:
    head = doc.lines[:200]
    if any("Performance counter stats for" in ln for ln in head):
        return 0.95
    _, hits = _csv_sep(doc)
    return 0.9 if hits >= 2 else 0.5 if hits else 0.0


def parse(doc: Document, ctx: ParseContext) -> None:
    run: dict = {}
    header = any("Performance counter stats for" in ln for ln in doc.lines[:200])
    # counter lines without the header (``perf stat ... 2>&1 | grep -E 'cycles|instructions'``)
    # when the transcript says they are perf stat output
    excerpt = not header and bool(doc.command and re.search(r"\bperf\s+stat\b", doc.command)) and any(
        _HUMAN.match(ln) for ln in doc.lines[:200])
    if header or excerpt:
        lines = _human_lines(doc, ctx, run)
        # the human form ends with "seconds time elapsed" unless it prints intervals
        if lines and not run.get("times") and lines[-1].interval is None and \
                (doc.coverage or WHOLE).believes_absence("      10.000831516 seconds time elapsed"):
            ctx.warn(len(doc.lines) - 1, "no 'seconds time elapsed' line (truncated?)")
    else:
        sep, hits = _csv_sep(doc)
        if not hits:
            raise NotApplicable("no perf stat header and no CSV counter lines")
        lines = _csv_lines(doc, ctx, sep)
    if not lines:
        raise NotApplicable("perf stat printed no counters (perf error or empty run)")
    for ln in lines:
        m = re.fullmatch(r"CPU(\d+)", ln.aggregation)
        ctx.add(
            PerfCounter, ln.index, event=ln.event, value=ln.value, unit=ln.unit,
            cpu=int(m.group(1)) if m else None, aggregation=ln.aggregation, supported=ln.supported,
            counted=ln.counted, enabled_pct=ln.enabled_pct, metric_value=ln.metric_value,
            metric_unit=ln.metric_unit, annotation=ln.annotation, interval_s=ln.interval,
        )
    _stat_run(ctx, run, lines)
    _derived(ctx, lines)


def _stat_run(ctx: ParseContext, run: dict, lines: list[_Line]) -> None:
    times = {kind: (_number(v, run.get("decimal", ".")), i) for kind, v, i in run.get("times", [])}
    hw = [ln for ln in lines if _base(ln.event) in _HW_EVENTS or "-dcache" in ln.event or ln.event.startswith("LLC-")]
    supported = any(ln.supported for ln in hw) if hw else None
    start = run.get("line", lines[0].index)
    end = max([i for _, i in times.values()] + [lines[-1].index])
    ctx.add(
        PerfStatRun, start, end, target=run.get("target", ""),
        elapsed_s=times.get("time elapsed", (None,))[0], user_s=times.get("user", (None,))[0],
        sys_s=times.get("sys", (None,))[0], runs=run.get("runs"), hw_counters_supported=supported,
    )


def _derived(ctx: ParseContext, lines: list[_Line]) -> None:
    groups: dict[tuple[float | None, str], dict[str, _Line]] = {}
    for ln in lines:
        groups.setdefault((ln.interval, ln.aggregation), {})[_base(ln.event)] = ln
    for (interval, aggr), events in groups.items():
        m = re.fullmatch(r"CPU(\d+)", aggr)
        cpu = int(m.group(1)) if m else None
        cycles = events.get("cycles") or events.get("cpu-cycles")
        clock = events.get("task-clock") or events.get("cpu-clock")
        ref = events.get("ref-cycles")
        if cycles is None or cycles.value is None:
            continue
        ghz, method = None, ""
        if cycles.metric_unit == "GHz" and cycles.metric_value:
            ghz, method = cycles.metric_value, "perf-ghz-annotation"
        elif clock is not None and clock.value and clock.unit in ("msec", ""):
            ghz, method = cycles.value / (clock.value * 1e6), "cycles/task-clock"
        # a nonsense clock means a mis-read count, not a fast CPU
        if ghz is not None and 0.01 < ghz < 20:
            ctx.add(EffectiveFreq, cycles.index, ghz=ghz, method=method, cpu=cpu, interval_s=interval)
        if ref is not None and ref.value:
            ratio = cycles.value / ref.value
            if 0.01 < ratio < 100:
                ctx.add(CyclesRefRatio, cycles.index, max(cycles.index, ref.index), ratio=ratio, cpu=cpu,
                        interval_s=interval)


FORMATS = [
    Format(
        name="perf-stat",
        command="perf stat -a -e cycles,ref-cycles,instructions,task-clock -- sleep 10",
        facts=("perf.counter", "perf.stat_run", "cpu.effective_freq", "cpu.cycles_ref_ratio"),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\bperf\s+stat\b",),
        description="perf stat counters, human or CSV (-x) form, incl. -A per-CPU and -I intervals",
    )
]
