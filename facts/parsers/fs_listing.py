"""ls / ls -l / find / ldconfig -p / ldd - Command

Listings that show whether the pieces a GPU job needs are installed: NCCL (``libnccl.so.2``,
its version from the file name ``libnccl.so.2.21.5``), NCCL network and tuner plugins
(``libnccl-net*.so``), rdma-core (``libibverbs``, ``librdmacm``, ``libmlx5``, the
``libmlx5-rdmav*.so`` provider), the CUDA driver (``libcuda.so.1``, ``libnvidia-ml``), the
``nvidia-peermem`` / ``nv_peer_mem`` kernel module files, and device nodes (``/dev/nvidia*``,
``/dev/nvidiactl``, ``/dev/nvidia-uvm``, ``/dev/infiniband/uverbs*``, ``rdma_cm``, ``/dev/shm``).
Each becomes one ``fs.presence`` fact; other files are not reported.

``present=False`` only where the listing proves it:

* an error line, ``ls: cannot access '/dev/infiniband': No such file or directory`` (also the
  old ``ls: /dev/x: No such file ...`` and ``find: '/x': No such file ...``), or ldd's
  ``libibverbs.so.1 => not found``;
* a name missing from a listing that covers its whole folder: ``ls [-l] /dev`` (``/dev/nvidiactl``,
  ``/dev/nvidia-uvm``, ``/dev/infiniband``, ``/dev/shm``) or ``ls /dev/infiniband`` (``uverbs*``,
  ``rdma_cm``), the folder known from the command or an ``ls`` section header (``/dev/infiniband:``);
  an unfiltered ``ldconfig -p`` (the loader's whole cache) or one filtered by ``grep WORD`` for the
  names holding WORD; ``find DIR -name PATTERN`` for the names the pattern matches (``path`` is
  then the folder searched: the name is not under it, which says nothing about other folders).

Sample input (``ls -l /dev/infiniband``)::

    total 0
    crw------- 1 root root 231,  64 Nov 20 15:07 issm0
    crw-rw-rw- 1 root root  10, 122 Nov 20 15:07 rdma_cm
    crw------- 1 root root 231,   0 Nov 20 15:07 umad0

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE, command="ls -l /dev/infiniband")
    >>> ctx = ParseContext(doc, "ls"); parse_ls(doc, ctx)
    >>> [(f.name, f.present, f.source.line) for f in ctx.facts][1:]
    [('/dev/infiniband/rdma_cm', True, 3), ('/dev/infiniband/umad0', True, 4), ('/dev/infiniband', True, 0), ('/dev/infiniband/uverbs*', False, 0)]
    >>> doc = Document.from_text(SAMPLE_LDD)
    >>> ctx = ParseContext(doc, "ldd"); parse_ldd(doc, ctx)
    >>> [(f.kind, f.name, f.present, f.path) for f in ctx.facts]
    [('library', 'libnccl.so.2', True, '/usr/lib/x86_64-linux-gnu/libnccl.so.2'), ('library', 'libibverbs.so.1', False, '')]
    >>> classify("/usr/lib/x86_64-linux-gnu/libnccl.so.2.21.5")
    ('library', 'libnccl.so.2', '2.21.5')
"""

from __future__ import annotations

import fnmatch
import os
import re

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.presence import FsPresence


SAMPLE = """\
total 0
crw------- 1 root root 231,  64 Nov 20 15:07 issm0
crw-rw-rw- 1 root root  10, 122 Nov 20 15:07 rdma_cm
crw------- 1 root root 231,   0 Nov 20 15:07 umad0
"""
SAMPLE_LDD = """\
\tlinux-vdso.so.1 (0x00007ffd4b9f2000)
\tlibnccl.so.2 => /usr/lib/x86_64-linux-gnu/libnccl.so.2 (0x00007f2a10000000)
\tlibibverbs.so.1 => not found
"""

# -- what is worth reporting ----------------------------------------------------------------------

