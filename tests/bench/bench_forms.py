"""Form-invariance bench: the same ticket pasted another way must get the same answer.

    python tests/bench/bench_forms.py [--library] [--only VARIANT] [--show N]

Real users hand over the same evidence in many shapes: one GitHub issue body with every output in
a fenced block, outputs folded into ``<details>``, attachments renamed by the tracker, Windows line
ends, a prompt that carries user and host, a forum post's four-space code blocks. None of that
changes what a ticket shows, so none of it may change the diagnosis. For every public-thread case
that is not frozen (and with ``--library`` every library case) each variant below is built in a
scratch folder, diagnosed in-process, and judged as the case itself is (top 1, top 3); a variant
that loses what the original had is a form bug. Frozen cases (``kb/cases/frozen.yaml``) are never
run here.

Variants:
  ``crlf``        every line ends in CR LF
  ``renamed``     attachments named ``attachment1.txt``, ``attachment2.log``, ... (what a tracker
                  download gives), the user's notes included
  ``issue-body``  one ``issue.md``: the notes, then each other file under its name in a fenced block
  ``details``     the same, each output inside ``<details><summary>name</summary>`` ... ``</details>``
  ``indented``    outputs as four-space indented code blocks under the notes, in one file
  ``plain``       one ``ticket.txt``: the notes, then each output as is under "Output of <name>:"
                  (an e-mail or a web form: no Markdown at all)
  ``prompt``      ``$ cmd`` prompts become ``alice@gpu-node-07:~$ cmd``
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).parents[2]
CASES = ROOT / "kb" / "cases"

Files = dict[str, str]


#: the opening of a post whose case has no notes of the user's: words without a signal
NEUTRAL = ("Here are the outputs from the affected node that the support engineer asked for in the last reply. "
           "Please tell us if anything else is needed from our side.")


def _notes_first(files: Files) -> tuple[str, list[tuple[str, str]]]:
    """The user's words (their Markdown files) first, then the outputs."""
    words = "\n\n".join(t.rstrip() for n, t in sorted(files.items()) if n.endswith(".md")) or NEUTRAL
    return words, [(n, t) for n, t in sorted(files.items()) if not n.endswith(".md")]


def pasteable(files: Files) -> bool:
    """Whether the files can go into one post: no NUL bytes (a /proc environ is pasted through
    ``tr``, not raw) and no bundle manifest (it describes files, not a post)."""
    return "manifest.json" not in files and not any("\x00" in t for t in files.values())


POSTS = ("issue-body", "details", "indented", "plain")


def crlf(files: Files) -> Files:
    return {n: t.replace("\r\n", "\n").replace("\n", "\r\n") for n, t in files.items()}


def renamed(files: Files) -> Files:
    """Tracker names. A ``clusterdx collect`` bundle's manifest keeps its name (it is the bundle's
    own declaration of scope and host, named by the bundle format) and follows the renames."""
    names = {"manifest.json": "manifest.json"}
    for i, name in enumerate(sorted(n for n in files if n != "manifest.json"), 1):
        ext = Path(name).suffix if Path(name).suffix in (".log", ".txt", ".md", ".xml", ".csv", ".json", ".yaml") else ".txt"
        names[name] = f"attachment{i}{ext}"
    out = {}
    for name, text in files.items():
        if name == "manifest.json":
            for old, new in names.items():
                text = text.replace(f'"{old}"', f'"{new}"')
        out[names[name]] = text
    return out


def _fence(text: str) -> str:
    ticks = "````" if "```" in text else "```"
    return f"{ticks}\n{text.rstrip()}\n{ticks}\n"


def issue_body(files: Files) -> Files:
    notes, rest = _notes_first(files)
    body = [notes.rstrip(), ""]
    for name, text in rest:
        body += [f"**{name}**", "", _fence(text)]
    return {"issue.md": "\n".join(body)}


def details(files: Files) -> Files:
    notes, rest = _notes_first(files)
    body = [notes.rstrip(), ""]
    for name, text in rest:
        body += [f"<details><summary>{name}</summary>", "", _fence(text), "</details>", ""]
    return {"issue.md": "\n".join(body)}


