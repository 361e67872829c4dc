"""A remediation's steps for one diagnosis: commands filled with values the evidence supplied.

A step's command may name values (``export NCCL_IB_HCA={rail_nics}``); the values come from the
``data`` of the rules whose evidence supports the cause, so the rule decides what a value is and
this module only substitutes it. A value no evidence supplied stays a visible placeholder
(``<rail NICs>``), never a guess. Only names the step declares are substituted, so shell braces
(``'{{json .Config}}'``, ``awk '{print $1}'``) pass through untouched.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

from clusterdx.engine.report import AlternativeOut, StepOut

_NAME = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


def evidence_values(evidence: Iterable[Any]) -> dict[str, Any]:
    """Named values from the supporting evidence's rule data; the first rule to supply a name wins."""
    out: dict[str, Any] = {}
    for ev in evidence:
        for key, value in (getattr(ev, "data", None) or {}).items():
            if value not in (None, "", [], {}) and key not in out:
                out[key] = value
    return out


def as_text(value: Any) -> str:
    """A value as a command takes it: a list comma-joined (NCCL, taskset and numactl lists)."""
    if isinstance(value, (list, tuple, set)):
        return ",".join(str(v) for v in value)
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def fill(template: str, declared: Mapping[str, str], values: Mapping[str, Any]) -> tuple[str, dict[str, str]]:
    """(the command, the values used): declared names replaced by their value or placeholder."""
    used: dict[str, str] = {}

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in declared:
            return m.group(0)
        if name in values:
            used[name] = as_text(values[name])
            return used[name]
        return declared[name] or f"<{name}>"

    return _NAME.sub(sub, template), used


def render_step(step: Any, values: Mapping[str, Any]) -> StepOut:
    command, needs_root = step.command, step.needs_root
    for variant in step.variants:
        if all(name in values and as_text(values[name]) == want for name, want in variant.when.items()):
            command = variant.command
            if variant.needs_root is not None:
                needs_root = variant.needs_root
            break
    text, used = fill(command, step.values, values)
    alternatives = []
    for alt in step.alternatives:
        alt_cmd, alt_used = fill(alt.command, step.values, values)
        used.update(alt_used)
        alternatives.append(AlternativeOut(text=alt.text.strip(), command=alt_cmd, needs_root=alt.needs_root))
    return StepOut(text=step.text.strip(), command=text, needs_root=needs_root, values=used,
                   alternatives=alternatives)
