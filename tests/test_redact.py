import doctest

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts import redact
from clusterdx.facts.redact import REDACTED, is_secret_name, redact_text, redact_value


def test_doctests():
    assert doctest.testmod(redact).failed == 0


@pytest.mark.parametrize("name", [
    "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ACCESS_KEY_ID", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN",
    "WANDB_API_KEY", "GITHUB_TOKEN", "GH_TOKEN", "NGC_API_KEY", "NGC_CLI_API_KEY", "AZURE_OPENAI_KEY",
    "AZURE_STORAGE_KEY", "AZURE_CLIENT_SECRET", "AZURE_STORAGE_CONNECTION_STRING", "OPENAI_API_KEY",
    "DB_PASSWORD", "MYSQL_PWD_PASS", "PGPASSWORD_PASSWD", "REGISTRY_AUTH", "DOCKER_AUTH_CONFIG",
    "GOOGLE_APPLICATION_CREDENTIALS_JSON", "SLACK_WEBHOOK_SECRET", "CI_JOB_JWT", "PRIVATE_KEY",
    "ssh_private_key", "apiKey", "secretAccessKey", "--hf-token", "KAGGLE_KEY", "COOKIE",
])
def test_secret_names(name):
    assert is_secret_name(name)


@pytest.mark.parametrize("name", [
    # IB partition key: a 16-bit partition number NCCL needs, not a credential
    "NCCL_IB_PKEY",
    "PWD", "OLDPWD", "PATH", "HOME", "NCCL_IB_HCA", "NCCL_DEBUG", "CUDA_VISIBLE_DEVICES", "KEYBOARD_LAYOUT",
    "XAUTHORITY", "BYPASS_PROXY", "PASSES", "MONKEY", "TOKENIZERS_PARALLELISM", "NCCL_P2P_LEVEL",
    # where a secret is stored, not the secret
    "SSH_AUTH_SOCK", "AWS_WEB_IDENTITY_TOKEN_FILE", "GOOGLE_APPLICATION_CREDENTIALS_PATH", "SSL_KEY_FILE",
    "", "_", "--",
])
def test_not_secret_names(name):
    assert not is_secret_name(name)


def test_redact_value():
    assert redact_value("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG") == REDACTED
    assert redact_value("NCCL_IB_PKEY", "0x8001") == "0x8001"
    assert redact_value("HTTPS_PROXY", "http://proxyuser:Pr0xy!@proxy.corp:3128") == "http://proxyuser:<redacted>@proxy.corp:3128"
    assert redact_value("GIT_URL", "https://oauth2:glpat-abc@gitlab.com/x.git") == "https://oauth2:<redacted>@gitlab.com/x.git"
    assert redact_value("REMOTE", "ssh://git@github.com/org/repo") == "ssh://git@github.com/org/repo"
    assert redact_value("DATABASE_URL", "postgres://u:@db/x") == "postgres://u:<redacted>@db/x"
    assert redact_value("JDBC_OPTS", "user=me;password=hunter2;ssl=1") == "user=me;password=<redacted>;ssl=1"
    assert redact_value("NCCL_ALGO", "Ring;allreduce:Tree") == "Ring;allreduce:Tree"
    assert redact_value("EXTRA_ARGS", "--seq-length 8192 --micro-batch-size 1") == "--seq-length 8192 --micro-batch-size 1"
    assert redact_value("HF_TOKEN", "") == ""


def test_redact_text_command_lines():
    cmd = ("docker run -e HF_TOKEN=hf_x -e NCCL_DEBUG=INFO --env WANDB_API_KEY=\"a b\" "
           "-e AWS_SECRET_ACCESS_KEY='k' img python train.py --hf-token abc --wandb_api_key=def --lr 3e-4")
    assert redact_text(cmd) == (
        "docker run -e HF_TOKEN=<redacted> -e NCCL_DEBUG=INFO --env WANDB_API_KEY=\"<redacted>\" "
        "-e AWS_SECRET_ACCESS_KEY='<redacted>' img python train.py --hf-token <redacted> "
        "--wandb_api_key=<redacted> --lr 3e-4")


