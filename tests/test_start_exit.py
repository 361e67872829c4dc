"""The console script leaves without the interpreter's teardown (clusterdx.start.run), and every
exit it makes is the one ``sys.exit`` would have made: the same status, the same output on both
streams, atexit handlers and finalizers run, buffered output written, a running thread waited for."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]

#: (name, body run before the exit, the code it exits with)
SCENARIOS = [
    ("zero", "", "0"),
    ("none", "", "None"),
    ("status 3", "", "3"),
    ("status 256 wraps", "", "256"),
    ("negative", "", "-1"),
    ("text code", "", "'clusterdx: gave up'"),
    ("buffered stdout", "sys.stdout.write('kept in the buffer, no newline')", "0"),
    ("buffered stderr", "sys.stderr.write('to stderr'); print('out', end='')", "4"),
    ("atexit prints", "import atexit; atexit.register(lambda: print('bye from atexit'))", "0"),
    ("thread still running", textwrap.dedent("""
        import threading, time
        def late():
            time.sleep(0.3)
            print('the thread finished')
        threading.Thread(target=late).start()
        """), "2"),
]


def _run(body: str, code: str, how: str, tmp: Path) -> subprocess.CompletedProcess:
    ending = f"sys.exit({code})" if how == "sys.exit" else f"from clusterdx.start import _leave; _leave({code})"
    script = f"import sys\n{body}\n{ending}\n"
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.parametrize("name,body,code", SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_leave_exits_as_sys_exit_does(name, body, code, tmp_path):
    normal = _run(body, code, "sys.exit", tmp_path)
    fast = _run(body, code, "_leave", tmp_path)
    assert (fast.returncode, fast.stdout, fast.stderr) == (normal.returncode, normal.stdout, normal.stderr)


def test_leave_runs_finalizers(tmp_path):
    """A temporary folder still open at exit is removed (weakref.finalize runs at atexit)."""
    marker = tmp_path / "where.txt"
    body = textwrap.dedent(f"""
        import tempfile
        keep = tempfile.TemporaryDirectory()
        open({str(marker)!r}, 'w').write(keep.name)
        """)
    ran = _run(body, "0", "_leave", tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert not Path(marker.read_text()).exists()


def test_leave_skips_the_teardown(tmp_path):
    """The look-alike of a normal exit: an object's __del__ at interpreter teardown does not run
    (that teardown is the cost run() saves), while sys.exit runs it."""
    body = textwrap.dedent("""
        class Noisy:
            def __del__(self):
                sys.stdout.write('torn down')
        keep = Noisy()
        """)
    assert _run(body, "0", "sys.exit", tmp_path).stdout == "torn down"
    assert _run(body, "0", "_leave", tmp_path).stdout == ""


def test_console_script_and_module_go_through_run():
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["clusterdx"] == "clusterdx.start:run"
    assert "run()" in (ROOT / "clusterdx" / "__main__.py").read_text()


def test_a_diagnosis_through_run_prints_its_report(tmp_path):
    case = ROOT / "kb" / "cases" / "cp-stacked-cstates-numa-balancing" / "input"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CLUSTERDX_CACHE_DIR": str(tmp_path)}
    ran = subprocess.run([sys.executable, "-m", "clusterdx", "diagnose", str(case), "-f", "json"],
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.rstrip().endswith("}") and '"hypotheses"' in ran.stdout
    missing = subprocess.run([sys.executable, "-m", "clusterdx", "diagnose", str(tmp_path / "nothing")],
                             capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert missing.returncode == 2 and "no such file or folder" in missing.stderr
