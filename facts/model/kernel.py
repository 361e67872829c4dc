"""Kernel and OS settings: sysctl values, boot parameters, page size."""

from clusterdx.facts.base import Fact


class Sysctl(Fact):
    fact_type = "kernel.sysctl"
    doc = "One sysctl key and its value (value_num when the value is a single number)."
    key: str
    value: str
    value_num: float | None = None


class Cmdline(Fact):
    fact_type = "kernel.cmdline"
    doc = "The kernel command line the node booted with."
    raw: str
    image: str = ""


class BootParam(Fact):
    fact_type = "kernel.boot_param"
    doc = "One kernel command-line parameter; value is '' for a bare flag."
    name: str
    value: str = ""


class PageSize(Fact):
    fact_type = "kernel.page_size"
    doc = "Base page size in bytes (getconf PAGE_SIZE)."
    bytes: int