#: (regex on the file name, kind, canonical name; {0} is the soname major, version group 'v')
_LIBS = (
    (re.compile(r"^libnccl-(?:net|tuner|profiler)[\w.+-]*\.so(?:\.[\d.]+)?$"), "plugin", None),
    (re.compile(r"^libnccl\.so(?:\.(?P<major>\d+)(?:\.(?P<v>\d+(?:\.\d+)*))?)?$"), "library", "libnccl.so"),
    (re.compile(r"^libibverbs\.so(?:\.(?P<major>\d+)(?:\.(?P<v>[\d.]+))?)?$"), "library", "libibverbs.so"),
    (re.compile(r"^librdmacm\.so(?:\.(?P<major>\d+)(?:\.(?P<v>[\d.]+))?)?$"), "library", "librdmacm.so"),
    (re.compile(r"^libmlx5\.so(?:\.(?P<major>\d+)(?:\.(?P<v>[\d.]+))?)?$"), "library", "libmlx5.so"),
    (re.compile(r"^libmlx5-rdmav\d+\.so$"), "plugin", None),
    (re.compile(r"^libcuda\.so(?:\.(?P<major>1)|\.(?P<v>\d{3}(?:\.\d+)+))?$"), "library", "libcuda.so"),
    (re.compile(r"^libnvidia-ml\.so(?:\.(?P<major>1)|\.(?P<v>\d{3}(?:\.\d+)+))?$"), "library", "libnvidia-ml.so"),
    (re.compile(r"^libcudart\.so(?:\.(?P<major>\d+)(?:\.(?P<v>[\d.]+))?)?$"), "library", "libcudart.so"),
    (re.compile(r"^libnvidia-peermem[\w.-]*\.so$"), "library", None),
    (re.compile(r"^libsharp(?:_coll)?\.so(?:\.[\d.]+)?$"), "library", None),
    (re.compile(r"^libfabric\.so(?:\.(?P<major>\d+)(?:\.(?P<v>[\d.]+))?)?$"), "library", "libfabric.so"),
)
_MODULE = lazyre.compile(r"^(nvidia[-_]peermem|nv_peer_mem)\.ko(?:\.(?:xz|zst|gz))?$")
_DEV_DIRECT = lazyre.compile(r"^/dev/(?:nvidia(?:\d+|ctl|-uvm(?:-tools)?|-modeset|-nvswitch\d*|-nvlink|-caps)"
                         r"|infiniband(?:/(?:uverbs\d+|rdma_cm|umad\d+|issm\d+))?|shm|nvidia-caps(?:/\S+)?)$")
#: default sonames when the file name gives none
_SONAME = {"libnccl.so": "libnccl.so.2", "libibverbs.so": "libibverbs.so.1", "librdmacm.so": "librdmacm.so.1",
           "libmlx5.so": "libmlx5.so.1", "libcuda.so": "libcuda.so.1", "libnvidia-ml.so": "libnvidia-ml.so.1",
           "libfabric.so": "libfabric.so.1"}

#: what a listing of the whole folder must show when the thing is there
_EXPECTED_IN = {
    "/dev": ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/infiniband", "/dev/shm"),
    "/dev/infiniband": ("/dev/infiniband/uverbs*", "/dev/infiniband/rdma_cm"),
}
#: what the loader cache (ldconfig -p) or a find -name can prove absent
_EXPECTED_LIBS = (("library", "libnccl.so.2"), ("plugin", "libnccl-net.so"), ("library", "libibverbs.so.1"),
                  ("library", "librdmacm.so.1"), ("library", "libmlx5.so.1"), ("library", "libcuda.so.1"),
                  ("library", "libnvidia-ml.so.1"), ("module", "nvidia-peermem"))


def classify(path: str) -> tuple[str, str, str] | None:
    """(kind, canonical name, version from the file name) of an interesting path, else None."""
    path = path.strip().rstrip("/")
    if path.startswith("/dev/"):
        if _DEV_DIRECT.match(path):
            return "device", path, ""
        return None
    base = os.path.basename(path)
    m = _MODULE.match(base)
    if m:
        return "module", "nvidia-peermem" if "peermem" in m.group(1) else "nv_peer_mem", ""
    for rx, kind, canon in _LIBS:
        m = rx.match(base)
        if not m:
            continue
        if canon is None:
            name = re.sub(r"\.so\.[\d.]+$", ".so", base)
            return kind, name, ""
        groups = m.groupdict()
        major, version = groups.get("major"), groups.get("v") or ""
        if major is None and version:
            major = version.split(".")[0] if canon != "libcuda.so" and canon != "libnvidia-ml.so" else "1"
        name = f"{canon}.{major}" if major else _SONAME.get(canon, canon)
        if version and groups.get("major"):
            version = f"{major}.{version}"
        return kind, name, version
    return None


