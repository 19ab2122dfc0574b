"""Building blocks of the cost estimator: ranges, DRA size bounds, type helpers.

Costs and sizes are ``(min, max)`` ranges of non-negative integers that
saturate at 2^64-1 like cel-go's, so "unknown" is simply ``(0, 2^64-1)``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from dralab.cel.library import MAX_LIST_VALUES

__all__ = [
    "DECLARED_DEVICE",
    "LIST_CREATE",
    "MAP_CREATE",
    "MAX",
    "MAX_LIST_VALUES",
    "MESSAGE_WEIGHT",
    "ONE",
    "REGEX_LENGTH",
    "STRING_TRAVERSAL",
    "STRUCT_CREATE",
    "UNKNOWN",
    "ZERO",
    "CostOperand",
    "Entry",
    "Range",
    "SizeTree",
    "actual_device",
    "add",
    "device_size",
    "device_weight",
    "entry_union",
    "first_param",
    "is_scalar",
    "kind_of",
    "literal_size",
    "mul",
    "scale",
    "union",
    "within_declared",
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
class SizeTree:
    """A node of the device's type: the largest size it can have and its weight.

    ``max_size`` is the size in CEL's model (characters, entries, elements).
    ``weight`` bounds the value fully expanded: one per value plus one per
    character of each string, over all nested entries; it is what walking the
    whole value costs (deep equality, conversion to Python), which the runtime
    bound charges (see ``runtimecost``). ``open`` marks a domain's attribute
    map, where any field name selects an attribute.
    """

    max_size: int
    weight: int
    fields: tuple[tuple[str, SizeTree], ...] = ()
    key: SizeTree | None = None
    elem: SizeTree | None = None
    open: bool = False


def _string(max_length: int) -> SizeTree:
    return SizeTree(max_length, 1 + max_length)


def _container(max_entries: int, key: SizeTree, elem: SizeTree, open_: bool = False) -> SizeTree:
    return SizeTree(max_entries, min(1 + max_entries * (key.weight + elem.weight), MAX),
                    key=key, elem=elem, open=open_)


# A message value (Quantity, Semver) is a small fixed amount of work.
MESSAGE_WEIGHT: Final = 2

# Upstream sizes every attribute as 64 whatever its kind; the weight covers the
# heaviest kind, a list of 64 strings of 64 characters.
_ATTRIBUTE: Final = SizeTree(_MAX_ATTRIBUTE, 1 + _MAX_ATTRIBUTE * (1 + _MAX_ATTRIBUTE))
# Upstream sizes a quantity as 0.
_QUANTITY: Final = SizeTree(0, MESSAGE_WEIGHT)


def _device(driver: SizeTree, attributes: SizeTree, capacity: SizeTree) -> SizeTree:
    # allowMultipleAllocations is absent on purpose: upstream sizes it as a scalar (1).
    fields = (("driver", driver), ("attributes", attributes), ("capacity", capacity))
    return SizeTree(0, 1 + sum(node.weight for _, node in fields), fields=fields)


DECLARED_DEVICE: Final = _device(
    _string(_MAX_DRIVER),
    _container(_MAX_ENTRIES, _string(_MAX_DOMAIN),
               _container(_MAX_ENTRIES, _string(_MAX_ID), _ATTRIBUTE, open_=True)),
    _container(_MAX_ENTRIES, _string(_MAX_DOMAIN),
               _container(_MAX_ENTRIES, _string(_MAX_ID), _QUANTITY)),
)
"""What any valid device can hold: upstream's size estimate for ``device``."""


def _walk(path: Sequence[str] | None, tree: SizeTree, any_map_field: bool = False
          ) -> SizeTree | None:
    """The node a path denotes; ``any_map_field``: a field of any map is one of its values."""
    if not path or path[0] != "device":
        return None
    node = tree
    for name in path[1:]:
        if name in ("@items", "@values"):
            step = node.elem
        elif name == "@keys":
            step = node.key
        else:
            step = dict(node.fields).get(name)
            if step is None and (node.open or any_map_field):
                step = node.elem
        if step is None:
            return None
        node = step
    return node


def device_size(path: Sequence[str] | None, tree: SizeTree = DECLARED_DEVICE) -> Range | None:
    """Size bound of what a path below ``device`` denotes (upstream's size estimator).

    Path elements are field names or ``@items``/``@values``/``@keys``.
    """
    node = _walk(path, tree)
    return None if node is None else (0, node.max_size)


