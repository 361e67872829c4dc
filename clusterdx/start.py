"""The console entry point: `clusterdx --help` (or ``-h``) from the text the last run printed, everything else
through the typer app (:mod:`clusterdx.cli`).

Importing typer and building the click command tree is most of the top-level help's cost (about
three times Python's own start-up). The text it prints depends only on the CLI's code and the
terminal width, so it is kept beside the compiled knowledge base
(:mod:`clusterdx.engine.kbcache`: same folder, same ``CLUSTERDX_NO_CACHE``), keyed by the
version, the size and modification time of the CLI modules, the width and the help style. This
module imports nothing beyond the standard library on that path.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def _help_key() -> str | None:
    import hashlib
    import shutil

    from clusterdx import __version__

    here = Path(__file__).parent
    parts: list[object] = [__version__, os.environ.get("TYPER_USE_RICH", "0"),
                           shutil.get_terminal_size().columns]
    try:
        for p in [here / "cli.py", *sorted((here / "commands").glob("*.py"))]:
            st = p.stat()
            parts.append((p.name, st.st_size, st.st_mtime_ns))
    except OSError:
        return None
    return hashlib.blake2b(repr(parts).encode(), digest_size=16).hexdigest()


def _help_file(key: str) -> Path:
    from clusterdx.engine.kbcache import cache_dir

    return cache_dir() / f"help-{key}.txt"


def _cache_on() -> bool:
    from clusterdx.engine.kbcache import enabled

    return enabled()


#: the cyclic collector's first-generation threshold for a run (Python's default is 700). A run
#: builds hundreds of thousands of objects that live until it ends (modules, some 170 model classes,
#: the knowledge base) and makes little cyclic garbage. A collection's cost is the number of young
#: objects it walks, so any threshold a diagnosis reaches costs the same ~40 ms in all (10 000: a
#: dozen collections; 100 000: one); this one is above what a diagnosis of a ticket allocates net
#: (~120 000 tracked objects), so it runs none, and still bounds what cyclic garbage a huge
#: input or a fleet run can hold between collections.
GC_GEN0_THRESHOLD = 500_000


def main() -> None:
    import gc

    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(GC_GEN0_THRESHOLD, gen1, gen2)
    if sys.argv[1:] in (["--help"], ["-h"]) and _cache_on():
        key = _help_key()
        if key is not None:
            try:
                text = _help_file(key).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                _help_and_store(key)
                return
            sys.stdout.write(text)
            return
    from clusterdx.cli import main as cli_main

    cli_main()


def run() -> None:
    """The console script (and ``python -m clusterdx``): :func:`main`, then out of the process
    without tearing the interpreter down. Freeing every module, class and object one by one at
    exit is some 70 ms of a 0.6 s diagnosis and changes nothing the user sees; what an exit must
    still do is done first (:func:`_leave`). Tests call :func:`main`, which returns or raises."""
    try:
        main()
    except SystemExit as exc:
        _leave(exc.code)
    _leave(0)


def _leave(code: object) -> None:
    """Exit with ``code`` as ``sys.exit(code)`` would: the standard streams flushed, a code that
    is no number printed to stderr (status 1), the atexit handlers run (logging, weakref
    finalizers: temporary folders, multiprocessing). Where the interpreter's own exit does more
    than that, it is used: another thread still running (it waits for it), a stream that cannot
    be flushed (a closed pipe: its message and status 120)."""
    import atexit
    import threading

    if threading.active_count() > 1:
        raise SystemExit(code)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            raise SystemExit(code) from None
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:
        sys.stderr.write(f"{code}\n")
        status = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status & 0xFF)


def _help_and_store(key: str) -> None:
    import contextlib
    import io

    from clusterdx.cli import main as cli_main

    buffer = io.StringIO()
    code: object = 0
    try:
        with contextlib.redirect_stdout(buffer):
            cli_main()
    except SystemExit as exc:
        code = exc.code
    text = buffer.getvalue()
    sys.stdout.write(text)
    if code in (0, None) and text:
        path = _help_file(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
        except OSError:
            pass
    if code not in (0, None):
        raise SystemExit(code)
