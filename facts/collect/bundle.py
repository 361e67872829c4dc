"""The bundle: one ``.tar.gz`` with every raw output and a ``manifest.json`` that explains them.

Layout (under one top folder named after the bundle)::

    manifest.json               host, scope, time, versions, one entry per probe
    commands/<probe>.txt        a command's output, byte for byte (after redaction)
    files/<probe>.txt           files read in process (grep . FILES shape: path:value)
    process/<pid>/<probe>.*     per-process probes (--pid / --process-name)
    heavy/<probe>.txt           heavy probes (--heavy)

Nothing is added to an output file: the manifest says which command produced which file, its
exit code, duration, status, the start of its stderr, and ``truncated`` when the output was cut
at the size cap (ingestion then reads that file as truncated). A probe that produced nothing (tool
missing, permission denied, timed out) has an entry and no file.
"""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from clusterdx.facts.collect.probe import Result, Status

SCHEMA = "clusterdx/bundle/v1"


class ProbeEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    kind: Literal["command", "file", "internal"]
    command: str
    argv: list[str] | None = None
    file: str | None = None
    format: str | None = None
    kb_probe: str | None = None
    status: Status
    exit_code: int | None = None
    duration_s: float = 0.0
    timeout_s: float | None = None
    bytes: int = 0
    stderr: str = ""
    reason: str = ""
    redacted: bool = False
    #: the output was cut at the size cap: the file holds its first bytes only (``reason`` says
    #: where); ingestion reads such a file as truncated
    truncated: bool = False


class KBVersion(BaseModel):
    sha256: str
    rules: int
    nodes: int
    probes: int


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: str = Field(SCHEMA, alias="schema")
    host: str
    scope: Literal["host", "container", "vm-guest"]
    environment: dict
    time: str
    duration_s: float
    clusterdx_version: str
    kb: KBVersion
    collector: dict
    summary: dict[str, int]
    probes: list[ProbeEntry]
    kb_probes: list[dict]

    def dump(self) -> bytes:
        return (self.model_dump_json(by_alias=True, indent=2) + "\n").encode()


def kb_version() -> KBVersion:
    """A hash of the shipped rules and kb files, with counts: which KB a bundle was made for."""
    from clusterdx import kb, rules

    digest = hashlib.sha256()
    counts = {"rules": 0, "nodes": 0, "probes": 0}
    for pkg, label in ((rules, "rules"), (kb, "kb")):
        root = Path(next(iter(pkg.__path__)))
        for path in sorted(root.rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc":
                continue
            rel = path.relative_to(root).as_posix()
            digest.update(f"{label}/{rel}\0".encode())
            digest.update(path.read_bytes())
            if path.suffix != ".yaml" or "fixtures" in path.parts:
                continue
            if label == "rules" and not path.name.endswith(".test.yaml"):
                counts["rules"] += 1
            elif label == "kb" and rel.startswith("nodes/"):
                counts["nodes"] += 1
            elif label == "kb" and rel.startswith("probes/"):
                counts["probes"] += 1
    return KBVersion(sha256=digest.hexdigest(), **counts)


def entry(res: Result) -> ProbeEntry:
    p = res.probe
    return ProbeEntry(
        name=p.name, kind=p.kind, command=p.command, argv=list(p.argv) or None,
        file=p.file if res.has_output else None, format=p.format, kb_probe=p.kb_probe, status=res.status,
        exit_code=res.exit_code, duration_s=res.duration_s, timeout_s=p.timeout_s if p.argv else None,
        bytes=len(res.data), stderr=res.stderr, reason=res.reason, redacted=res.redacted, truncated=res.truncated,
    )


def default_name(host: str, stamp: str) -> str:
    """``clusterdx-<host>-<UTC time>.tar.gz``; ``stamp`` like ``20250101T120000Z``."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in host) or "node"
    return f"clusterdx-{safe}-{stamp}.tar.gz"


def write(path: Path, manifest: Manifest, results: list[Result], mtime: float) -> None:
    """Write the bundle atomically (a ``.partial`` file renamed into place)."""
    top = path.name.removesuffix(".tar.gz").removesuffix(".tgz") or "bundle"
    tmp = path.with_name(path.name + ".partial")
    members: list[tuple[str, bytes]] = [("manifest.json", manifest.dump())]
    members += [(r.probe.file, r.data) for r in results if r.has_output]
    try:
        with open(tmp, "wb") as raw, tarfile.open(fileobj=raw, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
            for name, data in members:
                info = tarfile.TarInfo(f"{top}/{name}")
                info.size, info.mtime, info.mode = len(data), int(mtime), 0o644
                tar.addfile(info, io.BytesIO(data))
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
