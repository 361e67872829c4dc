"""prose_peer - what goes wrong between the GPUs, and over a run, as a ticket says it (part of the prose reader)

Wrong data that only GPU-to-GPU traffic produces: "moving a tensor from one GPU to another results
in data corruption", "x.to(1) returns zeros on the other GPU", "NaN loss, only when I use multiple
GPUs", "garbage values after a peer-to-peer copy". A word for wrong values (NaN, inf, corrupt,
garbage, zeros, wrong or incorrect results, or "the data ... is all incorrect") must sit in the same sentence as a copy between GPUs
(from one GPU to another, GPU-to-GPU, peer-to-peer, P2P, between the GPUs or the other cards), or, for a value that
many bugs produce (NaN, inf, wrong results), next to a statement that only several GPUs show it
("only when I use multiple GPUs", "a single GPU works fine"); that statement may be the next
sentence of the same paragraph. It becomes a ``reported.symptom`` ``multi-gpu-wrong-data``.

The peer path switched off in words rather than a variable: "when disabling nv_peer_memory, it runs
fine", "after rmmod nvidia_peermem the crash is gone", "with GPUDirect RDMA disabled it works",
"turning off P2P fixes it". With a word saying it then works, it becomes a ``reported.workaround``
named ``nvidia_peermem`` (the module, under either of its names), ``gpudirect-rdma`` or ``p2p``
with value ``off``.

A parallel job whose shards never reach the other GPUs: "TP=4 loads all weights on GPU 0, GPUs 1-3
at 15 MiB", "instead of sharding, all the weights end up on GPU 0 while the other three cards stay
empty". One GPU holding everything, or the others staying empty (a few MiB), must sit in a sentence
that says the work is split across GPUs (tensor or model parallel, TP=N, sharding, DDP); a sentence
that names the user's own device placement (device_map, set_device, CUDA_VISIBLE_DEVICES, local_rank,
.to(...)) or a forgotten step is left out, being the usual cause of the same picture. It becomes a
``reported.symptom`` ``shards-on-one-gpu`` of one machine: the loaders hand each shard to its GPU by
a copy between GPUs or a collective, a peer-to-peer DMA that can land nowhere.

Throughput that falls as a run goes on: "getting slower and slower", "it deteriorates when the
steps increase", "slows down over time", "after a few hours the step time doubles", "progressively
slower". It becomes a ``reported.symptom`` ``slows-over-time``; a run that is simply slow, or slower
than another run, is not this.

Sample input::

    Moving a tensor from one GPU to another GPU results in data corruption.
    When disabling nv_peer_memory, nccl-tests runs fine.
    Tensorflow getting slower and slower.

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> from clusterdx.facts.parsers import prose
    >>> doc = Document.from_text(SAMPLE); ctx = ParseContext(doc, "prose"); prose.parse(doc, ctx)
    >>> sorted(s.kind for s in ctx.facts if s.fact_type == "reported.symptom")
    ['multi-gpu-wrong-data', 'slows-over-time']
    >>> [(w.name, w.value, w.effect) for w in ctx.facts if w.fact_type == "reported.workaround"]
    [('nvidia_peermem', 'off', 'fixes')]
"""

from __future__ import annotations

import re
from typing import Any

from clusterdx.facts import lazyre


SAMPLE = """\
Moving a tensor from one GPU to another GPU results in data corruption.
When disabling nv_peer_memory, nccl-tests runs fine.
Tensorflow getting slower and slower.
"""

#: values that only a broken copy gives (zeros, garbage, corruption) and values many bugs give
_CORRUPT = lazyre.compile(r"\b(?:(?:data\s{1,3})?corrupt\w{0,5}|garbage|all\s{1,3}zeros?|(?:returns?|returned|gives?|gave|yields?|gets?|got|contains?|filled\s{1,3}with|becomes?|shows?|arrives?\s{1,3}as|are|is|only)\s{1,3}(?:all\s{1,3})?zeros|"
                      # the contents wiped on the way: "the array is emptied to zeros", "zeroed out after the copy"
                      r"(?:emptied|wiped|reset|turned|changed)\s{1,3}(?:in)?to\s{1,3}(?:all\s{1,3})?zeros|zeroed\s{1,3}out)\b", re.I)