def test_redact_text_shapes_urls_headers():
    assert redact_text("pip install -i https://__token__:pypi-AgEIcHlwaS5vcmc@upload.pypi.org/legacy/ x") == \
        "pip install -i https://__token__:<redacted>@upload.pypi.org/legacy/ x"
    assert redact_text("git clone https://ghp_0123456789abcdefghijABCDEFGHIJ012345@github.com/o/r") == \
        "git clone https://<redacted>@github.com/o/r"
    assert redact_text("leaked hf_abcdefghijklmnopqrstuvwxyz0123456789 in log") == "leaked <redacted> in log"
    assert redact_text("key AKIAIOSFODNN7EXAMPLE found") == "key <redacted> found"
    assert redact_text("Authorization: Basic dXNlcjpwYXNzd29yZA==") == "Authorization: Basic <redacted>"
    assert redact_text("password: hunter2") == "password: <redacted>"
    # already redacted text stays as is
    assert redact_text("HF_TOKEN=<redacted>") == "HF_TOKEN=<redacted>"
    # nothing secret: unchanged, including NCCL INFO lines with '=' and ':'
    line = "gpu-node-017:2214097:2214097 [3] NCCL INFO NCCL_IB_HCA set by environment to mlx5_0,mlx5_3"
    assert redact_text(line) == line
    assert redact_text("") == ""


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.text(max_size=300))
def test_never_raises_and_secret_names_never_leak(name, value):
    shown = redact_value(name, value)
    assert isinstance(shown, str)
    if is_secret_name(name) and value:
        assert shown == REDACTED
    assert isinstance(redact_text(name + "=" + value), str)


@settings(max_examples=200, deadline=None)
# "/" cannot appear unencoded in a URL password and "-x" after an option reads as another option
@given(st.from_regex(r"[A-Za-z0-9_.~+][A-Za-z0-9_.~+\-]{5,39}", fullmatch=True))
def test_secret_pair_values_never_survive(secret):
    for template in ("HF_TOKEN={}", "export DB_PASSWORD='{}'", "--api-key {}", "https://u:{}@host/"):
        text = template.format(secret)
        assert secret not in redact_text(text) or secret in template.replace("{}", "")


# -- the forms the robustness audit found leaking (issue 13): (input, shown) ----------------------

LEAKS = [
    ("PGPASSWORD=pg_s3cret psql", "PGPASSWORD=<redacted> psql"),
    ("SSHPASS=ssh_s3cret sshpass -e ssh h", "SSHPASS=<redacted> sshpass -e ssh h"),
    ("MYSQL_PWD=my_s3cret REDIS_PW=rd_s3cret", "MYSQL_PWD=<redacted> REDIS_PW=<redacted>"),
    ("SLACK=https://hooks.slack.com/services/T0/B0/slk_s3cret", "SLACK=https://hooks.slack.com/services/<redacted>"),
    ("https://bob:p@ss_s3cret@db.example.com/x", "https://bob:<redacted>@db.example.com/x"),
    ("password = kv_s3cret", "password = <redacted>"),
    ("curl -u bob:curl_s3cret https://x", "curl -u bob:<redacted> https://x"),
    ("curl --user 'bob:curl_s3cret' https://x", "curl --user 'bob:<redacted>' https://x"),
    ("mysql -uroot -pmy_s3cret db", "mysql -uroot -p<redacted> db"),
    ("docker login -u bob -p dk_s3cret reg.io", "docker login -u bob -p <redacted> reg.io"),
    ("wandb login wb_s3cret0123456789", "wandb login <redacted>"),
    ("machine api.x.com login bob password nrc_s3cret", "machine api.x.com login bob password <redacted>"),
    ('{"password": "js_s3cret", "user": "bob"}', '{"password": "<redacted>", "user": "bob"}'),
    ('{"auths": {"reg.io": {"auth": "Ym9iOmRrX3MzY3JldA=="}}}', '{"auths": {"reg.io": {"auth": "<redacted>"}}}'),
    ("token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sig_s3cret", "token <redacted>"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx+pem/s3cret0123456789abcdefghijklmnopqrstuvwx\n"
     "-----END RSA PRIVATE KEY-----", "-----BEGIN RSA PRIVATE KEY-----<redacted>-----END RSA PRIVATE KEY-----"),
    ("reason: first line: 'HF_TOKEN=q_s3cret'", "reason: first line: 'HF_TOKEN=<redacted>'"),
]

