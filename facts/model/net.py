"""Network fabric: InfiniBand / RoCE ports and devices, port counters, netdev mapping,
perftest and ucx_perftest results and Linux bonding.

Conventions shared by every IB parser (ibstat, ibstatus, ibv_devinfo, ibdev2netdev, sysfs):

* ``state`` is one of ``Down``, ``Initializing``, ``Armed``, ``Active``, ``ActiveDefer``
  (ibstat spelling; ``PORT_ACTIVE (4)`` and ``4: ACTIVE`` are mapped to it);
* ``phys_state`` is one of ``Sleep``, ``Polling``, ``Disabled``, ``PortConfigurationTraining``,
  ``LinkUp``, ``LinkErrorRecovery``, ``PhyTest``;
* GUIDs are ``0x`` + 16 lower-case hex digits (ibv_devinfo's ``a088:c203:...`` is rewritten);
* ``ca_type`` is ``MT<part id>`` (ibv_devinfo's ``vendor_part_id: 4129`` becomes ``MT4129``);
* rates are Gb/s for the whole port (lanes x per-lane speed).
"""

from clusterdx.facts.base import Fact


class IbPort(Fact):
    fact_type = "ib.port"
    doc = ("One InfiniBand/RoCE port: state, physical state, rate (Gb/s), link layer; "
           "degraded when an active port runs below the rate the card says it supports.")
    device: str
    port: int
    state: str = ""
    phys_state: str = ""
    #: negotiated rate in Gb/s; a Down port reports a placeholder (10 or 40)
    rate_gbps: float | None = None
    link_layer: str = ""
    lid: int | None = None
    sm_lid: int | None = None
    #: ``4X``, ``1X`` ... when the tool prints it (ibstatus, sysfs rate, ibv_devinfo -v)
    width: str = ""
    #: per-lane generation ``SDR`` ... ``NDR``, ``XDR`` when the tool prints it
    speed: str = ""
    fw_version: str = ""
    ca_type: str = ""
    node_guid: str = ""
    port_guid: str = ""
    #: network interface of the port (ibdev2netdev)
    netdev: str = ""
    pci_bus: str = ""
    active_mtu: int | None = None
    max_mtu: int | None = None
    #: highest rate the card supports, only when the tool states it (ibdev2netdev -v description)
    max_rate_gbps: float | None = None
    #: Active port whose rate is below max_rate_gbps; None when either is unknown
    degraded: bool | None = None


class IbDevice(Fact):
    fact_type = "ib.device"
    doc = "One RDMA device (HCA): firmware, CA type / board id, port count, GUIDs, PCI address."
    device: str
    fw_version: str = ""
    #: ``MT4129`` ...; model is the ConnectX/BlueField name when the part id is known
    ca_type: str = ""
    model: str = ""
    board_id: str = ""
    hw_version: str = ""
    ports: int | None = None
    node_guid: str = ""
    sys_image_guid: str = ""
    transport: str = ""
    pci_bus: str = ""
    #: ordering part number and marketing description (ibdev2netdev -v)
    part_number: str = ""
    description: str = ""


class IbSummary(Fact):
    fact_type = "ib.summary"
    doc = ("Once per IB state listing: device and port counts, active/down ports, link layers, "
           "distinct active rates and firmware versions, down and degraded ports ('mlx5_9/1').")
    tool: str
    devices: int
    ports: int
    ports_active: int
    ports_down: int
    link_layers: list[str] = []
    rates_gbps: list[float] = []
    fw_versions: list[str] = []
    down_ports: list[str] = []
    degraded_ports: list[str] = []


class IbCounters(Fact):
    fact_type = "ib.counters"
    doc = ("Port counters of one IB port (sysfs counters/hw_counters or perfquery); "
           "port_xmit/rcv_data are in 4-byte words as the IB spec defines them.")
    device: str
    port: int | None = None
    symbol_error: int | None = None
    link_error_recovery: int | None = None
    link_downed: int | None = None
    port_rcv_errors: int | None = None
    port_rcv_remote_physical_errors: int | None = None
    port_rcv_switch_relay_errors: int | None = None
    port_xmit_discards: int | None = None
    port_xmit_constraint_errors: int | None = None
    port_rcv_constraint_errors: int | None = None
    local_link_integrity_errors: int | None = None
    excessive_buffer_overrun_errors: int | None = None
    vl15_dropped: int | None = None
    port_xmit_wait: int | None = None
    port_xmit_data: int | None = None
    port_rcv_data: int | None = None
    port_xmit_packets: int | None = None
    port_rcv_packets: int | None = None
    # RoCE / mlx5 hw_counters (``rdma statistic``)
    out_of_sequence: int | None = None
    packet_seq_err: int | None = None
    local_ack_timeout_err: int | None = None
    rnr_nak_retry_err: int | None = None
    implied_nak_seq_err: int | None = None
    np_cnp_sent: int | None = None
    rp_cnp_handled: int | None = None
    np_ecn_marked_roce_packets: int | None = None
    #: names of the error counters above that are non-zero
    errors_nonzero: list[str] = []


