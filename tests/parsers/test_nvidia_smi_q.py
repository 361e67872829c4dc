import doctest

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.parsers import nvidia_smi_q
from tests.parsers.helpers import FORMATS, of_type, parse_fixture, parse_text

FMT = "nvidia-smi-q"


def by_gpu(ctx, fact_type):
    return {f.gpu: f for f in of_type(ctx, fact_type)}


def test_doctests():
    assert doctest.testmod(nvidia_smi_q).failed == 0


def test_driver_570_h100_passthrough():
    ctx = parse_fixture(FMT, "nvidia-smi-q.txt")
    assert not ctx.warnings
    dev = by_gpu(ctx, "gpu.device")
    d0 = dev[0]
    assert (d0.bus_id, d0.name, d0.uuid, d0.serial, d0.vbios) == (
        "0000:18:00.0", "NVIDIA H100 80GB HBM3", "GPU-4b1d5c7e-9a2f-7c63-1e0b-55a8d3f2c901",
        "1652323041187", "96.00.99.00.01")
    assert (d0.driver_version, d0.cuda_version, d0.persistence_mode) == ("570.133.20", "12.8", True)
    assert (d0.virtualization_mode, d0.mig_mode, d0.compute_mode) == ("Pass-Through", "Disabled", "Default")
    assert (d0.power_limit_w, d0.default_power_limit_w, d0.max_power_limit_w) == (700.0, 700.0, 700.0)
    assert (d0.power_draw_w, d0.instant_power_draw_w, d0.minor_number) == (688.41, 702.17, 0)
    assert d0.source.line == 9  # Product Name
    assert dev[1].bus_id == "0000:2a:00.0"

    pcie = by_gpu(ctx, "gpu.pcie")
    p0, p1 = pcie[0], pcie[1]
    assert (p0.gen_current, p0.gen_max, p0.gen_device_max, p0.gen_host_max) == (5, 5, 5, None)
    assert (p0.width_current, p0.width_max, p0.downgraded, p0.idle_gen_drop) == (16, 16, False, False)
    assert (p0.replay_counter, p1.replay_counter, p0.tx_kbps) == (0, 37, 2104352.0)
    assert p0.source.line == 72  # PCIe Generation > Max

    clk = by_gpu(ctx, "gpu.clocks")
    assert (clk[0].sm_mhz, clk[0].max_sm_mhz, clk[0].app_sm_mhz, clk[0].performance_state) == (
        1755.0, 1980.0, 1980.0, "P0")
    assert clk[0].sm_pct_of_max == 88.6 and clk[1].sm_pct_of_max == 100.0

    thr = by_gpu(ctx, "gpu.throttle")
    assert (thr[0].active, thr[0].power, thr[0].thermal) == (["sw_power_cap"], True, False)
    assert thr[0].sw_power_cap_us == 418733105.0 and thr[0].hw_power_brake_us == 0.0
    assert thr[1].active == [] and thr[1].power is False

    ecc = by_gpu(ctx, "gpu.ecc")
    assert (ecc[0].mode_current, ecc[0].volatile_uncorrectable, ecc[0].aggregate_uncorrectable) == ("Enabled", 0, 0)
    assert (ecc[1].volatile_correctable, ecc[1].aggregate_correctable) == (2, 14)
    assert (ecc[1].remap_pending, ecc[1].remap_failure, ecc[1].remapped_uncorrectable) == (False, False, 0)
    assert ecc[1].retired_pages_pending is None and ecc[1].sram_threshold_exceeded is False

    t = by_gpu(ctx, "gpu.temperature")[0]
    assert (t.gpu_c, t.mem_c, t.tlimit_margin_c, t.slowdown_tlimit_c, t.shutdown_tlimit_c) == (71.0, 79.0, 14.0, -2.0, -8.0)
    assert t.slowdown_c is None and t.shutdown_c is None

    fab = by_gpu(ctx, "gpu.fabric")
    assert (fab[0].state, fab[0].status, fab[0].clique_id, fab[0].health, fab[0].bandwidth) == (
        "Completed", "Success", "0", "Healthy", "Full")
    assert fab[1].cluster_uuid == "00000000-0000-0000-0000-000000000000"

    [s] = of_type(ctx, "gpu.summary")
    assert (s.gpus, s.attached_gpus, s.models, s.driver_version, s.source.line) == (
        2, 8, ["NVIDIA H100 80GB HBM3"], "570.133.20", 4)


