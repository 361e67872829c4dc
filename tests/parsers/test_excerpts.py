"""Excerpts (grep'd, cut, header-less) yield the facts their lines prove, and no fact from absence
that the excerpt's filter could not have shown. Fixtures in tests/fixtures/excerpts/ were made by
running the named grep on the shared format samples (and on this machine's real dmesg)."""

from pathlib import Path

import pytest

from tests.parsers.helpers import of_type, parse_text

EXCERPTS = Path(__file__).parents[1] / "fixtures" / "excerpts"
FULL = Path(__file__).parents[1] / "fixtures" / "formats"


def ex(name, crlf=False):
    text = (EXCERPTS / name).read_text()
    return text.replace("\n", "\r\n") if crlf else text


# -- lspci -------------------------------------------------------------------------------------

@pytest.mark.parametrize("crlf", [False, True])
def test_lspci_grep_acs_without_headers_yields_unnamed_acs(crlf):
    ctx = parse_text("lspci-vvv", ex("lspci-vvv-grep-i-acs.txt", crlf), command="lspci -vvv | grep -i acs")
    [acs] = of_type(ctx, "pcie.acs")
    assert (acs.bdf, acs.kind, acs.redirect, acs.source.line) == ("", "unknown", True, 5)
    [s] = of_type(ctx, "pcie.summary")
    assert (s.excerpt, s.capabilities_visible, s.devices, s.unnamed_devices) == (True, False, 0, 4)
    assert not of_type(ctx, "pcie.device")


def test_lspci_grep_links_without_headers_yields_links():
    ctx = parse_text("lspci-vvv", ex("lspci-vvv-grep-lnk.txt"), command="lspci -vvv | grep -E 'LnkCap:|LnkSta:'")
    links = of_type(ctx, "pcie.link")
    assert len(links) == 4 and all(lk.bdf == "" and lk.cap_width == 16 for lk in links)
    assert not ctx.warnings


def test_lspci_headers_and_lnksta_do_not_claim_acs_clean():
    cmd = "lspci -vvv | grep -E '^[0-9a-f]|LnkSta:'"
    ctx = parse_text("lspci-vvv", ex("lspci-vvv-grep-headers-lnksta.txt"), command=cmd)
    [s] = of_type(ctx, "pcie.summary")
    assert s.devices >= 3 and not s.capabilities_visible and s.acs_redirect_ports == 0
    # no 'LnkCap without LnkSta' complaint when the filter shows LnkSta but not LnkCap, or vice versa
    assert not [w for w in ctx.warnings if "LnkSta" in w[1]]


def test_lspci_full_listing_still_claims_what_it_saw():
    text = (FULL / "lspci-vvv.txt").read_text()
    [s] = of_type(parse_text("lspci-vvv", text, command="lspci -vvv"), "pcie.summary")
    assert s.capabilities_visible and not s.excerpt
    [s] = of_type(parse_text("lspci-vvv", text, command="lspci -vvv | head -300"), "pcie.summary")
    assert not s.capabilities_visible and s.excerpt


def test_lspci_head_keeps_devices_but_claims_nothing_clean():
    ctx = parse_text("lspci-vvv", ex("lspci-vvv-head-40.txt"), command="lspci -vvv | head -40")
    [s] = of_type(ctx, "pcie.summary")
    assert s.devices >= 1 and s.excerpt and not s.capabilities_visible
    assert of_type(ctx, "pcie.device")[0].bdf.startswith("0000:")


def test_lspci_acscap_without_acsctl_is_not_acs_off():
    text = "\tCapabilities: [f24 v1] Access Control Services\n\t\tACSCap:\tSrcValid+ ReqRedir+ CmpltRedir+\n"
    hdr = "16:01.0 PCI bridge: Broadcom / LSI PEX890xx PCIe Gen 5 Switch (rev b0)\n"
    assert not of_type(parse_text("lspci-vvv", hdr + text, command="lspci -vvv | grep -E '^[0-9a-f]|ACSCap|Access'"), "pcie.acs")
    [acs] = of_type(parse_text("lspci-vvv", hdr + text, command="lspci -vvv"), "pcie.acs")
    assert acs.redirect is False and acs.bdf == "0000:16:01.0"


