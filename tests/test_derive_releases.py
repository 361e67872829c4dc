"""The NCCL release table and the deriver that decides which entries bite on a node."""

from __future__ import annotations

import doctest

from clusterdx.facts import releases
from clusterdx.facts.base import SourceRef
from clusterdx.facts.derive import derive_all
from clusterdx.facts.model.container import LaunchCommand
from clusterdx.facts.model.env import EnvVar
from clusterdx.facts.model.nccl import NcclComm, NcclNet, NcclVersion
from clusterdx.facts.model.nccltests import NcclTestsRun

SRC = SourceRef(input="nccl.log", line=3)


def _issues(facts):
    return {f.entry: f for f in derive_all(facts) if f.fact_type == "nccl.release_issue"}


def _version(v: str) -> NcclVersion:
    return NcclVersion(node="n1", source=SRC, version=v, version_num=0, cuda="12.2")


def _net(roce: bool) -> NcclNet:
    return NcclNet(node="n1", source=SRC, net="IB", transport="IB", devices=["mlx5_0:1"], device_count=1, roce=roce)


def _comm(nnodes: int) -> NcclComm:
    return NcclComm(node="n1", source=SRC, comm_rank=0, nranks=8 * nnodes, nnodes=nnodes)


def test_doctests():
    assert doctest.testmod(releases).failed == 0


def test_every_entry_has_a_reference_and_valid_bounds():
    for e in releases.table().entries:
        assert e.reference.startswith("https://"), e.id
        assert e.versions and all(releases.in_range("2.0", b) in (True, False) for b in e.versions), e.id
        assert set(e.unknown_ok) <= set(e.when), e.id


def test_a_regression_names_the_first_release_outside_its_range():
    """fixed_in is what a remediation pins: a release inside the entry's own range would pin the
    problem again. A regression still open (no upper bound: the tree search from 2.25.1) names
    none, and its remedy pins the last good release instead."""
    for e in releases.table().entries:
        if e.kind == "changed-default":
            continue
        if not any(b.strip().startswith(("<", "==")) for b in e.versions):
            assert not e.fixed_in and "release" in e.remedy, e.id
            continue
        assert e.fixed_in, e.id
        assert not all(releases.in_range(e.fixed_in, b) for b in e.versions), e.id
    issue = _issues([_version("2.16.2")])["pcie-nvlink-bridge-slowdown-2.16.2"]
    assert issue.fixed_in == "2.16.5"


def test_regression_without_gpu_model_is_likely():
    issue = _issues([_version("2.19.4")])["regression-2.19.3-2.19.4"]
    assert issue.applies == "likely" and issue.unknown == ["nvlink-gpus"]


def test_regression_contradicted_by_pcie_gpus():
    run = NcclTestsRun(node="n1", source=SRC, run_index=0, collective="all_reduce", nranks=4, nodes=1,
                       gpu_model="NVIDIA L40S", nccl_version="2.19.3")
    assert "regression-2.19.3-2.19.4" not in _issues([run])


def test_neighbour_releases_outside_the_range():
    assert "regression-2.19.3-2.19.4" not in _issues([_version("2.20.3")])
    assert "regression-2.19.3-2.19.4" not in _issues([_version("2.19.1")])


def test_roce_gid_default_applies_before_2_21_5_only_on_roce():
    assert _issues([_version("2.18.3"), _net(True), _comm(2)])["roce-gid-autoselect-2.21"].applies == "applies"
    assert "roce-gid-autoselect-2.21" not in _issues([_version("2.18.3"), _net(False), _comm(2)])
    assert "roce-gid-autoselect-2.21" not in _issues([_version("2.21.5"), _net(True), _comm(2)])
    assert _issues([_version("2.18.3")])["roce-gid-autoselect-2.21"].applies == "possible"


def test_roce_gid_default_needs_traffic_between_nodes():
    # the node count unknown: likely (most RoCE tickets are multi-node); one node: the GID is never used
    issue = _issues([_version("2.18.3"), _net(True)])["roce-gid-autoselect-2.21"]
    assert issue.applies == "likely" and issue.unknown == ["multi-node"]
    assert "roce-gid-autoselect-2.21" not in _issues([_version("2.18.3"), _net(True), _comm(1)])


