"""Secret redaction for environment dumps, command lines and free text.

Inputs come from tickets, so every fact and every report line that may carry a credential goes
through here. Matching is by ``_``-separated parts of the (upper-cased) name, never by substring:
``NCCL_IB_PKEY`` (an InfiniBand partition key, a small number needed for diagnosis),
``XAUTHORITY``, ``PWD`` and ``KEYBOARD_LAYOUT`` must stay readable, ``WANDB_API_KEY`` must not.

Rules:

* a name is secret when one of its parts is a secret word (TOKEN, SECRET, PASSWORD, PASSWD,
  PASS, PASSPHRASE, CREDENTIAL(S), CREDS, AUTH, AUTHORIZATION, COOKIE, JWT, PAT, KEY, KEYS and
  the glued forms APIKEY, ACCESSKEY, SECRETKEY, PRIVATEKEY, AUTHTOKEN...), or it is a connection
  string (``*_CONNECTION_STRING`` holds an account key);
* except when the name ends in FILE, PATH, DIR, FILENAME, SOCK or SOCKET: those hold the
  *location* of a secret (``AWS_WEB_IDENTITY_TOKEN_FILE``, ``SSH_AUTH_SOCK``), which is useful and
  harmless;
* any value, secret name or not, has credentials in URLs masked
  (``https://user:pass@host`` -> ``https://user:<redacted>@host``) and secret ``NAME=value``
  pairs inside it redacted.

>>> is_secret_name("HF_TOKEN"), is_secret_name("NCCL_IB_PKEY"), is_secret_name("PWD")
(True, False, False)
>>> redact_value("WANDB_API_KEY", "0123abcd")
'<redacted>'
>>> redact_value("PIP_INDEX_URL", "https://bob:hunter2@pypi.example.com/simple")
'https://bob:<redacted>@pypi.example.com/simple'
>>> redact_text("docker run -e HF_TOKEN=hf_abc -e NCCL_DEBUG=INFO img")
'docker run -e HF_TOKEN=<redacted> -e NCCL_DEBUG=INFO img'
"""

from __future__ import annotations

import re

REDACTED = "<redacted>"

_SECRET_PARTS = frozenset({
    "TOKEN", "TOKENS", "SECRET", "SECRETS", "PASSWORD", "PASSWORDS", "PASSWD", "PASS",
    "PASSPHRASE", "CREDENTIAL", "CREDENTIALS", "CREDS", "AUTH", "AUTHORIZATION", "COOKIE",
    "JWT", "PAT", "KEY", "KEYS", "APIKEY", "ACCESSKEY", "SECRETKEY", "PRIVATEKEY", "AUTHTOKEN",
    "ACCESSTOKEN", "APITOKEN", "AUTHKEY", "SIGNINGKEY", "MASTERKEY", "ACCOUNTKEY", "SASTOKEN",
})
# The value of these is where a secret lives, not the secret.
_LOCATION_SUFFIXES = frozenset({"FILE", "PATH", "DIR", "FILENAME", "SOCK", "SOCKET", "LOCATION"})
_PART_SPLIT = re.compile(r"[_\-.\s]+")
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")

# scheme://userinfo@host: userinfo up to the last '@' before the host part
_URL_CRED = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://)([^/\s:@]+)(:[^/\s@]*)?@(?=[^\s/@]*(?:[/\s?#]|$))")
# NAME=value or NAME: value pairs in free text; value may be quoted
_PAIR = re.compile(
    r"""(?P<pre>(?:^|(?<=[\s;,&|({'"]))(?:--?)?)(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)(?P<sep>=|:[ \t]*)"""
    r"""(?P<val>"[^"]*"?|'[^']*'?|[^\s;,&|)'"]+)"""
)
# --hf-token VALUE / --password VALUE (option then value as the next word)
_OPT_SPACE = re.compile(r"(?P<opt>(?<!\S)--?[A-Za-z][A-Za-z0-9_\-]*)(?P<sp>[ \t]+)(?P<val>\"[^\"]*\"|'[^']*'|[^\s\-][^\s]*)")
_BEARER = re.compile(r"\b(Bearer|Basic|Token)(\s+)[A-Za-z0-9._~+/=\-]{8,}", re.IGNORECASE)
# Tokens recognisable by their own shape, wherever they appear.
_KNOWN_TOKENS = re.compile(
    r"\b(?:hf_[A-Za-z0-9]{30,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,}"
    r"|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|nvapi-[A-Za-z0-9_\-]{30,}|sk-[A-Za-z0-9_\-]{32,}"
    r"|xox[abpr]-[A-Za-z0-9\-]{10,})\b"
)


