"""Tool output inside other documents: NCCL lines in prose or nccl-tests output, code blocks of a
ticket's Markdown, launch lines of transcript commands (facts/embedded.py, facts/ingest.py)."""

from clusterdx.facts.document import Document
from clusterdx.facts.ingest import ingest, ingest_documents


def _ingest(text: str, name: str = "notes.md"):
    return ingest_documents([Document.from_text(text, name=name)])


def _types(res) -> set[str]:
    return {f.fact_type for f in res.facts}


def test_prefixless_nccl_lines_in_prose_keep_their_line_numbers():
    res = _ingest("I only see GDRDMA on one node, for example:\n"
                  "9[1a000] -> 2[6b000] [send] via NET/IB/0/GDRDMA\n"
                  "9[1a000] -> 2[6b000] [receive] via NET/IB/1\n"
                  "what causes this?\n")
    chans = sorted((f.gdr, f.source.line) for f in res.facts if f.fact_type == "nccl.channel")
    assert chans == [(False, 3), (True, 2)]


def test_one_quoted_env_line_in_prose_is_read_but_prose_keeps_the_document():
    res = _ingest("NCCL reports 0 nvls channels and the bandwidth is low. The log says:\n"
                  "NCCL_P2P_LEVEL set by environment to LOC\n")
    assert [r.format for r in res.inputs] == ["prose"]
    assert [(f.name, f.value) for f in res.facts if f.fact_type == "nccl.env"] == [("NCCL_P2P_LEVEL", "LOC")]


def test_a_file_of_prefixless_lines_is_an_nccl_log():
    res = _ingest("NCCL_P2P_LEVEL set by environment to LOC\n", name="nccl_debug.txt")
    assert [r.format for r in res.inputs] == ["nccl-debug"]


def test_nccl_lines_inside_nccl_tests_output_are_read():
    text = ("# nThread 1 nGpus 1 minBytes 8 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
            "#\n# Using devices\n"
            "#   Rank  0 Pid  28329 on   SAIS1020 device  0 [0x01] NVIDIA RTX A6000\n"
            "SAIS1020:28329:28341 [0] NCCL INFO NET/IB : No device found.\n"
            "SAIS1020:28329:28341 [0] NCCL INFO Using network Socket\n")
    res = _ingest(text, name="log.txt")
    assert res.inputs[0].format == "nccl-tests"
    assert "nccl.net" in _types(res) and "nccltests.run" in _types(res)


def test_channel_excerpt_ending_in_the_benchmark_summary_is_an_nccl_log():
    text = ("swat1-04:2017630:2017699 [5] NCCL INFO Channel 03/0 : 5[5] -> 12[4] [send] via NET/IB/3\n"
            "swat1-04:2017630:2017700 [4] NCCL INFO Channel 03/0 : 13[5] -> 4[4] [receive] via NET/IB/3\n"
            "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 33.3227\n")
    res = _ingest(text, name="log.txt")
    assert res.inputs[0].format == "nccl-debug"
    assert any(f.fact_type == "nccl.transport_summary" and f.gdr_connections == 0 for f in res.facts)


def test_code_block_of_a_tool_output_is_an_input_of_its_own():
    text = ("# slow all-reduce on g5.48xlarge\n\nOutput of `nvidia-smi topo -m`:\n\n```\n"
            "        GPU0    GPU1    CPU Affinity    NUMA Affinity\n"
            "GPU0     X      PHB     0-191   0-1\n"
            "GPU1    PHB      X      0-191   0-1\n```\n\nAny idea why?\n")
    res = _ingest(text)
    assert "topo.link" in _types(res)
    assert "reported.context" in _types(res)  # the words around the block are still read


def test_code_block_of_program_text_is_no_input():
    text = ("# deadlock with several GPUs\n\nMy script hangs, simplest code:\n\n```python\n"
            "import torch.distributed as dist\ndist.init_process_group(backend='nccl')\n```\n")
    res = _ingest(text)
    assert [r.path for r in res.inputs] == ["notes.md"]
    assert "reported.symptom" in _types(res)