def test_launch_line_node_count_decides_multi_node():
    one = LaunchCommand(node="n1", source=SRC, launcher="srun", nodes=1, ntasks=8)
    two = LaunchCommand(node="n1", source=SRC, launcher="srun", nodes=2, ntasks=16)
    assert "roce-gid-autoselect-2.21" not in _issues([_version("2.18.3"), _net(True), one])
    assert _issues([_version("2.18.3"), _net(True), two])["roce-gid-autoselect-2.21"].applies == "applies"
    # a launcher with no node count (srun -n 2) decides nothing
    bare = LaunchCommand(node="n1", source=SRC, launcher="srun", ntasks=2)
    assert _issues([_version("2.18.3"), _net(True), bare])["roce-gid-autoselect-2.21"].applies == "likely"


def test_workaround_variable_is_seen():
    gid = EnvVar(node="n1", source=SRC, name="NCCL_IB_GID_INDEX", value="3")
    assert _issues([_version("2.18.3"), _net(True), gid])["roce-gid-autoselect-2.21"].setting_set


def test_c2c_gdr_off_on_grace_multi_node():
    run = NcclTestsRun(node="n1", source=SRC, run_index=0, collective="all_reduce", nranks=8, nodes=2,
                       gpu_model="NVIDIA GH200 480GB", nccl_version="2.23.4")
    assert _issues([run])["c2c-gdr-off-by-default"].applies == "applies"
    assert "c2c-gdr-off-by-default" not in _issues([_version("2.23.4"), _comm(1)])


def test_setting_required_entry():
    cross = EnvVar(node="n1", source=SRC, name="NCCL_CROSS_NIC", value="1")
    assert "cross-nic-ring-alternation-2.26.2" in _issues([_version("2.23.4"), _comm(2), cross])
    assert "cross-nic-ring-alternation-2.26.2" not in _issues([_version("2.23.4"), _comm(2)])


def _run(model: str, version: str = "") -> NcclTestsRun:
    return NcclTestsRun(node="n1", source=SRC, run_index=0, collective="all_reduce", nranks=8, nodes=2,
                        gpu_model=model, nccl_version=version)


def test_blackwell_before_its_first_release_applies_on_both_sides_of_2_25_1():
    assert _issues([_run("NVIDIA GB200", "2.21.5")])["blackwell-support-2.25.1"].applies == "applies"
    assert _issues([_run("NVIDIA B200", "2.25.0")])["blackwell-support-2.25.1"].applies == "applies"
    assert "blackwell-support-2.25.1" not in _issues([_run("NVIDIA B200", "2.25.1")])
    # a look-alike: the same old release on Hopper is no platform problem
    assert "blackwell-support-2.25.1" not in _issues([_run("NVIDIA H100 80GB HBM3", "2.21.5")])


def test_blackwell_without_any_version_is_version_unknown():
    issue = _issues([_run("NVIDIA GB200")])["blackwell-support-2.25.1"]
    assert (issue.applies, issue.version, issue.unknown) == ("version-unknown", "", ["version"])
    assert "blackwell-support-2.25.1" not in _issues([_run("NVIDIA A100-SXM4-80GB")])
    assert _issues([]) == {}


def test_a_newer_library_in_the_same_ticket_decides_platform_support():
    # a stale nccl-tests header (2.21.5) beside the NCCL log banner of the library loaded (2.26.2)
    assert "blackwell-support-2.25.1" not in _issues([_run("NVIDIA GB200", "2.21.5"), _version("2.26.2")])


def _hang() -> "ReportedSymptom":
    from clusterdx.facts.model.reported import ReportedSymptom

    return ReportedSymptom(node="n1", source=SRC, kind="hang", text="alltoall hangs at init")


def _cumem(value: str) -> EnvVar:
    return EnvVar(node="n1", source=SRC, name="NCCL_CUMEM_ENABLE", value=value)


def test_cumem_entry_needs_a_hang_and_a_2_19_release():
    assert _issues([_version("2.19.1"), _hang()])["cumem-default-hang-2.19"].applies == "applies"
    # no hang reported: undecided, never acted on alone
    assert _issues([_version("2.19.1")])["cumem-default-hang-2.19"].applies == "possible"
    # both sides of the range: 2.18.6 (before cuMem by default) and 2.20.3 (the fix)
    assert "cumem-default-hang-2.19" not in _issues([_version("2.18.6"), _hang()])
    assert "cumem-default-hang-2.19" not in _issues([_version("2.20.3"), _hang()])


