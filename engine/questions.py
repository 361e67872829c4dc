"""KB questions in a guided session: which one to ask, and what an answer adds to the diagnosis.

A question (``kb/questions/*.yaml``) is asked when some of the causes it is ``about`` are among
the leading hypotheses. Its value is how far its answers would move those causes: for each
answer that carries evidence, the change in each leading cause's confidence when that evidence
joins the ranking (``±log LR(strength)`` attenuated along the causal graph, as
:mod:`clusterdx.engine.rank` does), averaged over the answers, divided by the question's cost.
An answer's evidence reaches :func:`clusterdx.engine.diagnose.diagnose` as ``extra_evidence``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from clusterdx.engine.kb import KnowledgeBase
from clusterdx.engine.schema import Question
from clusterdx.engine.weights import logit, sigmoid, strength_llr

#: how many of the ranked hypotheses count as "leading"
LEADING = 3


@dataclass(frozen=True)
class ExtraEvidence:
    """Evidence from outside the rules; ``rule_id`` names its origin (``question:<id>``)."""

    rule_id: str
    node: str
    effect: str
    strength: str
    message: str
    title: str = ""


def answer_evidence(question: Question, label: str) -> list[ExtraEvidence]:
    """The evidence the answer ``label`` adds (none for "don't know"); KeyError for an unknown label."""
    for answer in question.answers:
        if answer.label == label:
            return [ExtraEvidence(rule_id=f"question:{question.id}", node=ev.node, effect=ev.effect,
                                  strength=ev.strength, title=question.text,
                                  message=f"Answered {question.text!r}: {answer.label}.")
                    for ev in answer.evidence]
    raise KeyError(label)


def question_value(kb: KnowledgeBase, question: Question, leading: Mapping[str, float]) -> float:
    """Expected absolute change in the leading causes' confidence per unit of cost."""
    assert kb.graph is not None
    about = [c for c in question.about if c in leading]
    if not about:
        return 0.0
    moves = []
    for answer in question.answers:
        move = 0.0
        for ev in answer.evidence:
            sign = 1.0 if ev.effect == "supports" else -1.0
            for cause in about:
                att = kb.graph.attenuation.get(cause, {}).get(ev.node, 0.0)
                p = leading[cause]
                move += abs(sigmoid(logit(p) + sign * strength_llr(ev.strength) * att) - p)
        moves.append(move)
    return sum(moves) / len(moves) / max(question.cost, 0.1)


def pick_question(kb: KnowledgeBase, ranking: Iterable[tuple[str, float]],
                  asked: Iterable[str] = ()) -> Question | None:
    """The most useful question not asked yet about the leading causes, or None.

    ``ranking`` is (cause, confidence) best first, as in ``report.hypotheses``.
    """
    leading = dict(list(ranking)[:LEADING])
    done = set(asked)
    best: tuple[float, str] | None = None
    for qid in sorted(kb.questions):
        q = kb.questions[qid]
        if q.id in done:
            continue
        v = question_value(kb, q, leading)
        if v > 0 and (best is None or v > best[0]):
            best = (v, q.id)
    return kb.questions[best[1]] if best else None
