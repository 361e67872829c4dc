"""Every number the ranking uses, in one place.

Experts write words (a rule's evidence is ``strong``, a cause's prior is ``low``); these tables
turn them into numbers. The method that uses them is documented in :mod:`clusterdx.engine.rank`.

Strengths are likelihood ratios: how much more likely the observation is when the node it points
at is present than when it is absent. They add in log-odds, so two independent ``moderate``
observations weigh about as much as one ``strong``-ish one, and a ``decisive`` one settles it.
"""

from __future__ import annotations

import math

#: likelihood ratio per evidence strength word
STRENGTH_LR: dict[str, float] = {
    "weak": 2.0,
    "moderate": 5.0,
    "strong": 20.0,
    "decisive": 200.0,
}

#: prior probability that a cause is present on a cluster that is being diagnosed at all
PRIOR_P: dict[str, float] = {
    "rare": 0.02,
    "low": 0.05,
    "medium": 0.12,
    "high": 0.25,
}

#: causal edge strength word -> how much of a symptom's evidence reaches the cause upstream
EDGE_WEIGHT: dict[str, float] = {
    "weak": 0.3,
    "moderate": 0.6,
    "strong": 0.85,
}

#: a cause whose predicted symptom was checked and found absent loses this fraction of the
#: symptom's refuting weight (scaled by how strongly the cause predicts the symptom)
ABSENT_SYMPTOM_FACTOR = 1.0

#: confidence at or above which a hypothesis is called confirmed (interactive stop, check "fail")
CONFIRMED = 0.8
#: `check` calls a cause failed at this confidence when evidence points at it directly
CHECK_FAIL = 0.6
#: confidence at or above which a hypothesis is reported at all in the ranked list
REPORT_MIN = 0.15
#: width of the confidence bands below CONFIRMED inside which cost (expected share) orders causes
CONFIDENCE_BAND = 0.2
#: a cause below REPORT_MIN is listed as a candidate when evidence lifted it this much (log-odds)
CANDIDATE_MIN_LIFT = 0.05
#: with no reportable cause, the lift that lists a candidate: any real lift (a symptom many causes
#: share lifts each by a few thousandths)
SYMPTOM_ONLY_MIN_LIFT = 0.001
#: and how many: the three a reader weighs, not a tail of causes lifted by a few thousandths
SYMPTOM_ONLY_MAX = 3
#: at most this many candidates are listed
CANDIDATE_MAX = 4
#: in the listing's tail (ordered by lift), lifts closer than this are near ties, ordered by
#: confidence: evidence that moved two causes alike does not separate them, their priors do
LIFT_NEAR_TIE = 0.05


def logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def sigmoid(x: float) -> float:
    if x >= 0:
        return 1 / (1 + math.exp(-x))
    z = math.exp(x)
    return z / (1 + z)


def strength_llr(word: str) -> float:
    """Log-likelihood ratio of an evidence strength word."""
    return math.log(STRENGTH_LR[word])
