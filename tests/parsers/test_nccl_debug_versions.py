"""NCCL debug logs across releases (2.4 to 2.27), from the format strings of each tag.

Fixtures are in tests/fixtures/nccl/ (written from src/ of NVIDIA/nccl at v2.4.8-1, v2.7.8-1,
v2.12.12-1 and v2.27.7-1, pasted the way users paste them: launcher tags, kubectl timestamps,
application output between the lines, a cut last line).
"""

import time
from pathlib import Path

import pytest

from clusterdx.facts.document import Document
from clusterdx.facts.parsers import nccl_debug
from tests.parsers.helpers import of_type, parse_text

FMT = "nccl-debug"
HERE = Path(__file__).parents[1] / "fixtures" / "nccl"


def parse(name):
    return parse_text(FMT, (HERE / name).read_text(), name=name)


def one(ctx, fact_type, **match):
    found = [f for f in of_type(ctx, fact_type) if all(getattr(f, k) == v for k, v in match.items())]
    assert len(found) == 1, (fact_type, match, found)
    return found[0]


@pytest.mark.parametrize("path", sorted(HERE.iterdir()), ids=lambda p: p.name)
def test_sniff_and_ingest_pick_nccl_debug(path):
    from clusterdx.facts.ingest import ingest
    assert nccl_debug.sniff(Document.from_text(path.read_text(), name=path.name)) >= 0.8
    res = ingest([str(path)])
    assert res.inputs[0].format == FMT


def test_2_4_mpirun_tagged_ring_lines():
    ctx = parse("nccl-debug-2.4-mpirun-tagged.log")
    assert ctx.warnings == []
    v = one(ctx, "nccl.version")
    assert (v.version, v.version_num, v.cuda, v.node) == ("2.4.8", 2408, "10.1", "node01")
    boot = one(ctx, "nccl.bootstrap")
    assert (boot.interface, boot.address) == ("eth0", "10.0.0.1")  # " [0]eth0:..." before 2.9
    # no "Using network" line before 2.6: the device list is the decision
    net = one(ctx, "nccl.net")
    assert (net.selected, net.devices, net.roce, net.oob_if) == (True, ["mlx5_0:1", "mlx5_1:1"], True, "ib0")
    assert one(ctx, "nccl.env", name="NCCL_IB_HCA").value == "mlx5_0"
    ib = one(ctx, "nccl.transport_summary", transport="NET/IB")
    assert (ib.connections, ib.gdr_connections, ib.nics) == (4, 4, ["0"])
    assert one(ctx, "nccl.transport_summary", transport="P2P/IPC").connections == 3
    assert one(ctx, "nccl.transport_summary", transport="SHM").connections == 1  # "direct shared memory"
    recv = one(ctx, "nccl.channel", direction="receive")
    assert (recv.rank, recv.cuda_dev, recv.nic, recv.nic_name, recv.gdr, recv.connections,
            recv.peer_ranks) == (0, 0, "0", "mlx5_0:1", True, 2, [15])
    send = one(ctx, "nccl.channel", direction="send")
    assert (send.cuda_dev, send.peer_ranks, send.connections) == (7, [8], 2)
    assert [(g.gpu_bus, g.enabled, g.distance, g.max_distance) for g in of_type(ctx, "nccl.gdr_gpu")] == [
        ("0", True, 2, 3), ("4", False, 4, 3)]
    assert one(ctx, "nccl.trees").channels == 2
    aff = one(ctx, "nccl.affinity")
    assert aff.cpus == list(range(48))
    assert one(ctx, "nccl.plugin").status == "not_found"
    assert one(ctx, "nccl.init_complete").nranks == 16


