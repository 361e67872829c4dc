"""prose - a ticket's own words (Markdown or plain text)

What a user writes in a ticket: the execution context, the hardware, the versions, the settings,
what changed and which way the number moved, numbers with units and Markdown tables of them.
Every fact it yields has ``provenance="reported"``: a statement, weighed below a measurement
(the engine lowers evidence resting on it one strength level, and a measured fact of the same
type and key on the node replaces it, :mod:`clusterdx.facts.derive.reported`).

Markdown is read with markdown-it-py (GFM tables on): code fences and indented code blocks
hold logs and commands, so only settings (``export NCCL_X=1``) and versions are read from them,
never context, changes or numbers; table rows give one metric per numeric cell whose column
header names a metric and a unit (``busbw (GB/s)``), labelled by the row's first cell.

Look-alikes: a GPU, NIC or instance named in a comparison or a past clause ("unlike the A100 we
had before", "we moved from p4d", "compared to H100") is not inventory: a mention is skipped
when a comparison or past word comes earlier in the same sentence. Context words under negation
("not in a container", "outside Kubernetes") are skipped the same way. A version inside a path
or file name (``/opt/nccl-2.18/lib``) is not a version statement.

GPU clocks and temperatures (:mod:`clusterdx.facts.parsers.prose_gpu`), worker CPU load, host CPU
models and slow peer-to-peer statements (:mod:`clusterdx.facts.parsers.prose_cpu`), wrong data
between GPUs, the peer path switched off in words and a slowdown over a run
(:mod:`clusterdx.facts.parsers.prose_peer`), an RDMA timeout (error 12) said to come a while into
a run (:mod:`clusterdx.facts.parsers.prose_fabric`), the ranks' CPU binding switched off
(:mod:`clusterdx.facts.parsers.prose_binding`), NCCL settings a launcher is said to force
(:mod:`clusterdx.facts.parsers.prose_launcher`) and two NCCL releases held against each other
(:mod:`clusterdx.facts.parsers.prose_release`) are read per sentence by their own modules.

It is the format of last resort: it sniffs at the minimum confidence, so any tool format wins
over it, and ingestion runs it on documents no format took (:func:`read_leftover`).

Sample input::

    ## Environment
    - The job runs in Kubernetes pods, 2 nodes of 8x H100 SXM each
    - NICs: 8x ConnectX-7 400G InfiniBand per node
    - NCCL 2.19.3, CUDA 12.2, driver 535.104.05
    - NCCL_IB_HCA: (not set)
    - NCCL_DEBUG=INFO

    Since the NCCL upgrade from 2.18.3 to 2.19.3 all_reduce is twice as slow.

    | nodes | busbw (GB/s) |
    |-------|--------------|
    | 2     | 182.5        |

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "prose"); parse(doc, ctx)
    >>> sorted({f.fact_type for f in ctx.facts})  # doctest: +NORMALIZE_WHITESPACE
    ['env.var', 'gpu.summary', 'nccl.version', 'platform.virtualization', 'reported.change',
     'reported.context', 'reported.inventory', 'reported.metric', 'reported.setting',
     'reported.version', 'reported.workload']
    >>> {f.provenance for f in ctx.facts}
    {'reported'}
    >>> [(f.model, f.count, f.gbps) for f in ctx.facts if f.fact_type == "reported.inventory"]
    [('H100', 8, None), ('ConnectX-7', 8, 400.0)]
    >>> [(f.name, f.state) for f in ctx.facts if f.fact_type == "reported.setting"]
    [('NCCL_IB_HCA', 'unset'), ('NCCL_DEBUG', 'set')]
    >>> [(c.component, c.from_version, c.to_version, c.direction, c.factor)
    ...  for c in ctx.facts if c.fact_type == "reported.change"]
    [('nccl', '2.18.3', '2.19.3', 'slower', 2.0)]
    >>> [(m.metric, m.value_norm, m.label, m.source.line) for m in ctx.facts if m.fact_type == "reported.metric"]
    [('busbw', 182.5, '2', 12)]
    >>> sniff(doc)
    0.5
"""

from __future__ import annotations

import re
from typing import Any

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.gazetteer import Gazetteers, gazetteers
from clusterdx.facts.parsers import (prose_binding, prose_cloud, prose_cpu, prose_ethernet, prose_fabric, prose_gpu,
                                     prose_launcher, prose_load, prose_peer, prose_release)


SAMPLE = """\
## Environment
- The job runs in Kubernetes pods, 2 nodes of 8x H100 SXM each
- NICs: 8x ConnectX-7 400G InfiniBand per node
- NCCL 2.19.3, CUDA 12.2, driver 535.104.05
- NCCL_IB_HCA: (not set)
- NCCL_DEBUG=INFO

Since the NCCL upgrade from 2.18.3 to 2.19.3 all_reduce is twice as slow.

| nodes | busbw (GB/s) |
|-------|--------------|
| 2     | 182.5        |
"""

SNIFF_CONFIDENCE = 0.5
#: characters of one line looked at; the rest of a longer line is cut with a warning
MAX_LINE = 4000
#: lines read: a ticket's text is short, a longer document is a log with some words in it
MAX_LINES = 5000
_TEXT_MAX = 200

# -- patterns (each linear: no nested quantifiers over overlapping classes) ----------------------

_WORDS = lazyre.compile(r"[A-Za-z]{2,}")
_VER = r"(\d{1,4}\.\d{1,4}(?:\.\d{1,5})?(?:-[0-9A-Za-z.]{1,40})?)"
#: a version token ends at space, punctuation or +cuda...; never inside a path or a longer token
_VER_END = r"(?=$|[\s,;:()\[\]'\"`+]|\.(?:\s|$))"
_NOT_IN_PATH = r"(?<![\w/.\-=])"

_VERSION_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    # "nccl2.7.8" glued to the name, as titles write it
    ("nccl", re.compile(_NOT_IN_PATH + r"(?:lib)?nccl2?(?:\s{0,3}(?:version|v)(?:\s{1,3}(?:is|was|of|=))?\s{0,3}|\s{1,3}|[\s=:]{1,4}|-|==|(?=\d{1,2}\.\d))v?" + _VER + _VER_END, re.I)),
    # "CUDA/cuDNN version: 10.1" (TensorFlow's issue template) names the CUDA release first
    ("cuda", re.compile(r"(?<![\w/.\-])(?:cuda(?:/cudnn)?(?:\s{0,3}(?:toolkit|version|runtime))?[\s:=]{0,4}v?|\+cuda)" + r"(\d{1,2}\.\d{1,2}(?:\.\d{1,3})?)" + _VER_END, re.I)),
    ("driver", re.compile(r"(?:nvidia\s{1,3})?driver(?:\s{0,3}version)?[\s:=]{0,4}v?(\d{3}\.\d{1,3}(?:\.\d{1,3})?)" + _VER_END, re.I)),
    # not collect_env's "CUDA used to build PyTorch: 12.1", which is the CUDA version
    ("pytorch", re.compile(_NOT_IN_PATH + r"(?<!build )(?:pytorch|torch)(?:\s{0,3}version)?(?:==|~=|[\s:=]{1,4}|(?=\d\.\d))v?(\d{1,2}\.\d{1,2}(?:\.\d{1,3})?(?:\+[0-9a-z]{1,12})?)" + _VER_END, re.I)),
    ("kernel", re.compile(r"\bkernel(?:\s{0,3}version)?[\s:=]{1,4}v?(\d\.\d{1,2}(?:\.\d{1,4})?(?:-[0-9A-Za-z.\-_]{1,40})?)" + _VER_END, re.I)),
    ("os", re.compile(r"\b((?:ubuntu|rhel|red hat enterprise linux|rocky(?: linux)?|centos|debian|sles|amazon linux|almalinux)\s{0,3}\d{1,4}(?:\.\d{1,2})?(?:\.\d{1,2})?)" + _VER_END, re.I)),
]

#: ENV_NAME=value, ENV_NAME: value, ENV_NAME: (not set); names with a known prefix or an underscore
#: an issue template's own example, left in by the user: "OS Platform (e.g., Linux Ubuntu 16.04): Ubuntu20.04"
_TEMPLATE_EXAMPLE = lazyre.compile(r"\((?:e\.g\.|eg\.|for example)[^)]{0,80}$", re.I)

_SETTING = lazyre.compile(
    r"(?<![\w$])(?:export\s{1,4})?((?:NCCL|CUDA|UCX|FI|OMPI|PMIX|TORCH|PYTORCH|NVIDIA|OMP|GLOO|MASTER|"
    r"RDMAV|MLX5|IBV|HOROVOD|SLURM|CUBLAS|CUDNN|NVSHMEM|TORCHELASTIC)_[A-Z0-9_]{1,60})"
    r"\s{0,3}(=|:|\s(?:is|was)\s)\s{0,3}(\((?:not set|unset|none|empty)\)|not set|unset|<unset>|[^\s,;`'\"|]{1,200}(?:,[^\s,;`'\"|]{1,200}){0,32})",
    re.I)
_UNSET_WORDS = {"(not set)", "not set", "unset", "<unset>", "(unset)", "(none)", "(empty)", "not"}
_BIOS = lazyre.compile(r"\bBIOS\b([^\n]{0,60}?)\b(enabled|disabled|on|off)\b", re.I)
_BIOS_LEAD = lazyre.compile(r"^[\s:=\-]*(?:settings?|options?)?[\s:=\-]*", re.I)
_SWITCH = lazyre.compile(r"^\s{0,8}(?:[-*+]\s{1,4})?([A-Za-z][\w\-/. ]{1,40}?)\s{0,3}[:=]\s{0,3}(enabled|disabled|on|off)\s*$", re.I)

_COUNT_X = r"(?:(\d{1,3})\s{0,2}[x×]\s{0,2}|(\d{1,3})\s{1,2})?"
#: NICs named by count, rate and fabric instead of a model: "8x 400G InfiniBand", "8 x 400Gb/s IB HCAs",
#: "2x 100G RoCE NICs" (a model name in the sentence wins: it is read from the gazetteer)
_FABRIC_NICS = lazyre.compile(r"(?<![\w.])(\d{1,2})\s{0,2}[x×]\s{0,2}(\d{2,4})\s{0,2}(?:G|Gb/s|Gbps|GbE|Gbit/s|Gb)\s{1,3}"
                          r"(?:(?:NDR|HDR|EDR|XDR)\s{1,3})?(InfiniBand|IB|RoCE(?:v2)?|Ethernet|RDMA)?\s{0,3}(NICs?|HCAs?|adapters?|network cards?)?\b", re.I)
_RATE = lazyre.compile(r"^[\s,(\-/]{0,6}(?:[A-Za-z\- ]{0,24}?\s)?(\d{2,4})\s{0,2}(?:G|Gb/s|Gbps|GbE|Gbit/s|Gb|Gig)\b", re.I)
_INTERCONNECTS = [("RoCE", re.compile(r"\bRoCE(?:v?2)?\b", re.I)),
                  ("InfiniBand", re.compile(r"\b(?:InfiniBand|IB|[HNX]DR)\b")),
                  ("EFA", re.compile(r"\bEFA\b")),
                  ("Ethernet", re.compile(r"\b(?:Ethernet|GbE)\b", re.I))]
#: the NICs' fabric said without a model or a rate: "over RoCE NICs", "our RoCE v2 network", "using RoCE"
_ROCE_SAID = lazyre.compile(r"\b(?:over|via|on|with|using|through)\s{1,3}(?:the\s{1,3}|our\s{1,3}|a\s{1,3})?RoCE(?:\s{0,2}v?2)?\b|"
                        r"\bRoCE(?:\s{0,2}v?2)?\s{1,3}(?:NICs?|HCAs?|adapters?|network|fabric|cards?|links?|ports?)\b", re.I)
_GPU_COUNT = lazyre.compile(r"(?<![\w.])(\d{1,3})\s{0,2}(?:x\s{0,2})?GPUs?\b", re.I)
#: a GPU named as the DGX system it ships in ("DGX A100", "DGX-H100")
_DGX_BEFORE = lazyre.compile(r"\bDGX[\s-]{1,2}$", re.I)

#: a mention after one of these, in the same sentence, is about another system or the past
_ASIDE = lazyre.compile(r"\b(?:unlike|before|previous(?:ly)?|used to|instead of|compared (?:to|with)|versus|vs\.?|than|"
                    r"old|older|former|formerly|migrat\w*|moved from|upgraded from|switched from|replac\w*|other)\b", re.I)
_NEGATION = lazyre.compile(r"\b(?:not|no|never|without|outside(?: of)?|isn't|aren't|don't|doesn't|nor)\s{1,3}(?:\w+\s{1,3}){0,3}$", re.I)

_CONTEXTS_VM = re.compile(r"\b(?:VMs?|virtual machines?|KVM|hypervisor|guest OS|vSphere|ESXi)\b")
_CONTEXTS: list[tuple[str, str, re.Pattern[str]]] = [
    ("kubernetes", "container", re.compile(r"\b(?:kubernetes|k8s|GKE|EKS|AKS|kubeflow|pods?)\b", re.I)),
    ("pyxis", "container", re.compile(r"\b(?:pyxis|--container-image)\b", re.I)),
    ("enroot", "container", re.compile(r"\benroot\b", re.I)),
    ("apptainer", "container", re.compile(r"\b(?:apptainer|singularity)\b", re.I)),
    ("podman", "container", re.compile(r"\bpodman\b", re.I)),
    ("docker", "container", re.compile(r"\b(?:docker|containers?|containeri[sz]ed)\b", re.I)),
    ("slurm", "scheduler", re.compile(r"\b(?:slurm|srun|sbatch|salloc)\b", re.I)),
    ("vm", "guest", _CONTEXTS_VM),
    ("bare-metal", "bare-metal", re.compile(r"\bbare[\s-]?metal\b", re.I)),
    # "installed CUDA and pytorch on the host directly", "natively on the host", "outside of docker"
    ("host", "bare-metal", re.compile(r"\b(?:(?:directly|natively)\s{1,3}on\s{1,3}the\s{1,3}host|on\s{1,3}the\s{1,3}host\s{1,3}(?:directly|natively|itself)|"
                                     r"outside\s{1,3}(?:of\s{1,3})?(?:the\s{1,3})?(?:docker|containers?))\b", re.I)),
    # a workstation, desktop or tower is a physical machine ("4x RTX 6000 Ada in a tower workstation");
    # "workstation GPUs" is the board's tier, a remote or virtual desktop is not a machine of one's own
    ("workstation", "bare-metal", re.compile(r"(?<!virtual )(?<!remote )\b(?:workstations?|desktops?|tower(?:\s{1,3}PC)?|gaming\s{1,3}PC|home\s{1,3}server)\b"
                                            r"(?!\s{1,3}(?:GPUs?|cards?|graphics|class|grade|boards?|editions?)\b)", re.I)),
]
#: a cloud named without an instance type ("GCP H100 instances", "on AWS with A100s"): with one GPU
#: model it narrows the instance gazetteer to that provider's shapes with that GPU
_PROVIDERS: list[tuple[str, re.Pattern[str]]] = [
    ("aws", re.compile(r"\b(?:AWS|EC2|Amazon Web Services|SageMaker)\b")),
    ("gcp", re.compile(r"\b(?:GCP|GCE|GKE|Google Cloud(?: Platform)?|Google Compute Engine)\b")),
    ("azure", re.compile(r"\b(?:Azure|AzureML)\b")),
    ("oci", re.compile(r"\b(?:OCI|Oracle Cloud)\b")),
]
#: a context word must come with a statement that the job runs there, in the same sentence
#: devices passed through into a guest ("passed through to a KVM virtual machine") put the job there too
_RUNS = lazyre.compile(r"\b(?:run|runs|running|ran|launch\w*|deploy\w*|inside|in|on|within|under|via|using|uses|use|with|"
                   r"pass(?:ed|es|ing)?[\s-]{1,3}through|passthrough)\b", re.I)

