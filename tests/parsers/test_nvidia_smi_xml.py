import doctest

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.parsers import nvidia_smi_xml
from tests.parsers.helpers import FORMATS, of_type, parse_fixture, parse_text

FMT = "nvidia-smi-q-xml"


def test_doctests():
    assert doctest.testmod(nvidia_smi_xml).failed == 0


def test_sample_matches_the_text_report():
    ctx = parse_fixture(FMT, "nvidia-smi-q.xml")
    assert not ctx.warnings
    [d] = of_type(ctx, "gpu.device")
    assert (d.gpu, d.bus_id, d.name, d.uuid, d.minor_number) == (
        0, "0000:18:00.0", "NVIDIA H100 80GB HBM3", "GPU-4b1d5c7e-9a2f-7c63-1e0b-55a8d3f2c901", 0)
    assert (d.persistence_mode, d.virtualization_mode, d.mig_mode, d.driver_version) == (
        True, "Pass-Through", "Disabled", "570.133.20")
    assert (d.power_draw_w, d.power_limit_w, d.max_power_limit_w, d.source.line) == (688.41, 700.0, 700.0, 9)
    [p] = of_type(ctx, "gpu.pcie")
    assert (p.gen_current, p.gen_max, p.gen_device_max, p.gen_host_max, p.width_current, p.width_max) == (
        5, 5, 5, None, 16, 16)
    assert (p.downgraded, p.replay_counter, p.source.line) == (False, 0, 50)
    [t] = of_type(ctx, "gpu.throttle")
    assert (t.active, t.power, t.sw_power_cap_us, t.hw_power_brake_us) == (["sw_power_cap"], True, 418733105.0, 0.0)
    [c] = of_type(ctx, "gpu.clocks")
    assert (c.sm_mhz, c.max_sm_mhz, c.performance_state) == (1755.0, 1980.0, "P0")
    [e] = of_type(ctx, "gpu.ecc")
    assert (e.mode_current, e.volatile_uncorrectable, e.aggregate_correctable, e.remap_failure) == ("Enabled", 0, 0, False)
    [tm] = of_type(ctx, "gpu.temperature")
    assert (tm.gpu_c, tm.mem_c, tm.tlimit_margin_c, tm.slowdown_tlimit_c) == (71.0, 79.0, 14.0, -2.0)
    [s] = of_type(ctx, "gpu.summary")
    assert (s.gpus, s.attached_gpus, s.cuda_version, s.source.line) == (1, 8, "12.8", 5)


OLD = """<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v10.dtd">
<nvidia_smi_log>
  <driver_version>418.226.00</driver_version>
  <cuda_version>10.1</cuda_version>
  <attached_gpus>2</attached_gpus>
  <gpu id="00000000:5D:00.0">
    <product_name>Tesla V100-SXM2-32GB</product_name>
    <persistence_mode>Disabled</persistence_mode>
    <pci>
      <pci_gpu_link_info>
        <pcie_gen><max_link_gen>3</max_link_gen><current_link_gen>3</current_link_gen></pcie_gen>
        <link_widths><max_link_width>16x</max_link_width><current_link_width>8x</current_link_width></link_widths>
      </pci_gpu_link_info>
      <replay_counter>12</replay_counter>
    </pci>
    <performance_state>P0</performance_state>
    <clocks_throttle_reasons>
      <clocks_throttle_reason_gpu_idle>Not Active</clocks_throttle_reason_gpu_idle>
      <clocks_throttle_reason_sw_thermal_slowdown>Active</clocks_throttle_reason_sw_thermal_slowdown>
      <clocks_throttle_reason_display_clocks_setting>Active</clocks_throttle_reason_display_clocks_setting>
    </clocks_throttle_reasons>
    <ecc_mode><current_ecc>Enabled</current_ecc><pending_ecc>Enabled</pending_ecc></ecc_mode>
    <ecc_errors>
      <volatile>
        <single_bit><device_memory>3</device_memory><total>3</total></single_bit>
        <double_bit><device_memory>1</device_memory><total>1</total></double_bit>
      </volatile>
      <aggregate>
        <single_bit><total>7</total></single_bit>
        <double_bit><total>N/A</total></double_bit>
      </aggregate>
    </ecc_errors>
    <retired_pages>
      <multiple_single_bit_retirement><retired_count>0</retired_count></multiple_single_bit_retirement>
      <double_bit_retirement><retired_count>1</retired_count></double_bit_retirement>
      <pending_blacklist>Yes</pending_blacklist>
    </retired_pages>
    <temperature>
      <gpu_temp>88 C</gpu_temp>
      <gpu_temp_max_threshold>90 C</gpu_temp_max_threshold>
      <gpu_temp_slow_threshold>87 C</gpu_temp_slow_threshold>
    </temperature>
    <power_readings>
      <power_draw>301.50 W</power_draw>
      <power_limit>300.00 W</power_limit>
      <enforced_power_limit>300.00 W</enforced_power_limit>
    </power_readings>
    <fabric><state>N/A</state><status>N/A</status></fabric>
  </gpu>
  <gpu id="00000000:9A:00.0">
    <product_name>Tesla V100-SXM2-32GB</product_name>
    <fabric><state>In Progress</state><status>N/A</status><cliqueId>N/A</cliqueId></fabric>
  </gpu>
</nvidia_smi_log>
"""


