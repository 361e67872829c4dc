"""The prose reader: what a ticket states, as facts with provenance 'reported'."""

import doctest
import time
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document
from clusterdx.facts.ingest import ingest, ingest_documents
from clusterdx.facts.parsers import prose
from tests.parsers.helpers import FORMATS, of_type, parse_or_refuse, parse_text

PROSE = Path(__file__).parents[1] / "fixtures" / "prose"


def read(text: str):
    return parse_text("prose", text)


def facts_of(text: str) -> list:
    try:
        return read(text).facts
    except NotApplicable:
        return []


def one(ctx, fact_type: str):
    found = of_type(ctx, fact_type)
    assert len(found) == 1, [f.describe() for f in ctx.facts]
    return found[0]


def test_doctests():
    assert doctest.testmod(prose).failed == 0


def test_every_fact_is_reported():
    ctx = parse_text("prose", prose.SAMPLE)
    assert ctx.facts and all(f.provenance == "reported" for f in ctx.facts)


# -- a realistic GitHub issue body, through ingestion ---------------------------------------------


def issue():
    res = ingest([PROSE / "github-issue-nccl-regression.md"])
    return res.inputs, res.facts


def test_issue_with_pasted_log_reads_the_block_as_the_tool_and_the_words_as_prose():
    recs, facts = issue()
    by_name = {r.path.rsplit("/", 1)[-1]: r for r in recs}
    block = by_name["github-issue-nccl-regression.md#code1"]
    assert block.format == "nccl-debug" and block.status == "parsed"
    assert by_name["github-issue-nccl-regression.md"].format == "prose"
    measured = [f for f in facts if f.provenance == "measured"]
    reported = [f for f in facts if f.provenance == "reported"]
    assert {f.fact_type for f in measured} == {"nccl.version", "nccl.net"}
    assert sum(r.facts for r in recs) == len(facts)
    # nothing reported comes from the lines the NCCL parser read
    assert {f.source.line for f in reported}.isdisjoint({f.source.line for f in measured})


def test_issue_change_statement():
    _, facts = issue()
    [c] = [f for f in facts if f.fact_type == "reported.change"]
    assert (c.component, c.from_version, c.to_version, c.direction, c.percent) == \
        ("nccl", "2.18.3", "2.21.5", "slower", 40.0)
    assert c.source.line == 3


def test_issue_inventory_skips_the_gpu_of_the_old_cluster():
    _, facts = issue()
    inv = {(f.item, f.model): f for f in facts if f.fact_type == "reported.inventory"}
    assert ("gpu", "A100") not in inv  # "Unlike the A100 cluster we had before, ..."
    assert (inv["gpu", "H100"].count, inv["gpu", "H100"].form) == (8, "PCIe")
    nic = inv["nic", "ConnectX-6"]
    assert (nic.count, nic.gbps, nic.interconnect) == (2, 200.0, "RoCE")


def test_issue_versions_settings_and_bios():
    _, facts = issue()
    versions = {f.component: f.version for f in facts if f.fact_type == "reported.version"}
    assert versions == {"cuda": "12.4", "driver": "550.54.15", "pytorch": "2.3.1",
                        "kernel": "5.15.0-105-generic", "os": "Ubuntu 22.04"}
    settings_ = {f.name: (f.state, f.value, f.kind) for f in facts if f.fact_type == "reported.setting"}
    assert settings_["NCCL_IB_HCA"] == ("unset", "", "env")
    assert settings_["NCCL_IB_GID_INDEX"] == ("unset", "", "env")
    assert settings_["NCCL_SOCKET_IFNAME"] == ("set", "ens1f0", "env")
    assert settings_["SR-IOV"] == ("enabled", "Enabled", "bios")
    assert settings_["ACS"] == ("disabled", "Disabled", "bios")
    [env] = [f for f in facts if f.fact_type == "env.var"]
    assert (env.name, env.value, env.provenance) == ("NCCL_SOCKET_IFNAME", "ens1f0", "reported")


def test_issue_path_with_a_version_is_not_a_version():
    _, facts = issue()
    # "/opt/nccl-2.18/lib/libnccl.so.2" on line 27 and the measured 2.21.5 in the fence
    assert not [f for f in facts if f.fact_type == "reported.version" and f.component == "nccl"
                and f.version.startswith("2.18")]


def test_issue_table_gives_one_metric_per_unit_cell():
    _, facts = issue()
    rows = sorted((f.label, f.metric, f.value) for f in facts
                  if f.fact_type == "reported.metric" and f.label.startswith("n0"))
    assert rows == [("n01-n02", "algbw", 11.4), ("n01-n02", "busbw", 21.3), ("n01-n03", "busbw", 21.0),
                    ("n03-n04", "algbw", 6.8), ("n03-n04", "busbw", 12.8)]  # '-' and '35' (no unit) skipped


def test_issue_code_fence_is_not_read_as_context_or_numbers():
    _, facts = issue()
    # the fence says "we run inside a docker container, busbw 12 GB/s": a log line, not a statement
    assert not [f for f in facts if f.fact_type == "reported.context" and f.platform == "docker"]
    assert not [f for f in facts if f.fact_type == "reported.metric" and f.value == 12.0]
    roles = {f.role for f in facts if f.fact_type == "reported.context"}
    assert roles == {"container", "scheduler", "bare-metal"}  # Pyxis, Slurm, bare metal
    # two different roles stated: no platform.virtualization twin is guessed
    assert not [f for f in facts if f.fact_type == "platform.virtualization"]


@pytest.mark.parametrize("text, role", [
    ("I installed CUDA, pytorch, etc on the host directly.", "bare-metal"),
    ("Running natively on the host gives the same hang.", "bare-metal"),
    ("We also ran it outside of docker: same result.", "bare-metal"),
    ("The job runs in a docker container on the host.", "container"),   # look-alike: a host named, container run
    ("4x RTX 6000 Ada in a tower workstation, Ubuntu 24.04", "bare-metal"),
    ("Two RTX A6000 in my desktop run DDP", "bare-metal"),
])
def test_host_run_in_words(text, role):
    roles = {f.role for f in facts_of(text + "\n") if f.fact_type == "reported.context"}
    assert role in roles and (role == "bare-metal" or "bare-metal" not in roles), roles


@pytest.mark.parametrize("text", [
    "We run on workstation GPUs (RTX A6000) in the data center.",   # the board's tier, not the machine
    "The job runs from a virtual desktop in Azure.",
])
def test_workstation_lookalikes_are_not_bare_metal(text):
    assert "bare-metal" not in {f.role for f in facts_of(text + "\n") if f.fact_type == "reported.context"}


def test_container_on_a_cloud_instance_is_a_container():
    # "p4d + docker": a cloud VM and a container both stated; the job sees the container
    ctx = read("I am trying to use EFA on p4d + docker, with a DLC-based image.\n")
    virt = one(ctx, "platform.virtualization")
    assert (virt.role, virt.container) == ("container", "docker")
    # a cloud instance alone stays a guest; a container said to run on bare metal stays unresolved
    assert one(read("We run nccl-tests on p4d.24xlarge instances.\n"), "platform.virtualization").role == "guest"
    assert not of_type(read("We run it in docker on bare metal nodes, and on GCP VMs too.\n"), "platform.virtualization")


def test_crlf_note_through_ingestion():
    res = ingest([PROSE / "crlf-note.txt"])
    [rec] = res.inputs
    assert (rec.format, rec.status) == ("prose", "parsed")
    virt = [f for f in res.facts if f.fact_type == "platform.virtualization"]
    assert [(v.role, v.container) for v in virt] == [("container", "docker")]
    env = [f for f in res.facts if f.fact_type == "env.var"]
    assert [(e.name, e.value) for e in env] == [("NCCL_DEBUG", "INFO")]  # no stray \r
    steps = sorted(f.value_norm for f in res.facts if f.fact_type == "reported.metric" and f.metric == "step_time")
    assert steps == [300.0, 410.0]


# -- both sides of each extraction ----------------------------------------------------------------


def test_number_with_and_without_unit():
    assert one(read("all_reduce busbw is only 182.5 GB/s on two nodes\n"), "reported.metric").value_norm == 182.5
    # a number without a unit is no metric (the node count still is a workload statement)
    assert not [f for f in facts_of("all_reduce busbw is only 182.5 on two nodes\n") if f.fact_type == "reported.metric"]


def test_bits_are_not_bytes():
    m = one(read("nccl-tests busbw reaches 400 Gb/s between the two hosts\n"), "reported.metric")
    assert (m.metric, m.unit, m.value_norm) == ("busbw", "Gb/s", 50.0)


def test_nic_rate_is_not_a_measured_bandwidth():
    ctx = read("Each node has 8x ConnectX-7 at 400 Gbps\n")
    assert not of_type(ctx, "reported.metric")
    assert one(ctx, "reported.inventory").gbps == 400.0


def test_a_bare_duration_is_not_a_step_time():
    ctx = read("the watchdog fires after 30 s when the collective hangs\n")
    assert not of_type(ctx, "reported.metric")
    assert one(ctx, "reported.symptom").kind == "hang"  # the hang is stated; the 30 s is no step time
    assert one(read("the step time went up to 30 s per step\n"), "reported.metric").value_norm == 30000.0


def test_not_set_versus_set():
    unset = one(read("NCCL_IB_HCA: (not set)\n"), "reported.setting")
    assert (unset.state, unset.value) == ("unset", "")
    assert not of_type(read("NCCL_IB_HCA: (not set)\n"), "env.var")
    ctx = read("NCCL_IB_HCA=mlx5_0,mlx5_1\n")
    assert one(ctx, "reported.setting").state == "set"
    # a list value is the whole list (NCCL reads NCCL_IB_HCA=mlx5_0,mlx5_1 as two HCAs); a comma
    # followed by a space ends the value (test_list_values_keep_their_commas)
    assert one(ctx, "env.var").value == "mlx5_0,mlx5_1"
    ctx = read("export NCCL_IB_HCA=mlx5_0:1\n")
    assert one(ctx, "env.var").value == "mlx5_0:1"


def test_is_not_set_versus_is_important():
    assert one(read("NCCL_IB_GID_INDEX is not set\n"), "reported.setting").state == "unset"
    with pytest.raises(NotApplicable):
        read("NCCL_IB_GID_INDEX is important\n")


