"""Launch command lines - Job script

Command lines that start training or a container, as found in job scripts (``sbatch`` files,
``run.sh``), pasted commands or ``docker run`` one-liners: ``docker run`` (also ``podman`` /
``nerdctl``), ``srun`` (with pyxis ``--container-*`` options), ``mpirun`` / ``mpiexec``,
``torchrun`` / ``python -m torch.distributed.run``, ``kubectl run|exec``, ``enroot start``,
``apptainer|singularity exec|run``. Shell line continuations (``\\`` at the end of a line) are
joined; quotes follow shell rules (an unbalanced quote is tolerated); ``VAR=value`` prefixes,
``env``, ``exec``, ``time``, ``nohup`` and ``numactl ...`` in front of a launcher are understood;
``;``, ``&&``, ``|`` split commands and ``bash -c '...'`` is looked into.

Yields one ``launch.command`` per launcher (``srun ... torchrun ...`` gives two), and for a
container launcher (``docker run``, ``srun --container-image``, ``enroot start``,
``apptainer exec``) one ``container.spec`` (runtime ``docker``, ``pyxis``, ``enroot``,
``apptainer``). ``docker run -e NAME=value`` values become ``env.var`` facts with one
``env.dump`` (scope ``container``, ``complete=False``, filter "container spec"). Values passed by
pyxis are not given as ``env.var``: the image's own ENV wins over them unless the name is in
``--container-env``, so the line does not tell the value the container sees.

The ``#SBATCH`` directives of a batch script (those before its first command, as sbatch reads
them) give one more ``launch.command`` with launcher ``sbatch`` (nodes, tasks per node, tasks,
``--export``, ``--cpu-bind``, ``--gpu-bind``, ``--gpus-per-task``), when the script also holds a launch line.

CPU and memory binding becomes ``launch.binding``: ``numactl --cpunodebind/--membind/--physcpubind``
(also ``-N/-m/-C``, ``--preferred``, ``--interleave``, ``--localalloc``) and ``taskset -c LIST`` /
``taskset MASK`` / ``taskset -pc LIST PID``, whether in front of a launcher, on their own line,
inside ``bash -c '...'`` or in the arms of a binding table (``case $SLURM_LOCALID in 0) numactl
... ;;``, recorded as ``selector`` ``SLURM_LOCALID=0``; the arm's label may stand on a line of its
own, as a glob ``[0])``). A variable the arms export with different values (``0) export
NCCL_IB_HCA=mlx5_0:1 ;; 1) export NCCL_IB_HCA=mlx5_1:1 ;;``) becomes one ``launch.rank_env``. ``numactl --hardware`` / ``--show`` and
``taskset -p PID`` are queries, not bindings. The script's own ``export NAME=value`` lines become
``env.var`` facts with one ``env.dump`` (``complete=False``, filter "export lines of the script",
the document's scope: the launching shell, not a container); values the shell would expand
(``$IFACE``, backticks) are left out.

Defaults that a ``docker run`` line implies are filled in: no ``--shm-size`` and no
``--ipc=host`` means the 64 MiB default ``/dev/shm``; no ``--privileged``, ``--ipc`` or
``--network`` means False; no ``--ulimit memlock`` leaves ``memlock_unlimited`` None (the
daemon's default ulimits decide).

Sample input::

    #!/bin/bash
    #SBATCH -N 2 --ntasks-per-node=8
    docker run --rm --gpus all --ipc=host --ulimit memlock=-1 --device=/dev/infiniband \\
        -e NCCL_IB_HCA=mlx5_0,mlx5_3 -e NCCL_DEBUG -e HF_TOKEN=hf_secret \\
        -v /etc/nccl.conf:/etc/nccl.conf:ro nvcr.io/nvidia/pytorch:25.03-py3 \\
        torchrun --nproc-per-node=8 train.py

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "launch-cmdline"); parse(doc, ctx)
    >>> [(f.fact_type, f.source.line, f.source.end_line) for f in ctx.facts][:3]
    [('launch.command', 3, 6), ('container.spec', 3, 6), ('env.var', 4, 4)]
    >>> run = ctx.facts[0]
    >>> run.launcher, run.forwarded_env, run.env_set, run.container_image
    ('docker', ['NCCL_DEBUG'], ['NCCL_IB_HCA=mlx5_0,mlx5_3', 'HF_TOKEN=<redacted>'], 'nvcr.io/nvidia/pytorch:25.03-py3')
    >>> spec = ctx.facts[1]
    >>> spec.ipc_host, spec.shm_bytes, spec.memlock_unlimited, spec.devices, spec.nccl_conf_mounted
    (True, None, True, ['/dev/infiniband'], True)
    >>> torch = [f for f in ctx.facts if f.fact_type == "launch.command"][1]
    >>> torch.launcher, torch.nproc_per_node
    ('torchrun', 8)
    >>> sniff(doc) > 0.5
    True
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable, Scope
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.binding import LaunchBinding, LaunchRankEnv
from clusterdx.facts.model.container import ContainerSpec, LaunchCommand
from clusterdx.facts.model.env import EnvDump, EnvVar
from clusterdx.facts.parsers.docker_inspect import (
    _norm, docker_size, env_facts, nccl_conf_mounted, topo_mounted,
)
from clusterdx.facts.redact import redact_text, redact_value
from clusterdx.facts.transcript import parse_prompt


SAMPLE = """\
#!/bin/bash
#SBATCH -N 2 --ntasks-per-node=8
docker run --rm --gpus all --ipc=host --ulimit memlock=-1 --device=/dev/infiniband \\
    -e NCCL_IB_HCA=mlx5_0,mlx5_3 -e NCCL_DEBUG -e HF_TOKEN=hf_secret \\
    -v /etc/nccl.conf:/etc/nccl.conf:ro nvcr.io/nvidia/pytorch:25.03-py3 \\
    torchrun --nproc-per-node=8 train.py
