"""Cloud-provider signs from names and paths (kb/gazetteers/cloud-signs.yaml, facts/derive/cloud.py,
facts/parsers/prose_cloud.py)."""

import doctest

import pytest

from clusterdx.facts.base import SourceRef
from clusterdx.facts.derive import cloud
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.gazetteer import gazetteers
from clusterdx.facts.model.net import IbDevice
from clusterdx.facts.parsers import prose, prose_cloud

SRC = SourceRef(input="t", line=1, parser="t")


def test_doctests():
    assert doctest.testmod(cloud).failed == 0
    assert doctest.testmod(prose_cloud).failed == 0


def test_every_row_cites_a_reference_and_compiles():
    rows = gazetteers().cloud_signs
    assert rows and all(r.ref.startswith("https://") for r in rows)
    assert {r.kind for r in rows} == {"hostname", "path", "device"}


def _signs(node: str, device: str = "mlx5_0"):
    return {s.sign for s in cloud.derive([IbDevice(node=node, source=SRC, device=device)])}


@pytest.mark.parametrize("node, sign", [
    ("ip-10-1-100-254", "aws-ec2-ip-hostname"),
    ("ip-172-31-5-9.ec2.internal", "aws-ec2-ip-hostname"),
    ("a3-mega-0.c.my-project-42.internal", "gcp-internal-hostname"),
])
def test_host_names_the_providers_give(node, sign):
    assert sign in _signs(node)


@pytest.mark.parametrize("node", [
    "ip-sys-01",             # a site's own naming
    "gpu-10-1-2-3",          # digits, not the EC2 form
    "ip-10-1-2",             # three octets
    "node",                  # the default name
])
def test_host_name_lookalikes(node):
    assert not _signs(node)


def test_efa_devices_are_a_fabric_sign_and_mlx5_is_not():
    assert "aws-efa-device" in _signs("n1", "rdmap16s27") and "aws-efa-device" in _signs("n1", "efa_0")
    assert not _signs("n1", "mlx5_3")


def _paths(text: str):
    doc = Document.from_text(text + "\n")
    ctx = ParseContext(doc, "prose")
    try:
        prose.parse(doc, ctx)
    except Exception:
        return set()
    return {s.text for s in ctx.facts if s.fact_type == "platform.cloud_sign"}


@pytest.mark.parametrize("text, path", [
    ("> 1: Steps 0 Training snapshot saved at /fsx/model/step=0.ckpt", "/fsx/model/step=0.ckpt"),
    ("We keep the dataset on `/fsx` and the checkpoints in /fsx/ckpt.", "/fsx"),
])
def test_fsx_paths(text, path):
    assert path in _paths(text)


@pytest.mark.parametrize("text", [
    "The data lives in /mnt/fsx2/data on our own Lustre.",   # another mount
    "We store it in /data/fsx/run1 on premises.",             # fsx inside another path
    "The fsx file system is slow today.",                     # the word, no path
])
def test_fsx_lookalikes(text):
    assert not _paths(text)
