"""Admission that checks the pods can run: the whole pod set placed on the snapshot's
nodes, with the devices its claims ask for, before its quota is reserved.

Kueue admits by quota and leaves placement to kube-scheduler, so an admitted
workload may never start (Kueue #4329, #5243). Its alpha gate
``KueueDRADeviceFeasibility`` (v0.20) asks whether one pod of a pod set fits on
some node; dralab, with the same gate in the Kueue Configuration's
``featureGates``, places every pod of the set through the real scheduler on a
fork of the cluster (``placement``), with the flavor's node labels and the pod
set's topology request. A set that fits keeps its room for the workloads checked
after it; one that does not stays pending with the scheduler's reason.

Workloads admitted before (in the snapshot) are placed first, in admission order,
so the room they take counts. Evictions decided in the same run do not give room
back to the check (conservative).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from dralab.api.base import KubeObject
from dralab.api.codec import decode
from dralab.api.core import Pod
from dralab.api.keys import object_key

from .configured import feasibility_on
from .model import Admission, NodeTopology, QueueingState, WorkloadSpec
from .reader import QUEUE_NAME_LABEL, KueueSnapshot

if TYPE_CHECKING:
    from dralab.scheduler import Scheduler

    from .placement import GangFailure

__all__ = ["SnapshotPlacement", "flavor_labels", "flavor_topology",
           "placement_check", "pod_set_pods", "snapshot_scheduler", "unplaceable"]



class SnapshotPlacement:
    """The check against the cluster the snapshot describes (``KueuePolicy.placement``)."""

    def __init__(self, snapshot: KueueSnapshot, objects: Sequence[KubeObject]) -> None:
        self.snapshot = snapshot
        self.scheduler = snapshot_scheduler(objects)
        state = snapshot.state
        for key in sorted(state.admitted, key=lambda k: (state.admitted_at.get(k, 0.0), k)):
            workload = state.workloads.get(key)
            if workload is not None:
                self.check(key, workload, state.admitted[key])

    def check(self, key: str, workload: WorkloadSpec, admission: Admission) -> str | None:
        from .placement import GangFailure, commit_pod_sets

        source = self.snapshot.sources.get(key)
        if source is None:
            return None  # not a workload of this snapshot's pods: nothing to place
        state = self.snapshot.state
        for index, pod_set in enumerate(source.pod_sets):
            flavors = admission.pod_sets[index].flavors if index < len(admission.pod_sets) \
                else {}
            names = sorted(set(flavors.values()))
            labels = flavor_labels(state, names)
            # The last of the flavors with a Topology, as the loop here always took.
            topology = flavor_topology(self.snapshot, list(reversed(names)))
            pods = pod_set_pods(source.namespace, f"{source.name}-{pod_set.name}",
                                pod_set.count, pod_set.template, labels)
            request = workload.pod_sets[index].topology \
                if index < len(workload.pod_sets) else None
            outcome = commit_pod_sets(self.scheduler, pods, topology, request)
            if isinstance(outcome, GangFailure):
                return unplaceable(pod_set.name, outcome, len(pods))
        return None


def placement_check(snapshot: KueueSnapshot, objects: Sequence[KubeObject]
                    ) -> SnapshotPlacement | None:
    """The check when the Kueue Configuration turns on ``KueueDRADeviceFeasibility``."""
    if not feasibility_on(snapshot.config):
        return None
    return SnapshotPlacement(snapshot, objects)


def snapshot_scheduler(objects: Sequence[KubeObject]) -> Scheduler:
    """A scheduler over the cluster a snapshot describes: its nodes, DRA objects and
    running pods; not its queued workloads (their pods do not exist yet) nor its Kueue
    objects."""
    from dralab.scheduler import Scheduler, build_cluster

    queued = {(o.kind, object_key(o.namespace, o.name)) for o in objects
              if o.metadata.labels.get(QUEUE_NAME_LABEL)}
    cluster_objects = [o for o in objects
                       if (o.kind, object_key(o.namespace, o.name)) not in queued
                       and not type(o).__module__.startswith("dralab.queueing")]
    cluster, _ = build_cluster(cluster_objects)
    return Scheduler.build(cluster)


def flavor_labels(state: QueueingState, flavors: Sequence[str]) -> dict[str, str]:
    """The node labels of ``flavors`` (ResourceFlavor ``nodeLabels``), merged in order."""
    labels: dict[str, str] = {}
    for name in flavors:
        flavor = state.flavors.get(name)
        if flavor is not None:
            labels.update(flavor.node_labels)
    return labels


def unplaceable(pod_set: str, failure: GangFailure, pods: int) -> str:
    """The pending message of a pod set the placement check could not place."""
    return (f"pod set {pod_set} cannot be placed on the nodes now ({failure.placed} of "
            f"{pods} pods fit): {failure.message}")


def flavor_topology(snapshot: KueueSnapshot, flavors: Sequence[str]) -> NodeTopology | None:
    """The Kueue Topology of the first of ``flavors`` that names one the snapshot has."""
    for name in flavors:
        flavor = snapshot.state.flavors.get(name)
        if flavor is not None and flavor.topology in snapshot.topologies:
            return NodeTopology(flavor.topology, snapshot.topologies[flavor.topology])
    return None


def pod_set_pods(namespace: str, prefix: str, count: int, template: dict[str, object],
                 node_labels: Mapping[str, str]) -> list[Pod]:
    """``count`` pods ``prefix-0``, ``prefix-1``, ... from a pod set's template, with
    ``node_labels`` added to their node selector (a flavor's)."""
    spec = dict(template.get("spec") or {})  # type: ignore[call-overload]
    if node_labels:
        selector = dict(spec.get("nodeSelector") or {})
        selector.update(node_labels)
        spec["nodeSelector"] = selector
    out = []
    for i in range(count):
        pod = decode({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": f"{prefix}-{i}", "namespace": namespace},
                      "spec": spec})
        assert isinstance(pod, Pod)
        out.append(pod)
    return out
