"""Cuts applied before any rule runs, each owned by one rule parameter.

Code that drops what a rule would judge (a run too short to say anything about bandwidth, a node
too close to its peers to be an outlier) must drop it at the rule's own threshold: a Python copy of
the number would let a site override reach the rule but not the facts the rule reads. So the number
lives once, as the parameter of the rule in ``rules/``, and this module only names which parameter
owns each cut. The engine passes the effective values (the knowledge base's defaults with the
site's ``rules.params`` over them, see :func:`clusterdx.engine.site.rule_params`); without them
the shipped rule file's default is read.

>>> value(SMALL_MESSAGE_BYTES, {"nccltests-small-max-size": {"min_bytes": 1 << 30}})
1073741824
>>> value(OUTLIER_PEERS, {}) == value(OUTLIER_PEERS, None) == shipped_default(OUTLIER_PEERS)
True
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Mapping

import yaml

#: rule id -> parameter name -> value in force
Params = Mapping[str, Mapping[str, Any]]


@dataclass(frozen=True)
class Owner:
    """The rule parameter that owns a cut."""

    rule: str
    param: str


#: nccl-tests runs that stop below this size never reach the bandwidth plateau: no efficiency fact
SMALL_MESSAGE_BYTES = Owner("nccltests-small-max-size", "min_bytes")
#: robust z-score from which a node is an outlier among its fleet peers
OUTLIER_SCORE = Owner("fleet-throughput-outlier", "min_score")
#: fewest nodes reporting a metric for an outlier to mean anything
OUTLIER_PEERS = Owner("fleet-throughput-outlier", "min_peers")

OWNERS: tuple[Owner, ...] = (SMALL_MESSAGE_BYTES, OUTLIER_SCORE, OUTLIER_PEERS)


def value(owner: Owner, params: Params | None) -> Any:
    """The value in force: ``params`` when it sets it, else the shipped rule's default."""
    if params:
        mine = params.get(owner.rule) or {}
        if owner.param in mine:
            return mine[owner.param]
    return shipped_default(owner)


@lru_cache(maxsize=None)
def shipped_default(owner: Owner) -> Any:
    """The default in the shipped rule file (that file alone, not the whole knowledge base)."""
    root = resources.files("clusterdx.rules")
    for layer in root.iterdir():
        path = layer.joinpath(f"{owner.rule}.yaml")
        if path.is_file():
            doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            try:
                return doc["params"][owner.param]["default"]
            except (KeyError, TypeError):
                break
    raise LookupError(f"no shipped rule parameter {owner.rule}.{owner.param}")
