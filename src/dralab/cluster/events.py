"""Typed cluster events: what changed in a ``ClusterState``, one value per change.

Every mutation of the store appends its event to ``ClusterState.events`` (an
append-only ``ChangeLog``); readers keep a cursor and catch up with
``events.since(cursor)``, as kube-scheduler's informers deliver add/update/delete
notifications and Cluster Autoscaler's snapshot replays its deltas. ``revert``
emits the events of the restoration too, so a reader never has to know that a
fork happened: it sees the changes and their undoing.

Events name objects by key (``namespace/name`` for pods, claims and templates,
the name for cluster-scoped objects); the objects themselves are read from the
store. ``SlicesChanged`` names the slices' owner: a node name for slices pinned
to one node (``spec.nodeName``), else the ``(driver, pool)`` of a pool shared by
node selector, ``allNodes`` or per-device node selection.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

__all__ = [
    "ClaimChanged",
    "ClassChanged",
    "ClusterEvent",
    "NodeAdded",
    "NodeRemoved",
    "NodeUpdated",
    "PodAdded",
    "PodAssumed",
    "PodBound",
    "PodForgotten",
    "PodRemoved",
    "PodUpdated",
    "PriorityClassChanged",
    "SliceOwner",
    "SlicesChanged",
    "TaintRulesChanged",
    "TemplateChanged",
]

# A node name, or the (driver, pool) of slices not pinned to one node.
SliceOwner: TypeAlias = str | tuple[str, str]


@dataclass(frozen=True, slots=True)
class NodeAdded:
    name: str


@dataclass(frozen=True, slots=True)
class NodeUpdated:
    """The Node object was replaced (labels, taints, allocatable); its pods stay."""

    name: str


@dataclass(frozen=True, slots=True)
class NodeRemoved:
    name: str


@dataclass(frozen=True, slots=True)
class SlicesChanged:
    """Slices of ``owner`` were added, replaced or deleted; ``pools`` are the
    (driver, pool) keys of the slices before and after."""

    owner: SliceOwner
    pools: frozenset[tuple[str, str]]


@dataclass(frozen=True, slots=True)
class PodAdded:
    """A pod entered the store; ``node`` is where it is placed (None: pending)."""

    key: str
    node: str | None


@dataclass(frozen=True, slots=True)
class PodUpdated:
    """The pod's API object was replaced (status, claims, a new UID)."""

    key: str


@dataclass(frozen=True, slots=True)
class PodAssumed:
    """The pod now counts on ``node`` (assumed before binding, or restored there)."""

    key: str
    node: str


@dataclass(frozen=True, slots=True)
class PodForgotten:
    """The pod no longer counts on ``node`` (an assumption was undone)."""

    key: str
    node: str


@dataclass(frozen=True, slots=True)
class PodBound:
    """The binding was written: the pod object now has spec.nodeName ``node``."""

    key: str
    node: str


@dataclass(frozen=True, slots=True)
class PodRemoved:
    """The pod left the store; ``node`` is where it counted (None: nowhere)."""

    key: str
    node: str | None


@dataclass(frozen=True, slots=True)
class ClaimChanged:
    """A ResourceClaim was added or replaced, or deleted (``deleted``)."""

    key: str
    deleted: bool = False


@dataclass(frozen=True, slots=True)
class ClassChanged:
    """A DeviceClass was added or replaced, or deleted (``deleted``)."""

    name: str
    deleted: bool = False


@dataclass(frozen=True, slots=True)
class TemplateChanged:
    """A ResourceClaimTemplate was added or replaced, or deleted (``deleted``)."""

    key: str
    deleted: bool = False


@dataclass(frozen=True, slots=True)
class PriorityClassChanged:
    name: str
    deleted: bool = False


@dataclass(frozen=True, slots=True)
class TaintRulesChanged:
    """The list of DeviceTaintRules changed."""


ClusterEvent: TypeAlias = (
    NodeAdded | NodeUpdated | NodeRemoved | SlicesChanged | PodAdded | PodUpdated
    | PodAssumed | PodForgotten | PodBound | PodRemoved | ClaimChanged | ClassChanged
    | TemplateChanged | PriorityClassChanged | TaintRulesChanged
)