def is_secret_name(name: str) -> bool:
    """True when a variable or option name says its value is a credential.

    >>> [n for n in ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "HUGGING_FACE_HUB_TOKEN",
    ...     "GITHUB_TOKEN", "NGC_API_KEY", "AZURE_OPENAI_KEY", "OPENAI_API_KEY", "DB_PASSWORD",
    ...     "hf-token", "AZURE_STORAGE_CONNECTION_STRING") if is_secret_name(n)] == [
    ...     "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "HUGGING_FACE_HUB_TOKEN", "GITHUB_TOKEN",
    ...     "NGC_API_KEY", "AZURE_OPENAI_KEY", "OPENAI_API_KEY", "DB_PASSWORD", "hf-token",
    ...     "AZURE_STORAGE_CONNECTION_STRING"]
    True
    >>> [is_secret_name(n) for n in ("SSH_AUTH_SOCK", "AWS_WEB_IDENTITY_TOKEN_FILE", "XAUTHORITY",
    ...     "NCCL_IB_PKEY", "OLDPWD", "KEYBOARD", "BYPASS_CACHE")]
    [False, False, False, False, False, False, False]
    """
    # camelCase (apiKey, AccountKey) splits like snake_case
    spaced = _CAMEL.sub(r"\1_\2", name.strip().lstrip("-"))
    parts = [p for p in _PART_SPLIT.split(spaced.upper()) if p]
    if not parts:
        return False
    if parts[-1] in _LOCATION_SUFFIXES:
        return False
    if "CONNECTION" in parts and "STRING" in parts:
        return True
    return any(p in _SECRET_PARTS for p in parts)


def _mask_url(match: re.Match[str]) -> str:
    scheme, user, password = match.group(1), match.group(2), match.group(3)
    if password is not None:
        return f"{scheme}{user}:{REDACTED}@"
    # a lone userinfo is usually a login name (ssh://git@host), unless it is shaped like a token
    if len(user) >= 20 and re.search(r"\d", user) and re.search(r"[A-Za-z]", user):
        return f"{scheme}{REDACTED}@"
    return match.group(0)


def _unquoted(value: str) -> tuple[str, str]:
    if len(value) >= 1 and value[0] in "\"'":
        return value[0], value[0] if value.endswith(value[0]) and len(value) > 1 else ""
    return "", ""


def redact_text(text: str) -> str:
    """Free text (a command line, a log line) with credentials masked.

    Masks secret ``NAME=value`` / ``NAME: value`` pairs, ``--secret-option value``, HTTP
    ``Bearer``/``Basic`` credentials, URL passwords and well-known token shapes.

    >>> redact_text("export HF_TOKEN='hf x' OMP_NUM_THREADS=1")
    "export HF_TOKEN='<redacted>' OMP_NUM_THREADS=1"
    >>> redact_text("python train.py --wandb-api-key abc123 --seq-length 8192")
    'python train.py --wandb-api-key <redacted> --seq-length 8192'
    >>> redact_text("curl -H 'Authorization: Bearer eyJhbGciOi.xyz' https://u:p@h/x")
    "curl -H 'Authorization: Bearer <redacted>' https://u:<redacted>@h/x"
    """
    if not text:
        return text

    def pair(m: re.Match[str]) -> str:
        if not is_secret_name(m.group("name")):
            return m.group(0)
        val = m.group("val")
        if val == REDACTED or val.lower() in ("bearer", "basic", "token"):
            return m.group(0)
        lq, rq = _unquoted(val)
        return f"{m.group('pre')}{m.group('name')}{m.group('sep')}{lq}{REDACTED}{rq}"

    def opt(m: re.Match[str]) -> str:
        if not is_secret_name(m.group("opt")) or m.group("val") == REDACTED:
            return m.group(0)
        lq, rq = _unquoted(m.group("val"))
        return f"{m.group('opt')}{m.group('sp')}{lq}{REDACTED}{rq}"

    out = _URL_CRED.sub(_mask_url, text)
    out = _BEARER.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", out)
    out = _PAIR.sub(pair, out)
    out = _OPT_SPACE.sub(opt, out)
    out = _KNOWN_TOKENS.sub(REDACTED, out)
    return out


def redact_value(name: str, value: str) -> str:
    """The value to show for variable ``name``: ``<redacted>`` for secret names, else ``value``
    with URL credentials and embedded secret pairs masked.

    >>> redact_value("NCCL_IB_HCA", "mlx5_0,mlx5_3")
    'mlx5_0,mlx5_3'
    >>> redact_value("HF_TOKEN", "")
    ''
    """
    if value == "":
        return value
    if is_secret_name(name):
        return REDACTED
    return redact_text(value)