#: the job said to do well on bare metal: "worked well and had expected performance on the
#: baremetal system", "on bare metal we get the full bandwidth"; the reference a VM ticket is held to
_FINE_THERE = lazyre.compile(r"\b(?:(?:works?|worked|working|runs?|ran|performs?|performed)\s{1,3}(?:\w+\s{1,3}){0,3}?(?:well|fine|great|normally|as\s{1,3}expected)|"
                         r"expected\s{1,3}(?:performance|bandwidth|speed|numbers|results?)|full\s{1,3}(?:bandwidth|speed|line\s{1,3}rate)|"
                         r"(?:is|are|was|were|looks?|looked)\s{1,3}(?:all\s{1,3})?(?:fine|good|normal|as\s{1,3}expected))\b", re.I)
#: "down" is slower ("throughput is down 20%"), not a process stopped ("the process is taken down",
#: "the node went down", "shut down"): a failure, which is no before/after of speed
_SLOWER = lazyre.compile(r"\b(?:slower|slowdown|slow|drop(?:s|ped)?|regress\w*|degrad\w*|lower|worse|halved|decreas\w*|reduc\w*|fell|"
                         r"(?<!taken )(?<!shut )(?<!brought )(?<!broke )(?<!goes )(?<!went )(?<!gone )(?<!came )(?<!comes )(?<!took )down)\b", re.I)
_FASTER = lazyre.compile(r"\b(?:faster|speed-?up|improv\w*|higher|better|increas\w*|doubled)\b", re.I)
_CHANGE = lazyre.compile(r"\b(?:since|after|upgrad\w*|downgrad\w*|updat\w*|switch\w*|mov(?:e|ed|ing) (?:to|from)|chang\w*|"
                     r"went from|bump\w*|roll\w* (?:back|out)|compared (?:to|with)|comparing|before|"
                     r"than\s{1,3}(?:on\s{1,3}|running\s{1,3}(?:directly\s{1,3})?on\s{1,3})?(?:the\s{1,3})?(?:host|bare[\s-]?metal))\b", re.I)
_COMPONENTS = [("nccl", re.compile(r"\bnccl\b", re.I)), ("cuda", re.compile(r"\bcuda\b", re.I)),
               ("driver", re.compile(r"\bdriver\b", re.I)), ("pytorch", re.compile(r"\b(?:pytorch|torch)\b", re.I)),
               ("kernel", re.compile(r"\bkernel\b", re.I)), ("bios", re.compile(r"\bBIOS\b", re.I)),
               ("firmware", re.compile(r"\bfirmware\b", re.I)),
               # the job moved into (or runs in) containers, against the same job on the host: "after we
               # moved the job into containers", "inside docker it is slower than on the host"
               ("container", re.compile(r"\b(?:in|into|inside|within|under)\s{1,3}(?:a\s{1,3}|the\s{1,3}|our\s{1,3})?"
                                        r"(?:docker|containers?|pods?|kubernetes|k8s|enroot|pyxis|singularity|apptainer)\b"
                                        r"(?![\s-]{1,3}image)", re.I)),
               ("image", re.compile(r"\b(?:image|container)\b", re.I)),
               ("os", re.compile(r"\b(?:ubuntu|rhel|os)\b", re.I))]
#: the job works with another software stack: "it worked with the container we used before", "able
#: to get it working with the native pytorch version in the AMI", "runs fine with the older NCCL"
_WORKS_WITH = lazyre.compile(r"\b(?:work(?:s|ed|ing)?|runs?\s{1,3}fine|ran\s{1,3}fine|succeed\w{0,3}|pass(?:es|ed))\s{1,3}"
                         r"(?:fine\s{1,3}|well\s{1,3})?(?:with|using|under|in|from)\s{1,3}", re.I)
#: what marks that stack as the other one, not the one that goes wrong
_OTHER_STACK = lazyre.compile(r"\b(?:old(?:er)?|previous(?:ly)?|prior|native|original|earlier|before|own|stock|"
                          r"pre-?installed|bundled)\b", re.I)
#: the other stack named by its tag, the comparison carried by "the same": "On the `x-20260319.sif`
#: container the same init is successful", "with the cuda11.8 image the same test passes"
_SAME_WORKS_ON = lazyre.compile(
    r"\b(?:on|with|in|using|under|from)\s{1,3}(?:the\s{1,3}|our\s{1,3})?(?:(?:old(?:er)?|previous|earlier|original|prior)\s{1,3})?(?P<name>`[^`]{1,120}`|[\w.:/+-]{0,80}\d[\w.:/+-]{0,80})?"
    r"\s{0,3}(?:docker\s{1,3})?(?:container|image)\b[^.;!?]{0,40}?\bthe\s{1,3}same\s{1,3}(?:[\w-]{1,20}\s{1,3}){0,3}?"
    r"(?:(?:is|was)\s{1,3}succ?es{1,2}ful\w{0,2}|succeed\w{0,3}|works?|worked|pass(?:es|ed)|complet(?:es|ed)|"
    r"(?:runs?|ran|finish(?:es|ed)?)\s{1,3}(?:fine|OK|correctly))\b", re.I)
#: "it fails with the old container too": the problem follows the hosts, not the software
_BOTH_STACKS = lazyre.compile(r"\b(?:too|also|as well|either|both|neither|same (?:way|error|hang|problem))\b", re.I)
#: components whose two releases can run on the same hosts (the host-vs-container move is 'container')
_STACK_PARTS = ("nccl", "cuda", "pytorch", "image")
_OS_NAMED = dict(_COMPONENTS)["os"]
#: a Python environment is a stack too: the framework and the NCCL its wheels bring
_ENV_STACK = lazyre.compile(r"\b(?:conda|python|virtual)\s{1,3}env(?:ironment)?s?\b|\bvenvs?\b", re.I)
_SAME = lazyre.compile(r"\b(?:same|identical|unchanged|untouched)\s{1,3}$", re.I)
_FROM_TO = lazyre.compile(r"\bfrom\s{1,3}v?(\d{1,4}\.\d{1,4}(?:\.\d{1,5})?)[^\s]{0,20}\s{1,3}(?:to|->|→)\s{1,3}v?(\d{1,4}\.\d{1,4}(?:\.\d{1,5})?)", re.I)
#: "comparing nccl v2.22 to nccl 2.25", "compared 2.18.3 with 2.19.3"
_VERSUS = lazyre.compile(r"\bcompar\w{0,4}\s{1,3}(?:\w+\s{1,3})?v?(\d{1,4}\.\d{1,4}(?:\.\d{1,5})?)\s{1,3}(?:to|with|and|vs\.?|versus|against)\s{1,3}"
                     r"(?:\w+\s{1,3})?v?(\d{1,4}\.\d{1,4}(?:\.\d{1,5})?)", re.I)
_ARROW = lazyre.compile(r"\bv?(\d{1,4}\.\d{1,4}(?:\.\d{1,5})?)\s{0,3}(?:->|→|=>)\s{0,3}v?(\d{1,4}\.\d{1,4}(?:\.\d{1,5})?)")
#: something went wrong, in any form: what a statement that follows one node must say
_PROBLEM = lazyre.compile(r"\b(?:fail\w{0,3}|hang\w{0,3}|hung|crash\w{0,3}|errors?|stuck|time[sd]?\s?out|slow\w{0,3}|abort\w{0,3}|break\w{0,3}|broke)\b", re.I)
_THAN = lazyre.compile(r"\bthan\b", re.I)
#: components whose releases a ticket holds against each other ("nccl2.7.8 is lower than nccl 2.5.6")
_COMPARED = ("nccl", "pytorch", "cuda", "driver")
_FACTOR = lazyre.compile(r"\b(\d{1,3}(?:\.\d{1,2})?)\s{0,2}[x×]\s{0,2}(?:slower|faster)|\b(twice|half|three times|2 times|3 times)\b", re.I)
_PERCENT = lazyre.compile(r"(\d{1,3}(?:\.\d{1,2})?)\s{0,2}(?:%|percent)\s{0,3}(?:slower|lower|drop|less|worse|faster|higher|better|regression|degradation|down|up)"
                      r"|\b(?:by|of)\s{1,3}(?:about\s|around\s|roughly\s|almost\s|nearly\s|~)?\s{0,2}(\d{1,3}(?:\.\d{1,2})?)\s{0,2}(?:%|percent)", re.I)

#: a raw RDMA bandwidth test the user says is fine ("the raw IB test looks fine", "ib_write_bw gives line rate")
_RAW_FINE = (r"\b(?:raw\s{1,3}(?:IB|RDMA|verbs|InfiniBand|RoCE)\s{1,3}(?:bandwidth\s{1,3})?tests?|ib_(?:send|write|read)_bw|perftest|"
             r"RDMA\s{1,3}(?:bandwidth\s{1,3})?tests?)\b[^.;!?]{0,60}?\b(?:looks?|is|are|was|were|seems?|gives?|shows?|reach\w{0,2}|gets?)\s{1,3}"
             r"(?:\w+\s{1,3})?(?:fine|good|ok|okay|normal|as\s{1,3}expected|full|line[\s-]rate)\b")

#: the devices whose layout NCCL reads, or NCCL itself
_DEVICE_WORD = lazyre.compile(r"\b(?:NCCL\w{0,10}|PCIe?|GPUs?|NICs?|HCAs?|NUMA|NVLink|H\d{2,3}|A\d{2,3})\b", re.I)

#: several GPUs named as one side of a comparison ("multi-GPU", "multiple GPU's", "4 GPUs", "two cards")
_MANY_GPUS = (r"(?:multi[- ]?gpus?|multiple\s{1,3}gpu'?s?|more\s{1,3}gpus|"
              r"(?:\d{1,2}|two|three|four|eight|several)\s{1,3}(?:\w+\s{1,3}){0,2}?(?:gpu'?s?|cards?|devices?))")

