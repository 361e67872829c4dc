"""Known error and log signatures found in any text input, and their look-alikes."""

from __future__ import annotations

import doctest
import time

import pytest

from clusterdx.facts import signatures
from clusterdx.facts.document import Document
from clusterdx.facts.ingest import ingest_documents

HITS = [
    ("gpu-a:1201:1390 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>", "nccl-net-socket-initialized"),
    ("NCCL INFO Channel 00 : 0[0] -> 1[0] [send] via NET/Socket/0", "nccl-net-socket-in-use"),
    ("node1:55:55 [0] NCCL INFO NET/IB : No device found.", "nccl-ib-no-device"),
    ("fi_getinfo: -61 (No data available)", "libfabric-no-efa-provider"),
    ("libibverbs: Warning: no userspace device-specific driver found for /sys/class/infiniband_verbs/uverbs0",
     "ibverbs-no-userspace-driver"),
    ("ls: cannot access '/dev/infiniband': No such file or directory", "infiniband-device-missing"),
    ("NCCL INFO GPU Direct RDMA Disabled for HCA 0 'mlx5_0'", "gdr-disabled-for-hca"),
    ("lsmod shows nvidia_peermem is not loaded on node 2", "peermem-not-loaded"),
    ("NCCL WARN Error: failed to extend /dev/shm/nccl-Ab12 to 9637892 bytes", "shm-exhausted"),
    ("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
     "bus-error-shm"),
    ("The traceback ends in an NCCL error raised from `ncclShmOpen`.", "nccl-shm-open-failed"),
    ("The `ncclShmOpen` error indicates that torch wasn't able allocate shared memory for nccl.", "nccl-shm-open-failed"),
    ("NCCL WARN Call to ncclShmOpen failed : No space left on device", "nccl-shm-open-failed"),
    ("AMD-Vi: Event logged [IO_PAGE_FAULT device=41:00.0 domain=0x000e address=0xf8c00000 flags=0x0020]",
     "iommu-io-page-fault"),
    ("DMAR: DRHD: handling fault status reg 3", "dmar-fault"),
    ("NCCL WARN Cuda failure 'peer access is not supported between these two devices'", "peer-access-not-supported"),
    ("test: Test CUDA failure common.cu:941 'system not yet initialized'", "cuda-system-not-ready"),
    ('time=2025-02-11T03:16:37.327Z level=DEBUG source=gpu.go:592 msg="Unable to load cudart library '
     '/usr/lib/ollama/libcudart.so.12.4.127: cudart init failure: 802"', "cuda-error-802"),
    ("cuInit err: 802", "cuda-error-802"),
    ('CUDA error at bandwidthTest.cu:256 code=802(cudaErrorSystemNotReady) "cudaSetDevice(currentDevice)"', "cuda-error-802"),
    ("RuntimeError: cuda runtime error (802) : system not yet initialized at THCGeneral.cpp:50", "cuda-error-802"),
    ("cupy.cuda.runtime.CUDARuntimeError: cudaErrorSystemNotReady", "cuda-system-not-ready-enum"),
    ("jaxlib: cuInit(0) failed: CUDA_ERROR_SYSTEM_NOT_READY", "cuda-system-not-ready-driver-enum"),
    ("nvidia-cuda-validator-kg6mn   0/1   Init:CrashLoopBackOff   6 (26s ago)   6m20s", "gpu-operator-cuda-validator-failing"),
    ("the nvidia-cuda-validator pod keeps crashing and restarting continuously", "gpu-operator-cuda-validator-failing"),
    ("Stucking into init or crashbackoff status on some pods (nvidia-cuda-validator and nvidia-operator-validator)",
     "gpu-operator-cuda-validator-failing"),
    ("Failed to allocate device vector A (error code system not yet initialized)!", "cuda-vectoradd-alloc-failed"),
    ("[Vector addition of 50000 elements] Failed to allocate vector A (error code initialization error)!",
     "cuda-vectoradd-alloc-failed"),
    ("node23:12098:12141 [2] transport/nvls.cc:244 NCCL WARN Cuda failure 1 'invalid argument'", "nvls-cuda-failure"),
    ("nvidia-fabricmanager.service: Failed with result 'exit-code'", "fabric-manager-down"),
    ("fabric manager reports a non critical error on GPU 3", "fabric-manager-down"),
    ("[Oct 31 2023 20:59:37] [ERROR] [tid 527118] failed to release multicast team with handle 171170, cannot find "
     "the team", "fabric-manager-log-error"),
    ("[Mar 02 2024 08:11:40] [ERROR] [tid 3021] NVSwitch port 12 link training failed", "fabric-manager-log-error"),
    ("the FM log keeps saying it failed to find the GPU handle in the multicast team", "nvswitch-multicast-team-error"),
    ("fastmoe: Test NCCL failure common.cu:777 'unhandled system error'", "nccl-unhandled-system-error"),
    ("RuntimeError: NCCL Error 2: unhandled system error", "nccl-unhandled-system-error"),
    ("inside the pod the memlock limit is only 64 KB", "memlock-limit"),
    ("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, ncclSystemError: System call "
     "(e.g. socket, malloc) or external library call failed", "nccl-unhandled-system-error"),
    ("6f2d8a82d208:1287:1328 [0] NCCL INFO NET/OFI Selected Provider is tcp (found 1 nics)", "ofi-tcp-provider"),
    ("[0]:Unable to write to EQ: Missing or unavailable event queue. err: Unknown error -12 (-12) prov_errno: "
     "Unknown error -12 (-12) prov/efa/src/rxr/rxr.h:993", "rdma-registration-enomem"),
    ("kolyoz2:25146:25854 [0] ib_plugin.c:1105 NCCL WARN NET/IB : Got completion from peer 10.0.35.1<49189> with "
     "error 4, opcode 5327, len 5327, vendor err 81 (Send)", "ib-completion-local-protection"),
    ("_ibvwrap.cc: NCCL WARN Call to ibv_modify_qp failed with error Connection timed out_", "ibv-modify-qp-timeout"),
    ("pytorch-worker-1:88:157 [3] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with error No such device\r",
     "ibv-modify-qp-no-device"),
    ("ibvwrap.cc:262 NCCL WARN Call to ibv_modify_qp failed with error 19", "ibv-modify-qp-no-device"),
    ("When training for 12 hours the ConnectX-7 gid index changed from 3 to 4/8 (show_gids command)", "roce-gid-index-changed"),
    ("#38 showed GID table indexes **drift** when interface events reshuffle the table", "roce-gid-index-changed"),
    ("after the bond flapped the RoCE v2 GID index moved to 5 on mlx5_2", "roce-gid-index-changed"),
    ("a change in the GID index after the DHCP renewal broke the running job", "roce-gid-index-changed"),
    ("But if I ibv_reg_mr to register a buff on GPU, it fails.", "gpu-memory-registration-fails"),
    ("NET/OFI Unable to register memory (type = 2) for device 0. RC: -22, Error: Invalid argument",
     "ofi-gpu-memory-registration-fails"),
    ("pcieport 0000:40:01.1: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)", "pcie-aer-errors"),
    ("node3:91:120 [0] NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory", "verbs-enomem"),
    ("NET/IB : Failed to open libibverbs.so[.1]: libibverbs.so.1: cannot open shared object file", "libibverbs-missing"),
    ("modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument", "peermem-cannot-load"),
    ("NVRM: Xid (PCI:0000:9c:00): 48, pid=4121, name=python3, An uncorrectable double bit error", "gpu-xid-memory-error"),
    ("- `Xid 63`: Row Remapper marks a new row for remapping", "gpu-xid-memory-error"),
    ("RuntimeError: CUDA error: uncorrectable ECC error encountered", "gpu-ecc-uncorrectable"),
    ("gpu-b07:2231:2290 [0] graph/topo.h:234 NCCL WARN Could not find NET with id 0", "nccl-net-id-not-found"),
    ("graph/topo.h:230 NCCL WARN Could not find NET with id 7", "nccl-net-id-not-found"),
    ("lrdn2146:1399931:1399978 [3] graph/search.cc:1127 NCCL WARN Could not find a path for pattern 1, falling back to simple order",
     "nccl-graph-tree-pattern-not-found"),
    ("NCCL INFO Could not find a path for pattern 3, falling back to simple order", "nccl-graph-tree-pattern-not-found"),
    ("gen-0:4411:4470 [0] transport/p2p.cc:298 NCCL WARN Cuda failure 'invalid argument'", "nccl-legacy-cuda-ipc-failure"),
    ("cudaIpcOpenMemHandle failed with invalid resource handle", "nccl-legacy-cuda-ipc-failure"),
    ("gb200-ci-04:7711:7790 [0] NCCL INFO Check P2P Type isAllDirectP2p 0 directMode 0", "nccl-not-all-direct-p2p"),
    ("NCCL reports `isAllDirectP2p 0`, `0 nvls channels`, and DeepEP aborts.", "nccl-not-all-direct-p2p"),
    ("AssertionError: No NVLink connection between GPU 0 and GPU 1, but allow_nvlink_for_normal_mode=True",
     "nvml-no-nvlink-between-gpus"),
    ("nvmlDeviceGetP2PStatus(h0, h1, NVML_P2P_CAPS_INDEX_NVLINK) returned NVML_P2P_STATUS_NOT_SUPPORTED",
     "nvml-no-nvlink-between-gpus"),
    ("Row remapping pending on GPU 2, reset the GPU to activate it", "gpu-row-remap-pending"),
    ("nvidia-smi shows the remapped rows count grew from 11 to 12", "gpu-row-remap-pending"),
    ("/opt/nvshmem/src/modules/transport/ibrc/ibrc.cpp:nvshmemt_init:1851: neither nv_peer_mem, or nvidia_peermem "
     "detected. Skipping transport.", "nvshmem-ibrc-no-peermem"),
    ("/sgl-workspace/nvshmem/src/host/init/init.cu:998: non-zero status: 7 building transport map failed",
     "nvshmem-transport-map-failed"),
    ("[s6]: .../main_nvshmem/src/host/init/init.cu:1035: non-zero status: 3 building transport map failed ",
     "nvshmem-transport-map-failed"),
]

