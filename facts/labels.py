"""Labels printed before or in front of a command's output: loops and parallel shells.

Tickets paste the output of loops and fan-out tools, where a label says whose output follows:

- a loop that echoes a label before each run: ``for i in 0 1; do echo "== mlx5_$i"; ibstat
  mlx5_$i; done`` (the label lines are found from the ``echo`` in the command);
- ``head``/``tail`` of several files: ``==> /tmp/ibstat-node3.txt <==`` headers (``/sys`` and
  ``/proc`` paths are left alone: the sysfs parsers read those headers themselves);
- per-line prefixes of parallel shells: ``pdsh``/``clush`` (``node12: ...``), ``srun -l`` /
  ``srun --label`` (``3: ...``), ``mpirun --tag-output`` (``[1,3]<stdout>: ...``, also found
  without the command, the tag being unmistakable). A job's own logs (NCCL debug lines,
  nccl-tests, training steps) are left whole: their parsers read the rank tags themselves.
- per-line prefixes a framework puts on its workers' output, found without the command: Ray
  (``(RayTrainWorker pid=11904, ip=10.0.0.7) ...``, ``(pid=812) ...``, with the ``[repeated 3x
  across cluster]`` tail of its log deduplication) and torchrun (``[rank3]: ...``,
  ``[default3]: ...``). The rest of such a line is the tool's own (an NCCL line, a traceback),
  so the prefix is cut off in place (:func:`strip_worker_prefixes`) and the lines stay one
  segment: one job's workers, read job-wide by the tool's parser, with the same line numbers.

:func:`split_labels` cuts such a segment into one segment per label, each carrying the label and
what it names (``label_kind``: ``device``, ``node``, ``rank``, ``pid``, ``file`` or ``label``);
prefixed lines are gathered per label with their original line numbers (``line_map``). A loop
that echoes a sysfs directory and then cats a file below it (``for d in
/sys/class/infiniband/*; do echo $d; cat $d/ports/1/rate; done``) keeps one segment, its label
lines rewritten in place as the ``==> <dir>/ports/1/rate <==`` headers the sysfs parsers read.

``grep -H``/``grep -r`` output (``path:value``) is not split: the path is part of each line and
the sysfs parsers take it from there.

Examples:

    >>> from clusterdx.facts.transcript import Segment
    >>> seg = Segment("for i in 0 1; do echo \\"== mlx5_$i\\"; ibstat mlx5_$i; done",
    ...               ["== mlx5_0", "CA 'mlx5_0'", "== mlx5_1", "CA 'mlx5_1'"], 5)
    >>> [(s.label, s.label_kind, s.lines, s.first_line) for s in split_labels(seg)]
    [('mlx5_0', 'device', ["CA 'mlx5_0'"], 6), ('mlx5_1', 'device', ["CA 'mlx5_1'"], 8)]
    >>> seg = Segment("pdsh -w gpu[1-2] cat /proc/cmdline", ["gpu1: ro quiet", "gpu2: ro iommu=pt"], 2)
    >>> [(s.label, s.label_kind, s.lines, s.line_map) for s in split_labels(seg)]
    [('gpu1', 'node', ['ro quiet'], [2]), ('gpu2', 'node', ['ro iommu=pt'], [3])]
"""

from __future__ import annotations

import re
import shlex
from dataclasses import replace
from typing import TYPE_CHECKING

from clusterdx.facts import lazyre


if TYPE_CHECKING:
    from clusterdx.facts.transcript import Segment