#: what goes wrong, as users say it (each linear); checked per sentence, outside code
_SYMPTOMS: list[tuple[str, re.Pattern[str]]] = [
    # "stuck at 187 GB/s", "stuck near one port's speed" is a plateau, not a hang
    ("hang", re.compile(r"\b(?:hangs?|hung|hanging|deadlock\w{0,4}|stuck(?!\s{1,3}(?:at|near|around|below|under)\b)|freez\w{0,3}|froze|spin\w{0,4}(?: \w{1,12}){0,4} forever|"
                        r"never (?:finish\w{0,3}|complete\w{0,2}|return\w{0,2}|progress\w{0,3})|no (?:forward )?progress|"
                        # "when I try to train it just stops", "the run simply sits there": no error, no progress
                        r"(?:just|simply)\s{1,3}(?:stops|stopped|sits|sat)(?!\s{1,3}(?:with|at|after\s{1,3}\d|once)\b)|"
                        r"stop(?:s|ped)\s{1,3}(?:responding|progressing|making\s{1,3}progress)|"
                        r"(?:waits?|waiting|blocks?|blocked) forever|"
                        # "every later run stalls", "generation stalled after NCCL init"; a profiler's
                        # "memory stalls", "pipeline stall", "stall cycles" are per-instruction waits
                        r"(?<!memory )(?<!pipeline )(?<!warp )(?<!cache )(?<!\bno )stall(?:s|ed|ing)?\b(?!\s{1,3}(?:cycles?|reasons?|%|percent|rate|ratio|counts?)\b))\b", re.I)),
    ("no-speedup", re.compile(r"\b(?:(?:not|n't|no) (?:run |get |go |any |getting |running )?(?:faster|speed-?ups?)|"
                              r"no speed-?up|doesn'?t scale|does not scale|not scal\w{0,3}|scal\w{0,3} (?:poorly|badly)|"
                              # "the throughput is no better than running on one GPU"
                              r"(?:no|not any|hardly|barely) (?:better|faster|higher) than (?:(?:running|serving|training) )?(?:(?:on|with) )?(?:just )?(?:one|a single|1|single) GPU|"
                              r"(?:\d{1,3}x|\d{1,3} times|dramatically|much|way|extremely) slower|"
                              r"(?:extreme|huge|massive|dramatic) (?:performance )?(?:drop|decrease|degradation))\b", re.I)),
    ("rdma-not-used", re.compile(r"\b(?:(?:not|n't|never|cannot|can't|fails? to|unable to)\s{1,3}(?:\w+\s{1,3}){0,2}(?:detect\w{0,2}|find\w{0,2}|see\w{0,2}|load\w{0,3}|enable\w{0,2})\s{1,3}(?:the\s{1,3})?"
                                 r"(?:infiniband|IB|RDMA|GDR|GDRDMA|GPUDirect|EFA|RoCE|verbs)|"
                                 r"(?:infiniband|IB|RDMA|GDRDMA|EFA|RoCE)\s{1,3}(?:is\s{1,3})?(?:not|never)\s{1,3}(?:detected|found|used|working|enabled)|"
                                 # the job that breaks only on the fabric: "training fails on InfiniBand",
                                 # "does not work over RoCE", "IB doesn't work in the container"
                                 r"(?:fails?|failing|failed|(?:does|do|did)(?:n't|\s{1,3}not)\s{1,3}work|not\s{1,3}working|won't\s{1,3}work|broken)"
                                 r"\s{1,3}(?:on|over|with|via|through|using)\s{1,3}(?:the\s{1,3})?(?:infiniband|IB|RDMA|RoCE|EFA)|"
                                 r"(?:infiniband|IB|RDMA|RoCE|EFA)\s{1,3}(?:(?:does|do|did)(?:n't|\s{1,3}not)|won't|never)\s{1,3}works?)\b", re.I)),
    # GPUDirect RDMA asked for and not had, the fabric itself working: "how to enable GDR for my NIC",
    # "a problem with enabling GPUDirect RDMA", "GDR is not used"
    ("gdr-not-used", re.compile(r"\b(?:(?:how\s{1,3}(?:to|do\s{1,3}I|can\s{1,3}(?:I|we)|should\s{1,3}(?:I|we))|problems?|trouble|issues?|difficult\w{0,3}|struggl\w{0,3}|unable|can't|cannot|not\s{1,3}able|fail\w{0,3})"
                                r"\s{1,3}(?:\w+\s{1,3}){0,2}?(?:enabl\w{1,3}|to\s{1,3}enable|turn\w{0,3}\s{1,3}on|get\w{0,4}|us\w{1,3}|to\s{1,3}use)\s{1,3}(?:the\s{1,3})?"
                                r"(?:GDR|GDRDMA|GPUDirect(?:\s{1,3}RDMA)?|GPU\s{1,3}Direct(?:\s{1,3}RDMA)?)|"
                                r"(?:GDR|GDRDMA|GPUDirect\s{1,3}RDMA)\s{1,3}(?:is\s{1,3}|was\s{1,3})?(?:not|never)\s{1,3}(?:used|enabled|working|active))\b", re.I)),
    # the user asks whether GPUDirect RDMA is used or matters on their system: "is GPUDirect (NIC-to-GPU)
    # relevant at all?", "does NCCL use GDR on GH200?", "how does NCCL handle a GPUDirect configuration"
    ("asks-gdr", re.compile(r"\b(?:is|are)\s{1,3}(?:the\s{1,3})?(?:GDR|GDRDMA|GPUDirect|GPU\s{1,3}Direct)(?:\s{1,3}RDMA)?\s{1,3}(?:\([^)]{0,40}\)\s{1,3})?(?:\w{1,8}\s{1,3})?"
                            r"(?:relevant|needed|necessary|required|used|in\s{1,3}use|enabled|active|worth\w{0,3}|useful|beneficial|applicable|supported|on)\b[^.!?]{0,80}\?|"
                            r"\b(?:does|do|will|can|should)\s{1,3}(?:NCCL|it|we|I)\s{1,3}(?:\w{1,8}\s{1,3})?(?:use|need|benefit\s{1,3}from|support)\s{1,3}(?:the\s{1,3})?(?:GDR|GDRDMA|GPUDirect|GPU\s{1,3}Direct)\b[^.!?]{0,80}\?|"
                            r"\bhow\s{1,3}(?:does|do|is)\s{1,3}(?:NCCL|it)\s{1,3}(?:handl\w{0,3}|us\w{1,3}|treat\w{0,3}|configur\w{0,5})\s{1,3}(?:an?\s{1,3}|the\s{1,3})?(?:GDR|GDRDMA|GPUDirect|GPU\s{1,3}Direct)\b", re.I)),
    # the guest's PCI/NUMA layout said not to mirror the host: "the NUMA of the NICs are all -1",
    # "numa_node is -1 for every GPU", "vm topo has no hierarchical relationship", "the topology in
    # the VM is very different from the host"; the rule asks for a VM guest besides
    ("vm-topology-flat", re.compile(r"\bNUMA(?:_node|\s{1,3}node)?\s{1,3}(?:(?:of|for)\s{1,3}(?:the\s{1,3}|all\s{1,3}|every\s{1,3})?(?:\w+\s{1,3}){0,3}?)?(?:is|are|=|:|shows?|reads?)\s{0,3}(?:all\s{1,3}|always\s{1,3})?-1\b|"
                                    r"\b(?:NICs?|HCAs?|GPUs?|devices?|cards?)\s{1,3}(?:\w+\s{1,3}){0,4}?(?:at|on|in|report\w{0,3}|show\w{0,3})\s{1,3}NUMA(?:_node|\s{1,3}node)?\s{0,3}-1\b|"
                                    r"\b(?:VM|guest|virtual\s{1,3}machine)(?:'s)?\s{1,3}(?:\w+\s{1,3}){0,2}?(?:topo\w{0,6}|PCIe?\s{1,3}(?:tree|layout|hierarchy))\s{1,3}(?:\w+\s{1,3}){0,2}?"
                                    r"(?:(?:is|looks|seems)\s{1,3}(?:\w+\s{1,3}){0,2}?(?:different|flat)|differs|(?:does|do)(?:n't|\s{1,3}not)\s{1,3}(?:match|mirror|reflect)|"
                                    r"(?:has|shows?)\s{1,3}no\s{1,3}(?:\w+\s{1,3}){0,2}?(?:hierarch\w{1,4}|switch\w{0,3}|structure|levels?))|"
                                    r"\btopo\w{0,6}\s{1,3}(?:of|in|inside)\s{1,3}(?:my|the|our)?\s{0,3}(?:VM|guest|virtual\s{1,3}machine)s?\s{1,3}(?:is|looks|seems)\s{1,3}(?:\w+\s{1,3}){0,2}?(?:different|flat)\b", re.I)),
    # NCCL's topology inside a VM named as the subject: "NCCL topology on the VM of H200", "how
    # should NCCL see the topology in our VMs?", "a topology file for the guest"
    ("vm-topology-asked", re.compile(r"\b(?:topolog\w{0,3}|topo\s{1,3}(?:files?|dumps?|xml)|NCCL_TOPO_FILE)\s{1,3}(?:[\w-]{1,12}\s{1,3}){0,8}?(?:on|in|inside|within|for|of)\s{1,3}"
                                     r"(?:the\s{1,3}|a\s{1,3}|our\s{1,3}|my\s{1,3}|each\s{1,3})?(?:[\w-]{1,12}\s{1,3})?(?:(?-i:VMs?)|guests?|virtual\s{1,3}machines?)\b|"
                                     r"\b(?:(?-i:VMs?)|guest|virtual\s{1,3}machines?)(?:'s)?\s{1,3}(?:NCCL\s{1,3}|PCIe?\s{1,3})?topolog\w{0,3}\b", re.I)),
    ("gpus-hidden", re.compile(r"\b(?:(?:only|just)\s{1,3}(?:see|sees|saw|shows?|visible)\s{1,3}(?:the\s{1,3})?(?:only\s{1,3})?(?:one|1|a single|its own|the allocated)\s{1,3}(?:\w+\s{1,3}){0,3}?GPUs?|"
                               r"(?:can't|cannot|can not|doesn't|does not|don't)\s{1,3}see\s{1,3}(?:the\s{1,3})?other\s{1,3}GPUs?)\b", re.I)),
    ("one-core", re.compile(r"\b(?:(?:use|uses|using|run|runs|running|pinned to|bound to|restricted to|limited to|stuck on)\s{1,3}only\s{1,3}(?:one|1|a single)\s{1,3}(?:physical\s{1,3})?(?:core|cpu)|"
                            r"(?:all|every)\s{1,3}(?:\w+\s{1,3}){0,3}(?:on|to)\s{1,3}(?:the\s{1,3})?(?:same|one|first)\s{1,3}(?:physical\s{1,3})?(?:core|cpu))\b", re.I)),
    # several containers on one node, each given part of its GPUs: "two docker with each holding
    # two graphic cards", "each pod gets 4 of the 8 GPUs", "between two containers on the same host"
    ("containers-split", re.compile(r"\b(?:(?:two|2|three|3|four|4|multiple|several|separate|different)\s{1,3}(?:docker\s{1,3})?(?:dockers?|containers?|pods?)\b"
                                    r"(?:[\s,]{1,3}\w+){0,5}?[\s,]{1,3}(?:each|every one|respectively)|"
                                    r"\beach\s{1,3}(?:docker|container|pod)\s{1,3}(?:\w+\s{1,3}){0,2}?(?:holds?|holding|gets?|getting|has|having|with|sees?|owns?)\s{1,3}"
                                    r"(?:\w+\s{1,3}){0,2}?(?:\d{1,2}|one|two|three|four)\s{1,3}(?:\w+\s{1,3}){0,3}?(?:GPUs?|cards?|graphics? cards?|devices?)|"
                                    # "across Kubernetes pods on a same node": the pods named in the plural, one machine
                                    r"(?:between|across)\s{1,3}(?:the\s{1,3})?(?:(?:two|2|different|separate|several|multiple|\w{1,12})\s{1,3})?(?:dockers?|containers?|pods?)\s{1,3}(?:\w+\s{1,3}){0,2}?(?:on|in)\s{1,3}"
                                    r"(?:one|(?:the|a)\s{1,3}same|same|a\s{1,3}single)\s{1,3}(?:host|node|machine|server))\b", re.I)),
    # NCCL slow across the fabric while the raw RDMA test on the same ports is fine: "the NCCL
    # all_reduce_perf bandwidth is far below the link, while ib_send_bw looks fine"
    ("nccl-below-raw-rdma", re.compile(r"\b(?:NCCL|all_?reduce\w{0,5}|nccl-tests|collectives?)\b[^.;!?]{0,80}?\b(?:below|lower|low|slow|poor|worse)\b"
                                       r"[^.!?]{0,200}?" + _RAW_FINE + r"|" + _RAW_FINE + r"[^.!?]{0,200}?"
                                       r"\b(?:NCCL|all_?reduce\w{0,5}|nccl-tests|collectives?)\b[^.;!?]{0,80}?\b(?:below|lower|low|slow|poor|worse)\b", re.I)),
    # more GPUs of one machine slower than one: "training with 4 GPUs seems slower than one"
    ("multi-gpu-slower", re.compile(r"\b(?:\d{1,2}|two|four|eight|multiple|more|several)\s{1,3}(?:\w+\s{1,3}){0,2}?(?:GPUs?|cards?|devices?)\b(?:\s{1,3}\w+){0,6}?\s{1,3}"
                                    r"(?:is\s{1,3}|are\s{1,3}|seems?\s{1,3}|runs?\s{1,3}|was\s{1,3})?(?:\w+\s{1,3})?slower\s{1,3}than\s{1,3}(?:(?:with|on|using)\s{1,3})?(?:just\s{1,3})?(?:one|1|a single|single)\b", re.I)),
    # the same complaint as issue titles word it: "Multi-GPU is slower than single GPU", "Multiple GPUS
    # training speeds are slower than 1 GPU", "multi GPU slower than One GPU several time", "the
    # training time was slower when using multiple GPU's", "Single GPU training run faster than two"
    ("multi-gpu-slower", re.compile(r"\b" + _MANY_GPUS + r"\b(?:(?!\bnot\b|n't\b)[^.;!?\n]){0,60}?\b(?:(?:much|a\s{1,3}lot|even|way)\s{1,3})?"
                                    r"(?:slower|reducing\s{1,3}(?:the\s{1,3})?speed)\b[^.;!?\n]{0,30}?\b(?:than|compared\s{1,3}(?:to|with)|vs\.?|versus)"
                                    r"\s{1,3}(?:(?:with|on|using|the|that\s{1,3}of)\s{1,3}){0,2}(?:just\s{1,3}|only\s{1,3})?"
                                    r"(?:one|1|a\s{1,3}single|single)\b(?!\s{1,3}(?:node|machine|server|host)s?\b)|"
                                    r"\bslower\s{1,3}(?:(?:when|while|if)\s{1,3})?(?:using|with|on|running\s{1,3}on)\s{1,3}" + _MANY_GPUS + r"|"
                                    r"\b(?:one|1|a\s{1,3}single|single)\s{1,3}(?:gpu|card)s?\b[^.;!?\n]{0,40}?\b(?:faster|quicker)\s{1,3}than"
                                    r"\s{1,3}(?:(?:with|on|using)\s{1,3})?(?:two|2|three|3|four|4|eight|8|multiple|multi[- ]?gpus?|more|several)\b"
                                    r"(?!\s{1,3}(?:days?|weeks?|months?|years?|hours?|minutes?|times|runs?|nodes?|machines?)\b)", re.I)),
    # the job stops with an error rather than running slowly: "crashes with the following error",
    # "NCCL WARN ... Got completion with error 12", "unhandled system error"
    ("error", re.compile(r"\b(?:NCCL\s{1,2}WARN|NCCL\s{1,2}Error\s{0,2}\d|NCCL\s{1,2}failure|(?:unhandled|internal)\s{1,2}(?:system\s{1,2}|cuda\s{1,2})?error|"
                         r"completion\s{1,2}with\s{1,2}error|connection\s{1,2}timed\s{1,2}out|crash(?:es|ed|ing)?|segfault\w{0,2}|"
                         r"(?:fails?|failed|aborts?|aborted|dies|died)\s{1,3}with\s{1,3}(?:an?\s{1,3}|the\s{1,3}(?:following\s{1,3})?)?(?:\w+\s{1,3})?error|"
                         r"(?:fails?|failed|abort\w{0,3}|die|dies|died|crash\w{0,3})\s{1,3}(?:at|during|on)\s{1,3}(?:NCCL\s{1,3})?(?:startup|start-up|init\w{0,8})|"
                         # the failure arrives with the first traffic: "NCCL fails as soon as traffic starts to flow"
                         r"(?:fails?|failed|abort\w{0,3}|die|dies|died|crash\w{0,3})\s{1,3}(?:as\s{1,3}soon\s{1,3}as|right\s{1,3}(?:away|after)|immediately)|"
                         # "we get error below", "got the following error"; a process that aborts with a
                         # signal or a corrupted heap ("Signal: Aborted (6)", "free(): corrupted unsorted chunks")
                         r"(?:get|gets|got|getting|hit|hits)\s{1,3}(?:an?\s{1,3}|the\s{1,3}(?:following\s{1,3}|same\s{1,3}|below\s{1,3})?|this\s{1,3})?errors?|"
                         r"Signal:\s{0,3}(?:Aborted|Segmentation fault)|Aborted\s{1,3}\(core dumped\)|Segmentation fault|"
                         r"free\(\):\s{0,3}(?:invalid|corrupted|double free))\b", re.I)),
    # it goes wrong only past a node count: "on 7 or more nodes", "with more than 8 nodes", "beyond 16 nodes"
    ("at-scale", re.compile(r"\b(?:(?:on|with|at|from)\s{1,3}\d{1,5}\s{1,3}(?:or\s{1,3}more|and\s{1,3}(?:more|above|up))|\d{1,5}\+|"
                            r"(?:more\s{1,3}than|beyond|above|past|over)\s{1,3}\d{1,5})\s{1,3}(?:\w+\s{1,3})?(?:nodes|machines|servers|hosts)\b", re.I)),
    # the problem follows one named node: "any job that includes instance-8g-96c-1 fails", "only when
    # gpu-07 is in the job it hangs", "whenever node 3 takes part"; a host name holds a digit
    ("one-node", re.compile(r"\b(?:(?:any|every|each|all)\s{1,3}(?:\w+\s{1,3}){0,2}?(?:that|which)\s{1,3}(?:includes?|included|involves?|uses?|contains?|runs?\s{1,3}on)|"
                           r"(?:whenever|only\s{1,3}when|only\s{1,3}if|as\s{1,3}soon\s{1,3}as|every\s{1,3}time)(?:\s{1,3}(?:the\s{1,3})?(?:node|host|machine|server|vm))?)"
                           r"\s{1,3}(?:[A-Za-z][\w.-]{0,40}?\d[\w.-]{0,20}|node\s{0,2}\d{1,4})(?![\w.-])", re.I)),
    # "band width" as two words, "lower bandwidth than I expected"
    # "the collective bandwidth inside the box is much lower than we expected", "only a few GB/s"
    ("low-bandwidth", re.compile(r"\b(?:(?:bus )?band ?width (?:is |was )?(?:very |really |quite |too )?(?:low|poor|bad)|"
                                 r"band ?width (?:[\w-]{1,20} ){0,4}?(?:is|was|are|were|seems?|looks?) (?:much |very |really |quite |far |way |too |so )?(?:lower|low|poor|bad|slow)|"
                                 r"only (?:a few|about |around |~)?\s?\d{0,4}(?:\.\d{1,3})?\s?(?:GB/s|Gb/s|GB/sec|GBps)|"
                                 r"(?:low|lower|poor|bad) (?:bus |inter-?node |intra-?node )?(?:band ?width|busbw|performance|throughput)|"
                                 r"max(?:es|ed)? out at|only (?:gets?|reach\w{0,2}|achiev\w{0,3})|"
                                 # "only gives 12 GB/s", "only shows ~3 GB/s busbw": a verb and a number
                                 # ("each GPU only shows about 50% utilization" is a load figure, no bandwidth)
                                 r"only (?:gives?|giving|got|shows?|hits?|manag\w{0,3}(?: to (?:get|reach|do))?|does) (?:about |around |roughly |~)?\d{1,4}(?![\d.]|\s{0,2}(?:%|percent)))\b", re.I)),
    # the result held against a vendor's figure: "can not reach peak bandwidth", "far below the
    # theoretical bandwidth", "we only get 230 GB/s of the advertised 600 GB/s", "why can't we get
    # the 900 GB/s bidirectional". The shortfall word comes first in the sentence: "we reach the
    # theoretical rate" and "the peak busbw we measured" are no complaint
    ("below-peak", re.compile(r"(?:n't|\b(?:not|never|cannot|can\s?not|unable|fail\w{0,3}|only|below|under|short\s{1,3}of|far\s{1,3}from|"
                              r"less\s{1,3}than|lower\s{1,3}than|half|nowhere\s{1,3}near|instead\s{1,3}of)\b)[^.?!]{0,80}?\b"
                              r"(?:(?:advertised|theoretical|rated|nominal|datasheet|spec(?:ified|ification)?|spec\s{1,3}sheet|marketing|claimed|"
                              r"official|promised|published|quoted|bi-?directional)\s{1,3}(?:[\w/.]{1,12}\s{1,3}){0,2}?"
                              r"(?:bandwidth|speeds?|rates?|figures?|numbers?|values?|performance|throughput|bw|GB/s)|"
                              r"peak\s{1,3}(?:\w{1,12}\s{1,3})?(?:bandwidth|speed|rate|performance|throughput|figure|number)|"
                              r"\d{2,4}\s{0,2}GB/s\s{1,3}(?:\w{1,12}\s{1,3})?bi-?directional)\b", re.I)),
    # inside one node, bandwidth differs with the GPUs or NICs used: "the mlx5_6/mlx5_7 pair came out
    # better bandwidth than mlx5_0/mlx5_1", "GPUs 4-7 get lower busbw than GPUs 0-3", "bandwidth
    # depends on which GPU/NIC pair we use"
    ("device-set-dependent", re.compile(
        r"(?:mlx5_\d{1,2}|\bGPUs?\s{0,2}#?\d{1,2}|\bHCAs?\s{0,2}\d{1,2}|\bNICs?\s{0,2}\d{1,2}|\bcuda:\d)[^.?!]{0,80}?"
        r"\b(?:better|worse|faster|slower|higher|lower)\b[^.?!]{0,60}?\bthan\b[^.?!]{0,30}?"
        r"(?:mlx5_\d{1,2}|\bGPUs?\s{0,2}#?\d{1,2}|\bHCAs?\s{0,2}\d{1,2}|\bNICs?\s{0,2}\d{1,2}|\bcuda:\d)|"
        r"\b(?:bandwidth|busbw|performance|throughput|nChannels|channels?)\b[^.?!]{0,40}?\b(?:depend\w{0,3}|differ\w{0,3}|varies|vary)\b\s{1,3}"
        r"(?:\w+\s{1,3}){0,3}?(?:(?:GPU|NIC|HCA)s?(?:\s{0,2}/\s{0,2}(?:GPU|NIC|HCA)s?)?\s{1,3}(?:pairs?|subsets?|groups?|used|we\s{1,3}use)|PCIe\s{1,3}topolog\w{1,4})", re.I)),
    # a scaling efficiency quoted from another system's publication: "From the README, horovod
    # achieves 90% scaling efficiency", "the paper reports 95% weak-scaling efficiency": the source
    # comes first (a result "matching the 90% in the README" names it after its own number)
    ("below-peak", re.compile(r"\b(?:README(?:\.md)?|paper|blog(?:\s{0,2}post)?|docs|documentation|white\s{0,2}paper|"
                              r"web\s{0,2}site|benchmark\s{1,3}page)\b(?![^.?!]{0,80}?\b(?:we|our|I)\s{1,3}(?:\w+\s{1,3})?(?:get|got|reach\w{0,2}|see|saw|measured?)\b)"
                              r"[^.?!]{0,80}?\b\d{2,3}(?:\.\d{1,2})?\s{0,2}%\s{0,3}(?:[\w-]{1,12}\s{1,3})?(?:scaling\s{1,3})?efficiency\b", re.I)),
    # the user asks whether the result is what the hardware gives: "Is this expected?", "is this
    # normal", "a bug or expected behavior?"; "this is expected to be fixed" is a statement
    ("asks-expected", re.compile(r"\b(?:is|are|was|were)\s{1,3}(?:this|that|these|those|it|the\s{1,3}(?:\w{1,16}\s{1,3}){0,2}?(?:results?|numbers?|performance|bandwidth|speed|behaviou?r))"
                                 r"\s{1,3}(?:\w{1,12}\s{1,3})?(?:expected|normal|reasonable|by\s{1,3}design|intended)\b(?!\s{1,3}to\b)|"
                                 r"\bor\s{1,3}(?:is\s{1,3}(?:it|this)\s{1,3})?(?:expected|normal|by\s{1,3}design)(?:\s{1,3}behaviou?r)?\s{0,2}\?|"
                                 # "Am I missing anything?", "what are we missing?": whether more is to be had at all
                                 r"\b(?:am\s{1,3}I|are\s{1,3}we)\s{1,3}missing\s{1,3}(?:any|some)thing\b|\bwhat\s{1,3}(?:am\s{1,3}I|are\s{1,3}we)\s{1,3}missing\b|"
                                 # how another system or path reaches a higher figure: "What do third-party devices do
                                 # differently that they can achieve better performance?", "how does X get higher bandwidth?"
                                 r"\b(?:what|how)\s{1,3}(?:do|does|did)\s{1,3}(?:[\w'’-]{1,20}\s{1,3}){1,5}?(?:do\s{1,3})?differently\b[^.?!]{0,120}?"
                                 r"\b(?:better|higher|faster|more)\s{1,3}(?:performance|bandwidth|throughput|speed|BW)\b[^.?!]{0,60}\?|"
                                 r"\b(?:how|why)\s{1,3}(?:do|does|did|can|could|is|are)\s{1,3}(?:[\w'’-]{1,20}\s{1,3}){1,5}?(?:able\s{1,3}to\s{1,3})?"
                                 r"(?:achieve|get|reach|hit)\s{1,3}(?:a\s{1,3}|much\s{1,3})?(?:better|higher|more)\s{1,3}(?:performance|bandwidth|throughput|BW)\b[^.?!]{0,60}\?", re.I)),
]
#: RDMA NICs bonded into one device (RoCE LAG): "mlx5_bond_0", "our bonded RoCE NICs", "bonding
#: network"; needs an RDMA word in the sentence unless a bond device is named (a bond0 of host NICs
#: for management traffic is not a GPU NIC)
_BOND = lazyre.compile(r"\bmlx5_bond_?\w{0,4}\b|\b(?:bond(?:ed|ing)?|LAG|link aggregation)\b", re.I)
_BOND_DEVICE = lazyre.compile(r"\bmlx5_bond", re.I)
_RDMA_WORDS = lazyre.compile(r"\b(?:RoCE\w{0,2}|RDMA|InfiniBand|HCAs?|mlx5\w{0,8}|ib_write_bw|ib_send_bw|verbs)\b", re.I)
#: the NICs of a node on separate rails: "different subnets for different NICs within a node", "each
#: NIC on its own subnet", "one subnet per rail", "a rail-optimized fabric", "rail connected system"
_RAILS = lazyre.compile(r"\b(?:different|separate|distinct)\s{1,3}subnets?\s{1,3}(?:\w+\s{1,3}){0,2}?(?:to|for|per|on|across)\s{1,3}(?:the\s{1,3})?(?:different|each|every|all)\s{1,3}(?:\w+\s{1,3})?(?:NICs?|HCAs?|ports?|rails?|interfaces?)|"
                    r"\b(?:each|every)\s{1,3}(?:\w+\s{1,3})?(?:NIC|HCA|port|rail|interface)\s{1,3}(?:is\s{1,3})?(?:on|in|has)\s{1,3}(?:its\s{1,3}own|a\s{1,3}(?:different|separate|dedicated))\s{1,3}subnet|"
                    r"\b(?:one|a)\s{1,3}subnet\s{1,3}per\s{1,3}(?:NIC|HCA|port|rail|interface)|\bper-?\s?(?:rail|NIC)\s{1,3}subnets?|"
                    r"\brail[\s-]{1,2}(?:only|optimi[sz]ed|aligned|connected|based)\b", re.I)