def test_lowercase_or_unknown_prefix_is_not_an_env_setting():
    with pytest.raises(NotApplicable):
        read("the foo=bar key is ignored\n")


def test_secret_values_are_redacted():
    ctx = read("export NCCL_DEBUG=INFO TORCH_HUB_TOKEN=abc123secret\n")
    assert all("abc123secret" not in f.model_dump_json() for f in ctx.facts)


def test_nccl_version_versus_a_path_holding_one():
    v = one(read("We use NCCL 2.18.3 with CUDA 12.2\n"), "nccl.version")
    assert (v.version, v.version_num, v.provenance) == ("2.18.3", 21803, "reported")
    with pytest.raises(NotApplicable):
        read("LD_LIBRARY_PATH points at /usr/local/nccl-2.18.3/lib\n")
    with pytest.raises(NotApplicable):
        read("we copied libnccl.so.2.18.3 over by hand\n")


def test_two_part_nccl_version_is_reported_but_not_an_nccl_version_fact():
    ctx = read("NCCL 2.18 is what the image ships\n")
    assert one(ctx, "reported.version").version == "2.18"
    assert not of_type(ctx, "nccl.version")


def test_bios_line_enabled_and_disabled():
    s = one(read("BIOS: SR-IOV Enabled\n"), "reported.setting")
    assert (s.kind, s.name, s.state) == ("bios", "SR-IOV", "enabled")
    s = one(read("BIOS setting C-States = Disabled\n"), "reported.setting")
    assert (s.name, s.state) == ("C-States", "disabled")


def test_switch_lines_count_as_bios_only_under_a_bios_heading():
    assert one(read("## BIOS settings\n- IOMMU: Disabled\n"), "reported.setting").state == "disabled"
    with pytest.raises(NotApplicable):
        read("## Notes\n- Monitoring: Enabled\n")


def test_gpu_count_and_form():
    inv = one(read("a node has 8x H100 PCIe and nothing else\n"), "reported.inventory")
    assert (inv.model, inv.count, inv.form) == ("H100", 8, "PCIe")
    inv = one(read("We got H100 NVL cards in a new box\n"), "reported.inventory")
    assert (inv.count, inv.form) == (None, "NVL")


@pytest.mark.parametrize("text, count, form", [
    ("We have 2x A100 40GB PCIe per node.", 2, "PCIe"),
    ("GPU: NVIDIA A100-PCIE-40GB", None, "PCIe"),
    ("4 x A100 (PCIe, 40 GB) in each box", 4, "PCIe"),
    ("NVIDIA H100 PCIe 80GB x 8", 8, "PCIe"),
    ("NVIDIA A100 80GB PCIe cards", None, "PCIe"),
    ("H100 80GB HBM3 SXM5 on each node", None, "SXM"),
    ("4x A100 80GB SXM4", 4, "SXM"),
    ("two H200 NVL boards", None, "NVL"),
])
def test_gpu_form_read_past_memory_and_brackets(text, count, form):
    inv = [f for f in of_type(read(text + "\n"), "reported.inventory") if f.item == "gpu"]
    assert [(f.count, f.form) for f in inv] == [(count, form)]


@pytest.mark.parametrize("text, model, count", [
    ("- GPU model and memory: gtx1070 * 2", "GTX 1070", 2),      # TensorFlow's issue template
    ("GPU: GeForce GTX 1070 x2, Ubuntu 20.04", "GTX 1070", 2),
    ("Tesla V100 ×4 in one box", "V100", 4),
    ("RTX 3090 x 16 slots? no, one card", "RTX 3090", None),      # a slot width, not a count
    ("GTX 1070 in a PCIe x16 slot", "GTX 1070", None),
])
def test_gpu_count_glued_after_the_name(text, model, count):
    inv = [f for f in of_type(read(text + "\n"), "reported.inventory") if f.item == "gpu"]
    assert [(f.model, f.count) for f in inv] == [(model, count)]


@pytest.mark.parametrize("text, component, version", [
    ("- OS Platform and Distribution (e.g., Linux Ubuntu 16.04): Ubuntu20.04", "os", "Ubuntu20.04"),
    ("- CUDA/cuDNN version: 10.1", "cuda", "10.1"),
    ("- TensorFlow version (use command below): 2.3.1 (e.g. CUDA 9.0 was tried)", None, None),
    ("Ubuntu 22.04 with CUDA 12.1", "os", "Ubuntu 22.04"),
])
def test_template_examples_are_not_the_users_versions(text, component, version):
    got = [(f.component, f.version) for f in facts_of(text + "\n") if f.fact_type == "reported.version"]
    if component is None:
        assert got == []
    else:
        assert (component, version) in got
        assert all(v != "Ubuntu 16.04" for _, v in got)


@pytest.mark.parametrize("text", [
    "8 x NVIDIA H100 80GB HBM3 in each node",      # no form written: the SKU's usual (SXM)
    "A100 80GB, PCIe Gen4 x16 slots on the riser",  # PCIe names the bus, not the card
    "A100 for training, the PCIe switch is shared",
])
def test_gpu_form_lookalikes_keep_the_usual_form(text):
    inv = [f for f in of_type(read(text + "\n"), "reported.inventory") if f.item == "gpu"]
    assert [(f.form, f.count) for f in inv] == [("SXM", None if "8 x" not in text else 8)]


def test_gpu_summary_names_the_stated_form_for_the_reference():
    from clusterdx.facts.reference import infer
    facts = read("Two nodes, each with 8x H100 PCIe.\n").facts
    assert one(read("Two nodes, each with 8x H100 PCIe.\n"), "gpu.summary").models == ["H100 PCIe"]
    assert infer(facts).system.id == "h100-pcie-2x400g"
    # the usual form adds nothing to the name: the SXM reference
    sxm = read("Two nodes, each with 8x H100 SXM.\n")
    assert one(sxm, "gpu.summary").models == ["H100"]
    assert infer(sxm.facts).system.id.startswith("dgx-h100")


def test_longest_gpu_name_wins():
    assert one(read("the rack holds 4x GB200 per tray\n"), "reported.inventory").model == "GB200"
    gpus = [f for f in of_type(read("four A10G GPUs in a g5 instance\n"), "reported.inventory") if f.item == "gpu"]
    assert [g.model for g in gpus] == ["A10G"]
    # 'g5' names a family of sizes: the GPU count is not taken from its largest size
    assert gpus[0].count is None


def test_lookalike_gpu_in_a_comparison_is_skipped():
    assert not [f for f in facts_of("Unlike the A100 we had before, throughput is worse now.\n")
                if f.fact_type == "reported.inventory"]
    ctx = read("It is slower than on H100 and we run 8x H200.\n")
    assert [f.model for f in of_type(ctx, "reported.inventory")] == ["H200"]


def test_gpu_name_inside_a_longer_token_is_not_a_gpu():
    with pytest.raises(NotApplicable):
        read("the file h100_results_v2.tar was uploaded to the bucket\n")


def test_instance_type_expands_through_the_gazetteer():
    ctx = read("The job runs on two a3-megagpu-8g nodes in GKE\n")
    inv = {f.item: f for f in of_type(ctx, "reported.inventory")}
    assert inv["instance"].model == "a3-megagpu-8g"
    assert (inv["gpu"].model, inv["gpu"].count) == ("H100", 8)
    assert (inv["nic"].count, inv["nic"].gbps) == (8, 200.0)
    ctxs = {f.platform: f for f in of_type(ctx, "reported.context")}
    assert ctxs["cloud"].provider == "gcp" and "kubernetes" in ctxs


def test_cloud_and_gpu_narrow_the_instance_gazetteer():
    # no instance type named: GCP's H100 shapes (a3-highgpu-8g, a3-megagpu-8g) both need a GPUDirect plugin
    ctx = read("Our jobs run on GCP H100 instances, two VMs.\n")
    inst = [f for f in of_type(ctx, "reported.inventory") if f.item == "instance"][0]
    assert sorted(inst.candidates) == ["a3-highgpu-8g", "a3-megagpu-8g"]
    assert "tcpx" in inst.net_plugin and inst.vm is True and inst.instance_type == ""
    assert one(ctx, "platform.virtualization").role == "guest"


@pytest.mark.parametrize("text", [
    "Our jobs run on GCP with A100 and H100 GPUs.\n",         # two GPU models: no single shape family
    "We moved from AWS to our own H100 cluster.\n",           # the cloud is the past
    "The job runs on two a3-highgpu-8g VMs on GCP with H100.\n",  # the type is stated: no inference
])
def test_cloud_shape_inference_lookalikes(text):
    assert not [f for f in facts_of(text) if f.fact_type == "reported.inventory" and f.candidates]


def test_plugin_fabric_and_plugin_mention():
    ctx = read("Two p4d.24xlarge nodes with EFA; we use the aws-ofi-nccl plugin 1.7.\n")
    nic = [f for f in of_type(ctx, "reported.inventory") if f.item == "nic"][0]
    assert nic.net_plugin == "aws-ofi-nccl"
    assert [(f.name, f.kind) for f in of_type(ctx, "reported.setting")] == [("aws-ofi-nccl", "plugin")]
    assert not [f for f in facts_of("We run without the aws-ofi-nccl plugin on p4d nodes.\n")
                if f.fact_type == "reported.setting"]
    assert not [f for f in facts_of("Is the TCPX plugin needed on a3-highgpu-8g?\n")
                if f.fact_type == "reported.setting"]
    ib = [f for f in of_type(read("8x ConnectX-7 400G InfiniBand per node\n"), "reported.inventory") if f.item == "nic"]
    assert ib and ib[0].net_plugin == ""


@pytest.mark.parametrize("text, bonded", [
    ("Our RoCE bonding network reaches 180+ GB/s on each NIC (mlx5_bond_x) with ib_write_bw.", True),
    ("The two ports of each card are bonded into one RDMA device (LAG).", True),
    ("bond0 of the onboard NICs carries the management traffic.", False),
    ("We do not use bonding on the RDMA NICs.", False),
])
def test_bonded_rdma_nics(text, bonded):
    found = [f for f in facts_of(text + "\n") if f.fact_type == "reported.inventory" and f.bonded]
    assert bool(found) == bonded, found


