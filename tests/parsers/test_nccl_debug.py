import doctest
import time

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.formats import all_formats
from clusterdx.facts.parsers import nccl_debug
from tests.parsers.helpers import FORMATS, of_type, parse_fixture, parse_text

FMT = "nccl-debug"


def one(ctx, fact_type, **match):
    found = [f for f in of_type(ctx, fact_type) if all(getattr(f, k) == v for k, v in match.items())]
    assert len(found) == 1, (fact_type, match, found)
    return found[0]


def test_doctests():
    assert doctest.testmod(nccl_debug).failed == 0


def test_info_log_ib_gdr_nvls():
    ctx = parse_fixture(FMT, "nccl-debug-info.log")
    assert ctx.warnings == []
    versions = of_type(ctx, "nccl.version")
    assert {(v.node, v.version, v.version_num, v.cuda) for v in versions} == {
        ("gpu-h100-017", "2.23.4", 22304, "12.6"), ("gpu-h100-018", "2.23.4", 22304, "12.6")}
    env = one(ctx, "nccl.env", name="NCCL_IB_HCA")
    assert env.value == "=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11"
    assert env.source.line == 11 and env.rank == 0 and env.pid == 481203
    assert {f.node for f in of_type(ctx, "nccl.env") if f.name == "NCCL_SOCKET_IFNAME"} == {
        "gpu-h100-017", "gpu-h100-018"}
    assert one(ctx, "nccl.env", name="NCCL_TOPO_FILE").value == "/etc/nccl/topo/hgx-h100-8rail.xml"

    net = one(ctx, "nccl.net")
    assert (net.net, net.transport, net.selected, net.device_count) == ("IB", "IB", True, 8)
    assert net.devices[5] == "mlx5_9:1" and not net.roce and net.relaxed_ordering
    assert net.oob_if == "ens10f0np0" and net.source.line == 12

    ib = one(ctx, "nccl.transport_summary", node="gpu-h100-017", transport="NET/IB")
    assert (ib.connections, ib.gdr_connections, ib.nics, ib.processes) == (5, 5, ["0", "7"], 2)
    assert ib.modes == ["GDRDMA", "Shared"]
    assert (ib.source.line, ib.source.end_line) == (57, 66)
    pxn = one(ctx, "nccl.transport_summary", node="gpu-h100-018")
    assert (pxn.transport, pxn.pxn_connections, pxn.nics) == ("NET/IB", 1, ["7"])
    p2p = one(ctx, "nccl.transport_summary", transport="P2P/CUMEM")
    assert (p2p.connections, p2p.gdr_connections, p2p.modes) == (3, 0, ["read"])

    assert one(ctx, "nccl.nvls").available is True
    ch = one(ctx, "nccl.channels")
    assert (ch.coll, ch.collnet, ch.nvls, ch.p2p, ch.p2p_per_peer) == (32, 32, 16, 32, 32)
    assert one(ctx, "nccl.ring_connected").pxn is None
    aff = one(ctx, "nccl.affinity")
    assert aff.gpu == 0 and len(aff.cpus) == 112
    assert aff.cpus[55] == 55 and aff.cpus[56] == 112 and aff.cpus[-1] == 167
    topo = one(ctx, "nccl.topo_file")
    assert topo.loaded and topo.path == "/etc/nccl/topo/hgx-h100-8rail.xml" and topo.error == ""
    sysbw = one(ctx, "nccl.graph_system")
    assert (sysbw.max_bw, sysbw.total_bw) == (48.0, 370.8)
    assert len(of_type(ctx, "nccl.graph")) == 3
    assert len([f for f in of_type(ctx, "nccl.gdr_hca") if f.enabled]) == 8
    gdr = one(ctx, "nccl.gdr_gpu")
    assert (gdr.gpu_bus, gdr.hca_index, gdr.enabled, gdr.distance, gdr.max_distance, gdr.read) == (
        "18000", 0, True, 3, 4, 1)
    comm = one(ctx, "nccl.comm")
    assert (comm.nranks, comm.nnodes, comm.local_ranks, comm.mnnvl) == (16, 2, 8, False)
    # two ranks on two hosts of one 16-rank communicator: one counted summary, the first's identity
    done = one(ctx, "nccl.init_complete")
    assert (done.node, done.rank, done.comm_rank, done.nranks, done.bus_id) == ("gpu-h100-017", 0, 0, 16, "18000")
    assert (done.count, done.started, done.nodes, done.comms) == (2, 2, 2, 1)
    assert (done.source.line, done.source.end_line) == (72, 74)
    # the slower rank (2.31 s) carries the count; the other stays a fact of its own
    timing = one(ctx, "nccl.init_timings", rank=0)
    assert (timing.total, timing.connections, timing.topo) == (2.31, 0.84, 0.66)
    assert (timing.count, timing.median_total, timing.min_total) == (2, 2.305, 2.3)
    assert (timing.source.line, timing.first_line) == (73, 73)
    other = one(ctx, "nccl.init_timings", rank=15)
    assert (other.total, other.count, other.median_total, other.source.line) == (2.3, 1, None, 75)
    plugins = {(p.kind, p.loaded) for p in of_type(ctx, "nccl.plugin")}
    assert plugins == {("net", False), ("profiler", False), ("tuner", False)}
    assert one(ctx, "nccl.cuda_driver", node="gpu-h100-017").version == "12.6"


