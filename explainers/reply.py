"""The triage reply: what a support engineer sends the customer, in Markdown.

Addressed to the customer, in their terms. The customer has neither our tool nor our knowledge
base, so the reply carries no rule or cause ids, no fact reprs, no path on the engineer's machine
and no pointer to a command of ours: inputs are named as the customer sent them, each cause comes
with its fix and the check that proves the fix, and what we need next is a short numbered list
of commands to run on their side. Nothing the customer wrote is quoted back to them.

Like every explainer it only formats what the report holds: which causes are supported, the
shares of the gap, the probes and their order all come from the report.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

from clusterdx.explainers.common import LEADING, passed_by_layer
from clusterdx.explainers.markdown import fenced, text

#: next probes the reply asks the customer to run (the report ranks them by value)
ASKED_PROBES = 3
#: evidence lines shown per cause
EVIDENCE_SHOWN = 4
#: passed checks named per layer on a reply that found nothing wrong
PASSED_SHOWN = 8
_LIST_REPR = re.compile(r"\[((?:'[^'\n]*'|\"[^\"\n]*\")(?:, (?:'[^'\n]*'|\"[^\"\n]*\"))*)\]")
_ARCHIVE = re.compile(r"\.(tar|tgz|tar\.gz|tar\.xz|tar\.bz2|tbz2|txz|zip)$", re.IGNORECASE)
_SPAN = re.compile(r"^(?P<path>.+?)(?:#\d+)?(?::(?P<a>\d+)(?:-(?P<b>\d+))?)?$")
_SCOPES = {"host": "the host", "container": "inside the container", "vm-guest": "inside the VM",
           "any": "an affected node (the host, a container or a VM alike)"}


#: the KB's third-person wording of what a ticket states, as its author reads it
_TICKET = re.compile(r"\b([Tt])he ticket(?:(?P<poss>'s)|(?P<colon> says:)| (?P<verb>says|describes|compares|measures|reports))(?= )")
_QUOTE = re.compile(r'"[^"]{3,}"')
_VERBS = {"says": "say", "describes": "describe", "compares": "compare", "measures": "measured", "reports": "report"}


def _to_customer(message: str) -> str:
    def sub(m: re.Match[str]) -> str:
        you = "You" if m.group(1) == "T" else "you"
        if m.group("poss"):
            return "Your" if you == "You" else "your"
        if m.group("colon"):
            return f"{you} wrote:"
        return f"{you} {_VERBS[m.group('verb')]}"
    return _TICKET.sub(sub, message)


def _natural(s: str) -> list[Any]:
    """Sort key: line 9 before line 11."""
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", s)]


class Names:
    """Turns the engineer's paths into the names the customer sent: a folder attachment's files
    relative to it, a file or archive attachment by its own name."""

    def __init__(self, report: Any) -> None:
        paths = {i.path for i in report.inputs}
        self.prefixes: list[str] = []
        for t in list(report.target) + list(report.baseline):
            t = str(t).rstrip("/")
            if not t or "<" in t:
                continue
            # a file or archive is named by its file name; a folder's files relative to the folder
            whole = t in paths or _ARCHIVE.search(t) or any(p.startswith(t + "!/") or p.startswith(t + "#")
                                                           for p in paths)
            parent = posixpath.dirname(t) if whole else t
            if parent:
                self.prefixes.append(parent + "/")
        self.prefixes.sort(key=len, reverse=True)
        # a document inside a file (``env.txt#1``) is still that file to the customer
        self.documents = sorted({p.split("#", 1)[0] for p in paths if "#" in p}, key=len, reverse=True)

    def path(self, path: str) -> str:
        for p in self.prefixes:
            if path.startswith(p):
                path = path[len(p):]
                break
        return path.replace("!/", "/")

    def clean(self, s: str) -> str:
        """Prose from a rule's message or the KB: paths shortened, Python list reprs as lists."""
        for p in self.prefixes:
            s = s.replace(p, "")
        s = s.replace("!/", "/")
        s = re.sub(r"(\S)#\d+\b", r"\1", s)
        return _LIST_REPR.sub(lambda m: ", ".join(x.strip("'\"") for x in m.group(1).split(", ")), s)

    def source(self, source: str) -> str:
        """``dir/env.txt#1:2-13`` -> ``env.txt, lines 2-13``."""
        m = _SPAN.match(source)
        if not m:
            return self.path(source)
        where = self.path(m.group("path"))
        if m.group("b") and m.group("b") != m.group("a"):
            return f"{where}, lines {m.group('a')}-{m.group('b')}"
        if m.group("a"):
            return f"{where}, line {m.group('a')}"
        return where


