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
from functools import lru_cache

from clusterdx.facts import lazyre


REDACTED = "<redacted>"

_SECRET_PARTS = frozenset({
    "TOKEN", "TOKENS", "SECRET", "SECRETS", "PASSWORD", "PASSWORDS", "PASSWD", "PASS",
    "PASSPHRASE", "CREDENTIAL", "CREDENTIALS", "CREDS", "AUTH", "AUTHORIZATION", "COOKIE",
    "JWT", "PAT", "KEY", "KEYS", "APIKEY", "ACCESSKEY", "SECRETKEY", "PRIVATEKEY", "AUTHTOKEN",
    "ACCESSTOKEN", "APITOKEN", "AUTHKEY", "SIGNINGKEY", "MASTERKEY", "ACCOUNTKEY", "SASTOKEN",
    "PGPASSWORD", "PGPASS", "SSHPASS", "IDENTITYTOKEN", "REFRESHTOKEN", "WEBHOOK", "WEBHOOKURL",
    "PASSCODE", "CLIENTSECRET",
})
# short forms that are secret only as a part of a longer name: MYSQL_PWD, REDIS_PW, but not PWD
# (the working directory)
_SECRET_SUFFIX_PARTS = frozenset({"PWD", "PW"})
# glued names ending in these are secrets too: REDISPASSWORD, DBPASSWD, APPSECRET
_SECRET_ENDINGS = ("PASSWORD", "PASSWD", "SECRET", "APITOKEN", "APIKEY")
# The value of these is where a secret lives, not the secret.
_LOCATION_SUFFIXES = frozenset({"FILE", "PATH", "DIR", "FILENAME", "SOCK", "SOCKET", "LOCATION"})
_PART_SPLIT = lazyre.compile(r"[_\-.\s]+")
_CAMEL = lazyre.compile(r"([a-z0-9])([A-Z])")

# scheme://userinfo@host: userinfo up to the last '@' before the host part
_URL_CRED = lazyre.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://)([^/\s:@]+)(:[^/\s]*)?@(?=[^\s/@]*(?:[/\s?#]|$))")
# NAME=value or NAME: value pairs in free text; value may be quoted
_PAIR = lazyre.compile(
    r"""(?P<pre>(?:^|(?<=[\s;,&|({'"]))(?:--?)?)(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)(?P<sep>[ \t]*=[ \t]*|:[ \t]*)"""
    # a value may be a pair itself, spaced (EXTRA=password = x): taken whole, redacted within
    r"""(?P<val>"[^"]*"?|'[^']*'?|[A-Za-z_][A-Za-z0-9_.\-]*[ \t]+=[ \t]*[^\s;,&|)'"]+|[^\s;,&|)'"]+)"""
)
# --hf-token VALUE / --password VALUE (option then value as the next word)
_OPT_SPACE = lazyre.compile(r"(?P<opt>(?<!\S)--?[A-Za-z][A-Za-z0-9_\-]*)(?P<sp>[ \t]+)(?P<val>\"[^\"]*\"|'[^']*'|[^\s\-][^\s]*)")
_BEARER = lazyre.compile(r"\b(Bearer|Basic|Token)(\s+)[A-Za-z0-9._~+/=\-]{8,}", re.IGNORECASE)
# Tokens recognisable by their own shape, wherever they appear.
# JSON "name": "value" (docker config.json "auth", a credentials file's "password")
_JSON_PAIR = lazyre.compile(r'"(?P<name>[A-Za-z_][A-Za-z0-9_.\-]{0,80})"(?P<sep>[ \t]*:[ \t]*)"(?P<val>[^"\\]*(?:\\.[^"\\]*)*)"')
# curl -u user:password / --user user:password / --proxy-user
_CURL_USER = lazyre.compile(r"(?P<opt>(?<!\S)(?:-u|--user|--proxy-user|-U)[ \t]*)(?P<q>['\"]?)(?P<user>[^\s:'\"]*):(?P<pw>[^\s'\"]+)")
# netrc: "machine h login u password X", or a line "password X"
_NETRC = lazyre.compile(r"(?P<pre>(?:\blogin[ \t]+\S+[ \t]+|^[ \t]*))(?P<kw>password|passwd)(?P<sp>[ \t]+)"
                    r"(?P<val>[^\s=:]\S*)", re.MULTILINE)
