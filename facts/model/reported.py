"""What a user states in a ticket's prose, where no tool measured it (``provenance: reported``).

These types have no measured counterpart; a statement that does have one (an ``NCCL_*`` setting,
the NCCL version, the GPU models, the kernel release, the platform role) is written as that
measured type with ``provenance="reported"`` instead, so existing rules can read it. All of them
come from :mod:`clusterdx.facts.parsers.prose`. ``text`` is the statement as written (cut to 200
characters), so a reader of the report sees what the user said.
"""

from typing import Literal

from clusterdx.facts.base import Fact


class _Reported(Fact):
    provenance: Literal["measured", "reported"] = "reported"
    text: str = ""


class ReportedContext(_Reported):
    fact_type = "reported.context"
    doc = "Where the user says the job runs: container runtime, Kubernetes pod, Slurm/Pyxis, VM, bare metal, cloud."
    #: 'kubernetes', 'docker', 'podman', 'enroot', 'pyxis', 'apptainer', 'slurm', 'vm', 'bare-metal', 'cloud'
    platform: str
    #: 'container', 'guest', 'bare-metal' or 'scheduler' (Slurm says nothing about the role)
    role: Literal["container", "guest", "bare-metal", "scheduler", "cloud"]
    #: cloud provider when the statement names one ('aws', 'gcp', 'azure', 'oci'), else ''
    provider: str = ""
    #: cloud instance type or machine shape as written in the gazetteer ('p5.48xlarge'), else ''
    instance_type: str = ""


class ReportedInventory(_Reported):
    fact_type = "reported.inventory"
    doc = "Hardware the user says a node has: GPUs or NICs (model, count, rate), or a cloud instance type."
    #: 'cpu': the host CPU a user names ('AMD EPYC 7K62'), model as written, vendor in ``form``
    item: Literal["gpu", "nic", "instance", "cpu"]
    #: gazetteer key ('H100', 'ConnectX-7', 'p5.48xlarge')
    model: str
    #: per node, None when the statement gives no count
    count: int | None = None
    #: per NIC, Gb/s (stated, else the model's usual rate from the gazetteer), None for GPUs
    gbps: float | None = None
    #: 'SXM', 'PCIe', 'NVL' for GPUs when known, else ''
    form: str = ""
    #: 'InfiniBand', 'RoCE', 'Ethernet', 'EFA', 'NVLink', 'PCIe' when stated or known, else ''; GPUs
    #: named as their DGX system ('DGX A100'): 'NVSwitch'
    interconnect: str = ""
    #: the instance type this row was expanded from (gazetteer), '' when stated directly
    instance_type: str = ""
    #: GPUs: 'datacenter', 'workstation' or 'consumer' (kb/gazetteers/gpus.yaml), else ''
    tier: str = ""
    #: GPUs: the driver offers peer-to-peer over PCIe for this SKU; None: not known
    p2p: bool | None = None
    #: GPUs: NVLink links per GPU by design for this SKU and form (0: none); None: not known
    nvlinks: int | None = None
    #: CPUs: NUMA domains per node the same sentence states ("AMD EPYC 9575F, 8 NUMA domains"); None: not said
    numa_nodes: int | None = None
    #: instances: a virtual machine; None for GPUs and NICs
    vm: bool | None = None
    #: instances and their NICs: GPUDirect RDMA offered; None: not known
    gdr: bool | None = None
    #: instances: the GPUs are NVLink-connected; None: not known
    nvlink: bool | None = None
    #: instances and NICs on a fabric only a net plugin drives (kb/gazetteers/fabrics.yaml): the
    #: plugin NCCL needs ('aws-ofi-nccl'), else ''
    net_plugin: str = ""
    #: NICs: two or more ports bonded into one RDMA device (RoCE LAG, mlx5_bond_N); None: not said
    bonded: bool | None = None
    #: NICs: each NIC of a node on its own rail (a subnet per NIC, a rail-only or rail-optimized
    #: fabric), so only same-rail NICs of two nodes may reach each other; None: not said
    rails: bool | None = None
    #: instances inferred from the cloud and the GPU the ticket names, without an instance type:
    #: the gazetteer rows that fit ('a3-highgpu-8g', 'a3-megagpu-8g'); empty when the type is stated
    candidates: list[str] = []


