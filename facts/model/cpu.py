"""CPU identity, frequency and idle-state policy, turbostat samples and perf stat counters.

Frequencies are in MHz unless the field name says GHz; times in microseconds (``_us``) or seconds
(``_s``). A field is None when the tool did not report it, never a made-up default, so that a rule
can tell "not collected" from "zero".
"""

from clusterdx.facts.base import Fact


class CpuInfo(Fact):
    fact_type = "cpu.info"
    doc = "CPU model, counts, frequency range and VM indicators of a node (lscpu)."
    #: raw architecture string: x86_64, aarch64, ...
    arch: str
    #: normalised ISA family: "x86", "arm64", or "" when unknown
    isa: str = ""
    vendor: str = ""
    model_name: str = ""
    #: logical CPUs
    cpus: int | None = None
    #: CPUs listed as off-line (SMT disabled at runtime, hot-unplugged vCPUs)
    offline_cpus: list[int] = []
    #: None when lscpu cannot tell (arm64 without PPTT prints "Socket(s): -")
    sockets: int | None = None
    cores_per_socket: int | None = None
    #: arm64 without socket topology reports cores per cluster instead of per socket
    cores_per_cluster: int | None = None
    threads_per_core: int | None = None
    numa_nodes: int | None = None
    max_mhz: float | None = None
    min_mhz: float | None = None
    #: "CPU(s) scaling MHz" (current over max frequency, percent)
    scaling_pct: float | None = None
    #: "Frequency boost" line: "enabled", "disabled" or "" when absent
    frequency_boost: str = ""
    #: "" when lscpu shows no hypervisor (bare metal, or arm64 guests where lscpu cannot tell)
    hypervisor_vendor: str = ""
    #: "full", "para", "container" or ""
    virtualization_type: str = ""
    #: x86 "hypervisor" CPUID flag: the kernel runs as a guest
    hypervisor_flag: bool = False
    bios_vendor: str = ""
    bios_model_name: str = ""
    #: NVIDIA Grace: a Neoverse-V2 core unless the BIOS names another vendor, or a BIOS naming Grace/NVIDIA
    is_grace: bool = False


class CpuFreqPolicy(Fact):
    fact_type = "cpu.freq_policy"
    doc = "cpufreq driver, governor, EPP and frequency limits of one CPU (cpupower or sysfs)."
    cpu: int
    #: scaling driver (intel_pstate, acpi-cpufreq, cppc_cpufreq ...); "" when no driver is active
    driver: str = ""
    governor: str = ""
    available_governors: list[str] = []
    hw_min_mhz: float | None = None
    hw_max_mhz: float | None = None
    policy_min_mhz: float | None = None
    policy_max_mhz: float | None = None
    #: intel_pstate base (non-turbo) frequency, sysfs base_frequency
    base_mhz: float | None = None
    current_mhz: float | None = None
    boost_supported: bool | None = None
    boost_active: bool | None = None
    #: energy_performance_preference; "" when the driver has none
    epp: str = ""


class CpuBoost(Fact):
    fact_type = "cpu.boost"
    doc = "Turbo/boost switch state (intel_pstate/no_turbo inverted, or cpufreq/boost)."
    enabled: bool
    #: "intel_pstate/no_turbo" or "cpufreq/boost"
    knob: str


class CpuGovernorSummary(Fact):
    fact_type = "cpu.governor_summary"
    doc = "One per input that shows governors: the distinct governors and EPPs, all-performance flag."
    #: distinct governors, sorted
    governors: list[str]
    all_performance: bool
    #: how many CPUs (or governor values) the input showed
    cpu_count: int
    #: distinct energy_performance_preference values, sorted; [] when none shown
    epps: list[str] = []


class CpuIdleDriver(Fact):
    fact_type = "cpu.idle_driver"
    doc = "cpuidle driver and governor; driver 'none' when no idle driver is loaded (typical VM)."
    #: CPU the tool analysed; None when the input is the global sysfs cpuidle directory
    cpu: int | None = None
    driver: str = ""
    governor: str = ""
    #: idle states the CPU exposes; None when the input does not say
    state_count: int | None = None


