"""Process environment: one fact per variable, one summary per dump.

The summary (``env.dump``) is what lets a rule tell "this variable is not set" from "this dump
does not show it": ``complete`` is False whenever the dump was filtered (``env | grep NCCL``),
and then a missing name proves nothing.
"""

from clusterdx.facts.base import Fact


class EnvVar(Fact):
    fact_type = "env.var"
    doc = "One environment variable as seen by a process or shell; value is redacted for secret names."
    name: str
    value: str
    #: True when the value shown is not the original (secret name, or credentials in a URL)
    redacted: bool = False
    #: srun --label task number when the dump interleaves several tasks, else None
    rank: int | None = None


class EnvDump(Fact):
    fact_type = "env.dump"
    doc = "Summary of one environment dump: which names it shows and whether it is the whole environment."
    var_count: int
    #: every variable name shown, sorted
    names: list[str]
    #: False when the dump was filtered (grep, head, printenv NAME): absence of a name means nothing
    complete: bool
    #: the filter applied, as written in the command ('' when unfiltered or unknown)
    filter: str = ""
    #: why the dump looks like it came from inside a container: variable names
    #: (``container``, ``ENROOT_ROOTFS``, ``NVIDIA_VISIBLE_DEVICES``+``PYTORCH_VERSION``...)
    #: and/or ``cmd:<launcher>`` (``cmd:docker exec``, ``cmd:srun --container-image``...)
    container_markers: list[str]
    #: srun --label task number when the dump interleaves several tasks, else None
    rank: int | None = None
    #: names the command asked about that printed nothing: not set (``printenv X``, ``env | grep X``;
    #: for grep the word as written, so every variable whose name holds it is unset) or, for
    #: ``echo $X``, not set or set to the empty string
    not_set: list[str] = []