_MAX_LINE = 4096
_FILE_HEAD = lazyre.compile(r"^==> (.{1,1024}?) <==$")
_MPI_TAG = lazyre.compile(r"^\[(\d{1,9}),(\d{1,9})\]<(?:stdout|stderr)>:\s?(.*)$")
_PDSH = lazyre.compile(r"^([A-Za-z0-9][\w.-]{0,252}): ?(.*)$")
_SRUN = lazyre.compile(r"^\s{0,8}(\d{1,7}): ?(.*)$")
_PDSH_CMD = lazyre.compile(r"(?:^|[\s;|&(])(?:pdsh|clush|pssh|parallel-ssh)\b")
_SRUN_LABEL = lazyre.compile(r"(?:^|[\s;|&(])srun\b[^|;&]{0,2000}?\s(?:-l\b|--label\b|-[A-Za-z]{0,8}l[A-Za-z]{0,8}\b)")
_MPI_CMD = lazyre.compile(r"--tag-output|-tag-output")
_FOR = lazyre.compile(r"\bfor\s+([A-Za-z_]\w*)\s+in\s+(.*?);\s*do\s+(.*?);?\s*done\b", re.S)
_VAR = lazyre.compile(r"\$\{?([A-Za-z_]\w*)\}?|\$\((?:[^()]{0,200})\)")
#: device names a label can carry (mlx5_0, ibp23s0, ib0, eth2, nvme0, GPU 3, 0000:5d:00.0)
_DEVICE = lazyre.compile(
    r"\b(mlx[45]_\d{1,3}|ibp\w{1,20}|ib\d{1,3}|irdma\d{1,3}|rdmap\w{1,20}|efa_\d{1,3}|bnxt_re\d{1,3}"
    r"|[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\b")
_JOB_LOG = lazyre.compile(r"NCCL (?:INFO|WARN)|# nccl-tests|#\s+Rank\s+\d|_perf\b|\biteration\s+\d+/|"
                      r"train_step_timing|global_step")
#: Ray's worker prefix: ``(<actor or task name> pid=N[, ip=ADDR])``; its dedup tail
_RAY_PREFIX = lazyre.compile(r"^\((?:[\w.:<>-]{1,120} )?pid=(\d{1,9})(?:, ip=[\w.:-]{1,64})?\) ?(.*)$")
_RAY_REPEATED = lazyre.compile(r"\s+\[repeated \d{1,9}x across cluster\]\s*$")
#: torchrun's per-rank prefix (``--tee``/``--local-ranks-filter``; the role name, ``default``
#: unless set, before the local rank in older releases)
_TORCHRUN_PREFIX = lazyre.compile(r"^\[(?:rank|default)(\d{1,7})\]: ?(.*)$")
_RANK = lazyre.compile(r"\brank\b", re.I)
_PID = lazyre.compile(r"\bpid\b", re.I)
_NODE = lazyre.compile(r"\b(?:host(?:name)?|node)\b|\$\(hostname", re.I)


def split_labels(seg: "Segment") -> list["Segment"]:
    """``seg`` cut per label (see the module docstring), or ``[seg]`` when it holds none."""
    if not seg.lines or len(seg.lines) > 2_000_000:
        return [seg]
    seg = strip_worker_prefixes(seg)
    lines = seg.lines
    cmd = seg.command or ""
    if cmd and _PDSH_CMD.search(cmd):
        out = _by_prefix(seg, _PDSH, "node")
        if out:
            return out
    # one job's ranks: NCCL debug logs, nccl-tests and training logs read the tags themselves
    # (a job-wide view: which ranks ran, bandwidth per rank); other tools' output is cut per rank
    job_log = any(_JOB_LOG.search(ln[:_MAX_LINE]) for ln in lines[:400])
    if cmd and not job_log and _SRUN_LABEL.search(cmd):
        out = _by_prefix(seg, _SRUN, "rank")
        if out:
            return out
    if not job_log and (_MPI_CMD.search(cmd) or _mostly(lines, _MPI_TAG)):
        out = _by_prefix(seg, _MPI_TAG, "rank", group=2, rest=3)
        if out:
            return out
    if cmd and "echo" in cmd and len(cmd) <= 4000 and (loop := _FOR.search(cmd)):
        out = _by_echo(seg, loop)
        if out:
            return out
    return _by_file_head(seg)


