"""Archives from untrusted tickets, read in memory with every size capped.

Supported: tar (plain or compressed), zip, and single gzip / bzip2 / xz files, all recognised by
their magic bytes, never by their names. Nothing is ever extracted to disk. A member is refused
(and reported, with the reason) when its name is absolute or holds a ``..`` component, when it
is a symbolic or hard link, a device, a FIFO or any other non-regular entry, or when it is
encrypted. Decompression runs in chunks and stops when the output passes the size cap or grows
to more than ``max_ratio`` times the compressed input (a decompression bomb).

Examples:

    >>> import gzip
    >>> detect(gzip.compress(b"hello"))
    'gzip'
    >>> listing = open_archive(gzip.compress(b"hello", mtime=0), "x.log.gz", Limits(), Budget(1 << 20))
    >>> [(m.name, m.data) for m in listing.members]
    [('x.log', b'hello')]
    >>> member_name_problem("../etc/passwd")
    "path with a '..' component"
"""

from __future__ import annotations

import bz2
import io
import lzma
import re
import stat
import tarfile
import time
import zipfile
import zlib
from dataclasses import dataclass, field

MiB = 1 << 20
GiB = 1 << 30


@dataclass(frozen=True)
class Limits:
    """Caps on what one ingestion reads; every cap that trips is reported in the inputs."""

    #: per file and per archive member; longer ones are parsed up to here ("truncated")
    max_file_bytes: int = 64 * MiB
    #: all bytes read from disk or produced by decompression, all inputs together
    max_total_bytes: int = 1 * GiB
    #: archive entries looked at per top-level archive (nested archives included)
    max_members: int = 10_000
    #: decompressed / compressed size above which decompression stops (a bomb)
    max_ratio: float = 200
    #: the ratio is only judged once the output is this large (tiny files compress absurdly)
    ratio_min_bytes: int = 1 * MiB
    #: archives inside archives opened; deeper ones are listed as skipped
    max_nesting: int = 1
    #: decompression chunk size
    chunk_bytes: int = 1 * MiB
    #: transcript segments taken from one file; the rest are reported as one skipped input
    max_segments: int = 10_000


class Budget:
    """The bytes still allowed for this ingestion (``Limits.max_total_bytes``)."""

    def __init__(self, total: int):
        self.total = total
        self.left = total

    def take(self, n: int) -> bool:
        if n > self.left:
            self.left = 0
            return False
        self.left -= n
        return True


class Quota:
    """Archive entries still allowed under one top-level input (``Limits.max_members``)."""

    def __init__(self, members: int):
        self.members = members


@dataclass
class Member:
    #: path inside the archive ('sub/lscpu.txt'); the raw name for refused members
    name: str
    #: the content (the first ``max_file_bytes`` when truncated); None when not read
    data: bytes | None
    #: the member's real (or, for truncated ones, declared) size
    size: int = 0
    #: "" when readable, else "skipped" or "error" with ``reason``
    status: str = ""
    reason: str = ""
    truncated: bool = False


@dataclass
class Listing:
    kind: str
    members: list[Member] = field(default_factory=list)
    #: archive-level problems: (status, reason); status "skipped", "partial" or "error"
    problems: list[tuple[str, str]] = field(default_factory=list)


_TAR_MAGIC = (b"ustar\x0000", b"ustar  \x00", b"ustar\x00")


def detect(head: bytes) -> str | None:
    """'gzip', 'bzip2', 'xz', 'zip' or 'tar' from the first 512+ bytes; None otherwise."""
    if head[:2] == b"\x1f\x8b":
        return "gzip"
    if re.match(rb"BZh[1-9](1AY&SY|\x17rE8P\x90)", head[:10]):
        return "bzip2"
    if head[:6] == b"\xfd7zXZ\x00":
        return "xz"
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "zip"
    if len(head) >= 265 and head[257:265].startswith(_TAR_MAGIC):
        return "tar"
    return None


