import doctest
import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.parsers import k8s_manifest
from tests.parsers.helpers import FORMATS, of_type, parse_fixture, parse_or_refuse, parse_text, sample_files, sniff_file

CONTAINER = Path(__file__).parents[1] / "fixtures" / "container"
MINE = {"k8s-pod.yaml", "k8s-job.yaml"}


def test_doctests():
    assert doctest.testmod(k8s_manifest).failed == 0


def test_pod_sample():
    ctx = parse_fixture("k8s-pod", "k8s-pod.yaml")
    [spec] = of_type(ctx, "container.spec")
    assert (spec.runtime, spec.name, spec.image) == ("kubernetes", "gpt70b-worker-1/trainer",
                                                     "nvcr.io/nvidia/pytorch:25.03-py3")
    assert spec.network_host is True and spec.ipc_host is False and spec.privileged is False
    assert spec.shm_bytes == 64 * 2 ** 30
    assert spec.cap_add == ["IPC_LOCK", "SYS_RESOURCE"] and spec.numa_syscalls is None
    assert spec.gpus == "8" and spec.rdma_resources == ["rdma/rdma_shared_device_a"]
    assert spec.devices == ["/dev/infiniband"] and spec.infiniband_device is True
    assert spec.hugepages.startswith("hugepages-2Mi=4Gi")
    assert "persistentVolumeClaim/pretrain-data:/workspace/data" in spec.mounts
    assert spec.topo_file_mounted is False and spec.memlock_unlimited is None
    assert spec.source.line == 24
    env = {v.name: v for v in of_type(ctx, "env.var")}
    assert env["NCCL_IB_HCA"].value.startswith("=mlx5_0,")
    assert env["NCCL_IB_GID_INDEX"].value == "3" and env["NCCL_IB_GID_INDEX"].source.line == 36
    assert "NODE_NAME" not in env  # valueFrom: no literal value
    [dump] = of_type(ctx, "env.dump")
    assert dump.complete is False and dump.filter.startswith("container spec")
    assert "NODE_NAME" in dump.names and dump.scope.value == "container"


def test_job_with_warning_line_and_second_document():
    ctx = parse_text("k8s-pod", (CONTAINER / "k8s-job.yaml").read_text(), name="k8s-job.yaml")
    [spec] = of_type(ctx, "container.spec")
    assert spec.name == "nccl-allreduce/nccl-test"
    # no volume on /dev/shm: the runtime's 64 MiB default
    assert spec.shm_bytes == 67108864
    assert spec.numa_syscalls is False  # RuntimeDefault seccomp, no SYS_NICE
    assert spec.rdma_resources == ["nvidia.com/hostdev"] and spec.gpus == "8"
    assert spec.topo_file_mounted is True and spec.nccl_conf_mounted is True
    env = {v.name: v.value for v in of_type(ctx, "env.var")}
    assert env == {"NCCL_DEBUG": "INFO", "NCCL_TOPO_FILE": "/var/run/nvidia-topologyd/virtualTopology.xml"}
    assert spec.source.line == 20


def test_list_json_and_hostipc():
    pod = {"apiVersion": "v1", "kind": "List", "items": [{"kind": "Pod", "metadata": {"name": "p"}, "spec": {
        "hostIPC": True, "containers": [{"name": "c", "image": "i", "securityContext": {"privileged": True},
                                         "env": [{"name": "HF_TOKEN", "value": "hf_x"}]}]}}]}
    ctx = parse_text("k8s-pod", json.dumps(pod, indent=1))
    [spec] = of_type(ctx, "container.spec")
    assert spec.ipc_host is True and spec.shm_bytes is None and spec.numa_syscalls is True
    assert spec.infiniband_device is True
    [var] = of_type(ctx, "env.var")
    assert var.value == "<redacted>" and var.redacted


def test_quantity():
    assert k8s_manifest.quantity("4Gi") == 4 * 2 ** 30
    assert k8s_manifest.quantity("500M") == 500_000_000
    assert k8s_manifest.quantity("100m") == 0


def test_malformed_and_truncated_yaml():
    text = (FORMATS / "k8s-pod.yaml").read_text()
    with pytest.raises(ParseError) as exc:
        parse_text("k8s-pod", text.replace("  containers:\n", "  containers:\n   bad: [\n"))
    assert exc.value.line > 20
    with pytest.raises(ParseError):
        parse_text("k8s-pod", "apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: a, image: \"b\n")
    with pytest.raises(NotApplicable):
        parse_text("k8s-pod", "apiVersion: v1\nkind: ConfigMap\ndata: {a: b}\n")


def test_alias_bomb_and_recursion_are_bounded():
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(12))
    with pytest.raises(NotApplicable):
        parse_text("k8s-pod", bomb)
    with pytest.raises(NotApplicable):
        parse_text("k8s-pod", "&x [*x]\n")


@pytest.mark.parametrize("path", sample_files(FORMATS, CONTAINER), ids=lambda p: p.name)
def test_sniff_over_fixtures(path):
    score = sniff_file(k8s_manifest.sniff, path)
    if path.name in MINE:
        assert score >= 0.9
    else:
        assert score < 0.3


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000))
def test_never_raises_anything_else(text):
    parse_or_refuse("k8s-pod", text)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000))
def test_never_raises_on_bytes(data):
    parse_or_refuse("k8s-pod", data.decode("latin-1"))


_KEYS = st.sampled_from(["containers", "name", "image", "env", "value", "volumes", "volumeMounts", "mountPath",
                         "emptyDir", "medium", "sizeLimit", "hostPath", "path", "resources", "limits",
                         "securityContext", "capabilities", "add", "privileged", "hostIPC", "metadata",
                         "seccompProfile", "type", "subPath", "requests", "envFrom"])


@settings(max_examples=150, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                    lambda c: st.lists(c, max_size=3) | st.dictionaries(_KEYS, c, max_size=5), max_leaves=25))
def test_never_raises_on_odd_structures(value):
    try:
        parse_text("k8s-pod", json.dumps({"spec": {"containers": [value], "volumes": value}}))
    except (ParseError, NotApplicable):
        pass
