"""kubectl get pod -o yaml - Command

Kubernetes manifests holding a pod spec: ``kubectl get pod -o yaml`` (or ``-o json``), a
``List`` of them, and the objects users write (Pod, Job, CronJob, Deployment, StatefulSet,
DaemonSet, kubeflow PyTorchJob/MPIJob ...), several per file separated by ``---``. kubectl
warnings and prompts before the YAML are skipped. One ``container.spec`` per container
(``initContainers`` are skipped), and the literal ``env`` values of each container as
``env.var`` facts with one ``env.dump`` (scope ``container``, ``complete=False``: a spec does not
show the image's own ENV, ``valueFrom`` values nor ``envFrom`` sources; ``filter`` says
"container spec").

What is read (formats/README.md section 14): ``hostNetwork``/``hostIPC`` (absent = False),
``securityContext`` (``privileged``, ``capabilities.add``, ``seccompProfile``), ``resources``
(``nvidia.com/gpu``, RDMA/SR-IOV device-plugin resources, ``hugepages-*``), ``volumeMounts``
joined with ``volumes`` (``emptyDir: {medium: Memory, sizeLimit}`` on ``/dev/shm``, ``hostPath``
``/dev/infiniband``). Without a volume on ``/dev/shm`` (and without hostIPC) the container runtime
gives the 64 MiB default, so ``shm_bytes`` is 67108864. ``numa_syscalls`` is True with
privileged, ``SYS_NICE`` or an ``Unconfined`` seccomp profile, False with ``RuntimeDefault`` /
``Localhost`` and neither, None when no profile is set (the kubelet default decides).

Sample input::

    apiVersion: v1
    kind: Pod
    metadata:
      name: w1
    spec:
      hostNetwork: true
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:25.03-py3
        env:
        - name: NCCL_IB_HCA
          value: mlx5_0,mlx5_3
        resources:
          limits: {nvidia.com/gpu: "8", rdma/rdma_shared_device_a: "1"}
        securityContext:
          capabilities: {add: [IPC_LOCK]}
        volumeMounts:
        - {name: dshm, mountPath: /dev/shm}
      volumes:
      - name: dshm
        emptyDir: {medium: Memory, sizeLimit: 64Gi}

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "k8s-pod"); parse(doc, ctx)
    >>> spec = ctx.facts[0]
    >>> spec.name, spec.shm_bytes, spec.network_host, spec.ipc_host, spec.gpus, spec.rdma_resources
    ('w1/trainer', 68719476736, True, False, '8', ['rdma/rdma_shared_device_a'])
    >>> spec.infiniband_device, spec.cap_add, spec.source.line
    (True, ['IPC_LOCK'], 8)
    >>> [(f.name, f.value, f.source.line) for f in ctx.facts if f.fact_type == "env.var"]
    [('NCCL_IB_HCA', 'mlx5_0,mlx5_3', 11)]
    >>> sniff(doc) > 0.8
    True
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any, Iterator

import yaml

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable, ParseError, Scope
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.container import ContainerSpec
from clusterdx.facts.parsers.docker_inspect import _norm, env_facts, nccl_conf_mounted, topo_mounted


SAMPLE = """\
apiVersion: v1
kind: Pod
metadata:
  name: w1
spec:
  hostNetwork: true
  containers:
  - name: trainer
    image: nvcr.io/nvidia/pytorch:25.03-py3
    env:
    - name: NCCL_IB_HCA
      value: mlx5_0,mlx5_3
    resources:
      limits: {nvidia.com/gpu: "8", rdma/rdma_shared_device_a: "1"}
    securityContext:
      capabilities: {add: [IPC_LOCK]}
    volumeMounts:
    - {name: dshm, mountPath: /dev/shm}
  volumes:
  - name: dshm
    emptyDir: {medium: Memory, sizeLimit: 64Gi}
