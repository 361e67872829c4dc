"""Long repeated lines, per format: sniffing and parsing stay linear (a hang detector).

For every registered format, documents are built from the format's own documented sample (its
module docstring): sample lines repeated to ``LINE_BYTES`` on one line, their blank runs blown up,
their first characters repeated, and runs of the sample's most frequent characters, each with a
tail that makes a match fail late. Each format's documents are sniffed by every format and parsed
by this one in a forked child that must finish within ``BOUND_S`` (a super-linear regex takes
minutes at this size, a linear one well under a second); the child reports nothing but its exit.
"""

from __future__ import annotations

import collections
import importlib
import os
import pkgutil
import signal
import sys
import time

import pytest

from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import all_formats
from clusterdx.facts.sniff import rank_formats

LINE_BYTES = 50_000
BOUND_S = 30.0
TAILS = ("!", "\x00", " #", "=")


def _sample(fmt) -> list[str]:
    """The sample lines of the format's module docstring, in order (doctest lines left out)."""
    module = importlib.import_module(fmt.parse.__module__)
    lines = [ln.rstrip("\n") for ln in (module.__doc__ or "").splitlines()]
    return [ln for ln in lines if ln.strip() and not ln.lstrip().startswith((">>>", "..."))][:80]


def long_lines(fmt) -> list[str]:
    """One-line hostile inputs built from the sample's lines and characters."""
    sample = _sample(fmt)
    # the longest distinct lines carry the most structure
    lines = sorted(set(sample), key=lambda ln: (-len(ln), ln))[:4]
    out: list[str] = []
    for k, ln in enumerate(lines):
        tail = TAILS[k % len(TAILS)]
        body = ln.strip() or ln
        out.append((body + " ") * (LINE_BYTES // (len(body) + 1)) + tail)
        blanks = max(1, ln.count(" ") + ln.count("\t"))
        out.append("".join(c * (LINE_BYTES // blanks) if c in " \t" else c for c in ln) + tail)
        head = body[:12] or "x"
        out.append(head * (LINE_BYTES // len(head)) + tail)
    chars = collections.Counter("".join(lines))
    common = [c for c, _ in chars.most_common(4)]
    punct = [c for c, _ in chars.most_common() if not c.isalnum() and not c.isspace()][:6]
    singles: list[str] = []
    for c in dict.fromkeys(common + punct):
        singles.append(c * LINE_BYTES + "!")
        singles.append("a" + c * LINE_BYTES + "!")  # after a letter: where many line patterns start
        singles.append((c + " ") * (LINE_BYTES // 2) + "\x00")
    return out, singles


def hostile_documents(fmt) -> list[str]:
    """Lines built from sample lines alone and after the whole sample (so headers and context
    come first); lines of single characters alone."""
    prefix = "\n".join(_sample(fmt))
    structured, singles = long_lines(fmt)
    return [text for ln in structured for text in (ln, f"{prefix}\n{ln}\n{prefix}")] + singles


def _run_format(name: str) -> None:
    fmt = all_formats()[name]
    for text in hostile_documents(fmt):
        doc = Document.from_text(text, name="long.txt")
        rank_formats(doc, None, [])
        try:
            fmt.parse(doc, ParseContext(doc=doc, parser=fmt.name))
        except Exception:
            pass  # refusing the input is fine; taking minutes over it is not


def _parser_modules() -> list[str]:
    """The parser modules by name, without importing them: collection imports no parser."""
    from clusterdx.facts import parsers

    return sorted(i.name for i in pkgutil.iter_modules(parsers.__path__) if not i.name.startswith("_"))


@pytest.mark.slow  # every format's hostile 50 KB lines through every sniffer (5-30 s a format)
@pytest.mark.parametrize("module", _parser_modules())
def test_long_lines_sniff_and_parse_in_bounded_time(module):
    """Each format of the module, one forked child each, within ``BOUND_S`` each."""
    mod = importlib.import_module(f"clusterdx.facts.parsers.{module}")
    names = [f.name for f in getattr(mod, "FORMATS", ()) if f.parse is not None]
    if not names:
        pytest.skip("no text parser")
    all_formats()  # every sniffer imported here, once, not in each child within its bound
    for name in names:
        _bounded(name)


def _bounded(name: str) -> None:
    pid = os.fork()
    if pid == 0:  # child: run, and say nothing but the exit status
        code = 0
        try:
            _run_format(name)
        except BaseException:
            code = 3
        os._exit(code)
    start = time.monotonic()
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() - start > BOUND_S:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail(f"{name}: sniff+parse of {LINE_BYTES // 1000} KB lines took over {BOUND_S:.0f} s "
                        f"(a super-linear regex?)")
        time.sleep(0.05)
    assert os.waitstatus_to_exitcode(status) == 0, f"{name}: child failed"


def test_the_generator_builds_long_lines():
    fmt = all_formats()["sysctl"]
    docs = hostile_documents(fmt)
    assert len(docs) >= 10 and all(max(len(ln) for ln in d.split("\n")) >= LINE_BYTES // 2 for d in docs)


if sys.platform == "win32":  # pragma: no cover
    pytestmark = pytest.mark.skip("needs fork")
