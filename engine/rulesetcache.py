"""The durable-rules ruleset of a set of compiled rules, kept beside the compiled knowledge base.

Turning some 300 compiled rules into durable's JSON and checking its static limits
(:func:`clusterdx.engine.durable.compile_ruleset`) costs tens of milliseconds of every
diagnosis, and its result is a pure function of the rules' conjunctions. So it is stored in the
cache folder of :mod:`clusterdx.engine.kbcache` (same ``CLUSTERDX_NO_CACHE``, same ownership
checks, same pruning), keyed by a hash of the conjunctions' ``repr`` (the frozen dataclasses of
:mod:`clusterdx.engine.ir`: every field, with its Python type, so ``1`` and ``1.0`` and
``True`` are different keys), the tool version and the size and modification time of the code
that compiles them. A stored ruleset that is not of this shape is ignored with a warning and
compiled again.

A stored entry looks like::

    {"format": "clusterdx.kbcache/1", "key": "...",
     "json": {"init": {...}, "r0c0": {"all": [...]}},
     "names": {"r0c0": [0, 0, -1]}, "regexes": {"gpu.info": [["rx0", "name", "H100"]]}}
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Sequence

from clusterdx.engine import kbcache
from clusterdx.engine.durable import CompiledRuleset, compile_ruleset
from clusterdx.engine.ir import CompiledRule

PREFIX = "ruleset"
#: modules whose code shapes the stored ruleset: a change in a checkout is another key
_CODE = ("durable.py", "ir.py", "rulesetcache.py")


def _key(rules: Sequence[CompiledRule]) -> str:
    from clusterdx import __version__

    h = hashlib.blake2b(digest_size=20)
    h.update(f"{kbcache.FORMAT}\0{__version__}\0".encode())
    here = Path(__file__).parent
    for name in _CODE:
        try:
            st = (here / name).stat()
            h.update(f"{name}:{st.st_size}:{st.st_mtime_ns}\0".encode())
        except OSError:
            h.update(f"{name}:?\0".encode())
    h.update(repr([r.conjunctions for r in rules]).encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def _from_data(data: dict[str, Any]) -> CompiledRuleset:
    """The stored ruleset, its shape checked; TypeError or ValueError when it is not one."""
    body, names, regexes = data["json"], data["names"], data["regexes"]
    if not isinstance(body, dict) or not isinstance(names, dict) or not isinstance(regexes, dict):
        raise TypeError("not a ruleset")
    out_names: dict[str, tuple[int, int, int]] = {}
    for name, where in names.items():
        ri, ci, ni = where
        if not all(type(x) is int for x in (ri, ci, ni)) or name not in body:
            raise ValueError(f"bad rule name entry {name!r}")
        out_names[name] = (ri, ci, ni)
    out_rx: dict[str, list[tuple[str, str, str]]] = {}
    for fact_type, rows in regexes.items():
        out_rx[fact_type] = []
        for rx_key, fld, pattern in rows:
            if not all(isinstance(x, str) for x in (rx_key, fld, pattern)):
                raise ValueError("bad regex entry")
            out_rx[fact_type].append((rx_key, fld, pattern))
    return CompiledRuleset(json=body, names=out_names, regexes=out_rx)


def ruleset_for(rules: Sequence[CompiledRule]) -> CompiledRuleset:
    """``compile_ruleset(rules)``, from the cache when these rules were compiled before."""
    if not kbcache.enabled():
        return compile_ruleset(rules)
    key = _key(rules)
    stored = kbcache.read(key, PREFIX)
    if stored is not None:
        try:
            return _from_data(stored)
        except (KeyError, TypeError, ValueError) as exc:
            kbcache.warn(f"ignoring a stored ruleset that does not hold one ({type(exc).__name__}); "
                         "compiling it again")
    compiled = compile_ruleset(rules)
    kbcache.write(key, {"json": compiled.json, "names": compiled.names, "regexes": compiled.regexes}, PREFIX)
    return compiled