_UNSUPPORTED = (
    (b"\x28\xb5\x2f\xfd", "zstd"), (b"7z\xbc\xaf\x27\x1c", "7-Zip"), (b"Rar!\x1a\x07", "RAR"),
    (b"\x1f\x9d", "compress (.Z)"), (b"\x04\x22\x4d\x18", "lz4"),
)


def unsupported(head: bytes) -> str | None:
    """The name of a compressed or archive format recognised but not read (zstd, 7-Zip...)."""
    for magic, label in _UNSUPPORTED:
        if head.startswith(magic):
            return label
    return None


def human(n: float) -> str:
    """``64 MiB``, ``1.5 GiB``, ``812 bytes``."""
    for unit, size in (("GiB", GiB), ("MiB", MiB), ("KiB", 1024)):
        if n >= size:
            value = n / size
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{int(n)} bytes"


def member_name_problem(name: str) -> str | None:
    """Why an archive member name is refused, or None when it is safe."""
    if not name or "\x00" in name:
        return "empty or invalid member name"
    n = name.replace("\\", "/")
    if n.startswith("/") or re.match(r"^[A-Za-z]:", n):
        return "absolute path"
    if ".." in n.split("/"):
        return "path with a '..' component"
    return None


def normalize_name(name: str) -> str:
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
    return "/".join(parts)


# -- decompression ------------------------------------------------------------------------------


class _Stop(Exception):
    pass


def decompress(data: bytes, kind: str, cap: int, limits: Limits,
               budget: Budget | None = None) -> tuple[bytes, tuple[str, str] | None]:
    """Decompress a gzip / bzip2 / xz stream in chunks.

    Returns the output and None, or the output so far and a problem ``(status, reason)``:
    a bomb, the size cap, an exhausted budget, or a truncated / corrupt stream.
    """
    out = bytearray()
    chunk = max(1, limits.chunk_bytes)
    problem: tuple[str, str] | None = None

    def emit(piece: bytes) -> None:
        nonlocal problem
        if not piece:
            return
        out.extend(piece)
        if budget is not None and not budget.take(len(piece)):
            problem = ("skipped", f"total size limit of {human(limits.max_total_bytes)} reached "
                                  "while decompressing")
            raise _Stop
        if len(out) > cap:
            problem = ("skipped", f"decompressed size over the limit of {human(cap)}")
            raise _Stop
        if len(out) > limits.ratio_min_bytes and len(out) > limits.max_ratio * max(1, len(data)):
            problem = ("skipped", f"decompression stopped after {human(len(out))}: more than "
                                  f"{limits.max_ratio:g} times the compressed size of "
                                  f"{human(len(data))} (possible decompression bomb)")
            raise _Stop

    try:
        chunks = _stream_chunks(data, kind, chunk)
        while True:
            try:
                emit(next(chunks))
            except StopIteration as end:
                if end.value:
                    problem = ("partial", "compressed stream is truncated")
                break
    except _Stop:
        pass
    except (zlib.error, OSError, EOFError, lzma.LZMAError, ValueError) as exc:
        problem = ("partial" if out else "error", f"corrupt {kind} stream: {exc}")
    return bytes(out), problem


def gzip_original_name(data: bytes) -> str | None:
    """The FNAME field of a gzip header (what ``gzip`` stores), if any."""
    if len(data) < 10 or data[:2] != b"\x1f\x8b" or not data[3] & 0x08:
        return None
    pos = 10
    if data[3] & 0x04:  # FEXTRA
        if len(data) < 12:
            return None
        pos += 2 + int.from_bytes(data[10:12], "little")
    end = data.find(b"\x00", pos, pos + 1024)
    if end < 0:
        return None
    name = data[pos:end].decode("latin-1").replace("\\", "/").rsplit("/", 1)[-1]
    return name or None


