"""python -m torch.utils.collect_env / vllm collect-env - Command

The environment report PyTorch's and vLLM's issue templates ask for, pasted whole or in part into
most framework tickets: ``Key: value`` lines (PyTorch and CUDA build, OS, the Python platform
string that names the kernel, the driver), the GPU list of ``nvidia-smi -L`` without UUIDs, the
pip and conda package list (``[pip3] nvidia-nccl-cu12==2.20.5``: the NCCL wheel the framework
loads), and in recent versions two tool outputs embedded whole: ``lscpu`` after ``CPU:`` and
``nvidia-smi topo -m`` after ``GPU Topology:`` (vLLM). Yields ``gpu.device`` per listed GPU and
one ``gpu.summary`` (count, models, driver), ``nccl.version`` from an NCCL package,
``kernel.version`` from the platform string, and what the embedded sections hold, read by their
own formats (``cpu.info``, ``topo.gpu`` ...). A single GPU is printed on the key's own line.

Sample input (PyTorch 2.3 with vLLM's additions, shortened)::

    PyTorch version: 2.3.0+cu121
    CUDA used to build PyTorch: 12.1
    OS: Ubuntu 22.04.4 LTS (x86_64)
    Python platform: Linux-5.15.0-105-generic-x86_64-with-glibc2.35
    GPU models and configuration:
    GPU 0: NVIDIA RTX 6000 Ada Generation
    GPU 1: NVIDIA RTX 6000 Ada Generation

    Nvidia driver version: 550.54.15

    Versions of relevant libraries:
    [pip3] nvidia-nccl-cu12==2.20.5
    [pip3] torch==2.3.0
    GPU Topology:
    	GPU0	GPU1	CPU Affinity	NUMA Affinity	GPU NUMA ID
    GPU0	 X 	NODE	0-31	0		N/A
    GPU1	NODE	 X 	0-31	0		N/A

    Legend:

      X    = Self

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "torch-collect-env"); parse(doc, ctx)
    >>> [(f.gpu, f.name) for f in ctx.facts if f.fact_type == "gpu.device"]
    [(0, 'NVIDIA RTX 6000 Ada Generation'), (1, 'NVIDIA RTX 6000 Ada Generation')]
    >>> [(f.version, f.version_num) for f in ctx.facts if f.fact_type == "nccl.version"]
    [('2.20.5', 22005)]
    >>> [f.release for f in ctx.facts if f.fact_type == "kernel.version"]
    ['5.15.0-105-generic']
    >>> sorted({f.fact_type for f in ctx.facts if f.fact_type.startswith("topo.")})
    ['topo.gpu', 'topo.link']
    >>> sniff(doc) >= 0.9, sniff(Document.from_text("PyTorch version: 2.3.0 is what we run\\n"))
    (True, 0.0)
"""

from __future__ import annotations

import re

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.gpu import GpuDevice, GpuSummary
from clusterdx.facts.model.nccl import NcclVersion
from clusterdx.facts.model.platform import KernelVersion


SAMPLE = """PyTorch version: 2.3.0+cu121
CUDA used to build PyTorch: 12.1
OS: Ubuntu 22.04.4 LTS (x86_64)
Python platform: Linux-5.15.0-105-generic-x86_64-with-glibc2.35
GPU models and configuration:
GPU 0: NVIDIA RTX 6000 Ada Generation
GPU 1: NVIDIA RTX 6000 Ada Generation

Nvidia driver version: 550.54.15

Versions of relevant libraries:
[pip3] nvidia-nccl-cu12==2.20.5
[pip3] torch==2.3.0
GPU Topology:
\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID
GPU0\t X \tNODE\t0-31\t0\t\tN/A
GPU1\tNODE\t X \t0-31\t0\t\tN/A

Legend:

  X    = Self
"""