_BAD_VALUE = lazyre.compile(r"\b(?:NaNs?|infs?|(?:wrong|incorrect|invalid|bogus)\s{1,3}(?:\w+\s{1,3})?(?:values?|results?|data|outputs?|numbers?|answers?|sums?|gradients?)|"
                            # the same said the other way round: "the data between other GPUs is all incorrect"
                            r"(?:values?|results?|data|outputs?|numbers?|answers?|sums?|gradients?)\s{1,3}(?:[\w,-]{1,12}\s{1,3}){0,6}?"
                            r"(?:is|are|was|were|comes?\s{1,3}out|came\s{1,3}out|looks?|seems?)\s{1,3}(?:all\s{1,3}|completely\s{1,3}|totally\s{1,3}|always\s{1,3})?"
                            r"(?:wrong|incorrect|invalid|bogus))\b", re.I)
#: a copy or transfer between two GPUs
_BETWEEN_GPUS = lazyre.compile(r"\b(?:(?:from\s{1,3})?(?:one|a)\s{1,3}GPU\s{1,3}to\s{1,3}(?:another|the\s{1,3}other|a\s{1,3}second)|"
                           r"GPU[\s-]{0,3}to[\s-]{0,3}GPU|peer[\s-]to[\s-]peer|P2P|(?:between|across)\s{1,3}(?:the\s{1,3})?(?:two\s{1,3}|\d{1,2}\s{1,3}|other\s{1,3}|remaining\s{1,3}|different\s{1,3}|all\s{1,3}(?:the\s{1,3})?)?(?:GPUs|cards)|"
                           r"(?:to|on)\s{1,3}(?:the\s{1,3})?(?:other|another|second)\s{1,3}GPU|"
                           # a device or card the data is sent to; one the data merely sits "on" may be any
                           r"(?:sent|send|sending|transferred|transferring|moved|moving|copied|copying|straight)\s{1,3}to\s{1,3}(?:the\s{1,3})?(?:other|another|second)\s{1,3}(?:device|card)|"
                           # the GPUs as the PCI devices they are: "data corruption between PCI cards"
                           r"between\s{1,3}(?:the\s{1,3})?(?:two\s{1,3}|\d{1,2}\s{1,3})?PCI(?:e|-e|\s{1,3}express)?\s{1,3}(?:cards|devices)|cuda:\d\s{0,3}(?:to|->)\s{0,3}cuda:\d|"
                           r"(?:GPU|device)\s{0,2}\d{1,2}\s{1,3}(?:to|->|and)\s{1,3}(?:GPU|device)\s{0,2}\d{1,2}|cudaMemcpyPeer\w{0,5})\b", re.I)
#: the user's own code writing zeros: "zero_grad()", "torch.zeros(...)", "x.zero_()"
_OWN_ZEROS = lazyre.compile(r"\bzero_grad\b|\bzeros(?:_like)?\(|\.zero_\(", re.I)
#: only several GPUs show it: "only when I use multiple GPUs", "single GPU training is fine"
_ONLY_MULTI = lazyre.compile(r"\bonly\s{1,3}(?:\w+\s{1,3}){0,4}?(?:multi-?\s?GPU|multiple\s{1,3}GPUs|more\s{1,3}than\s{1,3}(?:one|1)\s{1,3}GPU|"
                         r"(?:several|two|2|\d{1,2})\s{1,3}(?:or\s{1,3}more\s{1,3})?GPUs)|"
                         r"\b(?:single|one|1)[\s-]GPU\s{1,3}(?:\w+\s{1,3}){0,3}?(?:works?|is\s{1,3}fine|runs?\s{1,3}fine|fine|correct\w{0,2})|"
                         r"\b(?:works?|fine|correct\w{0,2})\s{1,3}(?:\w+\s{1,3}){0,3}?(?:on|with)\s{1,3}(?:a\s{1,3})?(?:single|one|1)\s{1,3}GPU\b", re.I)