_SUFFIXES = {"gzip": (".gz", ".z", ".tgz"), "bzip2": (".bz2", ".tbz2", ".tbz"),
             "xz": (".xz", ".txz")}


def _single_name(data: bytes, kind: str, archive_name: str) -> str:
    base = archive_name.replace("\\", "/").rsplit("!/", 1)[-1].rsplit("/", 1)[-1]
    if kind == "gzip":
        original = gzip_original_name(data)
        if original and not member_name_problem(original):
            return original
    lower = base.lower()
    for suf in _SUFFIXES.get(kind, ()):
        if lower.endswith(suf) and len(base) > len(suf):
            stem = base[: -len(suf)]
            return stem + ".tar" if suf.startswith(".t") and suf != ".z" else stem
    return base + ".data"


# -- archives -----------------------------------------------------------------------------------


def open_archive(data: bytes, name: str, limits: Limits, budget: Budget,
                 quota: Quota | None = None, kind: str | None = None) -> Listing:
    """List the members of the archive or compressed file ``data`` (display name ``name``).

    ``budget`` is charged for decompressed bytes; ``quota`` counts archive entries.
    """
    kind = kind or detect(data[:512])
    quota = quota if quota is not None else Quota(limits.max_members)
    if kind in ("gzip", "bzip2", "xz"):
        out, problem = decompress(data, kind, budget.left, limits, budget)
        inner = detect(out[:512])
        if inner == "tar":
            listing = _read_tar(out, limits, quota, kind=f"tar.{kind}")
            if problem is not None and problem[0] == "skipped":
                _after_stop(listing, problem[1], data, f"tar.{kind}", limits, quota)
        elif problem is not None and problem[0] == "skipped":
            # a bomb or a cap: do not hand a cut-off blob to the sniffers as if it were a file
            listing = Listing(kind=kind)
        else:
            size = len(out)
            cap = limits.max_file_bytes
            listing = Listing(kind=kind, members=[Member(name=_single_name(data, kind, name),
                                                         data=out[:cap], size=size,
                                                         truncated=size > cap)])
        if problem is not None:
            listing.problems.insert(0, problem)
        return listing
    if kind == "tar":
        return _read_tar(data, limits, quota, kind="tar")
    if kind == "zip":
        return _read_zip(data, limits, budget, quota)
    return Listing(kind="unknown", problems=[("error", "not an archive")])


def _after_stop(listing: Listing, why: str, data: bytes, kind: str, limits: Limits, quota: Quota) -> None:
    """A tar read from a stream whose decompression was stopped: the member the stop cut is
    skipped (not parsed as if it were whole), and the entries after it are each listed as
    skipped, their names read by :func:`scan_tar_names` (which keeps no data); only what that
    scan could not reach (its time or entry limit) is summed up in one line."""
    for m in listing.members:
        if m.truncated and m.reason.startswith("member truncated: the archive ends"):
            m.status, m.data, m.truncated = "skipped", None, False
            m.reason = f"not read: {why}"
    entries, unfinished = scan_tar_names(data, kind.removeprefix("tar."), limits,
                                         max_entries=quota.members + len(listing.members))
    listed: dict[str, int] = {}
    for m in listing.members:
        listed[m.name] = listed.get(m.name, 0) + 1
    rest: list[Member] = []
    for raw, size, type_ in entries:
        name = raw if member_name_problem(raw) else normalize_name(raw)
        if type_ == b"5" or (not name and not raw):
            continue  # a directory: nothing to account for
        if listed.get(name, 0) > 0:
            listed[name] -= 1  # read (or cut) before the stop
            continue
        if quota.members <= 0:
            unfinished = unfinished or f"limit of {limits.max_members} entries reached"
            break
        quota.members -= 1
        rest.append(Member(name=name or raw, data=None, size=size, status="skipped", reason=f"not read: {why}"))
    listing.members += rest
    problems = []
    for status, reason in listing.problems:
        if status == "partial" and reason.startswith("tar archive truncated"):
            if unfinished is None:
                continue  # every entry after the stop is listed on its own
            reason = f"entries after the first {len(listing.members)} not listed ({unfinished}): {why}"
            status = "skipped"
        problems.append((status, reason))
    listing.problems = problems


