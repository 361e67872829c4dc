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