class CpuIdleState(Fact):
    fact_type = "cpu.idle_state"
    doc = "One cpuidle state of one CPU: name, exit latency, disabled flag, usage and residency time."
    cpu: int
    #: K in stateK, also the order cpupower lists them in (shallow to deep); not "index",
    #: which ParseContext.add takes as the source line
    state_index: int
    name: str
    latency_us: float | None = None
    #: target residency; older cpupower does not print it
    residency_us: float | None = None
    #: state*/disable = 1 (user or cpupower idle-set), "(DISABLED)" in cpupower
    disabled: bool = False
    usage: int | None = None
    #: total time spent in the state since boot
    time_us: float | None = None
    description: str = ""


class CpuIdleSummary(Fact):
    fact_type = "cpu.idle_summary"
    doc = "One per input that lists idle states: how many states the first CPU shown exposes and enables."
    #: the first CPU shown; the counts below are for it
    cpu: int
    state_count: int
    enabled_count: int
    #: name of the deepest (highest index) enabled state; "" when none
    deepest_enabled: str = ""
    #: any state disabled on any CPU shown in the input
    any_disabled: bool = False
    #: largest exit latency among the enabled states of the CPU; None when it has none
    max_latency_us: float | None = None


class TurbostatSample(Fact):
    fact_type = "cpu.turbostat"
    doc = "One turbostat row: the summary row (summary=True) or one CPU; None where the column is absent."
    summary: bool
    cpu: int | None = None
    core: int | None = None
    package: int | None = None
    #: 0-based block number when the table repeats (interval mode)
    sample: int = 0
    busy_pct: float | None = None
    bzy_mhz: float | None = None
    avg_mhz: float | None = None
    tsc_mhz: float | None = None
    ipc: float | None = None
    #: hardware core C6 residency (CPU%c6), or the OS C6 request time (C6%) when CPU%c6 is absent
    c6_pct: float | None = None
    pkg_watt: float | None = None
    ram_watt: float | None = None
    core_tmp: float | None = None
    pkg_tmp: float | None = None


class PerfCounter(Fact):
    fact_type = "perf.counter"
    doc = "One perf stat event count; value None with supported=False for <not supported>."
    event: str
    value: float | None = None
    #: "msec" for task-clock and other clocks, "" for plain counts
    unit: str = ""
    #: CPU of a per-CPU (-A) line
    cpu: int | None = None
    #: aggregation label of -A / --per-socket / --per-core lines: "CPU12", "S0", "S0-D0-C3"; "" when none
    aggregation: str = ""
    #: False for <not supported> (no PMU support, e.g. VM without vPMU)
    supported: bool = True
    #: False for <not supported> and <not counted>
    counted: bool = True
    #: share of the time the event was scheduled (multiplexing); 100.0 when perf printed no share
    #: (it prints one only below 100 %), None for events that were not counted
    enabled_pct: float | None = None
    #: perf's derived metric next to the count, e.g. 2.988 with metric_unit "GHz"
    metric_value: float | None = None
    metric_unit: str = ""
    #: the metric as perf prints it, e.g. "2.988 GHz", "11.984 CPUs utilized"
    annotation: str = ""
    #: end of the -I interval, seconds since start; None without -I
    interval_s: float | None = None


class PerfStatRun(Fact):
    fact_type = "perf.stat_run"
    doc = "One per perf stat output: what was measured, how long, and whether hardware counters worked."
    #: "system wide", "process id '123'", the command, or "" when not shown (CSV)
    target: str = ""
    elapsed_s: float | None = None
    user_s: float | None = None
    sys_s: float | None = None
    #: -r N repeat count
    runs: int | None = None
    #: False when every hardware event requested was <not supported>; None when none was requested
    hw_counters_supported: bool | None = None


class EffectiveFreq(Fact):
    fact_type = "cpu.effective_freq"
    doc = "Average clock of the CPUs while busy, derived from perf stat counters."
    ghz: float
    #: "perf-ghz-annotation" (perf's own cycles/task-clock) or "cycles/task-clock" (computed here)
    method: str
    cpu: int | None = None
    interval_s: float | None = None


class CyclesRefRatio(Fact):
    fact_type = "cpu.cycles_ref_ratio"
    doc = "perf cycles / ref-cycles: busy clock over the base (reference) clock; > 1 means turbo."
    ratio: float
    cpu: int | None = None
    interval_s: float | None = None
