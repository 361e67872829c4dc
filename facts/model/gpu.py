"""GPU identity, PCIe link, clocks and clock-event reasons, ECC/row remapping, temperatures,
NVLink links and NVSwitch fabric registration (``nvidia-smi -q``, ``-q -x``, ``nvlink -s/-e``,
``--query-gpu=...fabric...``).

``gpu`` is the nvidia-smi index: the position of the GPU in the output (nvidia-smi lists GPUs in
index order), or the ``-i N`` of the command when a single GPU was queried. ``bus_id`` is the
PCI address normalised to lowercase ``0000:5d:00.0`` (4-digit domain unless wider) and is the
safe key to join GPUs across tools. Power in W, clocks in MHz, temperatures in degrees C.
A field is None (or "") when the tool did not report it (``N/A``, ``[Not Supported]``,
``Unknown Error``), never a made-up default.
"""

from clusterdx.facts.base import Fact


class GpuSummary(Fact):
    fact_type = "gpu.summary"
    doc = "One per nvidia-smi document: how many GPUs it describes, driver/CUDA versions and GPU models."
    #: GPUs described in this document (blocks parsed), 0 when nvidia-smi found none
    gpus: int
    #: 'Attached GPUs' header (may exceed ``gpus`` when the output was restricted or trimmed)
    attached_gpus: int | None = None
    driver_version: str = ""
    cuda_version: str = ""
    #: distinct product names in file order
    models: list[str] = []
    #: bus ids nvidia-smi could not open ('Unable to determine the device handle for GPU ...')
    unreachable_bus_ids: list[str] = []
    #: nvidia-smi's own failure message ('No devices were found', NVML errors), "" when none
    error: str = ""


class GpuDevice(Fact):
    fact_type = "gpu.device"
    doc = "Identity and operating modes of one GPU: model, UUID, VBIOS, driver, persistence/virtualization/MIG/compute modes, power limits and draw."
    gpu: int
    bus_id: str = ""
    name: str = ""
    uuid: str = ""
    serial: str = ""
    vbios: str = ""
    driver_version: str = ""
    cuda_version: str = ""
    #: 'Minor Number' (/dev/nvidiaN); usually but not always equal to ``gpu``
    minor_number: int | None = None
    architecture: str = ""
    persistence_mode: bool | None = None
    #: 'None', 'Pass-Through', 'VGPU', 'Host VGPU' ... ("" when not printed)
    virtualization_mode: str = ""
    #: current MIG mode: 'Enabled' / 'Disabled' / 'N/A'
    mig_mode: str = ""
    #: 'Default', 'Exclusive_Process', 'Prohibited' ...
    compute_mode: str = ""
    #: enforced limit ('Current Power Limit' on new drivers, 'Enforced Power Limit' on old)
    power_limit_w: float | None = None
    default_power_limit_w: float | None = None
    min_power_limit_w: float | None = None
    max_power_limit_w: float | None = None
    #: average power draw on new drivers, 'Power Draw' on old ones
    power_draw_w: float | None = None
    instant_power_draw_w: float | None = None
    gpu_util_pct: float | None = None
    mem_util_pct: float | None = None
    gsp_firmware: str = ""
    #: framebuffer memory in MiB (``memory.total`` / ``memory.used`` of --query-gpu)
    memory_total_mib: float | None = None
    memory_used_mib: float | None = None


class GpuPcie(Fact):
    fact_type = "gpu.pcie"
    doc = "PCIe link of one GPU: current vs max generation and width, downgrade flags, replay counter."
    gpu: int
    bus_id: str = ""
    gen_current: int | None = None
    #: 'Max': the highest generation GPU and host support together
    gen_max: int | None = None
    gen_device_current: int | None = None
    gen_device_max: int | None = None
    #: None inside VMs ('Host Max : N/A')
    gen_host_max: int | None = None
    width_current: int | None = None
    width_max: int | None = None
    width_downgraded: bool = False
    gen_downgraded: bool = False
    #: width or generation below its max
    downgraded: bool = False
    #: only the generation is lower and the GPU is idle (P5..P15 or the Idle clock reason): the
    #: normal power-saving look-alike of a downgrade, to be re-checked under load
    idle_gen_drop: bool = False
    #: 'Replays Since Reset'
    replay_counter: int | None = None
    replay_rollovers: int | None = None
    tx_kbps: float | None = None
    rx_kbps: float | None = None


class GpuClocks(Fact):
    fact_type = "gpu.clocks"
    doc = "Current, maximum and application clocks and the performance state of one GPU."
    gpu: int
    sm_mhz: float | None = None
    mem_mhz: float | None = None
    graphics_mhz: float | None = None
    max_sm_mhz: float | None = None
    max_mem_mhz: float | None = None
    max_graphics_mhz: float | None = None
    #: 'Applications Clocks' > Graphics (the SM/graphics application clock)
    app_sm_mhz: float | None = None
    app_mem_mhz: float | None = None
    default_app_sm_mhz: float | None = None
    #: current SM clock as a percentage of the max SM clock
    sm_pct_of_max: float | None = None
    #: 'P0' .. 'P15', "" when unknown
    performance_state: str = ""


