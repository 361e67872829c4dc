"""NGC container tags and the NCCL they ship (``kb/reference/ngc-containers.yaml``).

A ticket that names only its image still fixes the NCCL release: ``nvcr.io/nvidia/pytorch:23.11-py3``
ships the release its notes list. One owner for "which NCCL is in this image"; an image the table
does not list gives None, never a guess.

    >>> nccl_for_image("nvcr.io/nvidia/pytorch:23.11-py3")[0]
    '2.19.3'
    >>> nccl_for_image("nvcr.io/nvidia/pytorch:19.01-py3") is None
    True
    >>> [m.group(0) for m in IMAGE.finditer("Docker image: nvcr.io/nvidia/pytorch:24.02-py3.")]
    ['nvcr.io/nvidia/pytorch:24.02-py3']
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from clusterdx.facts import lazyre
from clusterdx.facts.kbtables import shipped_table


#: an NGC framework image with a monthly tag: nvcr.io/nvidia/<framework>:<YY.MM>[-suffix]
IMAGE = lazyre.compile(r"(?<![\w./-])nvcr\.io/nvidia/([a-z][a-z0-9_-]{1,30}):(\d{2}\.\d{2})(?:-[A-Za-z0-9]{1,20}(?:\.[A-Za-z0-9]{1,10})*)?(?![\w-])")


class ImageRow(BaseModel):
    model_config = ConfigDict(extra="forbid")
    framework: str
    tag: str
    nccl: str
    reference: str


class ImageTable(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    schema_: Literal["clusterdx/ngc-containers/v1"] = Field(alias="schema")
    images: list[ImageRow]


@lru_cache(maxsize=1)
def table() -> ImageTable:
    return shipped_table("reference/ngc-containers.yaml", ImageTable)


def nccl_for_image(image: str) -> tuple[str, str] | None:
    """(NCCL version, reference) of an NGC image the table lists, else None."""
    m = IMAGE.search(image or "")
    if m is None:
        return None
    fw, tag = m.group(1).lower(), m.group(2)
    row = next((r for r in table().images if r.framework == fw and r.tag == tag), None)
    return (row.nccl, row.reference) if row else None