@pytest.mark.parametrize("text, rails", [
    ("I have assigned different subnets to different NICs within a node to avoid ARP flux issues.", True),
    ("We put one subnet per rail behind one pair of leaf switches.", True),
    ("Each NIC is on its own subnet.", True),
    ("The fabric is rail-optimized.", True),
    ("All NICs share the same subnet, not a rail-optimized design.", False),
    ("We have 8 nodes on one subnet.", False),
])
def test_nics_on_separate_rails(text, rails):
    found = [f for f in facts_of(text + "\n") if f.fact_type == "reported.inventory" and f.rails]
    assert bool(found) == rails, found


@pytest.mark.parametrize("text, component", [
    ("# Performance drop in all_reduce_perf at 1 MB\n\nA performance drop has been introduced.\n"
     "A git bisect returned this commit as the introducer.\n", "nccl"),
    ("Step time is 20% slower since the upgrade. We bisected the kernel and found the commit.\n", "kernel"),
    ("Training got slower last month. I bisected our code base to one commit.\n", ""),
])
def test_bisected_slowdown_is_a_change(text, component):
    changes = [f for f in facts_of(text) if f.fact_type == "reported.change" and "bisect" in f.text]
    assert [(c.component, c.direction) for c in changes] == [(component, "slower")], changes


def test_bisect_without_a_slowdown_is_no_change():
    text = "The build of all_reduce_perf broke on master; I bisected it to one commit.\n"
    assert not [f for f in facts_of(text) if f.fact_type == "reported.change"]


def test_short_instance_alias_needs_an_instance_word():
    assert of_type(read("we rent p5 instances from AWS\n"), "reported.inventory")
    with pytest.raises(NotApplicable):
        read("see section p5 of the document for details\n")


def test_moved_from_an_instance_type_is_not_inventory():
    assert not [f for f in facts_of("We moved from p4d.24xlarge last month and it is fine otherwise\n")
                if f.fact_type == "reported.inventory"]


def test_context_statement_and_its_negation():
    c = one(read("The job runs in Kubernetes pods on our cluster\n"), "reported.context")
    assert (c.platform, c.role) == ("kubernetes", "container")
    with pytest.raises(NotApplicable):
        read("This does not run in a container at all\n")


def test_change_direction_factor_and_component():
    c = one(read("Since the NCCL upgrade it is twice as slow\n"), "reported.change")
    assert (c.component, c.direction, c.factor) == ("nccl", "slower", 2.0)
    c = one(read("After the driver update 2.18 -> 2.19 training got 3x faster\n"), "reported.change")
    assert (c.component, c.direction, c.factor, c.from_version, c.to_version) == ("driver", "faster", 3.0, "2.18", "2.19")


@pytest.mark.parametrize("text, expected", [
    # the release before "than" is the slow one after a slower-word, the fast one after a faster-word
    ("# why nccl2.7.8 is lower than nccl 2.5.6 for all_reduce_perf?\n", ("nccl", "2.5.6", "2.7.8")),
    ("# pytorch1.1 training speed slower than pytorch1.0\n", ("pytorch", "1.0", "1.1")),
    ("The script runs much slower in Environment 2 (torch 2.3) than in Environment 1 (torch 2.1).\n",
     ("pytorch", "2.1", "2.3")),
    ("With NCCL 2.18.3 all_reduce is faster than with NCCL 2.19.3 on the same nodes.\n", ("nccl", "2.18.3", "2.19.3")),
])
def test_two_releases_compared_with_than_are_a_change(text, expected):
    [c] = [f for f in of_type(read(text), "reported.change") if f.component == expected[0]]
    assert (c.component, c.from_version, c.to_version, c.direction) == expected + ("slower",)


def test_than_without_two_releases_of_one_component_is_no_change():
    # one release against the hardware's figure, and two components, compare no releases
    for text in ("NCCL 2.19.3 gives lower busbw than the 400 Gb/s links should allow.\n",
                 "torch 2.3 with NCCL 2.20.5 is slower than we hoped.\n"):
        assert not [c for c in of_type(read(text), "reported.change") if c.from_version], text


def test_framework_wheels_that_bundle_different_nccl_imply_an_nccl_change():
    changes = of_type(read("DDP is 25% slower with torch 2.2.0 than with torch 2.1.2, same node.\n"), "reported.change")
    nccl = [c for c in changes if c.component == "nccl"]
    assert [(c.from_version, c.to_version, c.direction, c.implied_by) for c in nccl] == \
        [("2.18.1", "2.19.3", "slower", "pytorch 2.1.2 -> 2.2.0")]
    # a patch update keeps the series' pin; a series the table does not list gives nothing
    for text in ("DDP is 5% slower with torch 2.1.2 than with torch 2.1.0.\n",
                 "DDP is slower with torch 1.13 than with torch 1.12.\n"):
        changes = of_type(read(text), "reported.change")
        assert [c.component for c in changes] == ["pytorch"], text


@pytest.mark.parametrize("text, fires", [
    ("Any job that includes instance-8g-96c-1 fails while NCCL sets up its connections.\n", True),
    ("The job hangs at init, but only when gpu-a07 is in the allocation.\n", True),
    ("All_reduce is slow whenever node 3 takes part.\n", True),
    # nothing went wrong; the size of the job, not a node; a node named without the condition
    ("Every job that includes gpu-a07 runs at full speed.\n", False),
    ("Any job that includes more than 16 nodes fails at init.\n", False),
    ("The job on gpu-a07 fails at init.\n", False),
])
def test_a_problem_that_follows_one_named_node(text, fires):
    kinds = [f.kind for f in facts_of(text) if f.fact_type == "reported.symptom"]
    assert ("one-node" in kinds) == fires, kinds


def test_a_slow_word_without_a_change_is_no_change():
    assert not of_type(read("all_reduce busbw is slow at 20 GB/s\n"), "reported.change")


def test_percent_slower():
    ctx = read("The step is 25% slower after we changed the image.\n")
    assert one(ctx, "reported.metric").metric == "slowdown_pct"
    assert one(ctx, "reported.change").percent == 25.0


def test_table_without_units_yields_nothing():
    with pytest.raises(NotApplicable):
        read("| pair | result |\n|---|---|\n| n1-n2 | 21.3 |\n")


def test_key_value_table_of_settings():
    ctx = read("| Variable | Value |\n|---|---|\n| NCCL_IB_HCA | mlx5_0 |\n| NCCL_NET_GDR_LEVEL | (not set) |\n")
    got = {f.name: f.state for f in of_type(ctx, "reported.setting")}
    assert got == {"NCCL_IB_HCA": "set", "NCCL_NET_GDR_LEVEL": "unset"}


def test_nothing_to_say_is_not_applicable():
    with pytest.raises(NotApplicable):
        read("Hi team, any update on this one? Thanks a lot for looking into it.\n")


def test_long_repeated_lines_stay_linear():
    for text in ("NCCL " * 20000, "1.2.3 " * 20000, "| " * 20000, "8x " * 20000, "a" * 200000,
                 "NCCL_X=" * 10000, "from 2.1 to " * 10000, "BIOS " * 20000, "it/s " * 20000,
                 "GPU to GPU nan " * 10000, "after 3 hours " * 10000):
        start = time.perf_counter()
        try:
            read(text + "\n")
        except NotApplicable:
            pass
        assert time.perf_counter() - start < 5.0, text[:20]


def test_over_long_line_is_cut_with_a_warning():
    ctx = read("NCCL 2.18.3 is in use " + "x" * (prose.MAX_LINE + 10) + "\n")
    assert ctx.warnings and ctx.warnings[0][0] == 1
    assert one(ctx, "reported.version").version == "2.18.3"


# -- sniffing and ingestion -----------------------------------------------------------------------


def test_sniff_is_the_minimum_for_prose_and_zero_for_numbers():
    assert prose.sniff(Document.from_text("the job is slow on all nodes\nwe have no idea why this is\n")) == 0.5
    assert prose.sniff(Document.from_text("1 2 3\n4 5 6\n")) == 0.0


def test_every_tool_sample_keeps_its_format():
    # the prose reader sniffs at the minimum: it never takes a tool's output from its parser
    for path in sorted(FORMATS.iterdir()):
        if path.is_file():
            for rec in ingest([path]).inputs:
                assert rec.format != "prose" or rec.status == "parsed", rec


def test_unrecognized_text_without_statements_stays_unrecognized():
    res = ingest_documents([Document.from_text("Thanks for looking into it, we appreciate it a lot.\n",
                                               name="t.txt")])
    assert res.inputs[0].status == "unrecognized" and not res.facts


def test_formats_argument_without_prose_does_not_read_prose():
    from clusterdx.facts.formats import all_formats

    res = ingest_documents([Document.from_text("We run NCCL 2.18.3 in Docker on 8x H100.\n", name="t.txt")],
                           formats=[all_formats()["sysctl"]])
    assert res.inputs[0].status == "unrecognized"


# -- contract -------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000))
def test_never_raises_anything_else(text):
    parse_or_refuse("prose", text)


_PIECES = st.sampled_from([
    "## Environment\n", "- NCCL 2.18.3\n", "| a | busbw (GB/s) |\n", "|---|---|\n", "| x | 1.5 |\n", "```\n",
    "NCCL_IB_HCA: (not set)\n", "since the upgrade it is 2x slower\n", "8x H100 SXM, 4x CX-7 400G\n",
    "runs in Kubernetes pods\n", "\r\n", "BIOS: SR-IOV Enabled\n", "unlike the A100\n", "p5.48xlarge\n",
    "step time 410 ms\n", "    indented code\n", "> quoted NCCL 2.19.3\n", "|", "`", "*", "\n",
])


@settings(max_examples=200, deadline=None)
@given(st.lists(_PIECES, max_size=30))
def test_markdown_shaped_input_never_raises(pieces):
    text = "".join(pieces)
    parse_or_refuse("prose", text)
    res = ingest_documents([Document.from_text(text, name="t.md")])
    assert len(res.inputs) == 1


def test_very_long_document_is_read_up_to_a_limit_with_a_warning():
    text = "filler line without statements\n" * prose.MAX_LINES + "We use NCCL 2.18.3 here.\n"
    with pytest.raises(NotApplicable):
        read(text)  # the statement lies past the limit
    ctx = read("We use NCCL 2.18.3 here.\n" + "filler line without statements\n" * prose.MAX_LINES)
    assert ctx.warnings and ctx.warnings[0][0] == prose.MAX_LINES + 1


