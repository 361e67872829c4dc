"""Two-process benchmarks on one host: where the server and the client of a pair run.

``ucx_perftest`` runs as a server and a client; a client that connects to its own host and pins
itself with ``-c N`` shares core N with its server unless a server line pins it elsewhere (or
leaves it unpinned). The server is normally started with the client's options minus the host
name, so a ticket that shows only the client is read as both on that core. The two command lines
are often pasted as separate commands (separate inputs), hence a deriver, not the parser.
"""

from __future__ import annotations

from typing import Sequence

from clusterdx.facts.base import Fact
from clusterdx.facts.derive._common import of_type
from clusterdx.facts.model.derived import UcxPerftestPair


def derive(facts: Sequence[Fact]) -> list[Fact]:
    runs = of_type(facts, "ucx.perftest")
    out: list[Fact] = []
    for c in runs:
        if c.role != "client" or not c.loopback or c.cpu is None:
            continue
        servers = [s for s in runs if s.role == "server" and s.node == c.node and s.source.input != "" and
                   (s.test == c.test or not s.test or not c.test)]
        pinned = [s.cpu for s in servers if s.cpu is not None]
        shared = all(s.cpu == c.cpu for s in servers) if servers else True
        out.append(UcxPerftestPair(node=c.node, scope=c.scope, source=c.source, provenance=c.provenance,
                                   test=c.test, client_cpu=c.cpu, server_cpu=pinned[0] if pinned else None,
                                   server_shown=bool(servers), shared_core=shared))
    return out
