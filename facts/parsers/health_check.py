"""dcgmi diag -r N / node health-check scripts - Command

Two kinds of "is this node healthy?" output, one ``health.finding`` per check reported:

* **DCGM diagnostics** (``dcgmi diag -r 1|2|3|4``): a box table ``| Diagnostic | Result |`` with
  category rows (``-----  Deployment  ----``, ``Integration``, ``Hardware``, ``Stress``), one row
  per test with ``Pass``, ``Fail``, ``Warn`` or ``Skip``, optionally ``- All``, ``- GPU: 3`` or
  ``- GPUs: 0, 1, 2``, and ``Warning`` / ``Info`` rows (wrapped over several lines) that explain the
  test above them, usually starting ``GPU 3:``. A test failing on some GPUs gets one finding per
  named GPU; ``Metadata`` rows (versions) are not findings. A row whose first cell is empty
  continues the test above it (``Pass - GPUs: 0, 1`` then ``Fail - GPU: 3``).
* **Health-check scripts** (NVIDIA, Azure HPC ``aznhc`` / LBNL NHC, GCP, site scripts): lines such
  as ``PASS: check_gpu_count: 8 GPUs``, ``[FAIL] check_ib_link: mlx5_4 port 1 Down``,
  ``Check GPU PCIe link width ........ : FAILED``, ``ERROR:  nhc:  Health check failed:
  check_gpu_bw: GPU 3 ...`` (and NHC's ``Health check passed:``). Other lines (banners, timestamps, prose) are ignored; a line a check
  name cannot be read from is taken whole as the check.

``status`` is ``pass``, ``fail``, ``warn`` or ``skip``; ``gpu`` and ``device`` are read from the
text (``GPU 3``, ``mlx5_4``) where it names them.

Sample input (``dcgmi diag -r 2``, trimmed)::

    +---------------------------+------------------------------------------------+
    | Diagnostic                | Result                                         |
    +===========================+================================================+
    |-----  Deployment  --------+------------------------------------------------|
    | Denylist                  | Pass                                           |
    +-----  Integration  -------+------------------------------------------------+
    | PCIe                      | Fail - GPU: 3                                  |
    | Warning                   | GPU 3: Error using CUDA API cudaMemcpy PCIe    |
    |                           | bandwidth below the minimum                    |
    +---------------------------+------------------------------------------------+

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "dcgmi-diag"); parse_dcgmi(doc, ctx)
    >>> [(f.check, f.status, f.gpu, f.category, f.source.line) for f in ctx.facts]
    [('denylist', 'pass', None, 'Deployment', 5), ('pcie', 'fail', 3, 'Integration', 7)]
    >>> ctx.facts[1].detail
    'GPU 3: Error using CUDA API cudaMemcpy PCIe bandwidth below the minimum'
    >>> doc = Document.from_text("PASS: check_gpu_count: 8 GPUs\\n[FAIL] check_ib_link: mlx5_4 port 1 Down\\n")
    >>> ctx = ParseContext(doc, "health-check"); parse_script(doc, ctx)
    >>> [(f.check, f.status, f.device) for f in ctx.facts]
    [('check_gpu_count', 'pass', ''), ('check_ib_link', 'fail', 'mlx5_4')]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.health import HealthFinding


SAMPLE = """\
+---------------------------+------------------------------------------------+
| Diagnostic                | Result                                         |
+===========================+================================================+
|-----  Deployment  --------+------------------------------------------------|
| Denylist                  | Pass                                           |
+-----  Integration  -------+------------------------------------------------+
| PCIe                      | Fail - GPU: 3                                  |
| Warning                   | GPU 3: Error using CUDA API cudaMemcpy PCIe    |
|                           | bandwidth below the minimum                    |
+---------------------------+------------------------------------------------+
"""

_STATUS = {"pass": "pass", "passed": "pass", "ok": "pass", "success": "pass", "healthy": "pass",
           "fail": "fail", "failed": "fail", "failure": "fail", "error": "fail", "unhealthy": "fail",
           "warn": "warn", "warning": "warn", "skip": "skip", "skipped": "skip", "n/a": "skip",
           "not run": "skip"}
_GPU = lazyre.compile(r"\bGPU\s*#?\s*(\d{1,3})\b", re.I)
_DEVICE = lazyre.compile(r"\b(mlx5_(?:ib)?\d{1,3}|ib[sp]?\d{1,3}[a-z0-9]*|bond\d{1,2}|eth\d{1,3}|ens\w{1,20}|nvme\d{1,3}n?\d{0,3}"
                     r"|0000:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7])\b")


@dataclass
class _Finding:
    check: str
    status: str
    start: int
    end: int
    detail: str = ""
    gpu: int | None = None
    category: str = ""


def _device(text: str) -> str:
    m = _DEVICE.search(text)
    return m.group(1) if m else ""


# -- dcgmi diag -----------------------------------------------------------------------------------

_ROW = lazyre.compile(r"^\s*\|\s?([^|]*?)\s*\|\s?(.*?)\s*\|\s*$")
_CATEGORY = lazyre.compile(r"^\s*[+|]-{2,}\s+([A-Za-z][\w ]*?)\s+-{2,}\+")
_RESULT = lazyre.compile(r"^(Pass|Fail|Warn|Skip)\b\s*(?:-\s*(.*))?$", re.I)
_GPUS = lazyre.compile(r"^GPUs?\s*:\s*([\d,\s]+)$", re.I)


def _dcgmi_findings(doc: Document, ctx: ParseContext | None) -> list[_Finding]:
    out: list[_Finding] = []
    category = ""
    last_check = ""
    note_for: _Finding | None = None
    note_line = -1
    for i, line in enumerate(doc.lines):
        c = _CATEGORY.match(line)
        if c:
            category = c.group(1).strip()
            note_for = None
            continue
        m = _ROW.match(line)
        if not m:
            continue
        left, right = m.group(1).strip(), m.group(2).strip()
        if left in ("Diagnostic", "Test Name") and right in ("Result", "Results"):
            continue
        if category.lower() == "metadata":
            continue
        if left.lower() in ("warning", "info", "error"):
            targets = [f for f in out[::-1] if f.check == last_check]
            g = _GPU.match(right)
            pick = next((f for f in targets if g and f.gpu == int(g.group(1))), None)
            pick = pick or next((f for f in targets if f.status != "pass"), targets[0] if targets else None)
            if pick is not None:
                pick.detail = (pick.detail + " " + right).strip() if pick.detail else right
                pick.end = i
                note_for, note_line = pick, i
            continue
        if not left and note_for is not None and note_line == i - 1 and not _RESULT.match(right):
            note_for.detail = (note_for.detail + " " + right).strip()
            note_for.end = note_line = i
            continue
        r = _RESULT.match(right)
        if not r:
            if left and right and ctx is not None:
                ctx.warn(i, f"dcgmi row without a Pass/Fail/Warn/Skip result: {line.strip()[:100]!r}")
            continue
        check = left.lower() if left else last_check
        if not check:
            continue
        last_check = check
        note_for = None
        status = _STATUS[r.group(1).lower()]
        scope = (r.group(2) or "").strip()
        gm = _GPUS.match(scope)
        if gm and status != "pass":
            for g in re.findall(r"\d+", gm.group(1)):
                out.append(_Finding(check, status, i, i, gpu=int(g), category=category))
        else:
            out.append(_Finding(check, status, i, i, detail="" if scope.lower() == "all" else scope,
                                category=category))
    return out


def parse_dcgmi(doc: Document, ctx: ParseContext) -> None:
    findings = _dcgmi_findings(doc, ctx)
    if not findings:
        raise NotApplicable("no dcgmi diag result rows")
    for f in findings:
        if f.gpu is None and f.status != "pass":
            named = set(_GPU.findall(f.detail))
            f.gpu = int(named.pop()) if len(named) == 1 else None
        ctx.add(HealthFinding, f.start, f.end, check=f.check, status=f.status, detail=f.detail, gpu=f.gpu,
                device=_device(f.detail), tool="dcgmi diag", category=f.category)


def sniff_dcgmi(doc: Document) -> float:
    head = doc.lines[:400]
    rows = sum(1 for ln in head if (m := _ROW.match(ln)) and _RESULT.match(m.group(2).strip()))
    header = any(re.match(r"^\s*\|\s*Diagnostic\s*\|\s*Result\s*\|", ln) for ln in head[:40])
    if rows >= 1 and header:
        return 0.95
    return 0.6 if rows >= 3 else 0.0


# -- health-check scripts -------------------------------------------------------------------------

_S = r"(PASS(?:ED)?|FAIL(?:ED|URE)?|ERROR|WARN(?:ING)?|SKIP(?:PED)?|OK)"
#: ``PASS: text`` / ``[FAIL] text`` / ``FAIL - text`` (status first)
_LEAD = lazyre.compile(r"^\s*+(?:\[[\d:. T-]{8,32}\]\s*)?[\[(]?\s*" + _S + r"\s*[\])]?\s*(?:[:\-]\s*|\s+)(\S.*)$")
#: ``Check X ....... : PASSED`` / ``X: FAIL`` / ``X ... OK`` (status last); a run of dots is taken
#: whole, from its first dot, or a long one costs time squared
_TRAIL = lazyre.compile(r"^\s*+(?:\[[\d:. T-]{8,32}\]\s*)?(?:Check(?:ing)?\s+)?(\S.*?)\s*(?:(?<!\.)\.{3,}+|:|\s-{1,3}|\s\[)\s*"
                    + _S + r"\s*\]?\s*(?:\((.*)\))?\s*$", re.I)
_STATUS_WORD = lazyre.compile(r"\b(?:PASS(?:ED)?|FAIL(?:ED)?)\b|Health check (?:passed|failed)")
_NHC = lazyre.compile(r"Health check (passed|failed):\s+(\S+?)(?::\s*|\s+|$)(.*)$", re.I)
_CHECK_NAME = lazyre.compile(r"^([A-Za-z_][\w.-]{0,60}|[A-Za-z][\w ./-]{0,40}?)\s*:\s+(.*)$")


def _script_finding(line: str) -> tuple[str, str, str] | None:
    """(check, status, detail) of one health-check line, or None."""
    s = line.strip()
    if not s or len(s) > 2000:
        return None
    n = _NHC.search(s)
    if n:
        return n.group(2).lower(), _norm(n.group(1)), n.group(3).strip()
    m = _LEAD.match(s)
    if m and m.group(1).isupper():
        rest = m.group(2).strip()
        c = _CHECK_NAME.match(rest)
        if c:
            return c.group(1).strip().lower(), _norm(m.group(1)), c.group(2).strip()
        return rest.lower()[:120], _norm(m.group(1)), ""
    t = _TRAIL.match(s)
    if t:
        check = t.group(1).strip().rstrip(".: ").lower()
        if not check or check.startswith(("#", "|")) or re.fullmatch(r"[\d\s.,:/-]+", check):
            return None
        return check[:120], _norm(t.group(2)), (t.group(3) or "").strip()
    return None


def _norm(word: str) -> str:
    w = word.lower()
    return _STATUS.get(w) or _STATUS.get(w.rstrip("d").rstrip("e")) or ("fail" if w.startswith("fail") else "warn")


def parse_script(doc: Document, ctx: ParseContext) -> None:
    for i, line in enumerate(doc.lines):
        f = _script_finding(line)
        if f is None:
            continue
        check, status, detail = f
        g = _GPU.search(detail) or _GPU.search(check)
        ctx.add(HealthFinding, i, check=check, status=status, detail=detail,
                gpu=int(g.group(1)) if g else None, device=_device(detail) or _device(check), tool="script")
    if not ctx.facts:
        raise NotApplicable("no PASS/FAIL health-check lines")


def sniff_script(doc: Document) -> float:
    lines = [ln for ln in doc.lines[:300] if ln.strip()]
    if not lines:
        return 0.0
    # a health check says PASS or FAIL somewhere: every input is offered to this sniffer, and
    # one search over the head spares the per-line reading of the many that do not
    if not _STATUS_WORD.search("\n".join(lines)):
        return 0.0
    hits = sum(1 for ln in lines if _script_finding(ln))
    if hits < 2:
        return 0.0
    ratio = hits / len(lines)
    return min(0.9, 0.3 + 0.6 * ratio) if ratio >= 0.3 else 0.2


FORMATS = [
    Format(
        name="dcgmi-diag",
        command="dcgmi diag -r 2",
        facts=("health.finding",),
        sniff=sniff_dcgmi,
        parse=parse_dcgmi,
        command_patterns=(r"\bdcgmi\s+diag\b",),
        description="dcgmi diag -r 1..4 result table: Pass/Fail/Warn/Skip per test and GPU, with the warnings",
    ),
    Format(
        name="health-check",
        command="<node health-check script>",
        facts=("health.finding",),
        sniff=sniff_script,
        parse=parse_script,
        line_test=lambda line: "ealth check" in line and _NHC.search(line) is not None,
        command_patterns=(r"health[-_ ]?checks?\b", r"\b(?:az)?nhc\b", r"\bnode[-_]?check", r"\bgpu[-_]?check",
                          r"\bgpu-healthcheck\b"),
        description="node health-check script output (NVIDIA, Azure HPC / NHC, GCP, site scripts): "
                    "PASS:/FAIL: lines, 'Check ... : FAILED', 'Health check failed:'",
    ),
]