def test_2_7_srun_topology_tree_and_graph_speed():
    ctx = parse("nccl-debug-2.7-srun-graph.log")
    assert ctx.warnings == []
    sysbw = one(ctx, "nccl.graph_system")
    assert (sysbw.max_bw, sysbw.total_bw) == (24.0, None)  # 2.7 prints maxWidth only
    graphs = of_type(ctx, "nccl.graph")
    assert [(g.pattern, g.nchannels, g.bw_intra, g.bw_inter, g.same_channels) for g in graphs] == [
        (4, 2, 12.0, 12.0, 1), (3, 2, 24.0, 12.0, 0)]
    ignored = {(f.reason, f.what): f.count for f in of_type(ctx, "nccl.topo_ignored")}
    assert ignored == {
        ("unreadable", "/sys/devices/pci0000:00/0000:00:01.1/max_link_speed"): 2,
        ("unreadable", "/sys/devices/pci0000:00/0000:00:01.1/max_link_width"): 1,
        ("not_pci", "/sys/devices/virtual/net/ib0"): 1}
    nodes = of_type(ctx, "nccl.topo_node")
    gpus = {(n.node_id, n.gpu_rank, n.under_cpu, n.link_bw) for n in nodes if n.node_type == "GPU"}
    assert gpus == {("7000", 0, "0", 24.0), ("90000", 4, "1", 24.0)}
    nets = {(n.node_id, n.net_bw, n.under_cpu) for n in nodes if n.node_type == "NET"}
    assert nets == {("0", 12.5, "0"), ("2", 12.5, "1")}
    assert one(ctx, "nccl.topo_node", node_type="NVS").link_type == "NVL"
    # channels to rank 8 leave by NIC 0 with GPUDirect and NIC 2 without (GPU 0 is far from NIC 2)
    sends = {(c.nic, c.nic_name, c.gdr) for c in of_type(ctx, "nccl.channel") if c.direction == "send"}
    assert sends == {("0", "mlx5_0:1", True), ("2", "mlx5_2:1", False)}
    gdr = {(g.hca_index, g.enabled) for g in of_type(ctx, "nccl.gdr_gpu")}
    assert gdr == {(0, True), (2, False)}
    assert one(ctx, "nccl.net").selected is True
    gpu = one(ctx, "nccl.topo_paths", src_type="GPU")
    assert gpu.src_id == "7000" and gpu.best_net_path == "PIX"
    assert gpu.paths == {"GPU/7000": "LOC", "GPU/90000": "SYS", "NET/0": "PIX", "NET/2": "SYS"}
    assert gpu.bw["NET/2"] == 10.0
    net = one(ctx, "nccl.topo_paths", src_type="NET")
    assert (net.src_id, net.paths["GPU/90000"], net.best_net_path) == ("2", "PIX", "LOC")


def test_device_list_cut_by_the_line_buffer_is_reported():
    text = ("h:1:2 [0] NCCL INFO NET/IB : Using " + " ".join(f"[{n}]mlx5_{n}:1/IB" for n in range(80))[:990])
    ctx = parse_text(FMT, text + "\nh:1:2 [0] NCCL INFO Using network IB\n")
    net = one(ctx, "nccl.net")
    assert net.device_count == 59 and net.oob_if == ""
    assert net.devices[-1] == "mlx5_58:1"  # "[59]mlx" cut in its name is dropped
    assert [w[1] for w in ctx.warnings] == [
        "NET/IB : Using line cut before its OOB part; device list may be incomplete"]
    full = parse_text(FMT, "h:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>\n")
    assert full.warnings == []


def test_2_12_roce_qps_and_real_path_warn():
    ctx = parse("nccl-debug-2.12-qp-realpath.log")
    assert ctx.warnings == []
    assert one(ctx, "nccl.version").version_num == 21212
    assert one(ctx, "nccl.env", name="NCCL_IB_GID_INDEX").value == "3"  # "set by environment to 3."
    assert one(ctx, "nccl.graph_system").total_bw == 240.0
    assert one(ctx, "nccl.graph").bw_inter == 24.0
    qps = {(q.ib_dev, q.mtu, q.mtu_bytes, q.addressing, q.gid_index, q.count) for q in of_type(ctx, "nccl.ib_qp")}
    assert qps == {(0, 3, 1024, "GID", 3, 2), (1, 3, 1024, "GID", 3, 1)}
    real = one(ctx, "nccl.topo_ignored")
    assert (real.reason, real.what) == ("no_real_path", "/sys/class/net/enp226s0/device")
    assert one(ctx, "nccl.warn").code_location == "misc/utils.cc:55"
    plug = one(ctx, "nccl.plugin")
    assert (plug.name, plug.status) == ("libnccl-net.so", "not_found")