"""

MAX_YAML_CHARS = 8 * 1024 * 1024
MAX_DOCUMENTS = 500
MAX_NODES = 200_000
RUNTIME_DEFAULT_SHM = 64 * 1024 * 1024

_SUFFIX = {"Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "Pi": 2 ** 50, "Ei": 2 ** 60,
           "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": 1, "k": 10 ** 3,
           "M": 10 ** 6, "G": 10 ** 9, "T": 10 ** 12, "P": 10 ** 15, "E": 10 ** 18}
_QUANTITY = lazyre.compile(r"^\s*([+-]?\d+(?:\.\d*)?|[+-]?\.\d+)(?:([eE][+-]?\d{1,3})|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)\s*$")


def quantity(value: Any) -> int | None:
    """Bytes (or count) of a Kubernetes quantity: ``64Gi``, ``1600M``, ``1e9``, ``8``.

    >>> quantity("64Gi"), quantity("1G"), quantity(8), quantity("1e3"), quantity("x")
    (68719476736, 1000000000, 8, 1000, None)
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if abs(value) < 2 ** 63 else None
    if not isinstance(value, str):
        return None
    m = _QUANTITY.match(value)
    if not m:
        return None
    try:
        num = Decimal(m.group(1) + (m.group(2) or ""))
    except InvalidOperation:
        return None
    out = num * _SUFFIX[m.group(3) or ""]
    return int(out) if abs(out) < 2 ** 63 else None


def _d(obj: Any, key: str) -> dict:
    v = obj.get(key) if isinstance(obj, dict) else None
    return v if isinstance(v, dict) else {}


def _l(obj: Any, key: str) -> list:
    v = obj.get(key) if isinstance(obj, dict) else None
    return v if isinstance(v, list) else []


def _s(v: Any) -> str:
    if isinstance(v, bool):
        return str(v).lower()
    if v is None or isinstance(v, (dict, list, set, bytes)):
        return ""
    return str(v)


def _b(v: Any) -> bool | None:
    return v if isinstance(v, bool) else None


def _pod_specs(root: Any) -> Iterator[tuple[str, dict]]:
    """(owner name, pod spec) for every pod spec in a manifest: any dict with a ``containers`` list."""
    seen: set[int] = set()
    budget = [MAX_NODES]

    def walk(obj: Any, name: str) -> Iterator[tuple[str, dict]]:
        if budget[0] <= 0 or id(obj) in seen:
            return
        budget[0] -= 1
        if isinstance(obj, dict):
            seen.add(id(obj))
            meta = obj.get("metadata")
            if isinstance(meta, dict) and isinstance(meta.get("name"), str) and meta["name"]:
                name = meta["name"]
            if isinstance(obj.get("containers"), list):
                yield name, obj
                return
            for k, v in obj.items():
                if k in ("status", "metadata"):
                    continue
                if isinstance(v, (dict, list)):
                    yield from walk(v, name)
        elif isinstance(obj, list):
            seen.add(id(obj))
            for v in obj:
                if isinstance(v, (dict, list)):
                    yield from walk(v, name)

    yield from walk(root, "")


def _is_rdma_resource(key: str) -> bool:
    k = key.lower()
    if k.startswith(("rdma/", "mellanox.com/")) or k == "vpc.amazonaws.com/efa":
        return True
    if k.startswith("nvidia.com/"):
        rest = k.split("/", 1)[1]
        return not rest.startswith(("gpu", "mig", "vgpu"))
    return any(w in k for w in ("rdma", "sriov", "roce", "hca"))


class _Lines:
    """Approximate line lookup: PyYAML's safe loader does not keep line numbers."""

    def __init__(self, doc: Document, start: int):
        self.doc, self.pos = doc, start

    def find(self, pattern: str, start: int | None = None, advance: bool = False) -> int | None:
        rx = re.compile(pattern)
        begin = self.pos if start is None else start
        for i in range(begin, len(self.doc.lines)):
            if rx.search(self.doc.lines[i]):
                if advance:
                    self.pos = i
                return i
        return None


def _q(text: str) -> str:
    return r"""["']?""" + re.escape(text) + r"""["']?"""


