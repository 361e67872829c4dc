"""Scaffolds for ``clusterdx kb new``: a rule with its test file, a cause with its remediation.

The files are valid YAML with every required field present and comments that say what to fill
in; ``kb lint`` then lists what is still a placeholder (a new rule points at a node that must
exist, so it starts ``experimental`` and does not run by default).
"""

from __future__ import annotations

import datetime as _dt
import re
from pathlib import Path

LAYERS = ("hypervisor", "kernel", "bios-cpu", "nccl", "fabric", "container", "hardware", "expectation", "symptoms")
_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


class ScaffoldError(ValueError):
    pass


RULE = """\
schema: clusterdx/rule/v1
id: {id}
title: {title}
# experimental rules do not run by default; move to stable once its tests and a case prove it
status: experimental
description: >-
  Detects ... (say what is observed, the mechanism, and why it costs throughput).
author: {author}
created: {date}
references:
  - https://example.invalid/replace-with-a-permalink
tags: [layer.{layer}]
requires:
  # fact types that must have been collected; without them the rule is "not evaluated"
  facts: [kernel.sysctl]
params:
  threshold:
    default: 1
    doc: What the threshold means and where the number comes from.
match:
  seen:
    fact: kernel.sysctl
    where:
      key: replace.me
      value_num: {{gte: $threshold}}
evidence:
  # the graph node this supports (or refutes): a root cause, mechanism or observable id
  - {{node: {node}, effect: supports, strength: moderate}}
message: >-
  {{seen.key}} is {{seen.value}} on {{node}} ({{seen.source}}): say why it matters and which
  remediation applies.
falsepositives:
  - Say when this fires on a healthy system.
"""

RULE_TEST = """\
rule: {id}
given:
  facts:
    kernel.sysctl: {{key: replace.me, value: "1", value_num: 1}}
cases:
  fires_at_threshold:
    expect: {{outcome: fired}}
  just_below_threshold_is_silent:
    facts:
      kernel.sysctl: {{key: replace.me, value: "0", value_num: 0}}
    expect: {{outcome: silent}}
  not_evaluated_without_the_fact:
    drop: [kernel.sysctl]
    expect: {{outcome: not_evaluated, missing: [kernel.sysctl]}}
"""

CAUSE = """\
schema: clusterdx/node/v1
id: {id}
kind: root_cause
title: {title}
summary: >-
  What is wrong, and how it slows training down (two to four sentences).
layer: {layer}
seed: []
# rare | low | medium | high: how often this is the cause on a cluster being diagnosed
prior: low
# typical throughput cost in percent, [low, high]
cost_pct: [1, 5]
causes:
  # what this cause produces: mechanism, observable or symptom ids (see `clusterdx kb graph`)
  - {{node: step-time-up, strength: moderate}}
remediations: [{id}-fix]
verification:
  - check: What to re-run after the fix.
    command: the exact command
    expect: What the output must show.
    recovery_pct: [1, 5]
references:
  - https://example.invalid/replace-with-a-permalink
status: experimental
"""

REMEDIATION = """\
schema: clusterdx/remediation/v1
id: {id}-fix
title: Fix {title}
addresses: [{id}]
risk: low
effort: low
disruption: job-restart
tradeoff: ""
steps:
  - text: What to change.
    command: the exact command or setting
verify: How to confirm it worked.
rollback: How to undo it.
references: []
"""


def _check_id(raw: str) -> tuple[str, str]:
    layer, _, ident = raw.rpartition("/")
    if not _ID.match(ident):
        raise ScaffoldError(f"id {ident!r} must be kebab-case (lowercase letters, digits, dashes)")
    return layer, ident


def _write(path: Path, text: str) -> Path:
    if path.exists():
        raise ScaffoldError(f"{path} exists already")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def new_rule(root: Path, name: str, node: str = "throughput-gap", author: str = "your name") -> list[Path]:
    layer, ident = _check_id(name)
    if not layer:
        raise ScaffoldError("give the rule as LAYER/ID, e.g. kernel/thp-always-on")
    fields = {"id": ident, "title": ident.replace("-", " ").title(), "layer": layer, "node": node,
              "author": author, "date": _dt.date.today().isoformat()}
    folder = root / "rules" / layer
    return [_write(folder / f"{ident}.yaml", RULE.format(**fields)),
            _write(folder / f"{ident}.test.yaml", RULE_TEST.format(**fields))]


def new_cause(root: Path, name: str) -> list[Path]:
    layer, ident = _check_id(name)
    layer = layer or "kernel"
    schema_layer = {"symptoms": "kernel"}.get(layer, layer)
    if schema_layer not in LAYERS:
        raise ScaffoldError(f"unknown layer {layer!r}; one of {', '.join(LAYERS[:-1])}")
    fields = {"id": ident, "title": ident.replace("-", " ").title(), "layer": schema_layer}
    return [_write(root / "kb" / "nodes" / schema_layer / f"{ident}.yaml", CAUSE.format(**fields)),
            _write(root / "kb" / "remediations" / f"{ident}-fix.yaml", REMEDIATION.format(**fields))]
