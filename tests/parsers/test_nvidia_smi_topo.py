import doctest

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.document import Document
from clusterdx.facts.parsers import nvidia_smi_topo
from tests.parsers.helpers import FORMATS, of_type, parse_fixture, parse_text


def links(ctx):
    return {(f.a, f.b): f for f in of_type(ctx, "topo.link")}


def test_doctests():
    assert doctest.testmod(nvidia_smi_topo).failed == 0


def test_h100_rail_layout():
    ctx = parse_fixture("nvidia-smi-topo", "nvidia-smi-topo-h100-8nic.txt")
    gpus = of_type(ctx, "topo.gpu")
    assert [g.gpu for g in gpus] == list(range(8))
    g0, g4 = gpus[0], gpus[4]
    assert g0.cpus == list(range(0, 56)) + list(range(112, 168))
    assert (g0.numa_node, g0.numa_nodes, g0.gpu_numa_id, g0.source.line) == (0, [0], None, 2)
    assert (g4.numa_node, g4.cpus[0]) == (1, 56)
    lk = links(ctx)
    # 18 devices -> 153 unordered pairs
    assert len(lk) == 18 * 17 // 2
    assert lk[("GPU0", "GPU7")].link == "NV18" and lk[("GPU0", "GPU7")].kind == "gpu-gpu"
    g3n3 = lk[("GPU3", "NIC3")]
    assert (g3n3.kind, g3n3.link, g3n3.nic_device, g3n3.source.line) == ("gpu-nic", "PIX", "mlx5_5", 5)
    assert lk[("GPU0", "NIC4")].link == "SYS"
    assert lk[("NIC8", "NIC9")].kind == "nic-nic" and lk[("NIC8", "NIC9")].link == "PIX"
    nics = {n.nic: n for n in of_type(ctx, "topo.nic")}
    assert (nics["NIC5"].device, nics["NIC5"].closest_gpus, nics["NIC5"].best_gpu_link) == ("mlx5_9", [5], "PIX")
    # the Ethernet pair has no GPU behind its switch
    assert (nics["NIC8"].device, nics["NIC8"].closest_gpus, nics["NIC8"].best_gpu_link) == ("mlx5_1", [], "NODE")
    assert not ctx.warnings


def test_gb200_grace_numa_ids_and_no_pix_nic():
    ctx = parse_fixture("nvidia-smi-topo", "nvidia-smi-topo-gb200.txt")
    gpus = of_type(ctx, "topo.gpu")
    assert [(g.numa_node, g.gpu_numa_id) for g in gpus] == [(0, 2), (0, 10), (1, 18), (1, 26)]
    assert gpus[0].numa_nodes == [0, 3, 4, 5, 6, 7, 8, 9] and gpus[2].cpus[0] == 72
    nics = of_type(ctx, "topo.nic")
    assert all(n.closest_gpus == [] and n.best_gpu_link == "NODE" for n in nics)
    assert links(ctx)[("GPU2", "GPU3")].link == "NV18"
    assert not ctx.warnings


def test_legacy_a100_mlx5_labels_and_trailing_tab():
    ctx = parse_fixture("nvidia-smi-topo", "nvidia-smi-topo-legacy-a100.txt")
    gpus = of_type(ctx, "topo.gpu")
    assert (gpus[7].cpus[:2], gpus[7].numa_node, gpus[7].gpu_numa_id) == ([24, 25], None, None)
    lk = links(ctx)
    assert lk[("GPU1", "mlx5_0")].link == "PXB" and lk[("GPU1", "mlx5_0")].nic_device == "mlx5_0"
    assert lk[("GPU0", "GPU1")].link == "NV12"
    nics = {n.nic: n for n in of_type(ctx, "topo.nic")}
    assert (nics["mlx5_2"].device, nics["mlx5_2"].closest_gpus) == ("mlx5_2", [4, 5])
    assert not ctx.warnings


def test_tabs_turned_into_spaces_by_a_paste():
    text = (FORMATS / "nvidia-smi-topo-h100-8nic.txt").read_text().replace("\t", "    ")
    ctx = parse_text("nvidia-smi-topo", "$ nvidia-smi topo -m\n" + text)
    gpus = of_type(ctx, "topo.gpu")
    assert len(gpus) == 8 and gpus[5].numa_node == 1 and gpus[5].gpu_numa_id is None
    assert links(ctx)[("GPU3", "NIC3")].link == "PIX"
    assert gpus[0].source.line == 3


def test_truncated_matrix_warns_and_keeps_rows():
    lines = (FORMATS / "nvidia-smi-topo-h100-8nic.txt").read_text().splitlines()
    ctx = parse_text("nvidia-smi-topo", "\n".join(lines[:5] + [lines[5][:20]]))
    assert len(of_type(ctx, "topo.gpu")) == 5
    msgs = " ".join(w for _, w in ctx.warnings)
    assert "truncated" in msgs and "NIC Legend missing" in msgs


