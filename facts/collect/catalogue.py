"""The default probes of ``clusterdx collect``: read-only, quick, no root needed.

They bind the knowledge base's probes (``kb/probes/*.yaml``) that need no root and do not
disturb the workload to commands and files clusterdx can run without a shell; ``kb_probe``
names the KB probe each one serves. :func:`kb_coverage` checks the binding against the shipped
KB at run time: KB probes that cannot be collected by a plain snapshot say why
(:data:`NOT_SNAPSHOT`), and one that has no collector at all is reported in the manifest (and
fails a test), so a new KB probe cannot be forgotten here.

KB probes with a plain command that no entry binds are collected as they are
(:func:`derived_probes`).

The other probes collect what the KB's future rules will want from the same snapshot (GPU and
InfiniBand inventories, PCIe, kernel modules, THP), kept raw so an old bundle can be
re-diagnosed by a newer KB.

>>> names = [p.name for p in DEFAULT_PROBES]
>>> "lscpu" in names and "nvidia-smi-topo" in names and "proc-cmdline" in names
True
"""

from __future__ import annotations

import os
from pathlib import Path

from clusterdx.facts import lazyre
from clusterdx.facts.collect import view
from clusterdx.facts.collect.probe import Probe


CPU = "/sys/devices/system/cpu"