def test_a_plain_log_gets_no_reported_facts_from_its_own_lines():
    log = ("gpu-01:11:11 [0] NCCL INFO NCCL version 2.19.3+cuda12.2\n"
           "gpu-01:11:11 [0] NCCL INFO Using network IB and the job runs in Docker.\n"
           "We ran this on 8x H100 and the busbw was only 20 GB/s after the update.\n"
           "It got twice as slow since the NCCL upgrade, in Kubernetes pods.\n")
    res = ingest_documents([Document.from_text(log, name="nccl.log")])
    assert res.inputs[0].format == "nccl-debug"
    assert not [f for f in res.facts if f.provenance == "reported"]  # no Markdown: the log's alone
    md = "## What we see\n" + log
    res = ingest_documents([Document.from_text(md, name="ticket.md")])
    reported = [f for f in res.facts if f.provenance == "reported"]
    assert {f.source.line for f in reported} <= {4, 5}  # the two sentences, not the log lines
    assert any(f.fact_type == "reported.change" for f in reported)


# -- symptoms, workarounds, shortfalls, workloads (what a ticket says goes wrong) ----------------

@pytest.mark.parametrize("text, kind, where", [
    ("ncclAllReduce deadlocks on 2x RTX 5880 Ada", "hang", ""),
    ("the script hangs with the GPU use at 100%", "hang", ""),
    ("both GPUs spin at 100% SM utilization indefinitely, no forward progress", "hang", ""),
    ("When using 2 GPUs, it's not faster.", "no-speedup", ""),
    ("as soon as the workload is distributed on a second machine it becomes 10x slower", "no-speedup", "multi-node"),
    ("the bus bandwidth was very low and unstable", "low-bandwidth", ""),
    ("nccl tests on g6e nodes max out at 3GBps", "low-bandwidth", "multi-node"),
    ("the collective bandwidth inside the box is much lower than we expected", "low-bandwidth", ""),
    ("all_reduce_perf gives only a few GB/s between the cards", "low-bandwidth", ""),
    ("we get only 12 GB/s", "low-bandwidth", ""),
    ("When running the container it does not detect infiniband and GDRDMA.", "rdma-not-used", ""),
    ("in the pod we can just see the only one gpu that has been allocated", "gpus-hidden", ""),
    ("Distributed Training Fails on InfiniBand with the default Docker image", "rdma-not-used", "multi-node"),
    ("NCCL over RoCE does not work inside our container.", "rdma-not-used", ""),
    ("I have a problem with enabling GDR for my NIC.", "gdr-not-used", ""),
    ("How to enable GPUDirect RDMA for the NIC?", "gdr-not-used", ""),
    ("We can't get GPUDirect RDMA working between the servers", "gdr-not-used", "multi-node"),
    ("With NCCL 2.27, it crashes with the following error on 7 nodes.", "error", "multi-node"),
    ("NCCL WARN NET/IB : Got completion with error 12", "error", ""),
    ("NCCL init stuck on rank 3", "hang", ""),
    ("When I try to train it just stops.", "hang", ""),
    ("the training simply sits there after the first batch", "hang", ""),
    ("DDP with two cards stopped responding at the first all_reduce", "hang", ""),
    ("Can only run tensor parallel=2 once and subsequent stalls on two GPUs", "hang", ""),
    ("training stalled right after NCCL init on the second box", "hang", ""),
    ("it crashes with the following error when running on 7 or more HGX nodes", "at-scale", "multi-node"),
    ("Up to 8 nodes it is fine, but jobs with more than 8 nodes die at NCCL init", "at-scale", "multi-node"),
    ("jobs die at NCCL init", "error", ""),
    ("and then NCCL fails as soon as traffic starts to flow between the machines", "error", "multi-node"),
    ("DDP over RoCE dies right away on the first all_reduce", "error", ""),
    ("# HGX A100 can not reach peak bandwidth on 2nd Gen NVSwitch ?", "below-peak", ""),
    ("We only get 230 GB/s while the advertised NVLink bandwidth is 600 GB/s.", "below-peak", ""),
    ("busbw is far below the theoretical bandwidth of NVLink 4.", "below-peak", ""),
    ("Why can't we get the 900 GB/s bidirectional bandwidth NVIDIA quotes?", "below-peak", ""),
    ("The results are much lower than the spec sheet numbers.", "below-peak", ""),
    ("Is this expected or should it be possible to achieve higher performance?", "asks-expected", ""),
    ("Is this a bug or expected behavior?", "asks-expected", ""),
    ("Are these numbers normal for PCIe?", "asks-expected", ""),
    ("From the horovod's README.md , horovod achieves 90% scaling efficiency for both models.", "below-peak", ""),
    ("The paper reports 95% weak-scaling efficiency at 256 GPUs, we are far from that.", "below-peak", ""),
    ("According to the docs, DeepSpeed gets 88 % scaling efficiency on this model.", "below-peak", ""),
    ("Am I missing anything? Or do others see the same?", "asks-expected", ""),
    ("What are we missing in the setup?", "asks-expected", ""),
    # another system's or path's higher figure, and how it is reached
    ("What do third-party NICs do differently that they can achieve better performance with GPUDirect RDMA?", "asks-expected", ""),
    ("How does the storage vendor's DMA engine achieve higher bandwidth than cudaMemcpy over the same link?", "asks-expected", ""),
    ("Why did the mlx5_6/mlx5_7 pair come out better bandwidth than mlx5_0/mlx5_1 pair?", "device-set-dependent", ""),
    ("GPUs 4-7 get much lower busbw than GPUs 0-3 on the same box.", "device-set-dependent", ""),
    ("The bandwidth depends on which GPU/NIC pair we use.", "device-set-dependent", ""),
    ("Performance differs with the PCIe topology of each GPU group.", "device-set-dependent", ""),
])
def test_symptoms_as_users_write_them(text, kind, where):
    found = [(s.kind, s.where) for s in of_type(read(text + "\n"), "reported.symptom")]
    assert (kind, where) in found, found


@pytest.mark.parametrize("text, kind", [
    ("I solved the problem with enabling GDR by loading the module.", "gdr-not-used"),
    ("busbw stuck at one port's speed", "hang"),
    ("busbw stuck near 187 GB/s", "hang"),
    ("nsys shows memory stalls dominate the kernel", "hang"),
    ("the profiler reports 40% stall cycles in the GEMM", "hang"),
    ("the pipeline stall from the bubble costs 10%", "hang"),
    ("no stalls at all after the driver upgrade", "hang"),
    ("I installed NCCL 2.21 from the wheel", "hang"),
    ("It works fine over InfiniBand.", "rdma-not-used"),
    ("The error rate on the links is zero and bandwidth is low.", "error"),
    ("We have 8 nodes with 8 GPUs each.", "at-scale"),
    ("The bandwidth is 180 GB/s as expected after the fix.", "low-bandwidth"),
    ("The bandwidth of the new links is fine.", "low-bandwidth"),
    ("The peak busbw we measured is 180 GB/s, only on node 3 it is lower.", "below-peak"),
    ("We reach the theoretical bandwidth on all nodes.", "below-peak"),
    ("This is expected to be fixed in the next release.", "asks-expected"),
    ("It is normal that the first iteration is slow.", "asks-expected"),
    # our own result named first, the publication after it: no complaint
    ("We measured 92% scaling efficiency, the same as the 90% in the README.", "below-peak"),
    ("In the README we reach 91% scaling efficiency with the new launcher.", "below-peak"),
    ("The README says to use 4 workers per GPU.", "below-peak"),
    ("I was missing the NCCL_IB_HCA setting, now it runs.", "asks-expected"),
    ("What do you do differently in the new installer?", "asks-expected"),  # no figure asked about
    ("That is how NCCL achieves higher bandwidth: it uses more channels.", "asks-expected"),  # an answer, not a question
    ("We did it differently and got better performance.", "asks-expected"),  # a statement
    ("GPU 0 runs hotter than GPU 1 under load.", "device-set-dependent"),
    ("GPU 3 has more memory in use than GPU 2.", "device-set-dependent"),
    ("mlx5_0 is much faster than our old Ethernet.", "device-set-dependent"),
    ("The bandwidth depends on the message size.", "device-set-dependent"),
    ("It just stops with an out of memory error.", "hang"),          # stops with an error: not a hang
    ("the loss just stopped at 2.3 after epoch 4", "hang"),           # a plateau
    ("Please stop the job before the maintenance.", "hang"),
])
def test_symptom_lookalikes(text, kind):
    found = [s.kind for s in facts_of(text + "\n") if s.fact_type == "reported.symptom"]
    assert kind not in found, found


@pytest.mark.parametrize("text", [
    "The job does not hang any more since the driver update.",
    "We do not use InfiniBand at all.",
    "Bandwidth is fine on both nodes and the job runs at full speed.",
])
def test_lookalike_symptoms_are_not_read(text):
    assert not [f for f in facts_of(text + "\n") if f.fact_type == "reported.symptom"]


@pytest.mark.parametrize("text, name, value", [
    ("With NCCL_P2P_DISABLE=1 training is much faster.", "NCCL_P2P_DISABLE", "1"),
    ("Disabling P2P makes the hang go away.", "p2p", "off"),
    ("With P2P disabled the copies are 6x faster.", "p2p", "off"),
])
def test_a_switch_that_makes_it_faster_or_go_away_is_a_workaround(text, name, value):
    found = {(w.name, w.value, w.effect) for w in of_type(read(text + "\n"), "reported.workaround")}
    assert (name, value, "fixes") in found, found


@pytest.mark.parametrize("text", [
    "With NCCL_P2P_DISABLE=1 and --disable-custom-all-reduce it starts, but that is not a fix.",
    "With NCCL_P2P_DISABLE=1 the server then starts fine.",
])
def test_a_setting_that_lets_the_job_start_is_a_fixing_workaround(text):
    found = {(w.name, w.effect) for w in of_type(read(text + "\n"), "reported.workaround")}
    assert found == {("NCCL_P2P_DISABLE", "fixes")}, found


