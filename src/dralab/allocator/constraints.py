"""Claim constraints: matchAttribute and distinctAttribute.

Both are assumed monotonic (once a device is rejected, adding more devices
never makes it acceptable again), so the search prunes immediately. Each
``add`` that returns True is later undone by exactly one ``remove`` with the
same arguments, in reverse order.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from dralab.api.resource import DeviceAttribute
from dralab.api.semver import SemverError, parse_semver

from .index import DeviceRecord

__all__ = ["Constraint", "ConstraintError", "DistinctAttribute", "MatchAttribute", "lookup"]


class ConstraintError(Exception):
    """An attribute value the constraint cannot interpret; an allocation error."""


_SCALAR_TYPES = frozenset({"int", "bool", "string", "version"})
_LIST_TYPES = {"ints": "int", "bools": "bool", "strings": "string", "versions": "version"}


def lookup(rec: DeviceRecord, name: str) -> DeviceAttribute | None:
    """The device's attribute for a fully-qualified name (exact key, then own-domain id)."""
    attrs = rec.device.attributes
    found = attrs.get(name)
    if found is not None:
        return found
    domain, sep, ident = name.partition("/")
    if sep and domain == rec.driver:
        return attrs.get(ident)
    return None


def _values(attr: DeviceAttribute, lists: bool, name: str, rec: DeviceRecord
            ) -> tuple[str, list[Any]]:
    """(scalar type, values) of attribute ``name`` of ``rec``; scalars are one-element lists."""
    kind, value = attr.typed()
    if kind in _SCALAR_TYPES:
        return kind, [value]
    if lists and kind in _LIST_TYPES and value:
        assert isinstance(value, list)
        return _LIST_TYPES[kind], list(value)
    raise ConstraintError(f"attribute {name} of device {rec.key}: unsupported attribute value")


_UNREAD: Any = object()


class Constraint:
    """Base: which (sub)requests a constraint covers.

    A constraint lives for one search on one node, where a backtracking search
    offers the same devices again and again: each device's attribute is read
    once (``_read``)."""

    __slots__ = ("_read_values", "attribute", "lists", "names")

    def __init__(self, attribute: str, requests: Collection[str], lists: bool) -> None:
        self.attribute = attribute
        self.names = frozenset(requests)
        self.lists = lists
        self._read_values: dict[DeviceRecord, tuple[str, list[Any]] | None] = {}

    def _read(self, rec: DeviceRecord) -> tuple[str, list[Any]] | None:
        """``_values`` of the device's attribute, None when it has none; remembered
        (an attribute the constraint cannot interpret raises, every time)."""
        found = self._read_values.get(rec, _UNREAD)
        if found is _UNREAD:
            attr = lookup(rec, self.attribute)
            found = None if attr is None else _values(attr, self.lists, self.attribute, rec)
            self._read_values[rec] = found
        return found  # type: ignore[no-any-return]

    def covers(self, request: str, sub: str) -> bool:
        names = self.names
        if not names:
            return True
        return request in names or (bool(sub) and f"{request}/{sub}" in names)

    def add(self, request: str, sub: str, rec: DeviceRecord) -> bool:
        """Admit ``rec`` if the constraint allows it; raises ConstraintError."""
        if not self.covers(request, sub):
            return True
        made = self._admit(rec)
        if made is None:
            return False
        self._push(made)
        return True

    def rejects(self, request: str, sub: str, rec: DeviceRecord) -> bool | None:
        """What ``add`` would answer, without adding: True if it would return False,
        False if it would return True, None if it would raise."""
        if not self.covers(request, sub):
            return False
        try:
            return self._admit(rec) is None
        except ConstraintError:
            return None

    def _admit(self, rec: DeviceRecord) -> Any:
        """The state after adding ``rec`` (for ``_push``), or None if it is not allowed."""
        raise NotImplementedError

    def _push(self, made: Any) -> None:
        raise NotImplementedError

    def remove(self, request: str, sub: str, rec: DeviceRecord) -> None:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


class MatchAttribute(Constraint):
    """All covered devices share the attribute value (lists: a common element)."""

    __slots__ = ("_kind", "_sets")

    def __init__(self, attribute: str, requests: Collection[str], lists: bool) -> None:
        super().__init__(attribute, requests, lists)
        self._kind = ""
        # Stack of the running intersection after each added device.
        self._sets: list[frozenset[Any]] = []

    def _admit(self, rec: DeviceRecord) -> tuple[str, frozenset[Any]] | None:
        read = self._read(rec)
        if read is None:
            return None
        kind, values = read
        # Versions compare as strings: semver's minimal form makes that exact.
        sets = self._sets
        if not sets:
            return kind, frozenset(values)
        if kind != self._kind:
            return None
        if len(values) == 1:  # a scalar (most devices): no set to build unless it matches
            return (kind, frozenset(values)) if values[0] in sets[-1] else None
        common = sets[-1].intersection(values)
        return (kind, common) if common else None

    def _push(self, made: tuple[str, frozenset[Any]]) -> None:
        self._kind, common = made
        self._sets.append(common)

    def remove(self, request: str, sub: str, rec: DeviceRecord) -> None:
        if self.covers(request, sub):
            self._sets.pop()

    def describe(self) -> str:
        return f"matchAttribute {self.attribute}"


def _version_key(value: Any) -> Any:
    try:
        v = parse_semver(value)
    except SemverError:
        return value
    return (v.major, v.minor, v.patch, v.pre)


class DistinctAttribute(Constraint):
    """Covered devices have pairwise different values (lists: pairwise disjoint).

    Compares against every previously added device (the 1.37 behaviour). As
    upstream, a value of a different type than an earlier one is accepted
    without looking further.
    """

    __slots__ = ("_seen",)

    def __init__(self, attribute: str, requests: Collection[str], lists: bool) -> None:
        super().__init__(attribute, requests, lists)
        self._seen: list[tuple[str, frozenset[Any]]] = []

    def _admit(self, rec: DeviceRecord) -> tuple[str, frozenset[Any]] | None:
        read = self._read(rec)
        if read is None:
            return None
        kind, values = read
        keys = frozenset(_version_key(v) for v in values) if kind == "version" \
            else frozenset(values)
        for seen_kind, seen in self._seen:
            if seen_kind != kind:
                break
            if seen & keys:
                return None
        return kind, keys

    def _push(self, made: tuple[str, frozenset[Any]]) -> None:
        self._seen.append(made)

    def remove(self, request: str, sub: str, rec: DeviceRecord) -> None:
        if self.covers(request, sub):
            self._seen.pop()

    def describe(self) -> str:
        return f"distinctAttribute {self.attribute}"
