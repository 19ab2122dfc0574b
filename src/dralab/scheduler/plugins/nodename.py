"""NodeName (Filter): a pod naming a node in spec.nodeName fits only there.

Pending pods have no spec.nodeName, so in a run this only matters for pods
checked against nodes explicitly (explain, tests).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..cluster import NodeInfo, PodInfo
from ..framework import CycleState, Status
from ..registry import Handle

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"


class NodeName:
    @classmethod
    def create(cls, args: Mapping[str, Any], handle: Handle) -> NodeName:
        return cls()

    @property
    def name(self) -> str:
        return NAME

    def filter_relevant(self, pod: PodInfo) -> bool:
        """Only pods naming a node can be rejected."""
        return bool(pod.pod.spec.node_name)

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        wanted = pod.pod.spec.node_name
        if not wanted or wanted == node.name:
            return Status.success()
        return Status.unresolvable(NAME, ERR_REASON)
