"""torch.utils.collect_env / vllm collect-env / sglang check_env reports, as tickets paste them.

The fixture's head (down to the CPU section) is vLLM #7943's report; its CPU, package and topology
parts are completed in the tool's own format, with the underline codes vLLM prints around the
topology header. The other samples are excerpts of reports pasted in PyTorch, vLLM and SGLang
issues (#20311, #25848, sglang #1183).
"""

import doctest

from clusterdx.facts.document import Document
from clusterdx.facts.ingest import ingest
from clusterdx.facts.parsers import collect_env
from tests.parsers.helpers import FORMATS, of_type, parse_text

FMT = "torch-collect-env"
COMPOSITE = FORMATS.parent / "composite"


def test_doctests():
    assert doctest.testmod(collect_env).failed == 0


def test_vllm_report_with_embedded_lscpu_and_topology():
    ctx = parse_text(FMT, (COMPOSITE / "vllm-collect-env-0.5.txt").read_text(), name="vllm-collect-env-0.5.txt")
    assert [(d.gpu, d.name, d.driver_version) for d in of_type(ctx, "gpu.device")] == [
        (k, "NVIDIA A10", "470.129.06") for k in range(4)]
    [s] = of_type(ctx, "gpu.summary")
    assert s.gpus == 4 and s.models == ["NVIDIA A10"]
    # the pip and the conda line name the same wheel: one version
    assert {(v.version, v.version_num) for v in of_type(ctx, "nccl.version")} == {("2.20.5", 22005)}
    [k] = of_type(ctx, "kernel.version")
    assert (k.release, k.arch) == ("5.4.56.bsk.9-amd64", "x86_64")
    [cpu] = of_type(ctx, "cpu.info")
    assert (cpu.sockets, cpu.cores_per_socket) == (2, 32)
    assert cpu.source.line == 31  # the input's own line numbers (the line after "CPU:"), not the section's
    gpus = {g.gpu: g for g in of_type(ctx, "topo.gpu")}
    assert sorted(gpus) == [0, 1, 2, 3] and gpus[2].numa_node == 1
    links = {(t.a, t.b): t.link for t in of_type(ctx, "topo.link")}
    assert links[("GPU0", "GPU1")] == "PHB" and links[("GPU1", "GPU2")] == "SYS"


def test_pytorch_1_1_report_read_as_it_was_pasted():
    text = ("PyTorch version: 1.1.0\nIs debug build: No\nCUDA used to build PyTorch: 10.0.130\n\n"
            "OS: Ubuntu 16.04.6 LTS\nGCC version: (Ubuntu 5.4.0-6ubuntu1~16.04.11) 5.4.0 20160609\n"
            "CMake version: Could not collect\n\nPython version: 3.7\nIs CUDA available: Yes\n"
            "CUDA runtime version: 10.0.130\nGPU models and configuration: \nGPU 0: TITAN V\nGPU 1: TITAN V\n"
            "...\n\nNvidia driver version: 418.67\n\nVersions of relevant libraries:\n[pip] numpy==1.16.4\n"
            "[conda] nccl                      2.4.8.1              h51cf6c1_0\n")
    ctx = parse_text(FMT, text)
    assert [d.name for d in of_type(ctx, "gpu.device")] == ["TITAN V", "TITAN V"]
    assert [v.version for v in of_type(ctx, "nccl.version")] == ["2.4.8"]
    assert of_type(ctx, "kernel.version") == []  # 1.1 printed no platform string


def test_one_gpu_is_named_on_the_key_line_and_could_not_collect_is_no_gpu():
    one = parse_text(FMT, "PyTorch version: 2.2.1\nIs CUDA available: True\n"
                          "GPU models and configuration: GPU 0: NVIDIA GeForce RTX 4090\n")
    assert [(d.gpu, d.name) for d in of_type(one, "gpu.device")] == [(0, "NVIDIA GeForce RTX 4090")]
    none = parse_text(FMT, "PyTorch version: 2.2.1\nIs CUDA available: False\n"
                           "GPU models and configuration: Could not collect\n"
                           "Python platform: Linux-6.5.0-1015-aws-x86_64-with-glibc2.35\n")
    assert of_type(none, "gpu.device") == [] and of_type(none, "gpu.summary") == []
    assert [k.release for k in of_type(none, "kernel.version")] == ["6.5.0-1015-aws"]


