import codecs
import doctest
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from clusterdx.facts import formats as formats_mod
from clusterdx.facts import ingest as ingest_mod
from clusterdx.facts.base import NotApplicable, ParseError, Scope
from clusterdx.facts.document import Document
from clusterdx.facts.formats import all_formats
from clusterdx.facts.parsers.sysctl import FORMATS as _SYSCTL_FORMATS
from clusterdx.facts.ingest import Limits, ingest, ingest_documents
from clusterdx.facts.model.kernel import Sysctl
from tests.test_sniff import fake

HERE = Path(__file__).parent
INGEST = HERE / "fixtures" / "ingest"
FORMATS = HERE / "fixtures" / "formats"

#: the sysctl format, from its own module: the registry (every parser) is imported when a test needs it
SYSCTL = next(f for f in _SYSCTL_FORMATS if f.name == "sysctl")


@pytest.fixture
def work(tmp_path, monkeypatch):
    """Run in an empty folder so that display paths are short and relative."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def by_path(result):
    return {r.path: r for r in result.inputs}


def test_doctests():
    assert doctest.testmod(ingest_mod).failed == 0


# -- single files and decoding ------------------------------------------------------------------


def test_single_file_any_name(work):
    Path("ticket attachment (1).log").write_text("kernel.numa_balancing = 1\nvm.swappiness = 60\n")
    res = ingest(["ticket attachment (1).log"], formats=[SYSCTL])
    [r] = res.inputs
    assert (r.path, r.format, r.status, r.facts) == ("ticket attachment (1).log", "sysctl", "parsed", 2)
    assert (r.node, r.scope, r.line_start, r.line_end) == ("node", "unknown", 1, 2)
    assert r.size_bytes == os.path.getsize("ticket attachment (1).log")
    assert [f.key for f in res.facts] == ["kernel.numa_balancing", "vm.swappiness"]
    assert res.facts[1].source.input == "ticket attachment (1).log" and res.facts[1].source.line == 2


def test_default_formats_come_from_the_registry(work, monkeypatch):
    monkeypatch.setattr(formats_mod, "_REGISTRY", {"only": fake("only", 0.9)})
    Path("a.txt").write_text("whatever\n")
    [r] = ingest(["a.txt"]).inputs
    assert r.format == "only" and r.status == "parsed"


@pytest.mark.parametrize(
    "data, warned",
    [
        (codecs.BOM_UTF8 + "vm.swappiness = 60\r\n".encode(), False),
        ("vm.swappiness = 60\n".encode("utf-16"), False),
        ("vm.swappiness = 60\n".encode("utf-16-be"), None),  # no BOM: NULs make it binary
        (b"vm.swappiness = 60\n# caf\xe9\n", True),
    ],
)
def test_decoding(work, data, warned):
    Path("f").write_bytes(data)
    [r] = ingest(["f"], formats=[SYSCTL]).inputs
    if warned is None:
        assert r.status == "unrecognized" and r.reason.startswith("binary file")
        return
    assert r.format == "sysctl" and r.facts == 1
    assert any("latin-1" in w.message for w in r.warnings) == warned


def test_binary_goes_to_binary_formats_only(work):
    seen = {}

    def parse(doc, ctx):
        seen["raw"] = doc.raw
        seen["lines"] = doc.lines

    Path("environ").write_bytes(b"A=1\x00B=2\x00")
    fmts = [fake("text", 1.0), fake("bin", 0.9, binary=True, parse=parse)]
    [r] = ingest(["environ"], formats=fmts).inputs
    assert r.format == "bin" and r.status == "parsed"
    assert seen == {"raw": b"A=1\x00B=2\x00", "lines": []}
    [r] = ingest(["environ"], formats=[fake("text", 1.0)]).inputs
    assert r.status == "unrecognized" and r.reason == "binary file"
    assert r.first_line.startswith("A=1.B=2")


def test_empty_and_blank_files(work):
    Path("empty").write_bytes(b"")
    Path("blank").write_text("\n   \n")
    res = by_path(ingest(["empty", "blank"], formats=[SYSCTL]))
    assert (res["empty"].status, res["empty"].reason) == ("unrecognized", "empty file")
    assert res["blank"].status == "unrecognized" and "blank" in res["blank"].reason


def test_per_file_size_cap(work):
    line = b"vm.swappiness = 60\n"
    Path("big.txt").write_bytes(line * 100)
    [r] = ingest(["big.txt"], formats=[SYSCTL], limits=Limits(max_file_bytes=len(line) * 10 + 5)).inputs
    assert r.status == "partial"
    assert r.reason.startswith("truncated at ")
    assert r.facts == 10  # cut at the last whole line
    assert r.size_bytes == len(line) * 100


def test_total_size_cap(work):
    for n in "abc":
        Path(n).write_text("vm.swappiness = 60\n" * 10)
    res = ingest(["a", "b", "c"], formats=[SYSCTL], limits=Limits(max_total_bytes=250))
    statuses = [r.status for r in res.inputs]
    assert statuses[0] == "parsed"
    assert statuses[1] == "partial" and "total size limit" in res.inputs[1].reason
    assert statuses[2] == "skipped" and "total size limit" in res.inputs[2].reason


def test_missing_path_and_special_files(work):
    os.mkfifo("fifo")
    res = by_path(ingest(["nope.txt", "fifo"], formats=[SYSCTL]))
    assert res["nope.txt"].status == "error" and "no such file" in res["nope.txt"].reason
    assert res["fifo"].status == "skipped" and "not a regular file" in res["fifo"].reason


# -- sniffing and parsing outcomes --------------------------------------------------------------


def _raise(exc):
    def parse(doc, ctx):
        raise exc
    return parse


def test_unrecognized_reports_best_guess_and_first_line(work):
    Path("x.txt").write_text("\n  hello world  \nmore\n")
    [r] = ingest(["x.txt"], formats=[fake("weak", 0.3)]).inputs
    assert r.status == "unrecognized" and r.format is None and r.confidence == 0.3
    assert r.first_line == "hello world"
    assert "no format matched" in r.reason and "weak (0.30)" in r.reason and "hello world" in r.reason


def test_parse_error_gives_line_and_message(work):
    Path("x.txt").write_text("a\nb\n")
    [r] = ingest(["x.txt"], formats=[fake("f", 0.8, parse=_raise(ParseError("bad field", 2)))]).inputs
    assert (r.status, r.format, r.reason) == ("error", "f", "line 2: bad field")


def test_not_applicable_falls_to_the_runner_up(work):
    def parse(doc, ctx):
        ctx.add(Sysctl, 0, key="k.v", value="1")

    Path("x.txt").write_text("a\n")
    fmts = [fake("first", 0.9, parse=_raise(NotApplicable("nothing here"))),
            fake("second", 0.6, parse=parse), fake("third", 0.4, parse=parse)]
    res = ingest(["x.txt"], formats=fmts)
    [r] = res.inputs
    assert (r.status, r.format, r.confidence, r.facts) == ("parsed", "second", 0.6, 1)
    assert "first" in r.reason
    # runner-up under 0.5 is not tried
    fmts[1] = fake("second", 0.4, parse=parse)
    [r] = ingest(["x.txt"], formats=fmts).inputs
    assert r.status == "unrecognized" and "nothing here" in r.reason


def test_other_exceptions_are_internal_parser_errors(work):
    Path("x.txt").write_text("a\n")
    [r] = ingest(["x.txt"], formats=[fake("f", 0.8, parse=_raise(ZeroDivisionError("x")))]).inputs
    assert r.status == "error" and r.reason == "internal parser error: ZeroDivisionError: x"


def test_parser_warnings_make_partial(work):
    Path("x.txt").write_text("vm.swappiness = 60\nvm.a = 1\nvm.b = 2\n"
                             "sysctl: permission denied on key 'a.b'\n")
    [r] = ingest(["x.txt"], formats=[SYSCTL]).inputs
    assert r.status == "partial" and r.facts == 3
    assert [(w.line, w.message) for w in r.warnings] == [(4, "sysctl: permission denied on key 'a.b'")]


def test_raising_sniffer_is_recorded_and_others_still_win(work):
    def boom(doc):
        raise RuntimeError("sniffer bug")

    Path("x.txt").write_text("vm.swappiness = 60\n")
    [r] = ingest(["x.txt"], formats=[fake("boom", boom), SYSCTL]).inputs
    assert r.format == "sysctl" and r.status == "parsed"
    assert any("boom" in w.message and "sniffer bug" in w.message for w in r.warnings)


# -- directories and manifests ------------------------------------------------------------------


def test_directory_walk_sorted_with_manifest(work):
    shutil.copytree(INGEST / "bundle-a", "bundle-a")
    Path("bundle-a/zz-notes.txt").write_text("nothing to see\n")
    Path("bundle-a/sub/deeper").mkdir(parents=True)
    Path("bundle-a/sub/deeper/x.conf").write_text("vm.swappiness = 1\n")
    res = ingest(["bundle-a"], formats=[SYSCTL])
    paths = [r.path for r in res.inputs]
    assert paths == [
        "bundle-a/container/sysctl.txt",
        "bundle-a/host/sysctl.txt",
        "bundle-a/manifest.json",
        "bundle-a/sub/deeper/x.conf",
        "bundle-a/sysctl-a.txt",
        "bundle-a/zz-notes.txt",
    ]
    recs = by_path(res)
    m = recs["bundle-a/manifest.json"]
    assert (m.status, m.format, m.node) == ("parsed", "manifest", "gpu-node-017")
    assert all(r.node == "gpu-node-017" for r in res.inputs)
    # a folder named container or host is no evidence: the manifest's scope holds for all
    assert recs["bundle-a/container/sysctl.txt"].scope == "host"
    assert recs["bundle-a/host/sysctl.txt"].scope == "host"
    assert recs["bundle-a/sysctl-a.txt"].scope == "host"  # from the manifest
    assert recs["bundle-a/zz-notes.txt"].status == "unrecognized"
    assert {f.node for f in res.facts} == {"gpu-node-017"}
    assert {f.scope for f in res.facts} == {Scope.host}


def test_node_and_scope_arguments_win(work):
    shutil.copytree(INGEST / "bundle-a", "bundle-a")
    res = ingest(["bundle-a"], formats=[SYSCTL], node="n7", scope="vm-guest")
    assert {(r.node, r.scope) for r in res.inputs} == {("n7", "vm-guest")}
    with pytest.raises(ValueError):
        ingest(["bundle-a"], scope="moon")


def test_nested_manifests_and_bad_manifests(work):
    Path("fleet/a").mkdir(parents=True)
    Path("fleet/b").mkdir()
    Path("fleet/c").mkdir()
    Path("fleet/a/manifest.json").write_text('{"host": "node-a", "scope": "container"}')
    Path("fleet/a/s.txt").write_text("vm.swappiness = 60\n")
    Path("fleet/b/manifest.json").write_text('{"host": "node-b", ')
    Path("fleet/b/s.txt").write_text("vm.swappiness = 60\n")
    Path("fleet/c/manifest.json").write_text('{"host": "node-c", "scope": "moon"}')
    Path("fleet/c/s.txt").write_text("vm.swappiness = 60\n")
    recs = by_path(ingest(["fleet"], formats=[SYSCTL]))
    assert (recs["fleet/a/s.txt"].node, recs["fleet/a/s.txt"].scope) == ("node-a", "container")
    assert recs["fleet/b/manifest.json"].status == "error"
    assert recs["fleet/b/manifest.json"].reason.startswith("invalid manifest: line 1")
    assert recs["fleet/b/s.txt"].node == "node"
    assert recs["fleet/c/manifest.json"].status == "partial"
    assert (recs["fleet/c/s.txt"].node, recs["fleet/c/s.txt"].scope) == ("node-c", "unknown")


def test_json_named_manifest_without_manifest_keys_is_an_ordinary_file(work):
    Path("d").mkdir()
    Path("d/manifest.json").write_text('{"name": "my-app", "version": 1}')
    [r] = ingest(["d"], formats=[SYSCTL]).inputs
    assert r.format is None and r.status == "unrecognized"


def test_empty_directory_symlinks_and_macos_junk(work):
    Path("empty").mkdir()
    Path("d/sub").mkdir(parents=True)
    Path("d/real.txt").write_text("vm.swappiness = 60\n")
    os.symlink("real.txt", "d/link.txt")
    os.symlink("sub", "d/linkdir")
    os.symlink("missing", "d/broken")
    Path("d/.DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")
    res = ingest(["empty", "d"], formats=[SYSCTL])
    recs = by_path(res)
    assert (recs["empty"].status, recs["empty"].reason) == ("skipped", "empty directory")
    assert recs["d/link.txt"].status == "parsed"
    assert recs["d/linkdir"].status == "skipped" and "not followed" in recs["d/linkdir"].reason
    assert recs["d/broken"].status == "skipped" and "broken" in recs["d/broken"].reason
    assert recs["d/.DS_Store"].status == "skipped"
    assert [r.path for r in res.inputs] == ["empty", "d/.DS_Store", "d/broken", "d/link.txt",
                                            "d/linkdir", "d/real.txt"]


@pytest.mark.parametrize("folder", ["vm-container-test", "container", "guest", "host_env", "hypervisor"])
def test_folder_and_file_names_decide_no_scope(work, folder):
    """A folder or file name that reads like a scope changes nothing (issue 12 item 6)."""
    Path(folder).mkdir()
    Path(folder, "vm-guest-container-env.txt").write_text("vm.swappiness = 60\n")
    res = ingest([folder], formats=[SYSCTL])
    assert {(r.node, r.scope) for r in res.inputs} == {("node", "unknown")}
    assert {f.scope for f in res.facts} == {Scope.unknown}


def test_manifest_file_scopes_override(work):
    """``files: {path: {scope}}`` in a manifest scopes single files (a guest and its hypervisor
    in one ticket); the manifest's own ``scope`` holds for the rest."""
    Path("t/sub").mkdir(parents=True)
    Path("t/a.txt").write_text("vm.swappiness = 60\n")
    Path("t/sub/b.txt").write_text("vm.swappiness = 60\n")
    Path("t/c.txt").write_text("vm.swappiness = 60\n")
    Path("t/manifest.json").write_text('{"scope": "vm-guest", "files": {"sub/b.txt": {"scope": "hypervisor"},'
                                       ' "c.txt": {"scope": "moon"}}}')
    recs = by_path(ingest(["t"], formats=[SYSCTL]))
    assert recs["t/a.txt"].scope == "vm-guest"
    assert recs["t/sub/b.txt"].scope == "hypervisor"
    assert recs["t/c.txt"].scope == "vm-guest"
    assert recs["t/manifest.json"].status == "partial" and "moon" in recs["t/manifest.json"].reason