def _container(doc: Document, ctx: ParseContext, lines: _Lines, owner: str, pod: dict, c: dict) -> None:
    cname = _s(c.get("name"))
    at = lines.find(r"^\s*(?:-\s+)?\{?\s*name:\s*" + _q(cname) + r"\s*[,}]?\s*$", advance=True) if cname else None
    if at is None:
        at = lines.find(r"^\s*(?:-\s+)?image:\s*" + _q(_s(c.get("image"))), advance=True) if c.get("image") else None
    at = lines.pos if at is None else at

    volumes = {_s(v.get("name")): v for v in _l(pod, "volumes") if isinstance(v, dict)}
    env: dict[str, str] = {}
    names: list[str] = []
    pairs: list[tuple[str, str, int]] = []
    for e in _l(c, "env"):
        if not isinstance(e, dict) or not _s(e.get("name")):
            continue
        n = _s(e.get("name"))
        names.append(n)
        if "value" in e and not isinstance(e.get("value"), (dict, list)):
            v = _s(e.get("value"))
            env[n] = v
            i = lines.find(r"^\s*(?:-\s+)?\{?\s*name:\s*" + _q(n) + r"\s*[,}]?", start=at)
            pairs.append((n, v, at if i is None else i))
    last = {p[0]: p for p in pairs}
    pairs = list(last.values())

    sec = _d(c, "securityContext")
    pod_sec = _d(pod, "securityContext")
    privileged = _b(sec.get("privileged"))
    cap_add = []
    for v in _l(_d(sec, "capabilities"), "add"):
        if isinstance(v, str) and v.strip():
            cap = v.strip().upper()
            cap_add.append(cap[4:] if cap.startswith("CAP_") else cap)
    seccomp = _s(_d(sec, "seccompProfile").get("type") or _d(pod_sec, "seccompProfile").get("type"))
    if privileged or "SYS_NICE" in cap_add or "ALL" in cap_add or seccomp == "Unconfined":
        numa = True
    elif seccomp in ("RuntimeDefault", "Localhost"):
        numa = False
    else:
        numa = None

    res = _d(c, "resources")
    limits, requests = _d(res, "limits"), _d(res, "requests")
    resources = {**requests, **limits}
    gpus = _s(resources.get("nvidia.com/gpu", resources.get("amd.com/gpu", "")))
    rdma = sorted(k for k in resources if isinstance(k, str) and _is_rdma_resource(k))
    huge = [f"{k}={_s(v)}" for k, v in resources.items() if isinstance(k, str) and k.startswith("hugepages-")]

    ipc_host = bool(_b(pod.get("hostIPC")))
    net_host = bool(_b(pod.get("hostNetwork")))
    mounts, dests, devices = [], [], []
    shm: int | None = None if ipc_host else RUNTIME_DEFAULT_SHM
    infiniband = bool(privileged) or bool(rdma)
    for vm in _l(c, "volumeMounts"):
        if not isinstance(vm, dict):
            continue
        dst, vname = _s(vm.get("mountPath")), _s(vm.get("name"))
        vol = volumes.get(vname, {})
        if "hostPath" in vol:
            src = _s(_d(vol, "hostPath").get("path"))
            if src.startswith("/dev/"):
                devices.append(src)
                infiniband = infiniband or src.startswith("/dev/infiniband")
        else:
            kinds = [k for k in vol if k != "name"]
            kind = kinds[0] if kinds else "volume"
            ref = _d(vol, kind)
            src = f"{kind}/{_s(ref.get('claimName') or ref.get('name') or vname)}"
        if _s(vm.get("subPath")):
            src += "/" + _s(vm.get("subPath"))
        mounts.append(f"{src}:{dst}")
        dests.append(dst)
        ed = _d(vol, "emptyDir")
        medium = _s(ed.get("medium"))
        if medium.startswith("HugePages"):
            huge.append(f"emptyDir {medium}:{dst}")
        if _norm(dst) == "/dev/shm" and not ipc_host:
            if medium == "Memory":
                shm = quantity(ed.get("sizeLimit")) if ed.get("sizeLimit") is not None else None
            else:
                shm = None  # a disk-backed or host directory: no tmpfs size to read
    ctx.add(
        ContainerSpec, at, scope=Scope.container, runtime="kubernetes",
        name=f"{owner}/{cname}" if owner else cname, image=_s(c.get("image")), privileged=privileged,
        ipc_host=ipc_host, network_host=net_host, shm_bytes=shm, memlock_unlimited=None, cap_add=cap_add,
        devices=devices, infiniband_device=infiniband, gpus=gpus, rdma_resources=rdma,
        hugepages=",".join(huge), mounts=mounts, topo_file_mounted=topo_mounted(dests, env),
        nccl_conf_mounted=nccl_conf_mounted(dests, env), cpuset="", numa_syscalls=numa,
    )
    if names or _l(c, "envFrom"):
        filt = "container spec" + (" (envFrom not expanded)" if _l(c, "envFrom") else "")
        env_facts(doc, ctx, pairs, names=names, complete=False, filt=filt,
                  markers=["spec:kubernetes"], index=at)