def test_socket_fallback_planted_finding():
    ctx = parse_fixture(FMT, "nccl-debug-socket-fallback.log")
    reasons = {(f.node, f.reason) for f in of_type(ctx, "nccl.ib_unavailable")}
    assert reasons == {("train-vm-a3", "libibverbs_missing"), ("train-vm-a4", "libibverbs_missing")}
    nets = of_type(ctx, "nccl.net")
    assert {(n.node, n.net, n.selected, tuple(n.devices)) for n in nets} == {
        ("train-vm-a3", "Socket", True, ("eth0", "eth1")), ("train-vm-a4", "Socket", True, ("eth0", "eth1"))}
    sock = one(ctx, "nccl.transport_summary", transport="NET/Socket")
    assert (sock.connections, sock.gdr_connections, sock.nics) == (6, 0, ["0", "1"])
    shm = one(ctx, "nccl.transport_summary", transport="SHM")
    assert shm.connections == 2
    off = one(ctx, "nccl.p2p_unavailable")
    assert (off.node, off.pairs, off.bus_pairs) == ("train-vm-a3", 2, ["4000-5000", "4000-6000"])
    # the bare version line belongs to the process that printed the line before it
    v = one(ctx, "nccl.version")
    assert (v.version, v.version_num, v.node, v.pid, v.rank) == ("2.17.1", 21701, "train-vm-a3", 8841, 0)
    w = one(ctx, "nccl.warn")
    assert (w.node, w.rank, w.category, w.result, w.code_location) == (
        "train-vm-a4", 6, "net", 6, "misc/socket.cc:49")
    assert w.message.startswith("socketProgress: Connection closed")
    statuses = {(p.name, p.status) for p in of_type(ctx, "nccl.plugin")}
    assert statuses == {("libnccl-net.so", "not_found"), ("", "not_found")}
    assert one(ctx, "nccl.affinity").cpus == list(range(12))
    assert {f.enabled for f in of_type(ctx, "nccl.gdr_hca")} == {False}


def test_warn_variants():
    ctx = parse_fixture(FMT, "nccl-debug-warn-variants.log")
    warns = of_type(ctx, "nccl.warn")
    assert len(warns) == 5
    old, new, port, sock, qp = warns
    assert (old.ib_wc_status, old.result, old.node, old.cuda_dev) == (12, 6, "rdma-node-11", 3)
    assert (new.ib_wc_status, new.hca, new.code_location) == (12, "mlx5_6", "transport/net_ib.cc:2121")
    assert (port.hca, port.timestamp, port.category) == ("mlx5_10", "2025-07-14 02:11:47", "net")
    assert sock.category == "net" and sock.hca == ""
    assert qp.function == "wrap_ibv_modify_qp" and qp.hca == "mlx5_1"
    assert "NCCL_CROSS_NIC=0" in qp.hint
    assert one(ctx, "nccl.version").version == "2.18.5"


@pytest.mark.parametrize("provider, transport", [("tcp", "Socket"), ("sockets", "Socket"), ("efa", ""), ("verbs;ofi_rxm", "")])
def test_ofi_provider_on_tcp_is_a_socket_transport(provider, transport):
    # aws-ofi-nccl loaded but on libfabric's tcp provider: the traffic runs on the host's TCP stack
    ctx = parse_text(FMT, "h1:10:20 [0] NCCL INFO NET/OFI Initializing aws-ofi-nccl 1.11.0-aws\n"
                          f"h1:10:20 [0] NCCL INFO NET/OFI Selected Provider is {provider} (found 2 nics)\n"
                          "h1:10:20 [0] NCCL INFO Using network AWS Libfabric\n")
    net = one(ctx, "nccl.net")
    assert (net.net, net.transport, net.device_count) == ("AWS Libfabric", transport, 2)


