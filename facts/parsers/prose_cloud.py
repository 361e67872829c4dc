"""prose_cloud - paths in a ticket that only a cloud provider's managed cluster uses (part of the prose reader)

"Training snapshot saved at /fsx/model/step=0.ckpt": AWS ParallelCluster and SageMaker HyperPod
mount their FSx for Lustre file system at ``/fsx``. A path sign of kb/gazetteers/cloud-signs.yaml
found on any line of the text (words, quotes and pasted logs alike: a path is a path) becomes a
``platform.cloud_sign``, once per sign. Weak evidence of the provider on its own.

Sample input::

    > 1: Steps 0 Training snapshot saved at /fsx/model/test-0117/step=0.ckpt

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> from clusterdx.facts.parsers import prose
    >>> doc = Document.from_text(SAMPLE); ctx = ParseContext(doc, "prose"); prose.parse(doc, ctx)
    >>> [(s.provider, s.sign, s.text) for s in ctx.facts if s.fact_type == "platform.cloud_sign"]
    [('aws', 'aws-fsx-lustre-mount', '/fsx/model/test-0117/step=0.ckpt')]
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from clusterdx.facts.gazetteer import gazetteers

SAMPLE = "> 1: Steps 0 Training snapshot saved at /fsx/model/test-0117/step=0.ckpt\n"


@lru_cache(maxsize=1)
def _paths() -> list[tuple[Any, re.Pattern[str]]]:
    return [(r, re.compile(r.pattern, re.I)) for r in gazetteers().cloud_signs if r.kind == "path"]


def line(reader: Any, index: int, text: str) -> None:
    from clusterdx.facts.model.platform import CloudSign

    if "/" not in text:
        return
    for row, pat in _paths():
        m = pat.search(text)
        if m:
            word = text[m.start():].split()[0].strip("`'\",;()")[:120]
            reader.add(CloudSign, index, ("cloud_sign", row.id), provider=row.provider, sign=row.id,
                       kind=row.kind, fabric=row.fabric, text=word)
