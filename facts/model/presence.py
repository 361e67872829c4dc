"""What a listing shows is there, or not: libraries, network plugins, kernel module files and
device nodes (``ls``, ``ls -l``, ``find``, ``ldconfig -p``, ``ldd``).

``present=False`` is only recorded where the listing proves it: ``ls: cannot access ...: No such
file or directory``, ``ldd``'s ``=> not found``, or a name missing from a listing that covers
the whole folder it would sit in (``ls /dev/infiniband`` without ``uverbs0``). A name a listing
simply does not show (a filtered ``ldconfig -p | grep nccl``) gives no fact at all.
"""

from clusterdx.facts.base import Fact


class FsPresence(Fact):
    fact_type = "fs.presence"
    doc = "A library, NCCL network plugin, kernel module file, device node or file a listing shows present (or proves absent)."
    #: library | plugin | module | device | file
    kind: str
    #: the canonical name: ``libnccl.so.2``, ``libnccl-net.so``, ``nvidia-peermem``, ``/dev/infiniband/uverbs0``
    name: str
    #: the path shown ('' when the listing gives none, as for ``ldd ... not found``)
    path: str = ""
    present: bool
    #: version taken from the file name (``libnccl.so.2.21.5`` -> ``2.21.5``), '' when none
    version: str = ""
    #: ldd | ldconfig | ls | find
    listing: str = ""
    #: the symlink target shown by ``ls -l`` / ``ldd`` / ``ldconfig -p`` ('' when none)
    target: str = ""