#: keys only these reports print (any two identify one); vLLM >= 0.9 aligns the colons, SGLang's
#: check_env prints its own short keys
_KEYS = ("PyTorch version", "Is debug build", "CUDA used to build PyTorch", "ROCM used to build PyTorch",
         "GPU models and configuration", "Nvidia driver version", "cuDNN version", "Is CUDA available",
         "CUDA_MODULE_LOADING set to", "Is XNNPACK available", "Versions of relevant libraries",
         "vLLM Version", "vLLM Build Flags", "Python platform", "Libc version", "CUDA Driver Version",
         "CUDA available", "sglang", "flashinfer")
_KEY = lazyre.compile(r"^\s{0,4}(" + "|".join(re.escape(k) for k in _KEYS) + r")\s{0,40}:(.{0,300})$")
#: ``GPU 0: NVIDIA A10``; SGLang groups alike GPUs: ``GPU 0,1,2,3: NVIDIA RTX A6000``
_GPU = lazyre.compile(r"^\s{0,4}GPU (\d{1,3}(?:,\d{1,3}){0,63}): (\S.{0,80}?)\s*$")
_DRIVER = lazyre.compile(r"^\s{0,4}(?:Nvidia driver version|CUDA Driver Version)\s{0,40}:\s*(\d{2,4}(?:\.\d{1,4}){1,2})\s*$")
_PLATFORM = lazyre.compile(r"^\s{0,4}Python platform\s{0,40}:\s*Linux-(\d{1,2}\.\d{1,3}[\w.+~-]{0,60}?)-(x86_64|aarch64|arm64|ppc64le)\b")
#: [pip3] nvidia-nccl-cu12==2.20.5, [conda] nvidia-nccl-cu12   2.20.5   pypi_0   pypi, [conda] nccl 2.18.3.1 h..
_NCCL_PKG = lazyre.compile(r"^\s{0,4}\[(?:pip3?|conda)\]\s{1,4}(?:nvidia-nccl-cu\d{2}|nccl)(?:==|\s{1,40})(\d{1,2}\.\d{1,3}\.\d{1,3})")
#: embedded tool outputs another format reads: ``CPU:`` / ``GPU Topology:`` (SGLang: ``NVIDIA
#: Topology:``), or vLLM >= 0.9's ``CPU Info`` banner between rules of ``=``
_SECTIONS = {"CPU": "lscpu", "CPU Info": "lscpu", "GPU Topology": "nvidia-smi-topo", "NVIDIA Topology": "nvidia-smi-topo"}
_SECTION = lazyre.compile(r"^\s{0,12}(CPU|GPU Topology|NVIDIA Topology)\s{0,2}:\s*$|^\s{0,12}(CPU Info)\s*$")
_RULE = lazyre.compile(r"^\s*={10,}\s*$")
#: what is left of a terminal's underline codes in a paste (vLLM underlines the topology header)
_ANSI = lazyre.compile(r"(?:\x1b)?\[\d{1,2}m")


def sniff(doc: Document) -> float:
    keys = {m.group(1) for ln in doc.lines[:600] if (m := _KEY.match(ln))}
    if len(keys) >= 4:  # above lscpu's and topo's own scores: their outputs sit inside this report
        return 0.99
    if len(keys) == 3:
        return 0.95
    if len(keys) == 2:
        return 0.8
    return 0.0


