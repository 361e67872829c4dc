"""Labels printed by loops and parallel shells become context of the output that follows."""

import doctest
import time

from clusterdx.facts import labels
from clusterdx.facts.ingest import ingest
from clusterdx.facts.transcript import Segment, split_transcript


def test_doctests():
    assert doctest.testmod(labels).failed == 0


def seg(cmd, lines, first=2):
    return labels.split_labels(Segment(cmd, lines, first))


def test_loop_echo_labels_split_per_device():
    out = seg('for i in 0 1; do echo "== mlx5_$i"; ibstat mlx5_$i; done',
              ["== mlx5_0", "\t\tRate: 400", "== mlx5_1", "\t\tRate: 200"])
    assert [(s.label, s.label_kind, s.first_line) for s in out] == [("mlx5_0", "device", 3), ("mlx5_1", "device", 5)]


def test_loop_label_lookalike_lines_are_output():
    # '== mlx5_9' is not one of the loop's values: it stays output of mlx5_0
    out = seg('for i in 0 1; do echo "== mlx5_$i"; cat x; done', ["== mlx5_0", "== mlx5_9", "== mlx5_1", "y"])
    assert [(s.label, s.lines) for s in out] == [("mlx5_0", ["== mlx5_9"]), ("mlx5_1", ["y"])]


def test_rank_and_pid_labels():
    out = seg('for r in 0 1; do echo "rank $r"; taskset -cp $r; done', ["rank 0", "a", "rank 1", "b"])
    assert [(s.label, s.label_kind) for s in out] == [("0", "rank"), ("1", "rank")]
    out = seg("for p in $(pgrep python); do echo \"pid $p\"; taskset -p $p; done", ["pid 41", "a", "pid 42", "b"])
    assert [(s.label, s.label_kind) for s in out] == [("41", "pid"), ("42", "pid")]


def test_bare_variable_over_computed_values_is_not_a_label():
    out = seg("for i in $(seq 0 1); do echo $i; done", ["0", "1"])
    assert len(out) == 1 and out[0].label is None


def test_echo_sysfs_dir_then_cat_becomes_head_headers():
    [s] = seg("for d in /sys/class/infiniband/*; do echo $d; cat $d/ports/1/rate; done",
              ["/sys/class/infiniband/mlx5_0", "400 Gb/sec (4X NDR)"])
    assert s.lines == ["==> /sys/class/infiniband/mlx5_0/ports/1/rate <==", "400 Gb/sec (4X NDR)"]


def test_prefixes_need_their_command_except_mpi_tags():
    lines = ["Architecture: x86_64", "CPU(s): 8"]   # lscpu looks like pdsh output
    assert seg("lscpu", lines)[0].label is None
    assert [s.label for s in seg("pdsh -w n[1-2] lscpu", ["n1: CPU(s): 8", "n2: CPU(s): 4"])] == ["n1", "n2"]
    out = seg("srun -l -N2 nproc", ["0: 8", "1: 4", "0: x"])
    assert [(s.label, s.label_kind, s.line_map) for s in out] == [("0", "rank", [2, 4]), ("1", "rank", [3])]
    out = seg(None, ["[1,0]<stdout>: GPU0 X NV18", "[1,1]<stdout>: GPU0 X SYS"])
    assert [(s.label, s.label_kind, s.lines) for s in out] == [("0", "rank", ["GPU0 X NV18"]), ("1", "rank", ["GPU0 X SYS"])]
    # a few tagged lines among ordinary output: not a tagged paste
    assert seg(None, ["[1,0]<stdout>: a", "b", "c", "d", "e"])[0].label is None


def test_job_logs_keep_their_rank_tags_for_their_parsers():
    lines = ["[1,0]<stdout>:gpu1:1:1 [0] NCCL INFO Bootstrap", "[1,1]<stdout>:gpu1:2:2 [1] NCCL INFO Bootstrap"]
    assert len(seg("mpirun --tag-output -np 2 ./a", lines)) == 1
    lines = ["0: # nccl-tests version 2.17.6", "1: # nccl-tests version 2.17.6"]
    assert len(seg("srun -N2 --label ./build/all_reduce_perf -b 1G", lines)) == 1


def test_file_heads_split_but_sysfs_heads_stay():
    out = seg("head -n 5 /tmp/ibstat-*.txt", ["==> /tmp/ibstat-a.txt <==", "x", "", "==> /tmp/ibstat-b.txt <==", "y"])
    assert [(s.label, s.label_kind, s.lines) for s in out] == [
        ("/tmp/ibstat-a.txt", "file", ["x", ""]), ("/tmp/ibstat-b.txt", "file", ["y"])]
    [s] = seg("head /sys/class/infiniband/*/fw_ver", ["==> /sys/class/infiniband/mlx5_0/fw_ver <==", "28.39"])
    assert s.label is None


def test_long_repeated_lines_stay_fast():
    t = time.perf_counter()
    seg("pdsh -w n1 cat x", ["n1: " + "a: " * 30000] * 20)
    seg(None, ["[1,0]<stdout>:" + " [1,0]" * 20000] * 20)
    seg('for i in 0 1; do echo "== $i"; done', ["== " + "= " * 30000] * 20)
    assert time.perf_counter() - t < 2.0