def test_legend_without_matrix_is_a_warning_without_facts():
    # an excerpt of the legend proves no topology: a located warning, not an error for the file
    ctx = parse_text("nvidia-smi-topo", "Legend:\n\n  X    = Self\n")
    assert not ctx.facts and ctx.warnings[0][0] == 1 and "without the matrix" in ctx.warnings[0][1]


def test_unknown_cell_warns():
    text = "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tOK\t0-3\nGPU1\tOK\t X \t4-7\n"
    ctx = parse_text("nvidia-smi-topo", text)
    assert of_type(ctx, "topo.link") == [] and ctx.warnings
    assert of_type(ctx, "topo.gpu")[1].cpus == [4, 5, 6, 7]


def test_not_topology():
    with pytest.raises(NotApplicable):
        parse_text("nvidia-smi-topo", "GPU 00000000:18:00.0\n    Product Name : NVIDIA H100\n")


@pytest.mark.parametrize("path", sorted(FORMATS.iterdir()), ids=lambda p: p.name)
def test_sniff(path):
    doc = Document.from_text(path.read_bytes().decode("utf-8", "replace"), name=path.name)
    score = nvidia_smi_topo.sniff(doc)
    if path.name.startswith("nvidia-smi-topo"):
        assert score >= 0.9
    else:
        assert score < 0.3


def test_command_patterns():
    fmt = nvidia_smi_topo.FORMATS[0]
    assert fmt.matches_command("nvidia-smi topo -m") and fmt.matches_command("nvidia-smi topo --matrix")
    assert not fmt.matches_command("nvidia-smi -q")


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=2000), st.binary(max_size=2000).map(lambda b: b.decode("latin-1"))))
def test_never_raises_anything_else(text):
    try:
        parse_text("nvidia-smi-topo", text)
    except (ParseError, NotApplicable):
        pass


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([
    "\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID", "GPU0\t X \tNV18\tPIX\t0-3\t0\t\tN/A",
    "GPU1\tNV18\t X \tSYS\t9-2\tx\t\t7", "NIC0\tPIX\tSYS\t X ", "GPU99999999\tX", "NIC Legend:", "  NIC0: mlx5_0",
    "", "Legend:", "\t", "GPU0\t\t\t\t\t\t\t\t\t",
]), max_size=20).map("\n".join))
def test_structured_fuzz(text):
    try:
        parse_text("nvidia-smi-topo", text)
    except (ParseError, NotApplicable):
        pass


def test_absurd_gpu_index_is_not_a_gpu():
    text = "\tGPU0\tGPU" + "9" * 5000 + "\tCPU Affinity\nGPU0\t X \tNV1\t0-" + "9" * 5000 + "\n"
    ctx = parse_text("nvidia-smi-topo", text)
    assert of_type(ctx, "topo.gpu")[0].cpus == [] and ctx.warnings


def test_mangled_header_with_thousands_of_columns_is_a_parse_error():
    # found by tests/bench/fuzz_parsers.py: a 200k-character header (the column names repeated)
    # gave ~30,000 device columns and a pairwise walk that ran for hours
    import time

    cols = "\t".join(f"GPU{i}" for i in range(8)) + "\tmlx5_0\tCPU Affinit"
    text = "\t" + "\t".join([cols] * 2500) + "\tCPU Affinity\nGPU0\t X \tNV18\n"
    start = time.process_time()
    with pytest.raises(ParseError, match="device columns"):
        parse_text("nvidia-smi-topo", text)
    assert time.process_time() - start < 2.0


def test_matrix_indented_as_a_block_in_a_ticket():
    # pasted into a Markdown ticket with four spaces before every line, tabs turned into spaces
    text = ("            GPU0    GPU1    GPU2    CPU Affinity    NUMA Affinity\n"
            "    GPU0     X      NV4     NODE    0-63,128-191    0\n"
            "    GPU1    NV4      X      NODE    0-63,128-191    0\n"
            "    GPU2    NODE    NODE     X      0-63,128-191    0\n")
    doc = Document.from_text(text)
    assert nvidia_smi_topo.sniff(doc) >= 0.8
    ctx = parse_text("nvidia-smi-topo", text)
    links = {(l.a, l.b): l.link for l in of_type(ctx, "topo.link")}
    assert links[("GPU0", "GPU1")] == "NV4" and links[("GPU0", "GPU2")] == "NODE"
    # a line indented far more than a block paste is not a matrix row
    deep = "            GPU0    GPU1\n" + " " * 20 + "GPU0     X      NV4\n"
    assert nvidia_smi_topo.sniff(Document.from_text(deep)) < 0.8
