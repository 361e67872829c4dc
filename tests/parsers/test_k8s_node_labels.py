import doctest

import pytest

from clusterdx.facts.base import NotApplicable
from clusterdx.facts.document import Document
from clusterdx.facts.parsers import k8s_node_labels
from tests.parsers.helpers import of_type, parse_fixture, parse_text


def test_doctests():
    assert doctest.testmod(k8s_node_labels).failed == 0


def test_describe_node():
    ctx = parse_fixture("k8s-node-labels", "k8s-node-labels-describe.txt")
    [s] = of_type(ctx, "gpu.summary")
    assert (s.gpus, s.attached_gpus, s.models) == (8, 8, ["NVIDIA-A100-SXM4-80GB"])
    assert (s.driver_version, s.cuda_version, s.source.line) == ("535.161.08", "12.2", 16)


def test_show_labels_one_row_per_node():
    text = ("NAME     STATUS   ROLES    AGE   VERSION   LABELS\n"
            "gpu-01   Ready    <none>   12d   v1.29.4   kubernetes.io/hostname=gpu-01,nvidia.com/gpu.count=2,"
            "nvidia.com/gpu.product=Tesla-V100-PCIE-32GB,nvidia.com/cuda.driver.major=550,"
            "nvidia.com/cuda.driver.minor=54,nvidia.com/cuda.driver.rev=15\n"
            "gpu-02   Ready    <none>   12d   v1.29.4   nvidia.com/gpu.count=8,nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3\n")
    ctx = parse_text("k8s-node-labels", text)
    got = [(s.models, s.gpus, s.driver_version) for s in of_type(ctx, "gpu.summary")]
    assert got == [(["Tesla-V100-PCIE-32GB"], 2, "550.54.15"), (["NVIDIA-H100-80GB-HBM3"], 8, "")]


def test_node_yaml_labels():
    text = ("apiVersion: v1\nkind: Node\nmetadata:\n  labels:\n    kubernetes.io/arch: amd64\n"
            "    nvidia.com/gpu.count: \"4\"\n    nvidia.com/gpu.product: NVIDIA-L40S\n"
            "    nvidia.com/cuda.runtime.major: \"12\"\n    nvidia.com/cuda.runtime.minor: \"4\"\n  name: l40s-1\n"
            "status:\n  capacity:\n    nvidia.com/gpu: \"4\"\n")
    [s] = of_type(parse_text("k8s-node-labels", text), "gpu.summary")
    assert (s.models, s.gpus, s.cuda_version) == (["NVIDIA-L40S"], 4, "12.4")


def test_two_pasted_blocks_are_two_nodes():
    block = "nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3\nnvidia.com/cuda.driver-version.full={}\n"
    ctx = parse_text("k8s-node-labels", block.format("550.54.15") + "\n" + block.format("560.35.03"))
    assert [s.driver_version for s in of_type(ctx, "gpu.summary")] == ["550.54.15", "560.35.03"]


def test_driver_labels_alone_say_nothing_of_the_gpus():
    text = "nvidia.com/cuda.driver-version.full=550.54.15\nnvidia.com/cuda.runtime-version.full=12.4\n"
    with pytest.raises(NotApplicable):
        parse_text("k8s-node-labels", text)


@pytest.mark.parametrize("text", [
    "Capacity:\n  nvidia.com/gpu:     8\nAllocatable:\n  nvidia.com/gpu:     8\n",   # resources, not labels
    "We set nvidia.com/gpu.deploy.operator-validator=false to skip the validator\n",  # a label, not a GPU one
    "The GPU node is a DGX A100 running RHEL 8.\n",
])
def test_lookalikes_not_sniffed(text):
    assert k8s_node_labels.sniff(Document.from_text(text)) == 0.0


def test_a_count_in_other_digits_is_no_count():
    # found by the fuzz bench: '¹'.isdigit() is True and int('¹') raises
    with pytest.raises(NotApplicable):
        parse_text("k8s-node-labels", "Labels: nvidia.com/gpu.count=¹\n")
    ctx = parse_text("k8s-node-labels", "Labels: nvidia.com/gpu.count=8\n                    nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3\n")
    assert [f.attached_gpus for f in of_type(ctx, "gpu.summary")] == [8]