def test_plugin_variants():
    ctx = parse_fixture(FMT, "nccl-debug-plugin-variants.log")
    loaded = {(p.node, p.kind, p.name) for p in of_type(ctx, "nccl.plugin") if p.loaded}
    assert loaded == {("dgx-b07", "net", "NCCL RDMA Plugin v6"), ("dgx-b07", "coll", "SHARP"),
                      ("ip-10-1-44-207", "net", "Libfabric")}
    ibext = one(ctx, "nccl.net", net="IBext")
    assert ibext.transport == "IB" and ibext.sharp and ibext.device_count == 8
    efa = one(ctx, "nccl.net", net="Libfabric")
    assert (efa.node, efa.device_count, efa.devices) == ("ip-10-1-44-207", 32, [])
    assert one(ctx, "nccl.net", node="ip-10-1-44-208").net == "Socket"
    assert one(ctx, "nccl.ib_unavailable").reason == "no_device"
    topo_env = one(ctx, "nccl.env", name="NCCL_TOPO_FILE")
    assert (topo_env.value, topo_env.origin) == ("/proc/self/fd/57", "plugin")
    ib = one(ctx, "nccl.transport_summary", node="dgx-b07")
    assert ib.transport == "NET/IB" and ib.net_names == ["IBext", "IBext_v8"] and ib.connections == 3
    assert one(ctx, "nccl.transport_summary", node="ip-10-1-44-207").transport == "NET/Libfabric"


MESSY = (
    "$ srun --label python train.py\r\n"
    " 0: node-a:11:11 [0] NCCL INFO NCCL_IB_QPS_PER_CONNECTION set by environment to 4.\r\n"
    "12: node-b:22:22 [4] NCCL INFO NCCL_ALGO set by environment to Ring\r\n"
    "[1,3]<stdout>:node-c:33:34 [3] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE; OOB eth0:10.0.0.3<0>\r\n"
    "[1,3]<stdout>:node-c:33:34 [3] NCCL INFO Using network IB\r\n"
    "WARNING: something unrelated\r\n"
    "node-a:11:11\t[0] NCCL INFO ncclTopoGetCpuAffinity: Affinity for GPU 0 is empty, ignoring. "
    "(GPU affinity = 0-55,112-167 ; CPU affinity = 56-111).\r\n"
    "node-a:11:12 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read"
    "node-b:22:23 [4] NCCL INFO Channel 01/0 : 4[4] -> 5[5] via P2P/IPC\r\n"
    "node-a:11:11 [0] NCCL INFO comm 0x1 rank 3 nranks 64 cudaDev 0 busId 18000 - Init COMPLETE\r\n"
    "node-a:11:11 [0] NCCL INFO NVLS multicast support is not available on dev 0\r\n"
    "node-a:11:11 [0] NCCL INFO MNNVL busId 0x18000 fabric UUID 1a2b.3c4d cliqueId 0x7 state 3 healthMask 0x0\r\n"
    "node-a:11:11 [0] NCCL INFO Connected all rings, use ring PXN 1 GDR 0\r\n"
    "node-a:11:11 [0] NCCL INFO Connected all rings, use ring PXN 1 GDR 0\r\n"
    "node-a:11:11 [0] NCCL INFO NET/IB: Data Direct DMA Interface is detected for device mlx5_4\r\n"
    "node-a:11:11 [0] graph/xml.cc:88 NCCL WARN Could not open XML topology file /nope.xml : No such file or directory\r\n"
    "node-a:11:1"
)


def test_realistic_mess():
    ctx = parse_text(FMT, MESSY)
    qps = one(ctx, "nccl.env", name="NCCL_IB_QPS_PER_CONNECTION")
    assert (qps.value, qps.node, qps.rank, qps.source.line) == ("4", "node-a", 3, 2)
    assert one(ctx, "nccl.env", name="NCCL_ALGO").node == "node-b"
    roce = one(ctx, "nccl.net")
    assert (roce.node, roce.roce, roce.devices, roce.relaxed_ordering) == (
        "node-c", True, ["mlx5_0:1", "mlx5_1:1"], False)
    aff = one(ctx, "nccl.affinity")
    assert aff.empty and aff.cpus == [] and aff.gpu_affinity == "0-55,112-167" and aff.cpu_affinity == "56-111"
    # the torn line still yields both connections, and a warning
    ipc = of_type(ctx, "nccl.transport_summary")
    assert {(t.node, t.transport, t.connections) for t in ipc} == {
        ("node-a", "P2P/IPC", 1), ("node-b", "P2P/IPC", 1)}
    assert one(ctx, "nccl.nvls").available is False
    mn = one(ctx, "nccl.mnnvl")
    assert (mn.bus_id, mn.clique_id, mn.state) == ("0x18000", "0x7", 3)
    ring = one(ctx, "nccl.ring_connected")
    assert (ring.pxn, ring.gdr, ring.count) == (1, 0, 2)
    assert one(ctx, "nccl.data_direct").device == "mlx5_4"
    topo = one(ctx, "nccl.topo_file")
    assert (topo.loaded, topo.path) == (False, "/nope.xml") and "No such file" in topo.error
    assert one(ctx, "nccl.warn").category == "topo"
    messages = [msg for _, msg in ctx.warnings]
    assert any("torn" in msg for msg in messages)
    assert any("truncated" in msg for msg in messages)


