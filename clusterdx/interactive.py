"""``clusterdx diagnose --interactive``: the guided loop. Input and output only; the engine decides.

Each round shows the ranking, then proposes the best next probe (``report.next_probes``) and the
KB question that would move the leading hypotheses most (:func:`clusterdx.engine.questions.pick_question`).
The user pastes the probe's output (ended by a line holding only ``.``, or end of file), gives a
file path, answers the question, skips, shows a cause's evidence (``e N``) or fix (``x N``), undoes
the last step (``u``), asks for help (``?``), saves the session or quits. A paste is named by the
format it was read as; the session ends on a summary: the leading cause, its fix and how to verify it. Everything is re-ranked from
scratch after each step (a diagnosis is a pure function of its inputs and answers); the loop stops
when a hypothesis reaches :data:`clusterdx.engine.weights.CONFIRMED`.

A session file (JSON, ``clusterdx.session/1``) holds the paths, the pasted outputs and the
answers, so ``--resume FILE`` replays it exactly.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, TextIO

from clusterdx.explainers.common import share_text

SESSION_SCHEMA = "clusterdx.session/1"
SHOWN = 5

HELP = """Commands:
  p      paste the proposed probe's output (end with a line holding only '.')
  a      answer the proposed question
  f      add a file or folder
  k      skip the proposed probe and question
  e N    show the evidence for and against cause N of the ranking
  x N    show the fix for cause N: steps, commands, trade-off, rollback, how to verify
  u      undo the last paste, answer, file or skip
  s      save the session (continue later with --resume FILE)
  q      end the session with a summary (Ctrl-D does the same)
  ?      this help"""


class SessionError(Exception):
    """A session file that cannot be resumed."""


@dataclass
class Session:
    paths: list[str] = field(default_factory=list)
    baseline: list[str] = field(default_factory=list)
    node: str | None = None
    scope: str | None = None
    redact: bool = True
    reference: str | None = None
    #: {"name", "probe", "text"} per pasted output, in order
    pasted: list[dict[str, Any]] = field(default_factory=list)
    #: files added during the session
    files: list[str] = field(default_factory=list)
    #: {"question", "answer"} per answered question
    answers: list[dict[str, str]] = field(default_factory=list)
    #: probe and question ids the user skipped
    skipped: list[str] = field(default_factory=list)

    def save(self, path: Path) -> None:
        data = {"schema": SESSION_SCHEMA, **asdict(self)}
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> "Session":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SessionError(f"{path}: cannot read the session: {exc}") from None
        if not isinstance(data, dict) or data.get("schema") != SESSION_SCHEMA:
            raise SessionError(f"{path}: not a clusterdx session (expected schema {SESSION_SCHEMA!r})")
        data.pop("schema")
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise SessionError(f"{path}: unknown session keys {', '.join(unknown)}")
        try:
            return cls(**data)
        except TypeError as exc:
            raise SessionError(f"{path}: {exc}") from None


class _Quit(Exception):
    pass


class Loop:
    def __init__(self, session: Session, kb: Any, site: Any, stdin: TextIO, stdout: TextIO,
                 workdir: Path) -> None:
        self.s, self.kb, self.site = session, kb, site
        self.stdin, self.stdout, self.workdir = stdin, stdout, workdir
        self._live: Any = None
        #: what each step added, last last, so ``u`` can take it back
        self.history: list[tuple[str, Any]] = []
        #: the paste to name, once the next ranking has read it
        self._announce: str | None = None
        self.report: Any = None

    # -- I/O

    def say(self, text: str = "") -> None:
        self.stdout.write(text + "\n")
        self.stdout.flush()

    def ask(self, prompt: str) -> str:
        self.stdout.write(prompt)
        self.stdout.flush()
        line = self.stdin.readline()
        if not line:
            raise _Quit
        return line.rstrip("\r\n")

    # -- the engine

    def _pasted_paths(self) -> list[str]:
        out = []
        for i, item in enumerate(self.s.pasted, 1):
            p = self._paste_path(i, item)
            # rewritten every time: an undone paste's number is taken by the next one
            p.write_text(str(item.get("text", "")), encoding="utf-8")
            out.append(str(p))
        return out

    def _paste_path(self, i: int, item: dict[str, Any]) -> Path:
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", str(item.get("name") or f"paste-{i}"))
        return self.workdir / f"{i:02d}-{name}.txt"

    def rank(self) -> Any:
        from clusterdx.engine.diagnose import Collected, collect_live, collect_paths, diagnose
        from clusterdx.engine.questions import answer_evidence

        extra_paths = self.s.files + self._pasted_paths()
        s = self.s
        if s.paths:
            target = collect_paths(s.paths + extra_paths, node=s.node, scope=s.scope, redact=s.redact)
        else:
            if self._live is None:
                self._live = collect_live(redact=s.redact)
            more = collect_paths(extra_paths, node=s.node, scope=s.scope, redact=s.redact) if extra_paths else None
            target = self._live if more is None else Collected(
                self._live.inputs + more.inputs, self._live.facts + more.facts, self._live.paths + more.paths)
        base = collect_paths(s.baseline, redact=s.redact) if s.baseline else None
        evidence = []
        for a in s.answers:
            q = self.kb.questions.get(a["question"])
            if q is not None:
                try:
                    evidence += answer_evidence(q, a["answer"])
                except KeyError:
                    self.say(f"(ignoring unknown answer {a['answer']!r} to {q.id})")
        return diagnose(target, base, kb=self.kb, redact=s.redact, site=self.site, reference=s.reference,
                        extra_evidence=evidence)

    # -- one round

    def announce(self, report: Any) -> None:
        """Name what the last paste was read as: its format, or why it was not recognised."""
        path, self._announce = self._announce, None
        if path is None:
            return
        got = next((i for i in report.inputs if i.path == path or i.path.endswith("/" + Path(path).name)), None)
        if got is None:
            self.say("the paste was not read (no input came from it)")
        elif got.status in ("parsed", "partial") and got.format:
            self.say(f"recognised as {got.format} ({got.status}, {got.facts} facts)")
        else:
            reason = f": {got.reason}" if got.reason else ""
            self.say(f"not recognised as any known format{reason}; paste the whole output of the command shown")

    def show(self, report: Any) -> None:
        self.say("")
        if not report.hypotheses:
            self.say("Ranking: no root cause is supported by the evidence so far.")
        else:
            self.say("Ranking:")
            for h in report.hypotheses[:SHOWN]:
                self.say(f"  {h.rank}. {h.id:<45} confidence {h.confidence:.2f}  {share_text(h)}")
            if len(report.hypotheses) > SHOWN:
                self.say(f"  ... {len(report.hypotheses) - SHOWN} more")

    def confirmed(self, report: Any) -> Any:
        from clusterdx.engine.weights import CONFIRMED

        return next((h for h in report.hypotheses if h.confidence >= CONFIRMED), None)

    def step(self, report: Any) -> bool:
        """One proposal and one answer; False when the session ends."""
        from clusterdx.engine.questions import pick_question

        done = {a["question"] for a in self.s.answers} | set(self.s.skipped)
        probe = next((p for p in report.next_probes if p.id not in done), None)
        question = pick_question(self.kb, [(h.id, h.confidence) for h in report.hypotheses], done)
        self.say("")
        choices = []
        if probe is not None:
            root = "needs root" if probe.needs_root else "no root"
            self.say(f"Next probe: {probe.title} [{probe.id}] (on {', '.join(probe.where)}; {root}; "
                     f"~{probe.duration_s:g} s)")
            self.say(f"  $ {probe.command}")
            if len(probe.separates) == 2:
                self.say(f"  it separates {probe.separates[0]} from {probe.separates[1]}")
            choices.append("[p] paste its output")
        if question is not None:
            self.say(f"Question: {question.text} [{question.id}]")
            choices.append("[a] answer the question")
        choices += ["[f] give a file", "[k] skip", "[e N] evidence", "[x N] fix", "[u] undo", "[s] save",
                    "[q] quit", "[?] help"]
        self.say("  " + "  ".join(choices))
        while True:
            cmd = self.ask("clusterdx> ").strip().lower()
            word, _, arg = cmd.partition(" ")
            if word in ("?", "h", "help"):
                self.say(HELP)
            elif word in ("e", "x"):
                self.detail(report, word, arg.strip())
            else:
                break
        if cmd in ("q", "quit", "exit"):
            return False
        if cmd == "p" and probe is not None:
            self.paste(probe.id)
        elif cmd == "a" and question is not None:
            self.answer(question)
        elif cmd == "f":
            path = self.ask("File or folder: ").strip()
            if path and Path(path).exists():
                self.s.files.append(path)
                self.history.append(("file", path))
                self.say(f"added {path}")
            else:
                self.say(f"no such file or folder: {path!r}")
        elif cmd == "k":
            ids = [x.id for x in (probe, question) if x is not None]
            self.s.skipped += ids
            self.history.append(("skip", len(ids)))
            self.say("skipped")
        elif cmd == "u":
            self.undo()
        elif cmd == "s":
            target = self.ask("Save the session to [clusterdx-session.json]: ").strip() or "clusterdx-session.json"
            try:
                self.s.save(Path(target))
                self.say(f"saved to {target}; continue later with: clusterdx diagnose --interactive --resume {target}")
            except OSError as exc:
                self.say(f"cannot save: {exc}")
        else:
            self.say(f"unknown choice {cmd!r}; '?' lists the commands")
        return True

    def _cause(self, report: Any, arg: str) -> Any:
        hs = report.hypotheses
        if not hs:
            self.say("no cause in the ranking yet")
            return None
        if not arg:
            return hs[0]
        if arg.isdigit() and 1 <= int(arg) <= len(hs):
            return hs[int(arg) - 1]
        found = next((h for h in hs if h.id == arg), None)
        if found is None:
            self.say(f"no cause {arg!r}: give its number in the ranking (1-{len(hs)})")
        return found

    def detail(self, report: Any, what: str, arg: str) -> None:
        """``e N``: the evidence for and against a cause; ``x N``: its fix and how to verify it."""
        h = self._cause(report, arg)
        if h is None:
            return
        self.say(f"{h.rank}. {h.title} ({h.id}), confidence {h.confidence:.2f}")
        if what == "e":
            for ev in h.evidence:
                self.say(f"  + [{ev.strength}] {ev.message}")
            for ev in h.refuting_evidence:
                self.say(f"  - [{ev.strength}] {ev.message} (counts against)")
            if not h.evidence and not h.refuting_evidence:
                self.say("  no evidence: it is ranked by its prior alone")
            return
        if not h.remediation:
            self.say("  the knowledge base has no remediation for it")
        for r in h.remediation:
            self.say(f"  Fix: {r.title} (risk {r.risk}, disruption {r.disruption})")
            for i, st in enumerate(r.steps, 1):
                self.say(f"    {i}. {st.text}")
                if st.command:
                    self.say(f"       $ {st.command}{' (as root)' if st.needs_root else ''}")
                for alt in st.alternatives:
                    self.say(f"       or: $ {alt.command}{' (as root)' if alt.needs_root else ''}  ({alt.text})")
            if r.tradeoff:
                self.say(f"    trade-off: {r.tradeoff}")
            if r.rollback:
                self.say(f"    rollback: {r.rollback}")
        for v in h.verification:
            self.say(f"  verify: {v.check}" + (f": $ {v.command}" if v.command else ""))
            self.say(f"    expect: {v.expect}")

    def undo(self) -> None:
        if not self.history:
            self.say("nothing to undo")
            return
        kind, item = self.history.pop()
        if kind == "paste":
            self.s.pasted.pop()
            self.say("undid the last paste")
        elif kind == "answer":
            a = self.s.answers.pop()
            self.say(f"undid the answer {a['answer']!r} to {a['question']}")
        elif kind == "file":
            self.s.files.remove(item)
            self.say(f"removed {item}")
        elif kind == "skip":
            del self.s.skipped[len(self.s.skipped) - item:]
            self.say("the skipped probe and question are back")

    def paste(self, probe_id: str) -> None:
        self.say("Paste the output; end with a line holding only '.' (or Ctrl-D).")
        lines = []
        while True:
            line = self.stdin.readline()
            if not line or line.rstrip("\r\n") == ".":
                break
            lines.append(line.rstrip("\r\n"))
        if not any(ln.strip() for ln in lines):
            self.say("nothing pasted")
            return
        item = {"name": f"paste-{len(self.s.pasted) + 1}-{probe_id}", "probe": probe_id,
                "text": "\n".join(lines) + "\n"}
        self.s.pasted.append(item)
        self.history.append(("paste", None))
        self._announce = str(self._paste_path(len(self.s.pasted), item))
        self.say(f"read {len(lines)} lines")

    def answer(self, question: Any) -> None:
        for i, a in enumerate(question.answers, 1):
            self.say(f"  {i}. {a.label}")
        raw = self.ask("Answer number: ").strip()
        if not raw.isdigit() or not 1 <= int(raw) <= len(question.answers):
            self.say(f"no answer numbered {raw!r}")
            return
        self.s.answers.append({"question": question.id, "answer": question.answers[int(raw) - 1].label})
        self.history.append(("answer", None))

    def summary(self, report: Any, confirmed: Any = None) -> None:
        """The session's answer: the leading cause, the fix to apply and how to verify it."""
        self.say("")
        added = (f"{len(self.s.pasted)} pasted output(s), {len(self.s.files)} file(s), "
                 f"{len(self.s.answers)} answer(s) added this session")
        if report is None or not report.hypotheses:
            self.say(f"Summary: no cause is supported by what was read ({added}).")
            if report is not None and report.next_probes:
                self.say(f"  run next: $ {report.next_probes[0].command}")
            return
        h = confirmed or report.hypotheses[0]
        lead = "Confirmed" if confirmed is not None else (
            "Leading candidate, unconfirmed" if h.status == "candidate" else "Most likely, not yet confirmed")
        self.say(f"Summary ({added}):")
        self.say(f"  {lead}: {h.title} ({h.id}), confidence {h.confidence:.2f}")
        for r in h.remediation[:1]:
            self.say(f"  fix: {r.title}")
            st = next((st for st in r.steps if st.command), None)
            if st is not None:
                self.say(f"    $ {st.command}{' (as root)' if st.needs_root else ''}")
            if r.rollback:
                self.say(f"    rollback: {r.rollback}")
        if h.verification:
            v = next((v for v in h.verification if v.values), h.verification[0])
            self.say(f"  verify: {v.check}" + (f": $ {v.command}" if v.command else ""))
            self.say(f"    expect: {v.expect}")
        if confirmed is None and report.next_probes:
            self.say(f"  to confirm it, run: $ {report.next_probes[0].command}")

    def run(self) -> int:
        self.say("clusterdx interactive diagnosis. '?' lists the commands; 'q' or Ctrl-D ends with a summary.")
        report = None
        try:
            while True:
                report = self.rank()
                self.announce(report)
                self.show(report)
                top = self.confirmed(report)
                if top is not None:
                    self.summary(report, top)
                    return 0
                if not self.step(report):
                    self.summary(report)
                    return 0
        except (_Quit, KeyboardInterrupt):
            self.say("")
            self.summary(report)
            return 0


def run_session(session: Session, kb: Any, site: Any = None, stdin: TextIO | None = None,
                stdout: TextIO | None = None, make_workdir: Callable[[], Any] | None = None) -> int:
    """Run the loop on a terminal; returns the exit status."""
    with (make_workdir or tempfile.TemporaryDirectory)(prefix="clusterdx-session-") as tmp:
        return Loop(session, kb, site, stdin or sys.stdin, stdout or sys.stdout, Path(tmp)).run()