def test_2_27_kubectl_timestamps_ece_algorithms():
    ctx = parse("nccl-debug-2.27-kubectl-timestamps.log")
    # only the cut last line is reported
    assert [w[0] for w in ctx.warnings] == [41]
    assert one(ctx, "nccl.version").version == "2.27.7"
    assert one(ctx, "nccl.env", name="NCCL_ALGO").value == "Ring,Tree"
    plugins = {(p.kind, p.name, p.status) for p in of_type(ctx, "nccl.plugin")}
    assert plugins == {("net", "libnccl-net.so", "not_found"), ("net", "internal", "not_found"),
                       ("tuner", "libnccl-tuner.so", "not_found"),
                       ("profiler", "libnccl-profiler.so", "not_found")}
    cc = one(ctx, "nccl.cc")
    assert (cc.enabled, cc.multi_gpu) == (False, None)
    rows = {r.function: r for r in of_type(ctx, "nccl.algo_enabled")}
    assert set(rows) == {"Broadcast", "AllReduce", "AllGather"}
    assert rows["AllReduce"].algorithms == ["Tree", "Ring"] and "NVLS" in rows["AllReduce"].algorithms_off
    assert rows["AllGather"].algorithms == ["Ring"] and rows["AllGather"].protocols == ["LL", "LL128", "Simple"]
    sel = {(a.function, a.algo, a.proto): (a.count, a.min_bytes, a.max_bytes)
           for a in of_type(ctx, "nccl.algo_selection")}
    assert sel == {("AllReduce", "Ring", "LL128"): (2, 4096, 1048576),
                   ("AllReduce", "Ring", "Simple"): (1, 268435456, 268435456),
                   ("AllGather", "Ring", "LL"): (1, 65536, 65536)}  # "Algo 1 proto 0" of 2.23-2.26
    ece = {(e.kind, e.supported, e.options, e.count) for e in of_type(ctx, "nccl.ece")}
    assert ece == {("query", True, "0x30000002", 2), ("set", True, "0x30000002", 1)}
    qp = one(ctx, "nccl.ib_qp")
    assert (qp.addressing, qp.mtu_bytes, qp.gid_index) == ("LID", 4096, None)
    pxn = one(ctx, "nccl.channel", nic="1")
    assert (pxn.proxy_rank, pxn.nic_name, pxn.gdr) == (1, "mlx5_1:1", True)
    cut = one(ctx, "nccl.channel", nic="3")
    assert cut.gdr is False  # "GDR" cut short of "GDRDMA" is not claimed
    w = one(ctx, "nccl.warn")
    assert (w.timestamp, w.hca) == ("2025-07-14 02:11:42", "mlx5_3")
    assert one(ctx, "nccl.init_timings").total == 1.2
    assert one(ctx, "nccl.init_complete").comm_id == "0x3c2e5a7d11e09b44"
    assert one(ctx, "nccl.topo_ignored").reason == "unreadable"
    assert one(ctx, "nccl.nvls").available is True
    assert one(ctx, "nccl.comm").nnodes == 2


def test_excerpt_yields_what_it_holds():
    text = ("gpu7:1:2 [3] NCCL INFO Channel 05/0 : 3[3] -> 11[3] [send] via NET/IB/3/GDRDMA\n"
            "gpu7:1:2 [3] NCCL INFO Pattern 4, crossNic 0, nChannels 8, bw 40.000000/40.000000, "
            "type NVL/PIX, sameChannels 1\n")
    ctx = parse_text(FMT, text)
    assert ctx.warnings == []
    ch = one(ctx, "nccl.channel")
    assert (ch.node, ch.cuda_dev, ch.nic, ch.nic_name, ch.gdr, ch.peer_ranks) == ("gpu7", 3, "3", "", True, [11])
    assert one(ctx, "nccl.graph").nchannels == 8
    assert {f.fact_type for f in ctx.facts} == {"nccl.channel", "nccl.transport_summary", "nccl.graph"}


