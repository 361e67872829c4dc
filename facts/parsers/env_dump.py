"""env / printenv - Command

Environment listings: ``env``, ``printenv``, ``export -p`` / ``declare -x`` (``declare -x
X="y"``, ``export X='y'``), filtered dumps (``env | grep NCCL``), dumps taken through a
launcher (``docker exec C env``, ``kubectl exec P -- env``, ``srun --container-image=I env``,
``srun -l env`` with ``N: `` task labels) and pasted transcripts holding several of them
(``$ cmd`` lines start a new dump). One ``env.var`` per variable, one ``env.dump`` per dump
(per task when ``srun --label`` interleaves several).

``NAME=value`` splits on the first ``=``; a line that is not ``NAME=`` continues the previous
value (exported shell functions ``BASH_FUNC_x%%=() {`` run to a line ``}``). Secret values are
redacted (see clusterdx.facts.redact) unless the document says not to.

Scope: when the document's scope is unknown, a dump with container markers (``container=``,
``ENROOT_*``, ``PYXIS_*``, ``KUBERNETES_SERVICE_HOST``, ``NVIDIA_VISIBLE_DEVICES`` with an NGC
image variable such as ``PYTORCH_VERSION``) or taken by a container launcher is scoped
``container``.

Sample input::

    SLURM_PROCID=3
    NCCL_IB_HCA=mlx5_0,mlx5_3
    PYTORCH_VERSION=2.7.0a0+79aa17489c
    NVIDIA_VISIBLE_DEVICES=all
    WANDB_API_KEY=0123456789abcdef
    PATH=/usr/local/cuda/bin:/usr/bin:/bin
    BASH_FUNC_module%%=() {  eval "$(/usr/bin/tclsh modulecmd.tcl bash "$@")"
    }
    _=/usr/bin/env

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "env"); parse(doc, ctx)
    >>> [(f.name, f.value) for f in ctx.facts if f.fact_type == "env.var"][:2]
    [('SLURM_PROCID', '3'), ('NCCL_IB_HCA', 'mlx5_0,mlx5_3')]
    >>> key = [f for f in ctx.facts if f.fact_type == "env.var" and f.name == "WANDB_API_KEY"][0]
    >>> key.value, key.redacted, key.source.line
    ('<redacted>', True, 5)
    >>> dump = ctx.facts[-1]
    >>> dump.var_count, dump.complete, dump.container_markers, dump.scope.value
    (8, True, ['NVIDIA_VISIBLE_DEVICES', 'PYTORCH_VERSION'], 'container')
    >>> sniff(doc) > 0.5
    True
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from clusterdx.facts import lazyre
from clusterdx.facts.base import NotApplicable, Scope
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model.env import EnvDump, EnvVar
from clusterdx.facts.redact import redact_value


SAMPLE = """\
SLURM_PROCID=3
NCCL_IB_HCA=mlx5_0,mlx5_3
PYTORCH_VERSION=2.7.0a0+79aa17489c
NVIDIA_VISIBLE_DEVICES=all
WANDB_API_KEY=0123456789abcdef
PATH=/usr/local/cuda/bin:/usr/bin:/bin
BASH_FUNC_module%%=() {  eval "$(/usr/bin/tclsh modulecmd.tcl bash "$@")"
}
_=/usr/bin/env
"""

_NAME = r"[A-Za-z_][A-Za-z0-9_]*(?:%%)?"
_VAR = lazyre.compile(rf"^({_NAME})=(.*)$", re.S)
_DECL = lazyre.compile(rf"^(?:declare\s+-[A-Za-z-]+|typeset\s+-[A-Za-z-]+|export)\s+({_NAME})(?:=(.*))?$", re.S)
_LABEL = lazyre.compile(r"^\s*(\d{1,6}): ?(.*)$", re.S)
# "$ cmd", "user@host:~$ cmd", "[user@host dir]# cmd"
_PROMPT = lazyre.compile(
    r"^\s*(?:\[[^\]]*@[^\]]*\]\s*[$#]|[\w.-]+@[\w.-]+(?::\S*?)?\s*[$#]|\$)\s+(\S.*)$"
)
_NOISE = lazyre.compile(
    r"^(?:srun|slurmstepd|pyxis|enroot|salloc|sbatch|WARNING|Warning|warning|NOTE|INFO|bash|sh|zsh"
    r"|env|printenv|grep|sort|docker|kubectl|podman|tr|cat|Error|ERROR|error)\b[^=]*?:"
)
_ERRORISH = lazyre.compile(r"\berror\b|No such|not found|[Pp]ermission denied|[Cc]annot|failed", re.I)

# Pipeline stages after the env command that keep every variable
_KEEPS_ALL = lazyre.compile(r"^\s*(?:sort|uniq|cat|less|more|tee|column|tr)\b")
_ENV_CMD = lazyre.compile(
    r"(?:^|[\s;&|/'\"])(?:env|printenv|export\s+-p|declare\s+-[A-Za-z]*x|set)(?:\s|$|['\";|])|/environ\b"
)

# launcher regex -> marker template (m.expand syntax)
_CMD_MARKERS = (
    (re.compile(r"\b(docker|podman|nerdctl)\s+(?:container\s+)?(exec|run)\b"), r"cmd:\1 \2"),
    (re.compile(r"\bkubectl\s+(?:-\S+\s+)*exec\b"), "cmd:kubectl exec"),
    (re.compile(r"\bsrun\b.*--container-(image|name)\b"), r"cmd:srun --container-\1"),
    (re.compile(r"\benroot\s+(start|exec)\b"), r"cmd:enroot \1"),
    (re.compile(r"\b(singularity|apptainer)\s+(exec|run|shell)\b"), r"cmd:\1 \2"),
)
_IMAGE_VARS = ("NV_LIBCUBLAS_VERSION", "PYTORCH_VERSION", "NVIDIA_PYTORCH_VERSION")


@dataclass
class Var:
    name: str
    value: str
    start: int
    end: int
    rank: int | None = None


@dataclass
class Section:
    """Output of one command in a transcript (or the whole document)."""

    command: str | None
    lines: list[tuple[int, str]] = field(default_factory=list)
    #: started by a "$ cmd" line inside the document (not the document's own command)
    prompted: bool = False


def strip_label(line: str) -> tuple[int | None, str]:
    m = _LABEL.match(line)
    if m:
        return int(m.group(1)), m.group(2)
    return None, line


def split_sections(doc: Document) -> list[Section]:
    sections = [Section(doc.command)]
    for i, line in enumerate(doc.lines):
        if line.startswith("## "):
            continue
        m = _PROMPT.match(line)
        if m:
            sections.append(Section(m.group(1).strip(), prompted=True))
            continue
        # /proc/PID/environ printed to a terminal keeps its NUL separators
        if "\0" in line:
            sections[-1].lines.extend((i, part) for part in line.split("\0") if part)
        else:
            sections[-1].lines.append((i, line))
    return [s for s in sections if s.lines or s.command]


def _split_pipeline(command: str) -> list[str]:
    """Pipeline stages; quotes are respected so ``grep -E '^(A|B)'`` stays one stage."""
    stages, cur, quote = [], [], ""
    for ch in command:
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "|":
            stages.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    stages.append("".join(cur).strip())
    return [s for s in stages if s]


def command_filter(command: str | None) -> tuple[bool | None, str]:
    """(complete, filter) from the command that produced the dump; complete None if unknown."""
    if not command:
        return None, ""
    stages = _split_pipeline(command)
    if not stages:
        return None, ""
    filters = [s for s in stages[1:] if not _KEEPS_ALL.match(s)]
    m = re.search(r"\bprintenv((?:\s+[A-Za-z_]\w*)+)\s*$", stages[0])
    if m:
        filters.insert(0, "printenv" + m.group(1))
    if filters:
        return False, " | ".join(filters)
    if _ENV_CMD.search(stages[0]):
        return True, ""
    return None, ""


def command_markers(command: str | None) -> list[str]:
    if not command:
        return []
    return [m.expand(template) for pattern, template in _CMD_MARKERS if (m := pattern.search(command))]


def var_markers(names: set[str]) -> list[str]:
    out = sorted(n for n in names if n == "container" or n.startswith(("ENROOT_", "PYXIS_"))
                 or n in ("KUBERNETES_SERVICE_HOST", "SINGULARITY_CONTAINER", "APPTAINER_CONTAINER"))
    if "NVIDIA_VISIBLE_DEVICES" in names:
        image = [n for n in _IMAGE_VARS if n in names]
        if image:
            out += ["NVIDIA_VISIBLE_DEVICES", *image]
    return out


def _unquote(raw: str) -> tuple[str, bool]:
    """Shell-quoted value as printed by ``declare -x``/``export -p``; (value, closed)."""
    if not raw or raw[0] not in "\"'":
        return raw, True
    q = raw[0]
    out, i = [], 1
    while i < len(raw):
        ch = raw[i]
        if q == '"' and ch == "\\" and i + 1 < len(raw) and raw[i + 1] in '"\\$`':
            out.append(raw[i + 1])
            i += 2
            continue
        if ch == q:
            rest = raw[i + 1:]
            # export -p writes a ' inside '...' as '\''
            if q == "'" and rest.startswith("\\''"):
                out.append("'")
                i += 4
                continue
            return "".join(out) + rest, True
        out.append(ch)
        i += 1
    return "".join(out), False


def read_vars(lines: list[tuple[int, str]]) -> tuple[list[Var], list[tuple[int, str]]]:
    """NAME=value entries of one section, continuation lines folded into their value; and the
    problems seen, which the caller reports only if the section turns out to be a dump."""
    out: list[Var] = []
    problems: list[tuple[int, str]] = []
    cur: dict[int | None, Var] = {}
    # per label: what ends the open value ('}' for functions, a quote for declare -x)
    open_until: dict[int | None, str] = {}
    raw_quoted: dict[int | None, str] = {}
    for i, line in lines:
        label, text = strip_label(line)
        var = cur.get(label)
        closer = open_until.get(label)
        if var is not None and closer == "}":
            var.value += "\n" + text
            var.end = i
            if text.rstrip() == "}":
                del open_until[label]
            continue
        if var is not None and closer:
            raw_quoted[label] += "\n" + text
            value, closed = _unquote(raw_quoted[label])
            var.value, var.end = value, i
            if closed:
                del open_until[label]
            continue
        m = _VAR.match(text)
        d = None if m else _DECL.match(text.strip())
        if d and d.group(2) is None:
            # "declare -x NAME" without a value: exported but unset, so not in the environment
            cur.pop(label, None)
            continue
        if m or d:
            name, value = (m.group(1), m.group(2)) if m else (d.group(1), d.group(2) or "")
            var = Var(name, value, i, i, label)
            if d:
                raw_quoted[label] = value
                var.value, closed = _unquote(value)
                if not closed:
                    open_until[label] = value[0]
            elif name.startswith("BASH_FUNC_") and value.startswith("()") and value.rstrip() != "}" \
                    and not value.rstrip().endswith("}"):
                open_until[label] = "}"
            out.append(var)
            cur[label] = var
            continue
        stripped = text.strip()
        if not stripped:
            continue
        if _NOISE.match(stripped):
            if _ERRORISH.search(stripped):
                problems.append((i, f"tool error inside the dump: {stripped[:120]}"))
            cur.pop(label, None)
            continue
        if var is not None:
            # env prints values verbatim, so a newline inside a value starts a line without NAME=
            var.value += "\n" + text
            var.end = i
        else:
            problems.append((i, f"not a NAME=value line: {stripped[:80]!r}"))
    for label, closer in open_until.items():
        var = cur.get(label)
        if var is not None:
            problems.append((var.start, f"value of {var.name} never closed ({closer!r}): output truncated?"))
    return out, problems


def emit(doc: Document, ctx: ParseContext, variables: list[Var], *, complete: bool,
         filt: str, command: str | None) -> None:
    """env.var facts and one env.dump per task label for one dump."""
    by_rank: dict[int | None, list[Var]] = {}
    for v in variables:
        by_rank.setdefault(v.rank, []).append(v)
    for rank, group in by_rank.items():
        names = {v.name for v in group}
        markers = var_markers(names) + command_markers(command)
        scope = doc.scope
        if scope == Scope.unknown and markers:
            scope = Scope.container
        seen: set[str] = set()
        for v in group:
            if v.name in seen:
                ctx.warn(v.start, f"{v.name} appears twice; getenv() returns the first")
            seen.add(v.name)
            shown = redact_value(v.name, v.value) if doc.redact else v.value
            ctx.add(EnvVar, v.start, v.end, name=v.name, value=shown, redacted=shown != v.value,
                    rank=rank, scope=scope)
        ctx.add(EnvDump, group[0].start, max(v.end for v in group), var_count=len(names),
                names=sorted(names), complete=complete, filter=filt, container_markers=markers,
                rank=rank, scope=scope)


def _printenv_values(section: Section) -> list[Var] | None:
    """``printenv NAME [NAME...]`` prints bare values, one per name that is set."""
    if not section.command:
        return None
    m = re.search(r"\bprintenv((?:\s+[A-Za-z_]\w*)+)\s*$", _split_pipeline(section.command)[0])
    if not m:
        return None
    names = m.group(1).split()
    values = [(i, ln) for i, ln in section.lines if ln.strip()]
    if len(values) != len(names) or any(_VAR.match(ln) for _, ln in values):
        return None
    return [Var(n, ln, i, i) for n, (i, ln) in zip(names, values)]


def parse(doc: Document, ctx: ParseContext) -> None:
    found = False
    for section in split_sections(doc):
        complete, filt = command_filter(section.command)
        if section.prompted and complete is None:
            # another command of a pasted transcript (an `export A=1` line, nvidia-smi ...)
            continue
        variables = _printenv_values(section)
        if variables is None:
            variables, problems = read_vars(section.lines)
            if not variables:
                continue
            for i, msg in problems:
                ctx.warn(i, msg)
        if complete is None:
            # Without the command, only a dump holding PATH is taken as the whole environment:
            # every shell and launcher sets it, a grep for NCCL_ drops it.
            complete = any(v.name == "PATH" for v in variables)
        emit(doc, ctx, variables, complete=complete, filt=filt, command=section.command)
        found = True
    if not found:
        raise NotApplicable("no NAME=value lines")


_KNOWN = lazyre.compile(
    r"^(?:PATH|HOME|SHELL|HOSTNAME|PWD|OLDPWD|USER|LOGNAME|LANG|TERM|SHLVL|LD_LIBRARY_PATH|_"
    r"|(?:NCCL|SLURM|SLURMD|CUDA|UCX|OMPI|PMIX|NVIDIA|TORCH|OMP|LC|XDG|SSH|CONDA|PYTHON|MASTER"
    r"|NVSHMEM|GLOO|ENROOT|PYXIS|KUBERNETES|HF|WANDB|NV|MPI|I_MPI)_\w*|WORLD_SIZE|RANK|LOCAL_RANK)$"
)


def sniff(doc: Document) -> float:
    hits = known = total = 0
    env_prompt = False
    for line in doc.lines[:200]:
        if not line.strip() or line.startswith("## "):
            continue
        m = _PROMPT.match(line)
        if m:
            env_prompt = env_prompt or bool(_ENV_CMD.search(m.group(1)))
            continue
        _, text = strip_label(line)
        if _NOISE.match(text.strip()):
            continue
        total += 1
        v = _VAR.match(text) or _DECL.match(text.strip())
        if v:
            hits += 1
            known += bool(_KNOWN.match(v.group(1)))
    if hits < 1 or total == 0:
        return 0.0
    ratio = hits / total
    if known >= 2 or env_prompt:
        return min(1.0, 0.4 + 0.55 * ratio + (0.05 if env_prompt else 0.0))
    return 0.2 * ratio


FORMATS = [
    Format(
        name="env",
        command="env",
        facts=("env.var", "env.dump"),
        sniff=sniff,
        parse=parse,
        # env only as the last word of a pipeline stage: "env X=1 prog" runs a program instead
        command_patterns=(
            r"(?:^|[\s;&|'\"])(?:/usr/bin/)?env(?:\s+-[0iv])*\s*(?:$|[|;'\"])",
            r"(?:^|[\s;&|'\"])printenv(?:\s+[A-Za-z_]\w*)*\s*(?:$|[|;'\"])",
            r"\bexport\s+-p\b",
            r"\bdeclare\s+-[A-Za-z]*x\b",
            r"\btr\s.*/proc/[^\s/]+/environ\b|/proc/[^\s/]+/environ\b.*\|\s*(?:tr|xargs)\b",
        ),
        description="environment listing (env, printenv, export -p; docker/kubectl/srun ... env; env | grep)",
    )
]
