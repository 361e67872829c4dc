"""Gazetteers: the cloud instance types, GPU SKUs and NIC models a ticket's prose may name.

The tables are data (``kb/gazetteers/*.yaml``, loaded with ``yaml.safe_load`` (through the cache of
:func:`clusterdx.engine.kbcache.table_data`) and validated
here), each row with the reference it was taken from; the prose reader
(:mod:`clusterdx.facts.parsers.prose`) turns a name it finds into inventory facts through them.

Examples:

    >>> g = gazetteers()
    >>> g.instance("A3-MEGAGPU-8G").nics, g.instance("a3-megagpu-8g").gpu
    (8, 'H100')
    >>> g.gpu("h100").model, g.nic("CX-7").gbps
    ('H100', 400.0)
    >>> g.fabric("EFA").net_plugin, g.fabric("InfiniBand")
    ('aws-ofi-nccl', None)
    >>> sorted(r.id for r in g.provider_rows("gcp", "H100"))
    ['a3-highgpu-8g', 'a3-megagpu-8g']
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal
from importlib import resources

from pydantic import BaseModel, ConfigDict


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid")
    names: list[str]
    ref: str


class GpuRow(_Row):
    model: str
    form: str = ""
    forms: dict[str, str] = {}
    memory_gb: float | None = None
    nvlink: str = ""
    #: datacenter | workstation | consumer
    tier: str = "datacenter"
    #: peer-to-peer over PCIe offered by the driver; None: the table does not say
    p2p: bool | None = None
    #: NVLink links per GPU by design, per form factor (0: none)
    nvlinks: dict[str, int] = {}
    #: SXM boards of at least this many GPUs sit on NVSwitch (fabric manager needed); None: never
    nvswitch_gpus: int | None = None
    #: line rate of one of this SKU's NVLink links, GB/s in each direction (links of one generation
    #: differ in width between chips: x8 on TU102, x4 on GA102); None: the table does not say
    nvlink_link_gbs: float | None = None
    #: the vendor document that gives nvlink_link_gbs
    nvlink_ref: str = ""

    def links_for(self, form: str | None = None) -> int | None:
        """NVLink links per GPU of this SKU in ``form`` (its usual form when not given)."""
        return self.nvlinks.get(form or self.form)


class NicRow(_Row):
    model: str
    gbps: float
    interconnect: str = ""


class InstanceRow(_Row):
    id: str
    provider: str
    series: list[str] = []
    gpu: str
    gpus: int
    nic: str
    nics: int
    nic_gbps: float
    interconnect: str = ""
    #: a virtual machine (cloud instances are, except bare-metal shapes)
    vm: bool = True
    #: the GPU NICs offer GPUDirect RDMA; None: the table does not say
    gdr: bool | None = None
    #: the instance's GPUs are connected by NVLink (pairs or all); None: the table does not say
    nvlink: bool | None = None
    #: the GPU form factor (SXM, PCIe, NVL) when the instance fixes it
    form: str = ""
    #: the series names a family of sizes (g5: 1 to 8 GPUs): a series mention gives no counts
    sizes: bool = False


class FabricRow(_Row):
    interconnect: str
    #: the net plugin NCCL needs to drive this fabric (without it NCCL runs on sockets)
    net_plugin: str
    #: how tickets name the plugin ('aws ofi nccl', 'tcpx plugin')
    plugin_names: list[str] = []


class CloudSignRow(_Row):
    id: str
    provider: str
    #: what ``pattern`` is matched against: a node's 'hostname', a 'path' in text, an RDMA 'device'
    kind: Literal["hostname", "path", "device"]
    pattern: str
    #: the plugin-only fabric (fabrics.yaml) the sign belongs to, "" when it names only the provider
    fabric: str = ""


class Gazetteers(BaseModel):
    gpus: list[GpuRow]
    nics: list[NicRow]
    instances: list[InstanceRow]
    fabrics: list[FabricRow] = []
    cloud_signs: list[CloudSignRow] = []

    def _find(self, rows, name: str):
        key = name.strip().lower()
        for row in rows:
            if key in (n.lower() for n in row.names) or key in (s.lower() for s in getattr(row, "series", [])):
                return row
        return None

    def gpu(self, name: str) -> GpuRow | None:
        return self._find(self.gpus, name)

    def nic(self, name: str) -> NicRow | None:
        return self._find(self.nics, name)

    def instance(self, name: str) -> InstanceRow | None:
        return self._find(self.instances, name)

    def fabric(self, interconnect: str) -> FabricRow | None:
        """The plugin-only fabric named ``interconnect``; None for one NCCL drives itself."""
        return self._find(self.fabrics, interconnect) if interconnect else None

    def provider_rows(self, provider: str, gpu: str) -> list[InstanceRow]:
        """The instance types of ``provider`` whose GPUs are ``gpu``: the candidates when a ticket
        names the cloud and the GPU but no instance type ("GCP H100 instances")."""
        return [r for r in self.instances if r.provider == provider and r.gpu.lower() == gpu.lower()]


def _load(name: str, key: str, schema: str) -> list:
    text = resources.files("clusterdx.kb").joinpath(f"gazetteers/{name}").read_text(encoding="utf-8")
    from clusterdx.engine.kbcache import table_data

    data = table_data(text)
    if not isinstance(data, dict) or data.get("schema") != schema:
        raise ValueError(f"kb/gazetteers/{name}: schema must be {schema}")
    return data.get(key) or []


@lru_cache(maxsize=1)
def gazetteers() -> Gazetteers:
    """The shipped gazetteers, validated (a broken row is a bug in the shipped data: it raises)."""
    return Gazetteers(
        gpus=_load("gpus.yaml", "gpus", "clusterdx/gazetteer/gpus/v1"),
        nics=_load("nics.yaml", "nics", "clusterdx/gazetteer/nics/v1"),
        instances=_load("instances.yaml", "instances", "clusterdx/gazetteer/instances/v1"),
        fabrics=_load("fabrics.yaml", "fabrics", "clusterdx/gazetteer/fabrics/v1"),
        cloud_signs=_load("cloud-signs.yaml", "signs", "clusterdx/gazetteer/cloud-signs/v1"),
    )
