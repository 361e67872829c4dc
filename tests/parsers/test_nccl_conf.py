import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document
from clusterdx.facts.parsers import nccl_conf
from tests.parsers.helpers import FORMATS, of_type, parse_or_refuse, parse_text, sample_files, sniff_file

CONTAINER = Path(__file__).parents[1] / "fixtures" / "container"
MINE = {"nccl.conf"}


def test_doctests():
    assert doctest.testmod(nccl_conf).failed == 0


def test_sample_file():
    ctx = parse_text("nccl-conf", (CONTAINER / "nccl.conf").read_text(), name="nccl.conf")
    settings_ = {f.name: f for f in of_type(ctx, "nccl.conf_setting")}
    assert len(settings_) == 6
    assert settings_["NCCL_IB_QPS_PER_CONNECTION"].value == "4"
    assert settings_["NCCL_IB_SL"].value == "3" and settings_["NCCL_IB_SL"].source.line == 5
    assert settings_["NCCL_TOPO_FILE"].value == "/opt/topo/hgx-h100-8nic.xml"
    assert settings_["NCCL_DEBUG"].file == "nccl.conf"


def test_file_from_command_and_bad_lines_warn():
    ctx = parse_text("nccl-conf", "NCCL_DEBUG=INFO\ngarbage here\n", command="cat /home/bob/.nccl.conf")
    [f] = ctx.facts
    assert f.file == "/home/bob/.nccl.conf" and ctx.warnings[0][0] == 2


def test_not_applicable_without_settings():
    with pytest.raises(NotApplicable):
        parse_text("nccl-conf", "# only a comment\n\n")


def test_sniff_leaves_plain_env_dumps_to_env():
    env_grep = Document.from_text("NCCL_DEBUG=INFO\nNCCL_IB_HCA=mlx5_0\n")
    assert nccl_conf.sniff(env_grep) < 0.9  # env scores 0.95 on this and wins
    mixed = Document.from_text("# x\nNCCL_DEBUG=INFO\nPATH=/bin\nHOME=/root\nUSER=root\n")
    assert nccl_conf.sniff(mixed) == 0.0


@pytest.mark.parametrize("path", sample_files(FORMATS, CONTAINER), ids=lambda p: p.name)
def test_sniff_over_fixtures(path):
    score = sniff_file(nccl_conf.sniff, path)
    if path.name in MINE:
        assert score >= 0.9
    else:
        assert score < 0.3


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000))
def test_never_raises_anything_else(text):
    parse_or_refuse("nccl-conf", text)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000))
def test_never_raises_on_bytes(data):
    parse_or_refuse("nccl-conf", data.decode("latin-1"))
