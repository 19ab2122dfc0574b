"""The cluster store: the state a scheduling run (or a what-if) works on.

``ClusterState`` keeps nodes, pods, claims, classes, templates, slices, taint
rules and priority classes behind one method per mutation, each emitting a typed
event (``events``), with read-only listers for plugins and ``fork`` /
``revert`` / ``commit`` for what-ifs that cost what they change. ``NodeInfo``
and ``PodInfo`` are its per-node and per-pod records; ``NodeTable`` its
per-node numbers as arrays for vectorised Filter and Score.

Layer: above the allocator (it keeps the ``AllocatedState``), below the scheduler.
"""

from __future__ import annotations

from .apitime import RunClock, api_time, snapshot_moment
from .events import (
    ClaimChanged,
    ClassChanged,
    ClusterEvent,
    NodeAdded,
    NodeRemoved,
    NodeUpdated,
    PodAdded,
    PodAssumed,
    PodBound,
    PodForgotten,
    PodRemoved,
    PodUpdated,
    PriorityClassChanged,
    SliceOwner,
    SlicesChanged,
    TaintRulesChanged,
    TemplateChanged,
)
from .listers import DRALister, NodeLister, PodLister, SharedLister
from .nodetable import NodeTable, pick
from .podstatus import (
    delete_gracefully,
    observed_generation,
    prepare_for_create,
    qos_class,
    update_condition,
)
from .records import (
    CPU,
    DEFAULT_MEMORY_MILLI,
    DEFAULT_MILLI_CPU,
    MEMORY,
    PODS,
    PREEMPT_LOWER_PRIORITY,
    PREEMPT_NEVER,
    NodeInfo,
    PodInfo,
    pod_non_zero_requests,
    pod_requests,
    set_pod_condition,
)
from .store import ClusterState, slice_owner

__all__ = [
    "CPU",
    "DEFAULT_MEMORY_MILLI",
    "DEFAULT_MILLI_CPU",
    "MEMORY",
    "PODS",
    "PREEMPT_LOWER_PRIORITY",
    "PREEMPT_NEVER",
    "ClaimChanged",
    "ClassChanged",
    "ClusterEvent",
    "ClusterState",
    "DRALister",
    "NodeAdded",
    "NodeInfo",
    "NodeLister",
    "NodeRemoved",
    "NodeTable",
    "NodeUpdated",
    "PodAdded",
    "PodAssumed",
    "PodBound",
    "PodForgotten",
    "PodInfo",
    "PodLister",
    "PodRemoved",
    "PodUpdated",
    "PriorityClassChanged",
    "RunClock",
    "SharedLister",
    "SliceOwner",
    "SlicesChanged",
    "TaintRulesChanged",
    "TemplateChanged",
    "api_time",
    "delete_gracefully",
    "observed_generation",
    "pick",
    "pod_non_zero_requests",
    "pod_requests",
    "prepare_for_create",
    "qos_class",
    "set_pod_condition",
    "slice_owner",
    "snapshot_moment",
    "update_condition",
]
