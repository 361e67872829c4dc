"""Safe YAML loading that remembers where every value came from.

Knowledge-base files are data written by people: they are loaded with the safe loader only (no
Python object tags), and every mapping key and sequence item keeps its ``line:col`` so that a
validation error can point at the exact spot (``rules/cpu/x.yaml:27:7``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

Loc = tuple[int, int]


@dataclass
class Located:
    data: Any
    #: path tuple (keys and list indexes) -> (line, col), 1-based; a mapping entry points at its key
    locs: dict[tuple, Loc]
    #: path tuple -> where the value itself starts (for errors inside a value, e.g. a condition)
    vlocs: dict[tuple, Loc] = None  # type: ignore[assignment]

    def vloc(self, path: tuple) -> Loc:
        if self.vlocs and path in self.vlocs:
            return self.vlocs[path]
        return self.loc(path)

    def loc(self, path: tuple) -> Loc:
        """Location of ``path`` or of its nearest located ancestor."""
        while path:
            if path in self.locs:
                return self.locs[path]
            path = path[:-1]
        return self.locs.get((), (1, 1))


class YamlError(Exception):
    def __init__(self, message: str, line: int, col: int):
        super().__init__(message)
        self.line, self.col = line, col


def _walk(node: yaml.Node, path: tuple, locs: dict[tuple, Loc], vlocs: dict[tuple, Loc]) -> Any:
    locs[path] = vlocs[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = _LOADER.construct_object(key_node, deep=True)  # type: ignore[arg-type]
            if isinstance(key, (list, dict)):
                raise YamlError("mapping keys must be scalars", key_node.start_mark.line + 1,
                                key_node.start_mark.column + 1)
            if key in out:
                raise YamlError(f"duplicate key {key!r}", key_node.start_mark.line + 1,
                                key_node.start_mark.column + 1)
            out[key] = _walk(value_node, path + (key,), locs, vlocs)
            locs[path + (key,)] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_walk(item, path + (i,), locs, vlocs) for i, item in enumerate(node.value)]
    return _LOADER.construct_object(node, deep=True)  # type: ignore[arg-type]


# libyaml's scanner when PyYAML was built with it (its wheels are): five times faster, and the
# knowledge base is hundreds of small files read on every start
_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_Base):  # type: ignore[valid-type, misc]
    pass


_LOADER = _Loader("")

MAX_YAML_BYTES = 4 * 1024 * 1024
#: nodes a document may hold once its aliases are expanded ("billion laughs": a few lines of
#: ``&a [*b, *b, ...]`` expand to 10^9 nodes); the largest KB file holds a few thousand
MAX_EXPANDED_NODES = 100_000


def _expanded_size(root: yaml.Node) -> int:
    """How many nodes ``root`` would hold with every alias expanded, computed without expanding
    (each distinct node's size once)."""
    sizes: dict[int, int] = {}
    started: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if id(node) in sizes or (not done and id(node) in started):
            continue  # sized already, or an alias back to an ancestor (a recursive document)
        started.add(id(node))
        children: list[yaml.Node] = []
        if isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        if done:
            sizes[id(node)] = min(1 + sum(sizes.get(id(c), 1) for c in children), 1 << 62)
            continue
        stack.append((node, True))
        stack.extend((c, False) for c in children if id(c) not in sizes)
    return sizes[id(root)]


def _check_expansion(node: yaml.Node) -> None:
    size = _expanded_size(node)
    if size > MAX_EXPANDED_NODES:
        raise YamlError(f"aliases expand to {size} nodes (limit {MAX_EXPANDED_NODES}); refused",
                        node.start_mark.line + 1, node.start_mark.column + 1)


def load_text(text: str) -> Located:
    if len(text) > MAX_YAML_BYTES:
        raise YamlError(f"file larger than {MAX_YAML_BYTES} bytes", 1, 1)
    try:
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        raise YamlError(f"{exc.problem or exc}", line, col) from None
    except yaml.YAMLError as exc:
        raise YamlError(str(exc), 1, 1) from None
    if node is None:
        return Located(None, {(): (1, 1)})
    _check_expansion(node)
    locs: dict[tuple, Loc] = {}
    vlocs: dict[tuple, Loc] = {}
    try:
        data = _walk(node, (), locs, vlocs)
    except yaml.constructor.ConstructorError as exc:
        mark = exc.problem_mark
        raise YamlError(str(exc.problem), mark.line + 1 if mark else 1, mark.column + 1 if mark else 1) from None
    except RecursionError:
        raise YamlError("document refers to itself through an alias, or nests too deep", 1, 1) from None
    return Located(data, locs, vlocs)


def load_file(path: Path) -> Located:
    return load_text(path.read_text(encoding="utf-8"))


def load_plain(path: Path) -> Any:
    """Plain safe load when locations are not needed (case expectations, site config)."""
    text = path.read_text(encoding="utf-8")
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expansion(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()