"""

DOCKER_DEFAULT_SHM = 64 * 1024 * 1024
MAX_LINE_CHARS = 64 * 1024
MAX_CONTINUATION = 200
MAX_DEPTH = 4
#: launches read from one logical line; a line chaining more (``a | b | c ...`` thousands of
#: times) is read that far, with a warning, as each launch keeps the whole line as its command
MAX_LAUNCHES_PER_LINE = 32

_ASSIGN = lazyre.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)
_SEPARATORS = {";", "&&", "||", "|", "&", "|&", "(", ")", ";;"}

# -- option tables: options that take no value (everything else takes one) ---------------------

_DOCKER_BOOL = {
    "--rm", "-d", "--detach", "-i", "--interactive", "-t", "--tty", "--privileged", "--init",
    "-P", "--publish-all", "--read-only", "--sig-proxy", "--no-healthcheck", "--oom-kill-disable",
    "-q", "--quiet", "--help", "--use-api-socket",
}
_DOCKER_SHORT_BOOL = set("idtPq")
_SRUN_BOOL = {
    "-l", "--label", "-u", "--unbuffered", "-v", "--verbose", "-Q", "--quiet", "-K", "-k", "--no-kill",
    "-E", "--preserve-env", "-X", "--disable-status", "-Z", "--no-allocate", "-O", "--overcommit",
    "-s", "--oversubscribe", "-H", "--hold", "-I", "--immediate", "--exclusive", "--overlap",
    "--exact", "--pty", "--spread-job", "--test-only", "--usage", "--help", "--contiguous",
    "--multi-prog", "--reboot", "--container-remap-root", "--no-container-remap-root",
    "--container-mount-home", "--no-container-mount-home", "--container-writable", "--container-readonly",
    "--container-entrypoint", "--no-container-entrypoint", "--container-entrypoint-log",
    "--container-save-env", "--no-container-save-env", "--whole", "--use-min-nodes", "--kill-on-bad-exit",
    "--send-libs", "--no-send-libs", "--hint-help",
}
_MPI_BOOL = {
    "--allow-run-as-root", "--oversubscribe", "--report-bindings", "-report-bindings", "--tag-output",
    "-tag-output", "--timestamp-output", "-q", "--quiet", "-v", "--verbose", "--display-map",
    "-display-map", "--display-allocation", "--noprefix", "-nolocal", "--nolocal", "--use-hwthread-cpus",
    "-l", "-prepend-rank", "--prepend-rank", "-print-rank-map", "-bootstrap-exec-args", "--help",
    "-allow-run-as-root", "-oversubscribe", "--bind-to-core", "--bind-to-socket", "-bind-to-core",
    "-bind-to-socket", "-V", "--version", "-h", "--merge-stderr-to-stdout", "--enable-recovery",
    "--debug", "-d", "-nocolor", "-info",
}
_MPI_TWO = {"--mca", "-mca", "--gmca", "-gmca", "-genv", "-env", "--prtemca", "-prtemca"}
_TORCH_BOOL = {
    "--standalone", "--no-python", "--no_python", "-m", "--module", "--run-path", "--run_path",
    "--virtual-local-rank", "--virtual_local_rank", "--use-env", "--use_env", "--help", "-h",
}
_APPT_BOOL = {
    "--nv", "--nvccli", "--rocm", "-c", "--contain", "-C", "--containall", "-e", "--cleanenv",
    "--writable", "-w", "--writable-tmpfs", "--fakeroot", "-f", "-u", "--userns", "--no-home",
    "--no-init", "--no-mount", "--compat", "-i", "--ipc", "-n", "--net", "-p", "--pid", "--uts",
    "--no-privs", "--keep-privs", "--no-eval", "--unsquash", "--cwd-none", "--disable-cache",
}
_ENROOT_BOOL = {"-r", "--root", "-w", "--rw", "-m?"}


def _opt(tokens: list[str], i: int, booleans: set[str]) -> tuple[str, str | None, int]:
    """(option name, value or None, next index) for the option at ``tokens[i]``."""
    tok = tokens[i]
    if tok.startswith("--") and "=" in tok:
        name, value = tok.split("=", 1)
        return name, value, i + 1
    if tok in booleans:
        return tok, None, i + 1
    if tok.startswith("-") and not tok.startswith("--") and "=" in tok:
        name, value = tok.split("=", 1)  # -N=2, -np=16 (tolerated by some launchers)
        return name, value, i + 1
    if i + 1 < len(tokens) and tokens[i + 1] not in _SEPARATORS:
        return tok, tokens[i + 1], i + 2
    return tok, None, i + 1


def _int(text: str | None) -> int | None:
    """Leading integer; for a range ``2-4`` / ``1:4`` the upper bound."""
    if text is None:
        return None
    m = re.fullmatch(r"\s*(\d{1,9})(?:\s*[-:]\s*(\d{1,9}))?\s*", text)
    if not m:
        return None
    return int(m.group(2) or m.group(1))


# -- tokenising ---------------------------------------------------------------------------------

def logical_lines(doc: Document) -> list[tuple[int, int, str]]:
    """(first index, last index, text) with backslash continuations joined and prompts removed."""
    out: list[tuple[int, int, str]] = []
    i, n = 0, len(doc.lines)
    while i < n:
        start, parts = i, []
        line = doc.lines[i]
        while True:
            stripped = line.rstrip()
            if stripped.endswith("\\") and not stripped.endswith("\\\\") and i + 1 < n \
                    and i - start < MAX_CONTINUATION:
                parts.append(stripped[:-1])
                i += 1
                line = re.sub(r"^\s*>\s?", "", doc.lines[i]) if parse_prompt(doc.lines[start]) else doc.lines[i]
                continue
            parts.append(line)
            break
        text = " ".join(p.strip() for p in parts)[:MAX_LINE_CHARS]
        prompt = parse_prompt(text) if text[:1] in "$[( " or "@" in text[:80] else None
        if prompt is not None:
            text = prompt.command
        out.append((start, i, text))
        i += 1
    return out


def tokenize(text: str) -> list[str]:
    """Shell words and separators; an unbalanced quote is closed at the end of the line."""
    for suffix in ("", '"', "'"):
        try:
            lex = shlex.shlex(text + suffix, posix=True, punctuation_chars=";&|()")
            lex.whitespace_split = True
            lex.commenters = ""
            return _uncomment(list(lex))
        except ValueError:
            continue
    return _uncomment(text.split())


def _uncomment(tokens: list[str]) -> list[str]:
    """Drop a trailing ``# comment`` (a word starting with ``#``; ``nvcr.io#nvidia/x`` stays)."""
    for k, t in enumerate(tokens):
        if t.startswith("#"):
            return tokens[:k]
    return tokens