def _join(folder: str, name: str) -> str:
    if name.startswith("/"):
        return name
    return f"{folder.rstrip('/')}/{name}" if folder else name


def _add(ctx: ParseContext, i: int | None, path: str, listing: str, present: bool = True,
         target: str = "", seen: dict | None = None) -> bool:
    c = classify(path)
    if c is None and target:
        c = classify(target)
    if c is None:
        return False
    kind, name, version = c
    if not version and target:
        t = classify(target)
        if t and t[1] == name:
            version = t[2]
    if seen is not None:
        if (name, path) in seen:
            return True
        seen[(name, path)] = True
    ctx.add(FsPresence, i, kind=kind, name=name, path=path if present else "", present=present,
            version=version, listing=listing, target=target)
    return True


def _absent(ctx: ParseContext, kind: str, name: str, where: str, listing: str) -> None:
    ctx.add(FsPresence, kind=kind, name=name, path=where, present=False, listing=listing)


_NO_SUCH = lazyre.compile(r"^(?:ls|find|stat|file|readlink|realpath):\s+(?:cannot access\s+)?['‘`]?(.+?)['’]?:\s+"
                      r"No such file or directory\s*$")
_DENIED = lazyre.compile(r"^(?:ls|find):\s.*(?:Permission denied|Input/output error)\s*$")


def _missing(ctx: ParseContext, i: int, line: str, listing: str) -> bool:
    m = _NO_SUCH.match(line.strip())
    if not m:
        return False
    path = m.group(1)
    c = classify(path)
    if c is None and path.startswith("/dev/") and "*" in path:
        c = ("device", path, "")
    if c is None:
        if not path.startswith("/"):
            return True
        c = ("file", path, "")
    ctx.add(FsPresence, i, kind=c[0], name=c[1], path="", present=False, listing=listing)
    return True


# -- ls -------------------------------------------------------------------------------------------

_LS_L = lazyre.compile(
    r"^(?P<type>[-dlcbps])[rwxsStT-]{9}[.+@]?\s+\d+\s+\S+\s+\S+\s+(?:\d+,\s*)?\d+[KMGT]?\s+"
    r"(?:\w{3}\s+\d{1,2}\s+(?:\d{1,2}:\d{2}|\d{4})|\d{4}-\d{2}-\d{2}\s+\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:\s+[+-]\d{4})?)"
    r"\s+(?P<name>.+?)(?:\s+->\s+(?P<target>.+))?$"
)
_LS_HEADER = lazyre.compile(r"^(/\S*):$")
_LS_CMD = lazyre.compile(r"^\s*(?:\S*/)?ls(?:\s+(?P<args>.*))?$")


def _ls_args(command: str | None) -> tuple[list[str], bool, bool] | None:
    """(paths, lists folders whole, is ls) from an ``ls`` command; None when it is not ls."""
    if not command:
        return None
    first = re.split(r"\s*(?:\|\||&&|[|;])\s*", command.strip(), maxsplit=1)
    m = _LS_CMD.match(first[0])
    if not m:
        return None
    filtered = len(first) > 1
    letters, longs, paths = "", [], []
    for tok in (m.group("args") or "").split():
        if tok.startswith("--"):
            longs.append(tok)
        elif tok.startswith("-"):
            letters += tok[1:]
        else:
            paths.append(tok.strip("'\""))
    whole = not filtered and "d" not in letters and "--directory" not in longs
    return paths or ["."], whole, True


_DEV_MARKS = {"null", "zero", "urandom"}


def _looks_like_dev(lines: list[str]) -> bool:
    """A long listing of /dev itself: character devices null, zero and urandom side by side
    (what the listing holds, not what a file is called)."""
    names = set()
    for ln in lines:
        if _LS_HEADER.match(ln.strip()):
            return False
        m = _LS_L.match(ln)
        if m and m.group("type") == "c":
            names.add(m.group("name"))
    return _DEV_MARKS <= names


