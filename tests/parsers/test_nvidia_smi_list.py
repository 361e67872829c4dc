import doctest

import pytest

from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document
from clusterdx.facts.ingest import ingest
from clusterdx.facts.parsers import nvidia_smi_list
from tests.parsers.helpers import FORMATS, of_type, parse_text

FMT = "nvidia-smi-list"


def test_doctests():
    assert doctest.testmod(nvidia_smi_list).failed == 0


def test_sample_with_mig_lines():
    ctx = parse_text(FMT, (FORMATS / "nvidia-smi-L.txt").read_text())
    devs = of_type(ctx, "gpu.device")
    assert [(d.gpu, d.name) for d in devs] == [(0, "NVIDIA H100 80GB HBM3"), (1, "NVIDIA H100 80GB HBM3"),
                                                (2, "NVIDIA A100-SXM4-40GB")]
    [s] = of_type(ctx, "gpu.summary")
    assert s.gpus == 3 and s.models == ["NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-40GB"]
    assert any("MIG" in str(w) for w in ctx.warnings)


def test_pasted_with_a_prompt_and_crlf(tmp_path):
    p = tmp_path / "gpus.txt"
    p.write_bytes(b"root@node-3:~# nvidia-smi -L\r\nGPU 0: NVIDIA L40S (UUID: GPU-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d)\r\n")
    res = ingest([p])
    assert [r.format for r in res.inputs] == ["nvidia-smi-list"]
    [d] = [f for f in res.facts if f.fact_type == "gpu.device"]
    assert d.name == "NVIDIA L40S" and d.source.line == 2


def test_failure_is_zero_gpus():
    ctx = parse_text(FMT, "No devices were found\n", command="nvidia-smi -L")
    [s] = of_type(ctx, "gpu.summary")
    assert s.gpus == 0 and s.error == "No devices were found"


@pytest.mark.parametrize("text", ["GPU 0: looks slow today\n", "GPU 0 and GPU 1 are on the same switch\n"])
def test_lookalike_sentences_are_not_a_listing(text):
    assert nvidia_smi_list.sniff(Document.from_text(text)) == 0.0
    with pytest.raises(NotApplicable):
        nvidia_smi_list.parse(Document.from_text(text), None)  # type: ignore[arg-type]
