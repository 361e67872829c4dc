"""Lines that match a known error or log signature (kb/reference/signatures.yaml)."""

from clusterdx.facts.base import Fact


class TextSignature(Fact):
    fact_type = "text.signature"
    doc = "A line matching a known error or log signature, and the graph node the signature is evidence for."
    signature: str
    node_id: str
    #: the matching line, clipped
    text: str
    #: how many lines of the document matched this signature
    count: int = 1