def parse(doc: Document, ctx: ParseContext) -> None:
    lines = doc.lines
    gpus: list[tuple[int, int, str]] = []
    driver = ""
    in_gpus = False
    #: SGLang lists its GPUs among its keys, without a "GPU models" header
    keyed = any(ln.startswith(("sglang:", "flashinfer:")) for ln in lines[:300])
    i = 0
    while i < len(lines):
        ln = lines[i]
        if m := _SECTION.match(ln):
            start = i + 2 if m.group(2) and i + 1 < len(lines) and _RULE.match(lines[i + 1]) else i + 1
            end = _section_end(lines, start)
            _read_section(doc, ctx, _SECTIONS[m.group(1) or m.group(2)], start, end)
            i = end
            in_gpus = False
            continue
        if (k := _KEY.match(ln)) and k.group(1) == "GPU models and configuration":
            rest = k.group(2).strip()
            in_gpus = True
            if rest and (g := _GPU.match(rest)):
                gpus.extend((i, int(k), g.group(2)) for k in g.group(1).split(","))
            elif rest and not rest.lower().startswith(("could not", "n/a")):
                gpus.append((i, 0, rest))  # one GPU: its name on the key's line
                in_gpus = False
        elif (in_gpus or keyed) and (g := _GPU.match(ln)):
            gpus.extend((i, int(k), g.group(2)) for k in g.group(1).split(","))
        elif in_gpus and ln.strip():
            in_gpus = False
        if m := _DRIVER.match(ln):
            driver = m.group(1)
        if m := _PLATFORM.match(ln):
            ctx.add(KernelVersion, i, release=m.group(1), arch=m.group(2), origin="collect_env")
        if m := _NCCL_PKG.match(ln):
            ctx.add(NcclVersion, i, version=m.group(1), version_num=_nccl_num(m.group(1)))
        i += 1
    for idx, gpu, name in gpus:
        ctx.add(GpuDevice, idx, gpu=gpu, name=name, driver_version=driver)
    if gpus:
        models = list(dict.fromkeys(name for _, _, name in gpus))
        ctx.add(GpuSummary, gpus[0][0], gpus[-1][0], gpus=len(gpus), driver_version=driver, models=models)
    if not ctx.facts:
        raise NotApplicable("no GPU, driver, NCCL package, platform or embedded section in the report")


def _nccl_num(version: str) -> int:
    major, minor, patch = (int(p) for p in version.split(".")[:3])
    return major * 10000 + minor * 100 + patch


def _section_end(lines: list[str], start: int) -> int:
    """Where an embedded tool output ends: at the next report key (``X version: ...``), section
    or ``=`` rule, or at the end."""
    for j in range(start, len(lines)):
        if _KEY.match(lines[j]) or _SECTION.match(lines[j]) or _RULE.match(lines[j]) or lines[j].startswith("[pip"):
            return j
    return len(lines)


def _read_section(doc: Document, ctx: ParseContext, fmt_name: str, start: int, end: int) -> None:
    """The embedded output read by its own format; its facts keep this input's line numbers, and
    a failure there costs that section only."""
    from clusterdx.facts.formats import all_formats

    if end <= start:
        return
    fmt = all_formats().get(fmt_name)
    sub = Document(name=doc.name, lines=[_ANSI.sub("", ln) for ln in doc.lines[start:end]], node=doc.node, scope=doc.scope,
                   redact=doc.redact, line_map=[doc.lineno(k) for k in range(start, end)])
    sub_ctx = ParseContext(sub, fmt_name, keeper=ctx.keeper)
    try:
        fmt.parse(sub, sub_ctx)
    except NotApplicable:
        return
    except Exception as exc:  # noqa: BLE001 -- the section is another tool's output, the rest stands
        ctx.warn(start, f"{fmt_name} section not read: {type(exc).__name__}: {exc}")
        return
    ctx.facts.extend(sub_ctx.facts)
    ctx.warnings.extend((line, f"{fmt_name} section: {message}") for line, message in sub_ctx.warnings[:10])


FORMATS = [
    Format(
        name="torch-collect-env",
        command="python -m torch.utils.collect_env",
        facts=("gpu.device", "gpu.summary", "nccl.version", "kernel.version", "cpu.info", "topo.gpu", "topo.link"),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\btorch\.utils\.collect_env\b", r"\bcollect_env\.py\b", r"\bvllm\s+collect-env\b"),
        description="PyTorch/vLLM environment report: GPUs, driver, NCCL package, kernel, embedded lscpu and topo -m",
    )
]