def test_vllm_0_11_aligned_keys_and_banners():
    text = ("==============================\n        System Info\n==============================\n"
            "OS                           : Ubuntu 22.04.5 LTS (x86_64)\n"
            "==============================\n       PyTorch Info\n==============================\n"
            "PyTorch version              : 2.8.0+cu128\nIs debug build               : False\n"
            "CUDA used to build PyTorch   : 12.8\n"
            "==============================\n      Python Environment\n==============================\n"
            "Python platform              : Linux-5.15.0-144-generic-x86_64-with-glibc2.35\n"
            "==============================\n       CUDA / GPU Info\n==============================\n"
            "Is CUDA available            : True\nGPU models and configuration : \n"
            "GPU 0: NVIDIA H20\nGPU 1: NVIDIA H20\n\nNvidia driver version        : 570.133.20\n"
            "==============================\n          CPU Info\n==============================\n"
            "Architecture:                         x86_64\nCPU(s):                               192\n"
            "Thread(s) per core:                   2\nCore(s) per socket:                   48\nSocket(s):                            2\n"
            "==============================\nVersions of relevant libraries\n==============================\n"
            "[pip3] nvidia-nccl-cu12==2.27.3\n")
    ctx = parse_text(FMT, text)
    assert [(d.name, d.driver_version) for d in of_type(ctx, "gpu.device")] == [("NVIDIA H20", "570.133.20")] * 2
    assert [v.version for v in of_type(ctx, "nccl.version")] == ["2.27.3"]
    [cpu] = of_type(ctx, "cpu.info")
    assert (cpu.sockets, cpu.cores_per_socket) == (2, 48)
    assert collect_env.sniff(Document.from_text(text)) >= 0.95


def test_sglang_check_env_groups_gpus():
    text = ("Python: 3.11.7 (main, Dec 15 2023, 18:12:31) [GCC 11.2.0]\nCUDA available: True\n"
            "GPU 0,1,2,3: NVIDIA RTX A6000\nGPU 0,1,2,3 Compute Capability: 8.6\n"
            "CUDA Driver Version: 545.23.08\nPyTorch: 2.4.0+cu121\nsglang: 0.2.13\nflashinfer: 0.1.5+cu121torch2.4\n"
            "NVIDIA Topology: \n"
            "        GPU0    GPU1    GPU2    GPU3    CPU Affinity    NUMA Affinity   GPU NUMA ID\n"
            "GPU0     X      SYS     SYS     SYS     0-15,32-47      0               N/A\n"
            "GPU1    SYS      X      SYS     SYS     0-15,32-47      0               N/A\n"
            "GPU2    SYS     SYS      X      SYS     16-31,48-63     1               N/A\n"
            "GPU3    SYS     SYS     SYS      X      16-31,48-63     1               N/A\n")
    ctx = parse_text(FMT, text)
    assert [(d.gpu, d.driver_version) for d in of_type(ctx, "gpu.device")] == [
        (k, "545.23.08") for k in range(4)]
    assert {t.link for t in of_type(ctx, "topo.link")} == {"SYS"}


def test_a_broken_topology_section_costs_that_section_only():
    text = ("PyTorch version: 2.3.0\nIs debug build: False\nCUDA used to build PyTorch: 12.1\n"
            "GPU models and configuration:\nGPU 0: NVIDIA L4\n\nNvidia driver version: 550.54.15\n"
            "GPU Topology:\nthis is not a matrix\n")
    ctx = parse_text(FMT, text)
    assert [d.name for d in of_type(ctx, "gpu.device")] == ["NVIDIA L4"]
    assert of_type(ctx, "topo.link") == []


def test_lookalikes_are_not_a_report():
    # a sentence naming a version, a user's bullet list, and lscpu / topo -m on their own
    for text in ("PyTorch version: 2.3.0 is what we run on every node\n",
                 "- PyTorch version: 2.3.0\n- Nvidia driver version: 550.54.15\n- CUDA available: yes\n",
                 (FORMATS / "lscpu.txt").read_text() if (FORMATS / "lscpu.txt").exists() else "Architecture: x86_64\n"):
        assert collect_env.sniff(Document.from_text(text)) == 0.0


def test_ingest_picks_the_report_over_its_embedded_tools_and_keeps_crlf_lines(tmp_path):
    p = tmp_path / "env.txt"
    p.write_bytes((COMPOSITE / "vllm-collect-env-0.5.txt").read_bytes().replace(b"\n", b"\r\n"))
    res = ingest([p])
    assert [r.format for r in res.inputs] == [FMT]
    assert {f.fact_type for f in res.facts} >= {"gpu.device", "nccl.version", "cpu.info", "topo.link"}


def test_prose_does_not_read_the_cuda_build_line_as_a_pytorch_version():
    ctx = parse_text("prose", "Our setup, from the report:\nCUDA used to build PyTorch: 10.0.130\n"
                              "and we upgraded to PyTorch 1.1.0 last week, since then it is slower.\n")
    assert {f.version for f in of_type(ctx, "reported.version") if f.component == "pytorch"} == {"1.1.0"}
