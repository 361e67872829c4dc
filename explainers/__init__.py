"""Renderers of a report: one module per output format, looked up lazily by name."""

from __future__ import annotations

import importlib
from typing import Callable

#: format name -> module that defines ``render(report, **options) -> str``
FORMATS: dict[str, str] = {
    "text": "clusterdx.explainers.text",
    "json": "clusterdx.explainers.json_out",
    "markdown": "clusterdx.explainers.markdown",
    "html": "clusterdx.explainers.html",
}


def renderer(name: str) -> Callable[..., str]:
    try:
        module = FORMATS[name]
    except KeyError:
        raise ValueError(f"unknown format {name!r}; choose one of {', '.join(FORMATS)}") from None
    return importlib.import_module(module).render