def strip_worker_prefixes(seg: "Segment") -> "Segment":
    """``seg`` with Ray's and torchrun's per-line worker prefixes cut off (see the module
    docstring); ``seg`` itself when no line carries one.

    Unprefixed lines (the driver's own output between the workers') are kept as they are. When
    every prefixed line names the same worker, the segment is labelled with it (``pid`` or
    ``rank``).

    >>> from clusterdx.facts.transcript import Segment
    >>> seg = Segment(None, ["(RayTrainWorker pid=11, ip=10.0.0.7) h:11:12 [0] NCCL INFO x [repeated 3x across cluster]",
    ...                      "driver line"], 4)
    >>> s = strip_worker_prefixes(seg)
    >>> (s.lines, s.label, s.label_kind, s.first_line)
    (['h:11:12 [0] NCCL INFO x', 'driver line'], '11', 'pid', 4)
    >>> strip_worker_prefixes(Segment(None, ["[rank3]: Traceback (most recent call last):"], 1)).lines
    ['Traceback (most recent call last):']
    >>> s = strip_worker_prefixes(Segment(None, ["(EngineCore_DP0 pid=1088) (RayWorkerWrapper pid=285, ip=10.0.0.2) h:285:285 [0] NCCL INFO y"], 1))
    >>> (s.lines, s.label)
    (['h:285:285 [0] NCCL INFO y'], '285')
    """
    out: list[str] | None = None
    workers: set[tuple[str, str]] = set()
    for k, ln in enumerate(seg.lines):
        head = ln[:2]
        if head not in ("(R", "(p", "[r", "[d") and not (head[:1] == "(" and " pid=" in ln[:160]):
            continue
        m = _RAY_PREFIX.match(ln[:_MAX_LINE])
        kind = "pid"
        if m:
            body = _RAY_REPEATED.sub("", m.group(2))
            # vLLM's engine process prints its Ray workers' lines under its own prefix:
            # "(EngineCore_DP0 pid=1088) (RayWorkerWrapper pid=285, ip=...) host:285:285 [0] NCCL ..."
            for _ in range(3):
                inner = _RAY_PREFIX.match(body) if body.startswith("(") else None
                if inner is None:
                    break
                m, body = inner, inner.group(2)
        else:
            m = _TORCHRUN_PREFIX.match(ln[:_MAX_LINE])
            if not m:
                continue
            kind, body = "rank", m.group(2)
        if out is None:
            out = list(seg.lines)
        out[k] = body + ln[_MAX_LINE:]
        workers.add((m.group(1), kind))
    if out is None:
        return seg
    if len(workers) == 1 and seg.label is None:
        (label, kind), = workers
        return replace(seg, lines=out, label=label, label_kind=kind)
    return replace(seg, lines=out)


def _mostly(lines: list[str], rx: re.Pattern[str]) -> bool:
    nonblank = [ln for ln in lines[:200] if ln.strip()]
    hits = sum(1 for ln in nonblank if rx.match(ln[:_MAX_LINE]))
    return len(nonblank) > 0 and hits >= 0.8 * len(nonblank)


def _by_prefix(seg: "Segment", rx: re.Pattern[str], kind: str, group: int = 1,
               rest: int = 2) -> list["Segment"]:
    groups: dict[str, tuple[list[str], list[int]]] = {}
    unmatched = 0
    for k, ln in enumerate(seg.lines):
        if not ln.strip():
            continue
        m = rx.match(ln[:_MAX_LINE])
        if not m:
            unmatched += 1
            continue
        body, nums = groups.setdefault(m.group(group), ([], []))
        body.append(m.group(rest))
        nums.append(seg.first_line + k)
    matched = sum(len(b) for b, _ in groups.values())
    if not groups or matched < 0.8 * (matched + unmatched):
        return []
    return [replace(seg, lines=body, first_line=nums[0], line_map=nums, label=label, label_kind=kind,
                    last_line=nums[-1])
            for label, (body, nums) in groups.items()]


def _by_echo(seg: "Segment", loop: re.Match[str]) -> list["Segment"]:
    var, words, body = loop.group(1), loop.group(2), loop.group(3)
    echo = re.search(r"\becho\s+(?:-[neE]+\s+)?(\"[^\"]{0,300}\"|'[^']{0,300}'|[^;|&]{1,300})", body)
    if not echo:
        return []
    try:
        template = " ".join(shlex.split(echo.group(1)))
    except ValueError:
        return []
    values = _loop_values(words)
    rx = _template_regex(template, var, values)
    if rx is None:
        return []
    labels: list[int] = []
    values_seen: list[str] = []
    for k, ln in enumerate(seg.lines):
        lm = rx.fullmatch(ln.strip()[:_MAX_LINE])
        if lm:
            labels.append(k)
            values_seen.append(lm.groupdict().get("v") or "")
    if not labels:
        return []
    texts = [seg.lines[k].strip() for k in labels]
    # echo $d; cat $d/ports/1/rate  ->  '==> /sys/class/infiniband/mlx5_0/ports/1/rate <==' headers
    cat = re.search(r"\bcat\s+\"?\$\{?" + re.escape(var) + r"\}?(/[\w./-]{1,200})\"?", body)
    if cat and template.strip() in (f"${var}", f"${{{var}}}") and all(t.startswith("/sys/") for t in texts):
        lines = list(seg.lines)
        for k, t in zip(labels, texts):
            lines[k] = f"==> {t.rstrip('/')}{cat.group(1)} <=="
        return [replace(seg, lines=lines)]
    out = []
    bounds = labels + [len(seg.lines)]
    for n, k in enumerate(labels):
        body_lines = seg.lines[k + 1:bounds[n + 1]]
        if not any(ln.strip() for ln in body_lines):
            continue
        label, kind = _label_of(texts[n], template, var, values_seen[n])
        out.append(replace(seg, lines=body_lines, first_line=seg.first_line + k + 1, label=label,
                           label_kind=kind, line_map=None,
                           last_line=seg.first_line + bounds[n + 1] - 1))
    return out if out else []


