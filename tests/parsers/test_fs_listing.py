import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.ingest import ingest
from clusterdx.facts.parsers import fs_listing as fs
from clusterdx.facts.sniff import best_format
from tests.parsers.helpers import FORMATS, of_type, parse_or_refuse, parse_text, sample_files, sniff_file

FIX = Path(__file__).parents[1] / "fixtures"
PRES = FIX / "presence"
REAL = FIX / "real"
OTHERS = [FORMATS, FIX / "container", FIX / "net", FIX / "nvidia", FIX / "pcie", FIX / "gpu_query"]


def presence(facts):
    return {(f.name, f.present) for f in facts if f.fact_type == "fs.presence"}


def test_doctests():
    assert doctest.testmod(fs).failed == 0


@pytest.mark.parametrize("path,expected", [
    ("libnccl.so.2.21.5", ("library", "libnccl.so.2", "2.21.5")),
    ("/usr/lib/libnccl.so", ("library", "libnccl.so.2", "")),
    ("libibverbs.so.1.14.48.0", ("library", "libibverbs.so.1", "1.14.48.0")),
    ("libcuda.so.550.90.07", ("library", "libcuda.so.1", "550.90.07")),
    ("/opt/x/libnccl-net.so.0.0.0", ("plugin", "libnccl-net.so", "")),
    ("libnccl-net-ofi.so", ("plugin", "libnccl-net-ofi.so", "")),
    ("nvidia-peermem.ko.zst", ("module", "nvidia-peermem", "")),
    ("/dev/infiniband/uverbs3", ("device", "/dev/infiniband/uverbs3", "")),
    ("/dev/nvidia-uvm", ("device", "/dev/nvidia-uvm", "")),
    ("/dev/shm/", ("device", "/dev/shm", "")),
    ("libc.so.6", None), ("/dev/null", None), ("libnccl_static.a", None), ("uverbs0", None),
])
def test_classify(path, expected):
    assert fs.classify(path) == expected


def test_gpu_node_transcript_end_to_end():
    res = ingest([PRES / "gpu-node-transcript.txt"])
    assert [r.format for r in res.inputs] == ["ls", "ls", "ldconfig", "ls", "find", "find"]
    assert all(r.status == "parsed" for r in res.inputs)
    facts = res.facts
    p = presence(facts)
    assert {("/dev/infiniband/uverbs0", True), ("/dev/infiniband/rdma_cm", True), ("/dev/nvidiactl", True),
            ("/dev/nvidia-uvm", True), ("libnccl.so.2", True), ("libibverbs.so.1", True),
            ("nvidia-peermem", True), ("libnccl-net.so", False)} <= p
    # the folder was listed whole and holds uverbs: no absence claimed
    assert ("/dev/infiniband/uverbs*", False) not in p
    # ldconfig filtered by an alternation: nothing proven absent
    assert not [f for f in facts if f.listing == "ldconfig" and not f.present]
    versions = {f.version for f in facts if f.name == "libnccl.so.2"} - {""}
    assert versions == {"2.21.5"}
    [net] = [f for f in facts if f.name == "libnccl-net.so"]
    assert net.path == "/" and net.listing == "find" and net.node == "gpu-node-07"


def test_container_transcript_crlf_with_errors_and_not_found():
    res = ingest([PRES / "container-transcript-crlf.txt"])
    assert [r.format for r in res.inputs] == ["ls", "ldd", "ldconfig"]
    p = presence(res.facts)
    assert {("/dev/infiniband/uverbs*", False), ("/dev/shm", True), ("libnccl.so.2", True),
            ("libibverbs.so.1", False), ("libcudart.so.12", False), ("libnccl-net.so", False)} <= p
    # grep nccl printed nothing: the loader cache holds no NCCL, but nothing is said about libibverbs
    listed = [f for f in res.facts if f.fact_type == "fs.presence"]
    cache = {f.name for f in listed if f.listing == "ldconfig"}
    assert cache == {"libnccl.so.2", "libnccl-net.so"}
    [miss] = [f for f in listed if f.name == "/dev/infiniband/uverbs*"]
    assert miss.source.line == 2 and miss.node == "train-pod-0"


def test_real_ls_dev_of_this_machine():
    text = (REAL / "ls-l-dev-sandbox.txt").read_text()
    for command in ("ls -l /dev", None):  # /dev recognised by what it holds without the command
        ctx = parse_text("ls", text, command=command)
        p = presence(ctx.facts)
        assert ("/dev/shm", True) in p and ("/dev/nvidiactl", False) in p and ("/dev/infiniband", False) in p
    best, _ = best_format(Document.from_text(text))
    assert best.name == "ls"
    # -d lists /dev itself, not what is in it: no absence
    with pytest.raises(NotApplicable):
        parse_text("ls", "drwxr-xr-x 18 root root 3960 Dec  1 20:20 /dev\n", command="ls -ld /dev")
    ctx = parse_text("ls", "\n".join(text.splitlines()[:40]) + "\n", command="ls -l /dev | head -40")
    assert not [f for f in ctx.facts if not f.present]  # cut by head: absence means nothing


def test_real_ls_missing_devices_of_this_machine():
    ctx = parse_text("ls", (REAL / "ls-dev-missing-sandbox.txt").read_text(),
                     command="ls -l /dev/shm /dev/infiniband /dev/nvidia*")
    assert presence(ctx.facts) == {("/dev/infiniband", False), ("/dev/nvidia*", False), ("/dev/shm", True)}


