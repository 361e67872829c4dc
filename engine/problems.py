"""Load-time problems: stable codes, locations, breadcrumbs and "did you mean" hints."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Iterable, Literal

#: code -> one-line title; the codes are a public interface (CI annotations, the invalid-KB corpus)
CODES: dict[str, str] = {
    "KB001": "yaml-parse-error",
    "KB002": "unknown-document-schema",
    "KB101": "schema-violation",
    "KB102": "id-does-not-match-file",
    "KB103": "duplicate-id",
    "KB201": "unknown-graph-node",
    "KB202": "unknown-fact-type",
    "KB203": "unknown-fact-field",
    "KB204": "unknown-param",
    "KB205": "unknown-remediation",
    "KB206": "type-mismatch",
    "KB207": "unknown-operator",
    "KB208": "bad-regex",
    "KB209": "unknown-probe-fact-type",
    "KB301": "condition-error",
    "KB401": "template-error",
    "KB501": "graph-cycle",
    "KB502": "root-cause-unreachable",
    "KB503": "root-cause-incomplete",
    "KB601": "engine-limit",
    "KB901": "no-evidence-for-node",
    "KB902": "missing-rule-tests",
    "KB903": "unused-node",
    "KB904": "no-probe-for-fact-type",
}


@dataclass(frozen=True)
class Problem:
    code: str
    message: str
    file: str = ""
    line: int = 0
    col: int = 0
    breadcrumb: str = ""
    hint: str = ""
    severity: Literal["error", "warning"] = "error"

    @property
    def title(self) -> str:
        return CODES.get(self.code, "")

    def __str__(self) -> str:
        loc = f"{self.file}:{self.line}:{self.col}" if self.file else "<kb>"
        out = f"{loc}: {self.severity} {self.code} {self.title}"
        if self.breadcrumb:
            out += f"\n  at {self.breadcrumb}"
        out += f"\n  {self.message}"
        if self.hint:
            out += f"; {self.hint}"
        return out

    def as_dict(self) -> dict[str, object]:
        return {
            "code": self.code, "title": self.title, "severity": self.severity, "file": self.file,
            "line": self.line, "col": self.col, "breadcrumb": self.breadcrumb,
            "message": self.message, "hint": self.hint,
        }


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else ""


class KBLoadError(Exception):
    """The knowledge base has errors; ``problems`` lists all of them."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        errors = [p for p in problems if p.severity == "error"]
        super().__init__(f"{len(errors)} error(s) in the knowledge base:\n" + "\n".join(str(p) for p in errors[:20]))