#: the user bisected the slowdown to a commit: "a git bisect returned this commit as the introducer"
_BISECT = lazyre.compile(r"\b(?:git\s{1,3})?bisect(?:ed|ing|s)?\b", re.I)
_RAW_ERROR = lazyre.compile(r"^\s{0,8}(?:Traceback \(most recent call last\)|[\w.]{0,60}(?:Error|Exception):)")
_SOLVED = lazyre.compile(r"\b(?:fixed|solved|resolved|figured out)\b", re.I)
#: PCIe cards joined by an NVLink bridge: "2 2080ti ... with a NVlink bridge between them", "bridged
#: with NVLink", "an NVLink bridge connects the two cards"; "no NVLink bridge" is read as no bridge
_NVLINK_BRIDGE = lazyre.compile(r"\bNV-?Link\s{0,3}(?:2(?:\.0)?\s{1,3}|SLI\s{1,3})?bridges?\b|\bbridged\s{1,3}(?:with|by|over|via)\s{1,3}(?:an?\s{1,3})?NV-?Link\b", re.I)
#: GPUs said to talk over PCIe without naming a model: "4 GPUs, connected with PCIE16", "our PCIe cards"
_PCIE_GPUS = lazyre.compile(r"\b(?:GPUs?|cards?)\b[^.;!?]{0,60}?\s(?:connected|linked|attached|talk\w{0,3}|communicat\w{0,5})\s{1,3}"
                        r"(?:with|via|over|through|by|using|on)\s{1,3}(?:the\s{1,3})?PCI-?e|\bPCI-?e\s{1,3}(?:GPUs|cards)\b", re.I)
_SCALE_DOWN = lazyre.compile(r"\b(?:slow(?:s|ed|ing)?\s{0,2}down|slower|drops?|dropped|decreas\w{0,3}|worse)\b", re.I)
#: "distributed training" places the job on several machines; a framework's module path does not
#: (``tf.distribute.MirroredStrategy`` and ``torch.distributed`` run on the GPUs of one machine too),
#: nor does "distribution" ("Deadlock in distribution with multiple 4090", "OS Platform and Distribution")
_MULTI_NODE = lazyre.compile(r"\b(?:nodes|machines|servers|hosts|inter-?node|multi-?node|across|between (?:the )?(?:two |2 )?(?:nodes|machines)|(?<![.\w])distribut(?:ed|e|ing)(?![.\w])|cluster|"
                         r"more than (?:one|1|a single) (?:node|machine|server|host)|(?:a |the )?(?:second|another) (?:node|machine|server|host))\b", re.I)
