"""prose_binding - CPU binding switched off for the ranks, as a ticket quotes it (part of the prose reader)

Slurm's ``--cpu-bind=none`` (``cpu_bind="verbose,none"`` in a launcher's srun configuration) and
Open MPI's ``--bind-to none`` leave every rank free to run on any CPU of the node; a ticket often
quotes the option inline rather than attaching the script. It becomes the ``launch.command`` the
launch-cmdline reader would give for that option (``cpu_bind`` ``none``, launcher ``srun`` or
``mpirun``), with provenance ``reported``: one rule reads both, the user's word one level lower.
A binding that is set (``--cpu-bind=cores``, ``rank_ldom``, ``--bind-to numa``) says nothing here,
nor a sentence that says the binding was replaced.

Sample input::

    launched with the srtctl TRT-LLM backend (its srun config passes `cpu_bind="verbose,none"`)
    we run srun --cpu-bind=rank_ldom since last week

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> from clusterdx.facts.parsers import prose
    >>> doc = Document.from_text(SAMPLE); ctx = ParseContext(doc, "prose"); prose.parse(doc, ctx)
    >>> [(f.launcher, f.cpu_bind, f.provenance) for f in ctx.facts if f.fact_type == "launch.command"]
    [('srun', 'none', 'reported')]
"""

from __future__ import annotations

import re
from typing import Any

from clusterdx.facts import lazyre

SAMPLE = """\
launched with the srtctl TRT-LLM backend (its srun config passes `cpu_bind="verbose,none"`)
we run srun --cpu-bind=rank_ldom since last week
"""

#: the option with the value none (verbose is a flag beside it, quiet too)
_BIND_NONE = lazyre.compile(r"(?:--?cpu[-_]bind|\bcpu_bind|--?bind-to)\s{0,2}[=:\s]\s{0,2}[\"']?(?:(?:verbose|quiet|v|q),\s{0,2})?none\b", re.I)
#: a sentence that says the binding was replaced or is the fix: what the job runs now is not none
_INSTEAD = lazyre.compile(r"\b(?:instead\s{1,3}of|replac\w{1,4}|switch\w{0,3}\s{1,3}from|changed?\s{1,3}from|rather\s{1,3}than)\b", re.I)


def sentence(reader: Any, index: int, text: str) -> None:
    """Read one sentence: the ranks' CPU binding switched off."""
    from clusterdx.facts.model.container import LaunchCommand

    m = _BIND_NONE.search(text)
    if m and not _INSTEAD.search(text):
        launcher = "mpirun" if "bind-to" in m.group(0).lower() else "srun"
        reader.add(LaunchCommand, index, ("launch", launcher, "cpu-bind-none"), launcher=launcher,
                   cpu_bind="none", command=" ".join(text.split())[:200])