_NEGATED = lazyre.compile(r"\b(?:not|no|never|without|isn't|aren't|don't|doesn't|didn't|nor)\s{1,3}(?:\w+\s{1,3}){0,3}$", re.I)

#: the peer path switched off by name: the GPUDirect RDMA module, GDR, P2P
_PEER_OFF = lazyre.compile(
    r"\b(?:disabl\w{1,3}|unload\w{0,3}|remov\w{1,3}|rmmod|modprobe\s{1,3}-r|blacklist\w{0,3}|turn\w{0,3}\s{1,3}off|switch\w{0,3}\s{1,3}off|without)"
    r"\s{1,3}(?:the\s{1,3})?(nv_peer_mem(?:ory)?|nvidia[_-]peer_?mem(?:ory)?|GDR(?:DMA)?|GPU\s?Direct(?:\s{1,3}RDMA)?|P2P|peer[\s-]to[\s-]peer)\b"
    r"|\b(?:with\s{1,3})?(?:the\s{1,3})?(nv_peer_mem(?:ory)?|nvidia[_-]peer_?mem(?:ory)?|GDR(?:DMA)?|GPU\s?Direct(?:\s{1,3}RDMA)?|P2P|peer[\s-]to[\s-]peer)"
    r"\s{1,3}(?:module\s{1,3})?(?:is\s{1,3}|was\s{1,3})?(?:disabled|unloaded|removed|off|turned\s{1,3}off|switched\s{1,3}off)\b", re.I)
_THEN_WORKS = lazyre.compile(r"\b(?:works?|worked|working|runs?\s{1,3}(?:\w+\s{1,3})?fine|ran\s{1,3}fine|fine|fix\w{0,3}|solv\w{0,3}|resolv\w{0,3}|"
                         r"succeed\w{0,3}|pass(?:es|ed)|(?:is|are)\s{1,3}gone|go(?:es)?\s{1,3}away|went\s{1,3}away|no\s{1,3}longer|"
                         # "with P2P disabled the copies are 6x faster": switching the path off helps
                         r"(?:is|are|was|were|runs?|ran|gets?|got)\s{1,3}(?!(?:not|no|never|hardly|barely)\s)(?:\w+\s{1,3})?(?:much\s{1,3}|a\s{1,3}lot\s{1,3}|way\s{1,3}|far\s{1,3}|\d{1,3}x\s{1,3})?faster)\b", re.I)
_NOT_THEN = lazyre.compile(r"\b(?:(?:does|did|do)(?:n'?t|\s{1,3}not)|not|never|nothing)\s{1,3}(?:\w+\s{1,3}){0,2}(?:help\w{0,2}|work\w{0,3}|fix\w{0,3}|solv\w{0,3}|resolv\w{0,3}|change\w{0,1})\b", re.I)

#: one GPU holds everything: "all weights land on GPU 0", "all the memory is on cuda:0"
_ALL_ON_ONE = lazyre.compile(r"\ball\s{1,3}(?:of\s{1,3})?(?:the\s{1,3})?(?:model\s{1,3})?(?:weights|tensors|parameters|params|layers|shards|memory|experts)\s{1,3}"
                         r"(?:[\w-]{1,12}\s{1,3}){0,3}?(?:on|onto|into|to|in)\s{1,3}(?:the\s{1,3})?(?:first\s{1,3})?(?:GPU|cuda:?|device|card)\s{0,2}#?0\b", re.I)
