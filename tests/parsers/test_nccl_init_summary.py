"""Per-rank init lines become counted summaries per communicator size (facts/parsers/_nccl_init.py)."""

from tests.parsers.helpers import of_type, parse_text

FMT = "nccl-debug"


def init_lines(host, pid, dev, rank, nranks, total, cid="0x9d2e4f61a7c8b013", start=True):
    pre = f"{host}:{pid}:{pid + 118} [{dev}] NCCL INFO "
    head = f"ncclCommInitRank comm 0x55f0a8e3c2a0 rank {rank} nranks {nranks} cudaDev {dev} nvmlDev {dev} busId 18000 commId {cid}"
    out = [pre + head + " - Init START"] if start else []
    out.append(pre + head + " - Init COMPLETE")
    if total is not None:
        out.append(pre + f"Init timings - ncclCommInitRank: rank {rank} nranks {nranks} total {total} "
                         "(kernels 0.19, alloc 0.07, bootstrap 0.42, allgathers 0.03, topo 0.66, graphs 0.05, "
                         "connections 0.84, rest 0.05)")
    return out


def job(totals, nranks=None, hosts=4, cid="0x9d2e4f61a7c8b013"):
    nranks = nranks or len(totals)
    lines = []
    for r, t in enumerate(totals):
        lines += init_lines(f"gpu-h100-{r % hosts:03d}", 4000 + r, r % 8, r, nranks, t, cid)
    return lines


def summary(ctx, fact_type, nranks):
    found = [f for f in of_type(ctx, fact_type) if f.nranks == nranks and f.count > 1]
    assert len(found) == 1, found
    return found[0]


def test_identical_repeats_are_one_counted_fact():
    lines = ["## launcher output"] + job([2.31] * 64)
    ctx = parse_text(FMT, "\n".join(lines))
    done = of_type(ctx, "nccl.init_complete")
    assert len(done) == 1
    d = done[0]
    assert (d.count, d.started, d.nodes, d.comms, d.nranks) == (64, 64, 4, 1, 64)
    # the first COMPLETE line is the reference, spanning to the last
    assert (d.node, d.comm_rank, d.source.line, d.source.end_line) == ("gpu-h100-000", 0, 3, 3 + 63 * 3)
    timings = of_type(ctx, "nccl.init_timings")
    assert len(timings) == 3  # the summary and the next two slowest, not 64
    t = summary(ctx, "nccl.init_timings", 64)
    assert (t.count, t.median_total, t.min_total, t.first_line) == (64, 2.31, 2.31, 4)
    # ties go to the earliest line
    assert (t.comm_rank, t.source.line) == (0, 4)


def test_the_slowest_rank_is_kept_with_its_line_and_the_first():
    totals = [2.0 + (r % 5) / 100 for r in range(40)]
    totals[27] = 41.0
    lines = job(totals)
    ctx = parse_text(FMT, "\n".join(lines))
    t = summary(ctx, "nccl.init_timings", 40)
    assert (t.total, t.comm_rank, t.node, t.count) == (41.0, 27, "gpu-h100-003", 40)
    assert t.source.line == 27 * 3 + 3 and t.first_line == 3
    assert (t.min_total, t.median_total) == (2.0, 2.02)
    assert (t.kernels, t.connections) == (0.19, 0.84)
    runners = sorted((f.total, f.comm_rank) for f in of_type(ctx, "nccl.init_timings") if f.count == 1)
    assert [total for total, _ in runners] == [2.04, 2.04]
    assert all(f.median_total is None for f in of_type(ctx, "nccl.init_timings") if f.count == 1)


def test_sizes_stay_apart_and_a_rank_that_never_completed_shows():
    world = job([2.3] * 16, cid="0x1111111111111111")
    tp = job([0.4] * 8, cid="0x2222222222222222")
    # one more rank starts an 8-rank communicator and never completes
    stuck = [init_lines("gpu-h100-009", 9999, 3, 5, 8, None, "0x3333333333333333")[0]]
    ctx = parse_text(FMT, "\n".join(world + tp + stuck))
    done = {f.nranks: f for f in of_type(ctx, "nccl.init_complete")}
    assert set(done) == {16, 8}
    assert (done[16].count, done[16].started) == (16, 16)
    assert (done[8].count, done[8].started, done[8].comms) == (8, 9, 1)
    assert summary(ctx, "nccl.init_timings", 8).total == 0.4
    assert summary(ctx, "nccl.init_timings", 16).total == 2.3


def test_one_rank_is_one_fact_as_before():
    ctx = parse_text(FMT, "\n".join(init_lines("node-a", 11, 0, 3, 64, 1.2)))
    (d,) = of_type(ctx, "nccl.init_complete")
    (t,) = of_type(ctx, "nccl.init_timings")
    assert (d.count, d.started, d.comm_rank, t.count, t.total, t.median_total) == (1, 1, 3, 1, 1.2, 1.2)


def test_look_alikes_in_application_output_are_not_counted():
    lines = job([2.3] * 4) + [
        "[rank3]: Init timings - ncclCommInitRank: rank 3 nranks 4 total 99.0",  # no NCCL prefix
        "INFO: waiting for Init COMPLETE of rank 2 nranks 4",
    ]
    ctx = parse_text(FMT, "\n".join(lines))
    t = summary(ctx, "nccl.init_timings", 4)
    assert (t.count, t.total) == (4, 2.3)
    assert summary(ctx, "nccl.init_complete", 4).count == 4


# -- per-process facts counted per node (nccl.comm, nccl.channels, nccl.channel) --------------------