def test_look_alikes_are_not_facts():
    text = "\n".join([
        "h:1:1 [0] NCCL INFO Ring 00 : 0 1 2 3",                    # ring order, not a connection
        "h:1:1 [0] NCCL INFO Channel 00/02 :    0   1   2   3",      # same, 2.7+
        "h:1:1 [0] NCCL INFO + PCI[24.0] - FOO/1",                  # not a topology node type
        "h:1:1 [0] NCCL INFO Using 256 threads, Min Comp Cap 7, Trees disabled",
        "h:1:1 [0] NCCL INFO NET/IB: Dev 0 Port 1 qpn 12 mtu x GID 3",  # unreadable mtu
        "h:1:1 [0] NCCL INFO AllReduce: many Bytes -> Algo Ring proto LL",
        "h:1:1 [0] NCCL INFO CCX Off",
        "   Broadcast |  1  1  1  |  1  1",                        # matrix row with no matrix line
    ])
    ctx = parse_text(FMT, text)
    assert ctx.facts == []


def test_matrix_stops_at_first_non_row_and_keeps_cut_rows():
    text = "\n".join([
        "h:1:1 [0] NCCL INFO Enabled NCCL Func/Proto/Algo Matrix:",
        "     Function |       LL     LL128    Simple   |          Tree           Ring",
        "    Broadcast |        1         0         1   |             1              1",
        "       Reduce |        1         1         1   |             0  ",  # cut by the 1 KiB buffer
        "step 10 loss 3.2 | lr 0.1 | tokens 4096",                          # application output
        "    AllReduce |        1         1         1   |             1              1",
    ])
    ctx = parse_text(FMT, text)
    rows = {r.function: (r.protocols, r.protocols_off, r.algorithms, r.algorithms_off)
            for r in of_type(ctx, "nccl.algo_enabled")}
    assert rows == {"Broadcast": (["LL", "Simple"], ["LL128"], ["Tree", "Ring"], []),
                    "Reduce": (["LL", "LL128", "Simple"], [], [], ["Tree"])}


@pytest.mark.slow  # 100,000 log lines (a bench); test_many_ranks_channel_facts_stay_per_process stays quick
def test_ece_and_algo_lines_are_counted_not_kept():
    lines = [f"h:1:2 [0] NCCL INFO NET/IB: IbDev {q % 2} Port 1 qpn {q} query_ece={{supported=0, "
             f"vendor_id=0x0, options=0x0, comp_mask=0x0}}" for q in range(50_000)]
    lines += [f"h:1:1 [0] NCCL INFO AllReduce: {1 << (q % 30)} Bytes -> Algo 1 proto {q % 3} time 1.0"
              for q in range(50_000)]
    start = time.perf_counter()
    ctx = parse_text(FMT, "\n".join(lines))
    elapsed = time.perf_counter() - start
    ece = sorted((e.ib_dev, e.supported, e.count) for e in of_type(ctx, "nccl.ece"))
    assert ece == [(0, False, 25_000), (1, False, 25_000)]
    sel = sorted((a.proto, a.count, a.min_bytes, a.max_bytes) for a in of_type(ctx, "nccl.algo_selection"))
    assert [s[:2] for s in sel] == [("LL", 16_667), ("LL128", 16_667), ("Simple", 16_666)]
    assert sel[0][2] == 1 and sel[0][3] == 1 << 27
    assert len(ctx.facts) == 5
    assert elapsed < 5


