"""Fuzz the sniffer, every registered parser and ingest with mutated real inputs.

Run on demand (not part of the test suite):

    python tests/bench/fuzz_parsers.py [--seconds 20] [--only nccl-debug,lscpu] [--out DIR]
                                       [--ingest-seconds 30] [--seed 1]

Seeds are every file under ``tests/fixtures`` (a parser must also survive other formats'
output); each format's own fixtures (those it sniffs at 0.5 or more) are picked more often so
mutations reach deep into its parser. Mutations, stacked one to four at a time: truncation at a
random byte, line drops, line duplication, line shuffles, splices of two seeds, random bytes
inserted or overwritten, NULs, a huge line, a line repeated thousands of times, numbers replaced
by extreme ones (huge, negative, NaN, inf), CRLF and lone-CR line ends, and re-encoding as UTF-16,
latin-1 or cp1252.

The contract checked on every input:

- ``sniff`` never raises and returns a float (not a bool) in [0, 1];
- ``parse`` (and ``stream``, for formats that have it) returns facts that are ``Fact`` instances,
  or raises ``ParseError`` / ``NotApplicable``, never anything else;
- one call takes under ``--slow`` seconds (a catastrophic regex is a bug too);
- ``ingest`` of the mutated bytes written to a file never raises (nor takes over ``--slow``).

Per format it prints the inputs tried and the failures; each distinct failure (format, call,
exception type and place) is minimised by line then byte deletion and written to ``--out``
as ``<format>-<call>-<n>.bin`` with a ``.txt`` holding the traceback.
"""

from __future__ import annotations

import argparse
import codecs
import random
import re
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).parents[2]
sys.path.insert(0, str(ROOT))

from clusterdx.facts.base import Fact, NotApplicable, ParseError  # noqa: E402
from clusterdx.facts.document import Document, ParseContext, split_lines  # noqa: E402
from clusterdx.facts.formats import all_formats  # noqa: E402
from clusterdx.facts.ingest import _decode, ingest  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"
#: mutated inputs are cut here (stacked repeats would otherwise reach hundreds of MB)
MAX_INPUT = 1 << 20


class Slow(Exception):
    pass


def _alarm(signum, frame):
    raise Slow("call took too long")


# -- seeds and mutations ------------------------------------------------------------------------


def load_seeds() -> list[tuple[str, bytes]]:
    seeds = []
    for path in sorted(FIXTURES.rglob("*")):
        if path.is_file() and path.stat().st_size <= 2 << 20:
            seeds.append((str(path.relative_to(FIXTURES)), path.read_bytes()))
    return seeds


