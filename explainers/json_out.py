"""JSON output (orjson), schema ``clusterdx.report/1``."""

from __future__ import annotations

from typing import Any

import orjson


def render(report: Any, **_: Any) -> str:
    return orjson.dumps(report.to_json_dict(), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n"