def test_cumem_workaround_counts_only_at_its_value():
    """NCCL_CUMEM_ENABLE=1 is the release's own default (the trigger); only =0 steps around it."""
    on = _issues([_version("2.19.3"), _hang(), _cumem("1")])["cumem-default-hang-2.19"]
    off = _issues([_version("2.19.3"), _hang(), _cumem("0")])["cumem-default-hang-2.19"]
    assert on.setting_set is False and off.setting_set is True
    # an entry without a workaround value: any value set counts (NCCL_IB_GID_INDEX=3)
    gid = _issues([_version("2.19.3"), EnvVar(node="n1", source=SRC, name="NCCL_IB_GID_INDEX", value="3")])
    assert gid["roce-gid-autoselect-2.21"].setting_set is True


def test_ngc_image_table_rows_have_references_and_readable_versions():
    from clusterdx.facts import images
    from clusterdx.facts.versions import version_key

    assert doctest.testmod(images).failed == 0
    for row in images.table().images:
        assert row.reference.startswith("https://") and version_key(row.nccl), row
    assert images.nccl_for_image("nvcr.io/nvidia/pytorch:23.11-py3")[0] == "2.19.3"
    # a tag the table does not list, another registry, a tag-like path: no version
    assert images.nccl_for_image("nvcr.io/nvidia/pytorch:19.01-py3") is None
    assert images.nccl_for_image("docker.io/pytorch/pytorch:23.11") is None
    assert images.nccl_for_image("/home/me/nvcr.io/nvidia/pytorch:23.11-py3") is None


def test_image_on_the_launch_line_gives_the_release():
    from clusterdx.facts.model.container import LaunchCommand

    run = LaunchCommand(node="n1", source=SRC, launcher="srun", container_image="nvcr.io/nvidia/pytorch:23.12-py3")
    assert _issues([run, _hang()])["cumem-default-hang-2.19"].version == "2.19.3"
    # a version the logs show wins over the image's
    assert "cumem-default-hang-2.19" not in _issues([run, _hang(), _version("2.20.5")])


def _signature(sig: str):
    from clusterdx.facts.model.signature import TextSignature
    return TextSignature(node="n1", source=SRC, signature=sig, node_id="nccl-version-regression", text="t")


def test_entry_known_by_its_warning_needs_the_warning_and_the_range():
    """NIC fusion's invalid NET id (2.24.3-2.27.2): the release alone is no evidence, the warning
    on a fixed release or before fusion existed is none either."""
    entry = "nic-fusion-invalid-net-id-2.24-2.26"
    warn = _signature("nccl-net-id-not-found")
    assert _issues([_version("2.25.1"), warn])[entry].applies == "applies"
    assert _issues([_version("2.26.6"), warn])[entry].fixed_in == "2.27.3"
    assert entry not in _issues([_version("2.25.1")])
    assert entry not in _issues([_version("2.25.1"), _signature("nccl-unhandled-system-error")])
    assert entry not in _issues([_version("2.27.3"), warn])
    assert entry not in _issues([_version("2.23.4"), warn])


def _one_node_run(model: str) -> NcclTestsRun:
    return NcclTestsRun(node="n1", source=SRC, run_index=0, collective="all_reduce", nranks=4, nodes=1, gpu_model=model)


def test_c2c_default_without_any_version_is_version_unknown_on_grace_across_nodes():
    """GPUDirect RDMA off over NVLink-C2C before 2.27.3: a multi-node GH200 ticket with no version
    lists it as a candidate; one node, an x86 GPU, or a known version decide it instead."""
    entry = "c2c-gdr-off-by-default"
    issue = _issues([_run("NVIDIA GH200 480GB")])[entry]
    assert (issue.applies, issue.version, issue.setting_set) == ("version-unknown", "", False)
    set_ = _issues([_run("NVIDIA GH200 480GB"), EnvVar(node="n1", source=SRC, name="NCCL_NET_GDR_C2C", value="1")])[entry]
    assert set_.setting_set is True
    assert entry not in _issues([_one_node_run("NVIDIA GH200 480GB")])
    assert entry not in _issues([_run("NVIDIA H100 80GB HBM3")])
    assert entry not in _issues([_run("NVIDIA GH200 480GB", "2.27.3")])
    assert _issues([_run("NVIDIA GH200 480GB", "2.26.2")])[entry].applies == "applies"
    # an entry known by its warning is never listed without a version
    assert "nic-fusion-invalid-net-id-2.24-2.26" not in _issues([_run("NVIDIA GB200")])


