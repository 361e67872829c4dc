"""The node resolver (facts/nodes.py): every alias of a machine resolves to one node, in one place."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from clusterdx.facts import nodes as nodes_mod
from clusterdx.facts.ingest import ingest
from clusterdx.facts.nodes import name_key, resolve

NCCL = ("{h}:481203:481203 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to ens10f0np0\n"
        "{h}:481203:481203 [0] NCCL INFO NCCL version 2.23.4+cuda12.6\n")
PROMPT = "[root@{h} ~]# sysctl kernel.numa_balancing\nkernel.numa_balancing = 1\n"
PLAIN = "vm.swappiness = 60\n"


@pytest.fixture
def work(tmp_path):
    old = os.getcwd()
    os.chdir(tmp_path)
    yield tmp_path
    os.chdir(old)


def nodes_of(res):
    return {f.source.input: f.node for f in res.facts}


def test_one_host_with_unlabelled_files(work):
    # a one-node ticket: a transcript names gh200-c2-17, lscpu-like files name nothing
    Path("t").mkdir()
    Path("t/session.txt").write_text(PROMPT.format(h="gh200-c2-17"))
    Path("t/sysctl.txt").write_text(PLAIN)
    res = ingest(["t"])
    assert set(nodes_of(res).values()) == {"gh200-c2-17"}  # was {'gh200-c2-17', 'node'}
    recs = {r.path: r for r in res.inputs}
    assert recs["t/sysctl.txt"].node == "gh200-c2-17"


def test_no_host_named_stays_unlabelled(work):
    Path("a.txt").write_text(PLAIN)
    res = ingest(["a.txt"])
    assert set(nodes_of(res).values()) == {"node"}


def test_two_hosts_kept_apart(work):
    Path("t").mkdir()
    Path("t/a.txt").write_text(PROMPT.format(h="gpu-a"))
    Path("t/b.txt").write_text(PROMPT.format(h="gpu-b"))
    Path("t/plain.txt").write_text(PLAIN)
    res = ingest(["t"])
    got = nodes_of(res)
    assert got["t/a.txt#1"] == "gpu-a" and got["t/b.txt#1"] == "gpu-b"
    # a file that names no host in a two-host ticket is not given to either
    assert got["t/plain.txt"] == "node"
    assert res.aliases == {}


def test_prompt_host_and_nccl_prefix_are_one_node(work):
    Path("b").mkdir()
    Path("b/session.txt").write_text(PROMPT.format(h="GH200-C2-17"))
    Path("b/nccl.log").write_text(NCCL.format(h="gh200-c2-17"))
    Path("b/sysctl.txt").write_text(PLAIN)
    res = ingest(["b"])
    assert set(nodes_of(res).values()) == {"gh200-c2-17"}
    assert res.aliases == {"GH200-C2-17": "gh200-c2-17"}
    assert {r.node for r in res.inputs} == {"gh200-c2-17"}


def test_manifest_fqdn_and_nccl_short_name_are_one_node(work):
    Path("b").mkdir()
    Path("b/manifest.json").write_text('{"host": "gh200-c2-17.cluster.local"}')
    Path("b/session.txt").write_text(PROMPT.format(h="gh200-c2-17"))  # the manifest wins over a prompt
    Path("b/nccl.log").write_text(NCCL.format(h="gh200-c2-17"))
    res = ingest(["b"])
    assert set(nodes_of(res).values()) == {"gh200-c2-17"}
    assert res.aliases == {"gh200-c2-17.cluster.local": "gh200-c2-17"}
    assert {r.node for r in res.inputs} == {"gh200-c2-17"}


def test_different_manifest_host_and_nccl_host_stay_apart(work):
    # a bundle of gpu-a holding a job-wide NCCL log of gpu-b: two machines, not aliases
    Path("b").mkdir()
    Path("b/manifest.json").write_text('{"host": "gpu-a"}')
    Path("b/nccl.log").write_text(NCCL.format(h="gpu-b"))
    Path("b/sysctl.txt").write_text(PLAIN)
    res = ingest(["b"])
    assert nodes_of(res) == {"b/nccl.log": "gpu-b", "b/sysctl.txt": "gpu-a"}


def test_node_argument_names_the_one_host_of_an_nccl_log(work):
    Path("nccl.log").write_text(NCCL.format(h="gpu-h100-017"))
    Path("s.txt").write_text(PLAIN)
    res = ingest(["nccl.log", "s.txt"], node="n7")
    assert set(nodes_of(res).values()) == {"n7"}
    assert res.aliases == {"gpu-h100-017": "n7"}


def test_node_argument_does_not_merge_a_multi_host_log(work):
    Path("nccl.log").write_text(NCCL.format(h="gpu-a") + NCCL.format(h="gpu-b"))
    Path("s.txt").write_text(PLAIN)
    res = ingest(["nccl.log", "s.txt"], node="n7")
    assert {f.node for f in res.facts if f.source.input == "nccl.log"} == {"gpu-a", "gpu-b"}
    assert nodes_of(res)["s.txt"] == "n7"
    rec = {r.path: r for r in res.inputs}["nccl.log"]
    assert rec.nodes == ["gpu-a", "gpu-b"]  # the report says where one file's facts went


def test_look_alike_names_stay_apart():
    assert name_key("gpu-01") != name_key("gpu-010")
    assert name_key("10.0.0.1") != name_key("10.0.0.2")  # addresses are not split at dots


def test_folder_name_is_an_alias_only():
    from clusterdx.facts.base import SourceRef
    from clusterdx.facts.model.kernel import Sysctl

    def f(n):
        return Sysctl(node=n, source=SourceRef(input="x", line=1, parser="t"), key="k", value="1")

    r = resolve([f("node"), f("gpu-a")], home="bundle-17")
    assert r.nodes == ["gpu-a"] and r.aliases == {"bundle-17": "gpu-a"}
    r = resolve([f("node")], home="bundle-17")  # no input names a machine: the folder's name
    assert r.nodes == ["bundle-17"] and [x.node for x in r.facts] == ["bundle-17"]


def test_rank_follows_its_host():
    from clusterdx.facts.base import SourceRef
    from clusterdx.facts.model.env import EnvVar

    src = SourceRef(input="x", line=1, parser="t")
    facts = [EnvVar(node="gpu-a", rank=0, name="A", value="1", source=src),
             EnvVar(node="gpu-b", rank=1, name="A", value="1", source=src),
             EnvVar(node="node", rank=1, name="B", value="1", source=src),
             EnvVar(node="node", name="C", value="1", source=src)]
    assert [x.node for x in resolve(facts).facts] == ["gpu-a", "gpu-b", "gpu-b", "node"]


def test_doctests():
    import doctest

    assert doctest.testmod(nodes_mod).failed == 0