def parse_ls(doc: Document, ctx: ParseContext) -> None:
    args = _ls_args(doc.command)
    paths, whole = (args[0], args[1]) if args else ([], False)
    folder = paths[0] if len(paths) == 1 and not any(c in paths[0] for c in "*?[") else ""
    if folder in ("", ".") and _looks_like_dev(doc.lines):
        folder, whole = "/dev", args is None or whole
    sections: dict[str, set[str]] = {}
    seen: dict = {}
    found_line = False
    for i, line in enumerate(doc.lines):
        s = line.rstrip()
        if not s.strip():
            continue
        if _missing(ctx, i, s, "ls"):
            found_line = True
            continue
        if _DENIED.match(s.strip()):
            ctx.warn(i, f"listing incomplete: {s.strip()[:100]}")
            whole = False
            continue
        h = _LS_HEADER.match(s.strip())
        if h:
            folder = h.group(1)
            sections.setdefault(folder, set())
            found_line = True
            continue
        if re.match(r"^total \d+[KMGT]?$", s.strip()):
            sections.setdefault(folder, set())
            found_line = True
            continue
        m = _LS_L.match(s)
        if m:
            found_line = True
            name, target = m.group("name"), (m.group("target") or "")
            sections.setdefault(folder, set()).add(os.path.basename(name.rstrip("/")))
            _add(ctx, i, _join(folder, name), "ls", target=target, seen=seen)
            continue
        # plain ls: names in columns
        for name in s.split():
            sections.setdefault(folder, set()).add(os.path.basename(name.rstrip("/")))
            _add(ctx, i, _join(folder, name), "ls", seen=seen)
    for d in sections:
        if d and d != "." and not d.endswith("/."):
            _add(ctx, None, d, "ls", seen=seen)  # the folder was listed, so it is there
    if whole:
        for d, names in sections.items():
            for expected in _EXPECTED_IN.get(d.rstrip("/") or "/", ()):
                base = expected.rsplit("/", 1)[1]
                if not any(fnmatch.fnmatchcase(n, base) for n in names):
                    _absent(ctx, "device", expected, d, "ls")
    if not ctx.facts:
        raise NotApplicable("the listing shows nothing this parser reports" if found_line or doc.lines
                            else "empty listing of a folder it does not know")


def sniff_ls(doc: Document) -> float:
    lines = [ln for ln in doc.lines[:300] if ln.strip()]
    if not lines:
        return 0.0
    lsish = interesting = 0
    folder = "/dev" if _looks_like_dev(lines) else ""
    for ln in lines:
        s = ln.strip()
        h = _LS_HEADER.match(s)
        if h:
            folder = h.group(1)
            lsish += 1
            interesting += bool(classify(folder))
            continue
        if re.match(r"^total \d+[KMGT]?$", s):
            lsish += 1
            continue
        if _NO_SUCH.match(s) and s.startswith("ls"):
            lsish += 1
            interesting += 1
            continue
        m = _LS_L.match(ln)
        if m:
            lsish += 1
            interesting += bool(classify(_join(folder, m.group("name"))))
    if lsish * 10 < len(lines) * 8:
        return 0.0
    return 0.85 if interesting else 0.2


# -- find -----------------------------------------------------------------------------------------

_FIND_CMD = lazyre.compile(r"^\s*(?:sudo\s+)?find\s+(?P<rest>.*)$")