def _commands(tokens: list[str]) -> list[list[str]]:
    out, cur = [], []
    for t in tokens:
        if t in _SEPARATORS:
            if cur:
                out.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur:
        out.append(cur)
    return out


# -- launchers ----------------------------------------------------------------------------------

@dataclass
class Launch:
    launcher: str
    forwarded: list[str] = field(default_factory=list)
    env_set: list[tuple[str, str]] = field(default_factory=list)
    env_files: list[str] = field(default_factory=list)
    export_mode: str = ""
    image: str = ""
    cpu_bind: str = ""
    gpu_bind: str = ""
    gpus_per_task: int | None = None
    nproc_per_node: int | None = None
    nodes: int | None = None
    ntasks_per_node: int | None = None
    ntasks: int | None = None
    mpi: str = ""
    numa_binding: str = ""
    spec: dict | None = None
    rest: list[str] = field(default_factory=list)


def _base(tok: str) -> str:
    return os.path.basename(tok)


def _launcher_at(tokens: list[str], i: int) -> str | None:
    b = _base(tokens[i])
    nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
    if b in ("docker", "podman", "nerdctl"):
        if nxt in ("run", "create") or (nxt == "container" and i + 2 < len(tokens) and tokens[i + 2] in ("run", "create")):
            return "docker"
        return None
    if b == "srun":
        return "srun"
    if b in ("mpirun", "mpiexec", "orterun", "prterun", "mpiexec.hydra"):
        return "mpirun"
    if b == "torchrun":
        return "torchrun"
    if re.fullmatch(r"python[\d.]*", b) and nxt == "-m" and i + 2 < len(tokens) \
            and tokens[i + 2] in ("torch.distributed.run", "torch.distributed.launch"):
        return "torchrun"
    if b == "kubectl":
        return "kubectl" if any(t in ("run", "exec") for t in tokens[i + 1:i + 8]) else None
    if b == "enroot" and nxt in ("start", "exec"):
        return "enroot"
    if b in ("apptainer", "singularity") and nxt in ("exec", "run", "shell"):
        return "apptainer"
    return None


def _env_pair(arg: str, launch: Launch) -> None:
    m = _ASSIGN.match(arg)
    if m:
        launch.env_set.append((m.group(1), m.group(2)))
    elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", arg):
        launch.forwarded.append(arg)


def _docker(tokens: list[str], i: int) -> Launch:
    launch = Launch("docker")
    i += 2 if tokens[i + 1] != "container" else 3
    s: dict = {"runtime": "docker", "privileged": False, "ipc_host": False, "network_host": False,
               "shm_bytes": None, "memlock_unlimited": None, "cap_add": [], "devices": [], "gpus": "",
               "mounts": [], "dests": [], "cpuset": "", "name": "", "seccomp_off": False, "shm_set": False}
    while i < len(tokens):
        tok = tokens[i]
        if not tok.startswith("-") or tok == "-":
            break
        if re.fullmatch(r"-[idtPq]{2,}", tok):  # -it, -itd
            i += 1
            continue
        name, val, i = _opt(tokens, i, _DOCKER_BOOL)
        v = val or ""
        if name in ("-e", "--env"):
            _env_pair(v, launch)
        elif name == "--env-file":
            launch.env_files.append(v)
        elif name == "--privileged":
            s["privileged"] = val is None or v.lower() == "true"
        elif name == "--ipc":
            s["ipc_host"] = v == "host"
        elif name in ("--network", "--net"):
            s["network_host"] = v == "host"
        elif name == "--shm-size":
            s["shm_bytes"], s["shm_set"] = docker_size(v), True
        elif name == "--ulimit" and v.startswith("memlock="):
            lim = v.split("=", 1)[1].split(":")
            s["memlock_unlimited"] = all(x.strip() in ("-1", "unlimited") for x in lim)
        elif name == "--cap-add":
            s["cap_add"] += [c.strip().upper().removeprefix("CAP_") for c in v.split(",") if c.strip()]
        elif name == "--device":
            s["devices"].append(v.split(":", 1)[0])
        elif name == "--gpus":
            s["gpus"] = v.strip("'\"")
        elif name in ("-v", "--volume"):
            parts = v.split(":")
            if len(parts) >= 2:
                s["mounts"].append(f"{parts[0]}:{parts[1]}")
                s["dests"].append(parts[1])
            elif parts[0]:
                s["mounts"].append(f"volume:{parts[0]}")
                s["dests"].append(parts[0])
        elif name == "--mount":
            kv = dict(p.split("=", 1) if "=" in p else (p, "") for p in v.split(","))
            src = kv.get("source") or kv.get("src") or kv.get("type", "volume")
            dst = kv.get("target") or kv.get("destination") or kv.get("dst") or ""
            s["mounts"].append(f"{src}:{dst}")
            s["dests"].append(dst)
            if kv.get("type") == "tmpfs" and _norm(dst) == "/dev/shm":
                s["shm_bytes"], s["shm_set"] = docker_size(kv.get("tmpfs-size", "")), True
        elif name == "--tmpfs":
            dst, _, opts = v.partition(":")
            s["mounts"].append(f"tmpfs:{dst}")
            s["dests"].append(dst)
            if _norm(dst) == "/dev/shm":
                m = re.search(r"size=([^,]+)", opts)
                s["shm_bytes"], s["shm_set"] = (docker_size(m.group(1)) if m else None), True
        elif name == "--cpuset-cpus":
            s["cpuset"] = v
        elif name == "--name":
            s["name"] = v
        elif name == "--security-opt" and re.fullmatch(r"seccomp[=:]unconfined", v):
            s["seccomp_off"] = True
        elif name == "--runtime" and v == "nvidia" and not s["gpus"]:
            s["gpus"] = "runtime=nvidia"
    if i < len(tokens):
        launch.image = tokens[i]
        launch.rest = tokens[i + 1:]
    if s["ipc_host"]:
        s["shm_bytes"] = None
    elif not s["shm_set"]:
        s["shm_bytes"] = DOCKER_DEFAULT_SHM
    s["infiniband_device"] = s["privileged"] or any(d.startswith("/dev/infiniband") for d in s["devices"])
    s["numa_syscalls"] = s["privileged"] or bool({"SYS_NICE", "ALL"} & set(s["cap_add"])) or s["seccomp_off"]
    launch.spec = s
    return launch


