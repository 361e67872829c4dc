"""NGC container tags and framework wheels, and the NCCL they ship.

A ticket that names only its image still fixes the NCCL release: ``nvcr.io/nvidia/pytorch:23.11-py3``
ships the release its notes list (``kb/reference/ngc-containers.yaml``), and a torch wheel bundles the
NCCL its series pins (``kb/reference/framework-releases.yaml``). One owner for "which NCCL is in this
image or wheel"; an image or series the tables do not list gives None, never a guess.

    >>> nccl_for_image("nvcr.io/nvidia/pytorch:23.11-py3")[0]
    '2.19.3'
    >>> nccl_for_image("nvcr.io/nvidia/pytorch:19.01-py3") is None
    True
    >>> nccl_for_wheel("pytorch", "2.3.0")[0]
    '2.20.5'
    >>> nccl_for_wheel("pytorch", "1.1") is None
    True
    >>> [m.group(0) for m in IMAGE.finditer("Docker image: nvcr.io/nvidia/pytorch:24.02-py3.")]
    ['nvcr.io/nvidia/pytorch:24.02-py3']
"""

from __future__ import annotations

import re
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


class WheelRow(BaseModel):
    model_config = ConfigDict(extra="forbid")
    framework: str
    #: MAJOR.MINOR
    series: str
    nccl: str
    reference: str


class FrameworkChange(BaseModel):
    """A framework release whose changed default costs multi-GPU jobs time (what it implies is
    :mod:`clusterdx.facts.releases`'s to say)."""

    model_config = ConfigDict(extra="forbid")
    id: str
    framework: str
    versions: list[str]
    cause: str
    when: list[Literal["multi-gpu"]] = []
    summary: str
    remedy: str
    #: the variable that works around it
    setting: str = ""
    reference: str


class WheelTable(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    schema_: Literal["clusterdx/framework-releases/v1"] = Field(alias="schema")
    wheels: list[WheelRow]
    changes: list[FrameworkChange] = []


@lru_cache(maxsize=1)
def wheel_table() -> WheelTable:
    return shipped_table("reference/framework-releases.yaml", WheelTable)


def nccl_for_wheel(framework: str, version: str) -> tuple[str, str] | None:
    """(NCCL version, reference) the framework's wheel of ``version``'s series bundles, else None."""
    m = re.match(r"(\d{1,3})\.(\d{1,3})(?:\.\d{1,4})?(?![\d.])", version or "")
    if m is None:
        return None
    series = f"{int(m.group(1))}.{int(m.group(2))}"
    row = next((r for r in wheel_table().wheels if r.framework == framework.lower() and r.series == series), None)
    return (row.nccl, row.reference) if row else None
