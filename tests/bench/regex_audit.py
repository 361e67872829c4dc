"""Find super-linear regexes: every module-level compiled pattern of ``clusterdx.facts`` (parsers,
sniffers, splitters, the post and prose readers), run against long repeats of short alphabets
with a failing tail.

    python tests/bench/regex_audit.py [--n 3000]

A pattern is flagged when doubling the input more than triples the time and the longer run
takes over 20 ms. Prints ``module.NAME  seconds  sample``.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import pkgutil
import re
import signal
import time

ALPHABETS = [" ", "\t", "a", "A", "0", "1 ", "a ", "0 ", "a.", "a-", "a:", ".", "-", "_", ":", "=", "a=", "/",
             "0.", "0.0 ", "0,", "a,", " : ", "x:", "(", ")", "a(", "[", "a]", "'", '"', "0x", "Node 0 ", "GB/s ",
             "ab ", "a b", "|", " |", "a_", "a/", "\\", "$ ", "# ", "*", "a*", "+", "<", ">", "a>", "@", "%", "0%",
             "PID ", "a=b ", "a.b", "a.-", "a/", "a./", ".a", "a:b ", "a_b:", "Aa ", "a a:", "a: ", "k=v,", "0 (", "mlx5_0 ", "[0] ", "NCCL ", "us ", "0 0 ", "--", "a -", "- a"]
TAILS = ["", "!", "\x00", "\n", "=", "zz!", " #", "'"]


class _Timeout(Exception):
    pass


def _alarm(*_):
    raise _Timeout


def patterns():
    from clusterdx import facts
    from clusterdx.facts.lazyre import LazyPattern

    # every module that reads input: the parsers, the sniffers, the splitters, the post and prose
    # readers (a pattern outside this walk is what the hostile bench found quadratic)
    mods = [m.name for m in pkgutil.walk_packages(facts.__path__, "clusterdx.facts.")]
    for name in mods:
        mod = importlib.import_module(name)
        for attr, value in vars(mod).items():
            if isinstance(value, LazyPattern):  # compiled on first use (clusterdx.facts.lazyre)
                value = value.compiled
            if isinstance(value, re.Pattern) and isinstance(value.pattern, str):
                yield f"{name.rsplit('.', 1)[-1]}.{attr}", value


def timed(rx: re.Pattern, text: str, limit: float) -> float:
    t0 = time.perf_counter()
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        rx.search(text)
        rx.match(text)
    except _Timeout:
        return limit
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    args = ap.parse_args()
    signal.signal(signal.SIGALRM, _alarm)
    bad = 0
    for name, rx in patterns():
        worst = (0.0, "")
        for alpha, tail in itertools.product(ALPHABETS, TAILS):
            reps = max(1, args.n // len(alpha))
            tiny = timed(rx, alpha * max(1, 64 // len(alpha)) + tail, 1.0)
            if tiny > 0.1:  # exponential: tens of bytes already take long
                worst = max(worst, (100 + tiny, f"{alpha!r}*{64 // len(alpha)}+{tail!r} (exponential)"))
                continue
            small = timed(rx, alpha * (reps // 2) + tail, 2.0)
            if small >= 1.9:
                worst = max(worst, (small, f"{alpha!r}*{reps // 2}+{tail!r} (timed out)"))
                continue
            if small < 0.002:
                continue
            big = timed(rx, alpha * reps + tail, 4.0)
            if big > 0.02 and big > 3 * small and big > worst[0]:
                worst = (big, f"{alpha!r}*{reps}+{tail!r}")
        if worst[0]:
            bad += 1
            print(f"{name:40s} {worst[0]:7.3f}s  {worst[1]}", flush=True)
    print(f"{bad} super-linear patterns")


if __name__ == "__main__":
    main()