_NUM = re.compile(rb"\d+(?:\.\d+)?")
_EXTREME = [b"0", b"-1", b"99999999999999999999999999", b"1e308", b"1e999", b"nan", b"inf", b"-0",
            b"4294967296", b"18446744073709551616", b"0x", b"1.2.3", b"00000000000000000000007",
            b"\xd9\xa3", b"\xef\xbc\x93"]  # Arabic-Indic and full-width digits


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def mutate(rng: random.Random, data: bytes, seeds: list[tuple[str, bytes]]) -> bytes:
    op = rng.randrange(16)
    lines = _lines(data)
    if op == 0 and data:  # truncate
        return data[:rng.randrange(len(data) + 1)]
    if op == 1 and len(lines) > 1:  # drop lines
        for _ in range(rng.randint(1, max(1, len(lines) // 4))):
            if len(lines) > 1:
                del lines[rng.randrange(len(lines))]
        return b"\n".join(lines)
    if op == 2:  # duplicate lines
        for _ in range(rng.randint(1, 8)):
            k = rng.randrange(len(lines))
            lines.insert(rng.randrange(len(lines) + 1), lines[k])
        return b"\n".join(lines)
    if op == 3 and len(lines) > 2:  # shuffle a window
        a = rng.randrange(len(lines))
        b = min(len(lines), a + rng.randint(2, 20))
        window = lines[a:b]
        rng.shuffle(window)
        lines[a:b] = window
        return b"\n".join(lines)
    if op == 4:  # splice with another seed
        other = _lines(rng.choice(seeds)[1])
        a = rng.randrange(len(lines) + 1)
        b = rng.randrange(len(other) + 1)
        return b"\n".join(lines[:a] + other[b:b + rng.randint(1, 40)] + lines[a:])
    if op == 5:  # random bytes inserted
        pos = rng.randrange(len(data) + 1)
        return data[:pos] + rng.randbytes(rng.randint(1, 64)) + data[pos:]
    if op == 6 and data:  # bytes overwritten
        buf = bytearray(data)
        for _ in range(rng.randint(1, 16)):
            buf[rng.randrange(len(buf))] = rng.randrange(256)
        return bytes(buf)
    if op == 7:  # NULs
        pos = rng.randrange(len(data) + 1)
        return data[:pos] + b"\x00" * rng.randint(1, 4) + data[pos:]
    if op == 8:  # a huge line
        k = rng.randrange(len(lines))
        unit = lines[k][:80] or b"x"
        lines[k] = unit * (200_000 // len(unit) + 1)
        return b"\n".join(lines)
    if op == 9:  # one line repeated thousands of times
        k = rng.randrange(len(lines))
        lines[k:k + 1] = [lines[k]] * rng.randint(500, 5000)
        return b"\n".join(lines)
    if op == 10:  # extreme numbers
        nums = list(_NUM.finditer(data))
        if nums:
            out = bytearray(data)
            for mt in sorted(rng.sample(nums, min(len(nums), rng.randint(1, 6))),
                             key=lambda m: -m.start()):
                out[mt.start():mt.end()] = rng.choice(_EXTREME)
            return bytes(out)
        return data
    if op == 11:  # CRLF
        return data.replace(b"\n", b"\r\n")
    if op == 12:  # lone CRs
        return data.replace(b"\n", b"\r")
    if op == 13:  # wrong encodings
        text = data.decode("utf-8", "replace") + rng.choice(["é", "\u00a0", "µs", "–", "\u2028"])
        codec = rng.choice(["utf-16", "utf-16-le", "latin-1", "cp1252", "utf-32"])
        return text.encode(codec, "replace")
    if op == 14:  # whitespace games
        return rng.choice([data.replace(b" ", b"\t"), data.replace(b"  ", b" "),
                           b"\n".join(b" " * rng.randint(0, 8) + ln for ln in lines),
                           b"\n".join(ln.rstrip() + b"   " for ln in lines)])
    # op 15: delete a random span
    if data:
        a = rng.randrange(len(data))
        return data[:a] + data[a + rng.randint(1, 200):]
    return data


# -- the contract -------------------------------------------------------------------------------


def make_doc(data: bytes, name: str = "fuzz") -> Document:
    text, _ = _decode(data)
    if text is None:
        return Document(name=name, lines=[], raw=data)
    return Document(name=name, lines=split_lines(text))


def check(fmt, data: bytes, slow: float) -> tuple[str, BaseException | str] | None:
    """None when ``fmt`` keeps its contract on ``data``; else (call, problem)."""
    doc = make_doc(data)
    if bool(fmt.binary) != (doc.raw is not None):
        # ingest never offers a text document to a binary format (or back); the sniffer still must not raise
        calls = ("sniff",)
    else:
        calls = ("sniff", "parse") + (("stream",) if fmt.stream is not None else ())
    for call in calls:
        signal.setitimer(signal.ITIMER_REAL, slow)
        try:
            if call == "sniff":
                score = fmt.sniff(doc)
                if isinstance(score, bool) or not isinstance(score, (int, float)) \
                        or not 0.0 <= float(score) <= 1.0:
                    return call, f"sniff returned {score!r}"
                continue
            ctx = ParseContext(doc=doc, parser=fmt.name)
            if call == "parse":
                fmt.parse(doc, ctx)
            else:
                n = len(doc.lines)
                step = max(1, n // 3)
                fmt.stream(((k, doc.lines[k:k + step]) for k in range(0, n, step)), ctx)
            bad = [f for f in ctx.facts if not isinstance(f, Fact)]
            if bad:
                return call, f"produced {type(bad[0]).__name__}, not a Fact"
        except (ParseError, NotApplicable):
            continue
        except Slow as exc:
            return call, exc
        except RecursionError as exc:
            return call, exc
        except Exception as exc:
            return call, exc
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    return None


def signature(fmt_name: str, call: str, problem) -> tuple:
    if isinstance(problem, BaseException):
        tb = traceback.extract_tb(problem.__traceback__)
        where = next(((Path(f.filename).name, f.lineno) for f in reversed(tb)
                      if "clusterdx" in f.filename or "/facts/" in f.filename), ("?", 0))
        return fmt_name, call, type(problem).__name__, where
    return fmt_name, call, str(problem)[:60], ("", 0)


def minimise(fmt, data: bytes, sig: tuple, slow: float, budget: float = 15.0) -> bytes:
    """Delete lines, then byte spans, while the same failure persists."""
    deadline = time.monotonic() + budget

    def fails(candidate: bytes) -> bool:
        got = check(fmt, candidate, slow)
        return got is not None and signature(fmt.name, *got) == sig

    lines = _lines(data)
    chunk = max(1, len(lines) // 2)
    while chunk >= 1 and time.monotonic() < deadline:
        i, changed = 0, False
        while i < len(lines) and time.monotonic() < deadline:
            trial = lines[:i] + lines[i + chunk:]
            if trial and fails(b"\n".join(trial)):
                lines, changed = trial, True
            else:
                i += chunk
        if not changed:
            chunk //= 2
    data = b"\n".join(lines)
    span = max(1, len(data) // 4)
    while span >= 1 and time.monotonic() < deadline:
        i, changed = 0, False
        while i < len(data) and time.monotonic() < deadline:
            trial = data[:i] + data[i + span:]
            if trial and fails(trial):
                data, changed = trial, True
            else:
                i += span
        if not changed:
            span //= 2
    return data


def report(out: Path, fmt_name: str, call: str, n: int, data: bytes, problem) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    stem = f"{fmt_name}-{call}-{n}"
    (out / f"{stem}.bin").write_bytes(data)
    if isinstance(problem, BaseException):
        text = "".join(traceback.format_exception(type(problem), problem, problem.__traceback__))
    else:
        text = str(problem)
    (out / f"{stem}.txt").write_text(text)
    return out / f"{stem}.bin"


def fuzz_format(fmt, seeds, own, rng, seconds, slow, out) -> tuple[int, list]:
    tried = 0
    found: dict[tuple, Path] = {}
    deadline = time.monotonic() + seconds
    pool = own or seeds
    while time.monotonic() < deadline:
        base = rng.choice(pool)[1] if rng.random() < 0.8 else rng.choice(seeds)[1]
        data = base
        for _ in range(rng.randint(1, 4)):
            data = mutate(rng, data, seeds)[:MAX_INPUT]
        tried += 1
        got = check(fmt, data, slow)
        if got is None:
            continue
        sig = signature(fmt.name, *got)
        if sig in found:
            continue
        small = minimise(fmt, data, sig, slow)
        again = check(fmt, small, slow)
        found[sig] = report(out, fmt.name, got[0], len(found) + 1, small, again[1] if again else got[1])
    return tried, list(found.items())


def fuzz_ingest(seeds, rng, seconds, slow, out) -> tuple[int, list]:
    tried = 0
    failures = []
    deadline = time.monotonic() + seconds
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / rng.choice(["output.txt", "log2.log", "nccl.log", "environ"])
        while time.monotonic() < deadline:
            data = rng.choice(seeds)[1]
            for _ in range(rng.randint(1, 4)):
                data = mutate(rng, data, seeds)[:MAX_INPUT]
            path.write_bytes(data)
            tried += 1
            signal.setitimer(signal.ITIMER_REAL, slow)
            try:
                ingest([path])
            except Exception as exc:
                failures.append(report(out, "ingest", "ingest", len(failures) + 1, data, exc))
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    return tried, failures


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=20, help="per format")
    ap.add_argument("--ingest-seconds", type=float, default=30)
    ap.add_argument("--only", default="", help="comma-separated format names")
    ap.add_argument("--slow", type=float, default=5.0, help="seconds one call may take")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=str(Path(tempfile.gettempdir()) / "clusterdx-fuzz"))
    opts = ap.parse_args()
    signal.signal(signal.SIGALRM, _alarm)
    sys.setrecursionlimit(5000)
    out = Path(opts.out)
    seeds = load_seeds()
    formats = all_formats()
    names = [n for n in formats if not opts.only or n in opts.only.split(",")]
    rng = random.Random(opts.seed)
    total = bad = 0
    for name in names:
        fmt = formats[name]
        own = []
        for s in seeds:
            doc = make_doc(s[1])
            try:
                if bool(fmt.binary) == (doc.raw is not None) and fmt.sniff(doc) >= 0.5:
                    own.append(s)
            except Exception:
                pass
        tried, found = fuzz_format(fmt, seeds, own, rng, opts.seconds, opts.slow, out)
        total += tried
        bad += len(found)
        print(f"{name:28s} {tried:7d} inputs ({len(own)} own seeds)  "
              f"{'OK' if not found else f'{len(found)} FAILURE(S)'}", flush=True)
        for sig, path in found:
            print(f"    {sig} -> {path}", flush=True)
    if opts.ingest_seconds > 0:
        tried, failures = fuzz_ingest(seeds, rng, opts.ingest_seconds, opts.slow, out)
        total += tried
        bad += len(failures)
        print(f"{'ingest()':28s} {tried:7d} inputs  "
              f"{'OK' if not failures else f'{len(failures)} FAILURE(S)'}", flush=True)
        for path in failures[:20]:
            print(f"    -> {path}")
    print(f"TOTAL {total} inputs over {len(names)} formats + ingest; {bad} distinct failure(s)")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