def test_launch_line_of_a_transcript_command_is_read_whatever_it_printed(tmp_path):
    text = ("root@vm:/nhc# /opt/openmpi/bin/mpirun -np 8 -x NCCL_TOPO_FILE=/nhc/topo.xml /opt/nccl-tests/build/all_reduce_perf -b 16G -e 16G -g 1\n"
            "ERROR:  nhc:  Health check failed:  check_nccl_allreduce: NCCL allreduce, BUS BW (expected >=431.0 GB/s, but measured 15.1 GB/s)\n"
            "root@vm:/nhc# ls\n")
    (tmp_path / "paste.txt").write_text(text)
    res = ingest([tmp_path / "paste.txt"])
    launches = [f for f in res.facts if f.fact_type == "launch.command"]
    assert launches and "NCCL_TOPO_FILE=/nhc/topo.xml" in launches[0].env_set
    assert "health.finding" in _types(res)


def test_quoted_health_check_line_in_prose():
    res = _ingest("Two checks fail on every node:\n\n"
                  "`ERROR:  nhc:  Health check failed:  check_nvlink_status: GPU 0 has nvlinks inactive: Link 4: Inactive`\n")
    found = [f for f in res.facts if f.fact_type == "health.finding"]
    assert [(f.check, f.status) for f in found] == [("check_nvlink_status", "fail")]
    assert not found[0].detail.endswith("`")


def test_silent_rules_on_the_tickets_words_are_not_reported_as_checked_and_fine(tmp_path, kb):
    from clusterdx.engine.diagnose import collect_paths, diagnose

    (tmp_path / "notes.md").write_text("Our all_reduce_perf test hangs on two MI100 GPUs.\n")
    report = diagnose(collect_paths([tmp_path]), kb=kb)
    passed = {r.rule for r in report.rules if r.passed}
    silent_words = {r.rule for r in report.rules if r.outcome == "silent" and r.rule.startswith("reported-")}
    assert silent_words and not (passed & silent_words)
    assert any(h.id == "iommu-translation-on-bare-metal" for h in report.hypotheses)


def test_nccl_lines_in_a_markdown_blockquote_are_read():
    # a ticket that quotes its log with '> ' (and an srun label before the NCCL prefix)
    res = _ingest("When running with NCCL_DEBUG=INFO you may see this message:\n\n"
                  "> 3: ip-10-1-100-254:18990:18990 [3] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot "
                  "open shared object file: No such file or directory No plugin found (libnccl-net.so), using "
                  "internal implementation\n\n"
                  "> > 0: gpu-a01:411:411 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n")
    plugins = [(f.status, f.node, f.source.line) for f in res.facts if f.fact_type == "nccl.plugin"]
    assert plugins == [("not_found", "ip-10-1-100-254", 3)]
    assert [f.net for f in res.facts if f.fact_type == "nccl.net"] == ["Socket"]


def test_a_quoted_sentence_is_not_a_log_line():
    res = _ingest("> NCCL is slow on our cluster and the plugin is not found, any idea?\n")
    assert not [f for f in res.facts if f.fact_type in ("nccl.plugin", "nccl.net")]


def test_prompt_line_of_a_launcher_in_a_code_block_is_read_over_unknown_output():
    # a ticket's block: the user's srun line over the script's own printout, which no format knows
    text = ("Case 1:\n\n```\n$ srun -n 2 -c 18 --gpus-per-task 1 python3 bench.py --use-ddp\r\n"
            "Iter #0: 687.1 img/sec per GPU\r\nIter #1: 669.4 img/sec per GPU\r\n```\n\n"
            "But with `--gpus` instead (Case 2):\n\n```\n$ srun -n 2 -c 18 --gpus 2 python3 bench.py --use-ddp\n"
            "Iter #0: 791.6 img/sec per GPU\n```\n\nWhy is the first one slower?\n")
    res = _ingest(text)
    runs = [f for f in res.facts if f.fact_type == "launch.command"]
    assert [(r.launcher, r.ntasks, r.gpus_per_task) for r in runs] == [("srun", 2, 1), ("srun", 2, None)]


def test_prompt_line_of_a_non_launcher_in_a_code_block_stays_the_users_words():
    text = ("Our benchmark:\n\n```\n$ python3 bench.py --use-ddp --num-iter 2\n"
            "Iter #0: 687.1 img/sec per GPU\n```\n\nIs that slow?\n")
    res = _ingest(text)
    assert "launch.command" not in _types(res)