def _srun(tokens: list[str], i: int) -> Launch:
    launch = Launch("srun")
    i += 1
    s: dict | None = None
    while i < len(tokens):
        tok = tokens[i]
        if not tok.startswith("-") or tok == "-":
            break
        if tok == "--":
            i += 1
            break
        name, val, i = _opt(tokens, i, _SRUN_BOOL)
        v = val or ""
        if name.startswith("--container-") or name in ("--no-container-mount-home",):
            if s is None:
                s = {"runtime": "pyxis", "ipc_host": True, "network_host": True, "mounts": [], "dests": [],
                     "name": "", "devices": []}
        if name == "--container-image":
            launch.image = v
        elif name == "--container-name":
            s["name"] = v
        elif name == "--container-env":
            launch.forwarded += [n.strip() for n in v.split(",") if n.strip()]
        elif name == "--container-mounts":
            for m in v.split(","):
                parts = m.split(":")
                if not parts[0]:
                    continue
                dst = parts[1] if len(parts) >= 2 and parts[1].startswith("/") else parts[0]
                s["mounts"].append(f"{parts[0]}:{dst}")
                s["dests"].append(dst)
        elif name == "--export":
            launch.export_mode = v
            for item in v.split(","):
                m = _ASSIGN.match(item)
                if m:
                    launch.env_set.append((m.group(1), m.group(2)))
        elif name in ("--cpu-bind", "--cpu_bind"):
            launch.cpu_bind = v
        elif name in ("--gpu-bind", "--gpu_bind"):
            launch.gpu_bind = v
        elif name in ("--gpus-per-task", "--gpus_per_task"):
            launch.gpus_per_task = _int(v.rsplit(":", 1)[-1])  # "1" or "a100:1"
        elif name in ("--mem-bind", "--mem_bind"):
            launch.numa_binding = "mem-bind=" + v
        elif name in ("-N", "--nodes"):
            launch.nodes = _int(v)
        elif name in ("-n", "--ntasks"):
            launch.ntasks = _int(v)
        elif name == "--ntasks-per-node":
            launch.ntasks_per_node = _int(v)
        elif name == "--mpi":
            launch.mpi = v
    launch.rest = tokens[i:]
    launch.spec = s
    return launch


def _mpirun(tokens: list[str], i: int) -> Launch:
    launch = Launch("mpirun")
    i += 1
    bind, hosts = [], None
    while i < len(tokens):
        tok = tokens[i]
        if not tok.startswith("-") or tok == "-":
            break
        if tok in _MPI_TWO:
            a = tokens[i + 1] if i + 1 < len(tokens) else ""
            b = tokens[i + 2] if i + 2 < len(tokens) else ""
            if tok in ("-genv", "-env") and a:
                launch.env_set.append((a, b))
            i += 3
            continue
        name, val, i = _opt(tokens, i, _MPI_BOOL)
        v = val or ""
        if name == "-x":
            _env_pair(v, launch)
            m = _ASSIGN.match(v)
            if m:
                launch.forwarded.append(m.group(1))
        elif name in ("-genvlist", "-envlist"):
            launch.forwarded += [n for n in v.split(",") if n]
        elif name in ("-np", "-n", "--np", "-c"):
            launch.ntasks = _int(v)
        elif name in ("-N", "--npernode", "-npernode", "-ppn", "--ppn", "-perhost"):
            launch.ntasks_per_node = _int(v)
        elif name in ("--map-by", "-map-by", "--bind-to", "-bind-to", "-bind-to-core", "--rank-by", "-rank-by"):
            bind.append(f"{name.lstrip('-')}={v}")
            m = re.match(r"ppr:(\d+):node", v)
            if m and name.endswith("map-by"):
                launch.ntasks_per_node = int(m.group(1))
        elif name in ("-H", "--host", "-host", "-hosts", "--hosts"):
            hosts = [h for h in v.split(",") if h]
        elif name in ("-x",):
            pass
    if hosts is not None:
        names = [h.split(":")[0] for h in hosts]
        # hosts masked before pasting (-host *,*, -H xxx:4,xxx:4) are distinct machines whose names
        # were hidden: counting distinct names would make them one node
        masked = all(re.fullmatch(r"[*x.]+|<[^>]*>|\.\.\.", n, re.I) for n in names)
        launch.nodes = len(names) if masked else len(set(names))
    launch.cpu_bind = " ".join(bind)
    launch.rest = tokens[i:]
    return launch


