import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.parsers import launch_cmdline
from tests.parsers.helpers import FORMATS, of_type, parse_or_refuse, parse_text, sample_files, sniff_file

CONTAINER = Path(__file__).parents[1] / "fixtures" / "container"
MINE = {"docker-run.sh", "docker-run-default-shm.txt", "srun-pyxis.sbatch", "mpirun.sh", "torchrun.sh",
        "bind-wrapper.sh", "taskset-table.sbatch"}


def parse_file(name):
    return parse_text("launch-cmdline", (CONTAINER / name).read_text(), name=name)


def test_doctests():
    assert doctest.testmod(launch_cmdline).failed == 0


def test_docker_run_script():
    ctx = parse_file("docker-run.sh")
    docker, torch = of_type(ctx, "launch.command")
    assert docker.launcher == "docker" and (docker.source.line, docker.source.end_line) == (6, 19)
    assert docker.forwarded_env == ["NCCL_DEBUG"]
    assert docker.env_set[-1] == "WANDB_API_KEY=<redacted>" and "0123456789" not in docker.command
    assert docker.env_names == ["NCCL_DEBUG", "NCCL_IB_HCA", "NCCL_SOCKET_IFNAME", "WANDB_API_KEY"]
    assert docker.script_env == ["NCCL_DEBUG"]
    assert torch.launcher == "torchrun" and torch.nproc_per_node == 8 and torch.nodes == 2
    [spec] = of_type(ctx, "container.spec")
    assert spec.runtime == "docker" and spec.name == "gpt70b-rank0"
    assert spec.ipc_host is True and spec.network_host is True and spec.shm_bytes is None
    assert spec.memlock_unlimited is True and spec.cap_add == ["IPC_LOCK", "SYS_NICE"]
    assert spec.devices == ["/dev/infiniband"] and spec.infiniband_device is True
    assert spec.gpus == "all" and spec.nccl_conf_mounted is True and spec.topo_file_mounted is False
    assert spec.numa_syscalls is True
    env = {v.name: v for v in of_type(ctx, "env.var") if v.scope == "container"}
    assert env["NCCL_SOCKET_IFNAME"].value == "bond0" and env["NCCL_SOCKET_IFNAME"].source.line == 12
    assert env["WANDB_API_KEY"].redacted
    [dump] = [d for d in of_type(ctx, "env.dump") if d.filter == "container spec"]
    assert dump.complete is False and dump.filter == "container spec" and "NCCL_DEBUG" in dump.names


def test_docker_run_defaults_give_64mib_shm():
    ctx = parse_file("docker-run-default-shm.txt")
    [spec] = of_type(ctx, "container.spec")
    assert spec.shm_bytes == 64 * 2 ** 20 and spec.ipc_host is False and spec.network_host is False
    assert spec.memlock_unlimited is None and spec.infiniband_device is False and spec.numa_syscalls is False
    assert spec.gpus == "device=0,1,2,3"


def test_srun_pyxis_job_script():
    ctx = parse_file("srun-pyxis.sbatch")
    srun, sbatch = of_type(ctx, "launch.command")
    assert sbatch.launcher == "sbatch" and (sbatch.nodes, sbatch.ntasks_per_node) == (2, 8)
    assert (sbatch.source.line, sbatch.source.end_line) == (2, 6) and sbatch.command.startswith("#SBATCH --job-name")
    assert srun.launcher == "srun" and srun.container_image == "nvcr.io#nvidia/pytorch:25.03-py3"
    assert srun.forwarded_env == ["NCCL_IB_HCA", "NCCL_IB_QPS_PER_CONNECTION"]
    assert srun.script_env == ["NCCL_IB_HCA", "NCCL_IB_QPS_PER_CONNECTION", "NCCL_IB_SL", "NCCL_TOPO_FILE"]
    assert srun.export_mode == "ALL,NCCL_DEBUG=WARN" and srun.env_set == ["NCCL_DEBUG=WARN"]
    assert (srun.nodes, srun.ntasks_per_node, srun.mpi) == (2, 8, "pmix")
    assert srun.cpu_bind == "verbose,map_ldom:0,0,0,0,1,1,1,1" and srun.gpu_bind == "closest"
    [spec] = of_type(ctx, "container.spec")
    assert spec.runtime == "pyxis" and spec.topo_file_mounted is True
    assert spec.mounts == ["/lustre/fsw/llm/mlops:/workspace/data", "/opt/topo:/opt/topo"]
    # pyxis: the image's ENV may win, so nothing is said about the container's values; the
    # script's own exports are the launching shell's environment
    assert not [v for v in of_type(ctx, "env.var") if v.scope == "container"]
    exported = {v.name: v.value for v in of_type(ctx, "env.var")}
    assert exported["NCCL_IB_SL"] == "3" and len(exported) == 4
    [dump] = of_type(ctx, "env.dump")
    assert dump.filter == "export lines of the script" and dump.complete is False