class NetdevMap(Fact):
    fact_type = "net.netdev_map"
    doc = "RDMA device port -> network interface (ibdev2netdev), with netdev and port state."
    device: str
    port: int
    netdev: str
    #: netdev state ``Up`` / ``Down``
    state: str = ""
    #: port state from ``-v`` (``Active``, ``Down``, ``Initializing``)
    port_state: str = ""
    pci_bus: str = ""
    ca_type: str = ""
    part_number: str = ""
    description: str = ""
    fw_version: str = ""


class PerftestResult(Fact):
    fact_type = "perftest.result"
    doc = ("One perftest run (ib_write_bw, ib_read_bw, ib_send_bw, *_lat): the row at the largest "
           "message size, peak average bandwidth over rows (Gb/s), QPs, CUDA memory, errors.")
    test: str
    device: str = ""
    port: int | None = None
    qps: int | None = None
    msg_size_bytes: int | None = None
    iterations: int | None = None
    bw_peak_gbps: float | None = None
    bw_avg_gbps: float | None = None
    msg_rate_mpps: float | None = None
    #: highest average bandwidth over all rows (``-a`` sweeps)
    bw_avg_max_gbps: float | None = None
    lat_min_usec: float | None = None
    lat_max_usec: float | None = None
    lat_typical_usec: float | None = None
    lat_avg_usec: float | None = None
    lat_p99_usec: float | None = None
    rows: int = 0
    #: unit of the bandwidth columns as printed (``Gb/sec`` or ``MB/sec``; facts are Gb/s)
    units: str = ""
    use_cuda: bool = False
    use_cuda_dmabuf: bool = False
    cuda_device: int | None = None
    link_type: str = ""
    transport: str = ""
    connection: str = ""
    mtu: int | None = None
    gid_index: int | None = None
    bidirectional: bool = False
    #: ``server`` when the output shows it waited for a client to connect, else ''
    role: str = ""
    #: first error message (connection, QP, memory or CUDA failure); '' when none
    error: str = ""
    cpu_freq_warning: bool = False


class UcxPerftest(Fact):
    fact_type = "ucx.perftest"
    doc = ("One ucx_perftest command (client or server): test, memory type, message size, the core it is "
           "pinned to (-c), whether it connects to its own host, and the bandwidth of the last row (MB/s).")
    #: 'client' (names the host to connect to) or 'server'
    role: str = ""
    test: str = ""
    mem_type: str = ""
    size_bytes: int | None = None
    #: first core of ``-c``; None when the process is not pinned
    cpu: int | None = None
    #: the host name the client connects to as written ('`hostname`', 'node2'); '' when not shown
    server: str = ""
    #: the client connects to its own host (`hostname`, localhost, 127.0.0.1): server on the same machine
    loopback: bool = False
    #: UCX_TLS given on the command line, '' when not
    tls: str = ""
    bw_avg_mbps: float | None = None


class NetBond(Fact):
    fact_type = "net.bond"
    doc = ("One Linux bonding interface (/proc/net/bonding): mode, slaves, how many are up, "
           "link speeds (Mb/s) of the slaves that report one.")
    bond: str
    #: canonical mode: balance-rr, active-backup, balance-xor, broadcast, 802.3ad, balance-tlb, balance-alb
    mode: str = ""
    mode_text: str = ""
    mii_status: str = ""
    xmit_hash_policy: str = ""
    lacp_rate: str = ""
    active_slave: str = ""
    slaves: list[str] = []
    active_slaves: int = 0
    down_slaves: list[str] = []
    speed_mbps: list[int] = []
    link_failures: int = 0
    active_aggregator_id: int | None = None
    #: 802.3ad slaves that are up but not in the active aggregator (carry no traffic)
    slaves_outside_aggregator: list[str] = []


class NetBondSlave(Fact):
    fact_type = "net.bond_slave"
    doc = "One slave of a bonding interface: MII status, speed (Mb/s), duplex, link failures."
    bond: str
    slave: str
    mii_status: str = ""
    speed_mbps: int | None = None
    duplex: str = ""
    link_failure_count: int | None = None
    aggregator_id: int | None = None