def test_tree_search_bug_needs_its_warning_and_a_release_from_2_25_1():
    entry = "tree-search-pattern-2.25"
    warn = _signature("nccl-graph-tree-pattern-not-found")
    assert _issues([_version("2.25.1"), warn])[entry].applies == "likely"  # node count undecided
    assert _issues([_version("2.27.7"), warn, _comm(2)])[entry].applies == "applies"
    assert entry not in _issues([_version("2.24.3"), warn])
    assert entry not in _issues([_version("2.25.1")])
    assert entry not in _issues([_version("2.26.2"), warn, _comm(1)])  # one node: no inter-node tree


def _said(v: str):
    from clusterdx.facts.model.reported import ReportedVersion
    return ReportedVersion(node="n1", source=SRC, component="nccl", version=v, text=f"NCCL {v}")


def test_a_release_series_in_words_counts_only_where_the_whole_series_is_in_range():
    warn = _signature("nccl-graph-tree-pattern-not-found")
    assert "tree-search-pattern-2.25" in _issues([_said("2.25"), warn])
    assert "tree-search-pattern-2.25" not in _issues([_said("2.22"), warn])
    fusion = "nic-fusion-invalid-net-id-2.24-2.26"
    net = _signature("nccl-net-id-not-found")
    assert fusion in _issues([_said("2.25"), net])
    assert fusion not in _issues([_said("2.27"), net])  # 2.27.3 onwards is fixed: undecided for "2.27"
    assert _issues([_said("2.25.1")]) == {} or all(i.version != "2.25.1" for i in _issues([_said("2.25.1")]).values())


def _framework_issues(frm: str, to: str, gpus: int | None = 8, env: dict[str, str] | None = None) -> list:
    from clusterdx.facts.model.gpu import GpuSummary
    from clusterdx.facts.model.reported import ReportedChange

    facts = [ReportedChange(node="n", source=SourceRef(input="t.md", line=1), component="pytorch", from_version=frm,
                            to_version=to, direction="slower", text="slower", provenance="reported")]
    if gpus is not None:
        facts.append(GpuSummary(node="n", source=SourceRef(input="t.md", line=2), gpus=gpus, models=["V100"]))
    facts += [EnvVar(node="n", source=SourceRef(input="t.md", line=3), name=k, value=v) for k, v in (env or {}).items()]
    return [f for f in derive_all(facts) if f.fact_type == "framework.release_issue"]


def test_every_framework_change_has_a_reference_and_valid_bounds():
    from clusterdx.facts.images import wheel_table
    from clusterdx.facts.versions import version_key

    for c in wheel_table().changes:
        assert c.reference.startswith("https://"), c.id
        assert all(version_key(b.lstrip("<>=")) for b in c.versions), c.id
    for w in wheel_table().wheels:
        assert w.reference.startswith("https://") and version_key(w.nccl), w.series


def test_a_slowdown_into_a_framework_change_on_a_multi_gpu_node():
    [issue] = _framework_issues("1.0", "1.1")
    assert (issue.entry, issue.cause, issue.setting_set) == \
        ("pytorch-openmp-threads-per-process-1.1", "helper-thread-oversubscription", False)
    assert _framework_issues("1.0.1", "1.1.0", env={"OMP_NUM_THREADS": "4"})[0].setting_set


def test_no_framework_change_crossed_or_no_multi_gpu_node():
    assert _framework_issues("1.1.0", "1.1.1") == []  # both inside the range
    assert _framework_issues("1.1", "1.2") == []  # the slow side is past it
    assert _framework_issues("1.0", "1.1", gpus=1) == []
    assert _framework_issues("1.0", "1.1", gpus=None) == []  # undecided: silent


def test_h800_before_its_fixes_applies_on_both_sides_of_2_19_3():
    assert _issues([_run("NVIDIA H800", "2.17.1")])["h800-fixes-2.19.3"].applies == "applies"
    assert _issues([_run("NVIDIA H800", "2.19.1")])["h800-fixes-2.19.3"].applies == "applies"
    assert "h800-fixes-2.19.3" not in _issues([_run("NVIDIA H800", "2.19.3")])
    # look-alikes: the same old release on the H100 (18 links) or an A800 is not the H800 entry
    assert "h800-fixes-2.19.3" not in _issues([_run("NVIDIA H100 80GB HBM3", "2.17.1")])
    assert "h800-fixes-2.19.3" not in _issues([_run("NVIDIA A800-SXM4-80GB", "2.17.1")])


