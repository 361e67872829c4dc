"""Hostile-ticket bench: mutated copies of real outputs in folders, one in-process diagnosis each.

    python tests/bench/bench_hostile.py [--folders 20] [--files 6] [--seed 1] [--timeout 60]

Each folder holds ``--files`` copies of inputs from tests/fixtures/real, tests/fixtures/formats and
/work/shared/formats (when present), each mutated: a planted secret line, a number past 64 bits,
a 50 KB line of one of its own characters, invalid UTF-8, a control character in the file name,
a truncation. Counts crashes (an exception out of ingest, diagnosis or an explainer), hangs (a
folder over ``--timeout`` seconds), inputs missing from the report, and planted secrets that
reach any output.
"""

from __future__ import annotations

import argparse
import random
import signal
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).parents[2]
SOURCES = [ROOT / "tests" / "fixtures" / "real", ROOT / "tests" / "fixtures" / "formats", Path("/work/shared/formats")]
SECRET = "hf_PLANTEDs3cretPLANTEDs3cretPLANTED0123"


class _Hang(Exception):
    pass


def _mutate(data: bytes, rng: random.Random) -> bytes:
    lines = data.split(b"\n")
    at = rng.randrange(len(lines) + 1)
    kind = rng.randrange(6)
    if kind == 0:
        lines.insert(at, rng.choice([f"export HF_TOKEN={SECRET}", f"$ docker run -e HF_TOKEN={SECRET} img env",
                                     f"curl -H 'Authorization: Bearer {SECRET}' https://x",
                                     f'{{"password": "{SECRET}"}}']).encode())
    elif kind == 1:
        line = lines[at - 1] if at else b"x = 1"
        lines.insert(at, b"".join(b"99999999999999999999999" if 48 <= c <= 57 else bytes([c]) for c in line[:200]))
    elif kind == 2:
        src = lines[at - 1] if at and lines[at - 1] else b"a"
        lines.insert(at, bytes([rng.choice(src)]) * 50_000 + b"!")
    elif kind == 3:
        lines.insert(at, b"\xff\xfe garbage \x1b[31m \xc3")
    elif kind == 4:
        return data[: rng.randrange(max(1, len(data)))]
    else:
        lines.insert(at, b"NCCL_X=inf")
    return b"\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--folders", type=int, default=20)
    ap.add_argument("--files", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--no-redact", action="store_true", help="check the leak counter: leaks must be > 0")
    args = ap.parse_args()

    from clusterdx.engine.diagnose import collect_paths, run_diagnosis
    from clusterdx.engine.kb import load_kb
    from clusterdx.explainers import json_out, markdown, text

    kb = load_kb()
    pool = [p for d in SOURCES if d.is_dir() for p in sorted(d.rglob("*")) if p.is_file() and p.stat().st_size < 2 << 20]
    rng = random.Random(args.seed)
    counts = {"folders": 0, "inputs": 0, "crashes": 0, "hangs": 0, "missing": 0, "leaks": 0}
    signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(_Hang()))
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.folders):
            folder = Path(tmp) / f"t{k}"
            folder.mkdir()
            names = []
            for j in range(args.files):
                src = rng.choice(pool)
                name = f"{j}-{src.name}" if rng.random() < 0.8 else f"{j}-\x1b[1m{src.name}"
                (folder / name).write_bytes(_mutate(src.read_bytes(), rng))
                names.append(name)
            counts["folders"] += 1
            counts["inputs"] += len(names)
            signal.alarm(args.timeout)
            try:
                target = collect_paths([folder], redact=not args.no_redact)
                report = run_diagnosis(target, kb=kb, redact=not args.no_redact, next_probes=False).report
                out = json_out.render(report) + text.render(report) + markdown.render(report)
            except _Hang:
                counts["hangs"] += 1
                continue
            except Exception as exc:  # the bench counts what must never happen
                counts["crashes"] += 1
                print(f"crash in {folder.name}: {type(exc).__name__}: {exc}"[:300])
                continue
            finally:
                signal.alarm(0)
            seen = {r.path.split("#")[0].split("!/")[0] for r in report.inputs}
            counts["missing"] += sum(1 for n in names if not any(Path(s).name.startswith(n[:2]) for s in seen))
            counts["leaks"] += out.count(SECRET[:20])
    print(" ".join(f"{k}={v}" for k, v in counts.items()), f"seconds={time.time() - t0:.1f}")


if __name__ == "__main__":
    main()