def test_old_element_names():
    ctx = parse_text(FMT, OLD)
    assert not ctx.warnings
    dev = {f.gpu: f for f in of_type(ctx, "gpu.device")}
    assert (dev[0].bus_id, dev[1].bus_id, dev[0].power_draw_w, dev[0].power_limit_w) == (
        "0000:5d:00.0", "0000:9a:00.0", 301.5, 300.0)
    [p] = of_type(ctx, "gpu.pcie")
    assert (p.width_current, p.width_max, p.downgraded, p.replay_counter, p.source.line) == (8, 16, True, 12, 12)
    [t] = of_type(ctx, "gpu.throttle")
    assert (t.active, t.thermal) == (["sw_thermal_slowdown", "display_clock_setting"], True)
    [e] = of_type(ctx, "gpu.ecc")
    assert (e.volatile_correctable, e.volatile_uncorrectable, e.aggregate_correctable, e.aggregate_uncorrectable) == (3, 1, 7, None)
    assert (e.retired_pages_pending, e.retired_double_bit) == (True, 1)
    [tm] = of_type(ctx, "gpu.temperature")
    assert (tm.gpu_c, tm.slowdown_c, tm.shutdown_c) == (88.0, 87.0, 90.0)
    [f] = of_type(ctx, "gpu.fabric")
    assert (f.gpu, f.state, f.status, f.clique_id) == (1, "In Progress", "", "")


def test_truncated_document_keeps_what_was_read():
    cut = OLD[: OLD.index("<fabric><state>In Progress")]
    ctx = parse_text(FMT, cut)
    assert len(of_type(ctx, "gpu.device")) == 2
    assert ctx.warnings and "malformed XML" in ctx.warnings[0][1]


def test_cut_before_any_gpu_is_a_parse_error():
    with pytest.raises(ParseError):
        parse_text(FMT, OLD[: OLD.index("<gpu ")])


def test_entity_expansion_is_refused():
    bomb = ('<?xml version="1.0"?>\n<!DOCTYPE nvidia_smi_log [<!ENTITY a "aaaa">]>\n'
            "<nvidia_smi_log><driver_version>&a;</driver_version></nvidia_smi_log>\n")
    with pytest.raises(ParseError):
        parse_text(FMT, bomb)


def test_no_gpu_log_and_foreign_xml():
    ctx = parse_text(FMT, "<nvidia_smi_log><driver_version>550.54</driver_version>"
                          "<attached_gpus>0</attached_gpus></nvidia_smi_log>")
    [s] = ctx.facts
    assert (s.gpus, s.attached_gpus, s.driver_version) == (0, 0, "550.54")
    with pytest.raises(NotApplicable):
        parse_text(FMT, "<html><body>hi</body></html>")
    with pytest.raises(NotApplicable):
        parse_text(FMT, "plain text")


def test_sniff_over_all_samples():
    for path in sorted(FORMATS.iterdir()):
        doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
        score = nvidia_smi_xml.sniff(doc)
        if path.name == "nvidia-smi-q.xml":
            assert score >= 0.9
        else:
            assert score < 0.3, (path.name, score)


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
@given(st.integers(0, len(OLD)), st.text(max_size=40))
def test_spliced_real_document_never_crashes(at, junk):
    _check(OLD[:at] + junk + OLD[at:])
