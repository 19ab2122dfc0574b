"""Building blocks of the cost estimator: ranges, DRA size bounds, type helpers.

Costs and sizes are ``(min, max)`` ranges of non-negative integers that
saturate at 2^64-1 like cel-go's, so "unknown" is simply ``(0, 2^64-1)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from dralab.cel.library import MAX_LIST_VALUES

__all__ = [
    "LIST_CREATE",
    "MAP_CREATE",
    "MAX",
    "MAX_LIST_VALUES",
    "ONE",
    "REGEX_LENGTH",
    "STRING_TRAVERSAL",
    "STRUCT_CREATE",
    "UNKNOWN",
    "ZERO",
    "Entry",
    "Node",
    "Range",
    "add",
    "device_size",
    "entry_union",
    "first_param",
    "is_scalar",
    "kind_of",
    "literal_size",
    "mul",
    "scale",
    "union",
]

MAX: Final = 2**64 - 1
# Unit costs of cel-go (common/cost.go).
STRING_TRAVERSAL: Final = 0.1
REGEX_LENGTH: Final = 0.25
LIST_CREATE: Final = 10
MAP_CREATE: Final = 30
STRUCT_CREATE: Final = 40

Range = tuple[int, int]

ZERO: Final[Range] = (0, 0)
ONE: Final[Range] = (1, 1)
UNKNOWN: Final[Range] = (0, MAX)


def add(a: Range, b: Range) -> Range:
    return (min(a[0] + b[0], MAX), min(a[1] + b[1], MAX))


def mul(a: Range, b: Range) -> Range:
    return (min(a[0] * b[0], MAX), min(a[1] * b[1], MAX))


def union(a: Range, b: Range) -> Range:
    return (min(a[0], b[0]), max(a[1], b[1]))


def _factor(x: int, f: float) -> int:
    # cel-go multiplies in float64 and rounds up; do the same to land on its numbers.
    value = math.ceil(float(x) * f)
    return MAX if value >= MAX else value


def scale(a: Range, f: float) -> Range:
    return (_factor(a[0], f), _factor(a[1], f))


# --- how big `device` can get ----------------------------------------------------

# k8s.io/api/resource: ResourceSliceMaxAttributesAndCapacitiesPerDevice, DeviceMaxDomainLength,
# DeviceMaxIDLength, DeviceAttributeMaxValueLength (also >= the longest list attribute, so
# one bound serves both), DriverNameMaxLength.
_MAX_ENTRIES: Final = 32
_MAX_DOMAIN: Final = 63
_MAX_ID: Final = 32
_MAX_ATTRIBUTE: Final = 64
_MAX_DRIVER: Final = 63


@dataclass(frozen=True)
class _Decl:
    """A node of the declared device type with its maximum size."""

    max_size: int
    fields: tuple[tuple[str, _Decl], ...] = ()
    key: _Decl | None = None
    elem: _Decl | None = None


_ATTRIBUTE: Final = _Decl(_MAX_ATTRIBUTE)
_QUANTITY: Final = _Decl(0)
# allowMultipleAllocations is absent on purpose: upstream sizes it as a scalar (1).
_DEVICE: Final = _Decl(0, fields=(
    ("driver", _Decl(_MAX_DRIVER)),
    ("attributes", _Decl(_MAX_ENTRIES, key=_Decl(_MAX_DOMAIN),
                         elem=_Decl(_MAX_ENTRIES, key=_Decl(_MAX_ID), elem=_ATTRIBUTE))),
    ("capacity", _Decl(_MAX_ENTRIES, key=_Decl(_MAX_DOMAIN),
                       elem=_Decl(_MAX_ENTRIES, key=_Decl(_MAX_ID), elem=_QUANTITY))),
))


def device_size(path: Sequence[str] | None) -> Range | None:
    """Size bound of what a path below ``device`` denotes (upstream's size estimator).

    Path elements are field names or ``@items``/``@values``/``@keys``.
    """
    if not path or path[0] != "device":
        return None
    node = _DEVICE
    for name in path[1:]:
        if name in ("@items", "@values"):
            step = node.elem
        elif name == "@keys":
            step = node.key
        else:
            step = dict(node.fields).get(name)
            if step is None and node.elem is _ATTRIBUTE:
                # Any id in a domain map is an attribute of the same bounded size.
                step = _ATTRIBUTE
        if step is None:
            return None
        node = step
    return (0, node.max_size)


# --- types and sizes of nodes ------------------------------------------------------


def kind_of(t: Any) -> str:
    """A checked type's kind: "int", "string", "list", "map", "struct", "optional", "dyn", ..."""
    kind = t.WhichOneof("kind") if t is not None else None
    if kind == "primitive":
        return {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}.get(
            t.primitive, "dyn")
    if kind == "well_known":
        return {2: "timestamp", 3: "duration"}.get(t.well_known, "dyn")
    if kind == "abstract_type" and t.abstract_type.name == "optional_type":
        return "optional"
    names = {"list_type": "list", "map_type": "map", "message_type": "struct",
             "type_param": "typeparam"}
    return names.get(kind, "dyn") if kind is not None else "dyn"


def is_scalar(t: Any) -> bool:
    """Types of constant size 1 in CEL's model (strings and bytes are not)."""
    kind = kind_of(t)
    if kind == "optional":
        return is_scalar(t.abstract_type.parameter_types[0])
    return kind in ("bool", "double", "duration", "int", "timestamp", "uint")


def first_param(t: Any) -> Any:
    """The first type parameter (list element or map key), as cel-go's Parameters()[0]."""
    kind = kind_of(t)
    if kind == "list":
        return t.list_type.elem_type
    if kind == "map":
        return t.map_type.key_type
    return None


def literal_size(e: Any) -> Range | None:
    """Exact size of a constant or an aggregate literal, else None."""
    kind = e.WhichOneof("kind")
    if kind == "const_expr":
        const = e.const_expr
        which = const.WhichOneof("kind")
        if which == "string_value":
            n = len(const.string_value)
        elif which == "bytes_value":
            n = len(const.bytes_value)
        else:
            n = 1
        return (n, n)
    if kind == "list_expr":
        n = len(e.list_expr.elements)
        return (n, n)
    if kind == "struct_expr" and not e.struct_expr.message_name:
        n = len(e.struct_expr.entries)
        return (n, n)
    return None


@dataclass
class Entry:
    """Sizes of the keys (or indexes) and values of a list or map."""

    container: str  # "list" or "map"
    key: Range
    value: Range


def entry_union(a: Entry | None, b: Entry | None) -> Entry | None:
    if a is None or b is None:
        return None
    return Entry(a.container, union(a.key, b.key), union(a.value, b.value))


@dataclass
class Node:
    """What a call's cost rule may know about an operand."""

    expr: Any
    type: Any
    path: tuple[str, ...] | None
    size: Range | None
