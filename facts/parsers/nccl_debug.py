"""NCCL_DEBUG - NCCL debug log

Lines NCCL prints with ``NCCL_DEBUG=INFO`` (or ``WARN``): ``host:pid:tid [cudaDev] NCCL INFO msg``,
``host:pid:tid [cudaDev] file.cc:NNN [(func)] NCCL WARN msg``, optionally behind an
``srun --label`` / ``mpirun --tag-output`` tag and a ``[YYYY-mm-dd HH:MM:SS]`` timestamp, plus the
bare ``NCCL version X+cudaY`` line of older releases. Other lines (application output, ``## ``
annotations, error-unwinding noise) are ignored.

Every release from 2.4 on: ``Ring 03 : 5[5] -> 6[6] via NET/IB/1`` (2.4-2.6) and ``Channel 00/0 :
0[0] -> 8[0] [send] via NET/IB/0/GDRDMA`` (later) connection lines, ``Pattern ..., speed a/b``
(before 2.13) and ``bw a/b``, ``=== System : maxWidth ...`` and ``maxBw ... totalBw ...``, the
printed topology tree (``CPU/0-0``, ``+ PCI[24.0] - GPU/0-18000 (0)``), what topology detection
could not read and ignored, IB QP / ECE lines, TUNING algorithm choices and the
``Enabled NCCL Func/Proto/Algo Matrix`` rows (printed without a prefix under their INFO line).

Built for logs of any size: one pass, a substring prefilter before any regex, repeats answered
from caches (see ``feed_lines``), and the high-volume lines are aggregated instead of becoming one
fact each: connection lines per node and transport (``nccl.transport_summary``) and per node,
direction and NIC (``nccl.channel``), QP, ECE and algorithm-choice lines per node and value (with a
count), repeated WARNs per node; what every process prints alike (``nccl.comm``, ``nccl.channels``,
``nccl.nvls``, ``nccl.affinity``, ``nccl.gdr_gpu``) once per node and value with the number of
processes (a process that prints something else stays a fact of its own); the per-rank init lines
per communicator size (``_nccl_init``). ``rank`` is the process's rank in the largest communicator
it reported (Init START/COMPLETE or ``comm ... nRanks`` lines), resolved once the whole log has
been read.

Sample input::

    gpu-h100-017:481203:481203 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to ens10f0np0
    gpu-h100-017:481203:481203 [0] NCCL INFO NCCL version 2.23.4+cuda12.6
    gpu-h100-017:481203:481321 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1/IB [RO]; OOB ens10f0np0:10.40.12.17<0>
    gpu-h100-017:481203:481321 [0] NCCL INFO Using network IB
    gpu-h100-017:481203:481321 [0] NCCL INFO ncclCommInitRank comm 0x55f0a8e3c2a0 rank 0 nranks 16 cudaDev 0 nvmlDev 0 busId 18000 commId 0x9d2e4f61a7c8b013 - Init START
    gpu-h100-017:481203:481321 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [receive] via NET/IB/0/GDRDMA
    gpu-h100-017:481203:481321 [0] NCCL INFO Channel 01/0 : 8[0] -> 0[0] [receive] via NET/IB/1
    gpu-h100-017:481203:481321 [0] NCCL INFO Channel 00/0 : 0[0] -> 7[7] via P2P/CUMEM/read
    gpu-h100-017:481203:481321 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 1
    gpu-h100-017:481203:481321 [0] NCCL INFO 32 coll channels, 32 collnet channels, 16 nvls channels, 32 p2p channels, 32 p2p channels per peer

    [2025-07-14 02:11:47] gpu-h100-018:77312:77460 [6] transport/net_ib.cc:2341 NCCL WARN NET/IB : mlx5_10:1 Got async event : port error

Examples:

    >>> from clusterdx.facts.document import Document, ParseContext
    >>> doc = Document.from_text(SAMPLE)
    >>> ctx = ParseContext(doc, "nccl-debug"); parse(doc, ctx)
    >>> v = [f for f in ctx.facts if f.fact_type == "nccl.version"][0]
    >>> (v.version, v.version_num, v.cuda, v.node, v.rank, v.pid)
    ('2.23.4', 22304, '12.6', 'gpu-h100-017', 0, 481203)
    >>> env = [f for f in ctx.facts if f.fact_type == "nccl.env"][0]
    >>> (env.name, env.value, env.source.line)
    ('NCCL_SOCKET_IFNAME', 'ens10f0np0', 1)
    >>> net = [f for f in ctx.facts if f.fact_type == "nccl.net"][0]
    >>> (net.net, net.devices, net.roce, net.relaxed_ordering, net.oob_if)
    ('IB', ['mlx5_0:1', 'mlx5_3:1'], False, True, 'ens10f0np0')
    >>> [(t.transport, t.connections, t.gdr_connections, t.nics) for t in ctx.facts
    ...  if t.fact_type == "nccl.transport_summary"]
    [('NET/IB', 2, 1, ['0', '1']), ('P2P/CUMEM', 1, 0, [])]
    >>> [(c.direction, c.nic, c.nic_name, c.gdr, c.connections, c.peer_ranks) for c in ctx.facts
    ...  if c.fact_type == "nccl.channel"]
    [('receive', '0', 'mlx5_0:1', True, 1, [8]), ('receive', '1', 'mlx5_3:1', False, 1, [8])]
    >>> w = [f for f in ctx.facts if f.fact_type == "nccl.warn"][0]
    >>> (w.category, w.hca, w.node, w.timestamp)
    ('net', 'mlx5_10', 'gpu-h100-018', '2025-07-14 02:11:47')
    >>> sniff(doc) > 0.8
    True
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from clusterdx.facts.base import Fact, NotApplicable, ParseError
from clusterdx.facts.document import Document, ParseContext
from clusterdx.facts.formats import Format
from clusterdx.facts.model import nccl as m
from clusterdx.facts.parsers._nccl_init import InitSummary
from clusterdx.facts.parsers._util import cpu_list, hex_mask_cpus
from clusterdx.facts.versions import version_at_least

SAMPLE = """\
gpu-h100-017:481203:481203 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to ens10f0np0
gpu-h100-017:481203:481203 [0] NCCL INFO NCCL version 2.23.4+cuda12.6
gpu-h100-017:481203:481321 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1/IB [RO]; OOB ens10f0np0:10.40.12.17<0>
gpu-h100-017:481203:481321 [0] NCCL INFO Using network IB
gpu-h100-017:481203:481321 [0] NCCL INFO ncclCommInitRank comm 0x55f0a8e3c2a0 rank 0 nranks 16 cudaDev 0 nvmlDev 0 busId 18000 commId 0x9d2e4f61a7c8b013 - Init START
gpu-h100-017:481203:481321 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [receive] via NET/IB/0/GDRDMA
gpu-h100-017:481203:481321 [0] NCCL INFO Channel 01/0 : 8[0] -> 0[0] [receive] via NET/IB/1
gpu-h100-017:481203:481321 [0] NCCL INFO Channel 00/0 : 0[0] -> 7[7] via P2P/CUMEM/read
gpu-h100-017:481203:481321 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 1
gpu-h100-017:481203:481321 [0] NCCL INFO 32 coll channels, 32 collnet channels, 16 nvls channels, 32 p2p channels, 32 p2p channels per peer