class ReportedVersion(_Reported):
    fact_type = "reported.version"
    doc = "A software version the user states: nccl, cuda, driver, pytorch, kernel, os."
    component: Literal["nccl", "cuda", "driver", "pytorch", "kernel", "os"]
    version: str
    #: NCCL-style number (2.18.3 -> 21803) for nccl, major*100+minor for cuda, else None
    version_num: int | None = None


class ReportedSetting(_Reported):
    fact_type = "reported.setting"
    doc = "A setting the user states: NAME=VALUE, 'NAME: (not set)', 'BIOS: X Enabled'."
    name: str
    #: the value as written, '' when not set
    value: str = ""
    state: Literal["set", "unset", "enabled", "disabled"]
    #: 'env' for an environment variable name (NCCL_*, UCX_*, ...), 'bios', 'plugin' (a net plugin
    #: the user says the job uses: name is its kb/gazetteers/fabrics.yaml id), else 'other'
    kind: Literal["env", "bios", "plugin", "other"]
    #: who the user says sets it: 'launcher' when a framework or launcher forces it on the job
    #: ("accelerate overrides the NCCL P2P variables on me"), '' for the job's own configuration
    by: Literal["", "launcher"] = ""


class ReportedChange(_Reported):
    fact_type = "reported.change"
    doc = "A before/after statement: what changed (component, from/to version) and which way the number moved."
    #: 'nccl', 'cuda', 'driver', 'pytorch', 'kernel', 'os', 'bios', 'firmware', 'image', 'container' (the
    #: job moved into containers, or runs slower in one than on the host), 'env' (a conda or Python
    #: environment: the framework and the NCCL its wheels bring), '' when not named
    component: str = ""
    from_version: str = ""
    to_version: str = ""
    #: 'fails': the job goes wrong (fails, hangs, errors) with the software in use and works with
    #: another stack on the same hosts ("it worked with the container we used before", "it works
    #: with the AMI's own PyTorch env"): the hosts are common to both, the software is the difference
    direction: Literal["slower", "faster", "fails", "unknown"]
    #: "twice as slow" -> 2.0, "3x slower" -> 3.0, None when not stated
    factor: float | None = None
    #: "30% slower" -> 30.0, None when not stated
    percent: float | None = None
    #: for an NCCL change the ticket does not name but a framework change carries (the releases the
    #: two framework wheels bundle): that change, "pytorch 2.1 -> 2.3"; '' when stated as such
    implied_by: str = ""


class ReportedMetric(_Reported):
    fact_type = "reported.metric"
    doc = "A number with a unit the user states: busbw, algbw, bandwidth, step time, tokens/s, percent slower."
    #: 'busbw', 'algbw', 'bandwidth', 'step_time', 'tokens_per_s', 'samples_per_s', 'tflops', 'mfu', 'slowdown_pct'
    metric: str
    value: float
    #: unit as written ('GB/s', 'Gbps', 'ms', 's', 'tokens/s', '%')
    unit: str
    #: the value in the metric's canonical unit (GB/s, ms, tokens/s, samples/s, TFLOPS, %)
    value_norm: float
    #: row or column label of a table cell, or the words before the number ('node01-node02'), else ''
    label: str = ""


