"""prose_cpu - how much CPU the user says each worker process uses (part of the prose reader)

"each DataLoader worker was using more than 140% CPU", "every worker sits at 300% in htop", "the
loader processes show ~800% CPU each": top and htop count one busy core as 100%, so a worker above
that runs several threads of its own (an OpenMP/MKL/BLAS pool per worker, the usual reason workers
oversubscribe the cores they share with the ranks). The figure must sit in a sentence that names a
worker, loader or helper process (not the rank's main process, not the GPU) and say CPU, htop or
top; it becomes a ``reported.metric`` ``worker_cpu_pct`` (the percentage as written).

The host CPU a user names ("CPU: AMD EPYC 7K62", "2x EPYC 7352", "Xeon Platinum 8480+", "Ryzen
Threadripper 9970X", "Ryzen 9 9950X3D") becomes a ``reported.inventory`` of item ``cpu`` (``model``
as written, ``form`` the vendor); so does a workstation board named by its socket's chipset (WRX80,
WRX90, TRX40, TRX50 take only Threadripper CPUs), whose model is then ``Threadripper`` with the
board. A sentence
saying peer-to-peer traffic between the GPUs is slow ("Why is p2p performance so slow?", "GPU-to-GPU
bandwidth is very low") a ``reported.symptom`` ``low-bandwidth`` of one machine (P2P never leaves the
node; a sentence placing the traffic across nodes or on the network is left out).

A CPU-side stage of the step said to get slower in each process once several run (one per GPU):
"the 'sample' / slice stage of every step gets worse in each DDP process compared with the single-GPU
run", "with 4 ranks the collate step takes three times as long per process". The stage must be one the
CPU runs (sampling, slicing, data loading, preprocessing, augmentation, decoding, tokenizing, collating),
the sentence must say it got slower and place it in each process or against a single-GPU run; a
sentence that names the GPU's part (forward, backward, all-reduce) as the slow one is left out. It
becomes a ``reported.symptom`` ``cpu-stage-slower-per-process`` of one machine: processes that share
the cores, each with a thread pool sized to all of them, is the usual reason.

Sample input::

    When I looked at the processes with `htop`, each DataLoader worker was using more than 140% CPU

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> from clusterdx.facts.parsers import prose
    >>> doc = Document.from_text(SAMPLE); ctx = ParseContext(doc, "prose"); prose.parse(doc, ctx)
    >>> [(m.metric, m.value) for m in ctx.facts if m.fact_type == "reported.metric"]
    [('worker_cpu_pct', 140.0)]
"""

from __future__ import annotations

import re
from typing import Any

from clusterdx.facts import lazyre


SAMPLE = "When I looked at the processes with `htop`, each DataLoader worker was using more than 140% CPU\n"

_WORKER = lazyre.compile(r"\b(?:(?:data\s?loader|loader|dataset|preprocessing|helper|data)\s{0,2}workers?|workers?\s{1,2}process\w{0,2}|"
                     r"workers?|loader processes)\b", re.I)
_PCT_CPU = lazyre.compile(r"(?<![\w.])(\d{3,4})\s{0,2}%\s{0,2}(?:of\s{1,2}(?:a\s{1,2})?)?(?:CPU|cpu\b)?", re.I)
_CPU_CONTEXT = lazyre.compile(r"\b(?:CPU|htop|top|cores?)\b", re.I)
#: "150% faster", "200% more throughput": a change, not a load
_CHANGE_AFTER = lazyre.compile(r"^\s{0,2}(?:faster|slower|more|less|higher|lower|better|worse|increase\w{0,2}|decrease\w{0,2}|"
                           r"improve\w{0,4}|speed\w{0,3}|of the)\b", re.I)
_NOT_WORKER_PCT = lazyre.compile(r"\b(?:GPU|util\w{0,8}|memory|RAM|faster|slower|speed\w{0,3}|increase\w?|more data)\b[^%]{0,20}$", re.I)


_CPU_MODEL = lazyre.compile(r"\b(?:AMD\s{1,2})?(EPYC)(?:\(TM\)|™)?\s{1,2}(\d{4}[A-Z0-9]{0,3}|[0-9][A-Z0-9]{3})\b"
                        r"|\b(?:Intel(?:\(R\))?\s{1,2})?(Xeon)(?:\(R\))?\s{1,2}(?:(?:Platinum|Gold|Silver|CPU|Max|w\d-)\s{0,2})?"
                        r"([0-9]{4}[A-Z]{0,2}\+?|E5-\d{4}\s?v\d)(?!\w)", re.I)