@pytest.mark.parametrize("text", [
    "With NCCL_P2P_DISABLE=1 it starts to hang later instead.",   # no 'starts' on its own
    "NCCL_P2P_DISABLE=1 is not a fix and does not help either.",   # a stated failure still counts
])
def test_start_lookalikes_are_no_fixing_workaround(text):
    assert not [w for w in of_type(read(text + "\n"), "reported.workaround") if w.effect == "fixes"]


def test_a_workaround_wrapped_across_lines_is_not_the_configuration():
    # the fixing words are on the next line of the same sentence
    text = ("NCCL init completes and then it hangs there. With NCCL_P2P_DISABLE=1\n"
            "and the custom all-reduce off the engine starts fine.\n")
    ctx = read(text)
    assert not of_type(ctx, "env.var")
    assert {(w.name, w.effect) for w in of_type(ctx, "reported.workaround")} == {("NCCL_P2P_DISABLE", "fixes")}
    # a setting whose own sentence ended on its line stays the configuration
    ctx = read("We run with NCCL_P2P_DISABLE=1.\nThe engine hangs at start; nothing we tried helps.\n")
    assert [(e.name, e.value) for e in of_type(ctx, "env.var")] == [("NCCL_P2P_DISABLE", "1")]


def test_an_export_under_a_script_comment_is_the_configuration_not_a_workaround():
    # a pasted job script: the comment's "does not have" is no verdict on the export below it
    text = ("# This is needed to avoid NCCL to use infiniband, which the cluster does not have\n"
            "export NCCL_IB_DISABLE=1\n"
            "# This is to tell NCCL to use the bond interface\n"
            "export NCCL_SOCKET_IFNAME=bond0\n")
    ctx = read(text)
    assert {(e.name, e.value) for e in of_type(ctx, "env.var")} == {("NCCL_IB_DISABLE", "1"), ("NCCL_SOCKET_IFNAME", "bond0")}
    # the same words as a wrapped sentence of the ticket are still the workaround that worked
    ctx = read("The cluster has no InfiniBand and it hangs, but with NCCL_IB_DISABLE=1\nit works.\n")
    assert not of_type(ctx, "env.var")


@pytest.mark.parametrize("text", [
    "With NCCL_P2P_DISABLE=1 it is not faster.",        # no help
    "With P2P disabled it is not any faster.",
    "NCCL 2.18 is faster than 2.19.",                   # a version compared, no switch
])
def test_faster_lookalikes_are_no_fixing_workaround(text):
    try:
        found = [w for w in of_type(read(text + "\n"), "reported.workaround") if w.effect == "fixes"]
    except Exception:  # nothing the reader takes at all
        found = []
    assert not found


def test_a_setting_that_makes_it_work_is_a_workaround_not_the_configuration():
    ctx = read("Setting `NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1` (forcing socket transport) resolves the deadlock.\n")
    assert {(w.name, w.value, w.effect) for w in of_type(ctx, "reported.workaround")} == {
        ("NCCL_P2P_DISABLE", "1", "fixes"), ("NCCL_SHM_DISABLE", "1", "fixes")}
    assert not of_type(ctx, "env.var")  # not in force in the failing run
    failed = read("NCCL_IB_DISABLE=1 did not help.\n")
    assert [w.effect for w in of_type(failed, "reported.workaround")] == ["no-effect"]
    kernel = read("Setting amd_iommu=off helps address the communication problem.\n")
    assert [(w.name, w.value) for w in of_type(kernel, "reported.workaround")] == [("amd_iommu", "off")]
    plain = read("NCCL_IB_HCA=mlx5_0,mlx5_1\n")
    assert not of_type(plain, "reported.workaround") and of_type(plain, "env.var")


@pytest.mark.parametrize("text, fraction", [
    ("- all_reduce perf: 30 GB/s vs. Theoretical 100 GB/s (25GB/s per HDR)", 0.3),
    ("The expected performance is `200Gb/s * 2 =~ 50GB/s`, but the measured performance is about `27GB/s (=~ 216Gb/s)`.", 0.54),
])
def test_measured_against_expected_bandwidth(text, fraction):
    got = [m.value_norm for m in of_type(read(text + "\n"), "reported.metric") if m.metric == "bandwidth_fraction"]
    assert got == [fraction]


def test_two_numbers_without_an_expectation_are_no_shortfall():
    ctx = read("We get 180 GB/s and 190 GB/s on two runs.\n")
    assert not [m for m in of_type(ctx, "reported.metric") if m.metric == "bandwidth_fraction"]


def test_bandwidth_by_node_pair():
    ctx = read("the performance between nodes 1 + 2 (25 GB/s) vs the performance between 1 + 3 (39 GB/s) differs\n")
    assert [s.kind for s in of_type(ctx, "reported.symptom")] == ["pair-dependent"]
    same = facts_of("between nodes 1 + 2 (38 GB/s) and between 1 + 3 (39 GB/s)\n")
    assert not [f for f in same if f.fact_type == "reported.symptom"]


def test_workload_collective_and_node_count():
    ctx = read("On 8 nodes the sendrecv_perf test drops from 24 to 18 GB/s.\n")
    w = one(ctx, "reported.workload")
    assert (w.collective, w.nodes) == ("sendrecv", 8)


def test_nccl_version_with_is_and_roce2():
    ctx = read("I have 2 machines with 4 400Gbps CX7 cards with RoCE2. And the nccl version is 2.22.3+cuda12.5.\n")
    assert [v.version for v in of_type(ctx, "nccl.version")] == ["2.22.3"]
    nic = [f for f in of_type(ctx, "reported.inventory") if f.item == "nic"]
    assert nic and nic[0].interconnect == "RoCE"


@pytest.mark.parametrize("text, model, tier", [
    ("I am running the example on 2080ti with 2 GPUs", "RTX 2080 Ti", "consumer"),
    ("training with multiple 4090 gpus always gets stuck", "RTX 4090", "consumer"),
    ("a dual 1080 Ti machine", "GTX 1080 Ti", "consumer"),
    ("RTX A6000 workstation", "RTX A6000", "workstation"),
    ("8x NVIDIA A100-SXM4-80GB each", "A100", "datacenter"),
])
def test_gpu_tiers_from_the_gazetteer(text, model, tier):
    gpus = [f for f in of_type(read(text + "\n"), "reported.inventory") if f.item == "gpu"]
    assert [(g.model, g.tier) for g in gpus] == [(model, tier)]


def test_cloud_instance_is_a_vm_with_its_capabilities():
    ctx = read("These tests have been conducted on an AWS g5.48xlarge instance.\n")
    inst = [f for f in of_type(ctx, "reported.inventory") if f.item == "instance"]
    assert [(i.model, i.vm, i.gdr, i.nvlink) for i in inst] == [("g5.48xlarge", True, False, False)]
    assert one(ctx, "platform.virtualization").role == "guest"
    bare = read("We run on BM.GPU4.8 nodes.\n")
    assert not of_type(bare, "platform.virtualization")


def test_a_statement_cut_by_a_line_break_is_read():
    ctx = read("so all Ray worker processes use only one\nphysical core, causing a significant penalty.\n")
    assert [s.kind for s in of_type(ctx, "reported.symptom")] == ["one-core"]
    listed = facts_of("- all workers use only one\n- physical core count is 64\n")
    assert not [f for f in listed if f.fact_type == "reported.symptom"]  # list items are not one sentence


@pytest.mark.parametrize("text, kind", [
    ("Now I create two docker with each holding two graphic cards, 01 and 23 respectively.", "containers-split"),
    ("Each pod gets 4 of the 8 GPUs on the node.", "containers-split"),
    ("The bandwidth between two containers on the same host is only 15 GB/s.", "containers-split"),
    ("Problems with using NVLink across Kubernetes Pods on a same node", "containers-split"),
    ("Rank0 and Rank1 run in two separate pods on one node, each allocated with one GPU.", "containers-split"),
    ("Data between different containers located on the same server goes over TCP.", "containers-split"),
    ("Train Alexnet with 4 GPUs seems slower than one", "multi-gpu-slower"),
    ("Training on 8 GPUs is slower than on a single GPU.", "multi-gpu-slower"),
])
def test_symptoms_of_split_containers_and_multi_gpu_slowdown(text, kind):
    kinds = [f.kind for f in facts_of(text) if f.fact_type == "reported.symptom"]
    assert kind in kinds


@pytest.mark.parametrize("text", [
    "We run one container with all 8 GPUs on each node.",
    "Two nodes each with 8 GPUs.",
    "The 4 GPU run is faster than one.",
    "The pods each run one rank.",
    "Traffic across pods on different nodes goes over RoCE.",
    "Two pods on two nodes, one rank in each pod.",
])
def test_lookalikes_of_split_containers_and_multi_gpu_slowdown(text):
    kinds = [f.kind for f in facts_of(text) if f.fact_type == "reported.symptom"]
    assert "containers-split" not in kinds and "multi-gpu-slower" not in kinds


def test_gpus_said_to_talk_over_pcie_without_a_model():
    inv = [f for f in facts_of("I have 4 GPUs on my machine, and they're connected with PCIE16.")
           if f.fact_type == "reported.inventory"]
    assert [(f.item, f.form, f.count) for f in inv] == [("gpu", "PCIe", 4)]
    named = [f for f in facts_of("8x H100 SXM GPUs connected over PCIe switches to the NICs.")
             if f.fact_type == "reported.inventory" and f.item == "gpu"]
    assert [f.model for f in named] == ["H100"]  # a named GPU keeps its own form


@pytest.mark.parametrize("text, name, value", [
    ("1MB UCX_TLS=tcp,sockcm,sm -> ~30MB/s", "UCX_TLS", "tcp,sockcm,sm"),
    ("We set NCCL_DEBUG=INFO, NCCL_IB_HCA=mlx5_0,mlx5_1 and more.", "NCCL_IB_HCA", "mlx5_0,mlx5_1"),
    ("We set NCCL_DEBUG=INFO, NCCL_IB_HCA=mlx5_0,mlx5_1 and more.", "NCCL_DEBUG", "INFO"),
])
def test_list_values_keep_their_commas(text, name, value):
    env = {f.name: f.value for f in facts_of(text + "\n") if f.fact_type == "env.var"}
    assert env[name] == value, env


