"""Derived fabric and rank-load facts: IB/RoCE port rates against what the port should run at, a
per-node link health summary, the RoCE QoS configuration NCCL runs with, and thread load of rank
processes. Computed by :mod:`clusterdx.facts.derive.links`."""

from clusterdx.facts.base import Fact


class IbRateCheck(Fact):
    fact_type = "ib.rate_check"
    doc = ("One Active IB/RoCE port's rate against the rate it should run at: the card's maximum when the "
           "tool states it, else the rate most ports of the same kind on the node run at, else the "
           "reference system's NIC rate.")
    device: str
    port: int
    link_layer: str = ""
    rate_gbps: float
    expected_gbps: float
    #: rate_gbps / expected_gbps
    fraction: float
    below: bool
    #: 'card max', 'peer ports (N of M at R)' or 'reference <system>'
    basis: str


class IbLinkHealth(Fact):
    fact_type = "ib.link_health"
    doc = ("Once per node with IB/RoCE port listings: active ports, ports below their expected rate, ports "
           "with cable but no link (Polling, LinkErrorRecovery), and ports whose physical-layer error "
           "counters are non-zero (when counters were collected).")
    ports: int
    ports_active: int
    #: Active ports whose rate could be compared with an expected rate
    ports_checked: int = 0
    ports_below: int = 0
    below_ports: list[str] = []
    #: Down/Init ports whose physical state says a cable is there but the link does not train
    ports_no_link: int = 0
    no_link_ports: list[str] = []
    #: ports not Active (any physical state, Disabled included) on a NIC none of whose ports is up,
    #: while another NIC of the same card type and link layer on the node is up, on the link layer
    #: most of the node's up ports use (its fabric, not a side network): a rail that is down
    ports_dark_beside_peers: int = 0
    dark_beside_peers: list[str] = []
    #: ports whose counters were read (0: no counters collected)
    counter_ports: int = 0
    #: ports with any non-zero physical-layer error counter (symbol errors, link downed/recovery,
    #: receive errors, link integrity, buffer overrun)
    ports_with_errors: int = 0
    error_ports: list[str] = []


class NcclRoceConfig(Fact):
    fact_type = "nccl.roce_config"
    doc = ("RoCE QoS settings NCCL runs with, when NCCL uses RoCE and its configuration was seen (NCCL ENV "
           "log or a complete environment dump): traffic class, GID index, service level; '' = unset.")
    tc: str = ""
    gid_index: str = ""
    sl: str = ""
    roce_version: str = ""
    tc_set: bool = False
    gid_index_set: bool = False
    basis: str = ""


class ProcThreadLoad(Fact):
    fact_type = "proc.thread_load"
    doc = "Threads of one process against the CPUs it may run on (/proc/PID/status Threads and Cpus_allowed_list)."
    pid: int | None = None
    name: str = ""
    rank: int | None = None
    threads: int
    allowed_cpus: int
    #: threads / allowed_cpus
    ratio: float