def _torchrun(tokens: list[str], i: int) -> Launch:
    launch = Launch("torchrun")
    i += 1 if _base(tokens[i]) == "torchrun" else 3
    while i < len(tokens):
        tok = tokens[i]
        if not tok.startswith("-") or tok == "-":
            break
        name, val, i = _opt(tokens, i, _TORCH_BOOL)
        key = name.replace("_", "-")
        if key == "--nproc-per-node":
            launch.nproc_per_node = _int(val)
        elif key == "--nnodes":
            launch.nodes = _int(val)
        elif key == "--numa-binding":
            launch.numa_binding = val or ""
    launch.rest = tokens[i:]
    return launch


def _kubectl(tokens: list[str], i: int) -> Launch:
    launch = Launch("kubectl")
    rest = tokens[i + 1:]
    if "--" in rest:
        k = rest.index("--")
        head, launch.rest = rest[:k], rest[k + 1:]
    else:
        head = rest
    j = 0
    while j < len(head):
        tok = head[j]
        if tok.startswith("--image="):
            launch.image = tok.split("=", 1)[1]
        elif tok == "--image" and j + 1 < len(head):
            launch.image = head[j + 1]
        elif tok.startswith("--env="):
            _env_pair(tok.split("=", 1)[1], launch)
        elif tok == "--env" and j + 1 < len(head):
            _env_pair(head[j + 1], launch)
        j += 1
    return launch


def _enroot(tokens: list[str], i: int) -> Launch:
    launch = Launch("other")
    i += 2
    s = {"runtime": "enroot", "ipc_host": True, "network_host": True, "mounts": [], "dests": [], "name": "",
         "devices": []}
    while i < len(tokens) and tokens[i].startswith("-"):
        name, val, i = _opt(tokens, i, {"-r", "--root", "-w", "--rw"})
        v = val or ""
        if name in ("-e", "--env"):
            _env_pair(v, launch)
        elif name in ("-m", "--mount"):
            parts = v.split(":") if ":" in v else v.split()
            if len(parts) >= 2:
                s["mounts"].append(f"{parts[0]}:{parts[1]}")
                s["dests"].append(parts[1])
    if i < len(tokens):
        launch.image = tokens[i]
        s["name"] = tokens[i]
        launch.rest = tokens[i + 1:]
    launch.spec = s
    return launch


def _apptainer(tokens: list[str], i: int) -> Launch:
    launch = Launch("other")
    i += 2
    s = {"runtime": "apptainer", "ipc_host": True, "network_host": True, "mounts": [], "dests": [], "name": "",
         "devices": [], "contain": False}
    while i < len(tokens) and tokens[i].startswith("-"):
        name, val, i = _opt(tokens, i, _APPT_BOOL)
        v = val or ""
        if name in ("--env",):
            for item in v.split(","):
                _env_pair(item, launch)
        elif name == "--env-file":
            launch.env_files.append(v)
        elif name in ("-B", "--bind", "--mount"):
            for b in v.split(","):
                parts = b.split(":")
                dst = parts[1] if len(parts) >= 2 else parts[0]
                s["mounts"].append(f"{parts[0]}:{dst}")
                s["dests"].append(dst)
        elif name in ("-c", "--contain", "-C", "--containall"):
            s["contain"] = True
        elif name in ("-i", "--ipc"):
            s["ipc_host"] = False
        elif name in ("-n", "--net"):
            s["network_host"] = False
    if i < len(tokens):
        launch.image = tokens[i]
        launch.rest = tokens[i + 1:]
    launch.spec = s
    return launch


_PARSERS = {"docker": _docker, "srun": _srun, "mpirun": _mpirun, "torchrun": _torchrun,
            "kubectl": _kubectl, "enroot": _enroot, "apptainer": _apptainer}
_WRAPPERS = {"exec", "time", "nohup", "env", "command", "builtin", "stdbuf", "sudo", "eval", "then", "do",
             "else", "!"}


def find_launches(tokens: list[str], depth: int = 0) -> list[Launch]:
    """Every launcher in one shell command (a token list without separators), outermost first."""
    out: list[Launch] = []
    prefix: list[tuple[str, str]] = []
    numa = ""
    i = 0
    while i < len(tokens) and depth <= MAX_DEPTH:
        tok = tokens[i]
        m = _ASSIGN.match(tok)
        if m and not out:
            prefix.append((m.group(1), m.group(2)))
            i += 1
            continue
        if tok in _WRAPPERS or (tok.startswith("-") and i > 0 and tokens[i - 1] in ("env", "sudo", "stdbuf")):
            i += 1
            continue
        if _base(tok) == "numactl":
            j = i + 1
            while j < len(tokens) and tokens[j].startswith("-"):
                j += 1 if "=" in tokens[j] or j + 1 >= len(tokens) or tokens[j + 1].startswith("-") else 2
            numa = " ".join(tokens[i:j])
            i = j
            continue
        if _base(tok) in ("bash", "sh", "zsh") and "-c" in tokens[i + 1:i + 3]:
            k = tokens.index("-c", i + 1)
            if k + 1 < len(tokens):
                for cmd in _commands(tokenize(tokens[k + 1])):
                    out += find_launches(cmd, depth + 1)
            break
        kind = _launcher_at(tokens, i)
        if kind is None:
            break
        launch = _PARSERS[kind](tokens, i)
        if not out:
            launch.env_set = prefix + launch.env_set
        if numa and not launch.numa_binding:
            launch.numa_binding = numa
        out.append(launch)
        tokens, i, numa = launch.rest, 0, ""
        if depth >= MAX_DEPTH:
            break
        depth += 1
    return out