# the line-start form only as a whole line (a .netrc continuation), not prose ("password is wrong")
_NETRC_ALONE = lazyre.compile(r"^[ \t]*(?:password|passwd)[ \t]+\S+[ \t]*$", re.MULTILINE)
# CLIs that take a credential as a bare word: wandb login KEY, huggingface-cli login TOKEN
_LOGIN_WORD = lazyre.compile(r"\b(?P<cmd>(?:wandb|huggingface-cli|hf)[ \t]+login(?:[ \t]+--relogin)?[ \t]+)(?P<val>[^\s\-][^\s]*)")
# CLIs whose -p is a password: mysql -pX, docker login -p X (handled per command, see _short_p)
_P_COMMANDS = lazyre.compile(r"\b(?P<glued>mysql|mysqldump|mysqladmin|mariadb|mariadb-dump|mysqlsh)\b|\b(?:docker|podman|nerdctl|buildah|skopeo|helm(?:[ \t]+registry)?|oras)[ \t]+login\b")
_SHORT_P = lazyre.compile(r"(?P<opt>(?<!\S)-p)(?P<sp>[ \t]*)(?P<val>[^\s\-'\"][^\s]*|'[^']*'|\"[^\"]*\")")
_CMD_SPLIT = lazyre.compile(r"([|;&\n]+)")
# Slack / Discord / Teams webhooks carry their secret in the path
_WEBHOOK = lazyre.compile(r"\b(https?://(?:hooks\.slack\.com/(?:services|workflows|triggers)|discord(?:app)?\.com/api/webhooks"
                      r"|[A-Za-z0-9.-]+\.webhook\.office\.com/webhookb2))/[^\s'\"<>]+")
_JWT = lazyre.compile(r"\beyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*")
# a PEM private key: the whole block, or (when lines are redacted one at a time) its body lines
_PEM_BLOCK = lazyre.compile(r"-----BEGIN (?P<kind>[A-Z0-9 ]{0,40}PRIVATE KEY)-----[\s\S]*?(?:-----END (?P=kind)-----|\Z)")
# ... or one such line quoted elsewhere (a parser's warning quotes the line it could not read):
# a run of 40+ base64 characters with all four kinds (+ or /, digit, lower, upper), not a path
# (a run starting with '/'); tried only where a run starts, so linear
_PEM_LINE = lazyre.compile(r"(?<![A-Za-z0-9+/=])(?!/)(?=[A-Za-z0-9+/]*[+/])(?=[A-Za-z0-9+/]*[0-9])(?=[A-Za-z0-9+/]*[a-z])"
                       r"(?=[A-Za-z0-9+/]*[A-Z])[A-Za-z0-9+/]{40,}={0,2}")
