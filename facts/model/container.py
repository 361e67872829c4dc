"""Container and launch configuration: what a container spec or a launch command line gives a job.

``container.spec`` is read from ``docker inspect``, Kubernetes manifests (Pod, Job, Deployment,
kubeflow PyTorchJob/MPIJob ... any object holding a pod spec) and container launch lines
(``docker run``, ``srun --container-image``, ``enroot start``, ``apptainer exec``). A field is
None when the source does not say (not the same as False: ``memlock_unlimited=None`` means the
limit is inherited from the daemon or the job, which the spec does not show).

``launch.command`` is one launcher invocation on a command line (``docker run``, ``srun``,
``mpirun``, ``torchrun``, ``kubectl``); a line such as ``srun ... torchrun ...`` yields one fact
per launcher.

Environment a spec sets inside the container is given as ``env.var`` / ``env.dump`` facts
(scope ``container``; see :mod:`clusterdx.facts.model.env`).
"""

from clusterdx.facts.base import Fact


class ContainerSpec(Fact):
    fact_type = "container.spec"
    doc = "How a container is configured for GPU/RDMA work (shm, IPC, memlock, devices, mounts, capabilities)."
    #: docker | kubernetes | pyxis | enroot | apptainer | unknown
    runtime: str
    #: container name (Kubernetes: ``<pod>/<container>``; '' when not named)
    name: str = ""
    image: str = ""
    privileged: bool | None = None
    #: shares the host IPC namespace (docker --ipc=host, k8s hostIPC; enroot/pyxis always)
    ipc_host: bool | None = None
    #: shares the host network namespace (docker --network=host, k8s hostNetwork; enroot/pyxis always)
    network_host: bool | None = None
    #: size of /dev/shm in bytes (docker ShmSize/--shm-size, default 64 MiB; k8s: emptyDir
    #: medium Memory sizeLimit on /dev/shm, the runtime's 64 MiB when nothing is mounted there).
    #: None when ipc_host is True (the host's /dev/shm is used) or the size is not known.
    shm_bytes: int | None = None
    #: RLIMIT_MEMLOCK unlimited (docker --ulimit memlock=-1); None when inherited/not shown
    memlock_unlimited: bool | None = None
    #: capabilities added (IPC_LOCK, SYS_NICE, SYS_RESOURCE ...), upper case without CAP_
    cap_add: list[str] = []
    #: host device paths given to the container (/dev/infiniband/uverbs0, /dev/infiniband ...)
    devices: list[str] = []
    #: RDMA verbs devices reach the container (device, hostPath, RDMA resource, or privileged)
    infiniband_device: bool | None = None
    #: GPUs requested: 'all', a count ('8'), 'device=0,1', '' when none/unknown
    gpus: str = ""
    #: RDMA / SR-IOV device-plugin resources requested (rdma/rdma_shared_device_a, nvidia.com/hostdev ...)
    rdma_resources: list[str] = []
    #: huge page resources or mounts (``hugepages-2Mi=4Gi``), comma separated
    hugepages: str = ""
    #: mounts as ``source:destination`` (k8s: source is the hostPath, else ``<kind>/<name>``)
    mounts: list[str] = []
    #: a mount covers the NCCL_TOPO_FILE path (or /var/run/nvidia-topologyd)
    topo_file_mounted: bool | None = None
    #: a mount covers /etc/nccl.conf, ~/.nccl.conf or NCCL_CONF_FILE
    nccl_conf_mounted: bool | None = None
    #: CPUs the container is restricted to (docker --cpuset-cpus), '' when none/unknown
    cpuset: str = ""
    #: NUMA memory-policy syscalls allowed (SYS_NICE, privileged or seccomp unconfined); None when not known
    numa_syscalls: bool | None = None


class LaunchCommand(Fact):
    fact_type = "launch.command"
    doc = "One launcher invocation on a command line (docker run, srun, mpirun, torchrun, kubectl) and what it passes on."
    #: docker | srun | mpirun | torchrun | kubectl | sbatch (#SBATCH directives) | other (enroot, apptainer ...)
    launcher: str
    #: variable names taken from the launching environment (mpirun -x NAME, srun
    #: --container-env=A,B, docker -e NAME)
    forwarded_env: list[str] = []
    #: NAME=VALUE set by the line (env prefix, docker -e A=1, mpirun -x A=1, srun --export=...,A=1);
    #: secret values redacted
    env_set: list[str] = []
    #: every variable name the line forwards or sets, sorted
    env_names: list[str] = []
    #: docker --env-file files
    env_files: list[str] = []
    #: srun --export value as written ('' when absent; 'NONE' drops the host environment)
    export_mode: str = ""
    container_image: str = ""
    #: srun --cpu-bind value; mpirun 'bind-to=core map-by=ppr:4:numa'
    cpu_bind: str = ""
    #: srun --gpu-bind value
    gpu_bind: str = ""
    #: srun / sbatch --gpus-per-task count: Slurm confines each task to its own GPUs (cgroup, and
    #: CUDA_VISIBLE_DEVICES), so tasks on one node cannot open each other's GPUs
    gpus_per_task: int | None = None
    #: torchrun --nproc-per-node (None for 'gpu'/'auto' or absent)
    nproc_per_node: int | None = None
    #: srun -N / torchrun --nnodes (max of a range) / mpirun host count
    nodes: int | None = None
    #: srun --ntasks-per-node / mpirun --npernode, -N, --map-by ppr:N:node
    ntasks_per_node: int | None = None
    #: total tasks: srun -n / mpirun -np
    ntasks: int | None = None
    #: srun --mpi value (pmix, pmi2 ...)
    mpi: str = ""
    #: torchrun --numa-binding value, or the numactl prefix as written
    numa_binding: str = ""
    #: names exported (``export NAME=value``) earlier in the same script or transcript: the
    #: launching environment; pyxis passes them, but an image ENV of the same name wins unless
    #: the name is in --container-env
    script_env: list[str] = []
    #: the command line (continuations joined), redacted
    command: str = ""
