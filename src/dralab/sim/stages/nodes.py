"""Node lifecycle: the scenario's node events, applied to the cluster and the observer.

* ``remove``: the node's pods are evicted (re-created by their Job controller, not
  counted as preemptions); the node and its ResourceSlices leave the cluster, and
  its GPUs the observed capacity.
* ``add`` of a removed node: it comes back untainted, with its slices.
* ``add`` from a pool: the node the scenario built for this event when it loaded
  (``growth``) joins, with its slices, labels and the pool's taints.
* ``taint`` / ``untaint``: a taint with the key is set / removed.

An event for an unknown node does nothing (a removed node cannot be tainted, a
node present cannot be added again).
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from dralab.api.core import Node, Taint
from dralab.api.resource import ResourceSlice
from dralab.cluster import ClusterState

from ..engine import Environment, Stage
from ..model import NodeChange
from ..observe import Observer
from .jobs import JobController
from .scheduling import SchedulingStage

__all__ = ["NodeLifecycle"]


class NodeLifecycle(Stage):
    name = "node-lifecycle"
    order = 0

    def __init__(self, env: Environment, cluster: ClusterState, jobs: JobController,
                 observer: Observer, scheduling: SchedulingStage,
                 pool_nodes: Mapping[str, tuple[Node, tuple[ResourceSlice, ...]]]) -> None:
        super().__init__(env)
        self.cluster = cluster
        self.jobs = jobs
        self.observer = observer
        self.scheduling = scheduling
        self.pool_nodes = pool_nodes
        self.removed_nodes: dict[str, Node] = {}
        self.removed_slices: dict[str, tuple[ResourceSlice, ...]] = {}

    def apply(self, change: NodeChange) -> None:
        cluster = self.cluster
        name = change.node
        if change.action == "remove":
            info = cluster.nodes.get(name)
            if info is None:
                return
            for pod in list(info.pods):
                self.jobs.evict(pod.key, counted=False)
            # The node's slices go with it; they come back when it is re-added.
            self.removed_slices[name] = cluster.slices_of(name)
            cluster.remove_node(name)
            self.removed_nodes[name] = info.node
            self.observer.node_left(name)
        elif change.action == "add":
            if name in cluster.nodes:
                return
            if change.pool is not None:
                node, slices = self.pool_nodes[name]
            else:
                removed = self.removed_nodes.pop(name, None)
                if removed is None:
                    return
                node = _with_taints(removed, [])
                slices = self.removed_slices.pop(name, ())
            self.join(node, slices, round_=False)
        else:
            current = cluster.nodes.get(name)
            if current is None:
                return
            taints = [t for t in current.node.spec.taints
                      if not (change.taint_key is not None and t.key == change.taint_key)]
            if change.taint is not None:
                taints.append(change.taint)
            cluster.add_node(_with_taints(current.node, taints))
        self.scheduling.request_round()

    def join(self, node: Node, slices: tuple[ResourceSlice, ...], round_: bool = True) -> None:
        """A new node (e.g. an autoscaler's) joins with its slices; the observer follows
        it and, unless the caller does, a scheduling round is requested."""
        self.cluster.add_node(node, slices)
        self.observer.node_joined(node, slices)
        if round_:
            self.scheduling.request_round()


def _with_taints(node: Node, taints: list[Taint]) -> Node:
    return msgspec.structs.replace(node, spec=msgspec.structs.replace(node.spec, taints=taints))