class ReportedSymptom(_Reported):
    fact_type = "reported.symptom"
    doc = "What the user says goes wrong: a hang, no speed-up from more GPUs, low bandwidth, an error."
    #: 'hang' (deadlock, stuck, spins forever), 'no-speedup' (more GPUs or nodes not faster, or
    #: much slower), 'low-bandwidth', 'rdma-not-used' (InfiniBand/GDR/EFA not detected or not
    #: used, or the job fails only on the fabric), 'gdr-not-used' (GPUDirect RDMA asked for and
    #: not had), 'at-scale' (it goes wrong only past a node count), 'gpus-hidden' (a process
    #: or pod sees only its own GPU), 'device-set-dependent' (inside one node, bandwidth differs
    #: with which GPUs or NICs run: "mlx5_6/mlx5_7 came out better than mlx5_0/mlx5_1"), 'pair-dependent' (bandwidth
    #: differs with the node pair that ran), 'one-core' (worker processes confined to one core),
    #: 'containers-split' (several containers on one node, each with part of its GPUs),
    #: 'multi-gpu-slower' (several GPUs of one machine slower than one), 'error' (the job stops
    #: with an error: a crash, an NCCL WARN or error code, a timeout), 'multi-gpu-wrong-data' (zeros,
    #: garbage or NaN only from traffic between GPUs), 'slows-over-time' (throughput falls the longer
    #: a run goes on), 'below-peak' (the result held against an advertised, theoretical, peak or
    #: bidirectional figure), 'asks-expected' (the user asks whether the result is expected or normal),
    #: 'asks-gdr' (the user asks whether GPUDirect RDMA is used or matters on the system),
    #: 'vm-topology-flat' (a guest's PCI/NUMA layout said not to mirror the host: devices at NUMA
    #: -1, no PCI hierarchy, the VM's topology unlike the host's), 'one-node' (it goes wrong only
    #: when one named node takes part: "any job that includes gpu-07 fails"), 'nccl-below-raw-rdma'
    #: (NCCL's bandwidth across the fabric low while a raw RDMA test on the same ports is fine),
    #: 'shards-on-one-gpu' (a job split across GPUs puts everything on one GPU, the others stay empty),
    #: 'cpu-stage-slower-per-process' (a CPU-side stage of the step slower in each of several processes),
    #: 'retry-exceeded-mid-run' (NCCL's error 12, IB transport retries exceeded, said to come a while
    #: into a run that worked: "the training hangs at some point with an error 12 message")
    #: 'vm-only' (the job said to do well on bare metal, the ticket about it in a VM),
    #: 'vm-topology-asked' (NCCL's topology inside a VM named as what the ticket is about)
    #: 'gpu-idle-cpu-saturated' (the GPUs said idle while the host's CPU is said to be at 100%),
    #: 'gpu-busy-low-power' (the GPUs said fully utilised while drawing little power)
    kind: Literal["vm-only", "vm-topology-asked", "one-node", "hang", "no-speedup", "low-bandwidth", "rdma-not-used", "gdr-not-used", "asks-gdr", "vm-topology-flat", "at-scale", "gpus-hidden", "pair-dependent", "device-set-dependent",
                  "one-core", "containers-split", "multi-gpu-slower", "error", "multi-gpu-wrong-data", "slows-over-time",
                  "below-peak", "asks-expected", "nccl-below-raw-rdma", "shards-on-one-gpu",
                  "cpu-stage-slower-per-process", "retry-exceeded-mid-run",
                  "gpu-idle-cpu-saturated", "gpu-busy-low-power"]
    #: 'multi-node' when the statement is about several machines, 'single-node' when about the
    #: GPUs of one, '' when it does not say
    where: Literal["multi-node", "single-node", ""] = ""


class ReportedWorkaround(_Reported):
    fact_type = "reported.workaround"
    doc = "A setting the user says makes the problem go away (or not): 'NCCL_P2P_DISABLE=1 resolves it'."
    #: the variable or kernel parameter ('NCCL_P2P_DISABLE', 'iommu'), or a path switched off in words
    #: ('nvidia_peermem', 'gpudirect-rdma', 'p2p', with value 'off')
    name: str
    value: str = ""
    #: 'fixes' (resolves, works, helps) or 'no-effect' (does not help)
    effect: Literal["fixes", "no-effect"]


class ReportedWorkload(_Reported):
    fact_type = "reported.workload"
    doc = "What the user ran and at what scale: a collective (sendrecv_perf, all_reduce), the number of nodes."
    #: nccl-tests collective named ('sendrecv', 'all_reduce', 'alltoall' ...), '' when none
    collective: str = ""
    #: nodes the statement names ("on 8 nodes"), None when none
    nodes: int | None = None
