"""``clusterdx diagnose --interactive``: the guided loop. Input and output only; the engine decides.

Each round shows the ranking, then proposes the best next probe (``report.next_probes``) and the
KB question that would move the leading hypotheses most (:func:`clusterdx.engine.questions.pick_question`).
The user pastes the probe's output (ended by a line holding only ``.``, or end of file), gives a
file path, answers the question, skips, saves the session or quits. Everything is re-ranked from
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
            name = re.sub(r"[^A-Za-z0-9_.-]", "_", str(item.get("name") or f"paste-{i}"))
            p = self.workdir / f"{i:02d}-{name}.txt"
            if not p.exists():
                p.write_text(str(item.get("text", "")), encoding="utf-8")
            out.append(str(p))
        return out

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
        choices += ["[f] give a file", "[k] skip", "[s] save", "[q] quit"]
        self.say("  " + "  ".join(choices))
        cmd = self.ask("clusterdx> ").strip().lower()
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
                self.say(f"added {path}")
            else:
                self.say(f"no such file or folder: {path!r}")
        elif cmd == "k":
            self.s.skipped += [x.id for x in (probe, question) if x is not None]
            self.say("skipped")
        elif cmd == "s":
            target = self.ask("Save the session to [clusterdx-session.json]: ").strip() or "clusterdx-session.json"
            try:
                self.s.save(Path(target))
                self.say(f"saved to {target}; continue later with: clusterdx diagnose --interactive --resume {target}")
            except OSError as exc:
                self.say(f"cannot save: {exc}")
        else:
            self.say(f"unknown choice {cmd!r}")
        return True

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
        self.s.pasted.append({"name": f"paste-{len(self.s.pasted) + 1}-{probe_id}", "probe": probe_id,
                              "text": "\n".join(lines) + "\n"})
        self.say(f"read {len(lines)} lines")

    def answer(self, question: Any) -> None:
        for i, a in enumerate(question.answers, 1):
            self.say(f"  {i}. {a.label}")
        raw = self.ask("Answer number: ").strip()
        if not raw.isdigit() or not 1 <= int(raw) <= len(question.answers):
            self.say(f"no answer numbered {raw!r}")
            return
        self.s.answers.append({"question": question.id, "answer": question.answers[int(raw) - 1].label})

    def run(self) -> int:
        self.say("clusterdx interactive diagnosis. Ctrl-D or 'q' ends the session.")
        try:
            while True:
                report = self.rank()
                self.show(report)
                top = self.confirmed(report)
                if top is not None:
                    self.say("")
                    self.say(f"Confirmed: {top.title} ({top.id}), confidence {top.confidence:.2f}.")
                    for r in top.remediation[:2]:
                        self.say(f"  fix: {r.title}")
                    for v in top.verification[:2]:
                        self.say(f"  verify: {v.check}" + (f": $ {v.command}" if v.command else ""))
                    return 0
                if not self.step(report):
                    self.say("bye")
                    return 0
        except (_Quit, KeyboardInterrupt):
            self.say("\nbye")
            return 0


def run_session(session: Session, kb: Any, site: Any = None, stdin: TextIO | None = None,
                stdout: TextIO | None = None, make_workdir: Callable[[], Any] | None = None) -> int:
    """Run the loop on a terminal; returns the exit status."""
    with (make_workdir or tempfile.TemporaryDirectory)(prefix="clusterdx-session-") as tmp:
        return Loop(session, kb, site, stdin or sys.stdin, stdout or sys.stdout, Path(tmp)).run()