def _find_args(command: str | None) -> tuple[list[str], list[str], bool] | None:
    """(start folders, -name/-iname patterns, unfiltered) of a ``find`` command."""
    if not command:
        return None
    first = re.split(r"\s*(?:\|\||&&|[|;])\s*", command.strip(), maxsplit=1)
    m = _FIND_CMD.match(first[0])
    if not m:
        return None
    toks = m.group("rest").split()
    roots, patterns, k = [], [], 0
    while k < len(toks) and not toks[k].startswith(("-", "(", "!")):
        roots.append(toks[k].strip("'\""))
        k += 1
    while k < len(toks):
        if toks[k] in ("-name", "-iname") and k + 1 < len(toks):
            patterns.append(toks[k + 1].strip("'\""))
            k += 2
            continue
        if toks[k] in ("-o", "-or", "-type", "-maxdepth", "-mindepth", "-xdev", "-L", "-follow", "f", "l", "d",
                       "-print", "(", ")", r"\(", r"\)", "-a"):
            k += 1
            continue
        if re.fullmatch(r"\d+|2>\S+|2>&1", toks[k]):
            k += 1
            continue
        return roots or ["."], patterns, False  # -path, -newer, -exec ...: do not trust an absence
    return roots or ["."], patterns, len(first) == 1


def parse_find(doc: Document, ctx: ParseContext) -> None:
    args = _find_args(doc.command)
    seen: dict = {}
    names: set[str] = set()
    complete = bool(args and args[2])
    for i, line in enumerate(doc.lines):
        s = line.strip()
        if not s:
            continue
        if _missing(ctx, i, s, "find"):
            complete = False
            continue
        if _DENIED.match(s):
            complete = False
            continue
        if not s.startswith("/") and not s.startswith("./"):
            continue
        names.add(os.path.basename(s.rstrip("/")))
        if _add(ctx, i, s, "find", seen=seen):
            names.add(classify(s)[1])
    if args and complete and args[1]:
        where = " ".join(args[0])
        for kind, name in _EXPECTED_LIBS:
            if any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(name + ".ko", p) for p in args[1]) \
                    and name not in names:
                _absent(ctx, kind, name, where, "find")
    if not ctx.facts:
        raise NotApplicable("no path this parser reports")


def sniff_find(doc: Document) -> float:
    lines = [ln.strip() for ln in doc.lines[:300] if ln.strip()]
    if not lines:
        return 0.0
    paths = [ln for ln in lines if ln.startswith("/") and " " not in ln and ":" not in ln]
    if len(paths) * 10 < len(lines) * 9:
        return 0.0
    hits = sum(1 for p in paths if classify(p) and not p.startswith("/dev/"))
    return 0.75 if hits else 0.0


# -- ldconfig -p ----------------------------------------------------------------------------------

_LDCONFIG_HEAD = lazyre.compile(r"^\d+ libs found in cache [`'\"]?(\S+?)['`\"]?\s*$")
_LDCONFIG_LINE = lazyre.compile(r"^\s+(\S+)\s+\(([^)]*)\)(?:\s+OS ABI:[^=]*)?\s+=>\s+(\S+)\s*$")
_GREP = lazyre.compile(r"\|\s*grep\s+(?:-[A-Za-z]+\s+)*['\"]?([\w.+-]+)['\"]?\s*$")


def parse_ldconfig(doc: Document, ctx: ParseContext) -> None:
    header = False
    names: set[str] = set()
    seen: dict = {}
    rows = 0
    for i, line in enumerate(doc.lines):
        if _LDCONFIG_HEAD.match(line.strip()):
            header = True
            continue
        if line.startswith("Cache generated by:"):  # glibc >= 2.32 trailer
            continue
        m = _LDCONFIG_LINE.match(line)
        if not m:
            if line.strip():
                ctx.warn(i, f"not an ldconfig -p line: {line.strip()[:80]!r}")
            continue
        rows += 1
        soname, path = m.group(1), m.group(3)
        c = classify(soname)
        if c:
            names.add(c[1])
            _add(ctx, i, path, "ldconfig", seen=seen)
    command = doc.command or ""
    g = _GREP.search(command)
    if "|" in command and not g:
        filt = None  # filtered some other way: nothing is proven absent
    else:
        filt = g.group(1).lower() if g else ""
    if (header or filt) and filt is not None and not re.search(r"grep\s+-\w*v", command):
        for kind, name in _EXPECTED_LIBS:
            if kind == "module" or name in names:
                continue
            if filt and filt not in name.lower():
                continue
            _absent(ctx, kind, name, "ld.so.cache", "ldconfig")
    if not rows and not ctx.facts:
        raise NotApplicable("no ldconfig -p lines")
    if not ctx.facts:
        raise NotApplicable("the excerpt shows no library this parser reports and proves none absent")