class Ids:
    """Internal ids that KB prose may name (``see propagate-nccl-env-into-container``), with the
    title the report gives each, so the customer reads the title."""

    def __init__(self, report: Any) -> None:
        titles: dict[str, str] = {}
        for r in report.rules:
            if r.title:
                titles[r.rule] = r.title
        for ne in report.not_evaluated:
            titles.setdefault(ne.rule, ne.title)
        for h in report.hypotheses:
            titles[h.id] = h.title
            for r in h.remediation:
                titles[r.id] = r.title
        self.titles = titles
        self._re = re.compile(r"(?<![\w-])(" + "|".join(re.escape(k) for k in sorted(titles, key=len, reverse=True))
                              + r")(?![\w-])") if titles else None

    def clean(self, s: str) -> str:
        if self._re is None:
            return s
        return self._re.sub(lambda m: f"“{self.titles[m.group(1)]}”", s)


class _Writer:
    def __init__(self, report: Any) -> None:
        self.report = report
        self.names = Names(report)
        self.ids = Ids(report)

    def prose(self, s: Any) -> str:
        return text(self.ids.clean(self.names.clean(str(s))))

    # -- sections -------------------------------------------------------------------------------

    def opening(self) -> list[str]:
        r = self.report
        read = [i for i in r.inputs if i.status in ("parsed", "partial") and i.side == "target" and i.format != "prose"]
        words = any(i.format == "prose" and i.facts for i in r.inputs)
        unread = [i for i in r.inputs if i.status in ("unrecognized", "error")]
        out = ["Hello,", ""]
        if read:
            names = ", ".join(f"`{self.names.path(i.path.split('#', 1)[0])}`" for i in _unique_files(read))
            out.append(f"Thank you for the {'description and the ' if words else ''}files. We went through {names}.")
        elif words:
            out.append("Thank you for the description. We went through what you wrote; no command output was "
                       "attached, so the steps below ask for what would settle it.")
        else:
            out.append("Thank you for the ticket. None of the files attached so far holds output we can "
                       "analyse, so the steps below ask for what we need.")
        if unread:
            files = ", ".join(f"`{self.names.path(i.path.split('#', 1)[0])}`" for i in _unique_files(unread))
            out.append(f"We could not read {files}; if that was meant to be command output, please send it "
                       "as plain text.")
        inc = getattr(r, "incomplete", None)
        if inc is not None:
            left = len(inc.inputs_not_read)
            out += ["", "Our analysis was not finished within its time limit"
                        + (f"; {left} of the files were not read yet" if left else "")
                        + ". What follows covers what was done; we will complete it and follow up."]
        g = r.gap
        if g is not None:
            against = "the baseline run you sent" if g.basis == "baseline" else "what this hardware should reach"
            said = "You report" if g.reported else "We measured"
            out += ["", f"{said} {text(g.metric)} at {g.measured:g}, against {g.reference:g} for {against}: "
                        f"a gap of {g.gap_pct:.1f}%."]
        return out

    def causes(self) -> list[str]:
        supported = [h for h in self.report.hypotheses if h.status == "supported"]
        if not supported:
            return []
        out = ["", "## What we found", ""]
        if len(supported) == 1:
            out.append("What you sent points to one cause.")
        else:
            out.append(f"What you sent points to {len(supported)} causes, most likely first.")
        for k, h in enumerate(supported, 1):
            out += ["", f"### {k}. {text(h.title)}", ""]
            out.append(f"Confidence: {h.confidence * 100:.0f}%. {self.weight(h)}")
            out += self.evidence(h)
            out += self.fix(h, full=k <= LEADING)
        return out

    def weight(self, h: Any) -> str:
        g = self.report.gap
        if g is not None and h.gap_share_pct is not None:
            return (f"We expect it to account for about {h.gap_share_pct:.1f} of the {g.gap_pct:.1f} points of "
                    "the measured gap.")
        return f"On comparable systems this typically costs {h.cost_pct[0]:g}-{h.cost_pct[1]:g}% of throughput."

    def evidence(self, h: Any) -> list[str]:
        if not h.evidence:
            return []
        out = ["", "What shows it:", ""]
        shown: set[str] = set()
        for ev in h.evidence[:EVIDENCE_SHOWN]:
            where = sorted({self.names.source(f.source) for f in ev.facts}, key=_natural)
            seen = f" (in {', '.join(f'`{w}`' for w in where[:3])})" if where else ""
            line = f"- {self.prose(ev.message)}{seen}"
            if getattr(ev, "reported", False):
                # the rule's reasoning, addressed to the ticket's author; their own words are not
                # quoted back (they know what they wrote)
                said = _to_customer(self.prose(ev.message))
                line = (f"- What you describe points the same way{seen}." if _QUOTE.search(said)
                        else f"- {said}{seen}")
            if line not in shown:
                shown.add(line)
                out.append(line)
        if len(h.evidence) > EVIDENCE_SHOWN:
            out.append(f"- and {len(h.evidence) - EVIDENCE_SHOWN} more findings pointing the same way.")
        for ev in h.refuting_evidence[:2]:
            out.append(f"- Against it: {self.prose(ev.message)}")
        return out

    def fix(self, h: Any, full: bool) -> list[str]:
        out: list[str] = []
        remedies = h.remediation if full else h.remediation[:1]
        for n, rem in enumerate(remedies):
            head = "How to fix it" if n == 0 else "Or"
            out += ["", f"{head}: {self.prose(rem.title)} (risk {text(rem.risk)}; "
                        f"{'no disruption' if rem.disruption == 'none' else text(rem.disruption).replace('-', ' ')}).", ""]
            for i, st in enumerate(rem.steps, 1):
                root = " (as root)" if st.needs_root and st.command else ""
                out.append(f"{i}. {self.prose(st.text)}{root}")
                if st.command:
                    out += ["", *fenced([st.command], "sh", indent="   "), ""]
                for alt in st.alternatives:
                    out.append(f"   {_or(self.prose(alt.text))}{' (as root)' if alt.needs_root else ''}:")
                    out += ["", *fenced([alt.command], "sh", indent="   "), ""]
            if rem.tradeoff:
                out += ["", f"Trade-off: {self.prose(rem.tradeoff)}"]
            if rem.rollback:
                out += ["", f"To undo it: {self.prose(rem.rollback)}"]
        checks = h.verification if full else h.verification[:1]
        if checks:
            out += ["", "How to check the fix worked:", ""]
            for v in checks:
                out.append(f"- {self.prose(v.check)}")
                if v.command:
                    out += ["", *fenced([v.command], "sh", indent="  "), ""]
                out.append(f"  Expect: {self.prose(v.expect)}")
        return out

    def candidates(self, asked: list[Any]) -> list[str]:
        cands = [h for h in self.report.hypotheses if h.status == "candidate"]
        if not cands:
            return []
        found = any(h.status == "supported" for h in self.report.hypotheses)
        lead = ("It could also be one of these" if found
                else "We cannot name the cause yet; it could be one of these")
        out = ["", f"## {lead}", ""]
        for h in cands:
            out.append(f"- {text(h.title)} (unconfirmed; {self.weight(h).rstrip('.').lower()})")
        ids = {h.id for h in cands}
        probe = next((p for p in self.report.next_probes if ids & set(p.separates)), None) \
            or next((p for p in self.report.next_probes if ids & set(p.bears_on)), None)
        if probe is None:
            out += ["", "The outputs we ask for below will narrow it down."]
            return out
        number = next((k for k, p in enumerate(asked, 1) if p.id == probe.id), None)
        out += ["", "This command tells them apart" + (f" (it is number {number} below):" if number else ":"), "",
                *fenced([probe.command], "sh")]
        return out

    def healthy(self) -> list[str]:
        r = self.report
        found = any(h.status == "supported" for h in r.hypotheses)
        layers = passed_by_layer(r)
        checked = sum(len(v) for v in layers.values())
        if found:
            if not checked:
                return []
            return ["", f"We also made {checked} other checks on these files and found nothing wrong in them."]
        out = ["", "## What we checked and found fine", ""]
        if not checked:
            out.append("The files did not hold enough for any of our checks to pass or fail, so we cannot say "
                       "yet whether anything is wrong; the outputs below would let us check.")
            return out
        head = "Nothing in these files points to a cause of slowness."
        if r.gap is not None and r.gap.meets_bar:
            head += (f" The measured {text(r.gap.metric)} is within {(1 - r.gap.bar) * 100:.0f}% of what it "
                     "should be.")
        out.append(head)
        # a rule that fired only to refute a cause names a healthy state; a silent one names the
        # problem it looked for and did not find
        for outcome, lead in (("refuted", "Found fine:"), ("silent", "Looked for and not found:")):
            rows = []
            for layer, rules in layers.items():
                titles = sorted({ru.title for ru in rules if ru.outcome == outcome and ru.title})
                if titles:
                    shown = "; ".join(text(t) for t in titles[:PASSED_SHOWN])
                    more = f"; and {len(titles) - PASSED_SHOWN} more" if len(titles) > PASSED_SHOWN else ""
                    rows.append(f"- {text(layer)}: {shown}{more}.")
            if rows:
                out += ["", lead, "", *rows]
        return out

    def asks(self, asked: list[Any]) -> list[str]:
        unchecked = [ne for ne in self.report.not_evaluated if not getattr(ne, "not_applicable", "")]
        out = ["", "## What we need from you next", ""]
        if unchecked:
            out.append(f"{len(unchecked)} checks could not be made with the files you sent, so we do not assume "
                       "they are fine.")
        if not asked:
            out.append("Nothing more to collect for now: no further output would change this picture.")
            return out
        out.append(f"Please send us the output of {'these commands' if len(asked) > 1 else 'this command'}, "
                   "most useful first:")
        for i, p in enumerate(asked, 1):
            where = " or ".join(_SCOPES.get(w, text(w)) for w in p.where)
            notes = ["as root" if p.needs_root else "no root needed", f"about {_duration(p.duration_s)}"]
            if p.disturbs_workload:
                notes.append("run it while the job is stopped, it loads the GPUs and network")
            out += ["", f"{i}. {text(p.title)}: run it on {where} ({'; '.join(notes)}).", "",
                    *fenced([p.command], "sh", indent="   ")]
            tells = self.tells(p)
            if tells:
                out += ["", f"   It gives us {tells}." if tells.startswith("enough") else f"   It tells us {tells}."]
        return out

    def tells(self, p: Any) -> str:
        titles = {h.id: h.title for h in self.report.hypotheses}
        apart = [titles[c] for c in p.separates if c in titles]
        if len(apart) == 2:
            return f"whether it is “{text(apart[0])}” or “{text(apart[1])}”"
        bears = [titles[c] for c in p.bears_on if c in titles]
        if bears:
            return "whether " + " or ".join(f"“{text(b)}”" for b in bears[:2]) + " is the cause"
        if p.unlocks:
            n = len(p.unlocks)
            return f"enough to make {n} of the checks we could not make yet" if n > 1 else \
                "enough to make one of the checks we could not make yet"
        return ""