def test_lspci_orphan_lines_without_values_are_a_warning_not_an_error():
    ctx = parse_text("lspci-vvv", "\tKernel driver in use: nvidia\n\tKernel modules: nvidia\n")
    assert ctx.warnings and of_type(ctx, "pcie.summary")[0].excerpt


# -- dmesg -------------------------------------------------------------------------------------

def test_dmesg_grep_iommu_x86_takes_domain_and_driver():
    ctx = parse_text("dmesg", ex("dmesg-iommu-x86-grep.txt"), command="dmesg | grep -iE 'iommu|dmar|smmu|hypervisor'")
    [m] = of_type(ctx, "iommu.mode")
    assert (m.default_domain, m.iommu, m.set_on_cmdline) == ("passthrough", "intel", True)


@pytest.mark.parametrize("line,domain,policy", [
    ("[    0.000000] Command line: BOOT_IMAGE=/vmlinuz ro iommu=pt", "passthrough", ""),
    ("[    0.000000] Kernel command line: ro iommu.passthrough=0 iommu.strict=1", "translated", "strict"),
    ("[    0.000000] Command line: ro iommu.passthrough=1", "passthrough", ""),
])
def test_dmesg_boot_parameters_prove_the_mode(line, domain, policy):
    [m] = of_type(parse_text("dmesg", line + "\n", command="dmesg | grep -i iommu"), "iommu.mode")
    assert (m.default_domain, m.policy, m.set_on_cmdline) == (domain, policy, True)


def test_dmesg_lookalike_parameters_prove_nothing():
    ctx = parse_text("dmesg", "[    0.000000] Command line: ro amd_iommu=pt2 myiommu=ptx quiet\n"
                              "[    1.0] DMAR: foo\n")
    [m] = of_type(ctx, "iommu.mode")
    assert m.default_domain == "" and m.iommu == "intel"


def test_dmesg_domain_line_beats_the_command_line():
    text = ("[    0.000000] Command line: ro iommu=pt\n"
            "[    3.871220] iommu: Default domain type: Translated\n")
    [m] = of_type(parse_text("dmesg", text), "iommu.mode")
    assert m.default_domain == "translated"


def test_dmesg_real_vm_excerpt_hypervisor_and_domain():
    ctx = parse_text("dmesg", ex("dmesg-firecracker-vm-grep-iommu.txt"), command="dmesg | grep -iE 'iommu|hypervisor'")
    [v] = of_type(ctx, "platform.virtualization")
    assert (v.role, v.hypervisor) == ("guest", "kvm")
    assert of_type(ctx, "iommu.mode")[0].default_domain == "translated"
    assert not of_type(parse_text("dmesg", "[    0.0] Hypervisor detection failed\n[ 1.0] DMAR: x\n"),
                       "platform.virtualization")


def test_dmesg_smmu_excerpt_leaves_cmdqv_unknown_unless_the_filter_shows_it():
    text = ex("dmesg-smmu-grace-grep-smmu.txt")
    smmus = of_type(parse_text("dmesg", text, command="dmesg | grep -i smmu"), "iommu.smmu")
    assert len(smmus) == 3 and all(s.cmdqv is None and s.cmdq_entries == 524288 for s in smmus)
    smmus = of_type(parse_text("dmesg", text, command="dmesg | grep -iE 'smmu|cmdqv'"), "iommu.smmu")
    assert all(s.cmdqv is False for s in smmus)
    smmus = of_type(parse_text("dmesg", text, command="dmesg"), "iommu.smmu")
    assert all(s.cmdqv is False for s in smmus)


# -- ibstat ------------------------------------------------------------------------------------

@pytest.mark.parametrize("crlf", [False, True])
def test_ibstat_rate_state_lines_without_ca(crlf):
    ctx = parse_text("ibstat", ex("ibstat-grep-rate-state.txt", crlf), command="ibstat | grep -E 'Rate|State'")
    ports = of_type(ctx, "ib.port")
    assert len(ports) == 10 and [p.rate_gbps for p in ports[:3]] == [400.0, 200.0, 40.0]
    assert [p.state for p in ports[:3]] == ["Active", "Active", "Down"]
    assert not ctx.warnings
    [s] = of_type(ctx, "ib.summary")
    assert (s.ports, s.ports_down) == (10, 2)


def test_ibstat_excerpt_of_one_ca_takes_the_device_from_the_command():
    ctx = parse_text("ibstat", "\t\tState: Active\n\t\tRate: 400\n", command="ibstat mlx5_3 | grep -E 'State|Rate'")
    [p] = of_type(ctx, "ib.port")
    assert (p.device, p.rate_gbps) == ("mlx5_3", 400.0)


