"""Preemption's dry runs, remembered where they cannot have changed.

DefaultPreemption asks, for every node where the preemptor was rejected, whether
evicting every lower-priority pod there would let it fit. A pod waiting for
capacity (a node being provisioned, say) asks again after every event that may
help it, and almost every node answers as it did the time before: only the
nodes something happened on can answer differently.

``DryRuns`` keeps, per preemptor, the nodes where that dry run failed with the
status it gave, and forgets a node as soon as anything its answer reads may have
changed:

* the preemptor: its spec (by value: the replicas of one Deployment share their
  dry runs), priority and preemption policy, and what PreFilter found for it
  (``Framework.dry_run_key``: every Filter plugin of the cycle must give a key, or
  nothing is remembered for the cycle);
* the node: any store event about it (its Node object, its slices, a pod added,
  assumed, bound, updated, forgotten or removed there), checked against the
  store's event feed; the NodeInfo object itself (a node removed and added again);
* the pods nominated to the node (compared when the answer is read);
* state outside the node's pods that a plugin reads (``DryRunInputs``: the
  devices allocated in the pools a node sees, for DynamicResources);
* anything cluster-wide (device classes, taint rules, priority classes, slices
  shared by many nodes, a feed that moved past the cursor): everything is
  forgotten.

A dry run whose answer read something of another node (a victim's claim that
another pod also holds) is not remembered. Errors are never remembered; nor are
successes (they are rare and carry victims). A remembered failure is returned
exactly as the dry run returned it, and the dry runs draw nothing from the run's
random generator when they fail, so a run gives the same results with or
without this memory.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass, field

from dralab.api.codec import fingerprint
from dralab.cluster import ClusterState, NodeInfo, PodInfo
from dralab.cluster.events import (
    ClaimChanged,
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
    SlicesChanged,
    TemplateChanged,
)

from ..framework import CycleState, PluginsRunner, Status

__all__ = ["MAX_PREEMPTORS", "DryRuns", "PreemptorRuns"]

# Preemptors whose dry runs are kept, the most recently asked (a bound on memory:
# each holds at most one entry per node).
MAX_PREEMPTORS = 64

# An event that may change every node's answer (no node has this name: node names
# are DNS subdomains).
_ALL = "*"


def _nodes_of(event: ClusterEvent, cluster: ClusterState) -> str | None:
    """The node an event may change answers on, ``_ALL``, or None (no node)."""
    if isinstance(event, (PodAssumed, PodForgotten, PodBound)):
        return event.node
    if isinstance(event, (PodAdded, PodRemoved)):
        return event.node
    if isinstance(event, PodUpdated):
        info = cluster.pods.get(event.key)
        return info.assumed_node if info is not None else None
    if isinstance(event, (NodeAdded, NodeUpdated, NodeRemoved)):
        return event.name
    if isinstance(event, SlicesChanged):
        return event.owner if isinstance(event.owner, str) else _ALL
    if isinstance(event, (ClaimChanged, TemplateChanged)):
        # Allocations reach the answers through the pools' changes (DryRunInputs), a
        # victim's shared claim is never remembered, and the preemptor's own claims
        # are part of its key.
        return None
    return _ALL  # classes, taint rules, priority classes


@dataclass(slots=True, eq=False)
class PreemptorRuns:
    """What the dry runs of one kind of preemptor found, valid at the cursors."""

    events: int
    inputs: tuple[object, ...]
    # node name -> (the NodeInfo it ran on, pods nominated there, the failure)
    failed: dict[str, tuple[NodeInfo, tuple[PodInfo, ...], Status]] = field(
        default_factory=dict)

    def known(self, node: NodeInfo, nominated: tuple[PodInfo, ...]) -> Status | None:
        """The remembered failure on ``node``, if it still holds."""
        found = self.failed.get(node.name)
        if found is None or found[0] is not node or found[1] != nominated:
            return None
        return found[2]

    def remember(self, node: NodeInfo, nominated: tuple[PodInfo, ...], status: Status) -> None:
        self.failed[node.name] = (node, nominated, status)


class DryRuns:
    """Remembered failed dry runs per preemptor, for one profile's DefaultPreemption."""

    def __init__(self) -> None:
        self._cluster: ClusterState | None = None
        self._runs: OrderedDict[Hashable, PreemptorRuns] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def runs_for(self, framework: PluginsRunner, state: CycleState, pod: PodInfo,
                 cluster: ClusterState) -> PreemptorRuns | None:
        """The preemptor's remembered dry runs, brought up to date with the cluster
        (what may have changed is forgotten); None when this cycle's dry runs cannot
        be remembered (a Filter plugin without a key)."""
        if cluster is not self._cluster:
            self._cluster = cluster
            self._runs.clear()
        plugin_keys = framework.dry_run_key(state, pod)
        if plugin_keys is None:
            return None
        # Pods alike (one Deployment's replicas) share what their dry runs found.
        key = (fingerprint(pod.pod.spec), pod.priority, pod.preemption_policy,
               plugin_keys)
        runs = self._runs.get(key)
        if runs is not None:
            self._runs.move_to_end(key)
            self._catch_up(framework, cluster, runs)
        else:
            runs = PreemptorRuns(cluster.events.end, framework.dry_run_cursors())
            self._runs[key] = runs
            if len(self._runs) > MAX_PREEMPTORS:
                self._runs.popitem(last=False)
        return runs

    def _catch_up(self, framework: PluginsRunner, cluster: ClusterState,
                  runs: PreemptorRuns) -> None:
        feed = cluster.events
        events = feed.since(runs.events)
        changed = framework.dry_run_changed(runs.inputs)
        runs.events = feed.end
        runs.inputs = framework.dry_run_cursors()
        failed = runs.failed
        if events is None or changed is None:
            failed.clear()
            return
        for name in changed:
            failed.pop(name, None)
        for event in events:
            if not failed:
                return
            node = _nodes_of(event, cluster)
            if node is _ALL:
                failed.clear()
                return
            if node is not None:
                failed.pop(node, None)
