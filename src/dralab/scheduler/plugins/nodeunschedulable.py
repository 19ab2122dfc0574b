"""NodeUnschedulable (Filter): cordoned nodes (spec.unschedulable) take only pods that
tolerate the node.kubernetes.io/unschedulable:NoSchedule taint."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from dralab.api.core import Taint
from dralab.cluster import NodeInfo, PodInfo

from ..framework import CycleState, Handle, Status
from ..hints import EventHint
from .eventhints import NODE_HINTS
from .helpers import Mask, NodeMasks, tolerates

NAME = "NodeUnschedulable"
ERR_REASON = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")


class NodeUnschedulable:
    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        self._cordoned: tuple[int, bool] = (-1, False)
        self._masks = NodeMasks(1)

    @classmethod
    def create(cls, args: Mapping[str, Any], handle: Handle) -> NodeUnschedulable:
        return cls(handle)

    def filter_relevant(self, pod: PodInfo) -> bool:
        """Only clusters with a cordoned node can reject anything."""
        cluster = self._handle.cluster
        version, any_cordoned = self._cordoned
        if version != cluster.node_version:
            any_cordoned = any(n.node.spec.unschedulable for n in cluster.nodes.values())
            self._cordoned = (cluster.node_version, any_cordoned)
        return any_cordoned

    @property
    def name(self) -> str:
        return NAME

    def events_to_register(self) -> Sequence[EventHint]:
        return NODE_HINTS

    def filter_mask(self, state: CycleState, pod: PodInfo) -> Mask | None:
        """Every node for a pod that tolerates the taint, else the uncordoned ones."""
        cluster = self._handle.cluster
        if any(tolerates(t, UNSCHEDULABLE_TAINT) for t in pod.pod.spec.tolerations):
            return np.ones(len(cluster.node_infos()), np.bool_)
        return self._masks.get(cluster, None, _schedulable, eager=True)

    def dry_run_key(self, state: CycleState, pod: PodInfo) -> Hashable | None:
        """Filter reads the pod's tolerations and the Node object only."""
        return NAME

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        if not node.node.spec.unschedulable:
            return Status.success()
        if any(tolerates(t, UNSCHEDULABLE_TAINT) for t in pod.pod.spec.tolerations):
            return Status.success()
        return Status.unresolvable(NAME, ERR_REASON)


def _schedulable(node: NodeInfo) -> bool:
    return not node.node.spec.unschedulable