[2025-07-14 02:11:47] gpu-h100-018:77312:77460 [6] transport/net_ib.cc:2341 NCCL WARN NET/IB : mlx5_10:1 Got async event : port error
"""

# Launcher tags: `srun --label` (" 0: ", "13: ") and `mpirun --tag-output` ("[1,0]<stdout>:").
_TAG = r"(?:\s*\d+:\s|\s*\[\d+,\d+\]<\w+>:\s?)?"
_LINE = re.compile(
    r"^" + _TAG + r"\s*(?:(?P<iso>\d{4}-\d\d-\d\dT[0-9:.,]+(?:Z|[+-]\d\d:?\d\d)?)\s+)?"
    r"(?:\[(?P<ts>\d{4}-\d\d-\d\d[ T][0-9:.,]+)\]\s*)?"
    # the hostname ends at the first ":pid:tid [" (hostnames never hold spaces or brackets)
    # "[dev]" is always printed by NCCL; pastes and log shippers sometimes lose it
    r"(?P<host>[^\s\[\]]+?):(?P<pid>\d+):(?P<tid>\d+)\s+(?:\[(?P<dev>\d+)\]\s+)?"
    r"(?:(?P<loc>[\w./+-]+:\d+)\s+(?:\((?P<func>[\w:~<>]+)\)\s+)?)?"
    r"NCCL (?P<level>INFO|WARN|TRACE|ABORT)(?: (?P<msg>.*))?$"
)
# printed without host prefix (2.27+: the VERSION level, which can carry a timestamp)
_BARE_VERSION = re.compile(
    r"^" + _TAG + r"\s*(?:\d{4}-\d\d-\d\dT\S+\s+)?(?:\[[\d :.T,-]+\]\s*)?NCCL version (\S+)")
# a message pasted without its "host:pid:tid [dev] NCCL INFO" prefix (a grep'd or quoted excerpt):
# only forms that cannot be anything but NCCL's (an env line, a connection line, a NET line)
_PREFIXLESS = re.compile(
    r"^" + _TAG + r"\s*(?:NCCL (?P<level>INFO|WARN)\s+)?(?P<msg>"
    r"NCCL_[A-Z0-9_]{2,60} set (?:by [\w ]{1,40} )?to \S.{0,300}"
    r"|(?:Channel|Ring) \d{1,3}(?:/\d{1,3})? : \d{1,6}(?:\[\w{0,16}\])? -> \d{1,6}.{0,200} via \S{1,120}"
    r"|\d{1,6}\[\w{0,16}\] -> \d{1,6}(?:\[\w{0,16}\])?(?: \[(?:send|receive)\])? via (?:NET|P2P|SHM)/\S{1,120}"
    r"|NET/(?:IB|Socket|OFI|Plugin)\s?: .{1,300}"
    r"|Using network \w{1,30})\s*$")
_EMBEDDED = re.compile(r"(?<![\w.-])[\w.-]+:\d+:\d+\s+\[\d+\]\s+(?:[\w./+-]+:\d+\s+(?:\([\w:~<>]+\)\s+)?)?NCCL (?:INFO|WARN)")
_HEAD = re.compile(r"^" + _TAG + r"\s*(?:\d{4}-\d\d-\d\dT\S+\s+)?(?:\[[\d :.T,-]+\]\s*)?[\w.-]+:\d+:\d*")

_VERSION = re.compile(r"(?<!\d)(\d+)\.(\d+)\.(\d+)[^+\s]*(?:\+cuda(\d+(?:\.\d+)?))?")
_CHANNELS = re.compile(r"(?<!\d)(\d+) (coll|collnet|nvls|p2p) channels( per peer)?")
_ENV = re.compile(r"^([A-Z][A-Z0-9_]+) set (?:by (.+?) )?to (.*)$")
_ENV_PLUGIN = re.compile(r"Setting (NCCL_\w+) environment variable to (\S+)")
_NET_USING = re.compile(r"^NET/(\w+)\s*:\s*Using (.*)$")
_NET_DEV = re.compile(r"\[(\d+)\]([^\s\[\];]+)")
_OOB = re.compile(r"OOB ([^\s:]+)")
_USING_NETWORK = re.compile(r"^Using network (.+?)\s*$")
_OFI_NICS = re.compile(r"^NET/OFI Selected Provider is (\S+) \(found (\d+) nics\)")
#: libfabric providers that carry traffic over the host's TCP/IP stack: the plugin then runs on sockets
_OFI_SOCKET_PROVIDERS = frozenset({"tcp", "sockets", "udp", "tcp;ofi_rxm", "udp;ofi_rxd"})
_GDR_HCA = re.compile(r"^NET/(\w+)\s*: GPU Direct RDMA (Enabled|Disabled) for HCA (\d+) '([^']*)'")
_GDR_GPU = re.compile(
    r"GPU Direct RDMA (Enabled|Disabled) for GPU (\w+)(?:\[\d+\])? / HCA (\d+)(?: '[^']*')?"
    r"(?: \(distance (\d+) [<>]=? (\d+)\))?(?:, read (\d+))?")
_PLUGIN = re.compile(r"^(NET|TUNER|PROFILER|ENV|RAS|COLLNET|GIN)/Plugin\s*:\s*(.*)$")
_LOADED = re.compile(
    r"Loaded (?:(net|coll|collnet|gin|rma|tuner|profiler|env) )?plugin (.+?)(?: \((v\d+)\))?\.?$")
# TUNER/Plugin: "Using tuner plugin X" (2.19-2.22), "Using X (v4)" (2.23+); not "Using internal ..."
_USING_PLUGIN = re.compile(r"^Using (?:tuner plugin )?(?!internal\b)(\S+)(?: \((v\d+)\))?\.?$")
_QUOTED = re.compile(r"'([^']+)'")
_COULD_NOT_FIND = re.compile(r"Could not find:?\s*(\S+?)\.?(?:\s|$)")
_NO_PLUGIN = re.compile(r"No plugin found(?: \(([^)]*)\))?")
_LOAD_RETURNED = re.compile(r"Plugin load \(([^)]*)\) returned (\d+)")
# 2.4-2.18 "Plugin load returned 2 : <dlerror>." / 2.19+ "... : <dlerror> : when loading <names>"
_LOAD_RETURNED_OLD = re.compile(r"load returned (\d+) : (.*?)(?: : when loading (\S+?))?\.?$")
_RING = re.compile(r"^Connected all rings(?:, use ring PXN (\d+) GDR (\d+))?")
_AFF_OLD = re.compile(r"^Setting affinity for GPU (\d+) to ([0-9a-fA-Fx,]+)")
_AFF_NEW = re.compile(
    r"Affinity for GPU (\d+) is (.+?)\. \(GPU affinity = ([^;)]*?)\s*(?:; CPU affinity = ([^)]*?)\s*)?\)")
_NVLS = re.compile(r"^NVLS multicast support is (not )?available on dev (\d+)")
_MNNVL = re.compile(
    r"^MNNVL busId (0x[0-9a-fA-F]+) fabric UUID (\S+) cliqueId (0x[0-9a-fA-F]+) state (\d+) healthMask (0x[0-9a-fA-F]+)")
_COMM = re.compile(
    r"^comm 0x[0-9a-fA-F]+ rank (\d+) nRanks (\d+)(?: nNodes (\d+))?(?: localRanks (\d+))?"
    r"(?: localRank (\d+))?(?: MNNVL (\d+))?")
_INIT = re.compile(r"\brank (\d+) nranks (\d+)\b.*- Init (START|COMPLETE)")
_BUSID = re.compile(r"\bbusId (\w+)")
_COMMID = re.compile(r"\bcommId (0x\w+)")
_TIMINGS = re.compile(r"^Init timings(?: - \w+)?: rank (\d+) nranks (\d+) total ([\d.]+)(?: \((.*)\))?")
_TIMING_PART = re.compile(r"\b(\w+) ([\d.]+)")
_TOPO_LOAD = re.compile(r"^Loading topology file (\S+)")
_TOPO_FAIL = re.compile(r"Could not open XML topology file (\S+) : (.*)$")
# maxBw/totalBw (2.13+), maxWidth/totalWidth (2.8-2.12), maxWidth alone (2.7), maxWidth/maxSpeed (2.5-2.6)
_SYSTEM = re.compile(r"^=== System : max(?:Bw|Width) ([\d.]+)(?: (totalBw|totalWidth|maxSpeed) ([\d.]+))? ===")
# "speed" before 2.13, "bw" since
_PATTERN = re.compile(
    r"^Pattern (\d+), crossNic (\d+), nChannels (\d+), (?:bw|speed) ([\d.]+)/([\d.]+), type (\w+)/(\w+)"
    r"(?:, sameChannels (\d+))?")
_P2P_OFF = re.compile(r"^Could not enable P2P between dev (\d+)\(=(\w+)\) and dev (\d+)\(=(\w+)\)")
_DATA_DIRECT = re.compile(r"Data Direct DMA Interface is detected for device (\S+)")
_DRIVER = re.compile(r"^cudaDriverVersion (\d+)")
# "Bootstrap : Using ens10f0np0:10.40.12.17<0>"; up to 2.8 " [0]eth0:10.0.0.1<0>"
_BOOTSTRAP = re.compile(r"^Bootstrap\s*:\s*Using\s+(?:\[\d+\])?([^\s:]+)(?::(\S+))?")
_UNWIND = re.compile(r"^[\w./+-]+:\d+ -> (\d+)")
_IB_STATUS = re.compile(r"(?:with error |status=)(\d+)")
_HCA = re.compile(r"\b((?:mlx\d|bnxt_re|irdma|efa|rdmap|hfi1|qedr|erdma|ionic)[\w]*?)(?::\d+)?\b")
#: first release that prints "Using network <name>"
_USING_NETWORK_SINCE = "2.6"
#: connection line heads: "Channel 00/0 : ..." (2.7+), "Ring 03 : ..." (2.4-2.6)
_CONN_HEADS = ("Channel ", "Ring ")
# the part after the channel number: peer notation rank[busId] (<= 2.18.1), rank[dev] (later),
# bare rank (2.4 NET lines); [send]/[receive] on NET lines only
_CONN = re.compile(r"^\s*(\d+)(?:\[\w*\])? -> (\d+)(?:\[\w*\])?(?: \[(send|receive)\])? via (.+)$")
# the topology tree (GRAPH subsystem): "CPU/0-0 (1/1/2)", "+ PCI[48.0] - GPU/0-18000 (0)",
# "+ NET[50.0] - NET/0-0 (4a3b0003e7ec6c/1/50.000000)"; ids "18000" (<= 2.22) or "0-18000"
_TOPO_NODE = re.compile(
    r"^(?:\+ (\w+)\[\s*([\d.]+)\] - )?(GPU|PCI|NVS|CPU|NIC|NET)/([0-9a-fA-F]+(?:-[0-9a-fA-F]+)?)"
    r"(?: \(([^()]*)\))?$")
# "GPU/0-18000 :GPU/0-18000 (0/5000.0/LOC) CPU/0-0 (1/48.0/PHB) NET/0-0 (5/24.0/PXB) " (one per GPU/NET)
_PATHS_HEAD = re.compile(r"^(GPU|NET)/([0-9a-fA-F]+(?:-[0-9a-fA-F]+)?) :")
_PATH_ENTRY = re.compile(r"(GPU|NET)/([0-9a-fA-F]+(?:-[0-9a-fA-F]+)?) \(\d+/([\d.]+)/([A-Z0-9]+)\)")
#: path classes, closest first (src/graph/topo.h topoPathTypeStr, 2.4 to 2.27)
_PATH_ORDER = ("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "PXN", "P2C", "PHB", "SYS", "NET", "DIS")
_ECE = re.compile(
    r"IbDev (\d+) Port (\d+) (?:qpn|qp_num) \d+\b.*?(query_ece|set_ece)=\{supported=(\d+), "
    r"vendor_id=(0x[0-9a-fA-F]+), options=(0x[0-9a-fA-F]+), comp_mask=(0x[0-9a-fA-F]+)\}")
_QP = re.compile(
    r"\b(?:Ib)?Dev (\d+) Port (\d+) (?:qpn|qp_num) \d+ mtu (\d+)(?: query_ece=\{[^{}]*\})? (LID|GID) (\d+)")
# "AllReduce: 1048576 Bytes -> Algo 1 proto 2 time 27.36" (2.23-2.26), "... -> Algo RING proto
# LL128 channel{Lo..Hi}={0..31}" (2.27+), "AllReduce [Symmetric]: 4096 Bytes -> Kernel ..." (2.28+)
_ALGO = re.compile(
    r"^(\w+)(?: \[([\w ]+)\])?: (\d+) Bytes -> (?:Algo (\w+) proto (\w+)|Kernel (\S+)|(cudaMemcpy\w*))")
_ALGO_NAMES = ("Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT")
_PROTO_NAMES = ("LL", "LL128", "Simple")
_CC = re.compile(r"^CC (On|Off)(?:, Multi-GPU CC (On|Off))?")
_TOPO_IGNORED = (
    (re.compile(r"^Topology detection ?: could not read (\S+?),? ignoring"), "unreadable"),
    (re.compile(r"^Topology detection ?: network path (\S+) is not a PCI device"), "not_pci"),
    (re.compile(r"Could not find real path of (\S+)"), "no_real_path"),
    (re.compile(r"^Could not get speed (?:from|for interface) (\S+?)\.? Defaulting"), "no_speed"),
    (re.compile(r"^XML Parse : (Ignoring extra attributes)"), "xml_ignored"),
    (re.compile(r"^Ignoring element (\S+)"), "xml_ignored"),
    (re.compile(r"^KV Convert to int : could not find value of '([^']*)'"), "kv_fallback"),
    (re.compile(r"^Could not find a path for (pattern \d+)"), "search_fallback"),
    (re.compile(r"^failed to decode (\w+)="), "env_ignored"),
    (re.compile(r"dlsym failed on (\S+?),? ignoring"), "symbol_missing"),
    (re.compile(r"^(.{1,200}?)[,:.]? [Ii]gnoring\b"), "ignored"),
)
_TOPO_HINTS = ("Topology detection", "Could not", "KV Convert", "XML Parse", "failed to decode")
_TIMING_FIELDS = ("kernels", "alloc", "bootstrap", "allgathers", "topo", "graphs", "connections", "rest")

_MAX_WARNS = 2000
_MAX_LIST = 64
_MAX_PROBLEMS = 50
#: nccl.channel facts (one per process, direction and NIC) and nccl.topo_node facts kept per log
_MAX_CHANNEL_FACTS = 16384
_MAX_TOPO_NODES = 4096
#: rows of the Func/Proto/Algo matrix read after its INFO line
_MAX_MATRIX_ROWS = 16
#: entries in each of the caches that let repeated lines skip the regexes
_MAX_CACHE = 1 << 16

# What a repeat of an INFO message needs (on_info's answer): nothing, whoever prints it
# (_IGNORED); nothing when the same process prints it again (_IDEM: a fact kept once, a rank
# noted); the full treatment every time (_EVERY: counted or order-dependent).
_IGNORED, _IDEM, _EVERY = 0, 1, 2


def is_line(line: str) -> bool:
    """A line that is one of NCCL's wherever it appears (with or without its prefix): the test
    by which NCCL lines inside another document (a ticket's text, nccl-tests output) are found."""
    if "NCCL" in line and (_LINE.match(line) or _BARE_VERSION.match(line)):
        return True
    return (" via " in line or " set " in line or "NET/" in line or "Using network" in line) \
        and _PREFIXLESS.match(line) is not None


def sniff(doc: Document) -> float:
    hits = nonblank = bare = 0
    for line in doc.lines[:200]:
        s = line.strip()
        if not s:
            continue
        if s.startswith("## "):
            continue
        nonblank += 1
        # nccl-tests output carries NCCL lines too; its own sniffer owns those documents
        if "# nThread " in line or "# Using devices" in line:
            return 0.05
        if "NCCL" in line and (_LINE.match(line) or _BARE_VERSION.match(line)):
            hits += 1
        elif is_line(line):
            bare += 1
    if not hits:
        # an excerpt of prefix-less messages is this format only when it is mostly such lines
        # (one quoted "NCCL_P2P_LEVEL set by environment to LOC" in a ticket is prose's)
        if bare and bare * 3 >= nonblank * 2:
            return min(0.9, 0.5 + 0.4 * bare / nonblank)
        return 0.0
    # the prefix "host:pid:tid [dev] NCCL INFO" is unmistakable: a log where four lines in five
    # carry it (the rest application output, matrix rows) is as sure as one with nothing else;
    # that also outranks line-prefix sniffers (kubectl --timestamps looks like dmesg --time-format iso)
    share = hits / nonblank * (1.25 if hits >= 5 else 1.0)
    return min(0.95, 0.5 + 0.45 * share)


class _Proc:
    """Identity of the process (and CUDA device) that printed a line."""

    __slots__ = ("host", "pid", "tid", "dev", "node", "ts", "loc", "func", "level")


class _State:
    """Per-document parsing state: feed lines in order, then ``finish``."""

    def __init__(self, doc: Document, ctx: ParseContext):
        self.doc = doc
        self.ctx = ctx
        self.pending: list[list[Any]] = []  # [cls, index, end, fields, proc_key]
        self.bare_proc: _Proc | None = None
        self.dedupe: dict[tuple, list[Any]] = {}
        self.counters: dict[tuple, set[tuple]] = {}  # emit_counted's key -> the processes counted
        self.ranks: dict[tuple, tuple[int, int]] = {}  # (host, pid, dev) -> (nranks, rank)
        self.devlists: dict[tuple, dict[str, tuple[int, dict]]] = {}
        self.ofi_nics: dict[tuple, int] = {}
        self.ofi_provider: dict[tuple, str] = {}
        self.transports: dict[tuple, dict[str, Any]] = {}
        self.p2p_off: dict[str, dict[str, Any]] = {}
        self.last_warn: dict[tuple, list[Any]] = {}
        self.topo: dict[tuple, list[Any]] = {}
        self.hosts: set[str] = set()
        self.warn_count = 0
        self.problems = 0
        self.recognised = 0
        self.last_proc: _Proc | None = None
        self.inits = InitSummary()  # per-rank init lines, counted per communicator size
        # caches for the line loop: prefix -> _Proc (False: not a plain INFO prefix); INFO
        # messages nobody handles; (process, message) pairs already handled; and per
        # (process, transport text) connection counts [n, first index, last index]
        self.procs: dict[str, _Proc | bool] = {}
        self.ignored: set[str] = set()
        self.seen: set[tuple] = set()
        self.conns: dict[tuple, list[Any]] = {}  # (process, tail) -> [n, first, last, process]
        self.hot: dict[tuple, list[Any]] = {}  # (line prefix, tail) -> the same entry as in conns
        self.skip: dict[str, _Proc] = {}
        # per (host, pid, dev, direction, transport, nic, proxy, gdr, shared): [first, last, n, peers, proc]
        self.channels: dict[tuple, list[Any]] = {}
        self.channel_overflow = 0
        self.nic_names: dict[tuple, dict[str, str]] = {}  # (host, pid, family) -> {index: name}
        self.counted: dict[tuple, list[Any]] = {}  # ECE, QP, algorithm choices: key -> [first, last, fields]
        self.topo_nodes = 0
        self.topo_cpu: dict[tuple, str] = {}  # (host, pid) -> CPU root the tree is under
        self.matrix: list[Any] | None = None  # [proc, index, protocols, algorithms, rows]
        self.versions: dict[str | None, str] = {}  # node -> first NCCL version it printed

    # -- helpers -------------------------------------------------------------------------------

    def problem(self, index: int, message: str) -> None:
        self.problems += 1
        if self.problems <= _MAX_PROBLEMS:
            self.ctx.warn(index, message)

    def emit(self, cls: type[Fact], index: int, p: _Proc | None, /, key: tuple | None = None,
             **fields: Any) -> list[Any] | None:
        """Queue a fact; with ``key``, identical facts are kept once (first line wins)."""
        if key is not None:
            key = (cls.fact_type, p.node if p else self.doc.node) + key
            if key in self.dedupe:
                return None
        if p is not None:
            fields.setdefault("node", p.node)
            fields.setdefault("pid", p.pid)
            fields.setdefault("cuda_dev", p.dev)
            proc_key = (p.host, p.pid, p.dev)
        else:
            proc_key = None
        entry = [cls, index, None, fields, proc_key]
        self.pending.append(entry)
        if key is not None:
            self.dedupe[key] = entry
        return entry

    def emit_counted(self, cls: type[Fact], index: int, p: _Proc, key: tuple, **fields: Any) -> None:
        """Queue a fact once per node and ``key``; the other processes of the node that print the
        same values only raise its ``count`` (the first line stays its reference)."""
        full = (cls.fact_type, p.node) + key
        procs = self.counters.get(full)
        if procs is None:
            procs = self.counters[full] = set()
            self.emit(cls, index, p, key=key, count=1, **fields)
        # processes, not lines: what a process prints again (a second communicator) is not counted
        if len(procs) < _MAX_CACHE:
            procs.add((p.host, p.pid, p.dev))
            self.dedupe[full][3]["count"] = len(procs)

    def note_rank(self, p: _Proc, rank: int, nranks: int) -> None:
        key = (p.host, p.pid, p.dev)
        old = self.ranks.get(key)
        if old is None or nranks > old[0]:
            self.ranks[key] = (nranks, rank)

    # -- per line ------------------------------------------------------------------------------

    def feed_lines(self, base: int, lines: list[str]) -> None:
        """Feed ``lines`` (the first is line ``base``): :meth:`feed` for each, with fast paths.

        A plain ``host:pid:tid [dev] NCCL INFO msg`` line is split at its only " NCCL " with
        string methods and its prefix parsed once per distinct prefix; connection lines are
        counted per (process, transport text) and folded in :meth:`fold_connections`; repeats
        that change nothing (see ``_IDEM``) are skipped. Every other line takes :meth:`feed`.

        Most lines of a big log are repeats, so two caches answer them before any parsing: a
        connection line whose prefix and text after the channel number were counted before is
        one dictionary look-up (``hot``), and a line seen before whose handling changed nothing
        (``skip``, the line's text to its process) is another.
        """
        procs, ignored, seen, conns = self.procs, self.ignored, self.seen, self.conns
        hot, skip = self.hot, self.skip
        hot_get, skip_get = hot.get, skip.get
        feed = self.feed
        i = base - 1
        for line in lines:
            i += 1
            j = line.find(" NCCL INFO ")
            if j < 0:
                if "NCCL" in line:
                    feed(i, line)
                elif " via " in line or "NET/" in line or "Using network" in line:
                    self.feed_prefixless(i, line)
                elif self.matrix is not None:
                    self.on_matrix_row(i, line)
                continue
            conn = line.startswith(_CONN_HEADS, j + 11)
            if conn:
                c = line.find(" : ", j + 15)
                if c > 0:
                    # a tail in ``hot`` was checked when first counted (no " NCCL ", a " -> "
                    # before its " via "); only the channel number between may differ
                    e = hot_get((line[:j], line[c + 3:]))
                    if e is not None and line.find(" NCCL ", j + 10, c) < 0:
                        e[0] += 1
                        e[2] = i
                        self.last_proc = e[3]
                        continue
            else:
                p = skip_get(line)
                if p is not None:
                    self.last_proc = p
                    continue
            if line.find(" NCCL ", j + 10) >= 0:
                feed(i, line)  # torn: two lines glued together
                continue
            prefix = line[:j]
            p = procs.get(prefix)
            if p is None:
                p = self.prefix_proc(prefix)
            if p is False:
                feed(i, line)
                continue
            self.last_proc = p
            if conn:
                # keyed by what follows the channel number ("8[0] -> 0[0] [receive] via NET/IB/0"):
                # one entry per peer and transport, whatever the number of channels
                c = line.find(" : ", j + 15)
                k = line.find(" via ", c) if c > 0 else -1
                if k > 0 and line.find(" -> ", c, k) > 0 and k + 5 < len(line):
                    tail = line[c + 3:]
                    key = (p, tail)
                    e = conns.get(key)
                    if e is None:
                        if len(conns) >= _MAX_CACHE:
                            self.fold_connections()
                            conns, hot = self.conns, self.hot
                            hot_get = hot.get
                        e = conns[key] = [1, i, i, p]
                    else:
                        e[0] += 1
                        e[2] = i
                    hot[(prefix, tail)] = e
                    continue
            msg = line[j + 11:].strip()
            if not msg or msg in ignored:
                self.skip_line(line, p)
                continue
            pair = (p, msg)
            if pair in seen:
                self.skip_line(line, p)
                continue
            before = self.problems
            outcome = self.on_info(i, p, msg)
            if outcome == _IGNORED:
                if len(ignored) >= _MAX_CACHE:
                    ignored.clear()
                ignored.add(msg)
                self.skip_line(line, p)
            elif outcome == _IDEM and self.problems == before:
                if len(seen) >= _MAX_CACHE:
                    seen.clear()
                seen.add(pair)
                self.skip_line(line, p)

    def skip_line(self, line: str, p: _Proc) -> None:
        """Remember a line whose handling changed nothing: its repeats are skipped unread."""
        if len(self.skip) >= _MAX_CACHE:
            self.skip.clear()
        self.skip[line] = p

    def prefix_proc(self, prefix: str) -> _Proc | bool:
        """The process behind a line prefix (the text before " NCCL INFO "), or False."""
        p: _Proc | bool = False
        if "NCCL" not in prefix:
            mt = _LINE.match(prefix + " NCCL INFO")
            if mt is not None:
                p = _Proc()
                p.host = p.node = self.host_name(mt.group("host"))
                p.pid = int(mt.group("pid"))
                p.tid = int(mt.group("tid"))
                p.dev = int(mt.group("dev")) if mt.group("dev") else None
                p.ts = mt.group("ts") or mt.group("iso") or ""
                p.loc = mt.group("loc") or ""
                p.func = mt.group("func") or ""
                p.level = "INFO"
                self.hosts.add(p.host)
                self.recognised += 1
        if len(self.procs) >= _MAX_CACHE:
            self.procs.clear()
        self.procs[prefix] = p
        return p

    def fold_connections(self) -> None:
        """Add the connection lines counted by :meth:`feed_lines` to the per-node summaries."""
        items = sorted(self.conns.items(), key=lambda kv: kv[1][1])
        self.conns, self.hot = {}, {}
        for (p, tail), (n, first, last, _) in items:
            r = _CONN.match(tail)
            if r is None:
                self.count_connections(p, tail[tail.find(" via ") + 5:], n, first, last)
                continue
            net = self.count_connections(p, r.group(4), n, first, last)
            if net is not None:
                direction = r.group(3) or ""
                peer = int(r.group(1) if direction == "receive" else r.group(2))
                self.count_channel(p, direction, net, peer, n, first, last)

    def count_channel(self, p: _Proc, direction: str, net: tuple, peer: int, n: int, first: int,
                      last: int) -> None:
        """Per process, direction and NIC: connection lines and distinct peers (nccl.channel)."""
        key = (p.host, p.pid, p.dev, direction) + net
        agg = self.channels.get(key)
        if agg is None:
            if len(self.channels) >= _MAX_CHANNEL_FACTS:
                self.channel_overflow += n
                return
            agg = self.channels[key] = [first, last, 0, set(), p]
        agg[1] = max(agg[1], last)
        agg[2] += n
        if len(agg[3]) < 4096:
            agg[3].add(peer)

    def feed(self, index: int, line: str) -> None:
        if "NCCL" not in line:
            return
        if line.count(" NCCL INFO ") + line.count(" NCCL WARN ") > 1:
            self.feed_torn(index, line)
            return
        self.feed_one(index, line, None)

    def feed_torn(self, index: int, line: str) -> None:
        # two ranks writing to one unbuffered stream glue lines together; keep what parses
        starts = [mt.start() for mt in _EMBEDDED.finditer(line)]
        if len(starts) < 2:
            self.feed_one(index, line, None)
            return
        self.problem(index, "two NCCL log lines glued together (torn output)")
        bounds = [0] + starts[1:] + [len(line)]
        for a, b in zip(bounds, bounds[1:]):
            self.feed_one(index, line[a:b].rstrip(), self.hosts if a else None)

    def feed_one(self, index: int, line: str, known_hosts: set[str] | None) -> None:
        mt = _LINE.match(line)
        if mt is None:
            bare = _BARE_VERSION.match(line)
            if bare:
                self.recognised += 1
                # printed without a prefix right after the same process's cudaDriverVersion line
                self.on_version(index, self.last_proc, bare.group(1))
            elif _HEAD.match(line):
                self.problem(index, "unrecognised NCCL log line (torn or truncated?)")
            else:
                self.feed_prefixless(index, line)
            return
        self.recognised += 1
        p = _Proc()
        host = mt.group("host")
        if known_hosts is not None and host not in known_hosts:
            # the tail of the torn line got glued to this hostname
            host = next((h for h in known_hosts if host.endswith(h)), host)
        host = self.host_name(host)
        p.host = host
        p.node = host
        p.pid = int(mt.group("pid"))
        p.tid = int(mt.group("tid"))
        p.dev = int(mt.group("dev")) if mt.group("dev") else None
        p.ts = mt.group("ts") or mt.group("iso") or ""
        p.loc = mt.group("loc") or ""
        p.func = mt.group("func") or ""
        p.level = mt.group("level")
        self.hosts.add(host)
        self.last_proc = p
        msg = (mt.group("msg") or "").strip()
        if p.level == "WARN":
            self.on_warn(index, p, msg)
        elif msg:
            self.on_info(index, p, msg)

    def host_name(self, host: str) -> str:
        """The host of a line prefix; a prefix whose host part the user blanked out (``::16674:16674``)
        names no host, so the document's node stands for it."""
        return host if any(c.isalnum() for c in host) else self.doc.node

    def feed_prefixless(self, index: int, line: str) -> None:
        """A message without its prefix (see ``_PREFIXLESS``): one process per document stands
        for whoever printed these lines, on the document's node."""
        mt = _PREFIXLESS.match(line)
        if mt is None:
            return
        self.recognised += 1
        p = self.bare_proc
        if p is None:
            p = self.bare_proc = _Proc()
            p.host = p.node = self.doc.node
            p.pid = p.tid = 0
            p.dev = None
            p.ts = p.loc = p.func = ""
            p.level = "INFO"
        msg = mt.group("msg").strip()
        if msg[0].isdigit():  # a bare connection "9[1a000] -> 2[6b000] [send] via NET/IB/0"
            msg = "Channel ?? : " + msg
        if mt.group("level") == "WARN":
            self.on_warn(index, p, msg)
        else:
            self.on_info(index, p, msg)

    def on_info(self, i: int, p: _Proc, msg: str) -> int:
        """Handle one INFO message; says whether a repeat of it may be skipped (see ``_IGNORED``)."""
        c = msg[0]
        if c == "R" and msg.startswith("Ring ") and " via " in msg:  # 2.4-2.6 connection lines
            self.on_connection(i, p, msg)
            return _EVERY
        if c == "C":
            if msg.startswith("Channel "):
                if " via " in msg:
                    self.on_connection(i, p, msg)
                    return _EVERY
                return _IGNORED
            if msg.startswith("Connected all rings"):
                r = _RING.match(msg)
                if r:
                    self.on_ring(i, p, r)
                    return _EVERY
                return _IGNORED
            if msg.startswith("Could not enable P2P"):
                r = _P2P_OFF.match(msg)
                if r:
                    self.on_p2p_off(i, p, r)
                    return _EVERY
                return _IGNORED
            if msg.startswith("Could not open XML topology"):
                r = _TOPO_FAIL.search(msg)
                if r:
                    self.on_topo_fail(i, p, r.group(1), r.group(2))
                    return _IDEM
                return _IGNORED
        if c.isdigit():
            if " channels" in msg:
                self.on_channels(i, p, msg)
                return _IDEM
            return _IGNORED
        if msg.startswith("NCCL version"):
            self.on_version(i, p, msg[len("NCCL version"):].strip())
            return _IDEM
        if " set " in msg:
            r = _ENV.match(msg)
            if r:
                # "NCCL_IB_HCA set to ..." is printed only when the variable is set, too
                self.on_env(i, p, r.group(1), r.group(3), r.group(2) or "environment")
                return _IDEM
        if "/Plugin" in msg[:20]:
            r = _PLUGIN.match(msg)
            if r:
                self.on_plugin(i, p, r.group(1).lower(), r.group(2).strip(), msg)
                return _IDEM
            return _IGNORED
        if msg.startswith("NET/"):
            return self.on_net_line(i, p, msg)
        if msg.startswith("Using network"):
            r = _USING_NETWORK.match(msg)
            if r:
                self.on_using_network(i, p, r.group(1))
                return _EVERY
            return _IGNORED
        if "Init START" in msg or "Init COMPLETE" in msg:
            r = _INIT.search(msg)
            if r:
                self.on_init(i, p, r, msg)
                return _EVERY  # every START and COMPLETE is counted
            return _IGNORED
        if msg.startswith("Init timings"):
            r = _TIMINGS.match(msg)
            if r:
                _on_timings(self, i, p, r)
                return _EVERY
            return _IGNORED
        if msg.startswith("comm 0x"):
            r = _COMM.match(msg)
            if r:
                self.on_comm(i, p, r)
                return _IDEM
            return _IGNORED
        if "Affinity for GPU" in msg or msg.startswith("Setting affinity"):
            self.on_affinity(i, p, msg)
            return _IDEM
        if "GPU Direct RDMA" in msg:
            r = _GDR_GPU.search(msg)
            if r:
                self.on_gdr_gpu(i, p, r)
                return _IDEM
            return _IGNORED
        if " Bytes -> " in msg:
            r = _ALGO.match(msg)
            if r:
                self.on_algo(i, p, r)
                return _EVERY
            return _IGNORED
        if c == "G" and msg.startswith("GPU/"):
            r = _PATHS_HEAD.match(msg)
            if r:
                self.on_paths(i, p, r, msg)
                return _IDEM
            return _IGNORED
        if c == "+" or msg.startswith("CPU/"):
            r = _TOPO_NODE.match(msg)
            if r:
                self.on_topo_node(i, p, r)
                # a CPU root line sets where the next lines belong: never skipped
                return _EVERY if c == "C" else _IDEM
            return _IGNORED
        if msg.startswith("Trees"):
            n = msg.count("[")
            if n:
                self.emit(m.NcclTrees, i, p, key=(n,), channels=n)
            return _IDEM
        if msg.startswith("Enabled NCCL Func/Proto/Algo Matrix"):
            self.matrix = [p, i, None, None, 0]
            return _EVERY
        if "->" in msg:
            r = _UNWIND.match(msg)
            if r:
                last = self.last_warn.get((p.host, p.pid, p.tid))
                if last is not None and last[3].get("result") is None:
                    last[3]["result"] = int(r.group(1))
                return _EVERY
            return _IGNORED
        if msg.startswith("HINT:"):
            last = self.last_warn.get((p.host, p.pid, p.tid))
            if last is not None:
                hint = last[3].get("hint", "")
                last[3]["hint"] = (hint + " " + msg[5:].strip()).strip()[:1000]
            return _EVERY
        for regex, handler in _SIMPLE:
            r = regex.match(msg)
            if r:
                handler(self, i, p, r)
                return _IDEM
        if "gnoring" in msg or "dlsym failed" in msg or msg.startswith(_TOPO_HINTS):
            if self.on_topo_ignored(i, p, msg):
                return _EVERY
        if "Failed to open libibverbs" in msg:
            self.emit(m.NcclIbUnavailable, i, p, key=("libibverbs_missing",),
                      reason="libibverbs_missing", message=msg)
            return _IDEM
        if "Data Direct DMA" in msg:
            r = _DATA_DIRECT.search(msg)
            if r:
                self.emit(m.NcclDataDirect, i, p, key=(r.group(1),), device=r.group(1))
                return _IDEM
            return _IGNORED
        if "Setting NCCL_" in msg:
            r = _ENV_PLUGIN.search(msg)
            if r:
                self.on_env(i, p, r.group(1), r.group(2), "plugin")
                return _IDEM
        return _IGNORED

    # -- handlers ------------------------------------------------------------------------------

    def on_version(self, i: int, p: _Proc | None, text: str) -> None:
        r = _VERSION.match(text)
        if not r:
            self.problem(i, f"unreadable NCCL version {text[:40]!r}")
            return
        major, minor, patch = int(r.group(1)), int(r.group(2)), int(r.group(3))
        if major > 99 or minor > 99 or patch > 99:
            self.problem(i, f"unreadable NCCL version {text[:40]!r}")
            return
        # NCCL_VERSION_CODE switched from 1000*major to 10000*major at 2.9
        num = major * 10000 + minor * 100 + patch if version_at_least((major, minor), (2, 9)) \
            else major * 1000 + minor * 100 + patch
        version = f"{major}.{minor}.{patch}"
        self.versions.setdefault(p.node if p else None, version)
        self.emit(m.NcclVersion, i, p, key=(version, r.group(4) or ""), version=version,
                  version_num=num, cuda=r.group(4) or "")

    def on_env(self, i: int, p: _Proc, name: str, value: str, origin: str) -> None:
        value = value.strip()
        # integer parameters (and a few strings) are printed with a trailing period
        if len(value) > 1 and value.endswith("."):
            value = value[:-1]
        self.emit(m.NcclEnv, i, p, key=(name, value, origin), name=name, value=value, origin=origin)

    def on_net_line(self, i: int, p: _Proc, msg: str) -> int:
        if len(msg) > 4 and msg[4].isdigit():  # "NET/0-0 :GPU/0-18000 (5/24.0/PXB) ..." paths line
            r = _PATHS_HEAD.match(msg)
            if r:
                self.on_paths(i, p, r, msg)
                return _IDEM
            return _IGNORED
        if "qpn " in msg or "qp_num " in msg:
            found = False
            r = _ECE.search(msg)
            if r:
                found = True
                g = r.groups()
                self.count(i, p, m.NcclEce, g, ib_dev=int(g[0]), port=int(g[1]), kind=g[2][:-4],
                           supported=g[3] != "0", vendor_id=g[4], options=g[5], comp_mask=g[6])
            r = _QP.search(msg)
            if r:
                found = True
                g = r.groups()
                mtu = int(g[2])
                self.count(i, p, m.NcclIbQp, g[:4] + (g[4] if g[3] == "GID" else "",), ib_dev=int(g[0]),
                           port=int(g[1]), mtu=mtu, mtu_bytes=128 << mtu if 0 < mtu < 8 else 0,
                           addressing=g[3], gid_index=int(g[4]) if g[3] == "GID" else None)
            return _EVERY if found else _IGNORED
        r = _NET_USING.match(msg)
        if r:
            self.on_devlist(i, p, r.group(1), r.group(2))
            return _EVERY
        if "for GPU" in msg:  # 2.4-2.5: "NET/IB : GPU Direct RDMA Enabled for GPU 0[0] / HCA 0 ..."
            r = _GDR_GPU.search(msg)
            if r:
                self.on_gdr_gpu(i, p, r)
                return _IDEM
        r = _GDR_HCA.match(msg)
        if r:
            self.emit(m.NcclGdrHca, i, p, key=(r.group(4), r.group(3), r.group(1), r.group(2)),
                      hca=r.group(4), hca_index=int(r.group(3)), enabled=r.group(2) == "Enabled",
                      net=r.group(1))
            return _IDEM
        if "No device found" in msg and msg.startswith("NET/IB"):
            self.emit(m.NcclIbUnavailable, i, p, key=("no_device",), reason="no_device", message=msg)
            self.emit(m.NcclTopoIgnored, i, p, key=("NET/IB", "no_device"), what="NET/IB",
                      reason="no_device", message=msg[:500])
            return _IDEM
        r = _OFI_NICS.match(msg)
        if r:
            self.ofi_nics[(p.host, p.pid)] = int(r.group(2))
            self.ofi_provider[(p.host, p.pid)] = r.group(1).lower()
            return _IDEM
        r = _DATA_DIRECT.search(msg)
        if r:
            self.emit(m.NcclDataDirect, i, p, key=(r.group(1),), device=r.group(1))
            return _IDEM
        r = _ENV_PLUGIN.search(msg)
        if r:
            # aws-ofi-nccl sets NCCL variables itself (NCCL_TOPO_FILE on known instance types)
            self.on_env(i, p, r.group(1), r.group(2), "plugin")
            return _IDEM
        return _IGNORED

    def on_devlist(self, i: int, p: _Proc, transport: str, rest: str) -> None:
        head, semi, oob = rest.partition(";")
        # NCCL's 1 KiB line buffer cuts long device lists; a short line without the OOB part was
        # trimmed by whoever pasted it, and its last device is whole when it ends in a flag
        tail = head.rstrip()
        cut = not semi and transport != "Socket" and (
            len(rest) >= 900 or not tail.upper().endswith(("/IB", "/ROCE", "/SHARP", "[RO]", ":1", ":2")))
        if cut:
            self.problem(i, f"NET/{transport} : Using line cut before its OOB part; device list may be incomplete")
        devices, roce, sharp = [], False, False
        names: dict[str, str] = {}
        for index, spec in _NET_DEV.findall(head):
            parts = spec.split("/")
            name = parts[0]
            if transport == "Socket":
                name = name.split(":", 1)[0]
            devices.append(name)
            if len(names) < _MAX_LIST:
                names[index] = name
            flags = {x.upper() for x in parts[1:]}
            roce = roce or "ROCE" in flags
            sharp = sharp or "SHARP" in flags
        if cut and devices:  # the last entry may be cut in its name
            devices.pop()
            names.pop(index, None)
        o = _OOB.search(oob)
        fields = dict(transport=transport, devices=devices[:_MAX_LIST], device_count=len(devices),
                      roce=roce, sharp=sharp, relaxed_ordering="[RO]" in head,
                      oob_if=o.group(1) if o else "")
        family = "IB" if transport.startswith("IB") else transport
        self.devlists.setdefault((p.host, p.pid), {})[family] = (i, fields, p, False)
        self.nic_names[(p.host, p.pid, family)] = names
        # other processes of the host number the same devices the same way
        self.nic_names.setdefault((p.host, None, family), names)

    def on_using_network(self, i: int, p: _Proc, net: str) -> None:
        family = "IB" if net.startswith("IB") else ("Socket" if net == "Socket" else "")
        lists = self.devlists.get((p.host, p.pid), {})
        found = lists.get(family) if family else None
        if found is not None:
            fields = dict(found[1])
            lists[family] = (found[0], found[1], found[2], True)
        else:
            n = self.ofi_nics.get((p.host, p.pid), 0)
            if not family and self.ofi_provider.get((p.host, p.pid)) in _OFI_SOCKET_PROVIDERS:
                family = "Socket"  # the plugin loaded, but its provider runs on the host's TCP stack
            fields = dict(transport=family, devices=[], device_count=n)
        entry = self.emit(m.NcclNet, i, p, key=(net, tuple(fields["devices"])), net=net, selected=True,
                          **fields)
        if entry is not None and found is not None:
            entry[1], entry[2] = found[0], i  # from the device list to the decision

    def on_plugin(self, i: int, p: _Proc, kind: str, text: str, msg: str) -> None:
        if text.startswith("Failed to find") or text.startswith("Plugin name set") or \
                text.startswith("Plugin Path"):
            return  # probing steps before the outcome line
        r = _LOADED.search(text)
        if r:
            kind = r.group(1) or kind
            name, status, version = r.group(2), "loaded", r.group(3) or ""
        elif (r := _LOAD_RETURNED.search(text)) is not None:
            name = r.group(1)
            status = "not_found" if "cannot open shared object" in text else "failed"
            version = ""
        elif (r := _LOAD_RETURNED_OLD.search(text)) is not None:
            quoted = _QUOTED.search(text)
            name = r.group(3) or (quoted.group(1) if quoted else "") or r.group(2).split(":", 1)[0]
            status = "not_found" if "cannot open shared object" in text else "failed"
            version = ""
        elif (r := _USING_PLUGIN.match(text)) is not None:
            name, status, version = r.group(1), "loaded", r.group(2) or ""
        elif (r := _COULD_NOT_FIND.search(text)) is not None:
            name, status, version = r.group(1), "not_found", ""
        elif (r := _NO_PLUGIN.search(text)) is not None:
            name, status, version = r.group(1) or "", "not_found", ""
        elif "Using internal" in text:
            name, status, version = "internal", "not_found", ""
        else:
            return
        self.emit(m.NcclPlugin, i, p, key=(kind, name, status), kind=kind, name=name,
                  loaded=status == "loaded", status=status, plugin_version=version, message=msg[:500])

    def on_channels(self, i: int, p: _Proc, msg: str) -> None:
        counts: dict[str, int] = {}
        for num, kind, per_peer in _CHANNELS.findall(msg):
            counts["p2p_per_peer" if per_peer else kind] = int(num)
        if not counts:
            return
        self.emit_counted(m.NcclChannels, i, p, tuple(sorted(counts.items())), **counts)

    def on_connection(self, i: int, p: _Proc, msg: str) -> None:
        """``Channel 00/0 : 8[0] -> 0[0] [receive] via NET/IB/0/GDRDMA``: counted, folded later."""
        c = msg.find(" : ", 4)
        k = msg.find(" via ", c) if c > 0 else -1
        if k < 0 or msg.find(" -> ", c, k) < 0:
            return
        key = (p, msg[c + 3:])
        e = self.conns.get(key)
        if e is None:
            self.conns[key] = [1, i, i, p]
        else:
            e[0] += 1
            e[2] = i

    def count_connections(self, p: _Proc, via: str, n: int, first: int, last: int) -> tuple | None:
        """``n`` connection lines of one process over transport ``via``, lines first..last.

        For a network transport, answers (transport, nic, proxy rank, gdr, shared).
        """
        via = via.rstrip()
        if not via:
            return None
        parts = via.split("/")
        head = parts[0].upper()
        nic = net_name = ""
        pxn = gdr = False
        if head == "NET" and len(parts) > 1:
            net_name = parts[1]
            if net_name.startswith("IB"):
                transport = "NET/IB"
            elif net_name == "Socket":
                transport = "NET/Socket"
            else:
                transport = "NET/" + net_name
            if len(parts) > 2:
                dev = parts[2]
                nic = dev.split("(", 1)[0]
                pxn = "(" in dev
            flags = parts[3:]
            gdr = any(f.startswith("GDRDMA") for f in flags)
        elif head.startswith("NET"):  # 2.4-2.6 "via NET/IB/1" is handled above; odd spacing here
            transport, flags = "NET", parts[1:]
        elif head == "P2P" and len(parts) > 1:
            words = parts[1].split()
            transport = "P2P/" + (words[0] if words else "")
            flags = words[1:] + parts[2:]
        elif head.startswith("SHM") or "SHARED MEMORY" in head:  # 2.4-2.7 "via direct shared memory"
            transport, flags = "SHM", parts[1:]
        elif head.startswith("NVLS"):
            transport, flags = "NVLS", parts[1:]
        elif head.startswith("COLLNET"):
            transport, flags = "COLLNET", parts[1:]
        else:
            transport, flags = parts[0][:32], parts[1:]
        agg = self.transports.get((p.node, transport))
        if agg is None:
            agg = self.transports[(p.node, transport)] = dict(
                first=first, last=last, n=0, gdr=0, pxn=0, nics=set(), nets=set(), modes=set(),
                pids=set())
        agg["last"] = max(agg["last"], last)
        agg["n"] += n
        agg["gdr"] += n * gdr
        agg["pxn"] += n * pxn
        if nic and len(agg["nics"]) < _MAX_LIST:
            agg["nics"].add(nic)
        if net_name and len(agg["nets"]) < _MAX_LIST:
            agg["nets"].add(net_name)
        if len(agg["modes"]) < 16:
            agg["modes"].update(f for f in flags[:4] if f)
        if len(agg["pids"]) < 100_000:
            agg["pids"].add(p.pid)
        if not nic:
            return None
        proxy = None
        if pxn:
            inner = parts[2].split("(", 1)[1].rstrip(")")
            proxy = int(inner) if inner.isdecimal() else None
        return (transport, nic, proxy, gdr, any(f.startswith("Shared") for f in flags))

    def on_ring(self, i: int, p: _Proc, r: re.Match) -> None:
        pxn = int(r.group(1)) if r.group(1) else None
        gdr = int(r.group(2)) if r.group(2) else None
        key = ("ring", p.node, pxn, gdr)
        entry = self.dedupe.get(key)
        if entry is not None:
            entry[3]["count"] += 1
            return
        self.dedupe[key] = self.emit(m.NcclRingConnected, i, p, pxn=pxn, gdr=gdr, count=1)

    def on_p2p_off(self, i: int, p: _Proc, r: re.Match) -> None:
        agg = self.p2p_off.setdefault(p.node, dict(first=i, last=i, pairs=set()))
        agg["last"] = i
        a, b = r.group(2), r.group(4)
        if len(agg["pairs"]) < 4096:
            agg["pairs"].add("-".join(sorted((a, b))))

    def on_affinity(self, i: int, p: _Proc, msg: str) -> None:
        r = _AFF_OLD.match(msg)
        try:
            if r:
                gpu, aff = int(r.group(1)), r.group(2)
                cpus, empty, gpu_aff, cpu_aff = hex_mask_cpus(aff), False, "", ""
            else:
                r = _AFF_NEW.search(msg)
                if r is None:
                    return
                gpu, aff = int(r.group(1)), r.group(2).strip()
                gpu_aff, cpu_aff = r.group(3).strip(), (r.group(4) or "").strip()
                empty = aff.startswith("empty")
                cpus = [] if empty else cpu_list(aff)
        except (ValueError, ParseError):
            self.problem(i, "unreadable CPU affinity")
            return
        self.emit_counted(m.NcclAffinity, i, p, (aff, gpu_aff, cpu_aff), gpu=gpu, affinity=aff,
                  cpus=cpus[:4096], empty=empty, gpu_affinity=gpu_aff, cpu_affinity=cpu_aff)

    def on_gdr_gpu(self, i: int, p: _Proc, r: re.Match) -> None:
        def opt(g: int) -> int | None:
            return int(r.group(g)) if r.group(g) else None

        self.emit_counted(m.NcclGdrGpu, i, p, (r.group(1), opt(4), opt(5), opt(6)),
                  gpu_bus=r.group(2), hca_index=int(r.group(3)), enabled=r.group(1) == "Enabled",
                  distance=opt(4), max_distance=opt(5), read=opt(6))

    def on_init(self, i: int, p: _Proc, r: re.Match, msg: str) -> None:
        rank, nranks = int(r.group(1)), int(r.group(2))
        self.note_rank(p, rank, nranks)
        if r.group(3) != "COMPLETE":
            self.inits.started(nranks)
            return
        bus = _BUSID.search(msg)
        cid = _COMMID.search(msg)
        self.inits.completed(i, (p.host, p.pid, p.dev, p.node), rank, nranks, bus.group(1) if bus else "",
                             cid.group(1) if cid else "")

    def on_comm(self, i: int, p: _Proc, r: re.Match) -> None:
        def opt(g: int) -> int | None:
            return int(r.group(g)) if r.group(g) else None

        rank, nranks = int(r.group(1)), int(r.group(2))
        self.note_rank(p, rank, nranks)
        mn = opt(6)
        self.emit_counted(m.NcclComm, i, p, (nranks, opt(3), opt(4), mn), comm_rank=rank,
                  nranks=nranks, nnodes=opt(3), local_ranks=opt(4), local_rank=opt(5),
                  mnnvl=None if mn is None else bool(mn))

    def on_topo_load(self, i: int, p: _Proc, r: re.Match) -> None:
        entry = self.emit(m.NcclTopoFile, i, p, key=(r.group(1),), path=r.group(1), loaded=True)
        if entry is not None:
            self.topo[(p.host, p.pid)] = entry

    def on_topo_fail(self, i: int, p: _Proc, path: str, error: str) -> None:
        self.emit(m.NcclTopoFile, i, p, key=(path, "failed"), path=path, loaded=False,
                  error=error.strip()[:500])

    def on_warn(self, i: int, p: _Proc, msg: str) -> None:
        if "real path" in msg:
            self.on_topo_ignored(i, p, msg)
        r = _TOPO_FAIL.search(msg)
        if r:
            self.on_topo_fail(i, p, r.group(1), r.group(2))
        elif ("XML" in msg or "topology" in msg.lower()) and "Import Channel" not in msg:
            # a topology file that opened but did not parse; "XML Import Channel : dev N not found" is
            # the graph file (NCCL_GRAPH_FILE) naming a device this run lacks: the topology file loaded
            entry = self.topo.get((p.host, p.pid))
            if entry is not None and not entry[3].get("error"):
                entry[3]["loaded"] = False
                entry[3]["error"] = msg[:500]
        key = ("warn", p.node, msg)
        entry = self.dedupe.get(key)
        if entry is not None:
            entry[3]["count"] += 1
            self.last_warn[(p.host, p.pid, p.tid)] = entry
            return
        self.warn_count += 1
        if self.warn_count > _MAX_WARNS:
            if self.warn_count == _MAX_WARNS + 1:
                self.problem(i, f"more than {_MAX_WARNS} distinct NCCL WARN messages; rest not kept")
            return
        st = _IB_STATUS.search(msg)
        hca = _HCA.search(msg)
        entry = self.emit(
            m.NcclWarn, i, p, message=msg[:1000], category=_category(p.loc, msg),
            code_location=p.loc, function=p.func, timestamp=p.ts, result=None,
            ib_wc_status=int(st.group(1)) if st else None, hca=hca.group(1) if hca else "",
            hint="", count=1)
        self.dedupe[key] = entry
        self.last_warn[(p.host, p.pid, p.tid)] = entry

    def node_version(self, node: str) -> str:
        """The NCCL version ``node`` printed (a bare version line counts when only one was read)."""
        found = self.versions.get(node) or self.versions.get(None)
        if found:
            return found
        distinct = set(self.versions.values())
        return distinct.pop() if len(distinct) == 1 else ""

    def count(self, i: int, p: _Proc, cls: type[Fact], key: tuple, **fields: Any) -> None:
        """A counted fact: one per node and ``key``; ``count`` = lines, source = first..last."""
        key = (cls.fact_type, p.node) + key
        agg = self.counted.get(key)
        if agg is None:
            if len(self.counted) >= _MAX_CACHE:
                return
            fields.update(node=p.node, pid=p.pid, cuda_dev=p.dev, count=0)
            agg = self.counted[key] = [i, i, fields, cls, (p.host, p.pid, p.dev)]
        agg[1] = i
        agg[2]["count"] += 1

    def on_algo(self, i: int, p: _Proc, r: re.Match) -> None:
        func, variant, nbytes, algo, proto, kernel, memcpy = r.groups()
        if algo is not None:
            algo = _ALGO_NAMES[int(algo)] if algo.isdecimal() and int(algo) < len(_ALGO_NAMES) else algo
            proto = _PROTO_NAMES[int(proto)] if proto.isdecimal() and int(proto) < len(_PROTO_NAMES) else proto
        else:
            algo, proto = (variant or "").strip() or ("CopyEngine" if memcpy else ""), ""
        key = (func, algo, proto, kernel or "")
        full = (m.NcclAlgoSelection.fact_type, p.node) + key
        self.count(i, p, m.NcclAlgoSelection, key, function=func, algo=algo, proto=proto,
                   kernel=kernel or memcpy or "", min_bytes=int(nbytes), max_bytes=int(nbytes))
        agg = self.counted.get(full)
        if agg is not None:
            f = agg[2]
            n = int(nbytes)
            if n < f["min_bytes"]:
                f["min_bytes"] = n
            if n > f["max_bytes"]:
                f["max_bytes"] = n

    def on_matrix_row(self, i: int, line: str) -> None:
        """A row of the Func/Proto/Algo matrix printed after its INFO line (no prefix of its own)."""
        mx = self.matrix
        parts = line.split("|")
        if len(parts) != 3 or mx[4] >= _MAX_MATRIX_ROWS:
            self.matrix = None
            return
        mx[4] += 1
        words = parts[0].split()
        name = words[-1] if words else ""
        cells = parts[1].split(), parts[2].split()
        if name == "Function":
            mx[2], mx[3] = cells
            return
        if mx[2] is None or not name.isidentifier():
            self.matrix = None
            return
        # a row cut by NCCL's 1 KiB line buffer keeps the cells it has
        on = [([], []), ([], [])]
        for names, values, out in ((mx[2], cells[0], on[0]), (mx[3], cells[1], on[1])):
            for label, v in zip(names, values):
                if v.isdecimal():
                    out[0 if v != "0" else 1].append(label)
        self.emit(m.NcclAlgoEnabled, i, mx[0], key=(name, tuple(on[0][0]), tuple(on[1][0])),
                  function=name, protocols=on[0][0], protocols_off=on[0][1], algorithms=on[1][0],
                  algorithms_off=on[1][1])

    def on_topo_node(self, i: int, p: _Proc, r: re.Match) -> None:
        link, bw, ntype, nid, detail = r.groups()
        if ntype == "CPU" and link is None:
            self.topo_cpu[(p.host, p.pid)] = nid
        under = self.topo_cpu.get((p.host, p.pid), "")
        detail = detail or ""
        key = (ntype, nid, link or "", bw or "", under, "" if ntype == "GPU" else detail)
        if (m.NcclTopoNode.fact_type, p.node) + key in self.dedupe:
            return
        self.topo_nodes += 1
        if self.topo_nodes > _MAX_TOPO_NODES:
            if self.topo_nodes == _MAX_TOPO_NODES + 1:
                self.problem(i, f"more than {_MAX_TOPO_NODES} topology tree nodes; rest not kept")
            return
        gpu_rank = net_bw = None
        if ntype == "GPU" and detail.lstrip("-").isdecimal():
            gpu_rank = int(detail)
        elif ntype == "NET" and "/" in detail:
            try:
                net_bw = float(detail.rsplit("/", 1)[1])
            except ValueError:
                net_bw = None
        self.emit(m.NcclTopoNode, i, p, key=key, node_type=ntype, node_id=nid, link_type=link or "",
                  link_bw=float(bw) if bw else None, detail=detail[:200], gpu_rank=gpu_rank,
                  net_bw=net_bw, under_cpu=under)

    def on_paths(self, i: int, p: _Proc, r: re.Match, msg: str) -> None:
        paths: dict[str, str] = {}
        bws: dict[str, float] = {}
        for ttype, tid, bw, cls in _PATH_ENTRY.findall(msg, r.end()):
            if len(paths) >= _MAX_LIST:
                break
            target = f"{ttype}/{tid}"
            paths[target] = cls
            try:
                bws[target] = float(bw)
            except ValueError:
                pass
        if not paths:
            return
        rank = {c: n for n, c in enumerate(_PATH_ORDER)}
        nets = [c for t, c in paths.items() if t.startswith("NET/")]
        best = min(nets, key=lambda c: rank.get(c, len(rank))) if nets else ""
        self.emit(m.NcclTopoPaths, i, p, key=(r.group(1), r.group(2), tuple(paths.items())),
                  src_type=r.group(1), src_id=r.group(2), paths=paths, bw=bws, best_net_path=best)

    def on_topo_ignored(self, i: int, p: _Proc, msg: str) -> bool:
        for regex, reason in _TOPO_IGNORED:
            r = regex.search(msg)
            if r:
                what = r.group(1)[:200]
                key = ("topo_ignored", p.node, what, reason)
                entry = self.dedupe.get(key)
                if entry is not None:
                    entry[3]["count"] += 1
                    return True
                self.dedupe[key] = self.emit(m.NcclTopoIgnored, i, p, what=what, reason=reason,
                                             message=msg[:500], count=1)
                return True
        return False

    # -- end -----------------------------------------------------------------------------------

    def finish(self) -> None:
        self.fold_connections()
        for cls, index, end, fields, (host, pid, dev, node) in self.inits.entries(self.doc.lineno):
            fields.update(node=node, pid=pid, cuda_dev=dev)
            self.pending.append([cls, index, end, fields, (host, pid, dev)])
        for (host, pid), lists in self.devlists.items():
            for family, (i, fields, p, used) in lists.items():
                if not used:
                    # before 2.6 no "Using network" line: the device list is the choice
                    selected = version_at_least(self.node_version(p.node), _USING_NETWORK_SINCE) is False
                    self.emit(m.NcclNet, i, p, key=(fields["transport"], tuple(fields["devices"])),
                              net=fields["transport"], selected=selected, **fields)
        for (node, transport), agg in self.transports.items():
            self.pending.append([m.NcclTransportSummary, agg["first"], agg["last"], dict(
                node=node, transport=transport, connections=agg["n"], gdr_connections=agg["gdr"],
                pxn_connections=agg["pxn"], nics=_sorted(agg["nics"]), net_names=sorted(agg["nets"]),
                modes=sorted(agg["modes"]), processes=len(agg["pids"])), None])
        # one fact per node and NIC use: the processes of a node that use a NIC the same way are
        # counted, not listed (a 1,024-rank job would otherwise give ten thousand of them)
        per_node: dict[tuple, list[Any]] = {}
        for key, (first, last, n, peers, p) in sorted(self.channels.items(), key=lambda kv: kv[1][0]):
            _, _, _, direction, transport, nic, proxy, gdr, shared = key
            family = transport.split("/", 1)[1] if "/" in transport else transport
            family = "IB" if family.startswith("IB") else family
            names = self.nic_names.get((p.host, p.pid, family)) or self.nic_names.get((p.host, None, family), {})
            name = names.get(nic, "")
            nkey = (p.node, direction, transport, nic, name, proxy, gdr, shared)
            agg = per_node.get(nkey)
            if agg is None:
                per_node[nkey] = [first, last, n, set(peers), 1, p]
                continue
            agg[1] = max(agg[1], last)
            agg[2] += n
            if len(agg[3]) < 4096:
                agg[3].update(peers)
            agg[4] += 1
        for (node, direction, transport, nic, name, proxy, gdr, shared), (first, last, n, peers, procs, p) \
                in per_node.items():
            ranks = sorted(peers)
            self.pending.append([m.NcclChannel, first, last, dict(
                node=node, pid=p.pid, cuda_dev=p.dev, direction=direction, transport=transport,
                nic=nic, nic_name=name, proxy_rank=proxy, gdr=gdr, shared=shared, connections=n,
                peers=len(ranks), peer_ranks=ranks[:_MAX_LIST], processes=procs), (p.host, p.pid, p.dev)])
        if self.channel_overflow:
            self.problem(None, f"{self.channel_overflow} network connection lines past the "
                               f"{_MAX_CHANNEL_FACTS} per-process NIC summaries kept")
        for first, last, fields, cls, proc_key in self.counted.values():
            self.pending.append([cls, first, last if last != first else None, fields, proc_key])
        for node, agg in self.p2p_off.items():
            pairs = sorted(agg["pairs"])
            self.pending.append([m.NcclP2pUnavailable, agg["first"], agg["last"], dict(
                node=node, pairs=len(pairs), bus_pairs=pairs[:_MAX_LIST]), None])
        self.pending.sort(key=lambda e: e[1])
        for cls, index, end, fields, proc_key in self.pending:
            if proc_key is not None and "rank" not in fields:
                known = self.ranks.get(proc_key)
                fields["rank"] = known[1] if known else None
            try:
                self.ctx.add(cls, index, end, **fields)
            except ValueError as exc:  # a value pydantic refuses (e.g. absurd float)
                self.problem(index, f"dropped {cls.fact_type}: {exc.__class__.__name__}")
        if self.problems > _MAX_PROBLEMS:
            self.ctx.warn(None, f"{self.problems - _MAX_PROBLEMS} more problems not listed")


def _on_driver(st: _State, i: int, p: _Proc, r: re.Match) -> None:
    num = int(r.group(1))
    if num > 10**7:
        return
    st.emit(m.NcclCudaDriver, i, p, key=(num,), version_num=num,
            version=f"{num // 1000}.{num % 1000 // 10}")


def _on_bootstrap(st: _State, i: int, p: _Proc, r: re.Match) -> None:
    addr = (r.group(2) or "").split("<", 1)[0]
    st.emit(m.NcclBootstrap, i, p, key=(r.group(1), addr), interface=r.group(1), address=addr)


def _on_nvls(st: _State, i: int, p: _Proc, r: re.Match) -> None:
    st.emit_counted(m.NcclNvls, i, p, (not r.group(1),), available=not r.group(1), dev=int(r.group(2)))


def _on_mnnvl(st: _State, i: int, p: _Proc, r: re.Match) -> None:
    st.emit(m.NcclMnnvl, i, p, key=(r.group(1),), bus_id=r.group(1), fabric_uuid=r.group(2),
            clique_id=r.group(3), state=int(r.group(4)), health_mask=r.group(5))


def _on_system(st: _State, i: int, p: _Proc, r: re.Match) -> None:
    total = float(r.group(3)) if r.group(2) in ("totalBw", "totalWidth") else None
    st.emit(m.NcclGraphSystem, i, p, key=(r.group(1), total), max_bw=float(r.group(1)), total_bw=total)


def _on_pattern(st: _State, i: int, p: _Proc, r: re.Match) -> None:
    g = r.groups()
    st.emit(m.NcclGraph, i, p, key=g, pattern=int(g[0]), cross_nic=int(g[1]), nchannels=int(g[2]),
            bw_intra=float(g[3]), bw_inter=float(g[4]), type_intra=g[5], type_inter=g[6],
            same_channels=int(g[7]) if g[7] else None)


def _on_timings(st: _State, i: int, p: _Proc, r: re.Match) -> None:
    parts = {k: float(v) for k, v in _TIMING_PART.findall(r.group(4) or "") if k in _TIMING_FIELDS}
    st.inits.timed(i, (p.host, p.pid, p.dev, p.node), int(r.group(1)), int(r.group(2)),
                   float(r.group(3)), parts)


def _on_cc(st: _State, i: int, p: _Proc, r: re.Match) -> None:
    st.emit(m.NcclCc, i, p, key=r.groups(), enabled=r.group(1) == "On",
            multi_gpu=None if r.group(2) is None else r.group(2) == "On")


_SIMPLE = (
    (_CC, _on_cc),
    (_DRIVER, _on_driver),
    (_BOOTSTRAP, _on_bootstrap),
    (_NVLS, _on_nvls),
    (_MNNVL, _on_mnnvl),
    (_SYSTEM, _on_system),
    (_PATTERN, _on_pattern),
    (_TOPO_LOAD, _State.on_topo_load),
)


def _sorted(values: set[str]) -> list[str]:
    return sorted(values, key=lambda v: (0, int(v), "") if v.isdecimal() else (1, 0, v))


def _category(loc: str, msg: str) -> str:
    loc_l, low = loc.lower(), msg.lower()
    if "graph/" in loc_l or "xml" in loc_l or "topo" in loc_l or "topology" in low or "xml" in low:
        return "topo"
    if any(s in loc_l for s in ("net", "socket", "ibv", "ib_", "/ib")) or msg.startswith("NET/") \
            or "ibv_" in low or "socket" in low:
        return "net"
    if "param" in loc_l or "environment" in low or "env var" in low:
        return "env"
    if "cuda" in loc_l or "cuda" in low or "nvml" in low:
        return "cuda"
    if "bootstrap" in loc_l or "bootstrap" in low:
        return "bootstrap"
    if "proxy" in loc_l or "proxy" in low:
        return "proxy"
    if "init" in loc_l:
        return "init"
    return "other"


def parse(doc: Document, ctx: ParseContext) -> None:
    stream([(0, doc.lines)], ctx)


def stream(batches: Iterable[tuple[int, list[str]]], ctx: ParseContext) -> None:
    """Parse a log handed over in batches ``(index of the first line, lines)``, in order.

    Memory stays bounded whatever the log's length: lines are aggregated as they come and
    nothing keeps a line. ``parse`` is this with one batch.
    """
    state = _State(ctx.doc, ctx)
    last = ""
    last_index = -1
    for base, lines in batches:
        if lines:
            state.feed_lines(base, lines)
            last, last_index = lines[-1], base + len(lines) - 1
    if last_index >= 0 and "NCCL" not in last and _HEAD.match(last):
        state.problem(last_index, "log ends inside a line prefix (truncated)")
    if not state.recognised:
        raise NotApplicable("no NCCL debug lines")
    state.finish()


FORMATS = [
    Format(
        name="nccl-debug",
        command="NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,GRAPH,NET <training or nccl-tests command>",
        facts=tuple(c.fact_type for c in (
            m.NcclVersion, m.NcclCudaDriver, m.NcclEnv, m.NcclBootstrap, m.NcclNet,
            m.NcclIbUnavailable, m.NcclPlugin, m.NcclChannels, m.NcclTransportSummary,
            m.NcclP2pUnavailable, m.NcclRingConnected, m.NcclAffinity, m.NcclGdrHca, m.NcclGdrGpu,
            m.NcclNvls, m.NcclMnnvl, m.NcclComm, m.NcclTopoFile, m.NcclGraphSystem, m.NcclGraph,
            m.NcclInitComplete, m.NcclInitTimings, m.NcclDataDirect, m.NcclWarn, m.NcclChannel,
            m.NcclTopoIgnored, m.NcclTopoNode, m.NcclEce, m.NcclIbQp, m.NcclAlgoSelection,
            m.NcclAlgoEnabled, m.NcclTrees, m.NcclCc, m.NcclTopoPaths)),
        sniff=sniff,
        parse=parse,
        stream=stream,
        line_test=is_line,
        command_patterns=(r"\bNCCL_DEBUG=(?:INFO|WARN|TRACE)\b",),
        description="NCCL_DEBUG=INFO/WARN log lines (host:pid:tid [dev] NCCL INFO ...), any NCCL 2.x",
    )
]