# -- transcripts --------------------------------------------------------------------------------


def test_transcript_segments_nodes_and_scopes(work):
    shutil.copy(INGEST / "session.txt", "session.txt")
    res = ingest(["session.txt"], formats=[SYSCTL])
    got = [(r.path, r.status, r.command, r.node, r.scope, r.line_start, r.line_end)
           for r in res.inputs]
    assert got == [
        ("session.txt#1", "unrecognized", None, "node", "unknown", 2, 2),
        ("session.txt#2", "parsed", "sysctl kernel.numa_balancing", "gpu-node-017", "unknown", 3, 4),
        # a 12-hex-digit host name is a container id: container scope, not a node name
        ("session.txt#3", "parsed", "sysctl vm.swappiness", "node", "container", 6, 7),
        ("session.txt#4", "parsed", "docker exec -it trainer sysctl vm.swappiness", "login01",
         "container", 8, 9),
        ("session.txt#5", "skipped", "cd /tmp", "node", "unknown", 10, 10),
    ]
    assert all(r.confidence == 0.97 for r in res.inputs[1:4])
    facts = res.facts
    assert [(f.node, f.source.input, f.source.line) for f in facts] == [
        ("gpu-node-017", "session.txt#2", 4), ("node", "session.txt#3", 7),
        ("login01", "session.txt#4", 9)]