def test_mpirun():
    ctx = parse_file("mpirun.sh")
    [mpi] = ctx.facts
    assert mpi.launcher == "mpirun" and mpi.ntasks == 16 and mpi.nodes == 2 and mpi.ntasks_per_node == 8
    assert mpi.forwarded_env == ["NCCL_DEBUG", "NCCL_IB_QPS_PER_CONNECTION", "NCCL_IB_HCA", "LD_LIBRARY_PATH"]
    assert mpi.env_set == ["NCCL_DEBUG=INFO"] and mpi.cpu_bind == "bind-to=numa map-by=ppr:8:node"


def test_torchrun_env_prefix_numactl_and_pipe():
    ctx = parse_file("torchrun.sh")
    [t] = of_type(ctx, "launch.command")
    assert t.launcher == "torchrun" and t.nproc_per_node == 8 and t.nodes == 2 and t.numa_binding == "node"
    assert t.env_set == ["NCCL_DEBUG=INFO", "NCCL_NVLS_ENABLE=0", "HF_TOKEN=<redacted>"]
    assert "hf_abc" not in t.command and (t.source.line, t.source.end_line) == (4, 7)
    [b] = of_type(ctx, "launch.binding")
    assert (b.tool, b.cpu_nodes, b.mem_nodes, b.cpus) == ("numactl", [0], [0], [])
    assert "hf_abc" not in b.command and (b.source.line, b.source.end_line) == (4, 7)
    assert {f.fact_type for f in ctx.facts} == {"launch.command", "launch.binding"}


def test_prompt_numactl_unbalanced_quote_and_nesting():
    ctx = parse_text("launch-cmdline",
                     "user@login01:~$ numactl -N 1 -m 1 python -m torch.distributed.run --nproc_per_node 4 t.py 'oops\n"
                     "srun -l bash -c 'torchrun --nproc-per-node=gpu x.py' && echo done\n"
                     "kubectl exec -it pod-0 -c trainer -- torchrun --nnodes 2 y.py\n"
                     "apptainer exec --nv -B /opt/topo:/opt/topo img.sif python z.py\n")
    launches = of_type(ctx, "launch.command")
    assert [f.launcher for f in launches] == ["torchrun", "srun", "torchrun", "kubectl", "torchrun", "other"]
    assert launches[0].numa_binding == "numactl -N 1 -m 1" and launches[0].nproc_per_node == 4
    assert launches[2].nproc_per_node is None and launches[4].nodes == 2
    [spec] = of_type(ctx, "container.spec")
    assert spec.runtime == "apptainer" and spec.mounts == ["/opt/topo:/opt/topo"]


def test_no_launcher_is_not_applicable():
    with pytest.raises(NotApplicable):
        parse_text("launch-cmdline", "echo srun is great\npython train.py\n")
    with pytest.raises(NotApplicable):
        parse_text("launch-cmdline", "docker ps\n# srun --container-image=x y\n")


def test_truncated_line_still_parses_what_is_there():
    ctx = parse_text("launch-cmdline", "docker run --gpus all --shm-size=8g -e \\\n")
    [launch] = of_type(ctx, "launch.command")
    [spec] = of_type(ctx, "container.spec")
    assert spec.shm_bytes == 8 * 2 ** 30 and launch.container_image == ""


@pytest.mark.parametrize("path", sample_files(FORMATS, CONTAINER), ids=lambda p: p.name)
def test_sniff_over_fixtures(path):
    score = sniff_file(launch_cmdline.sniff, path)
    if path.name in MINE:
        assert score >= 0.8
    else:
        assert score < 0.3


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000))
def test_never_raises_anything_else(text):
    parse_or_refuse("launch-cmdline", text)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000))
def test_never_raises_on_bytes(data):
    parse_or_refuse("launch-cmdline", data.decode("latin-1"))