def test_ibstat_rate_alone_does_not_sniff_but_parses_by_command():
    from clusterdx.facts.document import Document
    from clusterdx.facts.parsers import ibstat
    assert ibstat.sniff(Document.from_text("\t\tRate: 400\n\t\tState: Active\n")) > 0.5
    assert ibstat.sniff(Document.from_text("Rate: 400\nState: Active\nsomething else entirely\n")) == 0.0


# -- lscpu (real output of this machine, grep'd) -------------------------------------------------

def test_lscpu_grep_numa_yields_nodes_but_no_cpu_info():
    ctx = parse_text("lscpu", ex("lscpu-firecracker-vm-grep-numa.txt"), command="lscpu | grep -i numa")
    assert of_type(ctx, "numa.node") and not of_type(ctx, "cpu.info")
    assert not [w for w in ctx.warnings if "Architecture" in w[1]]


def test_lscpu_grep_that_shows_the_hypervisor_line_makes_cpu_info():
    cmd = "lscpu | grep -iE 'model name|hypervisor'"
    [info] = of_type(parse_text("lscpu", ex("lscpu-firecracker-vm-grep-model-hypervisor.txt"), command=cmd), "cpu.info")
    assert info.hypervisor_vendor == "KVM"
    # same filter, a bare-metal machine: no Hypervisor line, and the filter would have shown one
    [info] = of_type(parse_text("lscpu", "Model name:  Neoverse-V2\n", command=cmd), "cpu.info")
    assert info.hypervisor_vendor == ""


# -- ibstatus, cmdline ---------------------------------------------------------------------------

IBSTATUS_GREP = "\tstate:\t\t 4: ACTIVE\n\trate:\t\t 400 Gb/sec (4X NDR)\n\tstate:\t\t 1: DOWN\n\trate:\t\t 10 Gb/sec (4X SDR)\n"


def test_ibstatus_grep_without_headers():
    ctx = parse_text("ibstatus", IBSTATUS_GREP, command="ibstatus | grep -E 'state|rate'")
    assert [(p.state, p.rate_gbps, p.speed) for p in of_type(ctx, "ib.port")] == [
        ("Active", 400.0, "NDR"), ("Down", 10.0, "SDR")]
    assert not ctx.warnings


def test_ibstatus_lines_without_the_command_are_not_ibstatus():
    from clusterdx.facts.base import NotApplicable
    with pytest.raises(NotApplicable):
        parse_text("ibstatus", IBSTATUS_GREP)


@pytest.mark.parametrize("cmd", ["cat /proc/cmdline | tr ' ' '\\n' | grep -E 'iommu|huge'",
                                 "tr ' ' '\\n' < /proc/cmdline", "xargs -n1 < /proc/cmdline"])
def test_cmdline_one_parameter_per_line(cmd):
    ctx = parse_text("proc-cmdline", "intel_iommu=on\nhugepages=64\n", command=cmd)
    assert [(f.name, f.value) for f in of_type(ctx, "kernel.boot_param")] == [("intel_iommu", "on"), ("hugepages", "64")]
    assert not of_type(ctx, "kernel.cmdline") and not ctx.warnings


def test_cmdline_filtered_line_proves_parameters_not_the_whole_line():
    ctx = parse_text("proc-cmdline", "ro quiet iommu=pt\n", command="cat /proc/cmdline | cut -c1-200")
    assert not of_type(ctx, "kernel.cmdline") and len(of_type(ctx, "kernel.boot_param")) == 3
    ctx = parse_text("proc-cmdline", "ro quiet iommu=pt\n", command="cat /proc/cmdline")
    assert of_type(ctx, "kernel.cmdline")[0].raw == "ro quiet iommu=pt"


# -- nvidia-smi topo -m ----------------------------------------------------------------------------