def test_channel_lines_are_aggregated_and_fast():
    lines = [f"h1:1:2 [0] NCCL INFO Channel {c % 32:02d}/0 : 0[0] -> 8[0] [send] via NET/IB/{c % 8}/GDRDMA"
             for c in range(200_000)]
    lines.append("h1:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0")
    start = time.perf_counter()
    ctx = parse_text(FMT, "\n".join(lines))
    elapsed = time.perf_counter() - start
    [summary] = of_type(ctx, "nccl.transport_summary")
    assert (summary.connections, summary.gdr_connections) == (200_001, 200_000)
    assert summary.nics == [str(n) for n in range(8)]
    assert (summary.source.line, summary.source.end_line) == (1, 200_001)
    # one per-process NIC summary per (NIC, GDR) pair, not one per line
    channels = of_type(ctx, "nccl.channel")
    assert len(channels) == 9 and {c.fact_type for c in ctx.facts} == {
        "nccl.transport_summary", "nccl.channel"}
    nic0 = [c for c in channels if c.nic == "0" and c.gdr]
    assert [(c.direction, c.connections, c.peers, c.peer_ranks) for c in nic0] == [
        ("send", 25_000, 1, [8])]
    assert elapsed < 5


def test_repeated_warns_are_counted_once():
    line = "h1:1:2 [0] transport/net_ib.cc:1 NCCL WARN NET/IB : Got async event : port error"
    ctx = parse_text(FMT, "\n".join([line] * 1000))
    [w] = ctx.facts
    assert w.count == 1000 and w.source.line == 1


def test_no_nccl_lines_is_not_applicable():
    with pytest.raises(NotApplicable):
        parse_text(FMT, "hello world\nNCCL_DEBUG=INFO is set\n")


SNIFF_OWN = {"nccl-debug-info.log", "nccl-debug-socket-fallback.log",
             "nccl-debug-warn-variants.log", "nccl-debug-plugin-variants.log"}


@pytest.mark.parametrize("path", sorted(FORMATS.iterdir()), ids=lambda p: p.name)
def test_sniff(path):
    text = path.read_bytes().decode("utf-8", errors="replace")
    score = nccl_debug.sniff(Document.from_text(text, name=path.name))
    if path.name in SNIFF_OWN:
        assert score >= 0.8
    else:
        assert score < 0.3


def test_registered():
    fmt = all_formats()[FMT]
    assert fmt.matches_command("NCCL_DEBUG=INFO torchrun train.py")
    assert "nccl.transport_summary" in fmt.facts


def _check(text: str) -> None:
    try:
        parse_text(FMT, text)
    except (ParseError, NotApplicable):
        pass


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000))
def test_never_raises_anything_else(text):
    _check(text)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000).map(lambda b: b.decode("latin-1")))
def test_never_raises_on_bytes(text):
    _check(text)


_FIXTURE_LINES = [ln for name in sorted(SNIFF_OWN)
                  for ln in (FORMATS / name).read_text().splitlines()]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_FIXTURE_LINES), st.text(max_size=40)), max_size=40),
       st.integers(min_value=0, max_value=200))
def test_never_raises_on_mangled_logs(lines, cut):
    # real lines, shuffled, mixed with noise and cut short: reaches the message handlers
    _check("\n".join(ln[: len(ln) - cut % (len(ln) + 1)] if i % 3 == 0 else ln
                     for i, ln in enumerate(lines)))


def test_superscript_nic_number_does_not_crash_the_summary():
    # the NIC list of a transport summary sorts numerically when a name is a number: "²" passed
    # str.isdigit() and int() raised at the end of the parse
    ctx = parse_text(FMT, "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/\u00b2\n"
                          "h:1:1 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] [send] via NET/IB/1\n")
    [ts] = of_type(ctx, "nccl.transport_summary")
    assert ts.nics == ["1", "\u00b2"]


def test_graph_import_warning_leaves_the_topology_file_loaded():
    # "XML Import Channel : dev N not found" is the graph file naming a device the run lacks; a
    # topology file that did not parse is the look-alike and still reads as not loaded
    graph = parse_text("nccl-debug", "h:1:2 [0] NCCL INFO Loading topology file /etc/nccl/topo-8x.xml\n"
                                     "h:1:2 [0] graph/search.cc:1018 NCCL WARN XML Import Channel : dev 4 not found.\n")
    assert one(graph, "nccl.topo_file").loaded is True
    broken = parse_text("nccl-debug", "h:1:2 [0] NCCL INFO Loading topology file /etc/nccl/topo-8x.xml\n"
                                      "h:1:2 [0] graph/xml.cc:99 NCCL WARN XML parse error : unexpected tag\n")
    assert one(broken, "nccl.topo_file").loaded is False
