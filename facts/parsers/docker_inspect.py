"""docker inspect - Command

``docker inspect <container>`` (also ``podman inspect``): a JSON array with one object per
container (a single object, or ``--format '{{json .HostConfig}}'`` output, is accepted too).
Yields one ``container.spec`` per container and the environment of ``Config.Env`` (the image
ENV merged with ``-e``, later duplicates win) as ``env.var`` facts plus one ``env.dump``, all
scoped ``container``. That dump is ``complete``: ``Config.Env`` is the whole environment the
container's entrypoint starts with (the entrypoint may still add to it).

Fields (see formats/README.md section 14): ``HostConfig.ShmSize`` (67108864 = the 64 MiB
default), ``IpcMode``, ``NetworkMode``, ``Privileged``, ``CapAdd``, ``Devices[].PathOnHost``,
``DeviceRequests`` (``--gpus``; ``Count: -1`` = all), ``Ulimits`` (``memlock`` -1 = unlimited),
``CpusetCpus``, ``SecurityOpt`` (``seccomp=unconfined``), ``Mounts``/``Binds``.
Docker versions differ in null vs empty vs missing keys; all are accepted.

Sample input::

    [{"Name": "/trainer", "Config": {"Image": "nvcr.io/nvidia/pytorch:25.03-py3",
      "Env": ["NCCL_TOPO_FILE=/opt/topo/h100.xml", "HF_TOKEN=hf_abc"]},
      "HostConfig": {"ShmSize": 67108864, "IpcMode": "private", "NetworkMode": "host",
        "CapAdd": ["IPC_LOCK"], "Ulimits": [{"Name": "memlock", "Soft": -1, "Hard": -1}],
        "Devices": [{"PathOnHost": "/dev/infiniband/uverbs0"}],
        "DeviceRequests": [{"Count": -1, "Capabilities": [["gpu"]]}]},
      "Mounts": [{"Source": "/opt/topo", "Destination": "/opt/topo"}]}]

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "docker-inspect"); parse(doc, ctx)
    >>> spec = ctx.facts[0]
    >>> spec.name, spec.shm_bytes, spec.ipc_host, spec.network_host, spec.gpus
    ('trainer', 67108864, False, True, 'all')
    >>> spec.memlock_unlimited, spec.infiniband_device, spec.topo_file_mounted, spec.numa_syscalls
    (True, True, True, False)
    >>> [(f.name, f.value) for f in ctx.facts if f.fact_type == "env.var"]
    [('NCCL_TOPO_FILE', '/opt/topo/h100.xml'), ('HF_TOKEN', '<redacted>')]
    >>> sniff(doc) > 0.8
    True
"""

from __future__ import annotations

import json
import posixpath
import re
from typing import Any, Iterable

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable, ParseError, Scope
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.container import ContainerSpec
from clusterdx.facts.model.env import EnvDump, EnvVar
from clusterdx.facts.redact import redact_value


SAMPLE = """\
[{"Name": "/trainer", "Config": {"Image": "nvcr.io/nvidia/pytorch:25.03-py3",
  "Env": ["NCCL_TOPO_FILE=/opt/topo/h100.xml", "HF_TOKEN=hf_abc"]},
  "HostConfig": {"ShmSize": 67108864, "IpcMode": "private", "NetworkMode": "host",
    "CapAdd": ["IPC_LOCK"], "Ulimits": [{"Name": "memlock", "Soft": -1, "Hard": -1}],
    "Devices": [{"PathOnHost": "/dev/infiniband/uverbs0"}],
    "DeviceRequests": [{"Count": -1, "Capabilities": [["gpu"]]}]},
  "Mounts": [{"Source": "/opt/topo", "Destination": "/opt/topo"}]}]
"""

MAX_JSON_BYTES = 32 * 1024 * 1024
TOPOLOGYD_DIRS = ("/var/run/nvidia-topologyd", "/run/nvidia-topologyd")
NCCL_CONF_PATHS = ("/etc/nccl.conf",)