LOOKALIKES = [
    # ENODEV from something other than a queue-pair transition, or another errno from it
    "node1:55:60 [0] NCCL WARN Call to ibv_modify_qp failed with error Invalid argument",
    "ibvwrap.cc:262 NCCL WARN Call to ibv_modify_qp failed with error 190",
    "NCCL WARN Cuda failure 'no CUDA-capable device is detected' (No such device)",
    "train-vm-a3:8841:8920 [0] NCCL INFO NET/Socket : GPU Direct RDMA Disabled for HCA 0 'eth0'",  # sockets never do GDR
    "we changed the GID index to 3 and now it works",                      # the user's own setting, no drift
    "export NCCL_IB_GID_INDEX=3 changed nothing",                          # the variable, not the table
    "the container user's gid changed to 1000 after the rebuild",          # a Unix group id
    "show_gids: GID index 3 is RoCE v2, unchanged since the reboot",        # stable index
    # a ring pattern (4) that found no path is the usual fallback on PCIe hosts, no tree bug
    "graph/search.cc:1127 NCCL WARN Could not find a path for pattern 4, falling back to simple order",
    "[Oct 31 2023 20:45:27] [INFO] [tid 526845] Successfully configured all the available NVSwitches",  # FM, no error
    "2024-03-02 08:11:40 [ERROR] [tid 3021] worker failed",             # another daemon's ERROR line
    "NCCL INFO NVLS multicast support is available on dev 0",           # multicast in use, no failure
    "RuntimeError: NCCL Error 3: internal error",                       # another NCCL error code
    "    --ulimit memlock=-1 --ulimit stack=67108864 \\",                  # memlock unlimited: the fix
    "the container runs with host IPC and memlock unlimited",           # the same, in words
    "NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>",   # RDMA in use
    "we mounted /dev/shm with 32G and it works",                        # shm mentioned, no failure
    "iommu: Default domain type: Passthrough",                           # IOMMU line, no fault
    "nvidia_peermem 16384 0",                                            # module loaded (lsmod)
    "ls -l /dev/infiniband",                                             # the command, no error
    "NET/OFI Selected Provider is efa (found 4 nics)",                   # EFA selected
    "NET/IB : Got completion from peer 10.0.0.2<4242> with error 12, opcode 0, len 0, vendor err 129",  # retry, not protection
    "Setting NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 resolves the deadlock",  # SHM named, nothing exhausted
    "the fabric manager service is running and the fabric state is Completed",  # healthy fabric
    "ibv_reg_mr works fine on host memory",                               # registration fine
    "pci 0000:40:01.1: AER: enabled with IRQ 33",                          # AER set up, no error
    "NCCL WARN Call to ibv_reg_mr failed with error Bad address",         # another failure
    "libibverbs.so.1 => /usr/lib/x86_64-linux-gnu/libibverbs.so.1",        # ldd: found
    "NVRM: Xid (PCI:0000:1b:00): 79, pid=0, GPU has fallen off the bus.",  # another Xid
    "NVRM: Xid (PCI:0000:1b:00): 13, Graphics SM Warp Exception",          # an application fault
    "| N/A   34C    P0    61W / 400W |      0MiB / 81920MiB |      0%      Default |  Volatile Uncorr. ECC",  # a header
    "        Pending                           : No",                      # nvidia-smi -q remap section
    "ECC mode is enabled on all GPUs",                                     # ECC named, no error
    "NCCL WARN Could not find network interface matching ib9",             # another lookup
    "node1:77:90 [0] NCCL INFO Check P2P Type isAllDirectP2p 1 directMode 0",  # all direct
    "n1:41:90 [0] transport/p2p.cc:289 NCCL WARN Cuda failure 1 'invalid argument'",  # driver API: the cuMem branch
    "n1:41:90 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC",         # legacy IPC in use, no failure
    "nvidia-smi nvlink -s shows every NVLink connection between GPU 0 and GPU 1 at 50 GB/s",  # links fine
    "NVSHMEM: nvidia_peermem detected, IBRC transport initialized",        # module found
    "init.cu:1080: nvshmem initialization failed, exiting",                # generic init failure, no transport named
    "building the topology map for 16 PEs",                                # another map, no failure
    "NCCLCHECK(ncclShmOpen(shmPath, resources->shmSize, &hostMem, &devHostMem, 1, &handle));",  # source, no failure
    "TRACE ncclShmOpen opened /dev/shm/nccl-Ab12 of 9637888 bytes",      # the call succeeding
    "Bonding Mode: IEEE 802.3ad Dynamic link aggregation",                 # 802 of the bonding standard
    "cuda driver library init failure: 8021",                              # another number
    "nvidia-cuda-validator-44rfx   0/1   Completed   0   14m",             # the validator passed
    "Failed to allocate device vector A (error code CUDA driver version is insufficient for CUDA runtime version)!",
    "Failed to allocate device vector A (error code forward compatibility was attempted on non supported HW)!",
]