#: the other GPUs stay empty: "the other three cards stay empty", "GPUs 1-3 at 15 MiB"
_OTHERS_EMPTY = lazyre.compile(r"\b(?:the\s{1,3})?(?:other|remaining)\s{1,3}(?:\w+\s{1,3})?(?:GPUs?|cards?|devices?)\s{1,3}(?:\w+\s{1,3}){0,2}?"
                           r"(?:stay|stays|stayed|remain|remains|remained|are|were|sit|sits)\s{1,3}(?:\w+\s{1,3}){0,2}?(?:empty|unused|idle|at\s{1,3}\d{1,3}\s{0,2}MiB)\b|"
                           r"\bGPUs?\s{1,3}[1-9](?:\s{0,2}(?:-|–|to|,|and)\s{0,2}\d{1,2})+\s{1,3}(?:(?:stay|remain)\w{0,2}\s{1,3})?(?:at|:)?\s{0,3}\d{1,3}\s{0,2}MiB\b", re.I)
#: the work is meant to be split across the GPUs
_PARALLEL = lazyre.compile(r"\b(?:TP\s{0,2}=\s{0,2}\d{1,2}|tensor[\s_-]{0,2}parallel\w{0,5}|tp[_-]size|shard\w{0,4}|model[\s-]parallel\w{0,3}|"
                       r"DDP|FSDP|pipeline[\s-]parallel\w{0,3})\b", re.I)
#: the user's own placement, the usual reason one GPU gets everything
_OWN_PLACEMENT = lazyre.compile(r"\b(?:device_map|set_device|CUDA_VISIBLE_DEVICES|local_rank|forgot|forget|my\s{1,3}(?:own\s{1,3})?(?:code|bug|mistake))\b|\.to\(", re.I)

#: a while into the run: "after a few hours", "after about 3 hours", "after 20000 steps"
_SPAN = (r"\s{1,3}(?:about\s{1,3}|around\s{1,3}|roughly\s{1,3}|~\s{0,1})?(?:a\s{1,3}few\s{1,3}|a\s{1,3}couple\s{1,3}of\s{1,3}|several\s{1,3}|some\s{1,3}|"
         r"many\s{1,3}|\d{1,6}\s{1,3})(?:minutes|hours|days|steps|iterations|epochs)")
_RATE = (r"(?:throughput|speed|performance|perf|examples?/s\w{0,3}|samples?/s\w{0,3}|it/s|tokens?/s\w{0,3}|images?/s\w{0,3}|"
         r"FPS|bandwidth|busbw|TFLOPS|MFU|GPU\s{1,3}util\w{0,9}|clocks?)")
_FALL = r"(?:degrad\w{1,5}|worsen\w{0,3}|drops?|dropping|decreas\w{1,3}|declin\w{1,3}|falls?|falling)"
#: slower the longer it runs: a verb of getting slower, then a clause saying the run went on
_TIME_CLAUSE = (r"\s{1,3}(?:[\w./%~-]{1,20}\s{1,3}){0,6}?"
                r"(?:over\s{1,3}time|with\s{1,3}time|"
                r"(?:as|when|while)\s{1,3}(?:the\s{1,3})?(?:number\s{1,3}of\s{1,3})?(?:training\s{1,3})?(?:steps?|iterations?|epochs?|time|run)\s{1,3}"
                r"(?:increase|grow|go|progress|pass|goes|continue)\w{0,3}|"
                r"the\s{1,3}longer\s{1,3}(?:it|the\s{1,3}\w+)\s{1,3}(?:runs?|trains?|goes)|"
                r"after" + _SPAN + r")\b")