# -- facts --------------------------------------------------------------------------------------

def _emit(doc: Document, ctx: ParseContext, launch: Launch, start: int, end: int, text: str,
          script_env: dict[str, str]) -> None:
    def shown(name: str, value: str) -> str:
        return redact_value(name, value) if doc.redact else value

    env_set = [f"{n}={shown(n, v)}" for n, v in launch.env_set]
    names = sorted(set(launch.forwarded) | {n for n, _ in launch.env_set})
    ctx.add(
        LaunchCommand, start, end, launcher="torchrun" if launch.launcher == "torchrun" else launch.launcher,
        forwarded_env=list(dict.fromkeys(launch.forwarded)), env_set=env_set, env_names=names,
        env_files=launch.env_files, export_mode=shown("export", launch.export_mode),
        container_image=launch.image, cpu_bind=launch.cpu_bind, gpu_bind=launch.gpu_bind,
        gpus_per_task=launch.gpus_per_task,
        nproc_per_node=launch.nproc_per_node, nodes=launch.nodes, ntasks_per_node=launch.ntasks_per_node,
        ntasks=launch.ntasks, mpi=launch.mpi, numa_binding=launch.numa_binding,
        script_env=sorted(script_env), command=text,
    )
    s = launch.spec
    if s is None:
        return
    # what the container may see: the script's exports, then what the line sets
    runtime = s["runtime"]
    passed = {n: v for n, v in script_env.items() if runtime != "docker" or n in launch.forwarded}
    env = {**passed, **{n: v for n, v in launch.env_set}}
    common = dict(runtime=runtime, name=s.get("name", ""), image=launch.image, mounts=s["mounts"],
                  topo_file_mounted=topo_mounted(s["dests"], env), nccl_conf_mounted=nccl_conf_mounted(s["dests"], env),
                  ipc_host=s["ipc_host"], network_host=s["network_host"])
    if runtime == "docker":
        ctx.add(ContainerSpec, start, end, scope=Scope.container, privileged=s["privileged"],
                shm_bytes=s["shm_bytes"], memlock_unlimited=s["memlock_unlimited"], cap_add=s["cap_add"],
                devices=s["devices"], infiniband_device=s["infiniband_device"], gpus=s["gpus"],
                cpuset=s["cpuset"], numa_syscalls=s["numa_syscalls"], **common)
        if launch.env_set or launch.forwarded:
            def at(name: str) -> int:
                return next((k for k in range(start, end + 1) if name + "=" in doc.lines[k]), start)

            env_facts(doc, ctx, [(n, v, at(n)) for n, v in {n: v for n, v in launch.env_set}.items()],
                      names=names, complete=False, filt="container spec", markers=["cmd:docker run"],
                      index=start, end=end)
    elif runtime == "apptainer":
        contain = s["contain"]
        ctx.add(ContainerSpec, start, end, scope=Scope.container,
                infiniband_device=None if contain else True, numa_syscalls=True, **common)
    else:
        ctx.add(ContainerSpec, start, end, scope=Scope.container, **common)


_EXPORT = lazyre.compile(r"^\s*(?:export\s+)([A-Za-z_]\w*=.*)$")


def _exports(text: str) -> dict[str, str]:
    """Variables exported by an ``export A=1 B=2`` line."""
    m = _EXPORT.match(text)
    if not m:
        return {}
    out = {}
    for tok in tokenize(m.group(1)):
        a = _ASSIGN.match(tok)
        if a:
            out[a.group(1)] = a.group(2)
        elif tok in _SEPARATORS:
            break
    return out


# -- CPU / memory binding (numactl, taskset) -----------------------------------------------------

_NUMACTL_OPTS = {
    "-N": "cpunodebind", "--cpunodebind": "cpunodebind", "--cpubind": "cpunodebind",
    "-m": "membind", "--membind": "membind", "-C": "physcpubind", "--physcpubind": "physcpubind",
    "-p": "preferred", "--preferred": "preferred", "-i": "interleave", "--interleave": "interleave",
}
_NUMACTL_QUERY = {"-H", "--hardware", "-s", "--show", "-V", "--version", "--help", "-h"}
_LITERAL_LIST = lazyre.compile(r"^\d{1,5}(?:-\d{1,5})?(?:,\d{1,5}(?:-\d{1,5})?){0,256}$")
_CASE = lazyre.compile(r"^\s*case\s+[\"']?\$\{?(\w+)\}?[\"']?\s+in\b")
_ARM = lazyre.compile(r"^\s*+\(?\s*+([\w*\"'|\[\]-]{1,40}?)\s*\)")
_BIND_QUICK = lazyre.compile(r"\b(?:numactl|taskset)\b")


def _literal(text: str) -> list[int]:
    from clusterdx.facts.parsers._util import cpu_list

    if not _LITERAL_LIST.match(text):
        return []
    try:
        return cpu_list(text)
    except Exception:  # ParseError for reversed ranges
        return []


def _numactl(tokens: list[str], k: int) -> dict | None:
    b: dict = {"tool": "numactl"}
    k += 1
    while k < len(tokens) and tokens[k].startswith("-"):
        tok = tokens[k]
        if tok in _NUMACTL_QUERY:
            return None
        if tok in ("-l", "--localalloc"):
            b["localalloc"] = True
            k += 1
            continue
        if "=" in tok:
            name, value = tok.split("=", 1)
            k += 1
        elif tok[:2] in _NUMACTL_OPTS and len(tok) > 2 and not tok.startswith("--"):
            name, value = tok[:2], tok[2:]  # -N0
            k += 1
        else:
            name = tok
            value = tokens[k + 1] if k + 1 < len(tokens) else ""
            k += 2
        field_ = _NUMACTL_OPTS.get(name)
        if field_:
            b[field_] = value
    if len(b) == 1:
        return None
    if b.get("physcpubind"):
        b["cpus"] = _literal(b["physcpubind"])
    if b.get("cpunodebind"):
        b["cpu_nodes"] = _literal(b["cpunodebind"])
    if b.get("membind"):
        b["mem_nodes"] = _literal(b["membind"])
    return b