def _found(line: str) -> set[str]:
    return {f.signature for f in signatures.scan(Document.from_text(line + "\n", name="t"))}


def test_doctests():
    assert doctest.testmod(signatures).failed == 0


@pytest.mark.parametrize("line,sig", HITS)
def test_signature_found(line, sig):
    assert sig in _found(line)


@pytest.mark.parametrize("line", LOOKALIKES)
def test_lookalike_not_found(line):
    assert _found(line) == set()


def test_every_entry_has_a_node_in_the_kb_and_a_hit_above():
    from clusterdx.engine.kb import load_kb

    kb = load_kb(cache=True)
    tested = {s for _, s in HITS}
    for e in signatures.table().entries:
        assert e.node in kb.nodes, e.id
        assert e.needle == e.needle.lower(), e.id
        assert e.id in tested or e.id in {"ofi-no-providers", "memlock-limit", "nccl-p2p-disabled-notice"}, e.id


def test_reported_in_prose_measured_in_a_log():
    prose = Document.from_text("Inside the container we always get fi_getinfo: -61 (No data available) when we run it.\n"
                               "The same command works on the host, so something about the image is different.\n",
                               name="notes.md")
    log = Document.from_text("node1:55:55 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
                             "node1:55:55 [0] NCCL INFO NET/IB : No device found.\n", name="log.txt")
    res = ingest_documents([prose, log])
    by_input = {f.source.input: f for f in res.facts if f.fact_type == "text.signature"}
    assert by_input["notes.md"].provenance == "reported"
    assert by_input["log.txt"].provenance == "measured"
    assert all(r.status == "parsed" for r in res.inputs)


