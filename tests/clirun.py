"""The command line run in the test process, as ``python -m clusterdx ARGS`` runs it, without the
second of interpreter start-up and imports that each subprocess pays.

:func:`cli` goes through the console entry point (:func:`clusterdx.start.main`, so the kept
``--help`` text and ``cli.main``'s one-line internal error are what a user gets) with
``sys.argv``, the standard streams, the environment and the working folder swapped for the call,
and returns what :func:`subprocess.run` would: ``returncode``, ``stdout``, ``stderr``.

What it cannot show is the process itself: its exit on a signal, what it imports at start-up, a
hang killed by a timeout. Tests of those keep a real subprocess (tests/test_start.py and the
``slow`` end-to-end tests). ``timeout`` is accepted for the callers' signature and not enforced.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping


@dataclass
class Ran:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str


def cli(*args: str, cwd: Path | str | None = None, env: Mapping[str, str | None] | None = None,
        input: str | bytes | None = None, timeout: float | None = None, path: str | None = None) -> Ran:
    """Run ``clusterdx ARGS`` here. ``env``: variables to set (``None`` removes one) for the call;
    ``path``: the ``PATH`` to run with (fake tools)."""
    from typer.testing import CliRunner

    from clusterdx.start import main

    overrides = dict(env or {})
    if path is not None:
        overrides["PATH"] = path
    argv = ["clusterdx", *map(str, args)]
    saved_argv, saved_cwd = sys.argv, os.getcwd()
    code: object = 0
    with CliRunner().isolation(input=input, env=overrides) as (out, err, _):
        sys.argv = argv
        try:
            if cwd is not None:
                os.chdir(cwd)
            main()
        except SystemExit as exc:
            code = exc.code
        finally:
            sys.argv = saved_argv
            os.chdir(saved_cwd)
            if code is not None and not isinstance(code, int):
                sys.stderr.write(f"{code}\n")  # what the interpreter prints for SystemExit("...")
            sys.stdout.flush()
            sys.stderr.flush()
            stdout = out.getvalue().decode("utf-8", "replace")
            stderr = err.getvalue().decode("utf-8", "replace")
    returncode = 0 if code is None else code if isinstance(code, int) else 1
    return Ran(argv[1:], returncode, stdout, stderr)
