"""Process placement: CPU affinity, allowed NUMA nodes, per-node memory of training processes."""

from clusterdx.facts.base import Fact


class ProcStatus(Fact):
    fact_type = "proc.status"
    doc = "Selected fields of /proc/PID/status (None where the input did not show the key)."
    pid: int | None = None
    name: str = ""
    state: str = ""
    threads: int | None = None
    #: from Cpus_allowed_list (or the Cpus_allowed mask when only that is shown)
    cpus: list[int]
    #: from Mems_allowed_list
    mems: list[int]
    vm_rss_kb: int | None = None
    vm_lck_kb: int | None = None
    #: pinned pages, e.g. memory registered for RDMA
    vm_pin_kb: int | None = None
    hugetlb_kb: int | None = None
    #: srun --label task number when the listing is per task, else None
    rank: int | None = None


class ProcAffinity(Fact):
    fact_type = "proc.affinity"
    doc = "CPUs a process (or thread) may run on, from taskset or /proc/PID/status."
    pid: int | None = None
    cpus: list[int]
    #: 'taskset' or 'status'
    method: str
    #: global rank when the input says which rank the process is (srun label, RANK=, SLURM_PROCID=)
    rank: int | None = None
    #: rank on the node when the input says it (SLURM_LOCALID=, LOCAL_RANK=)
    local_rank: int | None = None


class NumaMemory(Fact):
    fact_type = "proc.numa_memory"
    doc = "Per-NUMA-node memory of one process (numastat -p), in MB."
    pid: int
    name: str = ""
    #: MB on each NUMA node, indexed by node number (nodes numastat did not list are 0.0)
    node_mb: list[float]
    total_mb: float
    #: node holding the most memory of this process
    dominant_node: int
    #: share of total_mb on dominant_node, 0..1 (0.0 when total_mb is 0)
    dominant_share: float
