"""Matching ResourceSlice node selectors against a node.

Same semantics as the scheduler's node-affinity helper: terms are ORed, the
requirements inside a term are ANDed, a term without requirements matches
nothing, ``matchFields`` only knows ``metadata.name``. A malformed selector is
an error (upstream refuses to parse it), not a non-match.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TypeAlias

from dralab.api.core import Node, NodeSelector, NodeSelectorRequirement
from dralab.api.resource import ResourceSlice

__all__ = [
    "CompiledNodeSelector", "NodeSelectorError", "NodeView", "compile_node_selector", "named_nodes",
]

_EMPTY_LABELS: Mapping[str, str] = MappingProxyType({})


class NodeSelectorError(ValueError):
    """A node selector that the scheduler's parser would reject."""


@dataclass(frozen=True, slots=True)
class NodeView:
    """The parts of a Node that device reachability depends on: name and labels."""

    name: str
    labels: Mapping[str, str] = field(default_factory=lambda: _EMPTY_LABELS)

    @classmethod
    def of(cls, node: Node | NodeView | str) -> NodeView:
        if isinstance(node, NodeView):
            return node
        if isinstance(node, str):
            return cls(node)
        if isinstance(node, Node):
            return cls(node.name, MappingProxyType(dict(node.metadata.labels)))
        raise TypeError(f"expected Node, NodeView or node name, got {type(node).__name__}")

    def cache_key(self) -> tuple[str, tuple[tuple[str, str], ...]]:
        return (self.name, tuple(sorted(self.labels.items())))


_Check: TypeAlias = Callable[[NodeView], bool]


def _int_value(req: NodeSelectorRequirement) -> int:
    if len(req.values) != 1:
        raise NodeSelectorError(f"{req.operator} on {req.key!r} needs exactly one value")
    try:
        return int(req.values[0])
    except ValueError:
        raise NodeSelectorError(
            f"{req.operator} on {req.key!r}: {req.values[0]!r} is not an integer") from None


def _label_matcher(req: NodeSelectorRequirement) -> _Check:
    op, key, values = req.operator, req.key, frozenset(req.values)
    if op in ("In", "NotIn"):
        if not values:
            raise NodeSelectorError(f"{op} on {key!r} needs at least one value")
        if op == "In":
            return lambda view: view.labels.get(key) in values
        return lambda view: view.labels.get(key) not in values
    if op in ("Exists", "DoesNotExist"):
        if values:
            raise NodeSelectorError(f"{op} on {key!r} must not have values")
        if op == "Exists":
            return lambda view: key in view.labels
        return lambda view: key not in view.labels
    if op in ("Gt", "Lt"):
        bound = _int_value(req)
        greater = op == "Gt"

        def compare(view: NodeView) -> bool:
            raw = view.labels.get(key)
            if raw is None:
                return False
            try:
                have = int(raw)
            except ValueError:
                return False
            return have > bound if greater else have < bound

        return compare
    raise NodeSelectorError(f"{op!r} is not a valid node selector operator")


def _field_matcher(req: NodeSelectorRequirement) -> _Check:
    if req.key != "metadata.name":
        raise NodeSelectorError(f"field selector key {req.key!r} is not supported")
    if len(req.values) != 1:
        raise NodeSelectorError(
            f"unexpected number of values ({len(req.values)}) for node field selector")
    value = req.values[0]
    if req.operator == "In":
        return lambda view: view.name == value
    if req.operator == "NotIn":
        return lambda view: view.name != value
    raise NodeSelectorError(f"{req.operator!r} is not a valid field selector operator")


@dataclass(frozen=True, slots=True)
class CompiledNodeSelector:
    """A parsed node selector; ``matches`` is cheap and pure."""

    terms: tuple[tuple[_Check, ...], ...]

    def matches(self, view: NodeView) -> bool:
        return any(term and all(check(view) for check in term) for term in self.terms)


def compile_node_selector(selector: NodeSelector) -> CompiledNodeSelector:
    """Parse ``selector``; raise NodeSelectorError if the scheduler would refuse it."""
    terms: list[tuple[_Check, ...]] = []
    for term in selector.node_selector_terms:
        checks = [_label_matcher(r) for r in term.match_expressions]
        checks += [_field_matcher(r) for r in term.match_fields]
        terms.append(tuple(checks))
    return CompiledNodeSelector(tuple(terms))


def named_nodes(objects: Iterable[object]) -> frozenset[str]:
    """Node names the input spells out: Node objects and ``nodeName`` of slices and devices.

    Slices scoped by ``nodeSelector`` or ``allNodes`` name no node. Used to tell
    a mistyped ``--node`` from a node nobody describes. Pure.
    """
    names: set[str] = set()
    for obj in objects:
        if isinstance(obj, Node):
            names.add(obj.name)
        elif isinstance(obj, ResourceSlice):
            if obj.spec.node_name:
                names.add(obj.spec.node_name)
            names.update(d.node_name for d in obj.spec.devices if d.node_name)
    return frozenset(names)
