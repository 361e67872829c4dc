"""What kind of complaint a ticket makes: that the job fails, or that it is slow.

Most tickets say the job is slower than it should be, and every cause in the knowledge base can
explain that. Some say only that it goes wrong: it hangs, crashes, stops with an error or returns
wrong data, and nothing about speed. A cause that can only make collectives slower (a forced
protocol, a governor) is then no answer even when its own evidence shows it present; the ranking
lists it after the causes that can fail the job (:mod:`clusterdx.engine.rank`, step 10).

The user's words come as ``reported.symptom`` facts (the prose parser owns reading them); a
slowdown may also be measured (a gap against the reference that misses the bar)::

    reported.symptom kind=hang  "the training hangs at some point with an error 12 message"  -> fails
    reported.symptom kind=error + reported.metric slowdown_pct=15                           -> '' (both)
"""

from __future__ import annotations

from typing import Any, Sequence

#: the job goes wrong rather than slowly
FAILURE_KINDS = frozenset({"hang", "error", "multi-gpu-wrong-data", "retry-exceeded-mid-run"})
#: the job runs, slower than it should (or the user asks whether its speed is right)
SLOWNESS_KINDS = frozenset({"no-speedup", "low-bandwidth", "multi-gpu-slower", "slows-over-time", "below-peak",
                            "nccl-below-raw-rdma", "cpu-stage-slower-per-process", "device-set-dependent",
                            "pair-dependent", "asks-expected"})
#: a stated number that says how much slower or faster
_SPEED_METRICS = frozenset({"slowdown_pct", "speedup_pct"})

FAILS = "fails"


def complaint(facts: Sequence[Any], slow_measured: bool = False) -> str:
    """``'fails'`` when the ticket complains of a failure and of nothing slower; ``''`` otherwise
    (a slowdown, both, or no complaint in words). ``slow_measured``: a measured gap misses the bar."""
    fails, slow = False, slow_measured
    for f in facts:
        t = f.fact_type
        if t == "reported.symptom":
            kind = getattr(f, "kind", "")
            fails = fails or kind in FAILURE_KINDS
            slow = slow or kind in SLOWNESS_KINDS
        elif t == "reported.change" and getattr(f, "direction", "") in ("slower", "faster"):
            slow = True
        elif t == "reported.metric" and getattr(f, "metric", "") in _SPEED_METRICS:
            slow = True
    return FAILS if fails and not slow else ""