class GpuThrottle(Fact):
    fact_type = "gpu.throttle"
    doc = "Active clock event (throttle) reasons of one GPU, normalised, with thermal/power summaries and the reason counters."
    gpu: int
    #: active reasons: sw_power_cap, hw_slowdown, hw_thermal_slowdown, sw_thermal_slowdown,
    #: hw_power_brake_slowdown, sync_boost, idle, applications_clocks_setting, display_clock_setting
    active: list[str] = []
    #: hw_thermal_slowdown or sw_thermal_slowdown active
    thermal: bool = False
    #: sw_power_cap or hw_power_brake_slowdown active
    power: bool = False
    #: 'Clocks Event Reasons Counters' (newer drivers), microseconds since driver load
    sw_power_cap_us: float | None = None
    sync_boost_us: float | None = None
    sw_thermal_us: float | None = None
    hw_thermal_us: float | None = None
    hw_power_brake_us: float | None = None


class GpuEcc(Fact):
    fact_type = "gpu.ecc"
    doc = "ECC mode, volatile/aggregate error totals, row remapping and page retirement of one GPU."
    gpu: int
    mode_current: str = ""
    mode_pending: str = ""
    #: sums over SRAM and DRAM (new drivers) or the Double/Single Bit totals (old drivers)
    volatile_uncorrectable: int | None = None
    aggregate_uncorrectable: int | None = None
    volatile_correctable: int | None = None
    aggregate_correctable: int | None = None
    sram_threshold_exceeded: bool | None = None
    remap_pending: bool | None = None
    remap_failure: bool | None = None
    remapped_correctable: int | None = None
    remapped_uncorrectable: int | None = None
    retired_pages_pending: bool | None = None
    retired_single_bit: int | None = None
    retired_double_bit: int | None = None


class GpuTemperature(Fact):
    fact_type = "gpu.temperature"
    doc = "GPU and memory temperatures and thresholds (absolute on old drivers, T.Limit-relative margins on new ones)."
    gpu: int
    gpu_c: float | None = None
    mem_c: float | None = None
    #: absolute thresholds (older drivers)
    slowdown_c: float | None = None
    shutdown_c: float | None = None
    max_operating_c: float | None = None
    #: 'GPU T.Limit Temp': degrees below the T.Limit (headroom; small or negative = hot)
    tlimit_margin_c: float | None = None
    #: T.Limit-relative thresholds: slowdown/shutdown when the margin falls to these values
    slowdown_tlimit_c: float | None = None
    shutdown_tlimit_c: float | None = None


class GpuFabric(Fact):
    fact_type = "gpu.fabric"
    doc = "NVSwitch/NVLink fabric registration of one GPU (healthy: state Completed, status Success)."
    gpu: int
    bus_id: str = ""
    #: 'Completed', 'In Progress', 'Not Started' ...
    state: str = ""
    #: 'Success' or an error word
    status: str = ""
    clique_id: str = ""
    cluster_uuid: str = ""
    #: 'Health' > 'Summary' ('Healthy', ...) and 'Bandwidth' ('Full', 'Degraded' ...)
    health: str = ""
    bandwidth: str = ""


class GpuNvlink(Fact):
    fact_type = "gpu.nvlink"
    doc = "One NVLink of one GPU from nvidia-smi nvlink -s: active or inactive, and its speed."
    gpu: int
    link: int
    active: bool
    #: per-link speed in GB/s as printed (e.g. 26.562 on H100, 53.125 on GB200)
    speed_gbps: float | None = None
    uuid: str = ""


class GpuNvlinkSummary(Fact):
    fact_type = "gpu.nvlink_summary"
    doc = "Link counts of one GPU from nvidia-smi nvlink -s (links listed, active, inactive)."
    gpu: int
    links: int
    active: int
    inactive: int
    name: str = ""
    uuid: str = ""
    #: sum of the active links' speeds in GB/s
    total_gbps: float | None = None
    #: nvidia-smi printed no links because all of them are inactive ('... all links are inActive')
    all_inactive: bool = False


class GpuNvlinkErrors(Fact):
    fact_type = "gpu.nvlink_errors"
    doc = "Error counters and bit error rates of one NVLink from nvidia-smi nvlink -e (healthy BER baseline 15e-255)."
    gpu: int
    link: int
    replay: int | None = None
    recovery: int | None = None
    crc_flit: int | None = None
    crc_data: int | None = None
    effective_errors: int | None = None
    symbol_errors: int | None = None
    #: as printed ('15e-255'); "" when not printed
    effective_ber: str = ""
    symbol_ber: str = ""
    effective_ber_value: float | None = None
    symbol_ber_value: float | None = None
    #: True when every printed BER is at the 15e-255 baseline, False when one is above, None when none printed
    ber_healthy: bool | None = None