_OVER_TIME = [
    # getting slower is about speed whatever the subject
    re.compile(r"\b(?:slower\s{1,3}and\s{1,3}slower|(?:progressively|gradually|increasingly|steadily)\s{1,3}slower|"
               r"(?:slow\w{0,3}\s{0,2}down|slower|deteriorat\w{1,5})" + _TIME_CLAUSE + ")", re.I),
    # falling is, when a rate falls: "throughput drops after a few hours", "2.1 it/s, then it drops ...";
    # not when another quantity is named in between ("throughput is fine, the loss drops ...")
    re.compile(r"\b" + _RATE + r"\b\W{0,3}(?:(?!loss|acc|error|memory|mem\b|temp)\S{1,20}\s{1,3}){0,8}?" + _FALL + _TIME_CLAUSE, re.I),
    # the same with the time first: "after about 3 hours the throughput drops to 3.1 it/s"
    re.compile(r"\b(?:after" + _SPAN + r"|over\s{1,3}time)\b\W{0,3}(?:(?!loss|acc|error|memory|mem\b|temp)\S{1,20}\s{1,3}){0,4}?"
               + _RATE + r"\s{1,3}(?:\w{1,12}\s{1,3}){0,2}?" + _FALL + r"\b", re.I),
    # a time per step rising: "the step time keeps growing over time"
    re.compile(r"\b(?:step|iteration|epoch|batch)\s{0,2}times?\b\W{0,3}(?:(?!loss|acc|error|memory|mem\b|temp)\S{1,20}\s{1,3}){0,6}?"
               r"(?:increas\w{1,3}|grow\w{0,3}|goes\s{1,3}up|went\s{1,3}up|ris\w{1,3}|doubl\w{1,3})" + _TIME_CLAUSE, re.I),
]


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 200 else text[:197] + "..."


def _wrong_value(text: str) -> re.Match[str] | None:
    for pat in (_CORRUPT, _BAD_VALUE):
        for m in pat.finditer(text):
            if not _NEGATED.search(text[:m.start()]):
                return m
    return None


def sentence(reader: Any, index: int, text: str) -> None:
    """Read one sentence: wrong data between GPUs, shards on one GPU, the peer path switched off, a slowdown over time."""
    from clusterdx.facts.model.reported import ReportedSymptom, ReportedWorkaround

    corrupt = next((m for m in _CORRUPT.finditer(text) if not _NEGATED.search(text[:m.start()])), None)
    bad = _wrong_value(text)
    if (corrupt or bad) and (_BETWEEN_GPUS.search(text) or (bad and _ONLY_MULTI.search(text))) \
            and not _OWN_ZEROS.search(text):
        reader.add(ReportedSymptom, index, ("symptom", "multi-gpu-wrong-data", "single-node"), kind="multi-gpu-wrong-data",
                   where="single-node", text=_cut(text))

    off = _PEER_OFF.search(text)
    if off and (_THEN_WORKS.search(text) or _NOT_THEN.search(text)):
        word = (off.group(1) or off.group(2)).lower()
        name = ("nvidia_peermem" if "peer" in word and "mem" in word else
                "gpudirect-rdma" if word.startswith(("gdr", "gpu")) else "p2p")
        effect = "no-effect" if _NOT_THEN.search(text) else "fixes"
        reader.add(ReportedWorkaround, index, ("workaround", name, "off"), name=name, value="off", effect=effect,
                   text=_cut(text))

    if (_ALL_ON_ONE.search(text) or _OTHERS_EMPTY.search(text)) and _PARALLEL.search(text) \
            and not _OWN_PLACEMENT.search(text):
        reader.add(ReportedSymptom, index, ("symptom", "shards-on-one-gpu", "single-node"), kind="shards-on-one-gpu",
                   where="single-node", text=_cut(text))

    slow = next((m for pat in _OVER_TIME for m in [pat.search(text)] if m), None)
    if slow and not _NEGATED.search(text[:slow.start()]):
        reader.add(ReportedSymptom, index, ("symptom", "slows-over-time", ""), kind="slows-over-time", where="",
                   text=_cut(text))


def paragraph(reader: Any, index: int, sentences: list[str]) -> None:
    """Wrong values in one sentence and "only with several GPUs" in the next, in one paragraph."""
    from clusterdx.facts.model.reported import ReportedSymptom

    for first, second in zip(sentences, sentences[1:]):
        if _wrong_value(first) and _ONLY_MULTI.search(second) and not _wrong_value(second):
            reader.add(ReportedSymptom, index, ("symptom", "multi-gpu-wrong-data", "single-node"),
                       kind="multi-gpu-wrong-data", where="single-node", text=_cut(first + " " + second))
            return
