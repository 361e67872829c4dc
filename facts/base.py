"""The fact model every parser, combiner and rule speaks.

A fact is one typed observation about one node, with the input line it came from. Fact types are
pydantic models, registered by their dotted ``fact_type`` name (``cpu.idle_state``); rules name
those types and their fields, never tools or files.

Field values are kept to JSON scalars and flat lists of scalars: the rule engine (durable-rules)
compares numbers and strings loosely and flattens nested objects, so one JSON type per field,
enforced here, is what keeps a threshold comparison honest.
"""

from __future__ import annotations

import math
from enum import Enum
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from clusterdx.facts import lazyre


class Scope(str, Enum):
    """Where on a node the observation was made."""

    host = "host"
    container = "container"
    vm_guest = "vm-guest"
    hypervisor = "hypervisor"
    unknown = "unknown"


_CONTROL = lazyre.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROL_ALL = lazyre.compile(r"[\x00-\x1f\x7f-\x9f]")


def printable(text: str, keep_newlines: bool = True) -> str:
    """``text`` safe for a terminal and for JSON: bytes that were not UTF-8 (a file name read
    with surrogateescape) and control characters (ESC, BEL, NUL) shown as ``\\xNN``.

    >>> printable("ok.txt"), printable("a\\x1b[31mred"), printable(b"caf\\xe9".decode("utf-8", "surrogateescape"))
    ('ok.txt', 'a\\\\x1b[31mred', 'caf\\\\xe9')
    """
    if text.isprintable():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            raw = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            raw = text.encode("utf-8", "backslashreplace")
        text = raw.decode("utf-8", "backslashreplace")
    pattern = _CONTROL if keep_newlines else _CONTROL_ALL
    return pattern.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


class SourceRef(BaseModel):
    """Where a fact came from: input name, 1-based line span, parser."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: str
    line: int = 0
    end_line: int = 0
    parser: str = ""

    @field_validator("input", mode="after")
    @classmethod
    def _printable(cls, v: str) -> str:
        return printable(v, keep_newlines=False)

    def __str__(self) -> str:
        if self.line <= 0:
            return self.input
        if self.end_line > self.line:
            return f"{self.input}:{self.line}-{self.end_line}"
        return f"{self.input}:{self.line}"


class ParseError(Exception):
    """The input claims to be this format but is malformed; ``line`` is 1-based in the input."""

    def __init__(self, message: str, line: int = 0):
        super().__init__(message)
        self.line = line


class NotApplicable(Exception):
    """The input holds nothing this parser can say anything about."""


FACT_TYPES: dict[str, type["Fact"]] = {}

#: the range of integers a fact may hold: signed 64-bit, what the rule engine stores
INT_MIN, INT_MAX = -(1 << 63), (1 << 63) - 1


def check_number(x: Any) -> None:
    """Refuse an integer outside the signed 64-bit range and a NaN or infinite float.

    >>> check_number(2**63 - 1)
    >>> check_number(2**64)
    Traceback (most recent call last):
    ...
    ValueError: integer 18446744073709551616 is outside the signed 64-bit range
    >>> check_number(float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: NaN and infinity are not allowed in facts
    """
    if isinstance(x, bool):
        return
    if isinstance(x, int) and not INT_MIN <= x <= INT_MAX:
        text = str(x) if x.bit_length() < 200 else f"of {x.bit_length()} bits"
        raise ValueError(f"integer {text} is outside the signed 64-bit range")
    if isinstance(x, float) and not math.isfinite(x):
        raise ValueError("NaN and infinity are not allowed in facts")

_SCALARS = (str, int, float, bool)


class Fact(BaseModel):
    """Base of every fact type. Subclasses set ``fact_type`` and declare their fields."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)

    fact_type: ClassVar[str] = ""
    #: one line saying what the fact means; shown by ``clusterdx formats`` and ``kb lint``
    doc: ClassVar[str] = ""

    node: str = "unknown"
    scope: Scope = Scope.unknown
    source: SourceRef = Field(default_factory=lambda: SourceRef(input="<none>"))
    #: ``measured``: a tool's output; ``reported``: what a user wrote in a ticket's prose
    #: (:mod:`clusterdx.facts.parsers.prose`), weighed below a measurement, never above it.
    #: Named ``provenance`` because ``origin`` is already a field of three fact types
    #: (``nccl.env``, ``nccl.setting``, ``kernel.version``) that rules test.
    provenance: Literal["measured", "reported"] = "measured"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        name = cls.__dict__.get("fact_type")
        if name:
            if name in FACT_TYPES and FACT_TYPES[name].__qualname__ != cls.__qualname__:
                raise TypeError(f"fact type {name!r} defined twice ({FACT_TYPES[name]!r}, {cls!r})")
            FACT_TYPES[name] = cls

    @field_validator("*", mode="after")
    @classmethod
    def _finite(cls, v: Any) -> Any:
        """Numbers are bounded and finite where facts are made: the rule engine holds integers
        in 64 bits and a NaN compares false with everything, so one such value from a ticket
        would either crash the run or silently defeat a threshold."""
        for x in (v if isinstance(v, (list, tuple)) else (v,)):
            check_number(x)
        return v

    def payload(self) -> dict[str, Any]:
        """The fields rules may test: everything but provenance."""
        data = self.model_dump(mode="json", exclude={"source"})
        data["type"] = self.fact_type
        return data

    def describe(self) -> str:
        """Compact ``type(field=value, ...)`` for traces and evidence lines."""
        parts = []
        for key, value in self.model_dump(mode="json", exclude={"source", "node", "scope"}).items():
            if value is None or value == [] or value == "" or (key == "provenance" and value == "measured"):
                continue
            text = repr(value) if isinstance(value, str) else str(value)
            if len(text) > 60:
                text = text[:57] + "..."
            parts.append(f"{key}={text}")
        return f"{self.fact_type}({', '.join(parts)})"


def is_reported(fact: Fact) -> bool:
    """True for a fact stated by a user (ticket prose), not measured by a tool."""
    return getattr(fact, "provenance", "measured") == "reported"


def field_kinds(fact_cls: type[Fact]) -> dict[str, str]:
    """Field name -> 'number' | 'string' | 'bool' | 'list' | 'other', for rule validation."""
    kinds: dict[str, str] = {}
    for name, info in fact_cls.model_fields.items():
        if name == "source":
            continue
        kinds[name] = _kind_of(info.annotation)
    kinds["type"] = "string"
    return kinds


def _kind_of(annotation: Any) -> str:
    import types
    import typing

    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        kinds = {_kind_of(a) for a in inner}
        if kinds <= {"number"}:
            return "number"
        return kinds.pop() if len(kinds) == 1 else "other"
    if origin in (list, tuple):
        return "list"
    if origin is typing.Literal:
        vals = typing.get_args(annotation)
        if all(isinstance(v, bool) for v in vals):
            return "bool"
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
            return "number"
        return "string"
    if annotation is bool:
        return "bool"
    if annotation in (int, float):
        return "number"
    if annotation is str:
        return "string"
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return "string"
    return "other"


def load_fact_types() -> dict[str, type[Fact]]:
    """Import every module of ``clusterdx.facts.model`` so that all fact types are registered."""
    import importlib
    import pkgutil

    from clusterdx.facts import model

    for info in pkgutil.iter_modules(model.__path__):
        importlib.import_module(f"{model.__name__}.{info.name}")
    return FACT_TYPES