# -- wrong data between GPUs, the peer path switched off in words, a slowdown over a run ---------

@pytest.mark.parametrize("text", [
    "Moving a tensor from one GPU to another GPU, results in data corruption (silently with no warning or errors).",
    "cudaMemcpyPeer from device 0 to device 1 gives back garbage values.",
    "A GPU-to-GPU copy returns all zeros on the destination.",
    "The loss becomes NaN after a few steps, but only when I use multiple GPUs.",
    "I have nan in losses after few iterations. It happens only when I use multiple GPUs.",
    "Training gives wrong results with 4 GPUs. A single GPU works fine.",
    # the predicate after the data, and "the other cards" for the GPUs
    "GPUs 0 and 1 sit on the bridge and agree, but the received data across the other cards is all wrong.",
    "The all_reduce results between the two GPUs are incorrect whenever NVLink is not used.",
    # the GPUs named as the PCI cards they are, the data sent to "the second device"
    "I am experiencing data corruption between PCI cards.",
    "The array is emptied to zeros after being transferred to the second device.",
    "Anything I send straight to the second card is zeroed out on arrival.",
])
def test_wrong_data_between_gpus_as_users_write_it(text):
    kinds = [f.kind for f in facts_of(text + "\n") if f.fact_type == "reported.symptom"]
    assert "multi-gpu-wrong-data" in kinds, kinds


@pytest.mark.parametrize("text", [
    "The loss becomes NaN after 100 steps.",  # NaN alone: many bugs give it
    "The loss becomes NaN on a single GPU and on 8 GPUs alike.",
    "The copy from one GPU to another is correct, no corruption.",
    "We moved the data from one GPU to another to balance memory.",
    "Wrong results? No, the values match on every GPU.",
    "The results between the two GPUs are not wrong; our evaluation script was.",
    "The data from the loader is wrong on a single GPU too, so it is our preprocessing.",
    "The results are all incorrect, even on CPU.",
    # zeros the user's own code writes, data that merely sits on a card, PCI cards that are fine
    "I call optimizer.zero_grad() too early, so the gradients sent to the second card are zeroed out.",
    "On the second card the buffers are zeroed out by the allocator before use, as documented.",
    "No data corruption between PCI cards in the burn-in, the copies match.",
    "The array is emptied to zeros on the CPU before the copy, which is our reset step.",
])
def test_wrong_data_lookalikes(text):
    kinds = [f.kind for f in facts_of(text + "\n") if f.fact_type == "reported.symptom"]
    assert "multi-gpu-wrong-data" not in kinds, kinds


@pytest.mark.parametrize("text", [
    "TP=4 loads all weights on GPU 0 — GPUs 1-3 at 15 MiB, OOM on GPU 0",
    "Instead of sharding, all the weights end up on GPU 0 and it runs out of memory while the other three cards stay empty.",
    "With tensor parallel 2 all the weights go to GPU 0 and GPU 1 stays at 3 MiB.",
    "With tp_size 2 the other card remains at 4 MiB while GPU 0 fills up.",
])
def test_a_parallel_job_left_on_one_gpu(text):
    kinds = [f.kind for f in facts_of(text + "\n") if f.fact_type == "reported.symptom"]
    assert "shards-on-one-gpu" in kinds, kinds


@pytest.mark.parametrize("text", [
    "With device_map='auto' and TP=2 all the weights end up on GPU 0 and the other GPUs stay empty.",  # own placement
    "I forgot to call set_device, so with DDP all the memory was on GPU 0.",                        # own bug
    "With TP=4 the weights are split evenly, GPUs 0-3 each at 40 GiB.",                             # it did split
    "All the weights are on GPU 0 because I run a single process on one card.",                     # nothing to split
    "The other GPUs stay idle while GPU 0 trains, that is how I run the notebook.",                # no parallel job
])
def test_a_parallel_job_left_on_one_gpu_lookalikes(text):
    kinds = [f.kind for f in facts_of(text + "\n") if f.fact_type == "reported.symptom"]
    assert "shards-on-one-gpu" not in kinds, kinds


@pytest.mark.parametrize("text, name, effect", [
    ("When disabling nv_peer_memory, nccl-tests runs fine.", "nvidia_peermem", "fixes"),
    ("After `rmmod nvidia_peermem` the job completes.", None, None),  # no word that it then works
    ("After rmmod nvidia-peermem it works, just slower.", "nvidia_peermem", "fixes"),
    ("With GPUDirect RDMA disabled the training runs fine.", "gpudirect-rdma", "fixes"),
    ("Turning off P2P fixes the hang.", "p2p", "fixes"),
    ("Unloading nv_peer_mem did not help.", "nvidia_peermem", "no-effect"),
])
def test_peer_path_switched_off_in_words(text, name, effect):
    found = [(w.name, w.effect) for w in facts_of(text + "\n") if w.fact_type == "reported.workaround"]
    assert found == ([(name, effect)] if name else []), found


@pytest.mark.parametrize("text, fixes", [
    ("If I set the environment variable `NCCL_P2P_DISABLE=1`, I can use as many GPUs as I like.", True),
    ("With NCCL_P2P_DISABLE=1 the job runs fine.", True),
    ("With NCCL_P2P_DISABLE=1 I can train on all 8 GPUs.", True),
    ("We set NCCL_P2P_DISABLE=1 in our template.", False),  # configuration, not a workaround
    ("Setting NCCL_P2P_DISABLE=1 did workaround but got really low speed.", True),
    ("NCCL_P2P_DISABLE=1 works around it.", True),
    ("Workaround that gets past it: `NCCL_P2P_DISABLE=1` plus `--disable-custom-all-reduce`.", True),
    ("Workaround: NCCL_P2P_DISABLE=1 (slow, but the engine starts).", True),
    ("Our workaround script exports NCCL_P2P_DISABLE=1 on every node.", False),  # the word, no label or effect
    ("We use NCCL_SOCKET_IFNAME=eth0 for the workaround script.", False),  # the word alone is not a fix
])
def test_a_workaround_stated_as_what_now_works(text, fixes):
    ctx = facts_of(text + "\n")
    works = [w for w in ctx if w.fact_type == "reported.workaround" and w.effect == "fixes"]
    assert bool(works) is fixes
    assert bool([f for f in ctx if f.fact_type == "env.var"]) is not fixes


@pytest.mark.parametrize("text", [
    "Tensorflow getting slower and slower",
    "The first 11000 steps doesn't show appreciable deterioration for a fresh reboot, but it deteriorates when the steps increase.",
    "Training starts at 2.1 it/s, then it drops to about 1.2 it/s after a few hours.",
    "Throughput decreases over time until we reboot.",
    "The step time keeps growing over time.",
    "It becomes progressively slower.",
    "It starts at 5.2 it/s and after about 3 hours the throughput drops to 3.1 it/s.",
])
def test_a_run_slowing_down_over_time(text):
    kinds = [f.kind for f in facts_of(text + "\n") if f.fact_type == "reported.symptom"]
    assert "slows-over-time" in kinds, kinds


@pytest.mark.parametrize("text", [
    "The loss decreases over time.",
    "The throughput is fine, the loss drops after a few epochs.",
    "The step time drops after 10 warmup steps.",
    "It did not slow down over time.",
    "Training is 30% slower than on the old server.",
    "Memory usage grows over time.",
    "After a few epochs the loss drops.",
])
def test_slowdown_over_time_lookalikes(text):
    kinds = [f.kind for f in facts_of(text + "\n") if f.fact_type == "reported.symptom"]
    assert "slows-over-time" not in kinds, kinds


def test_peer_module_doctests():
    from clusterdx.facts.parsers import prose_peer

    assert doctest.testmod(prose_peer).failed == 0


@pytest.mark.parametrize("text, effect", [
    ("The error goes away with `NCCL_SHM_DISABLE=1`.", "fixes"),
    ("If we export NCCL_SHM_DISABLE=1 before torchrun the job starts and trains.", "fixes"),
    ("Setting NCCL_SHM_DISABLE=1 fixes the crash at init.", "fixes"),
    ("With NCCL_SHM_DISABLE=1 the training then completes.", "fixes"),
    ("NCCL_SHM_DISABLE=1 did not help.", "no-effect"),
    ("Our template exports NCCL_SHM_DISABLE=1 for every job.", None),  # configuration, not a workaround
])
def test_shm_switched_off_as_a_workaround(text, effect):
    ctx = facts_of(text + "\n")
    found = [(w.name, w.effect) for w in ctx if w.fact_type == "reported.workaround"]
    assert found == ([("NCCL_SHM_DISABLE", effect)] if effect else []), found
    assert bool([f for f in ctx if f.fact_type == "env.var"]) is (effect is None)


@pytest.mark.parametrize("text, in_force", [
    ("RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)", False),
    ("ncclInternalError: Internal check failed. Run with NCCL_DEBUG=WARN for more information.", False),
    ("We run with NCCL_DEBUG=INFO on every job.", True),   # the user's configuration
    ("NCCL_DEBUG=INFO for details is set in the template.", True),  # no 'run with' before it
])
def test_a_setting_an_error_message_suggests_is_not_in_force(text, in_force):
    names = [f.name for f in facts_of(text + "\n") if f.fact_type == "env.var"]
    assert ("NCCL_DEBUG" in names) is in_force, names
@pytest.mark.parametrize("text, nic", [
    ("We have 8x H100 per node and 8x 400G InfiniBand.", (8, 400.0, "InfiniBand")),
    ("8 x 400Gb/s IB HCAs per node", (8, 400.0, "InfiniBand")),
    ("the nodes have 2x 100G RoCE NICs", (2, 100.0, "RoCE")),
    ("4x 200Gbps Ethernet adapters", (4, 200.0, "Ethernet")),
    # a model named in the sentence is read from the gazetteer, with its own name
    ("2x ConnectX-6 200G RoCE", (2, 200.0, "RoCE")),
    # look-alikes: switch ports, a rate with no fabric or NIC word, a negated inventory
    ("the leaf switch has 64x 400G ports", None),
    ("we tried 2x 100G and it was fine", None),
    ("It's not 8x 400G InfiniBand but 4x", None),
])
def test_nics_stated_by_count_rate_and_fabric(text, nic):
    nics = [f for f in facts_of(text) if f.fact_type == "reported.inventory" and f.item == "nic"]
    if nic is None:
        assert not nics
    else:
        assert [(f.count, f.gbps, f.interconnect) for f in nics] == [nic]