_WORDS = st.sampled_from(["docker", "run", "srun", "mpirun", "torchrun", "kubectl", "exec", "--", "-e", "-x",
                          "--container-mounts=", "--container-env=A,B", "-v", "a:b", "--shm-size", "1g", "=",
                          "A=1", "'", '"', "\\", ";", "|", "&&", "bash", "-c", "numactl", "--mount", "type=tmpfs",
                          "enroot", "start", "apptainer", "-B", "--ulimit", "memlock=-1", "--export=NONE",
                          "-np", "-H", "--nnodes", "1:x", "python", "-m", "torch.distributed.run", "\n"])


@settings(max_examples=200, deadline=None)
@given(st.lists(_WORDS, max_size=30))
def test_never_raises_on_launcher_soup(words):
    try:
        parse_text("launch-cmdline", " ".join(words))
    except (ParseError, NotApplicable):
        pass


def test_binding_table_in_a_wrapper_script():
    ctx = parse_file("bind-wrapper.sh")
    binds = of_type(ctx, "launch.binding")
    assert [b.selector for b in binds] == [f"SLURM_LOCALID={k}" for k in range(8)]
    assert binds[0].cpus == list(range(0, 14)) and binds[0].mem_nodes == [0] and binds[0].source.line == 9
    # rank 6 binds its CPUs on NUMA 1 but its memory to node 0: the table says so, a rule can see it
    assert binds[6].cpus[0] == 84 and binds[6].mem_nodes == [0]
    assert binds[7].physcpubind == "98-111" and binds[7].mem_nodes == [1]  # short options -C / -m
    env = {v.name: v.value for v in of_type(ctx, "env.var")}
    # an export whose value the shell expands ($IFACE) is not a value we know
    assert env == {"NCCL_IB_HCA": "mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11",
                   "CUDA_DEVICE_MAX_CONNECTIONS": "1"}
    assert not of_type(ctx, "launch.command")


def test_taskset_lines_crlf_and_bash_c():
    ctx = parse_file("taskset-table.sbatch")
    binds = of_type(ctx, "launch.binding")
    assert [(b.tool, b.physcpubind, b.cpus[:2]) for b in binds] == [
        ("taskset", "${CPUS[$SLURM_LOCALID]}", []), ("taskset", "0-3,112-115", [0, 1]),
        ("taskset", "0xff00", [8, 9])]
    assert binds[0].source.line == 7 and binds[1].cpus[-1] == 115
    srun, sbatch = of_type(ctx, "launch.command")
    assert srun.cpu_bind == "none" and srun.script_env == ["NCCL_DEBUG", "OMP_NUM_THREADS"]
    assert (sbatch.launcher, sbatch.nodes, sbatch.ntasks_per_node) == ("sbatch", 4, 8)


def test_sbatch_directives_after_the_first_command_are_ignored():
    ctx = parse_text("launch-cmdline", "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --export=NONE,NCCL_DEBUG=INFO\n"
                                       "srun python t.py\n#SBATCH -N 64\n")
    srun, sbatch = of_type(ctx, "launch.command")
    assert sbatch.nodes == 2 and sbatch.export_mode == "NONE,NCCL_DEBUG=INFO"
    assert sbatch.env_set == ["NCCL_DEBUG=INFO"] and sbatch.source.end_line == 3


def test_binding_queries_and_echoes_are_not_bindings():
    for text in ("numactl --hardware\n", "taskset -p 1234\n", "numactl --show\n",
                 "echo numactl --cpunodebind=0 python x.py\n", "# numactl --membind=0 python\n"):
        with pytest.raises(NotApplicable):
            parse_text("launch-cmdline", text)
    ctx = parse_text("launch-cmdline", "taskset -pc 0-7 4242\nnumactl -N0 -l python t.py\n")
    a, b = of_type(ctx, "launch.binding")
    assert (a.pid, a.cpus) == (4242, list(range(8))) and (b.cpu_nodes, b.localalloc) == ([0], True)


def test_long_line_of_bindings_redacts_once():
    ctx = parse_text("launch-cmdline", "numactl --membind=0 " * 3000 + "python x.py\n")
    binds = of_type(ctx, "launch.binding")
    assert len(binds) == 3000 and binds[0].command is binds[-1].command


def test_gpus_per_task_on_srun_and_in_directives():
    ctx = parse_text("launch-cmdline", "$ srun -N 1 -n 4 --gpus-per-task=a100:1 python train.py\r\n")
    [srun] = of_type(ctx, "launch.command")
    assert (srun.nodes, srun.ntasks, srun.gpus_per_task) == (1, 4, 1)
    ctx = parse_text("launch-cmdline", "#!/bin/bash\n#SBATCH --ntasks-per-node=4\n#SBATCH --gpus-per-task 2\n"
                                       "srun --gpus-per-node=8 python t.py\n")
    srun, sbatch = of_type(ctx, "launch.command")
    assert (sbatch.ntasks_per_node, sbatch.gpus_per_task) == (4, 2)
    assert srun.gpus_per_task is None  # --gpus-per-node is not per task