def device_weight(path: Sequence[str] | None, tree: SizeTree = DECLARED_DEVICE) -> int | None:
    """Weight bound of what a path below ``device`` denotes, or None if it is not one."""
    # Upstream's size estimator knows only attribute ids; for weights any map
    # entry is bounded by the map's element type (e.g. a capacity is a quantity).
    node = _walk(path, tree, any_map_field=True)
    return None if node is None else node.weight


def _value_tree(value: Any) -> SizeTree:
    if isinstance(value, str):
        return _string(len(value))
    if isinstance(value, list):
        elements = [_value_tree(v) for v in value]
        return SizeTree(len(value), 1 + sum(e.weight for e in elements),
                        elem=_largest(elements, SizeTree(0, 1)))
    if isinstance(value, bool | int | float):
        return SizeTree(1, 1)
    return SizeTree(1, MESSAGE_WEIGHT)


def _largest(nodes: Sequence[SizeTree], empty: SizeTree) -> SizeTree:
    """One node at least as large and heavy as each of ``nodes`` (for "any element")."""
    if not nodes:
        return empty
    elems = [n.elem for n in nodes if n.elem is not None]
    keys = [n.key for n in nodes if n.key is not None]
    return SizeTree(max(n.max_size for n in nodes), max(n.weight for n in nodes),
                    key=_largest(keys, SizeTree(0, 1)) if keys else None,
                    elem=_largest(elems, SizeTree(0, 1)) if elems else None,
                    open=any(n.open for n in nodes))


def _domains(grouped: Mapping[str, Mapping[str, Any]], open_: bool) -> SizeTree:
    domain_maps = []
    by_id: dict[str, list[SizeTree]] = {}
    for entries in grouped.values():
        values = [_value_tree(v) for v in entries.values()]
        for ident, value in zip(entries, values, strict=True):
            by_id.setdefault(ident, []).append(value)
        ids = [_string(len(k)) for k in entries]
        domain_maps.append(SizeTree(
            len(entries), 1 + sum(i.weight + v.weight for i, v in zip(ids, values, strict=True)),
            key=_largest(ids, _string(0)), elem=_largest(values, SizeTree(0, 1)), open=open_))
    keys = [_string(len(k)) for k in grouped]
    # "Any domain's map": an attribute selected by name is bounded by that name's values.
    any_domain = _largest(domain_maps, SizeTree(0, 1, open=open_))
    if open_:
        fields = tuple((ident, _largest(trees, SizeTree(0, 1)))
                       for ident, trees in sorted(by_id.items()))
        any_domain = replace(any_domain, fields=fields)
    return SizeTree(len(grouped),
                    1 + sum(k.weight + m.weight for k, m in zip(keys, domain_maps, strict=True)),
                    key=_largest(keys, _string(0)), elem=any_domain)


def _list_fits(values: list[Any]) -> bool:
    return len(values) <= _MAX_ATTRIBUTE and all(
        len(v) <= _MAX_ATTRIBUTE for v in values if v.__class__ is str)


def _domains_fit(grouped: Mapping[str, Mapping[str, Any]], check_values: bool) -> bool:
    # One plain loop with exact class checks: this runs for every device built.
    if len(grouped) > _MAX_ENTRIES:
        return False
    for domain, entries in grouped.items():
        if len(domain) > _MAX_DOMAIN or len(entries) > _MAX_ENTRIES:
            return False
        for ident, value in entries.items():
            if len(ident) > _MAX_ID:
                return False
            if check_values:
                cls = value.__class__
                if cls is str:
                    if len(value) > _MAX_ATTRIBUTE:
                        return False
                elif cls is list and not _list_fits(value):
                    return False
    return True


def within_declared(driver: str, attributes: Mapping[str, Mapping[str, Any]],
                    capacity: Mapping[str, Mapping[str, Any]]) -> bool:
    """Whether a device stays within DECLARED_DEVICE (any device that passed API validation).

    Bounds computed for the declared device hold for such a device only.
    """
    return (len(driver) <= _MAX_DRIVER and _domains_fit(attributes, True)
            and _domains_fit(capacity, False))


def actual_device(driver: str, attributes: Mapping[str, Mapping[str, Any]],
                  capacity: Mapping[str, Mapping[str, Any]]) -> SizeTree:
    """The size tree of one concrete device: same shape as DECLARED_DEVICE, real numbers.

    ``attributes``/``capacity`` are grouped by domain as in the CEL input;
    values are str, bool, int, lists of those, or messages.
    """
    return _device(_string(len(driver)), _domains(attributes, open_=True),
                   _domains(capacity, open_=False))


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
class CostOperand:
    """What a call's cost rule may know about an operand."""

    expr: Any
    type: Any
    path: tuple[str, ...] | None
    size: Range | None
