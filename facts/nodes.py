"""Which machine: every name the inputs give a node resolved to one node, in one place.

The names a ticket carries for its machines are many: the ``--node`` argument, a bundle
manifest's ``host``, the host name of a pasted prompt (``[root@gpu-017 ~]#``), the host prefix
of NCCL debug lines (``gpu-017:4211:4211 [0] NCCL INFO ...``), a short name beside its FQDN,
and in ``clusterdx fleet`` the bundle folder's name. A file that says nothing (an ``lscpu``
saved as ``lscpu.txt``) is *unlabelled* (``node``). :func:`resolve` decides:

1. **Aliases.** Names equal but for case, or a short name and an FQDN that starts with it
   (``gpu-017`` / ``gpu-017.cluster.local``), are one node; it is called by its short name (the
   ``--node`` name when one was given).
2. **One host.** When ``--node`` was given and the inputs name exactly one other host (an NCCL
   log's prefix, a prompt), that host is the ``--node`` machine. When, after this, the ticket
   names exactly one host, every unlabelled fact joins it. A folder name (``home``) is an alias
   only: it names the one host when there is one, and is the node's name only when no input
   names any.
3. **Several hosts stay apart.** Facts that name no host in a multi-host ticket stay unlabelled
   (they are evaluated as job-level facts, see :mod:`clusterdx.engine.evaluate`), except a fact
   with a ``rank`` whose host another fact names (a per-rank log line beside an NCCL log).

The answer says which name went to which node (``aliases``) and, per input, which nodes its facts
went to, so the report can show the merge.

Examples:

    >>> from clusterdx.facts.base import SourceRef
    >>> from clusterdx.facts.model.kernel import Sysctl
    >>> def f(node, src):
    ...     return Sysctl(node=node, source=SourceRef(input=src, line=1, parser="t"),
    ...                        key="vm.swappiness", value="60")
    >>> r = resolve([f("node", "lscpu.txt"), f("gh200-c2-17", "s.txt#2")])
    >>> r.nodes, [x.node for x in r.facts], r.joined
    (['gh200-c2-17'], ['gh200-c2-17', 'gh200-c2-17'], ['lscpu.txt'])
    >>> r = resolve([f("node", "a.txt"), f("gpu-a", "nccl.log"), f("gpu-b", "nccl.log")])
    >>> r.nodes, [x.node for x in r.facts]
    (['gpu-a', 'gpu-b'], ['node', 'gpu-a', 'gpu-b'])
    >>> resolve([f("gpu-a.cluster.local", "m"), f("gpu-a", "p")]).aliases
    {'gpu-a.cluster.local': 'gpu-a'}
    >>> resolve([f("gpu-a", "nccl.log"), f("n7", "lscpu.txt")], node="n7").aliases
    {'gpu-a': 'n7'}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from clusterdx.facts import lazyre
from clusterdx.facts.base import Fact


#: node names that mean "no machine named" (ingest's default, a Document's default)
UNLABELLED = frozenset({"", "node", "unknown"})
_IP = lazyre.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")


def is_unlabelled(name: str | None) -> bool:
    return name is None or name.strip().lower() in UNLABELLED


def name_key(name: str) -> str:
    """The key two names of one machine share: lower case, short name of an FQDN.

    >>> name_key("GPU-017.cluster.local."), name_key("10.0.0.7"), name_key("gpu-017")
    ('gpu-017', '10.0.0.7', 'gpu-017')
    """
    n = name.strip().lower().rstrip(".")
    if _IP.match(n):
        return n
    return n.split(".", 1)[0] or n


@dataclass
class Resolution:
    #: the facts, each with its resolved node
    facts: list[Fact]
    #: the resolved nodes, sorted (unlabelled not included)
    nodes: list[str]
    #: every name that is not its node's own name -> that node
    aliases: dict[str, str] = field(default_factory=dict)
    #: inputs whose unlabelled facts joined the ticket's one host
    joined: list[str] = field(default_factory=list)
    #: input -> the nodes its facts went to
    by_input: dict[str, list[str]] = field(default_factory=dict)

    #: the ticket's one host, when it has exactly one (unlabelled facts joined it)
    one: str | None = None


def resolve(facts: Sequence[Fact], names: Iterable[str] = (), *, node: str | None = None,
            home: str | None = None) -> Resolution:
    """Resolve the facts' nodes; ``names``: more names the inputs carry (input records' nodes),
    ``node``: the ``--node`` argument, ``home``: a folder name (an alias only)."""
    seen: list[str] = []
    for n in [node or "", *(f.node for f in facts), *names]:
        if not is_unlabelled(n) and n not in seen:
            seen.append(n)
    groups: dict[str, list[str]] = {}
    for n in seen:
        groups.setdefault(name_key(n), []).append(n)
    arg_key = name_key(node) if node and not is_unlabelled(node) else None
    if arg_key is not None:
        others = [k for k in groups if k != arg_key]
        if len(others) == 1:  # --node and the one host the inputs name are the same machine
            groups[arg_key].extend(groups.pop(others[0]))
    canon: dict[str, str] = {}
    for key, members in groups.items():
        if key == arg_key:
            own = node
        elif len(members) == 1 or _IP.match(key):
            own = members[0]
        else:  # the first short name seen, else the short name of the FQDNs
            own = next((m for m in members if "." not in m), key)
        for m in members:
            canon[m] = own  # type: ignore[assignment]
    nodes = sorted(set(canon.values()))
    one = nodes[0] if len(nodes) == 1 else None
    if not nodes and home and not is_unlabelled(home):
        one = home  # no input names a machine: the folder's name is the node's
    rank_host: dict[int, set[str]] = {}
    if one is None:
        for f in facts:
            r = getattr(f, "rank", None)
            if isinstance(r, int) and not is_unlabelled(f.node):
                rank_host.setdefault(r, set()).add(canon[f.node])
    out: list[Fact] = []
    joined: list[str] = []
    by_input: dict[str, list[str]] = {}
    for f in facts:
        target = f.node
        if is_unlabelled(f.node):
            r = getattr(f, "rank", None)
            hosts = rank_host.get(r, set()) if isinstance(r, int) else set()
            if one is not None:
                target = one
                if f.source.input not in joined:
                    joined.append(f.source.input)
            elif len(hosts) == 1:
                target = next(iter(hosts))
        else:
            target = canon[f.node]
        if target != f.node:
            f = f.model_copy(update={"node": target})
        out.append(f)
        got = by_input.setdefault(f.source.input, [])
        if f.node not in got:
            got.append(f.node)
    aliases = {m: c for m, c in sorted(canon.items()) if m != c}
    if home and not is_unlabelled(home) and one is not None and home != one:
        aliases[home] = one
    return Resolution(out, nodes if nodes or one is None else [one], aliases, joined,
                      {k: sorted(v) for k, v in by_input.items()}, one)


def apply_to_records(records: Sequence[Any], res: Resolution) -> list[Any]:
    """Input records with their node resolved: the node their facts went to (``nodes`` lists them
    when they went to several), else their own name resolved."""
    out = []
    for rec in records:
        went = res.by_input.get(rec.path, [])
        if len(went) == 1:
            node = went[0]
        elif is_unlabelled(rec.node):
            node = res.one or rec.node
        else:
            node = res.aliases.get(rec.node, rec.node)
        update: dict[str, Any] = {}
        if node != rec.node:
            update["node"] = node
        if len(went) > 1:
            update["nodes"] = sorted(went)
        out.append(rec.model_copy(update=update) if update else rec)
    return out