_YAML_START = lazyre.compile(r"^(?:---|apiVersion:|kind:|items:|metadata:|spec:|\{|\[)")


def _start(doc: Document) -> int:
    for i, ln in enumerate(doc.lines[:500]):
        if _YAML_START.match(ln):
            return i
    return 0


def parse(doc: Document, ctx: ParseContext) -> None:
    start = _start(doc)
    text = "\n".join(doc.lines[start:])
    if len(text) > MAX_YAML_CHARS:
        raise ParseError(f"manifest larger than {MAX_YAML_CHARS} characters", doc.lineno(start))
    docs = []
    try:
        for i, d in enumerate(yaml.safe_load_all(text)):
            if i >= MAX_DOCUMENTS:
                ctx.warn(start, f"more than {MAX_DOCUMENTS} YAML documents; the rest was ignored")
                break
            docs.append(d)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = start + (mark.line if mark else 0)
        raise ParseError(f"malformed YAML: {exc.problem or exc}", doc.lineno(min(line, len(doc.lines) - 1))) from None
    except (yaml.YAMLError, RecursionError, ValueError, TypeError, OverflowError) as exc:
        raise ParseError(f"malformed YAML: {type(exc).__name__}: {exc}", doc.lineno(start)) from None
    lines = _Lines(doc, start)
    for d in docs:
        for owner, pod in _pod_specs(d):
            for c in _l(pod, "containers"):
                if isinstance(c, dict):
                    _container(doc, ctx, lines, owner, pod, c)
    if not ctx.facts:
        raise NotApplicable("no pod spec with containers")


_K8S_KEY = lazyre.compile(r"^\s*(?:-\s+)?(apiVersion|kind|containers|volumeMounts|hostNetwork|hostIPC|"
                      r"securityContext|restartPolicy|nodeSelector|tolerations|imagePullPolicy|volumes|"
                      r"template|resources)\s*:")
_KIND = lazyre.compile(r"^\s*(?:-\s+)?\"?kind\"?\s*:\s*\"?(Pod|Job|CronJob|Deployment|StatefulSet|DaemonSet|ReplicaSet|"
                   r"PyTorchJob|MPIJob|TFJob|JobSet|LeaderWorkerSet|RayJob|RayCluster|List|PodTemplate)\b")


def sniff(doc: Document) -> float:
    head = doc.lines[:200]
    keys = set()
    kind = api = False
    for ln in head:
        m = _K8S_KEY.match(ln)
        if m:
            keys.add(m.group(1))
        kind = kind or bool(_KIND.match(ln))
        api = api or bool(re.match(r'^\s*(?:-\s+)?"?apiVersion"?\s*:', ln))
    if "containers" not in keys:
        return 0.0
    score = 0.3 + 0.05 * len(keys)
    if kind:
        score += 0.25
    if api:
        score += 0.15
    return min(0.95, score)


FORMATS = [
    Format(
        name="k8s-pod",
        command="kubectl get pod <pod> -o yaml",
        facts=("container.spec", "env.var", "env.dump"),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"\bkubectl\b.*\bget\b.*-o\s*=?\s*(?:yaml|json)\b",
                          r"\bkubectl\b.*\bget\b.*--output[= ](?:yaml|json)\b"),
        description="Kubernetes manifest (Pod, Job, Deployment, PyTorchJob ...): host IPC/network, /dev/shm, "
                    "RDMA resources, capabilities, env",
    )
]