def test_driver_470_a100_legacy_names_and_x8_link():
    ctx = parse_fixture(FMT, "nvidia-smi-q-legacy.txt")
    assert not ctx.warnings
    [d] = of_type(ctx, "gpu.device")
    assert (d.bus_id, d.minor_number, d.persistence_mode, d.virtualization_mode) == ("0000:4e:00.0", 3, False, "None")
    assert (d.power_draw_w, d.power_limit_w, d.min_power_limit_w) == (63.12, 400.0, 100.0)
    [p] = of_type(ctx, "gpu.pcie")
    assert (p.width_current, p.width_max, p.width_downgraded, p.gen_downgraded) == (8, 16, True, False)
    assert (p.downgraded, p.idle_gen_drop, p.replay_counter) == (True, False, 1129)
    [t] = of_type(ctx, "gpu.throttle")
    assert (t.active, t.thermal, t.power, t.sw_power_cap_us) == (["idle"], False, False, None)
    [e] = of_type(ctx, "gpu.ecc")
    assert (e.aggregate_correctable, e.volatile_uncorrectable, e.remap_pending) == (3, 0, False)
    [tm] = of_type(ctx, "gpu.temperature")
    assert (tm.gpu_c, tm.slowdown_c, tm.shutdown_c, tm.max_operating_c) == (33.0, 89.0, 92.0, 85.0)
    [c] = of_type(ctx, "gpu.clocks")
    assert (c.sm_mhz, c.max_sm_mhz, c.app_sm_mhz) == (210.0, 1410.0, 1275.0)
    assert of_type(ctx, "gpu.fabric") == []
    [s] = of_type(ctx, "gpu.summary")
    assert (s.gpus, s.attached_gpus, s.cuda_version) == (1, 8, "11.4")


OLD_VOLTA = """\
==============NVSMI LOG==============

Driver Version                      : 418.226.00
CUDA Version                        : 10.1

Attached GPUs                       : 1
GPU 00000000:9A:00.0
    Product Name                    : Tesla V100-SXM2-32GB
    Performance State               : P8
    PCI
        GPU Link Info
            PCIe Generation
                Max                 : 3
                Current             : 1
            Link Width
                Max                 : 16x
                Current             : 16x
        Replays Since Reset         : 0
    Clocks Throttle Reasons
        Idle                        : Not Active
        HW Slowdown                 : Active
            HW Thermal Slowdown     : Active
    Ecc Mode
        Current                     : Enabled
        Pending                     : Enabled
    ECC Errors
        Volatile
            Single Bit
                Device Memory       : 4
                Total               : 4
            Double Bit
                Device Memory       : 1
                Total               : 1
        Aggregate
            Single Bit
                Total               : 9
            Double Bit
                Total               : 2
    Retired Pages
        Single Bit ECC              : 1
        Double Bit ECC              : 2
        Pending Page Blacklist      : Yes
    Remapped Rows                   : N/A
    Fabric
        State                       : N/A
        Status                      : N/A
"""


def test_pre_ampere_ecc_retirement_thermal_and_idle_gen_drop():
    ctx = parse_text(FMT, OLD_VOLTA)
    [p] = of_type(ctx, "gpu.pcie")
    assert (p.gen_current, p.gen_max, p.downgraded, p.gen_downgraded, p.idle_gen_drop) == (1, 3, True, True, True)
    [t] = of_type(ctx, "gpu.throttle")
    assert t.active == ["hw_slowdown", "hw_thermal_slowdown"] and t.thermal and not t.power
    [e] = of_type(ctx, "gpu.ecc")
    assert (e.volatile_correctable, e.volatile_uncorrectable) == (4, 1)
    assert (e.aggregate_correctable, e.aggregate_uncorrectable) == (9, 2)
    assert (e.retired_pages_pending, e.retired_single_bit, e.retired_double_bit) == (True, 1, 2)
    assert e.remap_pending is None and e.remapped_correctable is None
    assert of_type(ctx, "gpu.fabric") == []  # N/A: not an NVSwitch system