def proc_lines(host, pid, dev, rank, nranks, nnodes, coll=32, nics=None):
    pre = f"{host}:{pid}:{pid + 118} [{dev}] NCCL INFO "
    out = [pre + f"comm 0x55{pid:010x} rank {rank} nRanks {nranks} nNodes {nnodes} localRanks 8 "
                 f"localRank {dev} MNNVL 0",
           pre + f"{coll} coll channels, {coll} collnet channels, 16 nvls channels, 32 p2p channels, "
                 "32 p2p channels per peer"]
    nic = dev if nics is None else nics
    for c in range(4):
        out.append(pre + f"Channel {c:02d}/0 : {rank}[{dev}] -> {(rank + 8) % nranks}[{dev}] [send] "
                         f"via NET/IB/{nic}/GDRDMA")
    return out


def test_ranks_of_a_node_with_the_same_values_are_counted():
    lines = []
    for dev in range(8):
        lines += proc_lines("gpu-a", 100 + dev, dev, dev, 16, 2, nics=0)
    for dev in range(8):
        lines += proc_lines("gpu-b", 200 + dev, dev, 8 + dev, 16, 2, nics=0)
    ctx = parse_text(FMT, "\n".join(lines))
    comms = of_type(ctx, "nccl.comm")
    assert sorted((c.node, c.count, c.local_rank, c.source.line) for c in comms) == [
        ("gpu-a", 8, 0, 1), ("gpu-b", 8, 0, 6 * 8 + 1)]
    chans = of_type(ctx, "nccl.channels")
    assert sorted((c.node, c.count, c.coll) for c in chans) == [("gpu-a", 8, 32), ("gpu-b", 8, 32)]
    # all eight processes of a node send on NIC 0: one fact per node, 8 x 4 connection lines
    nets = of_type(ctx, "nccl.channel")
    assert sorted((c.node, c.nic, c.processes, c.connections, c.peers) for c in nets) == [
        ("gpu-a", "0", 8, 32, 8), ("gpu-b", "0", 8, 32, 8)]
    a = next(c for c in nets if c.node == "gpu-a")
    assert (a.pid, a.cuda_dev, a.source.line) == (100, 0, 3)


def test_distinct_values_stay_apart_with_their_first_line():
    lines = proc_lines("gpu-a", 100, 0, 0, 16, 2) + proc_lines("gpu-a", 101, 1, 1, 16, 2, coll=2) \
        + proc_lines("gpu-a", 102, 2, 2, 16, 2) + proc_lines("gpu-a", 103, 3, 3, 4, 1)
    ctx = parse_text(FMT, "\n".join(lines))
    chans = sorted((c.coll, c.count, c.source.line) for c in of_type(ctx, "nccl.channels"))
    assert chans == [(2, 1, 8), (32, 3, 2)]  # the odd rank out stays visible
    comms = sorted((c.nranks, c.nnodes, c.count, c.source.line) for c in of_type(ctx, "nccl.comm"))
    assert comms == [(4, 1, 1, 19), (16, 2, 3, 1)]
    # each process on its own NIC: nothing to merge
    assert sorted(c.nic for c in of_type(ctx, "nccl.channel")) == ["0", "1", "2", "3"]


def test_a_process_repeating_its_line_is_not_counted_twice():
    lines = proc_lines("gpu-a", 100, 0, 0, 16, 2)
    ctx = parse_text(FMT, "\n".join(lines + lines[:2]))
    assert [c.count for c in of_type(ctx, "nccl.comm")] == [1]
    assert [c.count for c in of_type(ctx, "nccl.channels")] == [1]


def gpu_lines(host, pid, dev, nvls=True, aff="ff,ffffffff", gdr="Enabled", distance=3):
    pre = f"{host}:{pid}:{pid + 118} [{dev}] NCCL INFO "
    return [pre + f"NVLS multicast support is {'' if nvls else 'not '}available on dev {dev}",
            pre + f"Setting affinity for GPU {dev} to {aff}",
            pre + f"GPU Direct RDMA {gdr} for GPU {dev}a000 / HCA {dev} (distance {distance} <= 4), read 1"]


def test_per_gpu_decisions_counted_per_node_and_the_odd_gpu_kept():
    lines = []
    for dev in range(8):
        lines += gpu_lines("gpu-a", 100 + dev, dev, nvls=dev != 5, aff="ff" if dev < 4 else "ff00",
                           gdr="Disabled" if dev == 6 else "Enabled", distance=5 if dev == 6 else 3)
    ctx = parse_text(FMT, "\n".join(lines))
    nvls = sorted((f.available, f.count, f.dev, f.source.line) for f in of_type(ctx, "nccl.nvls"))
    assert nvls == [(False, 1, 5, 16), (True, 7, 0, 1)]
    aff = sorted((f.affinity, f.count, f.gpu, f.source.line) for f in of_type(ctx, "nccl.affinity"))
    assert aff == [("ff", 4, 0, 2), ("ff00", 4, 4, 14)]
    gdr = sorted((f.enabled, f.count, f.gpu_bus, f.distance) for f in of_type(ctx, "nccl.gdr_gpu"))
    assert gdr == [(False, 1, "6a000", 5), (True, 7, "0a000", 3)]


def test_per_gpu_facts_of_two_nodes_stay_apart():
    lines = gpu_lines("gpu-a", 100, 0) + gpu_lines("gpu-b", 100, 0)
    ctx = parse_text(FMT, "\n".join(lines))
    assert sorted((f.node, f.count) for f in of_type(ctx, "nccl.nvls")) == [("gpu-a", 1), ("gpu-b", 1)]
