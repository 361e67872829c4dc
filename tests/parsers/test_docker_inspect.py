import doctest
import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.parsers import docker_inspect
from tests.parsers.helpers import FORMATS, of_type, parse_fixture, parse_or_refuse, parse_text, sample_files, sniff_file

CONTAINER = Path(__file__).parents[1] / "fixtures" / "container"
MINE = {"docker-inspect.json"}


def test_doctests():
    assert doctest.testmod(docker_inspect).failed == 0


def test_sample_default_shm_and_rdma_setup():
    ctx = parse_fixture("docker-inspect", "docker-inspect.json")
    [spec] = of_type(ctx, "container.spec")
    assert spec.runtime == "docker" and spec.name == "gpt70b-rank0"
    assert spec.image == "nvcr.io/nvidia/pytorch:25.03-py3"
    # planted finding: the 64 MiB default /dev/shm with a private IPC namespace
    assert spec.shm_bytes == 67108864 and spec.ipc_host is False
    assert spec.network_host is True and spec.privileged is False
    assert spec.memlock_unlimited is True
    assert spec.cap_add == ["IPC_LOCK", "SYS_NICE"] and spec.numa_syscalls is True
    assert len(spec.devices) == 11 and spec.devices[-1] == "/dev/infiniband/rdma_cm"
    assert spec.infiniband_device is True and spec.gpus == "all"
    assert spec.mounts == ["/lustre/fsw/llm/mlops:/workspace/data", "/opt/topo:/opt/topo"]
    assert spec.topo_file_mounted is True and spec.nccl_conf_mounted is False
    assert spec.cpuset == "" and spec.scope.value == "container"
    assert spec.source.line == 34  # "Name": "/gpt70b-rank0"
    env = {v.name: v for v in of_type(ctx, "env.var")}
    assert env["NCCL_TOPO_FILE"].value == "/opt/topo/hgx-h100-8nic.xml"
    assert env["NCCL_SOCKET_IFNAME"].source.line == 259
    [dump] = of_type(ctx, "env.dump")
    assert dump.complete is True and dump.var_count == 14 and dump.container_markers == ["spec:docker inspect"]


def test_single_object_nulls_and_later_duplicate_wins():
    obj = {"Name": "/c", "Config": {"Image": "img", "Env": ["A=1", "A=2", "GITHUB_TOKEN=ghp_x"]},
           "HostConfig": {"ShmSize": 8589934592, "IpcMode": "host", "NetworkMode": "bridge", "CapAdd": None,
                          "Devices": None, "Ulimits": [{"Name": "memlock", "Soft": 65536, "Hard": 65536}],
                          "Privileged": True, "DeviceRequests": [{"Count": 2, "Capabilities": [["gpu"]]}],
                          "SecurityOpt": None},
           "Mounts": None}
    ctx = parse_text("docker-inspect", "$ docker inspect c\n" + json.dumps(obj, indent=2))
    [spec] = of_type(ctx, "container.spec")
    assert spec.ipc_host is True and spec.shm_bytes is None  # the host's /dev/shm
    assert spec.memlock_unlimited is False and spec.privileged is True
    assert spec.infiniband_device is True and spec.numa_syscalls is True and spec.gpus == "2"
    env = {v.name: v.value for v in of_type(ctx, "env.var")}
    assert env == {"A": "2", "GITHUB_TOKEN": "<redacted>"}


def test_hostconfig_only_and_missing_keys():
    ctx = parse_text("docker-inspect", '{"ShmSize": 1073741824, "IpcMode": "private", "Binds": ["/etc/nccl.conf:/etc/nccl.conf:ro"]}')
    [spec] = ctx.facts
    assert spec.shm_bytes == 1073741824 and spec.nccl_conf_mounted is True
    assert spec.network_host is None and spec.memlock_unlimited is None


def test_truncated_json_is_a_parse_error_with_line():
    text = (FORMATS / "docker-inspect.json").read_text()
    cut = "\n".join(text.splitlines()[:120])
    with pytest.raises(ParseError) as exc:
        parse_text("docker-inspect", cut)
    assert exc.value.line >= 100


def test_json_without_containers_is_not_applicable():
    with pytest.raises(NotApplicable):
        parse_text("docker-inspect", '[{"foo": 1}]')
    with pytest.raises(NotApplicable):
        parse_text("docker-inspect", "hello\n")


@pytest.mark.parametrize("path", sample_files(FORMATS, CONTAINER), ids=lambda p: p.name)
def test_sniff_over_fixtures(path):
    score = sniff_file(docker_inspect.sniff, path)
    if path.name in MINE:
        assert score >= 0.9
    else:
        assert score < 0.3


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000))
def test_never_raises_anything_else(text):
    parse_or_refuse("docker-inspect", text)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000))
def test_never_raises_on_bytes(data):
    parse_or_refuse("docker-inspect", data.decode("latin-1"))


@settings(max_examples=100, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10),
                    lambda c: st.lists(c, max_size=4) | st.dictionaries(
                        st.sampled_from(["Name", "Config", "HostConfig", "Env", "Mounts", "ShmSize", "IpcMode",
                                         "Ulimits", "Devices", "DeviceRequests", "CapAdd", "Binds", "Tmpfs",
                                         "Capabilities", "Count", "Source", "Destination"]), c, max_size=5),
                    max_leaves=20))
def test_never_raises_on_odd_json(value):
    try:
        parse_text("docker-inspect", json.dumps([value]))
    except (ParseError, NotApplicable):
        pass
