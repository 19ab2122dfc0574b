"""NodeName (Filter): a pod naming a node in spec.nodeName fits only there.

Pending pods have no spec.nodeName, so in a run this only matters for pods
checked against nodes explicitly (explain, tests).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from dralab.cluster import NodeInfo, PodInfo

from ..framework import CycleState, Handle, Status
from ..hints import EventHint
from .eventhints import NODE_NAME_HINTS
from .helpers import Mask

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"


class NodeName:
    def __init__(self, handle: Handle | None = None) -> None:
        self._handle = handle

    @classmethod
    def create(cls, args: Mapping[str, Any], handle: Handle) -> NodeName:
        return cls(handle)

    @property
    def name(self) -> str:
        return NAME

    def events_to_register(self) -> Sequence[EventHint]:
        return NODE_NAME_HINTS

    def filter_relevant(self, pod: PodInfo) -> bool:
        """Only pods naming a node can be rejected."""
        return bool(pod.pod.spec.node_name)

    def filter_mask(self, state: CycleState, pod: PodInfo) -> Mask | None:
        """Only the named node (every node for a pod naming none)."""
        if self._handle is None:
            return None
        cluster = self._handle.cluster
        wanted = pod.pod.spec.node_name
        if not wanted:
            return np.ones(len(cluster.node_infos()), np.bool_)
        mask = np.zeros(len(cluster.node_infos()), np.bool_)
        position = cluster.node_index().get(wanted)
        if position is not None:
            mask[position] = True
        return mask

    def dry_run_key(self, state: CycleState, pod: PodInfo) -> Hashable | None:
        """Filter reads the pod's spec.nodeName and the node's name only."""
        return NAME

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        wanted = pod.pod.spec.node_name
        if not wanted or wanted == node.name:
            return Status.success()
        return Status.unresolvable(NAME, ERR_REASON)