def test_ingest_pdsh_names_nodes_and_loop_labels_name_devices(tmp_path):
    p = tmp_path / "t.txt"
    p.write_bytes(b"[root@login1 ~]# pdsh -w gpu[01-02] cat /proc/cmdline\r\n"
                  b"gpu01: BOOT_IMAGE=/boot/vmlinuz-6.8.0 ro iommu=pt quiet\r\n"
                  b"gpu02: BOOT_IMAGE=/boot/vmlinuz-6.8.0 ro quiet\r\n"
                  b"$ for i in 0 1; do echo \"== mlx5_$i\"; ibstat mlx5_$i | grep -E 'State|Rate'; done\r\n"
                  b"== mlx5_0\r\n\t\tState: Active\r\n\t\tRate: 400\r\n== mlx5_1\r\n\t\tState: Down\r\n\t\tRate: 10\r\n")
    r = ingest([str(p)])
    pt = [f for f in r.facts if f.fact_type == "kernel.boot_param" and f.name == "iommu"]
    assert [(f.node, f.value, f.source.line) for f in pt] == [("gpu01", "pt", 2)]
    ports = sorted((f.device, f.state, f.rate_gbps, f.source.line) for f in r.facts if f.fact_type == "ib.port")
    assert ports == [("mlx5_0", "Active", 400.0, 6), ("mlx5_1", "Down", 10.0, 9)]


def test_transcript_without_labels_is_unchanged():
    segs = split_transcript(["$ uname -r", "6.8.0", "$ hostname", "gpu-7"])
    assert [(s.command, s.label) for s in segs] == [("uname -r", None), ("hostname", None)]


def test_loop_over_hosts_labels_nodes():
    out = seg('for h in gpu1 gpu2; do echo "== $h"; ssh $h cat /proc/cmdline; done',
              ["== gpu1", "ro iommu=pt", "== gpu2", "ro quiet"])
    assert [(s.label, s.label_kind) for s in out] == [("gpu1", "node"), ("gpu2", "node")]
    out = seg('for i in 1 2; do srun -w gpu$i bash -c \'echo "host $(hostname)"; nproc\'; done',
              ["host gpu1", "8", "host gpu2", "4"])
    assert [(s.label, s.label_kind) for s in out] == [("gpu1", "node"), ("gpu2", "node")]


def test_ingest_prompt_less_file_heads_become_segments(tmp_path):
    p = tmp_path / "heads.txt"
    p.write_text("==> /tmp/a/ibstat.txt <==\n\t\tState: Active\n\t\tRate: 400\n\t\tPhysical state: LinkUp\n"
                 "\t\tBase lid: 1\n\n==> /tmp/b/sysctl.txt <==\nkernel.numa_balancing = 1\n")
    r = ingest([str(p)])
    assert [(i.path.rsplit("/", 1)[-1], i.format) for i in r.inputs] == [("heads.txt#1", "ibstat"), ("heads.txt#2", "sysctl")]
    [s] = [f for f in r.facts if f.fact_type == "kernel.sysctl"]
    assert s.source.line == 8


def test_echo_template_ending_in_an_escaped_blank_does_not_crash():
    # echo "$d $(lspci ... | tr -s '\n\t' '  ')": label and output on one line; the template's
    # trailing blank once left a lone backslash in the label pattern (re.error)
    cmd = ('for d in $(lspci -D -d 15b3: | cut -d" " -f1); do echo "$d $(lspci -s $d -vvv | '
           'grep -E "LnkCap:|LnkSta:" | tr -s "\\n\\t" "  ")"; done')
    out = seg(cmd, ["0000:86:00.0 LnkCap: Port #0, Speed 16GT/s, Width x16 LnkSta: Speed 16GT/s, Width x8"])
    assert len(out) == 1 and out[0].lines[0].startswith("0000:86:00.0")


# -- worker prefixes of Ray and torchrun: cut off in place, one segment kept


def test_ray_prefixes_cut_in_place_with_true_line_numbers():
    out = seg(None, ["(RayTrainWorker pid=11, ip=10.0.0.7) h1:11:12 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.",
                     "driver output",
                     "(RayTrainWorker pid=12, ip=10.0.0.8) h2:12:13 [0] NCCL INFO Using network Socket [repeated 3x across cluster]"], 5)
    assert len(out) == 1
    assert out[0].lines == ["h1:11:12 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.", "driver output",
                            "h2:12:13 [0] NCCL INFO Using network Socket"]
    assert out[0].first_line == 5 and out[0].label is None  # two workers: no single label


def test_torchrun_rank_and_role_prefixes_cut():
    out = seg(None, ["[default0]:gpu-a07:1:1 [0] NCCL INFO Using network IB", "[rank0]:[W ProcessGroupNCCL.cpp:1] x"])
    assert out[0].lines == ["gpu-a07:1:1 [0] NCCL INFO Using network IB", "[W ProcessGroupNCCL.cpp:1] x"]
    assert (out[0].label, out[0].label_kind) == ("0", "rank")


def test_lookalike_parenthesis_and_brackets_that_are_no_worker_prefix_stay():
    lines = ["(base) pid=3 is not a prefix", "[rank] : no number", "(see pid=4 above) note", "[default]: x",
             "(pid=x) not a number", "[rank3] no colon"]
    assert seg(None, lines)[0].lines == lines


def test_prefixed_nccl_log_reaches_the_nccl_parser(tmp_path):
    log = tmp_path / "ray.log"
    log.write_text("(RayTrainWorker pid=11904, ip=jwb0582i) jwb0582:11904:12354 [0] NCCL INFO "
                   "NCCL_SOCKET_IFNAME set by environment to ^lo,docker,veth\n")
    res = ingest([str(log)])
    env = [f for f in res.facts if f.fact_type == "nccl.env"]
    assert [(f.name, f.value) for f in env] == [("NCCL_SOCKET_IFNAME", "^lo,docker,veth")]
