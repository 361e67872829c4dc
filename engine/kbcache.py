"""The compiled knowledge base: the validated documents, the load's warnings and the causal graph's
tables, written once as JSON into the user's cache folder and read back by later runs.

Reading 400-odd YAML files, checking every rule against the fact models and building the graph
takes about a second; reading one JSON file and validating its documents takes milliseconds. The
cache is keyed by the content of every file the load would read (path and bytes, per folder, in
load order), the tool version, this format's version, and the size and modification time of
the modules whose code shapes the compiled form (the document schema, the loader's checks, the
fact models, the graph). Any change to one of them is another key, so another file. Reading
and hashing every file is itself most of a warm load, so a run also stores its key under the
files' *stat key* (device, inode, size, modification and change time of each, :func:`load_key`),
which the next run over the very same files finds without reading them.

The cache holds data only (orjson; no pickle): every document is validated again by its pydantic
model when it is read, so a cache file is never trusted more than a KB file would be. A file that
does not parse, is of another format or version, or names another key is ignored with a warning
and rebuilt. A knowledge base with errors is never cached: its problems are worth their source
locations, so it is loaded from source each time. ``kb lint``, ``kb test`` and authoring always
read the source (:func:`clusterdx.engine.kb.load_kb` is called with ``cache=False``).

Where: ``$CLUSTERDX_CACHE_DIR``, else ``platformdirs.user_cache_dir("clusterdx")``
(``~/.cache/clusterdx`` on Linux). ``CLUSTERDX_NO_CACHE=1`` (or ``clusterdx --no-cache``) reads
the source and writes nothing.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Any, Iterable

FORMAT = "clusterdx.kbcache/1"
ENV_DIR = "CLUSTERDX_CACHE_DIR"
ENV_OFF = "CLUSTERDX_NO_CACHE"
#: compiled knowledge bases kept side by side (a checkout, the shipped KB, a site's folders)
KEEP = 8
#: cached tables kept side by side: one run reads seven (references, signatures, gazetteers,
#: releases), so eight evicted a run's own tables as soon as a second checkout or an edited table
#: wrote one, and every run then parsed the YAML again (the reference table alone ~30 ms); they
#: are a few KiB each
TABLE_KEEP = 64

#: modules whose code decides what a load produces (relative to the package root); a change to
#: one in a checkout changes the key without a version bump
_CODE = ("engine/schema.py", "engine/kb.py", "engine/kbcache.py", "engine/graph.py", "engine/weights.py",
         "engine/ir.py", "engine/yamlsafe.py", "engine/problems.py", "facts/base.py")
_CODE_DIRS = ("facts/model",)


def enabled() -> bool:
    return os.environ.get(ENV_OFF, "").strip().lower() not in ("1", "true", "yes", "on")


def cache_dir() -> Path:
    chosen = os.environ.get(ENV_DIR)
    if chosen:
        return Path(chosen)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("clusterdx"))


def warn(message: str) -> None:
    # a cache problem costs time, never the answer: say so once and carry on from source
    print(f"clusterdx: warning: {message}", file=sys.stderr)


def _code_fingerprint() -> list[Any]:
    from clusterdx import __version__
    from clusterdx.engine import kb as kb_module

    # clusterdx.engine and clusterdx.facts are sibling folders installed or in a checkout alike
    engine = Path(kb_module.__file__).parent
    pkg = {"engine": engine, "facts": engine.parent / "facts"}
    out: list[Any] = [FORMAT, __version__]

    def where(rel: str) -> Path:
        top, _, rest = rel.partition("/")
        return pkg[top] / rest

    paths = [where(rel) for rel in _CODE]
    for rel in _CODE_DIRS:
        folder = where(rel)
        try:
            paths += sorted(folder / n for n in os.listdir(folder) if n.endswith(".py"))
        except OSError:
            pass
    for p in paths:
        try:
            st = p.stat()
            out.append((p.name, st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((p.name, None))
    return out


def source_key(roots: Iterable[Path], files: dict[Path, list[Path]]) -> str:
    """The key of a load of ``files`` (per root, in load order): a hash of every file's path and
    content, of the tool version and of the code that compiles them."""
    h = hashlib.blake2b(digest_size=20)
    h.update(repr(_code_fingerprint()).encode())
    for root in roots:
        h.update(b"\0root\0" + str(root).encode("utf-8", "surrogateescape"))
        for path in files.get(root, ()):
            try:
                data = path.read_bytes()
            except OSError as exc:
                data = f"<unreadable {exc.errno}>".encode()
            rel = os.path.relpath(path, root)
            h.update(b"\0file\0" + rel.encode("utf-8", "surrogateescape") + b"\0" + str(len(data)).encode() + b"\0")
            h.update(data)
    return h.hexdigest()


#: a stat key -> source key alias (see :func:`load_key`)
ALIAS_PREFIX = "kbstat"
#: files changed less than this long ago are never keyed by their stat (see :func:`_stat_key`)
SETTLED_NS = 2_000_000_000


def _stat_key(roots: Iterable[Path], files: dict[Path, list[Path]]) -> str | None:
    """A key of the same files as :func:`source_key` from their identity on this machine (device,
    inode, size, modification and change times) instead of their content; None when one cannot
    be stat'ed, or when one changed in the last :data:`SETTLED_NS`. Any write to a file sets its
    change time, which no tool can set back, so files with the same stat key are the same bytes;
    but file times tick in steps of a few milliseconds, so a file written twice within one step
    keeps its times: one that changed just now is read (git's "racily clean" entries)."""
    import time

    recent = time.time_ns() - SETTLED_NS
    h = hashlib.blake2b(digest_size=20)
    h.update(b"stat\0" + repr(_code_fingerprint()).encode())
    for root in roots:
        h.update(b"\0root\0" + str(root).encode("utf-8", "surrogateescape"))
        for path in files.get(root, ()):
            try:
                st = path.stat()
            except OSError:
                return None
            if st.st_ctime_ns > recent or st.st_mtime_ns > recent:
                return None
            h.update(f"\0{os.path.relpath(path, root)}\0{st.st_dev}:{st.st_ino}:{st.st_size}:"
                     f"{st.st_mtime_ns}:{st.st_ctime_ns}".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def load_key(roots: Iterable[Path], files: dict[Path, list[Path]]) -> str:
    """:func:`source_key` of these files, without reading them when a previous run stored it under
    their stat key: hashing the 500-odd files of the shipped KB is most of a warm load's time."""
    roots = list(roots)
    alias = _stat_key(roots, files)
    if alias is not None:
        stored = read(alias, ALIAS_PREFIX)
        key = stored.get("source_key") if stored is not None else None
        if isinstance(key, str) and len(key) == 40 and all(c in "0123456789abcdef" for c in key):
            return key
    key = source_key(roots, files)
    if alias is not None:
        write(alias, {"source_key": key}, ALIAS_PREFIX)
    return key


def _file(key: str, prefix: str = "kb") -> Path:
    return cache_dir() / f"{prefix}-{key}.json"


def read(key: str, prefix: str = "kb") -> dict[str, Any] | None:
    """The compiled knowledge base stored under ``key``, or None (absent, or ignored with a warning)."""
    import orjson

    path = _file(key, prefix)
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not _own(st):
                warn(f"ignoring {path}: written by another user or writable by others; loading from source")
                return None
            raw = fh.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        warn(f"cannot read the compiled knowledge base {path}: {exc.strerror or exc}; loading from source")
        return None
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        warn(f"ignoring a corrupt compiled knowledge base {path} ({exc}); rebuilding it")
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("key") != key:
        warn(f"ignoring {path}: not a compiled knowledge base of this version ({FORMAT}); rebuilding it")
        return None
    return data


def _own(st: os.stat_result) -> bool:
    """A cache file counts only when this user wrote it and nobody else can change it: a shared
    cache folder must not let another account rewrite the knowledge base a diagnosis uses."""
    if not hasattr(os, "getuid"):
        return True
    return st.st_uid == os.getuid() and not st.st_mode & 0o022


def write(key: str, payload: dict[str, Any], prefix: str = "kb") -> None:
    """Store ``payload`` under ``key`` (atomically); a folder that cannot be written is skipped quietly:
    the run has its answer already, and the next one will try again."""
    import orjson

    folder = cache_dir()
    path = _file(key, prefix)
    body = orjson.dumps({"format": FORMAT, "key": key, **payload})
    tmp = folder / f".{prefix}-{key}.{os.getpid()}.tmp"
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(body)
        os.replace(tmp, path)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass
        return
    _prune(folder, keep=path, prefix=prefix, count=TABLE_KEEP if prefix == TABLE_PREFIX else KEEP)


def _prune(folder: Path, keep: Path, prefix: str, count: int = KEEP) -> None:
    try:
        entries = [p for p in folder.glob(f"{prefix}-*.json") if p != keep]
        entries.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        for old in entries[count - 1:]:
            old.unlink()
    except OSError:
        pass


#: shipped YAML tables (reference systems, signatures, gazetteers, releases), a few of each kept
TABLE_PREFIX = "table"


def table_data(text: str) -> Any:
    """The data of a YAML table (``yaml.safe_load(text)``), read from the cache when this exact text
    was loaded before. Only data that survives JSON unchanged is stored (a YAML date or a number key
    would not), so a cached table is always what the YAML says."""
    import yaml

    if not enabled():
        return yaml.safe_load(text)
    from clusterdx import __version__

    h = hashlib.blake2b(digest_size=20)
    h.update(f"{FORMAT}\0{__version__}\0".encode())
    h.update(text.encode("utf-8", "surrogateescape"))
    key = h.hexdigest()
    stored = read(key, TABLE_PREFIX)
    if stored is not None and "data" in stored:
        return stored["data"]
    data = yaml.safe_load(text)
    import orjson

    try:
        same = orjson.loads(orjson.dumps(data)) == data
    except (TypeError, orjson.JSONEncodeError):
        same = False
    if same:
        write(key, {"data": data}, TABLE_PREFIX)
    return data


def clear() -> int:
    """Remove every compiled knowledge base, compiled rules, key alias and table; the number removed."""
    removed = 0
    for p in [*cache_dir().glob("kb-*.json"), *cache_dir().glob("engine-*.json"),
              *cache_dir().glob(f"{ALIAS_PREFIX}-*.json"),
              *cache_dir().glob(f"{TABLE_PREFIX}-*.json")]:
        try:
            p.unlink()
            removed += 1
        except OSError:
            pass
    return removed