def test_h800_named_only_by_the_user_counts():
    from clusterdx.facts.model.reported import ReportedInventory

    inv = ReportedInventory(node="n1", source=SRC, item="gpu", model="H800", form="SXM", text="8x H800 per node")
    assert _issues([inv, _version("2.18.3")])["h800-fixes-2.19.3"].applies == "applies"
    assert "h800-fixes-2.19.3" not in _issues([inv, _version("2.21.5")])


def test_ll_cleanup_hang_needs_a_hang_and_a_2_4_release_before_2_4_6():
    assert _issues([_version("2.4.2"), _hang()])["ll-cleanup-hang-2.4"].applies == "applies"
    assert _issues([_version("2.4.5"), _hang()])["ll-cleanup-hang-2.4"].applies == "applies"
    # no hang reported: undecided, never acted on alone
    assert _issues([_version("2.4.2")])["ll-cleanup-hang-2.4"].applies == "possible"
    # both sides of the range: the fix (2.4.6) and a 2.3 release the notes say nothing about
    assert "ll-cleanup-hang-2.4" not in _issues([_version("2.4.6"), _hang()])
    assert "ll-cleanup-hang-2.4" not in _issues([_version("2.3.7"), _hang()])


def test_ll_workaround_counts_only_at_zero():
    def ll(value: str) -> EnvVar:
        return EnvVar(node="n1", source=SRC, name="NCCL_LL_THRESHOLD", value=value)

    assert _issues([_version("2.4.2"), _hang(), ll("0")])["ll-cleanup-hang-2.4"].setting_set is True
    assert _issues([_version("2.4.2"), _hang(), ll("16384")])["ll-cleanup-hang-2.4"].setting_set is False


def _change(frm: str, to: str, direction: str = "slower") -> "ReportedChange":
    from clusterdx.facts.model.reported import ReportedChange

    return ReportedChange(node="n1", source=SRC, component="nccl", from_version=frm, to_version=to,
                          direction=direction, text="t")


def _sendrecv_8_nodes() -> list:
    return [_comm(8), NcclTestsRun(node="n1", source=SRC, run_index=0, collective="sendrecv", nranks=64, nodes=8)]


def test_the_release_called_good_and_what_it_shares_are_left_out():
    base = _sendrecv_8_nodes() + [_version("2.19.4"), _version("2.20.5"), _net(True)]
    # no contrast: every entry of both releases is there
    plain = _issues(base)
    assert {"regression-2.19.3-2.19.4", "roce-gid-autoselect-2.21", "net-channels-per-peer-auto-2.20"} <= set(plain)
    assert plain["net-channels-per-peer-auto-2.20"].crossed is False
    # "a drop for NCCL >= 2.20": 2.19.4 is the good side, the RoCE GID default (both releases) says nothing
    told = _issues(base + [_change("", "2.20")])
    assert "regression-2.19.3-2.19.4" not in told and "roce-gid-autoselect-2.21" not in told
    assert told["net-channels-per-peer-auto-2.20"].crossed is True
    # the same with the good release named: "from 2.19.4 to 2.20.5 it got slower"
    named = _issues(base + [_change("2.19.4", "2.20.5")])
    assert set(named) == set(told)


def test_a_faster_change_or_another_component_names_no_good_release():
    base = _sendrecv_8_nodes() + [_version("2.19.4"), _version("2.20.5")]
    assert "regression-2.19.3-2.19.4" in _issues(base + [_change("2.19.4", "2.20.5", "faster")])
    from clusterdx.facts.model.reported import ReportedChange

    cuda = ReportedChange(node="n1", source=SRC, component="cuda", from_version="12.2", to_version="12.4",
                          direction="slower", text="t")
    assert "regression-2.19.3-2.19.4" in _issues(base + [cuda])
    # a bound the ticket's releases are all above: nothing below it is shown, nothing is left out
    assert "regression-2.19.3-2.19.4" in _issues(base + [_change("", "2.18")])