def test_real_ldconfig_of_this_machine_proves_absence():
    text = (REAL / "ldconfig-p-sandbox.txt").read_text()
    ctx = parse_text("ldconfig", text, command="ldconfig -p")
    p = presence(ctx.facts)
    assert ("libnccl.so.2", False) in p and ("libibverbs.so.1", False) in p and ("libcuda.so.1", False) in p
    assert not ctx.warnings
    # without the header line (an excerpt) and without a grep, nothing is proven absent
    excerpt = "\n".join(text.splitlines()[1:20])
    with pytest.raises(NotApplicable):
        parse_text("ldconfig", excerpt)
    best, _ = best_format(Document.from_text(text))
    assert best.name == "ldconfig"


def test_ldconfig_present_libraries():
    text = ("1203 libs found in cache `/etc/ld.so.cache'\n"
            "\tlibnccl.so.2 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnccl.so.2\n"
            "\tlibibverbs.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libibverbs.so.1\n"
            "\tlibmlx5.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libmlx5.so.1\n")
    p = presence(parse_text("ldconfig", text).facts)
    assert {("libnccl.so.2", True), ("libibverbs.so.1", True), ("libmlx5.so.1", True),
            ("librdmacm.so.1", False), ("libnccl-net.so", False)} <= p
    assert ("libnccl.so.2", False) not in p
    # grep -v inverts the filter: no absence
    with pytest.raises(NotApplicable):
        parse_text("ldconfig", "", command="ldconfig -p | grep -v nccl")


def test_real_ldd_and_find_of_this_machine():
    with pytest.raises(NotApplicable):  # /bin/ls links nothing GPU related, and nothing is missing
        parse_text("ldd", (REAL / "ldd-bin-ls-sandbox.txt").read_text())
    assert fs.sniff_ldd(Document.from_text((REAL / "ldd-bin-ls-sandbox.txt").read_text())) >= 0.8
    with pytest.raises(NotApplicable):
        parse_text("find", (REAL / "find-libc-sandbox.txt").read_text(), command="find /usr/lib -name 'libc.so*'")
    # the same search for NCCL printing nothing proves it absent below /usr/lib
    ctx = parse_text("find", "", command="find /usr/lib -name 'libnccl.so*'")
    [f] = ctx.facts
    assert (f.name, f.present, f.path) == ("libnccl.so.2", False, "/usr/lib")
    # -path / -newer / -exec: not a plain name search, no absence
    with pytest.raises(NotApplicable):
        parse_text("find", "", command="find /usr/lib -name 'libnccl.so*' -newer /tmp/x")


def test_find_plugins_without_command():
    ctx = parse_text("find", (PRES / "find-plugins.txt").read_text())
    p = presence(ctx.facts)
    assert {("libnccl-net.so", True), ("libnccl-net-ofi.so", True), ("libmlx5-rdmav34.so", True)} <= p
    assert [f.version for f in ctx.facts if f.name == "libnccl.so.2"] == ["2.23.4"]
    assert not [f for f in ctx.facts if not f.present]


def test_unrelated_listing_is_not_claimed():
    text = (PRES / "ls-unrelated-folder.txt").read_text()
    assert fs.sniff_ls(Document.from_text(text)) < 0.5
    with pytest.raises(NotApplicable):
        parse_text("ls", text, command="ls -l ~/project")
    with pytest.raises(NotApplicable):
        parse_text("ls", "README.md  configs  train.py\n", command="ls")
    # an empty listing of a folder that is not /dev or /dev/infiniband says nothing
    with pytest.raises(NotApplicable):
        parse_text("ls", "", command="ls /tmp")


def test_empty_infiniband_folder_proves_no_verbs_device():
    ctx = parse_text("ls", "total 0\n", command="ls -l /dev/infiniband")
    assert presence(ctx.facts) == {("/dev/infiniband", True), ("/dev/infiniband/uverbs*", False),
                                   ("/dev/infiniband/rdma_cm", False)}
    ctx = parse_text("ls", "uverbs0  rdma_cm\n", command="ls /dev/infiniband")
    assert ("/dev/infiniband/uverbs0", True) in presence(ctx.facts)
    assert not [f for f in ctx.facts if not f.present]


def test_permission_denied_makes_the_listing_partial():
    text = "crw-rw-rw- 1 root root 10, 122 Mar  4 09:12 rdma_cm\nls: reading directory '/dev/infiniband': Input/output error\n"
    ctx = parse_text("ls", text, command="ls -l /dev/infiniband")
    assert ctx.warnings and not [f for f in ctx.facts if not f.present]


@pytest.mark.parametrize("path", sample_files(*OTHERS), ids=lambda p: p.name)
def test_sniffers_over_other_fixtures(path):
    for sniffer in (fs.sniff_ls, fs.sniff_find, fs.sniff_ldconfig, fs.sniff_ldd):
        assert sniff_file(sniffer, path) < 0.3, sniffer.__name__


@pytest.mark.slow  # 36 kB lines times 50 through four formats (a linearity bench)
def test_long_repeated_lines_are_fast():
    line = "crw-rw-rw- 1 root root 195,   0 Mar  4 09:12 " + "/dev/nvidia0" * 3000 + "\n"
    for fmt in ("ls", "find", "ldconfig", "ldd"):
        parse_or_refuse(fmt, line * 50)
        parse_or_refuse(fmt, ("\t" + "a" * 20000 + " => not found x\n") * 20)


@pytest.mark.parametrize("fmt", ["ls", "find", "ldconfig", "ldd"])
@settings(max_examples=100, deadline=None)
@given(st.text(max_size=1500))
def test_never_raises_anything_else(fmt, text):
    parse_or_refuse(fmt, text)