#: seconds :func:`scan_tar_names` may spend reading past a decompression stop
SCAN_SECONDS = 10.0


def _stream_chunks(data: bytes, kind: str, chunk: int):
    """The decompressed stream in pieces of at most ``chunk`` bytes (never all at once); the
    generator returns True when the stream ends before its end marker (truncated). Concatenated
    gzip members are read on; trailing garbage after the last one is ignored, as gzip does."""
    if kind == "gzip":
        rest = data
        while rest:
            d = zlib.decompressobj(wbits=31)
            buf = rest
            while buf and not d.eof:
                yield d.decompress(buf, chunk)
                buf = d.unconsumed_tail
            if not d.eof:
                yield d.flush()
                return True
            rest = d.unused_data
            if rest[:2] != b"\x1f\x8b":
                return False
        return False
    d = bz2.BZ2Decompressor() if kind == "bzip2" else lzma.LZMADecompressor()
    yield d.decompress(data, chunk)
    while not d.eof:
        if d.needs_input:
            return True
        yield d.decompress(b"", chunk)
    return False


def _octal(field: bytes) -> int:
    if field[:1] and field[0] & 0x80:  # GNU base-256
        return int.from_bytes(field[1:], "big")
    digits = field.split(b"\0", 1)[0].strip()
    try:
        return int(digits or b"0", 8)
    except ValueError:
        return 0


