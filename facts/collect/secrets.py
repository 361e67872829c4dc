r"""Redaction of collected bytes before they enter a bundle.

The rules are those of :mod:`clusterdx.facts.redact`; this module applies them to raw outputs
while keeping their shape, so the parsers still read them:

* ``env``: ``NAME=value`` lines; a secret name's value becomes ``<redacted>`` and the
  continuation lines of a multi-line secret value are dropped; other values have URL
  credentials and embedded secret pairs masked.
* ``environ``: the same for NUL-separated ``/proc/PID/environ`` (and ``/proc/PID/cmdline``).
* ``text``: free text (a kernel command line, a log) through ``redact_text``.
* ``argv``: a NUL-separated ``/proc/PID/cmdline``: each argument through ``redact_text``, and the
  argument after a secret-looking option (``--hf-token VALUE``) redacted whole.

>>> redact_bytes(b"HF_TOKEN=hf_abcdef\nNCCL_IB_HCA=mlx5_0\nKEY=-----BEGIN\nabc\n-----END\nA=1\n", "env")
b'HF_TOKEN=<redacted>\nNCCL_IB_HCA=mlx5_0\nKEY=<redacted>\nA=1\n'
>>> redact_bytes(b"PATH=/bin\x00WANDB_API_KEY=x\x00", "environ")
b'PATH=/bin\x00WANDB_API_KEY=<redacted>\x00'
>>> redact_bytes(b"python train.py --hf-token abc", "text")
b'python train.py --hf-token <redacted>'
>>> redact_bytes(b"python\x00--hf-token\x00abc\x00--seq\x008192\x00", "argv")
b'python\x00--hf-token\x00<redacted>\x00--seq\x008192\x00'
"""

from __future__ import annotations

import re
import shlex

from clusterdx.facts import lazyre
from clusterdx.facts.collect.probe import Redaction
from clusterdx.facts.redact import REDACTED, is_secret_name, redact_text, redact_value


_ENV_LINE = lazyre.compile(r"^([A-Za-z_][A-Za-z0-9_]*(?:%%)?)=(.*)$", re.S)


def redact_bytes(data: bytes, how: Redaction) -> bytes:
    if how == "none" or not data:
        return data
    if how == "environ":
        return b"\0".join(_entry(e) for e in data.split(b"\0"))
    if how == "argv":
        return b"\0".join(_argv(data.split(b"\0")))
    text = data.decode("utf-8", errors="surrogateescape")
    if how == "env":
        out = _env_text(text)
    else:
        out = "\0".join(redact_text(part) for part in text.split("\0"))
    return out.encode("utf-8", errors="surrogateescape")


def _argv(args: list[bytes]) -> list[bytes]:
    """Each argument redacted alone, then in the context of the whole line: ``-u bob:pw``,
    ``-p pw`` after ``docker login`` and ``wandb login KEY`` are secrets only next to their
    neighbours. An argument the whole-line pass changed is replaced by what it became."""
    alone = _argv_alone(args)
    words = [a.decode("utf-8", errors="surrogateescape") for a in alone]
    try:
        line = shlex.join(words)
        redone = shlex.split(redact_text(line))
    except ValueError:
        return alone
    if len(redone) != len(words):
        return alone  # redaction changed the word count: keep the per-argument result
    return [w.encode("utf-8", errors="surrogateescape") for w in redone]


def _argv_alone(args: list[bytes]) -> list[bytes]:
    out: list[bytes] = []
    after_secret_option = False
    for raw in args:
        arg = raw.decode("utf-8", errors="surrogateescape")
        if after_secret_option and arg and not arg.startswith("-"):
            out.append(REDACTED.encode())
        else:
            out.append(redact_text(arg).encode("utf-8", errors="surrogateescape"))
        after_secret_option = arg.startswith("-") and "=" not in arg and is_secret_name(arg)
    return out


def _entry(entry: bytes) -> bytes:
    text = entry.decode("utf-8", errors="surrogateescape")
    m = _ENV_LINE.match(text)
    out = f"{m.group(1)}={redact_value(m.group(1), m.group(2))}" if m else redact_text(text)
    return out.encode("utf-8", errors="surrogateescape")


def _env_text(text: str) -> str:
    lines = text.split("\n")
    out: list[str] = []
    secret = False
    for line in lines:
        m = _ENV_LINE.match(line)
        if m:
            value = redact_value(m.group(1), m.group(2))
            secret = value != m.group(2) and value == "<redacted>"
            out.append(f"{m.group(1)}={value}")
        elif secret:
            continue  # the rest of a multi-line secret (a PEM key in a variable)
        else:
            out.append(redact_text(line))
    return "\n".join(out)