#: a setting the user says makes it work: "NCCL_P2P_DISABLE=1 resolves the deadlock", "works with
#: iommu=pt", "setting amd_iommu=off helps", "with X=1 it runs fine", "if I set X=1, I can use as many
#: GPUs as I like"; "does not help" is the other answer
_WORKS = lazyre.compile(r"\b(?:resolv\w{0,3}|fix\w{0,3}|solv\w{0,3}|works?|worked|working|helps?|helped|avoids?|goes away|go away|"
                    # "with NCCL_P2P_DISABLE=1 training is much faster": the setting helps
                    r"(?:is|was|runs?|ran|gets?|got|becomes?|became)\s(?!(?:not|no|never|hardly|barely)\s)(?:\w+\s)?(?:much\s|a\slot\s|way\s|far\s|\d{1,3}x\s)?faster|"
                    r"went away|no longer|makes? it (?:work|run|pass)|runs? (?:\w+ )?fine|ran fine|succeed\w{0,3}|"
                    # "setting NCCL_P2P_DISABLE=1 did workaround but got really low speed"
                    r"did (?:the |a )?work-?around|(?:as|is|was) (?:a |the )?work-?around|work(?:s|ed)? around|"
                    # a label: "Workaround: NCCL_P2P_DISABLE=1", "X=1 gets us past the hang"
                    r"work-?arounds?(?=\s{0,2}:)|gets? (?:\w+ )?past (?:it|this|that|the (?:hang|stall|error|crash|deadlock|init\w{0,7}))|"
                    # the failing start now gets through: "the job starts and trains", "training then completes"
                    r"starts? and (?:trains?|runs?|completes?)|(?:job|training|run) (?:now |then )?(?:completes|trains|passes)|"
                    # "with NCCL_P2P_DISABLE=1 it starts, but ...", "the server then starts fine"
                    r"(?:it|the (?:job|engine|server|run|training))\s{1,3}(?:now\s{1,3}|then\s{1,3})?starts?(?:\s{1,3}(?:up|fine|normally))?(?=\s{0,2}[,.;]|\s{1,3}but\b)|"
                    # the failure is gone at any size: "I can use as many GPUs as I like", "can train on all 8 GPUs"
                    r"can (?:use|run|train)(?: \w+){0,2}? (?:as many|any number of|all(?: \d{1,3})?) (?:\w+ )?(?:GPUs|cards|devices|nodes|ranks))\b", re.I)
_NOT_WORKS = lazyre.compile(r"\b(?:(?:does|did|do)(?:n'?t| not)|not|no|never|nothing)\s{1,3}"
                        # "it starts, but that is not a (real) fix": it works, the user wants the cause
                        r"(?!(?:a|an)\s{1,3}(?:\w+\s{1,3})?(?:fix|solution)\b)(?:\w+\s{1,3}){0,2}"
                        r"(?:help\w{0,2}|work\w{0,3}|fix\w{0,3}|solv\w{0,3}|resolv\w{0,3}|change\w{0,1})\b", re.I)
#: a setting an error message suggests, not one in force: "(run with NCCL_DEBUG=INFO for details)"
_ADVICE_BEFORE = lazyre.compile(r"\b(?:re-?)?run\s{1,3}(?:it\s{1,3}|again\s{1,3})?with\s{1,3}$", re.I)
_ADVICE_AFTER = lazyre.compile(r"\s{0,3}(?:for|to get|to see)\s{1,3}(?:more\s{1,3})?(?:details|information|info|debug)", re.I)
_WORKAROUND_SETTING = lazyre.compile(
    r"(?<![\w$])((?:NCCL|CUDA|UCX|FI|TORCH|NVIDIA)_[A-Z0-9_]{2,60})\s{0,2}=\s{0,2}([\w.:,\-^/]{1,80})"
    r"|(?<![\w-])((?:amd_|intel_)?iommu|pci|pcie_acs_override)=([\w.,]{1,40})", re.I)

_COLLECTIVE = lazyre.compile(r"\b(all_reduce|all_gather|reduce_scatter|alltoall|sendrecv|broadcast|reduce|gather|scatter|hypercube)_perf\b", re.I)
#: the count may be parenthesised and followed by a part name: "(16) GH200 nodes", "4 DGX H100 servers"
_NODE_PART = r"(?:(?:DGX|HGX)\s{1,2})?(?:[A-Z]{1,4}\d{2,4}[A-Z]{0,3}\s{1,2})?"
_NODES = lazyre.compile(r"(?<![\w.])\(?(\d{1,5})\)?\s{0,2}" + _NODE_PART + r"(?:nodes|machines|servers|hosts|instances)\b", re.I)
_NUM_WORDS = {"two": 2, "three": 3, "four": 4, "eight": 8, "sixteen": 16}
_NODES_WORD = lazyre.compile(r"\b(two|three|four|eight|sixteen)\s{1,2}" + _NODE_PART + r"(?:nodes|machines|servers|hosts|instances)\b", re.I)

#: a bandwidth the user expected next to the one measured: "30 GB/s vs. theoretical 100 GB/s",
#: "the expected performance is 50GB/s, but the measured is about 27GB/s"
_EXPECT_WORDS = lazyre.compile(r"\b(?:expect\w{0,3}|theoretical\w{0,2}|should|target|spec\w{0,7}|peak|line[\s-]rate|promised|reference|nominal|advertis\w{0,3}|claim\w{0,2}|official\w{0,2}|datasheet|can reach)\b", re.I)
_BW = lazyre.compile(r"(?<![\w.])(\d{1,5}(?:\.\d{1,3})?)\s{0,2}(GB/[sS]|GBps|Gb/[sS]|Gbps|Gbit/s)(?![\w/])")
_PAIR = lazyre.compile(r"\b(?:between|nodes?|pairs?|hosts?)\s{1,3}(?:nodes?\s{1,3})?(\w{1,16})\s{0,2}(?:\+|and|&|<->|<=>|↔|-)\s{0,2}(\w{1,16})", re.I)
_RESULT_OF = lazyre.compile(r"(?:=~|≈|~=|=)\s{0,2}$")
_CONVERSION = lazyre.compile(r"(?:\(\s{0,2}|=~\s{0,2}|≈\s{0,2}|~=\s{0,2}|=\s{0,2})$")

#: number + unit; the unit decides the metric family, a nearby word refines it
_NUM_UNIT = lazyre.compile(
    r"(?<![\w.])(\d{1,7}(?:\.\d{1,4})?)\s{0,2}(GB/s|GBps|GiB/s|Gb/s|Gbps|Gbit/s|ms/step|s/step|ms|msec|sec/it|s/it|"
    r"sec(?:onds)?(?:\s{1,2}per\s{1,2}(?:step|iter\w*))?|tokens?/s(?:ec)?|tok/s|samples?/s(?:ec)?|TFLOPS|TFLOP/s|"
    r"s(?:\s{1,2}per\s{1,2}(?:step|iter\w*))?)(?![\w/])",
    re.I)
_LINK_WORDS = lazyre.compile(r"\b(?:NICs?|ports?|links?|adapters?|HCAs?|rails?|line rate|InfiniBand|RoCE|NDR|HDR|XDR)\b", re.I)
_METRIC_WORDS = [("busbw", re.compile(r"\bbus\s?bw\b|\bbus bandwidth\b", re.I)),
                 ("algbw", re.compile(r"\balg\s?bw\b|\balgorithm bandwidth\b", re.I)),
                 ("step_time", re.compile(r"\b(?:step|iteration|iter)(?:[\s_-]time)?\b", re.I)),
                 ("mfu", re.compile(r"\bMFU\b"))]


def _unit_metric(unit: str, value: float, context: str) -> tuple[str, float] | None:
    u = unit.lower()
    if u in ("gb/s", "gbps", "gib/s") and unit not in ("Gbps",):
        norm = value * (1.073741824 if u == "gib/s" else 1.0)
        metric = "bandwidth"
    elif u in ("gb/s", "gbps", "gbit/s"):
        norm, metric = value / 8.0, "bandwidth"
    elif u in ("ms", "msec", "ms/step"):
        norm, metric = value, "time"
    elif u.startswith("s") or u.startswith("sec"):
        norm, metric = value * 1000.0, "time"
    elif u.startswith("tok"):
        return "tokens_per_s", value
    elif u.startswith("sample"):
        return "samples_per_s", value
    else:
        return "tflops", value
    # Gb/s vs GB/s: case decides (b = bit)
    if metric == "bandwidth":
        if unit in ("Gb/s", "Gbps", "Gbit/s", "gb/s") and "B" not in unit:
            norm = value / 8.0
        else:
            norm = value * (1.073741824 if u == "gib/s" else 1.0)
        for name, pat in _METRIC_WORDS[:2]:
            if pat.search(context):
                return name, norm
        return "bandwidth", norm
    if _METRIC_WORDS[2][1].search(context) or "/step" in u or "/it" in u or "per" in u:
        return "step_time", norm
    return None  # a bare duration ("timeout after 30 s") is not a performance number


def sniff(doc: Document) -> float:
    """Minimum confidence for text with prose in it (words, not a table of numbers); else 0."""
    wordy = 0
    for line in doc.lines[:400]:
        if len(_WORDS.findall(line[:MAX_LINE])) >= 4:
            wordy += 1
            if wordy >= 2:
                return SNIFF_CONFIDENCE
    return 0.0


# -- Markdown structure ---------------------------------------------------------------------------


def _blocks(lines: list[str]) -> tuple[set[int], list[tuple[list[str], list[tuple[int, list[str]]]]]]:
    """(indices of lines inside code fences/blocks, tables as (header, [(row index, cells)]))."""
    from markdown_it import MarkdownIt

    # block structure only: inline parsing (emphasis, links) says nothing here and is the slow part
    md = MarkdownIt("commonmark").enable("table").disable("inline")
    skip = _dangling_fence(lines)
    tokens = md.parse("\n".join(lines[skip:]))
    code: set[int] = set()
    tables: list[tuple[list[str], list[tuple[int, list[str]]]]] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.type in ("fence", "code_block") and tok.map:
            code.update(range(tok.map[0] + skip, tok.map[1] + skip))
        elif tok.type == "table_open":
            header: list[str] = []
            rows: list[tuple[int, list[str]]] = []
            row: list[str] = []
            row_line = 0
            in_head = False
            i += 1
            while i < len(tokens) and tokens[i].type != "table_close":
                t = tokens[i]
                if t.type == "thead_open":
                    in_head = True
                elif t.type == "thead_close":
                    in_head = False
                elif t.type == "tr_open":
                    row, row_line = [], (t.map[0] + skip if t.map else 0)
                elif t.type == "inline":
                    row.append(t.content.strip())
                elif t.type == "tr_close":
                    if in_head:
                        header = row
                    else:
                        rows.append((row_line, row))
                i += 1
            tables.append((header, rows))
        i += 1
    return code, tables


_FENCE = lazyre.compile(r"^\s{0,3}(?:```|~~~)")


def _dangling_fence(lines: list[str]) -> int:
    """1 when the text starts with the closing fence of a code block opened before it (a pasted
    transcript cut at its last command leaves the fence's end in the next part), else 0."""
    fences = [i for i, ln in enumerate(lines) if _FENCE.match(ln)]
    if len(fences) % 2 == 1 and not any(ln.strip() for ln in lines[:fences[0]]) \
            and lines[fences[0]].strip() in ("```", "~~~"):
        return fences[0] + 1
    return 0


# -- the reader ----------------------------------------------------------------------------------