KEPT = [
    "mysql -u root -p db", "mkdir -p /tmp/x; ssh -p 22 host", "docker run -p 8080:80 img", "PWD=/home/u OLDPWD=/",
    "vm.swappiness = 60", "password is wrong", "login ok", "https://git@github.com/o/r",
    '{"name": "NCCL_IB_HCA", "value": "mlx5_0"}', "NCCL INFO NET/IB : Using [0]mlx5_0:1/IB",
]


@pytest.mark.parametrize("text, shown", LEAKS)
def test_audit_forms_are_redacted(text, shown):
    assert redact_text(text) == shown
    assert "s3cret" not in redact_text(text)
    assert redact_text(shown) == shown  # idempotent


@pytest.mark.parametrize("text", KEPT)
def test_look_alikes_are_kept(text):
    assert redact_text(text) == text


def test_redact_lines_masks_a_pem_body_split_over_lines():
    from clusterdx.facts.redact import redact_lines

    lines = ["key:", "-----BEGIN OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAAA", "-----END OPENSSH PRIVATE KEY-----",
             "after"]
    assert redact_lines(lines) == ["key:", lines[1], REDACTED, lines[3], "after"]


# -- every form, through every channel out of an input (issue 13: redaction at the source) --------

#: the audit's forms plus the two it found in command records
FORMS = LEAKS + [
    ("curl -H 'Authorization: Bearer abcdefgh_s3cret12345' https://x",
     "curl -H 'Authorization: Bearer <redacted>' https://x"),
    ("docker run -e HF_TOKEN=hf_s3cret -e NCCL_DEBUG=INFO img", "docker run -e HF_TOKEN=<redacted> -e NCCL_DEBUG=INFO img"),
]
#: what must never be shown: the planted secrets (the docker auth is base64 of bob:dk_s3cret)
PLANTED = ("s3cret", "Ym9iOmRrX3MzY3JldA")
ONE_LINE = [t for t, _ in FORMS if "\n" not in t]


def _leaks(text: str) -> list[str]:
    return [p for p in PLANTED if p in text]


@pytest.mark.parametrize("text, shown", FORMS[-2:])
def test_command_record_forms_are_redacted(text, shown):
    assert redact_text(text) == shown


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """A ticket folder carrying every form: as transcript commands, as the first line of a file
    (one file each), as values in an environment dump, and in a file no parser reads."""
    d = tmp_path_factory.mktemp("planted")
    (d / "session.txt").write_text("".join(f"user@gpu-1:~$ {t}\nok\n" for t in ONE_LINE))
    for i, (t, _) in enumerate(FORMS):
        (d / f"form{i:02d}.txt").write_text(t + "\nsecond line\n")
    (d / "env.txt").write_text("".join(f"EXTRA_{i}={t}\n" for i, t in enumerate(ONE_LINE))
                               + "PGPASSWORD=pg_s3cret\nSSHPASS=ssh_s3cret\nMYSQL_PWD=my_s3cret\nREDIS_PW=rd_s3cret\n"
                               + "NCCL_DEBUG=INFO\n")
    return d


def test_no_form_leaks_into_input_records_or_facts(planted):
    from clusterdx.facts.ingest import ingest

    res = ingest([planted])
    assert any(r.command for r in res.inputs), "the transcript was not split into commands"
    for r in res.inputs:
        for what in ("command", "first_line", "reason"):
            assert not _leaks(getattr(r, what) or ""), (r.path, what, getattr(r, what))
        assert not any(_leaks(w.message) for w in r.warnings), r.path
    for f in res.facts:
        assert not _leaks(f.model_dump_json()), f


def test_no_form_leaks_into_any_report(planted, kb):
    from clusterdx.engine.diagnose import collect_paths, run_diagnosis
    from clusterdx.explainers import FORMATS, renderer, reply

    diag = run_diagnosis(collect_paths([planted]), kb=kb)
    for fmt in FORMATS:
        out = renderer(fmt)(diag.report, verbose=True) if fmt == "text" else renderer(fmt)(diag.report)
        assert not _leaks(out), fmt
    assert not any(_leaks(f.model_dump_json()) for f in diag.facts)
    assert not _leaks(reply.render(diag.report))  # the triage reply to the customer


