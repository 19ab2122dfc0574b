"""Pods of nodes being deleted, which Karpenter provisions for before they move.

Karpenter's provisioner schedules, beside the pending pods, the pods of the nodes its
cluster state has marked for deletion (provisioner.go, ``nodes.Deleting().
CurrentlyReschedulablePods``): a node is marked when it is being deleted
(``metadata.deletionTimestamp``) or Karpenter has tainted it for disruption
(``karpenter.sh/disrupted:NoSchedule``). Such a node keeps its pods until they move,
and is no place for them; a pod counts (pdb.Limits.IsCurrentlyReschedulable) when it
is reschedulable -- active, or a terminating StatefulSet pod (its replacement comes
only once it is gone), not a DaemonSet's or a Node's -- has no active
``karpenter.sh/do-not-disrupt``, and no fully blocking PodDisruptionBudget stops its
eviction (Karpenter does not know when such a pod will leave).
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from dralab.api.core import Node, Pod, PodStatus
from dralab.cluster import PodInfo
from dralab.scheduler import Scheduler

from .karpenter_pdb import DISRUPTED_TAINT, PdbLimit, do_not_disrupt_active, fully_blocked
from .placement import place_pod

__all__ = ["marked_for_deletion", "reschedulable_now", "take_deleting_pods"]


def marked_for_deletion(node: Node) -> bool:
    """StateNode.MarkedForDeletion, as dralab reads a node."""
    return node.metadata.deletion_timestamp is not None or any(
        t.key == DISRUPTED_TAINT and t.effect == "NoSchedule" for t in node.spec.taints)


def _owned_by(pod: Pod, kind: str) -> bool:
    return any(ref.kind == kind for ref in pod.metadata.owner_references)


def reschedulable_now(pod: Pod, pdbs: Iterable[PdbLimit], wall: float | None) -> bool:
    """pdb.Limits.IsCurrentlyReschedulable."""
    active = pod.status.phase not in ("Succeeded", "Failed") and \
        pod.metadata.deletion_timestamp is None
    terminating = pod.metadata.deletion_timestamp is not None
    reschedulable = (active or (_owned_by(pod, "StatefulSet") and terminating)) and \
        not _owned_by(pod, "DaemonSet") and not _owned_by(pod, "Node")
    disruptable = not active or not do_not_disrupt_active(pod, wall)
    return reschedulable and disruptable and not fully_blocked(pdbs, pod, wall)


def _recreated(pod: Pod) -> Pod:
    """The pod as its controller makes it again: no node, no status, not deleting."""
    meta = msgspec.structs.replace(pod.metadata, deletion_timestamp=None)
    spec = msgspec.structs.replace(pod.spec, node_name=None)
    return msgspec.structs.replace(pod, metadata=meta, spec=spec, status=PodStatus())


def take_deleting_pods(scheduler: Scheduler, pdbs: Iterable[PdbLimit],
                       wall: float | None) -> list[PodInfo]:
    """On the open fork: the pods of nodes marked for deletion that Karpenter
    provisions for, taken off them and pending again; those that fit on another node
    that stays (Karpenter's existing nodes, tried first) are placed there. Returns the
    others, for new nodes."""
    cluster = scheduler.cluster
    pdbs = tuple(pdbs)
    deleting = [n for n in cluster.node_names() if marked_for_deletion(cluster.nodes[n].node)]
    if not deleting:
        return []
    staying = [n for n in cluster.node_names() if n not in set(deleting)]
    moving = [p for n in deleting for p in cluster.nodes[n].pods
              if reschedulable_now(p.pod, pdbs, wall)]
    for info in moving:
        scheduler.delete_pod(info.key)
    left = []
    for info in moving:
        pending = cluster.add_pod(_recreated(info.pod))
        if place_pod(scheduler, pending, staying).node is None:
            left.append(pending)
    return left