def test_many_ranks_channel_facts_per_node_and_nic():
    # 1,024 ranks x 32 channels x send+receive: ~65k lines; each GPU of a node on its own NIC, so
    # one nccl.channel per node, NIC and direction (one process each)
    lines = []
    for r in range(1024):
        host, dev = f"n{r // 8:03d}", r % 8
        for c in range(32):
            lines.append(f"{host}:{100 + r}:{200 + r} [{dev}] NCCL INFO Channel {c:02d}/0 : "
                         f"{r}[{dev}] -> {(r + 8) % 1024}[{dev}] [send] via NET/IB/{dev}/GDRDMA")
            lines.append(f"{host}:{100 + r}:{200 + r} [{dev}] NCCL INFO Channel {c:02d}/0 : "
                         f"{(r - 8) % 1024}[{dev}] -> {r}[{dev}] [receive] via NET/IB/{dev}/GDRDMA")
    ctx = parse_text(FMT, "\n".join(lines))
    chans = of_type(ctx, "nccl.channel")
    assert len(chans) == 2048
    assert {c.connections for c in chans} == {32} and {c.peers for c in chans} == {1}
    assert {c.processes for c in chans} == {1}
    assert sum(t.connections for t in of_type(ctx, "nccl.transport_summary")) == 65_536


def test_long_repeated_lines_are_linear():
    for line in ("h:1:1 [0] NCCL INFO + PCI[" + "1" * 50_000,
                 "h:1:1 [0] NCCL INFO NET/IB: IbDev 0 Port 1 qpn 1 " + "x " * 50_000,
                 "h:1:1 [0] NCCL INFO AllReduce: 1 Bytes -> Algo " + "a" * 50_000,
                 "h:1:1 [0] NCCL INFO Channel 00/0 : " + "1[1] -> " * 20_000 + " via NET/IB/0",
                 "h:1:1 [0] NCCL INFO Topology detection : could not read " + "/x" * 50_000,
                 "h:1:1 [0] NCCL INFO " + "ignoring " * 20_000):
        start = time.perf_counter()
        parse_text(FMT, line)
        assert time.perf_counter() - start < 2, line[:60]


def test_prefix_variants_of_pasted_lines():
    text = "\n".join([
        "[2025-07-14 02:11:40] NCCL version 2.27.7+cuda12.9",          # VERSION level with timestamps
        "12: gpu-9:77:78 [4] NCCL INFO NCCL_NET_GDR_LEVEL set by environment to PHB",  # srun -l
        "[1,3]<stdout>:gpu-9:77:78 [4] NCCL INFO Using network IB",    # mpirun --tag-output
        "gpu-9:77:79 NCCL INFO NCCL_PROTO set by environment to Simple",  # [dev] lost in the paste
        "2025-07-14T02:11:41+00:00 gpu-9:77:78 [4] NCCL INFO Channel 00/0 : 1[4] -> 9[4] [send] via NET/IB/4",
        "Traceback (most recent call last):",
        "  gpu-9:77:78 [4] NCCL INFO CC On, Multi-GPU CC Off",          # indented paste
    ])
    ctx = parse_text(FMT, text)
    assert ctx.warnings == []
    assert one(ctx, "nccl.version").version == "2.27.7"
    envs = {(e.name, e.value, e.cuda_dev) for e in of_type(ctx, "nccl.env")}
    assert envs == {("NCCL_NET_GDR_LEVEL", "PHB", 4), ("NCCL_PROTO", "Simple", None)}
    assert one(ctx, "nccl.channel").nic == "4"
    cc = one(ctx, "nccl.cc")
    assert (cc.enabled, cc.multi_gpu) == (True, False)
    assert one(ctx, "nccl.net").net == "IB"


def test_not_nccl_prefixes_are_not_applicable():
    from clusterdx.facts.base import NotApplicable
    with pytest.raises(NotApplicable):
        parse_text(FMT, "gpu-9:77:79 INFO NCCL_PROTO set by environment to Simple\n"
                        "2025-07-14T02:11:41Z NCCL_DEBUG=INFO python train.py\n")