def test_manifest_host_beats_prompt_host(work):
    Path("b").mkdir()
    Path("b/manifest.json").write_text('{"host": "from-manifest"}')
    shutil.copy(INGEST / "session.txt", "b/session.txt")
    recs = by_path(ingest(["b"], formats=[SYSCTL]))
    assert recs["b/session.txt#2"].node == "from-manifest"


@pytest.mark.parametrize(
    "command, container",
    [
        ("docker exec -it c env", True), ("docker run --rm img env", True),
        ("kubectl exec -n ml pod-0 -- env", True), ("kubectl -n ml exec pod-0 -- env", True),
        ("srun -N1 --container-image=nvcr.io#nvidia/pytorch:25.03-py3 env", True),
        ("enroot start pytorch env", True), ("apptainer exec img.sif env", True),
        ("systemd-detect-virt --container", False), ("docker inspect trainer", False),
        ("srun -N1 env", False),
    ],
)
def test_container_commands(command, container):
    assert (ingest_mod.scope_from_command(command) == Scope.container) == container


def test_ingest_documents(work):
    docs = [Document.from_text("vm.swappiness = 60\n", name="live:sysctl", command="sysctl -a",
                               node="h1", scope=Scope.host),
            Document(name="live:environ", lines=[], raw=b"A=1\x00")]
    res = ingest_documents(docs, formats=[SYSCTL])
    a, b = res.inputs
    assert (a.format, a.confidence, a.node, a.scope, a.command) == ("sysctl", 0.97, "h1", "host", "sysctl -a")
    assert (b.status, b.reason) == ("unrecognized", "binary file")
    res = ingest_documents(docs[:1], formats=[SYSCTL], node="n2", scope="container")
    assert (res.inputs[0].node, res.facts[0].scope) == ("n2", Scope.container)


