"""The shipped-table loader: the package's own YAML, validated by the model it is read as."""

import pytest
from pydantic import ValidationError

from clusterdx.facts.images import ImageTable
from clusterdx.facts.kbtables import shipped_table
from clusterdx.facts.releases import ReleaseTable


def test_a_shipped_table_reads_into_its_model():
    table = shipped_table("reference/nccl-releases.yaml", ReleaseTable)
    assert table.schema_ == "clusterdx/nccl-releases/v1"
    assert any(e.kind == "regression" for e in table.entries)


def test_a_table_read_as_the_wrong_model_raises():
    with pytest.raises(ValidationError):
        shipped_table("reference/nccl-releases.yaml", ImageTable)


def test_a_missing_table_raises():
    with pytest.raises(FileNotFoundError):
        shipped_table("reference/no-such-table.yaml", ReleaseTable)