@pytest.mark.parametrize("spaces", [False, True])
def test_topo_gpu_rows_without_header(spaces):
    text = ex("nvidia-smi-topo-h100-grep-gpu-rows.txt")
    if spaces:
        text = text.replace("\t", "   ")
    ctx = parse_text("nvidia-smi-topo", text, command="nvidia-smi topo -m | grep ^GPU")
    gpus = of_type(ctx, "topo.gpu")
    assert [g.gpu for g in gpus] == list(range(8)) and gpus[0].cpus[:2] == [0, 1] and gpus[0].numa_node == 0
    links = of_type(ctx, "topo.link")
    assert len(links) == 28 and {lk.link for lk in links} == {"NV18"} and {lk.kind for lk in links} == {"gpu-gpu"}
    assert not of_type(ctx, "topo.nic")  # NIC columns are not named by any row here


def test_topo_rows_name_nic_columns_when_their_rows_are_there():
    text = "GPU0\t X \tPIX\t0-3\t0\nNIC0\tPIX\t X \n"
    links = of_type(parse_text("nvidia-smi-topo", text), "topo.link")
    assert [(lk.a, lk.b, lk.kind, lk.link) for lk in links] == [("GPU0", "NIC0", "gpu-nic", "PIX")]


def test_topo_row_lookalike_without_x_cell_warns():
    ctx = parse_text("nvidia-smi-topo", "GPU0\tSYS\tSYS\t0-3\n", command="nvidia-smi topo -m | grep GPU0")
    assert not of_type(ctx, "topo.link") and any("X cell" in w[1] for w in ctx.warnings)


# -- ibv_devinfo -----------------------------------------------------------------------------------

def test_ibv_devinfo_port_lines_without_hca_id():
    text = ("\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tactive_width:\t\t4X (2)\n\t\t\tactive_speed:\t\t100.0 Gbps (128)\n"
            "\t\t\tstate:\t\t\tPORT_DOWN (1)\n\t\t\tactive_width:\t\t4X (2)\n\t\t\tactive_speed:\t\t2.5 Gbps (1)\n")
    ctx = parse_text("ibv_devinfo", text, command="ibv_devinfo -d mlx5_0 | grep -E 'state|active_'")
    ports = of_type(ctx, "ib.port")
    assert [(p.device, p.state, p.rate_gbps) for p in ports] == [("mlx5_0", "Active", 400.0), ("mlx5_0", "Down", 10.0)]
    assert not ctx.warnings


# -- numactl -----------------------------------------------------------------------------------------

def test_numactl_size_lines_do_not_claim_memory_only_nodes():
    ctx = parse_text("numactl-hardware", ex("numactl-hardware-gh200-grep-size.txt"), command="numactl -H | grep size")
    assert not of_type(ctx, "numa.node") and any("cpus line" in w[1] for w in ctx.warnings)


def test_numactl_cpus_lines_show_memory_only_nodes_and_no_distance_complaint():
    ctx = parse_text("numactl-hardware", ex("numactl-hardware-gh200-grep-cpus.txt"), command="numactl -H | grep cpus")
    nodes = of_type(ctx, "numa.node")
    assert len(nodes) == 9 and nodes[0].cpu_count == 72 and nodes[1].cpu_count == 0 and nodes[1].size_mb is None
    assert not ctx.warnings
    # the whole output without a matrix does get the complaint
    ctx = parse_text("numactl-hardware", ex("numactl-hardware-gh200-grep-cpus.txt"), command="numactl -H")
    assert any("distance matrix" in w[1] for w in ctx.warnings)


# -- cpupower ----------------------------------------------------------------------------------------

def test_cpupower_frequency_info_without_analyzing_line():
    ctx = parse_text("cpupower-frequency-info", ex("cpupower-frequency-info-grep-governor-driver.txt"),
                     command="cpupower frequency-info | grep -E 'governor|driver'")
    [p] = of_type(ctx, "cpu.freq_policy")
    assert (p.cpu, p.driver, p.governor) == (-1, "intel_pstate", "powersave")
    assert of_type(ctx, "cpu.governor_summary")[0].governors == ["powersave"]
    assert not ctx.warnings
    # the same lines without a command are not an excerpt we can vouch for
    ctx = parse_text("cpupower-frequency-info", "analyzing CPU 3:\n  driver: acpi-cpufreq\n",
                     command="cpupower -c 3 frequency-info")
    assert of_type(ctx, "cpu.freq_policy")[0].cpu == 3