def indented(files: Files) -> Files:
    notes, rest = _notes_first(files)
    body = [notes.rstrip(), ""]
    for name, text in rest:
        body += [f"{name}:", ""] + ["    " + ln if ln.strip() else "" for ln in text.splitlines()] + [""]
    return {"post.txt": "\n".join(body)}


def plain(files: Files) -> Files:
    notes, rest = _notes_first(files)
    body = [notes.rstrip(), ""]
    for name, text in rest:
        body += [f"Output of {name}:", "", text.rstrip(), ""]
    return {"ticket.txt": "\n".join(body)}


_PROMPT = re.compile(r"^(\s*)\$ ", re.MULTILINE)


def prompt(files: Files) -> Files:
    return {n: _PROMPT.sub(r"\1alice@gpu-node-07:~$ ", t) for n, t in files.items()}


VARIANTS: dict[str, Callable[[Files], Files]] = {
    "crlf": crlf, "renamed": renamed, "issue-body": issue_body, "details": details, "indented": indented,
    "plain": plain, "prompt": prompt,
}


def read_input(case: Path) -> Files | None:
    """The case's attachments as text, or None when one is binary or in a subfolder (left out)."""
    files: Files = {}
    for p in sorted((case / "input").rglob("*")):
        if p.is_dir():
            continue
        if p.parent != case / "input":
            return None
        try:
            files[p.name] = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            return None
    return files


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--library", action="store_true", help="also the library cases")
    ap.add_argument("--only", choices=sorted(VARIANTS), action="append")
    ap.add_argument("--show", type=int, default=40, help="lost cases listed per variant")
    opts = ap.parse_args()
    sys.path.insert(0, str(ROOT.parent))
    from clusterdx.engine.cases import case_dirs, case_spec, frozen_cases, run_case
    from clusterdx.engine.kb import load_kb

    kb = load_kb(cache=True)
    frozen = frozen_cases(CASES)
    cases = [c for c in case_dirs() if c.name not in frozen
             and (opts.library or case_spec(c).get("corpus") == "public")]
    variants = {k: v for k, v in VARIANTS.items() if not opts.only or k in opts.only}
    scratch = Path(tempfile.mkdtemp(prefix="clusterdx-forms-"))
    tally: dict[str, Counter] = {k: Counter() for k in variants}
    lost: dict[str, list[str]] = {k: [] for k in variants}
    skipped = 0
    try:
        for case in cases:
            files = read_input(case)
            if files is None:
                skipped += 1
                continue
            base = run_case(kb, case, frozen)
            for name, make in variants.items():
                if name in POSTS and not pasteable(files):
                    continue
                folder = scratch / name / case.name
                (folder / "input").mkdir(parents=True)
                shutil.copy(case / "expect.yaml", folder / "expect.yaml")
                for fname, text in make(files).items():
                    (folder / "input" / fname).write_bytes(text.encode("utf-8"))
                got = run_case(kb, folder, set())
                t = tally[name]
                t["cases"] += 1
                t["top3_lost"] += bool(base.top3_ok) and not got.top3_ok
                t["top3_gained"] += (not base.top3_ok) and bool(got.top3_ok)
                t["top1_lost"] += bool(base.top1_ok) and not got.top1_ok
                t["top1_gained"] += (not base.top1_ok) and bool(got.top1_ok)
                if (base.top3_ok and not got.top3_ok) or (base.top1_ok and not got.top1_ok):
                    lost[name].append(f"{case.name}: {[c for c, _ in base.ranking[:3]]} -> "
                                      f"{[c for c, _ in got.ranking[:3]]}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"{len(cases)} cases ({skipped} left out: binary or nested inputs)")
    bad = 0
    for name, t in tally.items():
        print(f"{name:<11} cases={t['cases']} top3 lost={t['top3_lost']} gained={t['top3_gained']} "
              f"top1 lost={t['top1_lost']} gained={t['top1_gained']}")
        bad += t["top3_lost"] + t["top1_lost"]
        for line in lost[name][:opts.show]:
            print(f"    {line}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