def _unique_files(inputs: list[Any]) -> list[Any]:
    seen: set[str] = set()
    out = []
    for i in inputs:
        key = i.path.split("#", 1)[0]
        if key not in seen:
            seen.add(key)
            out.append(i)
    return out


def _duration(s: float) -> str:
    if s >= 120:
        return f"{s / 60:.0f} minutes"
    return f"{s:g} second{'' if s == 1 else 's'}"


def _or(alternative: str) -> str:
    """An alternative way to do a step, read as one ("Or, where show_gids is not installed")."""
    if alternative.lower().startswith("or "):
        return alternative[0].upper() + alternative[1:]
    return "Or, " + alternative[:1].lower() + alternative[1:]


def _tidy(lines: list[str]) -> list[str]:
    out: list[str] = []
    for ln in lines:
        if ln == "" and (not out or out[-1] == ""):
            continue
        out.append(ln)
    return out


def render(report: Any, **_: Any) -> str:
    """The reply as Markdown, ready to paste into the ticket."""
    w = _Writer(report)
    asked = list(report.next_probes[:ASKED_PROBES])
    out = w.opening()
    out += w.causes()
    out += w.candidates(asked)
    out += w.healthy()
    out += w.asks(asked)
    out += ["", "Best regards,"]
    return "\n".join(_tidy(out)) + "\n"
