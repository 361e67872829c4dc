"""Remediation commands computed from the facts: values the rules supplied, placeholders where
none did, alternatives as data, the command matching the node's driver, root marked."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from clusterdx.engine.diagnose import collect_paths, diagnose
from clusterdx.engine.remedy import ENGINE_VALUES, names_in, render_step
from clusterdx.engine.schema import Step
from clusterdx.explainers.text import render

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "kb" / "cases"


def _step(report, remediation: str, needle: str):
    for h in report.hypotheses:
        for r in h.remediation:
            if r.id == remediation:
                return next(st for st in r.steps if needle in st.command)
    raise AssertionError(f"{remediation} not in the report")


@pytest.fixture(scope="module")
def hca_report(kb):
    return diagnose(collect_paths([CASES / "nc-hca-subset-4of8" / "input"]), kb=kb)


def test_nccl_ib_hca_lists_the_rail_nics_of_this_node(hca_report):
    log = (CASES / "nc-hca-subset-4of8" / "input" / "nccl_rank0.log").read_text()
    using = next(ln for ln in log.splitlines() if "NET/IB : Using" in ln)
    used = set(re.findall(r"\](mlx5_\d+):", using))
    ev = next(e for h in hca_report.hypotheses for e in h.evidence if e.rule == "nccl-uses-fewer-nics-than-node")
    unused = set(ev.data["unused"])
    step = _step(hca_report, "widen-nccl-ib-hca", "NCCL_IB_HCA")
    m = re.fullmatch(r"export NCCL_IB_HCA==(\S+)", step.command)
    assert m, step.command
    nics = m.group(1).split(",")
    assert set(nics) == used | unused
    assert len(nics) == 8 and "mlx5_1" not in nics and "mlx5_7" not in nics
    assert nics == sorted(nics, key=lambda n: int(n.split("_")[1]))
    assert step.values == {"rail_nics": ",".join(nics)}
    # the exclusion form is an alternative the reader sees, not a YAML comment that vanished
    assert any(a.command.startswith("export NCCL_IB_HCA=^") for a in step.alternatives)
    text = render(hca_report, width=200, verbose=True)
    assert step.command in text and "NCCL_IB_HCA=^" in text


def test_a_value_no_evidence_supplied_stays_a_placeholder():
    step = Step(text="t", command="export NCCL_IB_HCA=={rail_nics}", values={"rail_nics": "<rail NICs>"})
    out = render_step(step, {})
    assert out.command == "export NCCL_IB_HCA==<rail NICs>" and out.values == {}


def test_only_declared_names_are_substituted():
    cmd = "docker inspect --format '{{json .HostConfig}}' {ctr}; awk '{print $1}' {cpus}"
    step = Step(text="t", command=cmd, values={"cpus": "<cpus>"})
    out = render_step(step, {"cpus": [0, 1, 2], "ctr": "evil"})
    assert out.command == "docker inspect --format '{{json .HostConfig}}' {ctr}; awk '{print $1}' 0,1,2"


def test_a_list_value_takes_the_form_its_command_names():
    step = Step(text="t", command="unset {names|}; docker run {names|-e} img; srun --container-env={names} x",
                values={"names": "<variables>"})
    out = render_step(step, {"names": ["NCCL_IB_HCA", "NCCL_IB_TC"]})
    assert out.command == ("unset NCCL_IB_HCA NCCL_IB_TC; docker run -e NCCL_IB_HCA -e NCCL_IB_TC img; "
                           "srun --container-env=NCCL_IB_HCA,NCCL_IB_TC x")
    one = render_step(step, {"names": "NCCL_IB_HCA"})
    assert one.command == "unset NCCL_IB_HCA; docker run -e NCCL_IB_HCA img; srun --container-env=NCCL_IB_HCA x"
    # without a value every form shows the declared placeholder, and an undeclared name is left alone
    assert render_step(step, {}).command.count("<variables>") == 3
    odd = Step(text="t", command="echo {other|-e} {names|-e}", values={"names": "<v>"})
    assert render_step(odd, {"names": ["A"], "other": ["B"]}).command == "echo {other|-e} -e A"
    assert names_in("a {x|} b {y|-x} c {z} d {{json .Config}}") == {"x", "y", "z"}


def _ev(data, *nodes):
    from types import SimpleNamespace as NS
    return NS(data=data, facts=[NS(node=n) for n in nodes])


def test_node_comes_from_the_one_host_the_evidence_names():
    from clusterdx.engine.remedy import evidence_values

    assert evidence_values([_ev({"gpu": 0}, "gpu-017", "gpu-017"), _ev({}, "node")])["node"] == "gpu-017"
    # two hosts: which one to drain is not for us to guess; unlabelled input names none
    assert "node" not in evidence_values([_ev({}, "gpu-017"), _ev({}, "gpu-018")])
    assert "node" not in evidence_values([_ev({}, "node", "unknown", "")])
    # a rule that names the node itself (the one slow host among pairs) wins
    assert evidence_values([_ev({"node": "gpu-3"}, "gpu-1")])["node"] == "gpu-3"


def test_cpu_ranges_inverts_cpu_list():
    import doctest

    from clusterdx.facts.parsers import _util

    assert doctest.testmod(_util).failed == 0
    for text in ("0-55,112-167", "0,2,4-7", "3", ""):
        assert _util.cpu_ranges(_util.cpu_list(text)) == text


def _topo(node, gpu, cpus, numa):
    from clusterdx.facts.base import SourceRef
    from clusterdx.facts.model.topo import TopoGpu

    return TopoGpu(node=node, source=SourceRef(input="topo.txt", line=gpu + 2), gpu=gpu, cpus=cpus, numa_node=numa)


def test_gpu_cpu_tables_come_only_from_one_complete_topology():
    from clusterdx.engine.remedy import node_command_values

    full = [_topo("n1", g, list(range(0, 4)) if g < 2 else list(range(4, 8)), g // 2) for g in range(4)]
    assert node_command_values(full) == {"gpu_cpus": "0-3 0-3 4-7 4-7", "gpu_numa": "0 0 1 1"}
    # a topo -m excerpt without GPU1: indexing by local rank would bind GPU2's rank to GPU3's CPUs
    assert node_command_values([f for f in full if f.gpu != 1]) == {}
    # two machines' tables: which one the command is for is not known
    assert node_command_values(full + [_topo("n2", 0, [0], 0)]) == {}
    # NUMA Affinity N/A on one GPU: the CPU table stands, the memory-node table does not
    partial = full[:3] + [_topo("n1", 3, [4, 5], None)]
    assert node_command_values(partial) == {"gpu_cpus": "0-3 0-3 4-7 4-5"}


def test_roce_interfaces_join_the_link_layer_of_one_tool_and_the_names_of_another():
    from clusterdx.engine.remedy import node_command_values
    from clusterdx.facts.base import SourceRef
    from clusterdx.facts.model.net import IbPort, NetdevMap

    src = SourceRef(input="x", line=1)
    ports = [IbPort(node="n5", source=src, device=f"mlx5_{i}", port=1, link_layer="Ethernet") for i in (0, 1, 10)]
    names = [NetdevMap(node="n5", source=src, device=f"mlx5_{i}", port=1, netdev=f"ens{i + 1}f0np0") for i in (0, 1, 10)]
    assert node_command_values(ports + names)["roce_netdevs"] == ["ens1f0np0", "ens2f0np0", "ens11f0np0"]
    # one RoCE device without a name: a loop over the others would skip it silently
    assert "roce_netdevs" not in node_command_values(ports + names[:2])
    # InfiniBand ports have no RoCE interfaces to configure
    ib = [p.model_copy(update={"link_layer": "InfiniBand"}) for p in ports]
    assert "roce_netdevs" not in node_command_values(ib + names)
    # a second host's ports: which node the command is for is not known
    other = IbPort(node="n6", source=src, device="mlx5_0", port=1, link_layer="Ethernet")
    assert "roce_netdevs" not in node_command_values(ports + names + [other])


def test_default_power_limit_only_when_the_node_has_one():
    from clusterdx.engine.remedy import node_command_values
    from clusterdx.facts.base import SourceRef
    from clusterdx.facts.model.gpu import GpuDevice

    src = SourceRef(input="q.xml", line=1)
    gpus = [GpuDevice(node="n1", source=src, gpu=i, default_power_limit_w=700.0, power_limit_w=500.0) for i in range(2)]
    assert node_command_values(gpus)["default_power_w"] == "700"
    mixed = gpus + [GpuDevice(node="n1", source=src, gpu=2, default_power_limit_w=400.0)]
    assert "default_power_w" not in node_command_values(mixed)
    assert "default_power_w" not in node_command_values([g.model_copy(update={"default_power_limit_w": None}) for g in gpus])


def test_cores_per_rank_from_one_nodes_lscpu_and_gpus():
    from clusterdx.engine.remedy import node_command_values
    from clusterdx.facts.base import SourceRef
    from clusterdx.facts.model.cpu import CpuInfo
    from clusterdx.facts.model.gpu import GpuDevice

    src = SourceRef(input="x", line=1)
    cpu = CpuInfo(node="n1", source=src, arch="x86_64", sockets=2, cores_per_socket=56, threads_per_core=2)
    gpus = [GpuDevice(node="n1", source=src, gpu=i) for i in range(8)]
    out = node_command_values([cpu, *gpus])
    assert (out["cores_per_rank"], out["omp_threads"]) == ("14", "12")
    # a 4-core VM with 8 GPUs has no whole core per rank to budget
    assert "cores_per_rank" not in node_command_values([cpu.model_copy(update={"sockets": 1, "cores_per_socket": 4}), *gpus])
    # lscpu of one host, GPUs of another: not one node's budget
    assert "cores_per_rank" not in node_command_values([cpu.model_copy(update={"node": "n2"}), *gpus])


def test_rule_data_keeps_every_match():
    from types import SimpleNamespace as NS

    from clusterdx.engine.diagnose import _rule_data

    refs = {"name": "m.name", "nics": "u.nics", "gpu": "m.gpu"}
    same = [{"m": NS(name="NCCL_IB_HCA", gpu=None)}, {"m": NS(name="NCCL_IB_HCA", gpu=None)}]
    assert _rule_data(refs, same) == {"name": "NCCL_IB_HCA", "gpu": None}
    both = [{"m": NS(name="NCCL_IB_HCA", gpu=1), "u": NS(nics=["mlx5_0", "mlx5_3"])},
            {"m": NS(name="NCCL_IB_TC", gpu=None), "u": NS(nics=["mlx5_3", "mlx5_4"])}]
    assert _rule_data(refs, both) == {"name": ["NCCL_IB_HCA", "NCCL_IB_TC"], "gpu": 1,
                                      "nics": ["mlx5_0", "mlx5_3", "mlx5_4"]}


def test_turbo_command_matches_the_driver_seen(kb):
    report = diagnose(collect_paths([CASES / "cp-governor-powersave-sysfs" / "input"]), kb=kb)
    step = _step(report, "set-cpu-governor-performance", "turbo")
    # the node runs intel_pstate: its knob, and no write to cpufreq/boost, which it does not have
    assert step.command == "echo 0 | tee /sys/devices/system/cpu/intel_pstate/no_turbo"
    assert step.needs_root
    # without the evidence the command tests for the knob instead of writing both
    plain = next(st for st in kb.remediations["set-cpu-governor-performance"].steps if "turbo" in st.command)
    fallback = render_step(plain, {})
    assert fallback.command.startswith("if [ -e /sys/devices/system/cpu/intel_pstate/no_turbo ]")


def test_root_commands_are_marked(kb):
    root_words = re.compile(r"sysctl -w|modprobe|setpci|mlxconfig|mlxfwmanager|mlxlink|ipmitool|virsh |turbostat|"
                            r"GRUB_CMDLINE|cpupower (-c \S+ )?idle-set|update-grub|grubby")
    for rem in kb.remediations.values():
        for st in rem.steps:
            if st.command and root_words.search(st.command):
                assert st.needs_root, f"{rem.id}: {st.command}"
    report = diagnose(collect_paths([CASES / "cp-stacked-cstates-numa-balancing" / "input"]), kb=kb)
    assert "sysctl -w kernel.numa_balancing=0 (as root)" in render(report, width=200)


def test_no_kb_command_loses_text_to_a_yaml_comment():
    """A plain YAML scalar ends at ' #': the text after it was never part of the command."""
    plain = re.compile(r"^\s*(?:-\s+)?command:\s+[^\"'|>\s].*\s#")
    bad = []
    for path in sorted((ROOT / "kb").rglob("*.yaml")):
        if "cases" in path.parts:
            continue
        for no, line in enumerate(path.read_text().splitlines(), 1):
            if plain.match(line):
                bad.append(f"{path.relative_to(ROOT)}:{no}")
    assert not bad


def test_every_declared_value_is_supplied_by_a_rule(kb):
    for rem in kb.remediations.values():
        supplied = {k for r in kb.rules.values() for e in r.evidence
                    if e.effect == "supports" and e.node in rem.addresses for k in r.data} | ENGINE_VALUES
        for st in rem.steps:
            for name in st.values:
                assert name in supplied, f"{rem.id}: {name}"
                assert name in names_in(st.command) or any(name in names_in(a.command) for a in st.alternatives)
    data = yaml.safe_load((ROOT / "kb" / "remediations" / "widen-nccl-ib-hca.yaml").read_text())
    assert data["steps"][0]["values"]


def _library_fixes() -> dict[str, list[tuple[str, object]]]:
    """remediation id -> [(case, listed command entry)] over the library cases' expect.yaml."""
    out: dict[str, list[tuple[str, object]]] = {}
    for d in sorted(CASES.iterdir()):
        spec_path = d / "expect.yaml"
        if not spec_path.exists():
            continue
        spec = yaml.safe_load(spec_path.read_text()) or {}
        if spec.get("corpus") == "public":
            continue
        for rem, entries in ((spec.get("expect") or {}).get("fixes") or {}).items():
            out.setdefault(rem, []).extend((d.name, e) for e in entries or [])
    return out