def test_single_gpu_query_takes_index_from_command():
    ctx = parse_text(FMT, OLD_VOLTA, command="nvidia-smi -q -i 5")
    assert {f.gpu for f in ctx.facts if hasattr(f, "gpu") and f.fact_type != "gpu.summary"} == {5}


def test_unreachable_gpu_and_stray_prompt_line():
    text = (FORMATS / "nvidia-smi-q.txt").read_text()
    lines = text.splitlines()
    lines.insert(20, "user@node01:~$ ")
    lines.append("Unable to determine the device handle for GPU0000:9A:00.0: Unknown Error")
    ctx = parse_text(FMT, "\r\n".join(lines))
    assert len(of_type(ctx, "gpu.device")) == 2
    [s] = of_type(ctx, "gpu.summary")
    assert s.unreachable_bus_ids == ["0000:9a:00.0"] and "Unable to determine" in s.error
    assert [ln for ln, _ in ctx.warnings] == [21, len(lines)]
    # the stray line did not break the tree below it
    assert by_gpu(ctx, "gpu.device")[0].serial == "1652323041187"


def test_no_devices_found_is_a_summary_with_zero_gpus():
    ctx = parse_text(FMT, "No devices were found\n", command="nvidia-smi -q")
    [s] = ctx.facts
    assert (s.fact_type, s.gpus, s.error) == ("gpu.summary", 0, "No devices were found")


def test_truncated_second_gpu_is_kept_with_a_warning():
    lines = (FORMATS / "nvidia-smi-q.txt").read_text().splitlines()
    cut = lines.index("GPU 00000000:2A:00.0") + 40
    ctx = parse_text(FMT, "\n".join(lines[:cut]))
    assert len(of_type(ctx, "gpu.device")) == 2
    assert by_gpu(ctx, "gpu.device")[1].uuid.startswith("GPU-a07e")
    assert 1 not in by_gpu(ctx, "gpu.ecc")
    assert any("truncated" in w for _, w in ctx.warnings)


def test_banner_without_gpus_is_a_warning_without_facts():
    # the preamble of a cut output proves nothing about GPUs (and not "0 GPUs")
    ctx = parse_text(FMT, "==============NVSMI LOG==============\n\nTimestamp : x\nAttached GPUs : 8\n")
    assert not ctx.facts and ctx.warnings == [(1, "nvidia-smi -q output without any GPU block (truncated?)")]


def test_unrelated_text_is_not_applicable():
    with pytest.raises(NotApplicable):
        parse_text(FMT, "hello world\nkey : value\n")


def test_sniff_over_all_samples():
    for path in sorted(FORMATS.iterdir()):
        doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
        score = nvidia_smi_q.sniff(doc)
        if path.name in ("nvidia-smi-q.txt", "nvidia-smi-q-legacy.txt"):
            assert score >= 0.9, path.name
        else:
            assert score < 0.3, (path.name, score)
    nvidia = FORMATS.parent / "nvidia"
    for path in sorted(nvidia.iterdir()):
        assert nvidia_smi_q.sniff(Document.from_text(path.read_text())) < 0.3, path.name


def test_sniff_without_banner():
    body = "\n".join(OLD_VOLTA.splitlines()[5:])
    assert nvidia_smi_q.sniff(Document.from_text(body)) < 0.9
    assert nvidia_smi_q.sniff(Document.from_text(body.replace("    Performance State", "    GPU UUID : GPU-1\n    Performance State"))) >= 0.8


def _check(text):
    try:
        parse_text(FMT, text)
    except (ParseError, NotApplicable):
        pass


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000))
def test_never_raises_anything_else(text):
    _check(text)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000))
def test_never_raises_on_bytes(data):
    _check(data.decode("latin-1"))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(OLD_VOLTA.splitlines() + ["GPU 00000000:18:00.0", "        X : 1e999 W",
                                                         "    PCI", "Max : 99999999999999999999x"]),
                max_size=60))
def test_shuffled_real_lines_never_crash(lines):
    _check("\n".join(lines))