def _taskset(tokens: list[str], k: int) -> dict | None:
    from clusterdx.facts.parsers._util import hex_mask_cpus

    k += 1
    flags = ""
    while k < len(tokens) and tokens[k].startswith("-"):
        tok = tokens[k]
        if tok == "--cpu-list":
            flags += "c"
        elif tok == "--pid":
            flags += "p"
        elif tok in ("--all-tasks",):
            flags += "a"
        elif not tok.startswith("--"):
            flags += tok[1:]
        k += 1
    if k >= len(tokens):
        return None
    spec = tokens[k]
    b: dict = {"tool": "taskset", "physcpubind": spec}
    if "c" in flags:
        b["cpus"] = _literal(spec)
    elif re.fullmatch(r"(?:0x)?[0-9a-fA-F,]{1,300}", spec):
        try:
            b["cpus"] = hex_mask_cpus(spec)
        except ValueError:
            b["cpus"] = []
    else:
        return None
    if "p" in flags:
        if k + 1 < len(tokens) and tokens[k + 1].isdigit():
            b["pid"] = int(tokens[k + 1])
        elif k + 1 >= len(tokens):
            return None  # taskset -p PID prints the affinity: a query, not a binding
    return b


def find_bindings(tokens: list[str], depth: int = 0) -> list[dict]:
    """numactl / taskset invocations that bind something, anywhere in one command (also inside
    ``bash -c '...'``)."""
    if not tokens or tokens[0] in ("echo", "printf", "which", "type", "man", "command") \
            or tokens[0].startswith("#"):
        return []
    out = []
    for k, tok in enumerate(tokens):
        b = _base(tok)
        if b in ("bash", "sh", "zsh") and k + 2 < len(tokens) and tokens[k + 1] == "-c" and depth < MAX_DEPTH:
            for cmd in _commands(tokenize(tokens[k + 2])):
                out += find_bindings(cmd, depth + 1)
            break
        if b == "numactl":
            found = _numactl(tokens, k)
        elif b == "taskset":
            found = _taskset(tokens, k)
        else:
            continue
        if found:
            out.append(found)
    return out


def _emit_exports(doc: Document, ctx: ParseContext, exports: dict[str, tuple[str, int]]) -> None:
    """``env.var`` for each literal ``export NAME=value`` of the script and one ``env.dump``."""
    literal = {n: (v, i) for n, (v, i) in exports.items() if "$" not in v and "`" not in v}
    if not literal:
        return
    for name, (value, i) in literal.items():
        shown = redact_value(name, value) if doc.redact else value
        ctx.add(EnvVar, i, name=name, value=shown, redacted=shown != value)
    lines = [i for _, i in literal.values()]
    ctx.add(EnvDump, min(lines), max(lines), var_count=len(literal), names=sorted(literal), complete=False,
            filter="export lines of the script", container_markers=[])


_SBATCH = lazyre.compile(r"^\s*#SBATCH\s+(.*)$")


def _sbatch(doc: Document, ctx: ParseContext, directives: list[tuple[int, str]]) -> None:
    """One ``launch.command`` (launcher ``sbatch``) for the script's ``#SBATCH`` directives."""
    tokens: list[str] = []
    for _, args in directives:
        tokens += [t for t in tokenize(args) if t not in _SEPARATORS]
    launch = _srun(["srun", *tokens], 0)
    launch.launcher = "sbatch"
    launch.spec = None
    text = " ".join("#SBATCH " + a.strip() for _, a in directives)
    _emit(doc, ctx, launch, directives[0][0], directives[-1][0], text, {})


def parse(doc: Document, ctx: ParseContext) -> None:
    script_env: dict[str, str] = {}
    exports: dict[str, tuple[str, int]] = {}
    case_var = ""
    arm_label = ""
    #: (case variable, name) -> [(line, value)] for exports inside the arms of a per-rank table
    arm_exports: dict[tuple[str, str], list[tuple[int, str]]] = {}
    directives: list[tuple[int, str]] = []
    in_header = True
    for start, end, text in logical_lines(doc):
        if text.lstrip().startswith("#!"):
            in_header = True  # a script's first line: a job script pasted below a ticket's words
            continue
        d = _SBATCH.match(text)
        if d and in_header:
            directives.append((start, d.group(1)))
            continue
        if text.strip() and not text.lstrip().startswith("#"):
            in_header = False  # sbatch reads directives only before the first command
        if text.lstrip().startswith("#"):
            continue
        c = _CASE.match(text)
        if c:
            case_var, arm_label = c.group(1), ""
        elif re.match(r"^\s*esac\b", text):
            case_var, arm_label = "", ""
        elif case_var:
            arm = _ARM.match(text)
            if arm:
                arm_label = arm.group(1)
        if "export" in text:
            found = _exports(text)
            script_env.update(found)
            exports.update({n: (v, start) for n, v in found.items()})
            if case_var and arm_label:
                for n, v in found.items():
                    arm_exports.setdefault((case_var, n), []).append((start, v))
        if case_var and re.search(r";;\s*$", text):
            arm_label = ""
        quick, bind = _QUICK.search(text), _BIND_QUICK.search(text)
        shown: str | None = None
        if not quick and not bind:
            continue
        shown = redact_text(text.strip()) if doc.redact else text.strip()
        found = 0
        for cmd in _commands(tokenize(text)):
            if quick:
                for launch in find_launches(cmd):
                    found += 1
                    if found > MAX_LAUNCHES_PER_LINE:
                        break
                    _emit(doc, ctx, launch, start, end, shown, script_env)
            if found > MAX_LAUNCHES_PER_LINE:
                ctx.warn(start, f"more than {MAX_LAUNCHES_PER_LINE} launch commands on one line; "
                                "the rest not read")
                break
            if bind:
                # the arm's label on this line ("0) numactl ...") or on a line of its own above
                arm = _ARM.match(text) if case_var else None
                label = arm.group(1) if arm else arm_label if case_var else ""
                selector = f"{case_var}={label.strip(chr(34) + chr(39) + '[]')}" if label else ""
                for b in find_bindings(cmd):
                    ctx.add(LaunchBinding, start, end, selector=selector, command=shown, **b)
    if not ctx.facts:
        raise NotApplicable("no launch command (docker run, srun, mpirun, torchrun ...)")
    if directives:
        _sbatch(doc, ctx, directives)
    varying = _emit_rank_env(doc, ctx, arm_exports)
    # a variable each rank sets differently has no one value in the script's environment
    _emit_exports(doc, ctx, {n: e for n, e in exports.items() if n not in varying})


