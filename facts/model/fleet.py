"""Fleet facts: how one node compares with its peers (``clusterdx fleet``).

They exist only when several nodes are diagnosed together: :mod:`clusterdx.engine.outliers` and
:mod:`clusterdx.engine.drift` compute them across nodes, and the node they name is diagnosed again
with them so that rules can weigh "this node is unlike the others" next to its own evidence.
"""

from clusterdx.facts.base import Fact


class FleetOutlier(Fact):
    fact_type = "fleet.outlier"
    doc = ("A node whose measured value is an outlier against its peers (median and MAD across nodes), "
           "in the bad direction, even where the value is within spec.")
    #: metric name from the outlier table ('nccltests.busbw', 'train.step_time', 'ib.port.rate' ...)
    metric: str
    #: what was measured within the node ('all_reduce', 'mlx5_0/1', 'gpu 3'; '' when one value per node)
    key: str = ""
    value: float
    #: median and median absolute deviation of the metric over all nodes that report it
    median: float
    mad: float
    #: robust z-score 0.6745 * (value - median) / MAD (MAD floored, see engine/outliers.py)
    score: float
    #: |score|: how far out, whichever the direction
    severity: float
    #: 'low' (value below its peers; slower) or 'high' (value above; step time, throttle reasons)
    direction: str
    #: (value - median) / |median| in percent; 0.0 when the median is 0
    deviation_pct: float
    #: nodes that report this metric (the node included)
    peers: int
    unit: str = ""


class FleetDrift(Fact):
    fact_type = "fleet.drift"
    doc = "A configuration item on which this node differs from the majority of its peers."
    #: what differs ('NCCL version', 'kernel command line', 'NCCL env NCCL_IB_HCA' ...)
    what: str
    #: 'kernel' | 'driver' | 'nccl' | 'nccl-env' | 'firmware' | 'topology' | 'nic-order'
    category: str
    value: str
    majority_value: str
    #: nodes that differ from the majority (this one included), and nodes that report the item
    nodes_differing: int
    nodes_total: int
