"""Cloud-provider signs from the names a ticket shows (kb/gazetteers/cloud-signs.yaml).

A node called ``ip-10-1-100-254`` (an NCCL log prefix, a prompt) is named the way EC2 names its
instances; an RDMA device ``efa_0`` or ``rdmap16s27`` is an EFA adapter. Each becomes one
``platform.cloud_sign`` per node and sign; paths in the user's words (``/fsx``) are the prose
reader's to find. A sign is weak evidence on its own: rules weigh it so.

Examples:

    >>> from clusterdx.facts.base import SourceRef
    >>> from clusterdx.facts.model.net import IbDevice
    >>> src = SourceRef(input="log", line=1, parser="nccl-debug")
    >>> signs = derive([IbDevice(node="ip-10-1-100-254", source=src, device="rdmap16s27"),
    ...                 IbDevice(node="gpu-a01", source=src, device="mlx5_0")])
    >>> sorted((s.node, s.sign, s.fabric) for s in signs)
    [('ip-10-1-100-254', 'aws-ec2-ip-hostname', ''), ('ip-10-1-100-254', 'aws-efa-device', 'EFA')]
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Sequence

from clusterdx.facts.base import Fact
from clusterdx.facts.derive._common import of_type
from clusterdx.facts.gazetteer import gazetteers
from clusterdx.facts.model.platform import CloudSign


@lru_cache(maxsize=1)
def _rows(kind: str) -> list[tuple[object, re.Pattern[str]]]:
    return [(r, re.compile(r.pattern, re.I)) for r in gazetteers().cloud_signs if r.kind == kind]


def derive(facts: Sequence[Fact]) -> list[Fact]:
    out: list[Fact] = []
    seen: set[tuple[str, str]] = set()

    def add(fact: Fact, row, text: str) -> None:
        if (fact.node, row.id) in seen:
            return
        seen.add((fact.node, row.id))
        out.append(CloudSign(node=fact.node, scope=fact.scope, source=fact.source, provenance="reported",
                             provider=row.provider, sign=row.id, kind=row.kind, fabric=row.fabric, text=text))

    first: dict[str, Fact] = {}
    for f in facts:
        if f.node and f.fact_type != "platform.cloud_sign":
            first.setdefault(f.node, f)
    for node, f in first.items():
        for row, pat in _rows("hostname"):
            if pat.search(node):
                add(f, row, node)
    for d in of_type(facts, "ib.device"):
        for row, pat in _rows("device"):
            if pat.search(d.device):
                add(d, row, d.device)
    return out