def test_redact_flag_reaches_documents(work):
    seen = []
    Path("x").write_text("a\n")
    fmts = [fake("f", 0.9, parse=lambda doc, ctx: seen.append(doc.redact))]
    ingest(["x"], formats=fmts)
    ingest(["x"], formats=fmts, redact=False)
    assert seen == [True, False]


def test_order_is_deterministic(work):
    shutil.copytree(INGEST, "copy")
    a = ingest(["copy"], formats=[SYSCTL])
    b = ingest(["copy"], formats=[SYSCTL])
    assert [r.model_dump() for r in a.inputs] == [r.model_dump() for r in b.inputs]


# -- every sample file: the right format wins ---------------------------------------------------

#: sample file -> expected format; transcripts: {segment number: format}. A format not (yet)
#: registered must leave the input "unrecognized" (or another format's), never crash.
EXPECTED: dict[str, str | dict[int, str]] = {
    "cpupower-frequency-info-grace.txt": "cpupower-frequency-info",
    "cpupower-frequency-info-vm.txt": "cpupower-frequency-info",
    "cpupower-frequency-info.txt": "cpupower-frequency-info",
    "cpupower-idle-info-arm-vm.txt": "cpupower-idle-info",
    "cpupower-idle-info-vm.txt": "cpupower-idle-info",
    "cpupower-idle-info.txt": "cpupower-idle-info",
    "dmesg-iommu-x86.txt": "dmesg",
    "dmesg-prefix-variants.txt": "dmesg",
    "dmesg-smmu-grace-baremetal.txt": "dmesg",
    "dmesg-smmu-grace-vm.txt": "dmesg",
    "dmesg-xid-aer-mlx5.txt": "dmesg",
    "docker-inspect.json": "docker-inspect",
    "env-dump.txt": "env",
    "ibdev2netdev-v.txt": "ibdev2netdev",
    "ibdev2netdev.txt": "ibdev2netdev",
    "ibstat.txt": "ibstat",
    "ibv_devinfo-v.txt": "ibv_devinfo",
    "ibv_devinfo.txt": "ibv_devinfo",
    "k8s-node-labels-describe.txt": "k8s-node-labels",
    "k8s-pod.yaml": "k8s-pod",
    "lscpu-grace-baremetal-hier.txt": "lscpu",
    "lscpu-grace-kvm-flat.txt": "lscpu",
    "lscpu-x86-baremetal-hier.txt": "lscpu",
    "lscpu-x86-kvm-flat.txt": "lscpu",
    "lspci-tv.txt": "lspci-tv",
    "lspci-vvv-legacy.txt": "lspci-vvv",
    "lspci-vvv.txt": "lspci-vvv",
    "megatron-train.log": "train-log",
    "nccl-debug-info.log": "nccl-debug",
    "nccl-debug-plugin-variants.log": "nccl-debug",
    "nccl-debug-socket-fallback.log": "nccl-debug",
    "nccl-debug-warn-variants.log": "nccl-debug",
    "nccl-tests-allgather-interleaved.txt": "nccl-tests",
    "nccl-tests-allreduce-legacy.txt": "nccl-tests",
    "nccl-tests-allreduce.txt": "nccl-tests",
    "nccl-tests-alltoall-nocheck.txt": "nccl-tests",
    "nccl-tests-reducescatter-srun-label.txt": "nccl-tests",
    "nemo-train.log": "train-log",
    "nsys-sqlite-schema.sql": "nsys-sqlite-dump",
    "nsys-stats-cuda_api_sum.csv": "nsys-stats",
    "nsys-stats-cuda_gpu_kern_sum.csv": "nsys-stats",
    "nsys-stats-nvtx_sum.csv": "nsys-stats",
    "nsys-stats-osrt_sum.csv": "nsys-stats",
    "nsys-stats-stdout.txt": "nsys-stats",
    "numactl-hardware-gh200.txt": "numactl-hardware",
    "numactl-hardware-x86.txt": "numactl-hardware",
    "nvidia-smi-q-legacy.txt": "nvidia-smi-q",
    "nvidia-smi-q.txt": "nvidia-smi-q",
    "nvidia-smi-L.txt": "nvidia-smi-list",
    "nvidia-smi-q.xml": "nvidia-smi-q-xml",
    "nvidia-smi-topo-gb200.txt": "nvidia-smi-topo",
    "nvidia-smi-topo-h100-8nic.txt": "nvidia-smi-topo",
    "nvidia-smi-topo-legacy-a100.txt": "nvidia-smi-topo",
    "perf-report-smmu-callgraph.txt": "perf-report",
    "perf-report-smmu.txt": "perf-report",
    "perf-stat-csv.txt": "perf-stat",
    "perf-stat-default.txt": "perf-stat",
    "perf-stat-vm-legacy.txt": "perf-stat",
    "proc-cmdline-variants.txt": "proc-cmdline",
    "proc-environ.bin": "proc-environ",
    "proc-pid-status.txt": "proc-status",
    "process-affinity.txt": {1: "taskset", 2: "taskset", 3: "taskset", 4: "numastat-p",
                             5: "numastat-p", 6: "proc-status"},
    "slurm-pyxis-env.txt": {2: "env", 3: "env"},
    "sysfs-cpufreq-cpuidle.txt": "cpu-sysfs",
    "turbostat.txt": "turbostat",
    "virt-detect.txt": {k: "virt-detect" for k in (1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 17)},
}