def test_job_script_pasted_below_words_keeps_its_directives():
    # the script's shebang starts its header again: the ticket's words above it are no command
    ctx = parse_text("launch-cmdline", "all_reduce_perf slow on one node with srun\n\nOur job script:\n\n"
                                       "#!/bin/bash\n#SBATCH -N 1\n#SBATCH --gpus-per-task=1\nsrun all_reduce_perf -g 1\n")
    srun, sbatch = of_type(ctx, "launch.command")
    assert (sbatch.launcher, sbatch.nodes, sbatch.gpus_per_task) == ("sbatch", 1, 1)
    ctx = parse_text("launch-cmdline", "all_reduce_perf slow\n#SBATCH -N 1\nsrun all_reduce_perf -g 1\n")
    assert [f.launcher for f in of_type(ctx, "launch.command")] == ["srun"]  # no script header: not directives


def test_mpirun_hosts_masked_before_pasting_count_as_distinct():
    ctx = parse_text("launch-cmdline", "mpirun --allow-run-as-root -np 2 -host *,* -x NCCL_DEBUG=INFO all_reduce_perf -g 1\n")
    assert of_type(ctx, "launch.command")[0].nodes == 2
    ctx = parse_text("launch-cmdline", "mpirun -np 16 -H xxx:8,xxx:8 all_reduce_perf -g 1\n")
    assert of_type(ctx, "launch.command")[0].nodes == 2
    # real names: a host given twice is one node
    ctx = parse_text("launch-cmdline", "mpirun -np 16 -H gpu-a01:8,gpu-a01:8 all_reduce_perf -g 1\n")
    assert of_type(ctx, "launch.command")[0].nodes == 1


WRAPPER = ("#!/bin/bash\r\nAPP=\"${@}\"\r\nlet local_rank=$OMPI_COMM_WORLD_LOCAL_RANK%4\r\ncase ${local_rank} in\r\n"
           "[0])\r\n  export NCCL_IB_HCA=mlx5_0:1\r\n  numactl --cpunodebind=0 --membind=0 \\\r\n  $APP\r\n  ;;\r\n"
           "[1])\r\n  export NCCL_IB_HCA=mlx5_1:1\r\n  numactl --cpunodebind=1 --membind=1 \\\r\n  $APP\r\n  ;;\r\nesac\r\n")


def test_per_rank_table_exporting_different_values():
    ctx = parse_text("launch-cmdline", WRAPPER)
    [env] = of_type(ctx, "launch.rank_env")
    assert (env.name, env.selector, env.values, env.arms) == ("NCCL_IB_HCA", "local_rank", ["mlx5_0:1", "mlx5_1:1"], 2)
    # the arm's label on its own line, as a glob, still names the binding's rank
    assert [b.selector for b in of_type(ctx, "launch.binding")] == ["local_rank=0", "local_rank=1"]
    # no single value of the script's environment: the last arm's value is not an env.var
    assert not [v for v in of_type(ctx, "env.var") if v.name == "NCCL_IB_HCA"]


def test_per_rank_table_with_one_value_everywhere_is_no_rank_env():
    same = WRAPPER.replace("mlx5_1:1", "mlx5_0:1")
    ctx = parse_text("launch-cmdline", same)
    assert not of_type(ctx, "launch.rank_env")
    assert [v.value for v in of_type(ctx, "env.var") if v.name == "NCCL_IB_HCA"] == ["mlx5_0:1"]


def test_exports_outside_a_table_are_no_rank_env():
    ctx = parse_text("launch-cmdline", "export NCCL_IB_HCA=mlx5_0\nsrun python t.py\nexport NCCL_IB_HCA=mlx5_1\n")
    assert not of_type(ctx, "launch.rank_env")
    # values the shell expands per rank are not literal settings
    ctx = parse_text("launch-cmdline", "case $SLURM_LOCALID in\n0) export NCCL_IB_HCA=$HCA0 ;;\n"
                                       "1) export NCCL_IB_HCA=$HCA1 ;;\nesac\nsrun python t.py\n")
    assert not of_type(ctx, "launch.rank_env")
