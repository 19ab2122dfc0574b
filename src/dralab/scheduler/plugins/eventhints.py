"""The queueing hints of the in-tree plugins (kube-scheduler's EventsToRegister).

Each rejecting plugin names the cluster events after which a pod it rejected is
worth another try, following upstream's registrations: a node added or changed
for the node plugins, an assigned pod deleted for NodeResourcesFit, a claim
deallocated or one of the pod's own claims changed, new slices, classes or
taint rules for DynamicResources, the pod's gates removed for SchedulingGates.
"""

from __future__ import annotations

from dralab.api.keys import object_key
from dralab.cluster import ClusterState, PodInfo
from dralab.cluster.events import (
    ClaimChanged,
    ClassChanged,
    ClusterEvent,
    NodeAdded,
    NodeUpdated,
    PodForgotten,
    PodRemoved,
    PodUpdated,
    SlicesChanged,
    TaintRulesChanged,
    TemplateChanged,
)

from ..hints import QUEUE, SKIP, EventHint, HintResult

__all__ = ["DRA_HINTS", "FIT_HINTS", "NODE_HINTS", "NODE_NAME_HINTS", "SCHEDULING_GATES_HINTS"]


def _assigned_pod_gone(event: ClusterEvent, cluster: ClusterState) -> HintResult:
    """A pod that held room on a node is gone (deleted, or its assumption undone)."""
    assert isinstance(event, PodRemoved | PodForgotten)
    return QUEUE if event.node is not None else SKIP


def _node_named(event: ClusterEvent, cluster: ClusterState) -> HintResult:
    assert isinstance(event, NodeAdded | NodeUpdated)
    name = event.name
    return lambda pod: pod.pod.spec.node_name == name


def _claim_changed(event: ClusterEvent, cluster: ClusterState) -> HintResult:
    """Deleted or deallocated: its devices are free for anyone. Otherwise only the
    pods that use the claim care (it was created, allocated or reserved)."""
    assert isinstance(event, ClaimChanged)
    claim = cluster.claims.get(event.key)
    if event.deleted or claim is None or claim.status.allocation is None:
        return QUEUE
    namespace = claim.metadata.namespace
    owners = frozenset(object_key(namespace, ref.name) for ref in claim.metadata.owner_references
                       if ref.kind == "Pod")
    if owners:
        return owners
    name = claim.metadata.name

    def uses(pod: PodInfo) -> bool:
        return any(c.resource_claim_name == name for c in pod.pod.spec.resource_claims)
    return uses


def _gates_removed(event: ClusterEvent, cluster: ClusterState) -> HintResult:
    assert isinstance(event, PodUpdated)
    info = cluster.pods.get(event.key)
    if info is None or info.pod.spec.scheduling_gates:
        return SKIP
    return frozenset({event.key})


NODE_HINTS = (EventHint((NodeAdded, NodeUpdated)),)
NODE_NAME_HINTS = (EventHint((NodeAdded, NodeUpdated), _node_named),)
FIT_HINTS = (EventHint((NodeAdded, NodeUpdated)),
             EventHint((PodRemoved, PodForgotten), _assigned_pod_gone))
DRA_HINTS = (EventHint((NodeAdded, NodeUpdated, SlicesChanged, ClassChanged, TaintRulesChanged,
                        TemplateChanged)),
             EventHint((ClaimChanged,), _claim_changed))
SCHEDULING_GATES_HINTS = (EventHint((PodUpdated,), _gates_removed),)