def test_unrecognized_text_with_a_signature_is_read():
    doc = Document.from_text("Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
                             "RuntimeError: NCCL error: unhandled system error, NCCL WARN Cuda failure "
                             "'peer access is not supported between these two devices'\n", name="x")
    [rec] = ingest_documents([doc]).inputs
    # two signatures: the system error and the peer-access failure
    assert (rec.format, rec.status, rec.facts) == ("text", "parsed", 2) and "signature" in rec.reason


def test_long_lines_are_cheap():
    doc = Document.from_text(("shm " * 50_000 + "\n") * 20 + ("peer " * 50_000 + "\n") * 20, name="big")
    t = time.process_time()
    signatures.scan(doc)
    assert time.process_time() - t < 5


@pytest.mark.parametrize("other", [
    "gpu-a:1201:1390 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.2.0.1<0>",
    "gpu-a:1201:1390 [0] NCCL INFO Channel 00 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA",
    "gpu-a:1201:1201 [0] NCCL INFO NCCL version 2.4.7+cuda10.0",
])
def test_bootstrap_socket_line_is_not_the_transport(other):
    from clusterdx.facts.document import Document
    from clusterdx.facts.signatures import scan

    line = "gpu-a:1201:1390 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>"
    assert [f.signature for f in scan(Document.from_text(line + "\n", name="x"))] == ["nccl-net-socket-initialized"]
    assert scan(Document.from_text(f"{other}\n{line}\n", name="x")) == []


def test_peer_access_refused_in_p2p_transport_is_not_the_ipc_signature():
    line = "n1:41:90 [0] transport/p2p.cc:212 NCCL WARN Cuda failure 'peer access is not supported between these two devices'"
    assert _found(line) == {"peer-access-not-supported"}


def test_the_tree_search_warning_is_not_nic_fusions_invalid_net_id():
    # the search failing alone is its own signature (the tree-search release entry), never NIC fusion's
    line = "graph/search.cc:1135 NCCL WARN Could not find a path for pattern 1, falling back to simple order"
    assert _found(line) == {"nccl-graph-tree-pattern-not-found"}