#: AMD's desktop and workstation CPUs: "Ryzen Threadripper PRO 7985WX", "Threadripper 9970X", "Ryzen 9 9950X3D"
_AMD_DESKTOP = lazyre.compile(r"\b(?:AMD\s{1,2})?(?:Ryzen(?:\(TM\)|™)?\s{1,2})?(Threadripper)(?:\s{1,2}PRO)?\s{1,2}(\d{4}[A-Z0-9]{0,4})\b"
                          r"|\b(?:AMD\s{1,2})?(Ryzen)(?:\(TM\)|™)?\s{1,2}(?:[3579]\s{1,2}(?:PRO\s{1,2})?)?(\d{4}[A-Z0-9]{0,4})\b", re.I)
#: the chipsets of AMD's Threadripper sockets (sTRX4, sWRX8, sTR5): a board named by one carries a
#: Threadripper ("a WRX90 board", "ASUS Pro WS WRX90E-SAGE", "TRX50 AERO D")
_AMD_BOARD = lazyre.compile(r"\b(WRX80|WRX90|TRX40|TRX50)(?:E|[\s-]{0,2}(?:SAGE|AERO|CREATOR|PRO|AI|D))?\b", re.I)
#: GPU peer traffic: "p2p", "peer-to-peer", "GPU-to-GPU" (GPU-GPU, GPU to GPU)
_PEER = r"(?:p2p|peer[- ]to[- ]peer|GPU[\s-]?(?:to|<->|-)[\s-]?GPU)"
_P2P_SLOW = lazyre.compile(rf"\b{_PEER}\b(?:\s{{1,3}}\w+){{0,3}}?\s{{1,3}}(?:is\s{{1,3}}|are\s{{1,3}}|was\s{{1,3}}|were\s{{1,3}}|so\s{{1,3}}|very\s{{1,3}}|"
                       rf"too\s{{1,3}}|really\s{{1,3}}|much\s{{1,3}}){{0,2}}(?:slow|slower|low|poor|bad)\b"
                       rf"|\b(?:slow|low|poor)\s{{1,3}}{_PEER}\b", re.I)
#: GPU-to-GPU traffic said to cross machines is not peer traffic of one node
_ACROSS_NODES = lazyre.compile(r"\b(?:across|between|over)\s{1,3}(?:the\s{1,3}|two\s{1,3}|\d+\s{1,3})?(?:nodes|servers|machines|hosts)\b"
                           r"|\binter[- ]?node\b|\bmulti[- ]?node\b|\b(?:RDMA|network|fabric|InfiniBand|RoCE)\b", re.I)


#: a stage of the step the CPU runs
_CPU_STAGE = lazyre.compile(r"\b(?:sampl(?:e|es|ing|er)|slic(?:e|es|ing)|data[\s-]?load\w{0,4}|dataloader|preprocess\w{0,4}|pre-process\w{0,4}|"
                        r"augment\w{0,6}|decod(?:e|es|ing)|tokeniz\w{0,5}|collat(?:e|es|ing|ion))\b", re.I)
#: it got slower
_WORSE = lazyre.compile(r"\b(?:gets?\s{1,3}(?:much\s{1,3}|a\s{1,3}lot\s{1,3})?(?:worse|slower)|got\s{1,3}(?:much\s{1,3})?(?:worse|slower)|getting\s{1,3}worse|"
                    r"(?:is|are|was|were|becomes?|became)\s{1,3}(?:much\s{1,3}|far\s{1,3}|a\s{1,3}lot\s{1,3}|\d{1,3}x\s{1,3})?(?:slower|worse)|"
                    r"slows?\s{1,3}down|takes?\s{1,3}(?:\w+\s{1,3}){0,3}?(?:longer|as\s{1,3}long)|performs?\s{1,3}(?:bad|badly|worse|poorly))\b", re.I)
#: in each of several processes, or against the one-GPU run
_PER_PROCESS = lazyre.compile(r"\b(?:(?:each|every|per)\s{1,3}(?:DDP\s{1,3}|trainer\s{1,3}|training\s{1,3}|worker\s{1,3})?(?:process|rank|trainer)|"
                          r"(?:than|with|against|compared\s{1,3}(?:with|to))\s{1,3}(?:the\s{1,3})?(?:single|one|1)[\s-](?:GPU|process)|"
                          r"with\s{1,3}(?:\d{1,2}|two|four|eight)\s{1,3}(?:DDP\s{1,3})?(?:ranks|processes|trainers))\b", re.I)
