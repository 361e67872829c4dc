"""Host versus container environment, and the NCCL settings in force."""

from __future__ import annotations

from typing import Sequence

from clusterdx.facts.base import Fact, Scope
from clusterdx.facts.derive._common import is_comm_var, of_type, to_float
from clusterdx.facts.model.derived import EnvPropagation, NcclQpsEffective, NcclSetting


def _dumps(facts: Sequence[Fact]) -> dict[str, tuple[Fact, dict[str, Fact]]]:
    """input name -> (env.dump fact, {name: env.var fact})"""
    dumps: dict[str, tuple[Fact, dict[str, Fact]]] = {}
    for d in of_type(facts, "env.dump"):
        dumps[d.source.input] = (d, {})
    for v in of_type(facts, "env.var"):
        if v.source.input in dumps:
            dumps[v.source.input][1][v.name] = v
    return dumps


def propagation(facts: Sequence[Fact]) -> list[Fact]:
    dumps = _dumps(facts)
    hosts = [(d, vs) for d, vs in dumps.values() if d.scope == Scope.host and d.complete]
    containers = [(d, vs) for d, vs in dumps.values() if d.scope == Scope.container and d.complete]
    out: list[Fact] = []
    for cdump, cvars in containers:
        for hdump, hvars in hosts:
            wanted = sorted(n for n in hvars if is_comm_var(n))
            missing = [n for n in wanted if n not in cvars]
            differing = [n for n in wanted if n in cvars and cvars[n].value != hvars[n].value]
            out.append(EnvPropagation(
                node=cdump.node, scope=Scope.container, source=cdump.source,
                host_input=hdump.source.input, container_input=cdump.source.input,
                host_vars=len(wanted), container_vars=sum(1 for n in cvars if is_comm_var(n)),
                missing=missing, missing_count=len(missing), differing=differing, differing_count=len(differing),
            ))
    return out


def _job_vars(facts: Sequence[Fact]) -> list[Fact]:
    """Environment variables the job itself saw: a container's when one was dumped, since the
    host's exports may never have reached it."""
    env_vars = of_type(facts, "env.var")
    inside = [v for v in env_vars if v.scope == Scope.container]
    return inside if inside else env_vars


def settings(facts: Sequence[Fact]) -> list[Fact]:
    """NCCL settings in force: the NCCL log's ENV lines win over an environment dump, which wins
    over the launch line (``mpirun -x NCCL_X=1``, ``docker run -e``: what was passed, not what
    the processes were seen to hold)."""
    out: dict[tuple[str, str], Fact] = {}
    for launch in of_type(facts, "launch.command"):
        for pair in getattr(launch, "env_set", []) or []:
            name, _, value = pair.partition("=")
            if name.startswith("NCCL_") and value and "<redacted>" not in value:
                out[(launch.node, name)] = NcclSetting(
                    node=launch.node, scope=launch.scope, source=launch.source, name=name, value=value,
                    value_num=to_float(value), origin="launch-line", provenance=launch.provenance)
    for v in _job_vars(facts):
        if v.name.startswith("NCCL_"):
            out[(v.node, v.name)] = NcclSetting(node=v.node, scope=v.scope, source=v.source, name=v.name,
                                                value=v.value, value_num=to_float(v.value), origin="env-dump",
                                                provenance=v.provenance)
    for e in of_type(facts, "nccl.env"):
        out[(e.node, e.name)] = NcclSetting(node=e.node, scope=e.scope, source=e.source, name=e.name,
                                            value=e.value, value_num=to_float(e.value), origin="nccl-log")
    # the user's word that a launcher injects a variable ties to the value seen in force (a
    # ticket names one job: the claim holds on whichever node printed it)
    forced = {r.name for r in of_type(facts, "reported.setting") if getattr(r, "by", "") == "launcher"}
    return [s.model_copy(update={"forced_by": "launcher"}) if s.name in forced else s for s in out.values()]


def qps(facts: Sequence[Fact], nccl_settings: Sequence[Fact]) -> list[Fact]:
    """Effective QPs per connection, when the NCCL configuration was actually seen."""
    explicit = [s for s in nccl_settings if s.name == "NCCL_IB_QPS_PER_CONNECTION" and s.value_num is not None]
    if explicit:
        s = explicit[0]
        return [NcclQpsEffective(node=s.node, scope=s.scope, source=s.source, qps=int(s.value_num), explicit=True,
                                 basis=s.origin)]
    # NCCL prints every variable it read from the environment; an ENV-enabled log without this one
    # means the default (1) was in force. A complete env dump says the same.
    logs = of_type(facts, "nccl.env")
    if logs:
        f = logs[0]
        return [NcclQpsEffective(node=f.node, scope=f.scope, source=f.source, qps=1, explicit=False,
                                 basis="default (not set; NCCL ENV log seen)")]
    dumps = [d for d in of_type(facts, "env.dump") if d.complete and any(n.startswith("NCCL_") for n in d.names)]
    complete = [d for d in dumps if d.scope == Scope.container] or dumps
    if complete:
        d = complete[0]
        return [NcclQpsEffective(node=d.node, scope=d.scope, source=d.source, qps=1, explicit=False,
                                 basis="default (not set in a complete environment dump)")]
    return []


def derive(facts: Sequence[Fact]) -> list[Fact]:
    nccl_settings = settings(facts)
    return propagation(facts) + nccl_settings + qps(facts, nccl_settings)