# -- helpers shared with k8s_manifest and launch_cmdline ---------------------------------------

_SIZE = lazyre.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?b?)\s*$", re.I)


def docker_size(text: str) -> int | None:
    """Bytes of a docker size (``--shm-size``: binary units, b/k/m/g/t, optional ``b``/``ib``).

    >>> docker_size("64m"), docker_size("1g"), docker_size("1073741824"), docker_size("8GB")
    (67108864, 1073741824, 1073741824, 8589934592)
    >>> docker_size("lots") is None
    True
    """
    m = _SIZE.match(text or "")
    if not m:
        return None
    mult = 1024 ** "bkmgtp".index((m.group(2) or "b").lower())
    value = float(m.group(1)) * mult
    return int(value) if value < 2 ** 63 else None


def _norm(path: str) -> str:
    path = path.strip()
    if not path.startswith("/"):
        return path
    return posixpath.normpath(path)


def covers(dest: str, path: str) -> bool:
    """True when a mount at ``dest`` makes ``path`` visible (same path or a parent directory).

    >>> covers("/opt/topo", "/opt/topo/h100.xml"), covers("/opt/topology", "/opt/topo/x.xml")
    (True, False)
    """
    d, p = _norm(dest), _norm(path)
    if not d.startswith("/") or not p.startswith("/"):
        return False
    return p == d or p.startswith(d.rstrip("/") + "/")


def topo_mounted(dests: Iterable[str], env: dict[str, str]) -> bool:
    """A mount covers NCCL_TOPO_FILE (when set) or the nvidia-topologyd directory."""
    dests = [d for d in dests if d]
    topo = env.get("NCCL_TOPO_FILE", "").strip()
    if topo and any(covers(d, topo) for d in dests):
        return True
    return any(covers(t, d) or covers(d, t + "/virtualTopology.xml") for d in dests for t in TOPOLOGYD_DIRS)


def nccl_conf_mounted(dests: Iterable[str], env: dict[str, str]) -> bool:
    """A mount covers /etc/nccl.conf, a ``.nccl.conf`` in a home directory or NCCL_CONF_FILE."""
    targets = list(NCCL_CONF_PATHS)
    if env.get("NCCL_CONF_FILE", "").strip():
        targets.append(env["NCCL_CONF_FILE"].strip())
    for d in dests:
        if not d:
            continue
        if any(covers(d, t) and _norm(d) not in ("/", "/etc") for t in targets):
            return True
        if _norm(d).endswith("/.nccl.conf"):
            return True
    return False


def env_facts(doc: Document, ctx: ParseContext, pairs: list[tuple[str, str, int]], *, names: list[str],
              complete: bool, filt: str, markers: list[str], index: int | None, end: int | None = None) -> None:
    """``env.var`` for each (name, value, line index) and one ``env.dump``, scoped container."""
    for name, value, i in pairs:
        shown = redact_value(name, value) if doc.redact else value
        ctx.add(EnvVar, i, scope=Scope.container, name=name, value=shown, redacted=shown != value)
    ctx.add(EnvDump, index, end, scope=Scope.container, var_count=len(set(names)), names=sorted(set(names)),
            complete=complete, filter=filt, container_markers=markers)


def load_json_lenient(doc: Document) -> tuple[Any, int]:
    """JSON value of the document, skipping lines before the first ``[``/``{`` line (prompts,
    warnings); (value, index of the first JSON line). Truncated JSON is a ParseError."""
    start = next((i for i, ln in enumerate(doc.lines) if ln.lstrip().startswith(("[", "{"))), None)
    if start is None:
        raise NotApplicable("no JSON here")
    text = "\n".join(doc.lines[start:])
    if len(text) > MAX_JSON_BYTES:
        raise ParseError(f"JSON larger than {MAX_JSON_BYTES} bytes", doc.lineno(start))
    try:
        return json.loads(text), start
    except RecursionError:
        raise ParseError("JSON nested too deeply", doc.lineno(start)) from None
    except json.JSONDecodeError as exc:
        raise ParseError(f"malformed or truncated JSON: {exc.msg}", doc.lineno(start + exc.lineno - 1)) from None


