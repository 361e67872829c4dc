"""Shipped knowledge tables (``kb/reference/*.yaml``) read into their pydantic models.

One owner for "load a table the package ships": the text comes from the installed ``clusterdx.kb``
package (never from the working directory, which a user controls), its data through the KB cache
(:func:`clusterdx.engine.kbcache.table_data`, so a warm run skips YAML), and the model validates
it, so a broken row in shipped data raises at first use rather than deciding anything.
"""

from __future__ import annotations

from importlib import resources
from typing import TypeVar

from pydantic import BaseModel

T = TypeVar("T", bound=BaseModel)


def shipped_table(relpath: str, model: type[T]) -> T:
    """The table at ``kb/<relpath>``, validated as ``model``."""
    text = resources.files("clusterdx.kb").joinpath(relpath).read_text("utf-8")
    from clusterdx.engine.kbcache import table_data

    return model.model_validate(table_data(text))