def test_every_remediation_has_a_case_that_checks_its_commands(kb):
    fixes = _library_fixes()
    missing = sorted(r for r in kb.remediations if not fixes.get(r))
    assert not missing, f"no library case's expect.yaml lists the commands of {missing}"
    assert not sorted(set(fixes) - set(kb.remediations)), "fixes name a remediation the KB lacks"
    # a command that needs root is listed with its mark, so the case checks the mark too
    for rem, entries in fixes.items():
        root_cmds = {st.command for st in kb.remediations[rem].steps if st.needs_root and not st.variants}
        for _case, e in entries:
            cmd = e["command"] if isinstance(e, dict) else e
            if cmd in root_cmds:
                assert isinstance(e, dict) and e.get("needs_root"), f"{rem}: {cmd}"


def test_the_case_checks_the_value_computed_for_its_node():
    """Where a remediation takes values from the facts, its case lists the filled command, never the placeholder."""
    entries = [e for _c, e in _library_fixes()["widen-nccl-ib-hca"]]
    assert "export NCCL_IB_HCA==mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11" in entries
    assert not any("<rail NICs>" in str(e) for e in entries)


def test_judge_fixes_fails_a_wrong_command_a_wrong_root_mark_and_a_missing_fix():
    from types import SimpleNamespace as NS

    from clusterdx.engine.cases import judge_fixes

    step = NS(command="sysctl -w kernel.numa_balancing=0", needs_root=True,
              alternatives=[NS(command="echo 0 > /proc/sys/kernel/numa_balancing", needs_root=True, alternatives=[])])
    report = NS(hypotheses=[NS(remediation=[NS(id="disable-numa-balancing", steps=[step])])])
    ok = {"disable-numa-balancing": [{"command": "sysctl -w kernel.numa_balancing=0", "needs_root": True},
                                     "echo 0 > /proc/sys/kernel/numa_balancing"]}
    assert judge_fixes(ok, report) == []
    assert judge_fixes({"disable-numa-balancing": ["sysctl -w kernel.numa_balancing=1"]}, report)
    assert judge_fixes({"disable-numa-balancing": [{"command": step.command, "needs_root": False}]}, report)
    assert judge_fixes({"widen-nccl-ib-hca": ["export NCCL_IB_HCA==mlx5_0"]}, report)


def test_no_kb_command_carries_its_alternative_as_a_shell_comment(kb):
    """'cmd   # or other' hides the alternative from the reader and from a copy-paste; it is data."""
    bad = [f"{r.id}: {c}" for r in kb.remediations.values() for st in r.steps
           for c in [st.command, *(a.command for a in st.alternatives)] if re.search(r"\s#\s", c)]
    assert not bad