def _loop_values(words: str) -> list[str] | None:
    """The words a ``for`` loop runs over; None when computed (``$(seq 0 7)``, ``{0..7}``)."""
    if "$(" in words or "`" in words or ".." in words:
        return None
    try:
        return shlex.split(words)[:1000]
    except ValueError:
        return None


def _template_regex(template: str, var: str, values: list[str] | None) -> re.Pattern[str] | None:
    parts: list[str] = []
    pos = 0
    literal = 0
    named = False
    for m in _VAR.finditer(template):
        lit = template[pos:m.start()]
        literal += len(lit.strip())
        parts.append(re.escape(lit))
        body = "|".join(_glob(v) for v in values) if (m.group(1) == var and values) else r"\S{1,200}"
        # the first variable part is the label's value (the host of 'host $(hostname)')
        parts.append(f"(?P<v>{body})" if not named else f"(?:{body})")
        named = True
        pos = m.end()
    lit = template[pos:]
    literal += len(lit.strip())
    parts.append(re.escape(lit))
    if literal == 0 and not values:
        return None  # 'echo $x' over computed values: any line would be a label
    # a trailing blank escaped as '\\ ' would leave a lone backslash once stripped
    pattern = "".join(parts)
    while pattern.endswith("\\ "):
        pattern = pattern[:-2]
    try:
        return re.compile(pattern.strip())
    except re.error:
        return None


def _glob(word: str) -> str:
    out = []
    for ch in word:
        out.append("[^/\\s]*" if ch == "*" else "[^/\\s]" if ch == "?" else re.escape(ch))
    return "".join(out)


def _label_of(text: str, template: str, var: str, value: str = "") -> tuple[str, str]:
    dev = _DEVICE.search(text)
    if dev:
        return dev.group(1), "device"
    if _NODE.search(template) or re.fullmatch(r"(?:host|node|hostname|h|n)\w*", var, re.I):
        core = value or re.sub(r"^[=\s#:>-]+|[=\s#:<-]+$", "", text)
        return core or text, "node"
    kind = "rank" if (_RANK.search(template) or var.lower() == "rank") else \
        "pid" if (_PID.search(template) or var.lower() == "pid") else "label"
    core = (value if kind != "label" else "") or re.sub(r"^[=\s#:>-]+|[=\s#:<-]+$", "", text)
    return core or text, kind


def _by_file_head(seg: "Segment") -> list["Segment"]:
    heads = [k for k, ln in enumerate(seg.lines) if ln.startswith("==> ") and _FILE_HEAD.match(ln[:_MAX_LINE])]
    if not heads:
        return [seg]
    paths = [_FILE_HEAD.match(seg.lines[k]).group(1) for k in heads]  # type: ignore[union-attr]
    if any(p.startswith(("/sys/", "/proc/")) for p in paths):
        return [seg]  # the sysfs/procfs parsers read these headers themselves
    out = []
    if any(ln.strip() for ln in seg.lines[:heads[0]]):
        out.append(replace(seg, lines=seg.lines[:heads[0]], last_line=seg.first_line + heads[0] - 1))
    bounds = heads + [len(seg.lines)]
    for n, k in enumerate(heads):
        body = seg.lines[k + 1:bounds[n + 1]]
        if not any(ln.strip() for ln in body):
            continue
        out.append(replace(seg, lines=body, first_line=seg.first_line + k + 1, label=paths[n],
                           label_kind="file", line_map=None, last_line=seg.first_line + bounds[n + 1] - 1))
    return out or [seg]