_KNOWN_TOKENS = lazyre.compile(
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
    if len(parts) > 1 and parts[-1] in _SECRET_SUFFIX_PARTS:
        return True
    return any(p in _SECRET_PARTS or (len(p) > 6 and p.endswith(_SECRET_ENDINGS)) for p in parts)


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


#: levels of NAME=VALUE inside a value that are looked into (EXTRA=PGPASSWORD=x is one)
_MAX_NESTING = 4


def redact_text(text: str, _depth: int = 0) -> str:
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

    def _nested(value: str) -> str:
        # pairs inside pairs are looked into a few levels deep; deeper nesting is hostile input,
        # and what is left of it is masked rather than read (no recursion without a bound)
        return redact_text(value, _depth + 1) if _depth < _MAX_NESTING else REDACTED

    def pair(m: re.Match[str]) -> str:
        val = m.group("val")
        if not is_secret_name(m.group("name")):
            lq, rq = _unquoted(val)
            if lq and len(val) > 2:  # a quoted value may hold pairs of its own: reason: 'TOKEN=x'
                inner = val[1:len(val) - len(rq)]
                return f"{m.group('pre')}{m.group('name')}{m.group('sep')}{lq}{_nested(inner)}{rq}"
            if not lq and ("=" in val or ":" in val):  # so may a bare one: EXTRA=PGPASSWORD=x
                return f"{m.group('pre')}{m.group('name')}{m.group('sep')}{_nested(val)}"
            return m.group(0)
        if val == REDACTED or val.lower() in ("bearer", "basic", "token"):
            return m.group(0)
        lq, rq = _unquoted(val)
        return f"{m.group('pre')}{m.group('name')}{m.group('sep')}{lq}{REDACTED}{rq}"

    def opt(m: re.Match[str]) -> str:
        if not is_secret_name(m.group("opt")) or m.group("val") == REDACTED:
            return m.group(0)
        lq, rq = _unquoted(m.group("val"))
        return f"{m.group('opt')}{m.group('sp')}{lq}{REDACTED}{rq}"

    def curl_user(m: re.Match[str]) -> str:
        return f"{m.group('opt')}{m.group('q')}{m.group('user')}:{REDACTED}"

    def json_pair(m: re.Match[str]) -> str:
        if not is_secret_name(m.group("name")) or m.group("val") in ("", REDACTED):
            return m.group(0)
        return f'"{m.group("name")}"{m.group("sep")}"{REDACTED}"'

    def keep_kw(m: re.Match[str]) -> str:
        if m.group("val") == REDACTED:
            return m.group(0)
        if "login" not in m.group("pre") and _NETRC_ALONE.match(m.string, m.start()) is None:
            return m.group(0)
        return f"{m.group('pre')}{m.group('kw')}{m.group('sp')}{REDACTED}"

    out = _PEM_BLOCK.sub(lambda m: f"-----BEGIN {m.group('kind')}-----{REDACTED}"
                         f"{'-----END ' + m.group('kind') + '-----' if m.group(0).endswith('-----') else ''}", text)
    out = _PEM_LINE.sub(REDACTED, out)
    out = _JWT.sub(REDACTED, out)
    out = _WEBHOOK.sub(lambda m: f"{m.group(1)}/{REDACTED}", out)
    out = _URL_CRED.sub(_mask_url, out)
    out = _BEARER.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", out)
    out = _JSON_PAIR.sub(json_pair, out)
    out = _PAIR.sub(pair, out)
    out = _CURL_USER.sub(curl_user, out)
    out = _NETRC.sub(keep_kw, out)
    out = _LOGIN_WORD.sub(lambda m: m.group(0) if m.group("val") == REDACTED else f"{m.group('cmd')}{REDACTED}", out)
    out = _OPT_SPACE.sub(opt, out)
    if _P_COMMANDS.search(out):
        out = _short_p(out)
    out = _KNOWN_TOKENS.sub(REDACTED, out)
    return out


def _short_p(text: str) -> str:
    """``-pSECRET`` / ``-p SECRET`` redacted in the commands whose ``-p`` is a password (mysql,
    docker login), and only there: ``mkdir -p``, ``ssh -p 22`` and ``docker run -p 80:80`` keep it."""
    pieces = _CMD_SPLIT.split(text)
    for i, piece in enumerate(pieces):
        m = _P_COMMANDS.search(piece)
        if m is None:
            continue
        head, tail = piece[:m.end()], piece[m.end():]

        glued_only = m.group("glued") is not None  # mysql -p alone prompts; -p db is a database

        def one(p: re.Match[str]) -> str:
            if p.group("val") == REDACTED or (glued_only and p.group("sp")):
                return p.group(0)
            lq, rq = _unquoted(p.group("val"))
            return f"{p.group('opt')}{p.group('sp')}{lq}{REDACTED}{rq}"

        pieces[i] = head + _SHORT_P.sub(one, tail)
    return "".join(pieces)


_TOKEN_SPLIT = lazyre.compile(r"[\s=:@'\"]+")
#: characters of a document searched for secrets to mask in its warnings (see secret_tokens)
SECRET_SCAN_CHARS = 8 << 20


def secret_tokens(lines: list[str], limit: int = SECRET_SCAN_CHARS) -> list[str]:
    """The words of ``lines`` that the redactor masks (6 characters or more), longest first:
    what a message quoting a cut of one of these lines must not show. The first ``limit``
    characters are searched, lines that may hold a secret only.

    >>> secret_tokens(["vm.swappiness = 60", "export HF_TOKEN=hf_s3cretvalue0"])
    ['hf_s3cretvalue0']
    """
    found: set[str] = set()
    seen = 0
    for line in lines:
        seen += len(line)
        if seen > limit:
            break
        if _HINT.search(line) is None:
            continue
        masked = redact_text(line)
        if masked != line:
            found |= {t for t in set(_TOKEN_SPLIT.split(line)) - set(_TOKEN_SPLIT.split(masked)) if len(t) >= 6}
    return sorted(found, key=len, reverse=True)


def mask_tokens(message: str, tokens: list[str]) -> str:
    """``message`` with each of ``tokens`` (see :func:`secret_tokens`) masked, or the longest
    prefix of one (6 characters or more) that a cut left in it, then redacted as text.

    >>> mask_tokens("bad entry: 'DATABASE_URL=https://bob:p@ssPLNT1234'", ["ssPLNT1234567"])
    "bad entry: 'DATABASE_URL=https://bob:<redacted>@<redacted>'"
    """
    # shape-based patterns first: a token's prefix masked first can break the shape they match
    # (``https://hooks.slack.com/services/T0/...`` cut into ``https:<redacted>0/...``)
    message = redact_text(message)
    for token in tokens:
        if token[:6] not in message:
            continue
        for k in range(len(token), 5, -1):
            if token[:k] in message:
                message = message.replace(token[:k], REDACTED)
                break
    return redact_text(message)


def redact_lines(lines: list[str]) -> list[str]:
    """Lines redacted one at a time, with the body of a PEM private key block (which no single
    line shows as one) replaced too."""
    out: list[str] = []
    inside = False
    for line in lines:
        if inside:
            if line.strip().startswith("-----END "):
                inside = False
                out.append(line)
            else:
                out.append(REDACTED if line.strip() else line)
            continue
        if re.search(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----\s*$", line):
            inside = True
            out.append(line)
            continue
        out.append(redact_text(line))
    return out


# text that may hold something redact_text would mask: a cheap test before the full pass
_HINT = lazyre.compile(r"[=:@]|-----BEGIN|eyJ|hf_|gh[pousr]_|github_pat_|AKIA|ASIA|xox[abpr]-|sk-|nvapi-|login"
                   r"|[Pp][Aa][Ss][Ss]|[A-Za-z0-9+/]{40}")


def redact_field(value: str) -> str:
    """A fact's string field with credentials masked (``redact_text``, after a cheap test).

    Parsers copy one long line into many facts (a launch line into each of its bindings): the
    last few thousand results are remembered, so a line is redacted once, not once per fact.

    >>> redact_field("mlx5_0"), redact_field("https://u:pw@h/x")
    ('mlx5_0', 'https://u:<redacted>@h/x')
    """
    if not value or _HINT.search(value) is None:
        return value
    return _redact_cached(value)


@lru_cache(maxsize=4096)
def _redact_cached(value: str) -> str:
    return redact_text(value)


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