def sniff_ldconfig(doc: Document) -> float:
    lines = [ln for ln in doc.lines[:200] if ln.strip()]
    if not lines:
        return 0.0
    if _LDCONFIG_HEAD.match(lines[0].strip()):
        return 0.95
    hits = sum(1 for ln in lines if _LDCONFIG_LINE.match(ln))
    return 0.9 * hits / len(lines) if hits >= 2 else 0.0


# -- ldd ------------------------------------------------------------------------------------------

_LDD_LINE = lazyre.compile(r"^\s+(\S+)\s+=>\s+(?:(not found)|(\S+)\s+\(0x[0-9a-fA-F]+\))\s*$")
_LDD_BARE = lazyre.compile(r"^\s+(\S+)\s+\(0x[0-9a-fA-F]+\)\s*$")
_LDD_FILE = lazyre.compile(r"^(/\S+):\s*$")


def parse_ldd(doc: Document, ctx: ParseContext) -> None:
    rows = 0
    for i, line in enumerate(doc.lines):
        m = _LDD_LINE.match(line)
        if m:
            rows += 1
            soname = m.group(1)
            if m.group(2):
                c = classify(soname)
                kind, name = (c[0], c[1]) if c else ("library", soname)
                ctx.add(FsPresence, i, kind=kind, name=name, present=False, listing="ldd")
            elif not _add(ctx, i, m.group(3), "ldd", target=""):
                c = classify(soname)
                if c:
                    ctx.add(FsPresence, i, kind=c[0], name=c[1], path=m.group(3), present=True, listing="ldd")
            continue
        if _LDD_BARE.match(line) or _LDD_FILE.match(line.strip()):
            rows += 1
            continue
        s = line.strip()
        if s and not re.match(r"^(?:not a dynamic executable|statically linked)$", s):
            ctx.warn(i, f"not an ldd line: {s[:80]!r}")
    if not rows:
        raise NotApplicable("no ldd lines")
    if not ctx.facts:
        raise NotApplicable("ldd shows no library this parser reports and none missing")


def sniff_ldd(doc: Document) -> float:
    lines = [ln for ln in doc.lines[:200] if ln.strip()]
    if not lines:
        return 0.0
    hits = sum(1 for ln in lines if _LDD_LINE.match(ln) or _LDD_BARE.match(ln))
    return 0.9 * hits / len(lines) if hits >= 2 else 0.0


_FACTS = ("fs.presence",)

FORMATS = [
    Format(
        name="ls", command="ls -l /dev/infiniband /dev/nvidia* /dev/shm", facts=_FACTS,
        sniff=sniff_ls, parse=parse_ls, empty_output=True,
        command_patterns=(r"^\s*(?:\S*/)?ls(?:\s|$)",),
        description="ls / ls -l listings: device nodes (/dev/nvidia*, /dev/infiniband/uverbs*, /dev/shm), "
                    "NCCL and rdma-core libraries, plugins, No such file or directory",
    ),
    Format(
        name="find", command="find / -xdev -name 'libnccl*.so*'", facts=_FACTS,
        sniff=sniff_find, parse=parse_find, empty_output=True,
        command_patterns=(r"^\s*(?:sudo\s+)?find\s",),
        description="find paths: NCCL / rdma-core / CUDA libraries, libnccl-net plugins, nvidia-peermem module files",
    ),
    Format(
        name="ldconfig", command="ldconfig -p", facts=_FACTS,
        sniff=sniff_ldconfig, parse=parse_ldconfig, empty_output=True,
        command_patterns=(r"^\s*(?:\S*/)?ldconfig\s+(?:-\w*p|--print-cache)",),
        description="ldconfig -p: the loader cache (libnccl, libibverbs, librdmacm, libmlx5, libcuda), "
                    "absence proven by the whole cache or a grep",
    ),
    Format(
        name="ldd", command="ldd $(which python3)", facts=_FACTS,
        sniff=sniff_ldd, parse=parse_ldd,
        command_patterns=(r"^\s*(?:\S*/)?ldd\s",),
        description="ldd: which shared libraries resolve, and which are 'not found'",
    ),
]