@pytest.mark.parametrize("how", ["text", "env", "environ", "argv"])
def test_no_form_leaks_into_collected_bytes(how):
    from clusterdx.facts.collect.secrets import redact_bytes

    if how == "text":
        data = "\n".join(t for t, _ in FORMS).encode()
    elif how == "env":
        data = "".join(f"EXTRA_{i}={t}\n" for i, t in enumerate(ONE_LINE)).encode()
    elif how == "environ":
        data = "\0".join(f"EXTRA_{i}={t}" for i, t in enumerate(ONE_LINE)).encode() + b"\0"
    else:  # a command line as /proc/PID/cmdline holds it: one argument per shell word
        import shlex

        # a JSON document is no command line; as one argument of one it is: curl -d '{...}'
        lines = [t if not t.startswith("{") else f"curl -d {shlex.quote(t)} https://x" for t in ONE_LINE]
        argvs = [("\0".join(shlex.split(t)) + "\0").encode() for t in lines]
        data = b"".join(argvs)
    # one /proc/PID/cmdline per command line
    out = "".join(redact_bytes(a, how).decode("utf-8", "replace") for a in (argvs if how == "argv" else [data]))
    assert not _leaks(out), out
    if how in ("environ", "argv"):
        assert out.count("\0") == data.count(b"\0")  # the arguments keep their boundaries


def test_no_form_leaks_into_a_collect_bundle(tmp_path, monkeypatch):
    """A fake tool that prints every form on stdout and stderr and fails: data, stderr and the
    manifest's reason are all redacted."""
    import os
    import tarfile

    from clusterdx.facts.collect import CollectOptions, collect, write_bundle
    from clusterdx.facts.collect.probe import Probe

    from tests.collect.conftest import make_tool

    bindir = tmp_path / "bin"
    bindir.mkdir()
    forms = tmp_path / "forms.txt"
    forms.write_text("\n".join(t for t, _ in FORMS) + "\n")
    make_tool(bindir, "dmesg", f"cat {forms}")
    make_tool(bindir, "failing", f"head -1 {forms} >&2; cat {forms} >&2; exit 3")
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    probes = [Probe("dmesg", argv=("dmesg",), format="dmesg", redact="text"),
              Probe("failing", argv=("failing",), redact="text")]
    col = collect(CollectOptions(probes=probes, argv=["clusterdx", "collect", "--note", "pw=x", ONE_LINE[0]]))
    path = write_bundle(col, tmp_path / "b.tar.gz")
    with tarfile.open(path) as tar:
        for m in tar.getmembers():
            body = tar.extractfile(m).read().decode("utf-8", "replace") if m.isfile() else ""
            assert not _leaks(body), (m.name, _leaks(body))


def test_deeply_nested_pairs_are_bounded_not_recursed_without_end():
    from clusterdx.facts.redact import redact_text

    out = redact_text("NCCL_X=" * 10000 + "1")
    assert out.startswith("NCCL_X=NCCL_X=") and out.endswith("<redacted>")
    assert redact_text("EXTRA=PGPASSWORD=hunter2") == "EXTRA=PGPASSWORD=<redacted>"


def test_a_warning_quoting_another_line_of_the_same_shape_keeps_no_secret():
    # hostile bench: one webhook's token, masked by prefix inside a warning quoting a second
    # webhook, broke the URL shape so the second secret was shown (https:<redacted>0/B0/...)
    from facts.redact import mask_tokens, secret_tokens

    first = "https://hooks.slack.com/services/T0/B0/PLNTs3cret0000001abcdefgh"
    second = "https://hooks.slack.com/services/T0/B0/PLNTs3cret0000002zzzzzzzz"
    tokens = secret_tokens([first, second])
    for message in (f"row with 3 fields: {second}", f"unrecognised line {first[:52]}", f"x {first} y {second}"):
        shown = mask_tokens(message, tokens)
        assert "PLNTs3cret" not in shown, shown
        assert "<redacted>" in shown