class _Reader:
    def __init__(self, doc: Document, ctx: ParseContext):
        self.doc, self.ctx = doc, ctx
        self.g: Gazetteers = gazetteers()
        self.seen: set[tuple[Any, ...]] = set()
        self.roles: dict[str, tuple[int, str, str]] = {}
        #: a sentence saying the job does well on bare metal and naming no VM itself
        self.fine_on_metal: tuple[int, str] | None = None
        self.gpu_models: list[tuple[int, str, int | None]] = []
        #: model -> the form factor the text gives it where that is not the model's usual one
        self.gpu_forms: dict[str, str] = {}
        self.versions: dict[str, tuple[int, str]] = {}
        #: line index -> (its offset in its hard-wrapped paragraph, the paragraph joined)
        self.wrapped: dict[int, tuple[int, str]] = {}
        self.providers: dict[str, tuple[int, str]] = {}
        self.bisect: tuple[int, str] | None = None
        self.slower_said = False
        self.components: set[str] = set()
        self.nccl_benchmark = False
        self.instances: set[str] = set()
        self._gpu_names = sorted(((n, r) for r in self.g.gpus for n in r.names), key=lambda t: -len(t[0]))
        self._nic_names = sorted(((n, r) for r in self.g.nics for n in r.names), key=lambda t: -len(t[0]))
        self._inst_names = sorted(((n, r) for r in self.g.instances for n in r.names + r.series),
                                  key=lambda t: -len(t[0]))
        self.gpu = prose_gpu.GpuState()
        self.load = prose_load.LoadState()
        self._gpu_re = self._alternation([n for n, _ in self._gpu_names])
        self._nic_re = self._alternation([n for n, _ in self._nic_names])
        self._inst_re = self._alternation([n for n, _ in self._inst_names])
        self._plugin_names = sorted(((n, r) for r in self.g.fabrics for n in r.plugin_names), key=lambda t: -len(t[0]))
        self._plugin_re = self._alternation([n for n, _ in self._plugin_names])

    @staticmethod
    def _alternation(names: list[str]) -> re.Pattern[str]:
        body = "|".join(re.escape(n).replace(r"\ ", r"\s{1,2}") for n in names)
        # a model name ends at a word boundary, or runs on into its form and memory as tools print
        # it ("A100-SXM4-80GB", "H100-PCIe")
        return re.compile(r"(?<![\w.\-/])(?:" + body + r")(?:(?![\w\-/]|\.\w)|(?=-(?:SXM|PCIe|NVL|\d{1,3}\s?GB)))", re.I)

    def add(self, cls: type, index: int, key: tuple[Any, ...], **fields: Any) -> None:
        if key in self.seen:
            return
        self.seen.add(key)
        fields.setdefault("provenance", "reported")
        if self.doc.redact:
            from clusterdx.facts.redact import redact_text, redact_value

            if "text" in fields:
                fields["text"] = redact_text(fields["text"])
            if "name" in fields and isinstance(fields.get("value"), str):
                red = redact_value(fields["name"], fields["value"])
                if cls.__name__ == "EnvVar":
                    fields["redacted"] = red != fields["value"]
                fields["value"] = red
            if "evidence" in fields:
                fields["evidence"] = redact_text(fields["evidence"])
        self.ctx.add(cls, index, **fields)

    # -- per line

    def line(self, index: int, text: str, code: bool) -> None:
        if len(text) > MAX_LINE:
            self.ctx.warn(index, f"line of {len(text)} characters; read the first {MAX_LINE}")
            text = text[:MAX_LINE]
        self.settings(index, text)
        self.versions_in(index, text)
        if code:
            if _COLLECTIVE.search(text):
                self.workload(index, text)
            return
        self.shortfall(index, text)
        for sentence, offset in _sentences(text):
            self.context(index, sentence)
            self.inventory(index, sentence)
            self.change(index, sentence)
            self.works_elsewhere(index, sentence)
            self.fine_on_bare_metal(index, sentence)
            self.bisected(index, sentence)
            self.metrics(index, sentence)
            self.gpu.sentence(self, index, sentence)
            self.load.sentence(index, sentence)
            prose_cpu.sentence(self, index, sentence)
            prose_ethernet.sentence(self, index, sentence)
            prose_peer.sentence(self, index, sentence)
            prose_fabric.sentence(self, index, sentence)
            prose_binding.sentence(self, index, sentence)
            prose_launcher.sentence(self, index, sentence)
            prose_release.sentence(self, index, sentence)
            self.symptoms(index, sentence)
            self.workaround(index, sentence)
            self.workload(index, sentence)
        prose_peer.paragraph(self, index, [s for s, _ in _sentences(text)])

    def settings(self, index: int, text: str) -> None:
        from clusterdx.facts.model.env import EnvVar
        from clusterdx.facts.model.reported import ReportedSetting

        fixing = _WORKS.search(text) is not None or _NOT_WORKS.search(text) is not None
        for m in _SETTING.finditer(text):
            name, sep, value = m.group(1).upper(), m.group(2).strip(), m.group(3)
            if (fixing or self._fixing_where_wrapped(index, text, m.start())) and sep == "=":
                continue  # a setting tried as a workaround is not the job's configuration (see workaround)
            if _ADVICE_BEFORE.search(text[max(0, m.start() - 24):m.start()]) and _ADVICE_AFTER.match(text[m.end():]):
                continue  # the error message's advice, not the job's configuration
            if sep in ("is", "was") and value.lower() not in _UNSET_WORDS:
                continue
            if value.lower() == "not" and not re.match(r"\s{1,3}set\b", text[m.end():], re.I):
                continue
            unset = value.lower() in _UNSET_WORDS
            value = "" if unset else value.rstrip(".)")
            state = "unset" if unset else "set"
            self.add(ReportedSetting, index, ("setting", name), name=name, value=value, state=state,
                     kind="env", text=_cut(text))
            if not unset:
                self.add(EnvVar, index, ("env", name), name=name, value=value)
        for pat in (_BIOS, _SWITCH):
            m = pat.search(text)
            if not m:
                continue
            name = m.group(1).strip()
            if pat is _BIOS:
                name = _BIOS_LEAD.sub("", m.group(1)).strip(" :=-")
                if not name or not name[0].isalpha():
                    continue
            if pat is _SWITCH and "bios" not in self.heading.lower():
                continue
            word = m.group(2).lower()
            self.add(ReportedSetting, index, ("bios", name.lower()), name=name, value=m.group(2),
                     state="enabled" if word in ("enabled", "on") else "disabled", kind="bios", text=_cut(text))
            break

    heading = ""

    def versions_in(self, index: int, text: str) -> None:
        from clusterdx.facts.model.nccl import NcclVersion
        from clusterdx.facts.model.platform import KernelVersion
        from clusterdx.facts.model.reported import ReportedVersion

        for component, pat in _VERSION_PATTERNS:
            for m in pat.finditer(text):
                if _TEMPLATE_EXAMPLE.search(text[:m.start()]):
                    continue
                version = m.group(1).strip()
                num = _version_num(component, version)
                self.add(ReportedVersion, index, ("version", component, version.lower()), component=component,
                         version=version, version_num=num, text=_cut(text))
                self.versions.setdefault(component, (index, version))
                if component == "nccl" and num is not None and version.count(".") == 2:
                    self.add(NcclVersion, index, ("nccl.version", version), version=version.split("-")[0],
                             version_num=num)
                if component == "kernel":
                    self.add(KernelVersion, index, ("kernel.version", version), release=version,
                             origin="reported")
        # an NGC image fixes the NCCL it ships (kb/reference/ngc-containers.yaml)
        from clusterdx.facts.images import IMAGE, nccl_for_image

        for m in IMAGE.finditer(text):
            got = nccl_for_image(m.group(0))
            if got is None:
                continue
            version = got[0]
            num = _version_num("nccl", version)
            self.add(ReportedVersion, index, ("version", "nccl", version), component="nccl", version=version,
                     version_num=num, text=_cut(text))
            if num is not None:
                self.add(NcclVersion, index, ("nccl.version", version), version=version, version_num=num)

    def context(self, index: int, sentence: str) -> None:
        from clusterdx.facts.model.reported import ReportedContext

        for platform, role, pat in _CONTEXTS:
            for m in pat.finditer(sentence):
                before = sentence[:m.start()]
                if _NEGATION.search(before) or not _RUNS.search(sentence):
                    continue
                self.add(ReportedContext, index, ("context", platform), platform=platform, role=role,
                         text=_cut(sentence))
                if role in ("container", "guest", "bare-metal"):
                    self.roles.setdefault(role, (index, platform, sentence))
                break
        for provider, pat in _PROVIDERS:
            m = pat.search(sentence)
            if m and not _aside(sentence[:m.start()]) and not _NEGATION.search(sentence[:m.start()]):
                self.providers.setdefault(provider, (index, sentence))
        for m in self._inst_re.finditer(sentence):
            if _aside(sentence[:m.start()]):
                continue
            name = m.group(0)
            row = next((r for n, r in self._inst_names if n.lower() == re.sub(r"\s+", " ", name.lower())), None)
            if row is None:
                continue
            if "." not in name and "-" not in name and "_" not in name and " " not in name.strip() \
                    and not re.search(r"\b(?:instances?|nodes?|aws|ec2|cluster|machines?|vms?)\b", sentence, re.I):
                continue  # 'p5' alone is a word; 'p5 instances' is a machine type
            by_series = row.sizes and re.sub(r"\s+", " ", name.lower()) not in (n.lower() for n in row.names)
            self.instance(index, row, sentence, sized=not by_series)

    def instance(self, index: int, row: Any, sentence: str, sized: bool = True) -> None:
        from clusterdx.facts.model.reported import ReportedContext, ReportedInventory

        self.instances.add(row.id)
        self.add(ReportedContext, index, ("context", "cloud", row.id), platform="cloud", role="cloud",
                 provider=row.provider, instance_type=row.id, text=_cut(sentence))
        self.add(ReportedInventory, index, ("inv", "instance", row.id), item="instance", model=row.id, count=None,
                 instance_type=row.id, interconnect=row.interconnect, vm=row.vm, gdr=row.gdr, nvlink=row.nvlink,
                 net_plugin=self._plugin(row.interconnect), text=_cut(sentence))
        gpu = self.g.gpu(row.gpu)
        form = row.form or (gpu.form if gpu else "")
        self.add(ReportedInventory, index, ("inv", "gpu", row.gpu), item="gpu", model=row.gpu,
                 count=row.gpus if sized else None, form=form, instance_type=row.id, tier=gpu.tier if gpu else "", p2p=gpu.p2p if gpu else None,
                 nvlinks=gpu.links_for(form) if gpu else None, text=_cut(sentence))
        self.gpu_models.append((index, row.gpu, row.gpus if sized else None))
        if row.nics:
            self.add(ReportedInventory, index, ("inv", "nic", row.nic), item="nic", model=row.nic,
                     count=row.nics if sized else None,
                     gbps=row.nic_gbps, interconnect=row.interconnect, instance_type=row.id, gdr=row.gdr,
                     net_plugin=self._plugin(row.interconnect), text=_cut(sentence))
        if row.vm:
            # a cloud instance is a virtual machine unless the shape is bare metal
            self.roles.setdefault("guest", (index, "cloud", sentence))

    def inventory(self, index: int, sentence: str) -> None:
        from clusterdx.facts.model.reported import ReportedInventory, ReportedSetting

        for m in self._gpu_re.finditer(sentence):
            before = sentence[:m.start()]
            if _aside(before):
                continue
            row = next(r for n, r in self._gpu_names if n.lower() == m.group(0).lower())
            count = _count_before(before)
            if count is not None and _counts_machines(before, sentence[m.end():m.end() + 40]):
                count = None  # "2 H200 servers" are two machines; "8x H100 nodes" stays eight GPUs a node
            if count is None:
                c = _GPU_COUNT.search(sentence)
                count = int(c.group(1)) if c else None
            stated = _form_after(row.forms, sentence[m.end():m.end() + 32])
            form = stated or row.form
            if count is None and stated:
                count = _count_after(sentence[m.end():m.end() + 40])
            if count is None:
                count = _count_suffix(sentence[m.end():m.end() + 12])
            interconnect = ""
            bridge = _NVLINK_BRIDGE.search(sentence)
            if bridge and form == "PCIe" and row.links_for(form) and not _NEGATION.search(sentence[:bridge.start()]):
                interconnect = "NVLink"  # a bridge the SKU can take; nothing said of whether all its links are up
            if _DGX_BEFORE.search(before) and row.nvswitch_gpus and form == "SXM":
                # a DGX of an NVSwitch generation is that baseboard: "DGX A100" is 8 SXM GPUs on
                # NVSwitch (the DGX Station, written "DGX Station A100", is not)
                interconnect = "NVSwitch"
                count = count or row.nvswitch_gpus
            self.add(ReportedInventory, index, ("inv", "gpu", row.model), item="gpu", model=row.model,
                     count=count, form=form, tier=row.tier, p2p=row.p2p, nvlinks=row.links_for(form),
                     interconnect=interconnect, text=_cut(sentence))
            self.gpu_models.append((index, row.model, count))
            if stated and stated != row.form:
                # the part named with its form: "H100 PCIe" selects the PCIe server's reference, not the SXM one
                self.gpu_forms.setdefault(row.model, stated)
        for m in self._plugin_re.finditer(sentence if not sentence.rstrip().endswith("?") else ""):
            before = sentence[:m.start()]  # a question about the plugin says nothing of using it
            if _NEGATION.search(before) or _aside(before):
                continue
            row = next(r for n, r in self._plugin_names if n.lower() == re.sub(r"\s+", " ", m.group(0).lower()))
            self.add(ReportedSetting, index, ("plugin", row.net_plugin), name=row.net_plugin, value="", state="set",
                     kind="plugin", text=_cut(sentence))
        pcie = _PCIE_GPUS.search(sentence)
        if pcie and not self._gpu_re.search(sentence) and not _NEGATION.search(sentence[:pcie.start()]):
            self.add(ReportedInventory, index, ("inv", "gpu", "", "PCIe"), item="gpu", model="",
                     count=int(c.group(1)) if (c := _GPU_COUNT.search(sentence)) else None, form="PCIe",
                     interconnect="PCIe",
                     text=_cut(sentence))
        named = False
        for m in self._nic_re.finditer(sentence):
            before = sentence[:m.start()]
            if _aside(before):
                continue
            named = True
            row = next(r for n, r in self._nic_names if n.lower() == re.sub(r"\s+", " ", m.group(0).lower()))
            count = _count_before(before)
            rate = _RATE.match(sentence[m.end():m.end() + 40])
            gbps = float(rate.group(1)) if rate else row.gbps
            interconnect = row.interconnect
            for name, pat in _INTERCONNECTS:
                if pat.search(sentence):
                    interconnect = name
                    break
            self.add(ReportedInventory, index, ("inv", "nic", row.model), item="nic", model=row.model, count=count,
                     gbps=gbps, interconnect=interconnect, net_plugin=self._plugin(interconnect), text=_cut(sentence))
        fabric = None if named else _FABRIC_NICS.search(sentence)
        if fabric and (fabric.group(3) or fabric.group(4)) and not _aside(sentence[:fabric.start()]) \
                and not _NEGATION.search(sentence[:fabric.start()]):
            word = (fabric.group(3) or "").lower()
            interconnect = {"infiniband": "InfiniBand", "ib": "InfiniBand", "ethernet": "Ethernet"}.get(
                word, "RoCE" if word.startswith("roce") else "")
            self.add(ReportedInventory, index, ("inv", "nic", "fabric"), item="nic", model=interconnect,
                     count=int(fabric.group(1)), gbps=float(fabric.group(2)), interconnect=interconnect,
                     net_plugin=self._plugin(interconnect), text=_cut(sentence))
        said = None if named or fabric else _ROCE_SAID.search(sentence)
        if said and not _NEGATION.search(sentence[:said.start()]) and not _aside(sentence[:said.start()]):
            # the fabric named without a model, count or rate: "training over RoCE NICs"
            self.add(ReportedInventory, index, ("inv", "nic", "said", "RoCE"), item="nic", model="", interconnect="RoCE",
                     text=_cut(sentence))
        rails = _RAILS.search(sentence)
        if rails and not _NEGATION.search(sentence[:rails.start()]) and not _aside(sentence[:rails.start()]):
            self.add(ReportedInventory, index, ("inv", "nic", "rails"), item="nic", model="", rails=True,
                     text=_cut(sentence))
        bond = _BOND.search(sentence)
        if bond and (_BOND_DEVICE.search(sentence) or _RDMA_WORDS.search(sentence)) \
                and not _NEGATION.search(sentence[:bond.start()]) and not _aside(sentence[:bond.start()]):
            interconnect = next((name for name, pat in _INTERCONNECTS if pat.search(sentence)), "")
            self.add(ReportedInventory, index, ("inv", "nic", "bond"), item="nic", model="", bonded=True,
                     interconnect=interconnect, text=_cut(sentence))

    def _plugin(self, interconnect: str) -> str:
        fabric = self.g.fabric(interconnect)
        return fabric.net_plugin if fabric else ""

    def cloud_shape(self) -> None:
        """One cloud and one GPU model named, no instance type: what every instance type of that
        provider with that GPU has in common (kb/gazetteers/instances.yaml) is known of the node.
        'GCP H100' leaves a3-highgpu-8g and a3-megagpu-8g: both VMs whose GPU NICs need a GPUDirect
        net plugin; a field the candidates disagree on stays unknown."""
        from clusterdx.facts.model.reported import ReportedContext, ReportedInventory

        models = list(dict.fromkeys(m for _, m, _ in self.gpu_models))
        if self.instances or len(self.providers) != 1 or len(models) != 1:
            return
        provider, (index, sentence) = next(iter(self.providers.items()))
        rows = self.g.provider_rows(provider, models[0])
        if not rows:
            return

        def common(values: list[Any]) -> Any:
            return values[0] if len(set(values)) == 1 else None

        plugins = [self._plugin(r.interconnect) for r in rows]
        plugin = common(plugins) or ("|".join(sorted(set(plugins))) if all(plugins) else "")
        vm = common([r.vm for r in rows])
        self.add(ReportedContext, index, ("context", "cloud", provider), platform="cloud", role="cloud",
                 provider=provider, text=_cut(sentence))
        self.add(ReportedInventory, index, ("inv", "instance", provider, models[0]), item="instance",
                 model=f"{provider} {models[0]}", count=None, interconnect=common([r.interconnect for r in rows]) or "",
                 vm=vm, gdr=common([r.gdr for r in rows]), nvlink=common([r.nvlink for r in rows]),
                 net_plugin=plugin, candidates=[r.id for r in rows], text=_cut(sentence))
        if vm:
            self.roles.setdefault("guest", (index, "cloud", sentence))

    def change(self, index: int, sentence: str) -> None:
        from clusterdx.facts.model.reported import ReportedChange, ReportedMetric

        slower, faster = _SLOWER.search(sentence), _FASTER.search(sentence)
        pct = _PERCENT.search(sentence)
        if pct and (slower or faster):
            value = float(pct.group(1) or pct.group(2))
            metric = "slowdown_pct" if slower and not faster else "speedup_pct"
            self.add(ReportedMetric, index, ("metric", metric, value), metric=metric, value=value, unit="%",
                     value_norm=value, text=_cut(sentence))
        compared = _compared(sentence)
        if not (_CHANGE.search(sentence) or compared) or not (slower or faster):
            return
        direction = "slower" if slower and not (faster and faster.start() < slower.start()) else "faster"
        component = ""
        for name, pat in _COMPONENTS:
            # "same image, same NCCL 2.21.5" names what did not change
            if any(not _SAME.search(sentence[max(0, c.start() - 12):c.start()]) for c in pat.finditer(sentence)):
                component = name
                break
        m = _FROM_TO.search(sentence) or _ARROW.search(sentence) or _VERSUS.search(sentence)
        frm, to = (m.group(1), m.group(2)) if m else ("", "")
        if compared and not m:
            component, frm, to = compared
            direction = "slower"
        factor = None
        f = _FACTOR.search(sentence)
        if f:
            word = (f.group(2) or "").lower()
            factor = float(f.group(1)) if f.group(1) else {"twice": 2.0, "half": 2.0, "three times": 3.0,
                                                           "2 times": 2.0, "3 times": 3.0}.get(word)
        percent = float(pct.group(1) or pct.group(2)) if pct else None
        self.add(ReportedChange, index, ("change", component, frm, to, direction), component=component,
                 from_version=frm, to_version=to, direction=direction, factor=factor,
                 percent=percent, text=_cut(sentence))
        # a framework upgrade is an NCCL upgrade when the two wheels bundle different releases
        from clusterdx.facts.images import nccl_for_wheel

        if component == "pytorch" and frm and to:
            old_nccl, new_nccl = nccl_for_wheel(component, frm), nccl_for_wheel(component, to)
            if old_nccl and new_nccl and old_nccl[0] != new_nccl[0]:
                self.add(ReportedChange, index, ("change", "nccl", old_nccl[0], new_nccl[0], direction),
                         component="nccl", from_version=old_nccl[0], to_version=new_nccl[0], direction=direction,
                         factor=factor, percent=percent, implied_by=f"{component} {frm} -> {to}",
                         text=_cut(sentence))

    def fine_on_bare_metal(self, index: int, sentence: str) -> None:
        """Remember a sentence saying the job does well on bare metal and naming no VM itself
        ("worked well and had expected performance on the baremetal system"); with a VM named
        elsewhere in the ticket, finish() makes it the reference of a VM-only complaint."""
        if self.fine_on_metal is not None or _CONTEXTS_VM.search(sentence) or _SLOWER.search(sentence):
            return
        metal = next((m for platform, role, pat in _CONTEXTS if role == "bare-metal" and platform != "workstation"
                      for m in [pat.search(sentence)] if m), None)
        fine = _FINE_THERE.search(sentence)
        if metal and fine and not _NEGATION.search(sentence[:metal.start()]) \
                and not _NEGATION.search(sentence[:fine.start()]):
            self.fine_on_metal = (index, sentence)

    def works_elsewhere(self, index: int, sentence: str) -> None:
        """A ticket that says the job works with another software stack (an older container, the
        image's or AMI's own PyTorch) on the same hosts compares two runs that share the hardware:
        the change is the software's, and the statement is a change that made it go wrong. The other
        image may be named by its tag with "the same" carrying the comparison ("On the `x.sif`
        container the same init is successful"); a tag or a word such as "older" must mark it."""
        from clusterdx.facts.model.reported import ReportedChange

        if _NOT_WORKS.search(sentence) or _BOTH_STACKS.search(sentence):
            return
        same = _SAME_WORKS_ON.search(sentence)
        if same and (same.group("name") or _OTHER_STACK.search(same.group(0))):
            self.add(ReportedChange, index, ("works-elsewhere", "image"), component="image", from_version="",
                     to_version="", direction="fails", factor=None, percent=None, text=_cut(sentence))
            return
        m = _WORKS_WITH.search(sentence)
        if m is None:
            return
        rest = sentence[m.end():m.end() + 80]
        if not _OTHER_STACK.search(rest):
            return
        comp = next(((name, c) for name, pat in _COMPONENTS if name in _STACK_PARTS
                     for c in pat.finditer(rest) if not _SAME.search(rest[max(0, c.start() - 12):c.start()])), None)
        env = _ENV_STACK.search(rest)
        if comp is None and env is not None:
            comp = ("env", env)
        if comp is None or _OS_NAMED.search(rest):
            return  # an older OS image is the host's software: the hosts are not the same
        name, c = comp
        ver = re.search(r"\bv?(\d{1,4}\.\d{1,4}(?:\.\d{1,5})?)\b", rest[c.end():c.end() + 24])
        frm = ver.group(1) if ver else ""
        self.add(ReportedChange, index, ("works-elsewhere", name), component=name, from_version=frm,
                 to_version="", direction="fails", factor=None, percent=None, text=_cut(sentence))

    def bisected(self, index: int, sentence: str) -> None:
        """Remember what a bisect statement needs: the sentence, whether a slowdown is said, which
        software the prose names, and whether the workload is an NCCL benchmark (see bisect_change)."""
        if _SLOWER.search(sentence) and not _NEGATION.search(sentence[:_SLOWER.search(sentence).start()]):
            self.slower_said = True
        self.components.update(name for name, pat in _COMPONENTS
                               if name not in ("image", "os", "bios", "firmware") and pat.search(sentence))
        if _COLLECTIVE.search(sentence):
            self.nccl_benchmark = True
        m = _BISECT.search(sentence)
        if m and self.bisect is None and not _NEGATION.search(sentence[:m.start()]):
            self.bisect = (index, sentence)

    def bisect_change(self) -> None:
        """A slowdown bisected to a commit is a software change that made it slower. Its component
        is the one software component the prose names; naming none in an nccl-tests ticket, the
        bisected build is NCCL's (the benchmark links it); otherwise it stays unknown."""
        from clusterdx.facts.model.reported import ReportedChange

        if self.bisect is None or not self.slower_said:
            return
        index, sentence = self.bisect
        named = sorted(self.components)
        component = named[0] if len(named) == 1 else ("nccl" if not named and self.nccl_benchmark else "")
        self.add(ReportedChange, index, ("change", component, "", "", "slower"), component=component,
                 from_version="", to_version="", direction="slower", factor=None, percent=None,
                 text=_cut(sentence))

    def _fixing_where_wrapped(self, index: int, text: str, pos: int) -> bool:
        """Whether the sentence around ``pos`` of a hard-wrapped line says the setting made it work
        (or not): "... it hangs there. With NCCL_P2P_DISABLE=1" / "it starts" is one sentence."""
        if index not in self.wrapped:
            return False
        offset, joined = self.wrapped[index]
        at = offset + pos - (len(text) - len(text.lstrip()))
        for sentence, start in _sentences(joined):
            if start <= at < start + len(sentence):
                return _WORKS.search(sentence) is not None or _NOT_WORKS.search(sentence) is not None
        return False

    def joined(self, index: int, text: str) -> None:
        """Statements that a line break cut in two: symptoms, workarounds, shortfalls, workloads."""
        self.shortfall(index, text)
        for sentence, _ in _sentences(text):
            self.symptoms(index, sentence)
            self.workaround(index, sentence)
            self.workload(index, sentence)
            self.change(index, sentence)
            self.works_elsewhere(index, sentence)
            self.fine_on_bare_metal(index, sentence)
            prose_ethernet.sentence(self, index, sentence)
            prose_peer.sentence(self, index, sentence)
            prose_fabric.sentence(self, index, sentence)
            prose_launcher.sentence(self, index, sentence)
            prose_release.sentence(self, index, sentence)
        prose_peer.paragraph(self, index, [s for s, _ in _sentences(text)])

    def shortfall(self, index: int, text: str) -> None:
        """A measured bandwidth and the one the user expected on the same line, as a fraction."""
        from clusterdx.facts.model.reported import ReportedMetric

        nums = []
        for m in _BW.finditer(text):
            value = float(m.group(1))
            gbps = value / 8.0 if m.group(2) in ("Gb/s", "Gb/S", "Gbps", "Gbit/s") else value
            nums.append((m.start(), gbps, _CONVERSION.search(text[max(0, m.start() - 6):m.start()]) is not None))
        if len(nums) < 2:
            return
        exp_i = next((i for i, (pos, _, _) in enumerate(nums)
                      if _EXPECT_WORDS.search(text[max(0, pos - 40):pos])), None)
        if exp_i is None:
            self.pair_dependence(index, text, [v for _, v, _ in nums])
            return
        expected = nums[exp_i][1]
        used = {exp_i}
        nxt = nums[exp_i + 1][0] if exp_i + 1 < len(nums) else -1
        if nxt > 0 and _RESULT_OF.search(text[max(0, nxt - 6):nxt]):  # "200Gb/s * 2 =~ 50GB/s": the result counts
            expected = nums[exp_i + 1][1]
            used.add(exp_i + 1)
        measured = next((v for i, (_, v, conv) in enumerate(nums) if i not in used and not conv), None)
        if measured is None or expected <= 0 or not 0 < measured < expected:
            return
        fraction = measured / expected
        self.add(ReportedMetric, index, ("shortfall", index), metric="bandwidth_fraction",
                 value=round(fraction * 100, 1), unit="%", value_norm=round(fraction, 4),
                 label=f"{measured:g} of {expected:g} GB/s", text=_cut(text))

    def pair_dependence(self, index: int, text: str, values: list[float]) -> None:
        """Two node pairs and two bandwidths on one line that differ: "between nodes 1 + 2 (25 GB/s)
        vs between 1 + 3 (39 GB/s)" is bandwidth that depends on which nodes ran."""
        from clusterdx.facts.model.reported import ReportedSymptom

        pairs = {re.sub(r"\s+", "", m.group(1) + "-" + m.group(2)).lower() for m in _PAIR.finditer(text)}
        if len(pairs) < 2 or len(values) < 2 or max(values) <= 0 or min(values) / max(values) > 0.8:
            return
        self.add(ReportedSymptom, index, ("symptom", "pair-dependent"), kind="pair-dependent", where="multi-node",
                 text=_cut(text))

    def symptoms(self, index: int, sentence: str) -> None:
        from clusterdx.facts.model.reported import ReportedSymptom

        for kind, pat in _SYMPTOMS:
            m = pat.search(sentence)
            if m is None or (kind not in ("rdma-not-used", "gdr-not-used", "asks-gdr", "gpus-hidden") and _NEGATION.search(sentence[:m.start()])):
                continue
            if kind == "vm-topology-asked" and not _DEVICE_WORD.search(sentence):
                continue  # "a topology for each VM in the inventory" is not the devices' layout
            if kind == "one-node" and not _PROBLEM.search(sentence):
                continue  # "every job that includes gpu-07 runs" says nothing went wrong
            if kind == "error" and _RAW_ERROR.search(sentence):
                continue  # a pasted exception line is a signature's to read, not the user's statement
            if kind == "gdr-not-used" and _SOLVED.search(sentence[:m.start()]):
                continue  # "I fixed the problem with enabling GDR" is the answer, not the complaint
            where = "multi-node" if _MULTI_NODE.search(sentence) else ""
            self.add(ReportedSymptom, index, ("symptom", kind, where), kind=kind, where=where, text=_cut(sentence))
        # "slows down", "slower" about going to more machines is a scaling complaint
        if _MULTI_NODE.search(sentence) and _SCALE_DOWN.search(sentence) and not _NEGATION.search(
                sentence[:_SCALE_DOWN.search(sentence).start()]):
            self.add(ReportedSymptom, index, ("symptom", "no-speedup", "multi-node"), kind="no-speedup",
                     where="multi-node", text=_cut(sentence))

    def workload(self, index: int, sentence: str) -> None:
        from clusterdx.facts.model.reported import ReportedWorkload

        coll = _COLLECTIVE.search(sentence)
        nodes = _NODES.search(sentence)
        count = int(nodes.group(1)) if nodes else None
        if count is None:
            word = _NODES_WORD.search(sentence)
            count = _NUM_WORDS[word.group(1).lower()] if word else None
        if count is not None and not 0 < count <= 100000:
            count = None
        if coll is None and count is None:
            return
        name = coll.group(1).lower() if coll else ""
        self.add(ReportedWorkload, index, ("workload", name, count), collective=name, nodes=count, text=_cut(sentence))

    def workaround(self, index: int, sentence: str) -> None:
        from clusterdx.facts.model.reported import ReportedWorkaround

        works, fails = _WORKS.search(sentence), _NOT_WORKS.search(sentence)
        if works is None and fails is None:
            return
        effect = "no-effect" if fails is not None else "fixes"
        for m in _WORKAROUND_SETTING.finditer(sentence):
            name = (m.group(1) or m.group(3)).upper() if m.group(1) else m.group(3).lower()
            value = (m.group(2) or m.group(4) or "").rstrip(".,)")
            self.add(ReportedWorkaround, index, ("workaround", name, value), name=name, value=value, effect=effect,
                     text=_cut(sentence))

    def metrics(self, index: int, sentence: str) -> None:
        from clusterdx.facts.model.reported import ReportedMetric

        for m in _NUM_UNIT.finditer(sentence):
            value = float(m.group(1))
            got = _unit_metric(m.group(2), value, sentence)
            if got is None:
                continue
            metric, norm = got
            if metric == "bandwidth" and (self._nic_re.search(sentence) or _LINK_WORDS.search(sentence)):
                continue  # '8x ConnectX-7 400 Gb/s', 'a 200G link': a rate, not a measured number
            label = sentence[max(0, m.start() - 40):m.start()].strip(" :=-|*")
            self.add(ReportedMetric, index, ("metric", metric, value, index, m.start()), metric=metric, value=value,
                     unit=m.group(2), value_norm=round(norm, 4), label=label[-40:], text=_cut(sentence))

    def table(self, header: list[str], rows: list[tuple[int, list[str]]]) -> None:
        from clusterdx.facts.model.reported import ReportedMetric, ReportedSetting, ReportedVersion

        heads = [h.lower() for h in header]
        for row_index, cells in rows:
            if not cells:
                continue
            label = cells[0]
            # two-column key/value tables: settings and versions
            if len(cells) == 2 and len(heads) == 2 and any(w in heads[0] for w in ("setting", "variable", "name", "component", "key", "software", "package")):
                self.settings(row_index, f"{cells[0]}={cells[1]}" if cells[1] and "not set" not in cells[1].lower()
                              else f"{cells[0]}: (not set)")
                self.versions_in(row_index, f"{cells[0]} {cells[1]}")
                continue
            for col, cell in enumerate(cells[1:], start=1):
                if col >= len(header):
                    break
                num = re.fullmatch(r"\s*(\d{1,7}(?:\.\d{1,4})?)\s*(?:([A-Za-z/%]{1,10}))?\s*", cell)
                if not num:
                    continue
                head = header[col]
                unit_m = re.search(r"\(([^)]{1,16})\)|\[([^\]]{1,16})\]", head)
                unit = num.group(2) or (unit_m.group(1) or unit_m.group(2) if unit_m else "")
                if not unit:
                    continue  # a number without a unit says nothing
                value = float(num.group(1))
                if unit == "%":
                    metric, norm = "percent", value
                else:
                    probe = _NUM_UNIT.fullmatch(f"{num.group(1)} {unit}")
                    got = _unit_metric(probe.group(2), value, head) if probe else None
                    if got is None:
                        continue
                    metric, norm = got
                self.add(ReportedMetric, row_index, ("tmetric", row_index, col), metric=metric, value=value,
                         unit=unit, value_norm=round(norm, 4), label=label[:40], text=_cut(" | ".join(cells)))
        del ReportedSetting, ReportedVersion

    def finish(self) -> None:
        from clusterdx.facts.model.gpu import GpuSummary
        from clusterdx.facts.model.platform import Virtualization
        from clusterdx.facts.model.reported import ReportedSymptom

        self.gpu.finish(self)
        self.load.finish(self)

        self.cloud_shape()
        self.bisect_change()
        roles = dict(self.roles)
        if self.fine_on_metal and "guest" in roles and "container" not in roles:
            # "fine on bare metal" beside a VM named elsewhere: bare metal is the reference, the
            # ticket's machine is the guest
            index, sentence = self.fine_on_metal
            self.add(ReportedSymptom, index, ("symptom", "vm-only", ""), kind="vm-only", where="",
                     text=_cut(sentence + " / " + roles["guest"][2]))
            roles.pop("bare-metal", None)
        if set(roles) == {"container", "guest"}:
            # a container on a cloud instance or in a VM ("p4d + docker") is both: the container
            # is what the job sees, as platform.virtualization says it (container wins over guest)
            del roles["guest"]
        if len(roles) == 1:
            role, (index, platform, sentence) = next(iter(roles.items()))
            fields = {"container": platform} if role == "container" else {}
            self.add(Virtualization, index, ("platform",), role=role, evidence=f"reported: {_cut(sentence, 120)}",
                     **fields)
        models = list(dict.fromkeys(m for _, m, _ in self.gpu_models))
        if len(models) == 1:
            index = self.gpu_models[0][0]
            count = next((c for _, _, c in self.gpu_models if c), None)
            driver = self.versions.get("driver", (0, ""))[1]
            cuda = self.versions.get("cuda", (0, ""))[1]
            models = [f"{m} {self.gpu_forms[m]}" if m in self.gpu_forms else m for m in models]
            self.add(GpuSummary, index, ("gpu.summary",), gpus=count or 0, attached_gpus=count, models=models,
                     driver_version=driver, cuda_version=cuda)