# -- docker inspect -----------------------------------------------------------------------------

def _d(obj: Any, key: str) -> dict:
    v = obj.get(key) if isinstance(obj, dict) else None
    return v if isinstance(v, dict) else {}


def _l(obj: Any, key: str) -> list:
    v = obj.get(key) if isinstance(obj, dict) else None
    return v if isinstance(v, list) else []


def _s(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _b(v: Any) -> bool | None:
    return v if isinstance(v, bool) else None


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _caps(values: Iterable[Any]) -> list[str]:
    out = []
    for v in values:
        if isinstance(v, str) and v.strip():
            c = v.strip().upper()
            out.append(c[4:] if c.startswith("CAP_") else c)
    return out


def _gpus(host: dict, env: dict[str, str]) -> str:
    for req in _l(host, "DeviceRequests"):
        if not isinstance(req, dict):
            continue
        caps = [c for group in _l(req, "Capabilities") if isinstance(group, list) for c in group]
        if "gpu" not in caps and _s(req.get("Driver")) != "nvidia":
            continue
        ids = [str(x) for x in _l(req, "DeviceIDs")]
        if ids:
            return "device=" + ",".join(ids)
        count = _int(req.get("Count"))
        if count is not None:
            return "all" if count < 0 else str(count)
    if _s(host.get("Runtime")) == "nvidia" and env.get("NVIDIA_VISIBLE_DEVICES"):
        return env["NVIDIA_VISIBLE_DEVICES"]
    return ""


def _line_of(doc: Document, start: int, pattern: str) -> int | None:
    rx = re.compile(pattern)
    for i in range(start, len(doc.lines)):
        if rx.search(doc.lines[i]):
            return i
    return None


def _container(doc: Document, ctx: ParseContext, obj: dict, start: int) -> int:
    """Facts of one inspected container; returns the line index to search the next one from."""
    config = _d(obj, "Config")
    host = _d(obj, "HostConfig")
    if not host and ("ShmSize" in obj or "IpcMode" in obj):  # {{json .HostConfig}}
        host = obj
    if not host and not config:
        return start
    name = _s(obj.get("Name")).lstrip("/")
    first = _line_of(doc, start, re.escape(json.dumps(name))[1:-1]) if name else None
    first = start if first is None else first

    pairs: list[tuple[str, str, int]] = []
    env: dict[str, str] = {}
    env_line = _line_of(doc, first, r'"Env"\s*:')
    env_line = first if env_line is None else env_line
    for k, item in enumerate(_l(config, "Env")):
        if not isinstance(item, str) or "=" not in item:
            continue
        n, v = item.split("=", 1)
        if not n:
            continue
        env[n] = v
        at = env_line + 1 + k if env_line + 1 + k < len(doc.lines) and n in doc.lines[env_line + 1 + k] else env_line
        pairs.append((n, v, at))
    # later duplicates win
    last = {n: (n, v, i) for n, v, i in pairs}
    pairs = list(last.values())

    privileged = _b(host.get("Privileged"))
    ipc = _s(host.get("IpcMode"))
    net = _s(host.get("NetworkMode"))
    ipc_host = (ipc == "host") if ipc else None
    shm = _int(host.get("ShmSize"))
    if ipc_host or (shm is not None and shm <= 0):
        shm = None
    memlock = None
    for u in _l(host, "Ulimits"):
        if isinstance(u, dict) and _s(u.get("Name")).lower() == "memlock":
            memlock = _int(u.get("Soft")) == -1 and _int(u.get("Hard")) == -1
    cap_add = _caps(_l(host, "CapAdd"))
    devices = [_s(d.get("PathOnHost")) for d in _l(host, "Devices") if isinstance(d, dict) and _s(d.get("PathOnHost"))]
    mounts, dests = [], []
    for m in _l(obj, "Mounts"):
        if isinstance(m, dict):
            src, dst = _s(m.get("Source")) or _s(m.get("Name")), _s(m.get("Destination"))
            mounts.append(f"{src}:{dst}")
            dests.append(dst)
    if not mounts:
        for b in _l(host, "Binds"):
            if isinstance(b, str) and ":" in b:
                src, dst = b.split(":")[:2]
                mounts.append(f"{src}:{dst}")
                dests.append(dst)
    tmpfs = _d(host, "Tmpfs")
    for dst in tmpfs:
        mounts.append(f"tmpfs:{dst}")
        dests.append(dst)
        if _norm(dst) == "/dev/shm" and not ipc_host:
            m = re.search(r"size=([^,]+)", _s(tmpfs[dst]))
            shm = docker_size(m.group(1)) if m else None
    seccomp_off = any(isinstance(o, str) and re.match(r"seccomp[=:]unconfined$", o.strip())
                      for o in _l(host, "SecurityOpt"))
    infiniband = True if privileged else any(d.startswith("/dev/infiniband") for d in devices)
    ctx.add(
        ContainerSpec, first, scope=Scope.container, runtime="docker", name=name,
        image=_s(config.get("Image")), privileged=privileged, ipc_host=ipc_host,
        network_host=(net == "host") if net else None, shm_bytes=shm, memlock_unlimited=memlock,
        cap_add=cap_add, devices=devices, infiniband_device=infiniband, gpus=_gpus(host, env),
        rdma_resources=[], hugepages=",".join(f"hugetlbfs:{d}" for d in dests if "hugepages" in d),
        mounts=mounts, topo_file_mounted=topo_mounted(dests, env), nccl_conf_mounted=nccl_conf_mounted(dests, env),
        cpuset=_s(host.get("CpusetCpus")),
        numa_syscalls=bool(privileged or "SYS_NICE" in cap_add or "ALL" in cap_add or seccomp_off),
    )
    if "Env" in config:
        env_facts(doc, ctx, pairs, names=list(env), complete=True, filt="",
                  markers=["spec:docker inspect"], index=env_line)
    return max(first, env_line) + 1


def parse(doc: Document, ctx: ParseContext) -> None:
    data, start = load_json_lenient(doc)
    objs = data if isinstance(data, list) else [data]
    cursor = start
    for obj in objs:
        if isinstance(obj, dict):
            cursor = min(_container(doc, ctx, obj, cursor), max(len(doc.lines) - 1, 0))
    if not ctx.facts:
        raise NotApplicable("no container objects (Config/HostConfig) in this JSON")


_KEYS = lazyre.compile(r'^\s*"(HostConfig|Config|Mounts|ShmSize|IpcMode|NetworkMode|GraphDriver|ResolvConfPath|'
                   r'AppArmorProfile|RestartCount|CapAdd|DeviceRequests|Ulimits)"\s*:')


def sniff(doc: Document) -> float:
    head = doc.lines[:200]
    start = next((i for i, ln in enumerate(head) if ln.strip()), None)
    if start is None:
        return 0.0
    json_start = next((i for i, ln in enumerate(head) if ln.lstrip().startswith(("[", "{"))), None)
    if json_start is None or json_start - start > 5:
        return 0.0
    keys = {m.group(1) for ln in head[json_start:] if (m := _KEYS.match(ln))}
    text = " ".join(head[json_start:json_start + 5])
    keys |= set(re.findall(r'"(HostConfig|ShmSize|IpcMode|NetworkMode)"\s*:', text))
    if not keys:
        return 0.0
    score = 0.35 + 0.12 * len(keys)
    if "HostConfig" in keys or {"ShmSize", "IpcMode"} <= keys:
        score += 0.2
    return min(0.95, score)


FORMATS = [
    Format(
        name="docker-inspect",
        command="docker inspect <container>",
        facts=("container.spec", "env.var", "env.dump"),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\b(?:docker|podman|nerdctl)\s+(?:container\s+)?inspect\b",),
        description="docker inspect JSON: shm size, IPC/network mode, ulimits, devices, GPUs, mounts, env",
    )
]