DEFAULT_PROBES: tuple[Probe, ...] = (
    # -- CPU, NUMA, kernel
    Probe("lscpu", argv=("lscpu",), format="lscpu", kb_probe="lscpu"),
    Probe("numactl-hardware", argv=("numactl", "--hardware"), format="numactl-hardware",
          kb_probe="numactl-hardware"),
    Probe("getconf-page-size", argv=("getconf", "PAGE_SIZE"), format="getconf-page-size",
          kb_probe="getconf-page-size"),
    Probe("sysctl-numa-balancing", argv=("sysctl", "kernel.numa_balancing"),
          files=("/proc/sys/kernel/numa_balancing",), style="sysctl", format="sysctl",
          kb_probe="sysctl-numa-balancing"),
    Probe("proc-cmdline", files=("/proc/cmdline",), style="cat", format="proc-cmdline",
          kb_probe="proc-cmdline", redact="text"),
    Probe("cpufreq-sysfs", files=(f"{CPU}/cpu*/cpufreq/*", f"{CPU}/cpufreq/boost", f"{CPU}/intel_pstate/no_turbo",
                                  f"{CPU}/intel_pstate/status"),
          format="cpu-sysfs", kb_probe="scaling-governor-sysfs"),
    Probe("cpuidle-sysfs", files=(f"{CPU}/cpuidle/current_*", f"{CPU}/cpu0/cpuidle/state*/*"),
          format="cpu-sysfs", kb_probe="cpuidle-sysfs"),
    Probe("cpupower-frequency-info", argv=("cpupower", "frequency-info"), format="cpupower-frequency-info",
          kb_probe="cpupower-frequency-info"),
    Probe("cpupower-idle-info", argv=("cpupower", "idle-info"), format="cpupower-idle-info",
          kb_probe="cpupower-idle-info"),
    Probe("transparent-hugepage", files=("/sys/kernel/mm/transparent_hugepage/enabled",
                                         "/sys/kernel/mm/transparent_hugepage/defrag")),
    Probe("proc-modules", files=("/proc/modules",), style="cat", format="proc-modules"),
    Probe("proc-net-bonding", files=("/proc/net/bonding/*",), style="cat", cmd="cat /proc/net/bonding/*",
          format="bonding"),
    Probe("dmesg", argv=("dmesg",), format="dmesg", redact="text"),
    # -- platform: VM, container
    Probe("systemd-detect-virt", argv=("systemd-detect-virt",), ok_codes=frozenset({0, 1}),
          format="virt-detect", kb_probe="systemd-detect-virt"),
    Probe("dmi-id", files=tuple(f"/sys/class/dmi/id/{k}" for k in
                                ("sys_vendor", "product_name", "bios_vendor", "board_vendor", "product_version")),
          format="virt-detect", kb_probe="systemd-detect-virt"),
    Probe("env", argv=("env",), format="env", kb_probe="env-host", redact="env", keep_env=True),
    # NCCL reads /etc/nccl.conf, then ~/.nccl.conf (or $NCCL_CONF_FILE); redacted like any text
    Probe("etc-nccl-conf", files=("/etc/nccl.conf",), style="cat", format="nccl-conf", kb_probe="nccl-conf-file",
          redact="text"),
    Probe("user-nccl-conf", files=(os.path.expanduser("~/.nccl.conf"),), style="cat", format="nccl-conf",
          kb_probe="nccl-conf-file", redact="text"),
    *((Probe("nccl-conf-file", files=(os.environ["NCCL_CONF_FILE"],), style="cat", format="nccl-conf",
             kb_probe="nccl-conf-file", redact="text"),) if os.environ.get("NCCL_CONF_FILE") else ()),
    # -- GPUs
    Probe("nvidia-smi-topo", argv=("nvidia-smi", "topo", "-m"), format="nvidia-smi-topo", kb_probe="nvidia-smi-topo"),
    Probe("nvidia-smi-q", argv=("nvidia-smi", "-q"), format="nvidia-smi-q", kb_probe="nvidia-smi-q"),
    Probe("nvidia-smi-q-xml", argv=("nvidia-smi", "-q", "-x"), format="nvidia-smi-q-xml", suffix=".xml",
          kb_probe="nvidia-smi-q-xml"),
    Probe("nvidia-smi-nvlink-status", argv=("nvidia-smi", "nvlink", "-s"), format="nvidia-smi-nvlink-status",
          kb_probe="nvidia-smi-nvlink-status"),
    Probe("nvidia-smi-nvlink-errors", argv=("nvidia-smi", "nvlink", "-e"), format="nvidia-smi-nvlink-errors",
          kb_probe="nvidia-smi-nvlink-errors"),
    Probe("nvidia-smi-query-gpu", argv=("nvidia-smi", "--query-gpu=index,pci.bus_id,fabric.state,fabric.status,"
                                        "pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,"
                                        "pcie.link.width.max,pstate", "--format=csv"),
          format="nvidia-smi-query-gpu", kb_probe="nvidia-smi-fabric-query"),
    # -- libraries and device files the job can see (ls exits 2 when one of them is missing)
    Probe("ls-device-nodes", argv=("ls", "-l", "/dev/infiniband", "/dev/shm"), ok_codes=frozenset({0, 1, 2}),
          format="ls", kb_probe="ls-device-nodes"),
    Probe("ldconfig-libraries", argv=("ldconfig", "-p"), format="ldconfig", kb_probe="ldconfig-libraries"),
    # -- InfiniBand / RoCE, PCIe
    Probe("ibstat", argv=("ibstat",), format="ibstat"),
    Probe("ibv-devinfo", argv=("ibv_devinfo", "-v"), format="ibv_devinfo"),
    Probe("ibdev2netdev", argv=("ibdev2netdev", "-v"), format="ibdev2netdev"),
    Probe("infiniband-ports", files=tuple(f"/sys/class/infiniband/*/ports/*/{k}"
                                          for k in ("state", "rate", "phys_state", "link_layer", "counters/*",
                                                    "hw_counters/*")),
          format="ib-sysfs", kb_probe="ib-sysfs-ports-counters"),
    # the KB's lspci-vvv probe asks for root (capabilities); without root the link status is still there
    Probe("lspci-vvv", argv=("lspci", "-vvv"), format="lspci-vvv", kb_probe="lspci-vvv", timeout_s=20.0),
    # -- what this process (and a container) sees
    Probe("dev-infiniband", internal=view.dev_infiniband, cmd="clusterdx: list /dev/infiniband"),
    Probe("dev-shm", internal=view.dev_shm, cmd="clusterdx: statvfs /dev/shm"),
    Probe("rlimits", internal=view.rlimits, cmd="clusterdx: getrlimit (ulimit -l, -n, -u, -s, -c)"),
    Probe("sys-visibility", internal=view.sys_visibility, cmd="clusterdx: which /sys and /proc folders are visible"),
)