@pytest.mark.parametrize("text, low", [
    ("all_reduce_perf between two nodes only gives 12 GB/s busbw", True),
    ("nccl-tests only shows ~3 GB/s", True),
    ("it only manages to reach 40 GB/s", True),
    ("this only gives a warning at startup", False),
    ("the log only shows the first rank", False),
])
def test_only_with_a_number_is_a_low_bandwidth_complaint(text, low):
    kinds = {f.kind for f in facts_of(text) if f.fact_type == "reported.symptom"}
    assert ("low-bandwidth" in kinds) is low


@pytest.mark.parametrize("text, component", [
    ("Our training got 20% slower after we moved the job into containers on Kubernetes.", "container"),
    ("inside the docker container it is much slower than on the host", "container"),
    ("Since we run it in pods (same image, same NCCL 2.21.5), allreduce is twice as slow.", "container"),
    # look-alikes: a new image is a software change; an NCCL upgrade inside a container is NCCL's
    ("After updating the container image to 24.05 it got 10% slower", "image"),
    ("after the NCCL upgrade in our container it is 2x slower", "nccl"),
])
def test_what_changed_when_the_job_moved_into_containers(text, component):
    changes = [f for f in facts_of(text) if f.fact_type == "reported.change"]
    assert [(c.component, c.direction) for c in changes] == [(component, "slower")]


@pytest.mark.parametrize("text, where", [
    ("Training hangs at the first allreduce when using more than one node.", "multi-node"),
    ("As soon as I launch on a second node the job gets stuck in the first allreduce", "multi-node"),
    ("the 2-node run hangs between the two machines", "multi-node"),
    ("all_reduce_perf -g 4 hangs on our workstation", ""),
    # a framework's module path is no second machine; "distributed training" still is
    ("# ```tf.distribute.MirroredStrategy``` is stuck.", ""),
    ("torch.distributed.all_reduce hangs with both GPUs of the box", ""),
    ("distributed training over our two servers is stuck after the first step", "multi-node"),
    ("Distributed training hangs after the first epoch", "multi-node"),
    ("# [BUG] Deadlock in distribution with multiple 4090", ""),
])
def test_a_hang_says_whether_it_needs_a_second_node(text, where):
    hangs = [f for f in facts_of(text) if f.fact_type == "reported.symptom" and f.kind == "hang"]
    assert [h.where for h in hangs] == [where]


@pytest.mark.parametrize("text", [
    "Is GPUDirect (NIC-to-GPU) relevant at all on GH200?",
    "How does NCCL handle a GPUDirect configuration on GB200?",
    "Does NCCL use GDR on these nodes, or does it stage through the CPU?",
    "Is GDR even enabled by default on Grace Hopper?",
])
def test_a_question_whether_gpudirect_is_used(text):
    kinds = [f.kind for f in facts_of(text) if f.fact_type == "reported.symptom"]
    assert "asks-gdr" in kinds


@pytest.mark.parametrize("text", [
    "GPUDirect RDMA is enabled and every NET/IB line shows GDRDMA.",
    "We configured GPUDirect on all nodes last year.",
    "Is the bandwidth expected on GH200?",
])
def test_lookalikes_of_a_gpudirect_question(text):
    kinds = [f.kind for f in facts_of(text) if f.fact_type == "reported.symptom"]
    assert "asks-gdr" not in kinds


@pytest.mark.parametrize("text, nodes", [
    ("I'm running (16) GH200 nodes.", 16),
    ("We have 4 DGX H100 servers in the cluster.", 4),
    ("two GB200 nodes fail at init", 2),
    ("The job runs on 2 nodes.", 2),
])
def test_node_count_with_a_part_name_between(text, nodes):
    assert [f.nodes for f in facts_of(text) if f.fact_type == "reported.workload"] == [nodes]


def test_a_gpu_count_per_node_is_no_node_count():
    # "8 GPU nodes" are nodes with eight GPUs, not eight nodes
    assert [f.nodes for f in facts_of("Our 8 GPU nodes with H100 are slow.") if f.fact_type == "reported.workload"] == []


@pytest.mark.parametrize("text", [
    "The numa of the NICs are all -1; how to configure them?",
    "Inside the guest every NIC shows NUMA node -1.",
    "numa_node is -1 for all eight GPUs.",
    "But the topo of my VM is very different from that of the host.",
    "The guest PCI tree has no switch levels at all.",
    "The VM topology does not match the host.",
])
def test_a_guest_layout_said_not_to_mirror_the_host(text):
    kinds = [f.kind for f in facts_of(text) if f.fact_type == "reported.symptom"]
    assert "vm-topology-flat" in kinds


@pytest.mark.parametrize("text", [
    "Each GPU is on NUMA node 1 as on the host.",
    "The VM topology matches the host: PIX between each GPU and its NIC.",
    "We use 1 NIC per node and -1 as the default GID index.",
])
def test_lookalikes_of_a_guest_layout_statement(text):
    kinds = [f.kind for f in facts_of(text) if f.fact_type == "reported.symptom"]
    assert "vm-topology-flat" not in kinds


def test_devices_passed_through_to_a_vm_put_the_job_in_a_guest():
    roles = [f.role for f in facts_of("Our 8 H100 are passed through to a KVM virtual machine.") if f.fact_type == "reported.context"]
    assert roles == ["guest"]


@pytest.mark.parametrize("text, frm, to", [
    ("We observe a performance drop from 50 GB/s to 7 GB/s comparing nccl v2.22 to nccl 2.25.", "2.22", "2.25"),
    ("Comparing NCCL 2.18.3 with 2.19.3 the allreduce is slower on the same nodes.", "2.18.3", "2.19.3"),
])
def test_a_comparison_of_two_nccl_releases_is_a_change(text, frm, to):
    ch = [(c.component, c.from_version, c.to_version, c.direction) for c in facts_of(text) if c.fact_type == "reported.change"]
    assert ("nccl", frm, to, "slower") in ch


def test_comparing_releases_without_a_slowdown_is_no_change():
    assert [c for c in facts_of("We are comparing NCCL 2.22 to 2.25 on our nodes.") if c.fact_type == "reported.change"] == []


@pytest.mark.parametrize("text, said", [
    ("Multi-machine PyTorch training with the NCCL backend over RoCE NICs.", True),
    ("Our cluster runs on a RoCE v2 network.", True),
    ("We train using RoCE between the racks.", True),
    ("We do not use RoCE at all, only TCP.", False),          # negated
    ("Is RoCE faster than TCP here?", False),                 # a question, no statement of the fabric
])
def test_the_fabric_said_without_a_model_is_a_nic_row(text, said):
    rows = [f for f in facts_of(text + "\n")
            if f.fact_type == "reported.inventory" and f.item == "nic" and f.interconnect == "RoCE"]
    assert bool(rows) == said, rows


@pytest.mark.parametrize("text, kind", [
    ("each GPU only shows about 50% utilization", "low-bandwidth"),    # a load figure, no bandwidth
    ("the link only gives 12 percent of its rate in this test", "low-bandwidth"),
])
def test_a_utilization_figure_is_no_low_bandwidth(text, kind):
    assert kind not in [f.kind for f in facts_of(text + "\n") if f.fact_type == "reported.symptom"]


def test_no_better_than_one_gpu_is_no_speedup():
    found = [f.kind for f in facts_of("the throughput is no better than running on one GPU.\n")
             if f.fact_type == "reported.symptom"]
    assert "no-speedup" in found, found
    # still a bandwidth figure when a number of GB/s follows 'only shows'
    found = [f.kind for f in facts_of("all_reduce_perf only shows 3 GB/s between the cards\n")
             if f.fact_type == "reported.symptom"]
    assert "low-bandwidth" in found, found


@pytest.mark.parametrize("text, found", [
    ("the NCCL all_reduce_perf bandwidth between them is far below what the link should give, "
     "while the raw IB test between the same ports looks fine.", True),
    ("ib_write_bw reaches line rate between the two hosts, but nccl-tests busbw is only a third of it "
     "and much lower than we expected.", True),
    ("NCCL bandwidth between the nodes is low.", False),                         # no raw test
    ("ib_write_bw looks fine and so does NCCL.", False),                         # nothing slow
    ("The raw IB test is slow too, and NCCL is slow as well.", False),           # the fabric itself
])
def test_nccl_slow_while_the_raw_rdma_test_is_fine(text, found):
    kinds = [f.kind for f in facts_of(text + "\n") if f.fact_type == "reported.symptom"]
    assert ("nccl-below-raw-rdma" in kinds) == found, kinds


@pytest.mark.parametrize("sentence,component,version", [
    ("I was actually able to get it working with the native pytorch version in the AMI.", "pytorch", ""),
    ("The guide's scripts worked with the container we used before (u24r64f21m43t29).", "image", ""),
    ("It works with the DLAMI's own conda environment on the same two instances.", "env", ""),
    ("It ran fine with the older NCCL 2.18.3 on the same nodes.", "nccl", "2.18.3"),
    # the other stack named by its tag, "the same" carrying the comparison (a typo kept as written)
    ("On the `lumi-multitorch-torch-u24r64f21m43t29-20260319_153422.sif` container the same init is succesful "
     "and completes in ~35 seconds.", "image", ""),
    ("With the cuda11.8 image the same test passes.", "image", ""),
    ("With the older container the same job works.", "image", ""),
])
def test_works_with_another_stack_is_a_change_that_fails(sentence, component, version):
    changes = [f for f in facts_of(sentence + "\n") if f.fact_type == "reported.change"]
    assert [(c.component, c.direction, c.from_version) for c in changes] == [(component, "fails", version)]


@pytest.mark.parametrize("sentence", [
    # no stack works: the problem follows the hosts
    "It does not work with the DLAMI's own conda environment either.",
    "It hangs with the old container too.",
    # an older OS image is the host's own software
    "It worked with the previous Ubuntu 22.04 OS image on these nodes.",
    # nothing marks the other stack as another one
    "It works with the container on one node.",
    # the same form, but the other image fails as well, or no other image is named
    "On the `superbench:cuda11.8` image the same test is hanging too, at the same size.",
    "On the old image the same run does not work either.",
    "In the container the same test is successful.",
    "On the host the same test is successful.",
])
def test_works_elsewhere_lookalikes(sentence):
    assert not [f for f in facts_of(sentence + "\n") if f.fact_type == "reported.change" and f.direction == "fails"]


