"""A NodePool's ``spec.limits`` while one provisioning loop launches nodes.

As Karpenter's scheduler (pkg/controllers/provisioning/scheduling/scheduler.go):
what remains is the limits minus the capacity (not the allocatable) of the
NodePool's nodes; ``nodes`` counts nodes. A new node of an instance type is allowed
when its capacity of every limited resource is at most what remains, and, with a
``nodes`` limit, at least one node remains; each launch takes its capacity.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from dralab.api.core import Node
from dralab.api.quantity import Quantity

__all__ = ["NODES", "NodePoolLimits"]

NODES = "nodes"  # sigs.k8s.io/karpenter pkg/utils/resources.Node
_ONE_NODE = 1000  # milli-units of the "nodes" resource


def _capacity(node: Node) -> Mapping[str, Quantity]:
    return node.status.capacity or node.status.allocatable


class NodePoolLimits:
    def __init__(self, limits: Mapping[str, Quantity], nodes: Iterable[Node],
                 nodepool: str) -> None:
        self.nodepool = nodepool
        self._remaining = {name: q.milli_value() for name, q in limits.items()}
        for node in nodes:
            self.take(node)

    @property
    def limited(self) -> bool:
        return bool(self._remaining)

    def _nodes_exhausted(self) -> bool:
        left = self._remaining.get(NODES)
        return left is not None and left < _ONE_NODE

    def allows(self, node: Node) -> bool:
        """Whether one more node like ``node`` stays within the limits."""
        if not self._remaining:
            return True
        if self._nodes_exhausted():
            return False
        capacity = _capacity(node)
        for name, left in self._remaining.items():
            if name == NODES:
                continue
            have = capacity.get(name)
            if have is not None and have.milli_value() > left:
                return False
        return True

    def take(self, node: Node) -> None:
        if not self._remaining:
            return
        capacity = _capacity(node)
        for name in self._remaining:
            if name == NODES:
                self._remaining[name] -= _ONE_NODE
            elif (have := capacity.get(name)) is not None:
                self._remaining[name] -= have.milli_value()

    def reason(self) -> str:
        """Karpenter's error for a pod only instance types beyond the limits could take."""
        if self._nodes_exhausted():
            return f'node limits have been exhausted for nodepool "{self.nodepool}"'
        return f'all available instance types exceed limits for nodepool "{self.nodepool}"'
