"""CPU and memory binding a launch line asks for: ``numactl --cpunodebind/--membind/--physcpubind``
and ``taskset -c`` in job scripts and wrapper scripts, including per-rank binding tables
(``case $LOCAL_RANK in 0) numactl --cpunodebind=0 ... ;;``).

A variable exported with a different value in each arm of such a table (``case $LOCAL_RANK in
0) export NCCL_IB_HCA=mlx5_0:1 ;; 1) export NCCL_IB_HCA=mlx5_1:1 ;;``) is a ``launch.rank_env``:
the ranks of one job run with different settings.

Values are kept as written (``0``, ``0-13``, ``$CPUS``); the expanded lists are given only when
the value is a literal CPU or node list.
"""

from clusterdx.facts.base import Fact


class LaunchBinding(Fact):
    fact_type = "launch.binding"
    doc = "CPU / NUMA binding a launch line asks for (numactl --cpunodebind/--membind/--physcpubind, taskset -c), per rank where a table says so."
    #: numactl | taskset
    tool: str
    cpunodebind: str = ""
    membind: str = ""
    physcpubind: str = ""
    preferred: str = ""
    interleave: str = ""
    localalloc: bool = False
    #: CPUs bound to (physcpubind or taskset list / mask), when literal
    cpus: list[int] = []
    #: NUMA nodes the CPUs are bound to (cpunodebind), when literal
    cpu_nodes: list[int] = []
    #: NUMA nodes memory is bound to (membind), when literal
    mem_nodes: list[int] = []
    #: the binding-table arm this line is in (``LOCAL_RANK=3``, ``SLURM_LOCALID=0|1``), '' when none
    selector: str = ""
    #: taskset -p: the binding is applied to a running process (pid), not a new command
    pid: int | None = None
    #: the command line (continuations joined), redacted
    command: str = ""


class LaunchRankEnv(Fact):
    fact_type = "launch.rank_env"
    doc = "A variable a wrapper script exports with a different value in each arm of a per-rank table (case $LOCAL_RANK in ...)."
    name: str
    #: the variable the table switches on (``OMPI_COMM_WORLD_LOCAL_RANK``, ``local_rank``)
    selector: str
    #: the distinct values, in the order the arms give them (secret-looking ones redacted)
    values: list[str]
    #: how many arms set it
    arms: int
