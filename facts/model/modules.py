"""Loaded kernel modules (lsmod, /proc/modules)."""

from clusterdx.facts.base import Fact

#: modules whose presence or absence matters for GPU / RDMA performance
RELEVANT_MODULES = (
    "nvidia", "nvidia_uvm", "nvidia_modeset", "nvidia_drm", "nvidia_peermem", "nv_peer_mem",
    "gdrdrv", "nvidia_fs", "mlx5_core", "mlx5_ib", "ib_core", "ib_uverbs", "rdma_ucm", "rdma_cm",
    "ib_ipoib", "bonding", "nvme_rdma", "ib_umad",
)


class KernelModule(Fact):
    fact_type = "kernel.module"
    doc = "One loaded kernel module: size in bytes, reference count, modules using it."
    name: str
    size: int | None = None
    refcount: int | None = None
    used_by: list[str] = []
    #: /proc/modules only: Live, Loading, Unloading
    state: str = ""
    #: /proc/modules only: taint letters such as ``OE`` (out-of-tree, unsigned)
    taint: str = ""


class KernelModulesSummary(Fact):
    fact_type = "kernel.modules_summary"
    doc = ("Once per module listing: module count, the GPU/RDMA-relevant modules present, "
           "whether a GPUDirect RDMA peer-memory module is loaded; complete is False for "
           "filtered listings (lsmod | grep), where absence proves nothing.")
    count: int
    names: list[str] = []
    peermem_loaded: bool = False
    gdrcopy_loaded: bool = False
    complete: bool = True
