"""Processes using a GPU (``nvidia-smi --query-compute-apps=...``)."""

from clusterdx.facts.base import Fact


class GpuProcess(Fact):
    fact_type = "gpu.process"
    doc = "One compute process on a GPU (nvidia-smi --query-compute-apps): pid, name, memory used and the GPU it runs on."
    pid: int
    process_name: str = ""
    used_memory_mib: float | None = None
    gpu_uuid: str = ""
    bus_id: str = ""