def _gpu_counts(text: str) -> list[int | None]:
    from tests.parsers.helpers import parse_text

    ctx = parse_text("prose", text + "\n")
    return [f.count for f in ctx.facts if f.fact_type == "reported.inventory" and f.item == "gpu"]


@pytest.mark.parametrize("text", [
    "We have 2 H200 servers connected with the IP switch.",
    "I have 4 A100 80GB nodes on a RoCE fabric.",
    "Our 16 H100 SXM hosts run Slurm.",
])
def test_a_bare_number_before_model_and_machine_counts_machines(text):
    assert _gpu_counts(text) == [None]


@pytest.mark.parametrize("text,count", [
    ("We have 8x H100 nodes on IB.", 8),  # "8x H100" is the GPUs of one node
    ("Two nodes with 8 H100 GPUs each.", 8),
    ("We use 4 A100 GPUs in one server.", 4),
    ("3 RTX 4090 in one box", 3),
])
def test_gpu_counts_next_to_machine_words_stay(text, count):
    assert _gpu_counts(text) == [count]
@pytest.mark.parametrize("text", [
    "After 2-5 hours the run dies: the watchdog reports a collective timeout and the process is taken down.",
    "Since the driver update, one node went down twice during training.",
    "After the crash the rank was shut down by the launcher.",
])
def test_a_process_taken_down_is_no_slowdown(text):
    assert [f for f in facts_of(text) if f.fact_type == "reported.change"] == []


@pytest.mark.parametrize("text", [
    "Since the upgrade to NCCL 2.21 the throughput is down 20%.",
    "After moving to the new image, tokens/s went from 900 down to 700.",
])
def test_down_about_a_number_is_still_a_slowdown(text):
    assert [c.direction for c in facts_of(text) if c.fact_type == "reported.change"] == ["slower"]


def test_prose_fabric_doctest():
    import doctest

    from clusterdx.facts.parsers import prose_fabric

    assert doctest.testmod(prose_fabric).failed == 0


def _mid_run_12(text):
    return [f for f in facts_of(text) if f.fact_type == "reported.symptom" and f.kind == "retry-exceeded-mid-run"]


@pytest.mark.parametrize("text", [
    "Hi, when I run multi-node training (multiple nodes, multiple GPUs per node), the training hangs at some point with an error 12 message, see attachment.",
    "The first hours are fine; after about 5 hours the job hangs and every rank reports NCCL error 12.\r\n",
    "Randomly during the epoch NCCL fails with status 12 on one of the nodes.",
    "user@gpu-node-03:~$ it ran fine for 2 days, then in the middle of training we got error code 12 from NCCL",
])
def test_error_12_a_while_into_the_run(text):
    assert len(_mid_run_12(text)) == 1


@pytest.mark.parametrize("text", [
    # from the start: the NICs never talked (a GID, a route), not a link gone bad
    "The job hangs right at the first allreduce and after a while NCCL prints error 12.",
    "At init NCCL fails with error 12 after 10 minutes of waiting.",
    # errno 12 of a memory registration is the memlock limit
    "After 3 hours ibv_reg_mr failed with error 12 (Cannot allocate memory).",
    "After some steps we get CUDA error 12 in the loss kernel.",
    # vendor err 129 is no status 12; a pasted WARN line is the nccl-debug reader's
    "After 3 hours the log shows vendor err 129.",
    "After 3 hours: NCCL WARN NET/IB : Got completion from peer 10.0.0.2<4242> with error 12, opcode 0, len 0, vendor err 129",
    # a hang at some point without the status
    "The training hangs at some point on 4 nodes.",
    "After 12 hours the error rate of the model is 12 percent.",
])
def test_error_12_lookalikes(text):
    assert _mid_run_12(text) == []


def test_prose_binding_doctest():
    import doctest

    from clusterdx.facts.parsers import prose_binding

    assert doctest.testmod(prose_binding).failed == 0


def _bind_none(text):
    return [(f.launcher, f.cpu_bind, f.provenance) for f in facts_of(text) if f.fact_type == "launch.command"]


@pytest.mark.parametrize("text, launcher", [
    ('b300 nodes, launched with the srtctl backend (its srun config passes `cpu_bind="verbose,none"`):', "srun"),
    ("We launch with srun --cpu-bind=none because the wrapper pins threads itself.\r\n", "srun"),
    ("user@login01:~$ our mpirun line has --bind-to none and -np 64", "mpirun"),
    ("cpu_bind: none is set in the partition's job_submit defaults", "srun"),
])
def test_cpu_binding_off_in_words(text, launcher):
    assert _bind_none(text) == [(launcher, "none", "reported")]


@pytest.mark.parametrize("text", [
    "We launch with srun --cpu-bind=rank_ldom on every node.",
    "mpirun --bind-to numa --map-by ppr:4:socket ./train",
    "Using --cpu-bind=cores instead of --cpu-bind=none fixed it.",
    "None of the ranks is bound wrongly, the cpu binding looks fine.",
])
def test_cpu_binding_lookalikes(text):
    assert _bind_none(text) == []


@pytest.mark.parametrize("text, count", [
    ("b300 (AMD EPYC 9575F, **8 NUMA domains**, 8 gen ranks/node)", 8),
    ("Our nodes: 2x AMD EPYC 9654 at NPS4, 8 NUMA nodes in all.", 8),
    ("Two Xeon Platinum 8480+ nodes (SNC off).", None),
    ("Dual EPYC 7543, rank 3 runs on NUMA node 3.", None),
])
def test_numa_domains_stated_beside_the_cpu(text, count):
    cpus = [f for f in facts_of(text) if f.fact_type == "reported.inventory" and f.item == "cpu"]
    assert cpus and cpus[0].numa_nodes == count


def _symptom_kinds(text: str) -> set[str]:
    try:
        ctx = parse_text("prose", text + "\n")
    except NotApplicable:
        return set()
    return {f.kind for f in ctx.facts if f.fact_type == "reported.symptom"}


# issue titles and first lines as users wrote them (tensorflow/models#2018, deepfakes/faceswap#708,
# microsoft/SoftTeacher#217, lllyasviel/ControlNet#556, xcmyz/FastSpeech#11, deepinsight/insightface#663,
# MIC-DKFZ/nnDetection#41, discuss.huggingface.co 96885)
@pytest.mark.parametrize("text", [
    "# Multi-GPU is slower than single GPU when running examples",
    "Why multi GPU training is slower than single GPU?",
    "Multiple GPUS training speeds are slower than 1 GPU.",
    "Multi-GPU training is reducing speed compared to single GPU",
    "When I use multi-gpu command, I found the training time is slower several times than that of one gpu.",
    "Hi, the training time for each step was slower when using multiple GPU's.",
    "Single GPU training run faster than two",
    "Multi-gpu is much slower than single gpu?",
])
def test_multi_gpu_slower_as_titles_word_it(text):
    assert "multi-gpu-slower" in _symptom_kinds(text)


@pytest.mark.parametrize("text", [
    "Multi-node training is slower than single node.",  # machines, not GPUs
    "8 GPUs are slower than expected.",  # no single-GPU side
    "Multi-GPU is not slower than single GPU anymore.",
    "One GPU run was faster than two days ago.",
    "The multi-GPU run is slower than a single node with 8 GPUs.",
])
def test_multi_gpu_slower_lookalikes(text):
    assert "multi-gpu-slower" not in _symptom_kinds(text)


# -- the job fine on bare metal, the ticket about a VM; NCCL's topology in a VM as the subject ---

@pytest.mark.parametrize("text", [
    "# NCCL in our KVM guests\n\nOn bare metal all_reduce_perf worked well and had expected performance.\n",
    "Now the job runs in one VM per host.\nOn the bare-metal hosts the same job runs fine.\n",
    # a hard-wrapped paragraph: the statement cut by a line break
    "The GPUs now live in virtual machines.\nWith the nodes on bare metal,\nnccl-tests gives the expected bandwidth.\n",
])
def test_fine_on_bare_metal_with_a_vm_is_vm_only(text):
    facts = facts_of(text)
    kinds = [f.kind for f in facts if f.fact_type == "reported.symptom"]
    assert "vm-only" in kinds, kinds
    roles = [f.role for f in facts if f.fact_type == "platform.virtualization"]
    assert roles == ["guest"], roles  # bare metal is the reference, the guest the ticket's machine


@pytest.mark.parametrize("text", [
    # no VM anywhere: bare metal is all there is
    "On bare metal all_reduce_perf worked well and had expected performance.\n",
    # bare metal is the slow one
    "On bare metal all_reduce_perf is slower than in the VM.\n",
    "It does not run fine on bare metal either; we also tried a VM.\n",
    # a container on the host, not a VM
    "On bare metal the job runs fine. Inside docker on the same host it runs in a VM-free setup at half speed.\n",
])
def test_fine_on_bare_metal_lookalikes(text):
    kinds = [f.kind for f in facts_of(text) if f.fact_type == "reported.symptom"]
    assert "vm-only" not in kinds, kinds


@pytest.mark.parametrize("text", [
    "# NCCL topology on the VM of H200\n",
    "How should NCCL see the PCIe topology in our VMs?\n",
    "Do we need a topology file for the guest so that NCCL pairs GPUs and NICs?\n",
])
def test_vm_topology_asked(text):
    kinds = [f.kind for f in facts_of(text) if f.fact_type == "reported.symptom"]
    assert "vm-topology-asked" in kinds, kinds


@pytest.mark.parametrize("text", [
    "This is not about the NCCL topology in the VM, the GPUs are on bare metal.\n",
    "We keep the network topology of the VM hosts in a spreadsheet.\n",  # no device of NCCL's named
    "The topology on the bare-metal H100 node is fine.\n",  # no VM
])
def test_vm_topology_asked_lookalikes(text):
    kinds = [f.kind for f in facts_of(text) if f.fact_type == "reported.symptom"]
    assert "vm-topology-asked" not in kinds, kinds
