import doctest
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.parsers import lsmod
from tests.parsers.helpers import of_type, parse_text

FIXTURES = Path(__file__).parents[1] / "fixtures"
NET = FIXTURES / "net"


def load(fmt, name, command=None):
    return parse_text(fmt, (NET / name).read_text(), command=command, name=name)


def test_doctests():
    assert doctest.testmod(lsmod).failed == 0


def test_gpu_node_with_peermem_and_gdrcopy():
    ctx = load("lsmod", "lsmod-gpu-node.txt")
    assert not ctx.warnings
    mods = {m.name: m for m in of_type(ctx, "kernel.module")}
    assert len(mods) == 30
    nv = mods["nvidia"]
    assert (nv.size, nv.refcount, nv.used_by, nv.source.line) == \
        (54226944, 121, ["nvidia_uvm", "nvidia_peermem", "nvidia_fs", "nvidia_modeset"], 7)
    assert mods["nvidia_peermem"].used_by == [] and mods["nvidia_peermem"].refcount == 0
    [s] = of_type(ctx, "kernel.modules_summary")
    assert (s.count, s.peermem_loaded, s.gdrcopy_loaded, s.complete) == (30, True, True, True)
    assert {"nvidia_peermem", "gdrdrv", "nvidia_fs", "mlx5_core", "ib_uverbs", "rdma_ucm", "bonding"} <= set(s.names)


def test_node_without_peermem():
    ctx = load("lsmod", "lsmod-no-peermem.txt")
    [s] = of_type(ctx, "kernel.modules_summary")
    assert (s.count, s.peermem_loaded, s.complete) == (11, False, True)
    assert "nvidia_peermem" not in s.names and "mlx5_ib" in s.names
    xt = [m for m in of_type(ctx, "kernel.module") if m.name == "x_tables"][0]
    assert (xt.used_by, xt.state) == ([], "permanent")


def test_grep_filtered_listing_is_incomplete():
    ctx = parse_text("lsmod", "nvidia_uvm           4956160  0\nnvidia              54226944  2 nvidia_uvm\n",
                     command="lsmod | grep nvidia")
    [s] = of_type(ctx, "kernel.modules_summary")
    assert (s.count, s.complete, s.peermem_loaded) == (2, False, False)
    # without the header it is incomplete even when the command is not known
    ctx = parse_text("lsmod", "nvidia_uvm           4956160  0\nnvidia              54226944  2 nvidia_uvm\n")
    assert of_type(ctx, "kernel.modules_summary")[0].complete is False


def test_proc_modules():
    ctx = load("proc-modules", "proc-modules.txt")
    assert not ctx.warnings
    mods = {m.name: m for m in of_type(ctx, "kernel.module")}
    assert (mods["nvidia"].used_by, mods["nvidia"].state, mods["nvidia"].taint) == \
        (["nvidia_uvm", "nvidia_peermem", "nvidia_modeset"], "Live", "POE")
    assert (mods["crc32_pclmul"].taint, mods["nvidia_uvm"].used_by) == ("", [])
    [s] = of_type(ctx, "kernel.modules_summary")
    assert (s.count, s.peermem_loaded, s.complete) == (9, True, True)


def test_malformed_lines_warn_and_header_only_means_no_modules():
    ctx = parse_text("lsmod", "Module                  Size  Used by\nnvidia  big  1\nmlx5_core 2211840 1 mlx5_ib\n")
    assert [m.name for m in of_type(ctx, "kernel.module")] == ["mlx5_core"]
    assert ctx.warnings == [(2, "unrecognized line: nvidia  big  1")]
    ctx = parse_text("lsmod", "Module                  Size  Used by\n")
    [s] = ctx.facts
    assert (s.count, s.names, s.complete) == (0, [], True)
    with pytest.raises(NotApplicable):
        parse_text("lsmod", "lsmod: command not found\n")


def test_sniff_over_all_fixtures():
    for d in ("formats", "net", "real"):
        for path in sorted((FIXTURES / d).iterdir()):
            doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
            s1, s2 = lsmod.sniff(doc), lsmod.sniff_proc_modules(doc)
            assert (s1 > 0.9) if path.name.startswith("lsmod") else (s1 < 0.3), path.name
            assert (s2 > 0.9) if path.name == "proc-modules.txt" else (s2 < 0.3), path.name


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=2000), st.binary(max_size=2000).map(lambda b: b.decode("latin-1"))),
       st.sampled_from(["lsmod", "proc-modules"]))
def test_never_raises_anything_else(text, fmt):
    try:
        parse_text(fmt, text)
    except (ParseError, NotApplicable):
        pass