#: the GPU's part named as the slow one: "the backward gets slower in each process"
_GPU_STAGE_SLOW = lazyre.compile(r"\b(?:forward|backward|all[\s_-]?reduce|NCCL|GPU\s{1,3}(?:time|compute|kernels?))\b\W{0,3}(?:\w+\W{1,3}){0,3}?"
                             r"(?:gets?\s{1,3}(?:worse|slower)|(?:is|are|was|were)\s{1,3}(?:\w+\s{1,3})?slower|takes?\s{1,3}longer)", re.I)
_NEG = lazyre.compile(r"\b(?:not|no|never|isn't|aren't|wasn't|doesn't|didn't)\s{1,3}(?:\w+\s{1,3}){0,2}$", re.I)


#: the host's NUMA domains stated beside its CPU: "8 NUMA domains", "4 NUMA nodes"; not a node's
#: number ("NUMA node 3") nor a comparison with another host ("than the 2 NUMA node cluster")
_NUMA_COUNT = lazyre.compile(r"(?<![\w.])(\d{1,2})\s{0,2}(?:\*\*)?\s{0,2}NUMA[\s-]{1,3}(?:domains|nodes|regions)\b", re.I)


def _cpu_stage_slower(text: str) -> bool:
    stage = _CPU_STAGE.search(text)
    worse = _WORSE.search(text, stage.end()) if stage else None
    return bool(stage and worse and worse.start() - stage.end() < 120 and _PER_PROCESS.search(text)
                and not _NEG.search(text[:worse.start()]) and not _GPU_STAGE_SLOW.search(text))


def sentence(reader: Any, index: int, text: str) -> None:
    from clusterdx.facts.model.reported import ReportedInventory, ReportedMetric, ReportedSymptom

    numa = _NUMA_COUNT.search(text)
    for c in _CPU_MODEL.finditer(text):
        family = c.group(1) or c.group(3)
        model = f"{'EPYC' if c.group(1) else 'Xeon'} {(c.group(2) or c.group(4)).upper()}"
        reader.add(ReportedInventory, index, ("inv", "cpu", model), item="cpu", model=model,
                   form="AMD" if family.upper() == "EPYC" else "Intel", text=" ".join(text.split())[:200],
                   numa_nodes=int(numa.group(1)) if numa else None)
    for c in _AMD_DESKTOP.finditer(text):
        model = f"{(c.group(1) or c.group(3)).capitalize()} {(c.group(2) or c.group(4)).upper()}"
        reader.add(ReportedInventory, index, ("inv", "cpu", model), item="cpu", model=model, form="AMD",
                   text=" ".join(text.split())[:200])
    for c in _AMD_BOARD.finditer(text):
        model = f"Threadripper ({c.group(1).upper()} board)"
        reader.add(ReportedInventory, index, ("inv", "cpu", model), item="cpu", model=model, form="AMD",
                   text=" ".join(text.split())[:200])
    p2p = _P2P_SLOW.search(text)
    if p2p and not re.search(r"\b(?:not|no|isn't|never)\s{1,3}(?:\w+\s{1,3}){0,2}$", text[:p2p.start()], re.I) \
            and not re.search(r"\b(?:not|no|isn't|never|n't)\b", p2p.group(0), re.I) \
            and not _ACROSS_NODES.search(text):
        reader.add(ReportedSymptom, index, ("symptom", "low-bandwidth", "single-node"), kind="low-bandwidth",
                   where="single-node", text=" ".join(text.split())[:200])

    if _cpu_stage_slower(text):
        reader.add(ReportedSymptom, index, ("symptom", "cpu-stage-slower-per-process", "single-node"),
                   kind="cpu-stage-slower-per-process", where="single-node", text=" ".join(text.split())[:200])

    w = _WORKER.search(text)
    if w is None or not _CPU_CONTEXT.search(text):
        return
    for m in _PCT_CPU.finditer(text):
        value = float(m.group(1))
        if not 100 < value <= 12800 or _NOT_WORKER_PCT.search(text[max(0, m.start() - 30):m.start()]) \
                or _CHANGE_AFTER.search(text[m.end():m.end() + 30]):
            continue
        reader.add(ReportedMetric, index, ("worker_cpu_pct", value), metric="worker_cpu_pct", value=value, unit="%",
                   value_norm=value, label="CPU per worker process", text=" ".join(text.split())[:200])
        return