#: KB probes (no root, not disturbing) that a snapshot cannot collect, and what to do instead
NOT_SNAPSHOT: dict[str, str] = {
    "env-container": "run `clusterdx collect` inside the job's container (srun --container-image, "
                     "kubectl exec) and diagnose both bundles",
    "nccl-debug-log": "needs a job run with NCCL_DEBUG=INFO; attach its log",
    "training-log": "needs the job's own log; attach it",
    "proc-environ": "collected with --pid or --process-name",
    "rank-affinity": "collected with --pid or --process-name",
    "numastat-pid": "collected with --pid or --process-name",
    "proc-status-rank": "collected with --pid or --process-name",
    "k8s-pod-spec": "needs the Kubernetes API and the pod's name: attach `kubectl get pod POD -o yaml`",
    "nsys-stats-osrt": "needs an Nsight Systems report of the job: attach its `nsys stats` output",
}


def kb_probe_dir() -> Path:
    from clusterdx import kb

    return Path(next(iter(kb.__path__))) / "probes"


def snapshot_kb_probes(folder: Path | None = None) -> dict[str, dict]:
    """KB probes a read-only snapshot should cover: ``needs_root: false``, ``disturbs_workload: false``."""
    import yaml

    out: dict[str, dict] = {}
    for path in sorted((folder or kb_probe_dir()).glob("*.yaml")):
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError):
            continue  # `clusterdx kb lint` reports a broken probe; collection goes on
        if not isinstance(data, dict) or "id" not in data:
            continue
        if data.get("needs_root") is False and data.get("disturbs_workload") is False:
            out[str(data["id"])] = data
    return out


_SHELL = lazyre.compile(r"[|;&<>$`\\'\"*?(){}\[\]]")


def derived_probes(bound: tuple[Probe, ...] = DEFAULT_PROBES, folder: Path | None = None) -> tuple[Probe, ...]:
    """Probes made from KB probes that no entry above binds and whose command is one plain
    command (no shell syntax, no ``<placeholder>``, no sudo) read by a known parser: a new KB probe
    such as ``nvidia-smi nvlink -e`` is collected without a change here."""
    from clusterdx.facts.formats import all_formats

    taken = {p.kb_probe for p in bound if p.kb_probe} | set(NOT_SNAPSHOT)
    names = {p.name for p in bound}
    out: list[Probe] = []
    for kb_id, data in snapshot_kb_probes(folder).items():
        command, fmt = str(data.get("command", "")), all_formats().get(str(data.get("format", "")))
        if kb_id in taken or kb_id in names or fmt is None or not command or _SHELL.search(command):
            continue
        argv = tuple(command.split())
        if argv[0] in ("sudo", "su", "doas") or not fmt.matches_command(command):
            continue
        out.append(Probe(kb_id, argv=argv, format=fmt.name, kb_probe=kb_id))
    return tuple(out)


def default_probes() -> tuple[Probe, ...]:
    """The catalogue above plus the probes derived from the shipped KB."""
    return DEFAULT_PROBES + derived_probes()


def kb_coverage(probes: tuple[Probe, ...] = DEFAULT_PROBES, folder: Path | None = None) -> list[dict]:
    """One entry per snapshot-able KB probe: which bundle probes serve it, or why none does."""
    bound: dict[str, list[str]] = {}
    for p in probes:
        if p.kb_probe:
            bound.setdefault(p.kb_probe, []).append(p.name)
    rows = []
    for kb_id in snapshot_kb_probes(folder):
        if kb_id in bound:
            rows.append({"id": kb_id, "collected_by": bound[kb_id]})
        elif kb_id in NOT_SNAPSHOT:
            rows.append({"id": kb_id, "collected_by": [], "reason": NOT_SNAPSHOT[kb_id]})
        else:
            rows.append({"id": kb_id, "collected_by": [], "reason": "no collector for this KB probe yet"})
    return rows