# a shell statement (`export NCCL_IB_DISABLE=1`, `NAME=value`, `unset NAME`) in a pasted script is
# not the tail of the comment above it: "# needed because the cluster does not have IB" and the
# export below it are two things, not one sentence about a workaround
_BLOCK_START = lazyre.compile(r"^\s{0,3}(?:[-*+>]\s|\d{1,3}[.)]\s|#|\||```|~~~|(?:export|unset)\s|[A-Z][A-Z0-9_]{2,}=)")


def _wrapped(lines: list[str], code: set[int], tables: set[int]):
    """(first line index, text, {line index: its offset in text}) of each paragraph of two or more
    wrapped lines."""
    start, buf = None, []
    for i, ln in enumerate(lines + [""]):
        plain = ln.strip() and i not in code and i not in tables and (not buf or not _BLOCK_START.match(ln))
        if plain and len(ln) <= MAX_LINE:
            if start is None:
                start = i
            buf.append(ln.strip())
            continue
        if start is not None and len(buf) > 1:
            offsets, at = {}, 0
            for k, part in enumerate(buf):
                offsets[start + k] = at
                at += len(part) + 1
            yield start, " ".join(buf)[: MAX_LINE * 2], offsets
        start, buf = (i, [ln.strip()]) if ln.strip() and i not in code and i not in tables and len(ln) <= MAX_LINE else (None, [])