def test_cpupower_idle_states_excerpt_makes_no_summary_unless_every_state_shows():
    ctx = parse_text("cpupower-idle-info", ex("cpupower-idle-info-grep-states.txt"),
                     command="cpupower idle-info | grep -E 'driver|analyzing|C[0-9]'")
    assert of_type(ctx, "cpu.idle_state") and not of_type(ctx, "cpu.idle_summary")
    ctx = parse_text("cpupower-idle-info", ex("cpupower-idle-info-grep-states-poll.txt"),
                     command="cpupower idle-info | grep -E 'driver|analyzing|C[0-9]|POLL'")
    [s] = of_type(ctx, "cpu.idle_summary")
    assert (s.state_count, s.enabled_count, s.any_disabled) == (4, 3, True)


# -- sysctl from /proc/sys ---------------------------------------------------------------------------

@pytest.mark.parametrize("crlf", [False, True])
def test_sysctl_from_proc_sys_paths(crlf):
    text = "/proc/sys/kernel/numa_balancing:1\n/proc/sys/vm/swappiness:60\n"
    if crlf:
        text = text.replace("\n", "\r\n")
    ctx = parse_text("sysctl", text, command="grep -H . /proc/sys/kernel/numa_balancing /proc/sys/vm/swappiness")
    assert [(f.key, f.value_num) for f in of_type(ctx, "kernel.sysctl")] == [("kernel.numa_balancing", 1.0), ("vm.swappiness", 60.0)]
    ctx = parse_text("sysctl", "==> /proc/sys/kernel/numa_balancing <==\n0\n", command="head /proc/sys/kernel/numa_balancing /proc/sys/vm/swappiness")
    assert [(f.key, f.value) for f in of_type(ctx, "kernel.sysctl")] == [("kernel.numa_balancing", "0")]
    ctx = parse_text("sysctl", "1\n", command="cat /proc/sys/kernel/numa_balancing")
    assert [(f.key, f.source.line) for f in of_type(ctx, "kernel.sysctl")] == [("kernel.numa_balancing", 1)]


def test_sysctl_lookalike_proc_paths_are_not_sysctls():
    from clusterdx.facts.document import Document
    from clusterdx.facts.parsers import sysctl
    assert sysctl.sniff(Document.from_text("/proc/cpuinfo:processor 0\n/proc/meminfo:MemTotal 1\n")) == 0.0


# -- new patterns on long repeated lines --------------------------------------------------------------

def test_long_repeated_lines_stay_fast():
    import time
    from clusterdx.facts.labels import split_labels
    from clusterdx.facts.formats import all_formats
    from clusterdx.facts.transcript import Segment
    all_formats()  # importing every parser is not what is timed
    t = time.perf_counter()
    parse_text("dmesg", "[    0.000000] Command line: " + "iommu=pt " * 20000 + "\n"
               "[    0.1] Hypervisor detected: " + "K" * 50000 + "\n", command="dmesg | grep -i iommu")
    parse_text("sysctl", "/proc/sys/" + "a/" * 30000 + ":1\n" + "/proc/sys/kernel/x:" + "1" * 50000 + "\n")
    parse_text("proc-cmdline", "iommu=pt\n", command="tr ' ' '\\n' " + "tr  " * 1000)
    split_labels(Segment("for x in " + "a; do " * 650 + " echo $x; done", ["a"] * 50, 1))
    split_labels(Segment("srun " + "-N1 " * 1000 + "-l hostname", ["0: a"] * 50, 1))
    parse_text("lspci-vvv", "\t\tACSCtl:\t" + "SrcValid+ " * 20000 + "\n" * 2)
    parse_text("ibstat", "\t\tState: " + "Active " * 20000 + "\n\t\tRate: 400\n", command="ibstat | grep -E 'State|Rate'")
    assert time.perf_counter() - t < 2.0


# -- perf stat ---------------------------------------------------------------------------------------

def test_perf_stat_counter_lines_without_header():
    cmd = "perf stat -a -- sleep 10 2>&1 | grep -E 'cycles|instructions'"
    ctx = parse_text("perf-stat", ex("perf-stat-default-grep-cycles.txt"), command=cmd)
    assert [c.event for c in of_type(ctx, "perf.counter")] == ["cycles", "instructions", "ref-cycles"]
    assert of_type(ctx, "cpu.effective_freq")[0].ghz == 2.988 and not ctx.warnings
    # without a command saying perf stat, header-less counter lines are not claimed
    from clusterdx.facts.base import NotApplicable
    with pytest.raises(NotApplicable):
        parse_text("perf-stat", ex("perf-stat-default-grep-cycles.txt"))
