"""Findings of node health checks: ``dcgmi diag`` result tables and the PASS/FAIL lines of
vendor and cloud health-check scripts (NVIDIA, Azure HPC, GCP ...).

One fact per check the output reports. ``status`` is normalised to ``pass``, ``fail``,
``warn`` or ``skip``; the words as printed are kept in ``detail``.
"""

from clusterdx.facts.base import Fact


class HealthFinding(Fact):
    fact_type = "health.finding"
    doc = "One check of a node health check or DCGM diagnostic, with its pass/fail/warn/skip status and detail."
    #: the check's name as printed, lower case (``pcie``, ``memory bandwidth``, ``check_ib_link``)
    check: str
    #: pass | fail | warn | skip
    status: str
    #: message or reason as printed ('' when none)
    detail: str = ""
    #: GPU index the finding names (``GPU 3``, ``gpu 3``), None when it names none
    gpu: int | None = None
    #: another device it names (``mlx5_4``, ``ib0``), '' when none
    device: str = ""
    #: dcgmi diag | script
    tool: str = ""
    #: dcgmi's category header (``Deployment``, ``Integration``, ``Hardware``, ``Stress``), '' elsewhere
    category: str = ""