def _compared(sentence: str) -> tuple[str, str, str] | None:
    """(component, fast release, slow release) of a sentence that holds two releases of one component
    against each other with "than": "nccl2.7.8 is lower than nccl 2.5.6", "slower in Environment 2
    (torch 2.3) than in Environment 1 (torch 2.1)", "v1.0 is faster than v1.1" read with its
    component named on both sides. The comparative before "than" says which side is slow."""
    than = _THAN.search(sentence)
    if than is None:
        return None
    head = sentence[:than.start()]
    slow_w = [m.start() for m in _SLOWER.finditer(head)]
    fast_w = [m.start() for m in _FASTER.finditer(head)]
    if not slow_w and not fast_w:
        return None
    slower = bool(slow_w) and (not fast_w or slow_w[-1] > fast_w[-1])
    for component, pat in _VERSION_PATTERNS:
        if component not in _COMPARED:
            continue
        found = [(m.start(), m.group(1)) for m in pat.finditer(sentence)]
        before = [v for pos, v in found if pos < than.start()]
        after = [v for pos, v in found if pos >= than.end()]
        if before and after and before[-1] != after[0]:
            near, far = before[-1], after[0]
            return (component, far, near) if slower else (component, near, far)
    return None


def _sentences(text: str):
    start = 0
    for m in re.finditer(r"[.!?;](?:\s|$)", text):
        yield text[start:m.end()], start
        start = m.end()
    if start < len(text):
        yield text[start:], start


_CLAUSE = lazyre.compile(r"[,;(]|\b(?:and|but|while|whereas|now|this one|these)\b", re.I)


def _aside(before: str) -> bool:
    """A comparison or past word earlier in the same clause (after the last comma, 'and', 'but')."""
    clause = _CLAUSE.split(before)[-1]
    return bool(_ASIDE.search(clause))


#: what may stand between a GPU's name and its form factor: memory size and type, a bracket, a
#: comma or dash ("A100 40GB PCIe", "A100-PCIE-40GB", "A100 (PCIe, 40 GB)", "H100 80GB HBM3 SXM5"),
#: and Markdown emphasis around the form ("A100-80GB **PCIe**")
_FORM_GAP = r"[\s\-(,/]{0,3}(?:\d{1,3}\s?GB[\s\-,/]{0,3}(?:HBM\w{0,2}e?[\s\-,/]{0,3})?)?[*_]{0,2}"

#: "PCIe" that names the bus rather than the card: "A100 80GB, PCIe Gen4 x16 slots"
_BUS_AFTER = r"(?!\s{0,2}(?:Gen|\d(?:\.\d)?\b|[x×]\d|slots?\b|switch|bus\b|links?\b|lanes?\b|root|bridge|riser))"


def _form_after(forms: dict[str, str], after: str) -> str:
    """The form factor written right after a GPU name, '' when none (the table's suffixes only)."""
    for suffix, f in sorted(forms.items(), key=lambda kv: -len(kv[0])):
        if re.match(_FORM_GAP + re.escape(suffix) + r"(?![\w])" + _BUS_AFTER, after, re.I):
            return f
    return ""


def _count_after(after: str) -> int | None:
    """A count written after the part: "H100 PCIe 80GB x 8", "A100 PCIe (x4)"."""
    m = re.match(r"[^.;:]{0,24}?(?<![\w.])[x×]\s{0,2}(\d{1,3})(?![\w.])(?!\s{0,2}(?:slots?|lanes?|links?)\b)", after)
    if m and 0 < int(m.group(1)) <= 512:
        return int(m.group(1))
    return None


#: what a plain number before a GPU model can count instead of GPUs: the machines holding them
_MACHINE_AFTER = lazyre.compile(
    r"^(?:[\s-]{1,2}(?:SXM\d?|PCIe|NVL|\d{2,3}\s?GB|GPU))*[\s-]{1,2}(?:servers?|nodes?|machines?|hosts?|boxes|"
    r"systems?|instances?|VMs?|workers?)\b", re.I)


def _counts_machines(before: str, after: str) -> bool:
    """True for "2 H200 servers", "4 A100 nodes": a bare number (no ``x``) then the model and a
    word for a machine counts machines."""
    if re.search(r"[x×]\s{0,2}(?:(?:NVIDIA|Mellanox|Nvidia)\s{1,2})?$", before):
        return False
    return bool(_MACHINE_AFTER.match(after))


def _count_suffix(after: str) -> int | None:
    """A count glued to the part's name: "gtx1070 * 2", "RTX 3090 x2", "V100 ×4" (not "x16 slots")."""
    m = re.match(r"\s{0,2}[*x×]\s{0,2}(\d{1,3})(?![\w.])(?!\s{0,2}(?:slots?|lanes?|links?|GB|G)\b)", after)
    if m and 0 < int(m.group(1)) <= 512:
        return int(m.group(1))
    return None


def _count_before(before: str) -> int | None:
    m = re.search(r"(?<![\w.])(\d{1,3})\s{0,2}(?:[x×]\s{0,2}|\s)(?:(?:NVIDIA|Mellanox|Nvidia)\s{1,2})?$", before)
    if m:
        n = int(m.group(1))
        return n if 0 < n <= 512 else None
    return None


def _version_num(component: str, version: str) -> int | None:
    parts = re.findall(r"\d+", version.split("-")[0].split("+")[0])
    try:
        if component == "nccl" and len(parts) >= 2:
            return int(parts[0]) * 10000 + int(parts[1]) * 100 + (int(parts[2]) if len(parts) > 2 else 0)
        if component == "cuda" and len(parts) >= 2:
            return int(parts[0]) * 100 + int(parts[1])
    except ValueError:
        return None
    return None


def _cut(text: str, n: int = _TEXT_MAX) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def parse(doc: Document, ctx: ParseContext) -> None:
    lines = doc.lines
    if len(lines) > MAX_LINES:
        ctx.warn(MAX_LINES, f"{len(lines)} lines: the user's words are read up to line {MAX_LINES} only")
        lines = lines[:MAX_LINES]
    try:
        code, tables = _blocks(lines)
    except Exception as exc:  # markdown-it never should; then read every line as prose
        ctx.warn(None, f"Markdown structure not read: {type(exc).__name__}")
        code, tables = set(), []
    reader = _Reader(doc, ctx)
    table_lines = set()
    for header, rows in tables:
        reader.table(header, rows)
        table_lines.update(i for i, _ in rows)
    paragraphs = list(_wrapped(lines, code, table_lines))
    for _, joined, offsets in paragraphs:
        reader.wrapped.update((i, (at, joined)) for i, at in offsets.items())
    for i, text in enumerate(lines):
        stripped = text.lstrip()
        if stripped.startswith("#") and i not in code:
            reader.heading = stripped.lstrip("#").strip()
        prose_cloud.line(reader, i, text[:MAX_LINE])
        if i in table_lines or stripped.startswith("|"):
            reader.settings(i, text[:MAX_LINE])
            continue
        reader.line(i, text, i in code)
    # hard-wrapped paragraphs: what a user says across a line break is read once more, joined
    for first, joined, _ in paragraphs:
        reader.joined(first, joined)
    reader.finish()
    if not ctx.facts:
        raise NotApplicable("no statement about context, hardware, versions, settings, changes or numbers")


def read_leftover(doc: Document) -> ParseContext | None:
    """Run the reader on a document no format took; None when it holds no statement."""
    ctx = ParseContext(doc=doc, parser="prose")
    try:
        parse(doc, ctx)
    except NotApplicable:
        return None
    return ctx


FORMATS = [
    Format(
        name="prose",
        command="(the ticket's description, as written)",
        facts=("reported.context", "reported.inventory", "reported.version", "reported.setting",
               "reported.change", "reported.metric", "env.var", "launch.command", "nccl.version", "kernel.version",
               "gpu.summary", "platform.virtualization", "platform.cloud_sign"),
        sniff=sniff,
        parse=parse,
        description="a ticket's prose or Markdown: what the user states (facts with provenance 'reported')",
    )
]