def scan_tar_names(data: bytes, kind: str, limits: Limits, max_entries: int,
                   seconds: float = SCAN_SECONDS) -> tuple[list[tuple[str, int, bytes]], str | None]:
    """(name, size, type flag) of the entries of a compressed tar, in order, read in bounded
    memory: the stream is decompressed in chunks and only headers are kept (pax ``path`` and GNU
    long names included). The second value says why the scan stopped early (time, entry
    limit, corrupt stream), None when it reached the end."""
    out: list[tuple[str, int, bytes]] = []
    pending = bytearray()
    skip = 0
    long_name: str | None = None
    end = time.monotonic() + seconds
    need_meta = 0  # size of a pax / long-name block being gathered
    meta_type = b""
    try:
        for piece in _stream_chunks(data, kind, max(1, limits.chunk_bytes)):
            if time.monotonic() > end:
                return out, f"listing stopped after {seconds:g} s"
            view = memoryview(piece)
            if skip:
                n = min(skip, len(view))
                skip -= n
                view = view[n:]
            pending += view
            while True:
                if need_meta:
                    padded = -(-need_meta // 512) * 512
                    if len(pending) < padded:
                        break
                    long_name = _meta_name(bytes(pending[:need_meta]), meta_type) or long_name
                    del pending[:padded]
                    need_meta = 0
                    continue
                if skip:
                    n = min(skip, len(pending))
                    del pending[:n]
                    skip -= n
                    if skip:
                        break
                if len(pending) < 512:
                    break
                header = bytes(pending[:512])
                del pending[:512]
                if header == b"\0" * 512:
                    return out, None
                size = _octal(header[124:136])
                type_ = header[156:157]
                if type_ in (b"x", b"L", b"K"):
                    if size > 1 << 20:
                        return out, "corrupt tar header"
                    need_meta, meta_type = size, type_
                    continue
                if type_ == b"g":
                    skip = -(-size // 512) * 512
                    continue
                name = header[0:100].split(b"\0", 1)[0]
                if header[257:262] == b"ustar":
                    prefix = header[345:500].split(b"\0", 1)[0]
                    if prefix:
                        name = prefix + b"/" + name
                text = long_name if long_name is not None else name.decode("utf-8", "surrogateescape")
                long_name = None
                out.append((text, size, type_))
                if len(out) >= max_entries:
                    return out, f"limit of {limits.max_members} entries reached"
                skip = -(-size // 512) * 512 if type_ in (b"0", b"\0", b"7", b"S") else 0
    except (zlib.error, OSError, EOFError, lzma.LZMAError, ValueError) as exc:
        return out, f"corrupt stream: {exc}"
    return out, None


def _meta_name(block: bytes, type_: bytes) -> str | None:
    if type_ == b"L":
        return block.split(b"\0", 1)[0].decode("utf-8", "surrogateescape") or None
    if type_ == b"K":
        return None
    for rec in block.split(b"\n"):
        _, _, kv = rec.partition(b" ")
        key, _, value = kv.partition(b"=")
        if key == b"path":
            return value.decode("utf-8", "surrogateescape")
    return None


def _limit_note(limits: Limits, remaining: int) -> tuple[str, str]:
    return ("skipped", f"{remaining} more archive entries not read: limit of "
                       f"{limits.max_members} entries reached")


def _read_tar(data: bytes, limits: Limits, quota: Quota, kind: str) -> Listing:
    listing = Listing(kind=kind)
    try:
        tf = tarfile.open(fileobj=io.BytesIO(data), mode="r:")
    except (tarfile.TarError, OSError, EOFError, ValueError) as exc:
        listing.problems.append(("error", f"unreadable tar archive: {exc}"))
        return listing
    members: list[Member] = []
    seen = 0
    try:
        while True:
            try:
                info = tf.next()
            except (tarfile.TarError, OSError, EOFError, ValueError, UnicodeError) as exc:
                listing.problems.append(("partial", f"tar archive truncated or corrupt after "
                                                    f"{seen} entries: {exc}"))
                break
            if info is None:
                break
            if quota.members <= 0:
                rest = 1 + _count_rest(tf)
                listing.problems.append(_limit_note(limits, rest))
                break
            quota.members -= 1
            seen += 1
            m = _tar_member(tf, info, limits, data)
            if m is not None:
                members.append(m)
    finally:
        tf.close()
    listing.members = _sorted(members)
    return listing


def _count_rest(tf: tarfile.TarFile, cap: int = 1_000_000) -> int:
    n = 0
    try:
        while n < cap and tf.next() is not None:
            n += 1
    except (tarfile.TarError, OSError, EOFError, ValueError, UnicodeError):
        pass
    return n


def _tar_member(tf: tarfile.TarFile, info: tarfile.TarInfo, limits: Limits,
                raw_data: bytes) -> Member | None:
    raw = info.name
    problem = member_name_problem(raw)
    if problem:
        return Member(name=raw, data=None, size=info.size, status="skipped", reason=problem)
    name = normalize_name(raw)
    if info.isdir():
        return None
    if info.issym():
        return Member(name=name, data=None, status="skipped",
                      reason=f"symbolic link to {info.linkname!r} (not followed)")
    if info.islnk():
        return Member(name=name, data=None, status="skipped",
                      reason=f"hard link to {info.linkname!r} (not followed)")
    if info.ischr() or info.isblk():
        return Member(name=name, data=None, status="skipped", reason="device file")
    if info.isfifo():
        return Member(name=name, data=None, status="skipped", reason="FIFO")
    if not info.isreg():
        return Member(name=name, data=None, status="skipped",
                      reason=f"special tar entry (type {info.type!r})")
    if not name:
        return Member(name=raw, data=None, status="skipped", reason="empty or invalid member name")
    want = min(info.size, limits.max_file_bytes)
    if info.issparse():
        try:
            fh = tf.extractfile(info)
            data = fh.read(want) if fh is not None else b""
        except (tarfile.TarError, OSError, EOFError, ValueError) as exc:
            return Member(name=name, data=None, size=info.size, status="error",
                          reason=f"cannot read member: {exc}")
    else:
        # the archive is in memory: slice the member out instead of trusting the stream reader
        data = raw_data[info.offset_data: info.offset_data + want]
    if len(data) < want:
        return Member(name=name, data=data, size=info.size,
                      reason=f"member truncated: the archive ends after {len(data)} of "
                             f"{info.size} bytes", truncated=True)
    return Member(name=name, data=data, size=info.size, truncated=info.size > want)


def _read_zip(data: bytes, limits: Limits, budget: Budget, quota: Quota) -> Listing:
    listing = Listing(kind="zip")
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError,
            NotImplementedError) as exc:
        listing.problems.append(("error", f"unreadable zip archive: {exc}"))
        return listing
    members: list[Member] = []
    with zf:
        for idx, info in enumerate(infos):
            if quota.members <= 0:
                listing.problems.append(_limit_note(limits, len(infos) - idx))
                break
            quota.members -= 1
            m = _zip_member(zf, info, limits, budget)
            if m is not None:
                members.append(m)
    listing.members = _sorted(members)
    return listing


def _zip_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limits: Limits,
                budget: Budget) -> Member | None:
    raw = info.filename
    problem = member_name_problem(raw)
    if problem:
        return Member(name=raw, data=None, size=info.file_size, status="skipped", reason=problem)
    name = normalize_name(raw)
    mode = info.external_attr >> 16
    if info.is_dir() or (mode and stat.S_ISDIR(mode)):
        return None
    if mode and stat.S_ISLNK(mode):
        return Member(name=name, data=None, status="skipped", reason="symbolic link (not followed)")
    if mode and stat.S_IFMT(mode) and not stat.S_ISREG(mode):
        return Member(name=name, data=None, status="skipped", reason="device or special file")
    if info.flag_bits & 0x1:
        return Member(name=name, data=None, size=info.file_size, status="skipped",
                      reason="encrypted member")
    if not name:
        return Member(name=raw, data=None, status="skipped", reason="empty or invalid member name")
    out = bytearray()
    cap = limits.max_file_bytes
    chunk = max(1, limits.chunk_bytes)
    compressed = max(1, info.compress_size)
    try:
        with zf.open(info) as fh:
            while True:
                piece = fh.read(min(chunk, cap + 1 - len(out)))
                if not piece:
                    break
                if not budget.take(len(piece)):
                    return Member(name=name, data=None, size=info.file_size, status="skipped",
                                  reason=f"total size limit of {human(limits.max_total_bytes)} "
                                         "reached")
                out.extend(piece)
                if (len(out) > limits.ratio_min_bytes
                        and len(out) > limits.max_ratio * compressed):
                    return Member(name=name, data=None, size=info.file_size, status="skipped",
                                  reason=f"decompression stopped after {human(len(out))}: more "
                                         f"than {limits.max_ratio:g} times the compressed size "
                                         f"of {human(compressed)} (possible decompression bomb)")
                if len(out) > cap:
                    del out[cap:]
                    return Member(name=name, data=bytes(out),
                                  size=max(info.file_size, cap + 1), truncated=True)
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error, ValueError, NotImplementedError,
            RuntimeError, lzma.LZMAError) as exc:
        return Member(name=name, data=None, size=info.file_size, status="error",
                      reason=f"cannot read member: {exc}")
    return Member(name=name, data=bytes(out), size=len(out))


def _sorted(members: list[Member]) -> list[Member]:
    """Members by name; a name the archive holds twice (tar appends, zip allows it) gets ``#2``,
    ``#3``... in archive order, so each copy is read and reported on its own."""
    seen: dict[str, int] = {}
    for m in members:
        n = seen.get(m.name, 0) + 1
        seen[m.name] = n
        if n > 1:
            m.name = f"{m.name}#{n}"
    return sorted(members, key=lambda m: m.name)