def _emit_rank_env(doc: Document, ctx: ParseContext, arm_exports: dict[tuple[str, str], list[tuple[int, str]]]) -> set[str]:
    """``launch.rank_env`` for each variable the arms of a per-rank table export with two or more
    literal values: the ranks of the job run with different settings. Returns those names."""
    varying: set[str] = set()
    for (var, name), sets in arm_exports.items():
        literal = [(i, v) for i, v in sets if "$" not in v and "`" not in v]
        values = list(dict.fromkeys(v for _, v in literal))
        if len(values) < 2:
            continue
        shown = [redact_value(name, v) if doc.redact else v for v in values]
        ctx.add(LaunchRankEnv, literal[0][0], literal[-1][0], name=name, selector=var, values=shown, arms=len(literal))
        varying.add(name)
    return varying


_QUICK = lazyre.compile(r"\b(?:docker|podman|nerdctl|srun|mpirun|mpiexec|orterun|prterun|torchrun|torch\.distributed"
                    r"|kubectl|enroot|apptainer|singularity)\b")
_LAUNCH_LINE = lazyre.compile(
    r"^\s*(?:(?:[A-Za-z_]\w*=\S*|exec|time|nohup|env|numactl(?:\s+-\S+(?:\s+[\d,:-]+)?){0,6})\s+){0,8}"
    r"(?:\S*/)?(?:(?:docker|podman|nerdctl)\s+(?:container\s+)?(?:run|create)|srun|mpirun|mpiexec|torchrun"
    r"|python[\d.]*\s+-m\s+torch\.distributed\.(?:run|launch)|kubectl\s+(?:run|exec)|enroot\s+start"
    r"|(?:apptainer|singularity)\s+(?:exec|run))\s+(?:-|\S+\s+-|\\$)"
)
_BIND_LINE = lazyre.compile(
    r"^\s*+(?:\(?\s*[\w*\"'|-]{1,40}\)\s*)?(?:(?:[A-Za-z_]\w*=\S*|exec|time|nohup|env)\s+){0,8}(?:\S*/)?"
    r"(?:numactl\s+(?:--(?:cpunodebind|cpubind|membind|physcpubind|preferred|interleave|localalloc)\b|-[NmCpil]\s?\S)"
    r"|taskset\s+(?:-a?c\s+|--cpu-list\s+)[0-9$])"
)
_NEUTRAL = lazyre.compile(
    r"^\s*(?:#|export\s|[A-Za-z_]\w*=|set\s|module\s|ml\s|source\s|\.\s|cd\s|echo\s|printf\s|if\s|then\b|fi\b|else\b"
    r"|elif\s|for\s|do\b|done\b|while\s|case\s|esac\b|mkdir\s|ulimit\s|trap\s|wait\b|exit\b|unset\s|declare\s"
    r"|local\s|function\s|\w+\s*\(\)|\{|\}|\(|\)|-{1,2}[A-Za-z]|\S+\s*\\$|[\w./-]+\.(?:py|sh)\b)"
)


def sniff(doc: Document) -> float:
    launch = 0
    others: list[str] = []
    script = False
    for idx, line in enumerate(doc.lines[:200]):
        s = line.strip()
        if not s:
            continue
        if idx < 3 and s.startswith("#!") and re.search(r"\b(?:ba|z|k|da)?sh\b", s):
            script = True
        if s.startswith("#SBATCH") or s.startswith("#PBS") or s.startswith("#BSUB"):
            script = True
        # the keyword test first: most lines of most documents never reach the line patterns
        head = line[:4096]
        if (_QUICK.search(head) and _LAUNCH_LINE.match(head)) or (_BIND_QUICK.search(head) and _BIND_LINE.match(head)):
            launch += 1
        else:
            others.append(line)
    if not launch:
        return 0.0
    # the other lines weigh only a document that launches something: most documents never get here
    other = sum(1 for line in others if not _NEUTRAL.match(line))
    ratio = launch / (launch + other)
    return min(0.95, 0.35 + 0.6 * ratio + (0.2 if script else 0.0))


FORMATS = [
    Format(
        name="launch-cmdline",
        command="cat <job script>",
        facts=("launch.command", "container.spec", "launch.binding", "launch.rank_env", "env.var", "env.dump"),
        sniff=sniff,
        parse=parse,
        command_patterns=(r"^\s*(?:cat|less|more|head|tail|bat)\s+(?:-\S+\s+)*\S*\.(?:sh|sbatch|slurm|bash|job|run)\s*$",
                          r"\bscontrol\s+write\s+batch_script\b"),
        description="launch command lines and job scripts: docker run, srun (pyxis), mpirun, torchrun, kubectl, "
                    "numactl / taskset binding (tables), export lines",
    )
]