def test_expected_table_covers_every_sample():
    assert sorted(EXPECTED) == sorted(p.name for p in FORMATS.iterdir() if p.is_file())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sample_files_sniff_to_their_format(name):
    registered = all_formats()
    res = ingest([FORMATS / name])
    assert res.inputs
    expected = EXPECTED[name]
    if isinstance(expected, str):
        expected = {0: expected}
    recs = {int(r.path.rsplit("#", 1)[1]) if "#" in r.path else 0: r for r in res.inputs}
    for k, fmt in expected.items():
        r = recs[k]
        if fmt in registered:
            # the right format wins; whether its parser then copes is that parser's own test
            assert r.format == fmt, (k, r.format, r.status, r.reason)
        else:
            # an unregistered format's sample must be reported, not crash, and not be claimed
            # by a format that parses it into facts it does not hold
            assert r.status in ("unrecognized", "parsed", "partial", "error", "skipped")
            if r.status != "unrecognized":
                pytest.fail(f"{name}#{k}: expected unrecognized until {fmt!r} is registered, "
                            f"got {r.format} ({r.status})")


# -- robustness ---------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=3000))
def test_random_bytes_never_crash(tmp_path, data):
    p = tmp_path / "blob"
    p.write_bytes(data)
    res = ingest([p], limits=Limits(max_file_bytes=2000))
    assert res.inputs
    assert all(r.path.startswith(str(p)) for r in res.inputs)


_PROMPTY = st.sampled_from(["$ lscpu", "root@h1:~# sysctl -a", "## note", "# x", "", "vm.swappiness = 1",
                            "\x00", "[a@b ~]$ docker exec c env", "A=1", "\ufeff", "\r"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.one_of(_PROMPTY, st.text(max_size=40)), max_size=30))
def test_random_transcripts_never_crash(tmp_path, lines):
    p = tmp_path / "t.txt"
    p.write_text("\n".join(lines), encoding="utf-8", errors="surrogatepass")
    res = ingest([p])
    assert res.inputs
