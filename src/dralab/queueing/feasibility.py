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
so the room they take counts. A workload evicted in the run gives its room back
(its pods go, its claims' devices are freed) to the checks after it. A preemptor
is checked with its victims' pods gone, and the victims are chosen so that it
places (``kueue.preemption``, ``VictimPlacement``). A TAS pod set's placement is
also written as Kueue's ``topologyAssignment`` (``topology_assignment``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, overload

from dralab.api.base import KubeObject
from dralab.api.codec import decode
from dralab.api.core import Pod
from dralab.api.errors import InputError, ObjectError
from dralab.api.keys import object_key
from dralab.api.limits import MAX_CREATED_PODS, too_many_pods_message
from dralab.api.workloads import Job

from .configured import feasibility_on
from .model import (
    Admission,
    NodeTopology,
    QueueingState,
    TopologyAssignment,
    TopologyRequest,
    WorkloadSpec,
)
from .reader import QUEUE_NAME_LABEL, KueueSnapshot, WorkloadSource

if TYPE_CHECKING:
    from dralab.scheduler import Scheduler

    from .placement import GangFailure, GangPlacement

__all__ = ["PodSetPlacement", "PodSetPods", "PreemptorPlacement", "SnapshotPlacement",
           "check_pod_counts", "flavor_labels", "flavor_topology", "placement_check",
           "pod_count_field", "pod_set_pods", "snapshot_scheduler", "topology_assignment",
           "unplaceable"]


@dataclass(frozen=True, slots=True)
class PodSetPods:
    """One pod set as the check places it: its pods (flavor node labels added), the
    flavor's Kueue Topology and the pod set's topology request."""

    name: str
    pods: Sequence[Pod]
    topology: NodeTopology | None = None
    request: TopologyRequest | None = None


# Kueue writes only this level of a topology whose lowest level it is.
HOSTNAME_LABEL = "kubernetes.io/hostname"


class PodSetPlacement:
    """The check on one scheduler's cluster: ``check`` places (and keeps) a workload's
    pod sets, ``release`` gives an evicted workload's room back, ``for_preemptor`` lets
    the preemption search try victim sets. Subclasses say how a workload's pod sets
    are built (``pod_sets``) and which pods an admitted workload has (``pods_of``)."""

    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler
        self.placed: dict[str, list[str]] = {}   # workload -> pod keys this check placed
        # Kueue's status.admission.podSetAssignments[].topologyAssignment, per pod set
        # (None: no topology), of every workload this check placed.
        self.topology_assignments: dict[str, tuple[TopologyAssignment | None, ...]] = {}

    def pod_sets(self, key: str, workload: WorkloadSpec, admission: Admission
                 ) -> list[PodSetPods] | None:
        """The pod sets to place; None when the workload has nothing to place here."""
        raise NotImplementedError

    def pods_of(self, key: str) -> list[str]:
        """The keys of an admitted workload's pods in the cluster."""
        return self.placed.get(key, [])

    def check(self, key: str, workload: WorkloadSpec, admission: Admission) -> str | None:
        """Place every pod set and keep the room (all or nothing); None if they fit,
        else why not."""
        pod_sets = self.pod_sets(key, workload, admission)
        if pod_sets is None:
            return None
        placed = self._place_all(pod_sets)
        if isinstance(placed, str):
            return placed
        self.placed[key] = [p.pod for placement in placed for p in placement.pods]
        self.topology_assignments[key] = tuple(
            topology_assignment(self.scheduler, pod_set.topology, placement)
            if pod_set.topology is not None else None
            for pod_set, placement in zip(pod_sets, placed, strict=True))
        return None

    def release(self, key: str) -> None:
        """The workload was evicted: its pods go and their claims' devices are free
        for the checks after it."""
        pods = self.scheduler.cluster.pods
        for pod in self.pods_of(key):
            if pod in pods:
                self.scheduler.delete_pod(pod)
        self.placed.pop(key, None)
        self.topology_assignments.pop(key, None)

    def nodes_of(self, key: str) -> frozenset[str]:
        pods = self.scheduler.cluster.pods
        nodes = set()
        for pod in self.pods_of(key):
            info = pods.get(pod)
            node = info and (info.assumed_node or info.pod.spec.node_name)
            if node:
                nodes.add(node)
        return frozenset(nodes)

    def for_preemptor(self, key: str, workload: WorkloadSpec, admission: Admission
                      ) -> PreemptorPlacement | None:
        pod_sets = self.pod_sets(key, workload, admission)
        return None if pod_sets is None else PreemptorPlacement(self, pod_sets)

    def _place_all(self, pod_sets: Sequence[PodSetPods]) -> list[GangPlacement] | str:
        """Commit every pod set, or none of them (a later one failing undoes the rest)."""
        from .placement import GangFailure, commit_pod_sets

        self.scheduler.fork()
        out: list[GangPlacement] = []
        for pod_set in pod_sets:
            outcome = commit_pod_sets(self.scheduler, pod_set.pods, pod_set.topology,
                                      pod_set.request)
            if isinstance(outcome, GangFailure):
                self.scheduler.revert()
                return unplaceable(pod_set.name, outcome, len(pod_set.pods))
            out.append(outcome)
        self.scheduler.commit()
        return out


class PreemptorPlacement:
    """``VictimPlacement`` of one preemptor: what-ifs with victims' pods removed."""

    def __init__(self, check: PodSetPlacement, pod_sets: Sequence[PodSetPods]) -> None:
        self.check = check
        self.pod_sets = pod_sets
        self._nodes: dict[str, frozenset[str]] = {}

    def nodes_of(self, workload: str) -> frozenset[str]:
        nodes = self._nodes.get(workload)
        if nodes is None:
            nodes = self._nodes[workload] = self.check.nodes_of(workload)
        return nodes

    def places_without(self, victims: Sequence[str]) -> frozenset[str] | None:
        outcome = self.unplaceable_without(victims)
        return None if isinstance(outcome, str) else outcome

    def unplaceable_without(self, victims: Sequence[str]) -> frozenset[str] | str:
        """The nodes the pod sets land on once ``victims``' pods are gone, or why they
        cannot be placed. Nothing is kept."""
        scheduler = self.check.scheduler
        pods = scheduler.cluster.pods
        keys = [key for victim in victims for key in self.check.pods_of(victim)
                if key in pods]
        scheduler.fork()
        try:
            for key in keys:
                scheduler.delete_pod(key)
            placed = self.check._place_all(self.pod_sets)
            if isinstance(placed, str):
                return placed
            return frozenset(p.node for placement in placed for p in placement.pods)
        finally:
            scheduler.revert()


class SnapshotPlacement(PodSetPlacement):
    """The check against the cluster the snapshot describes (``KueuePolicy.placement``).

    The pods of every workload it may place count against ``MAX_CREATED_PODS``
    together (admitted ones keep theirs): InputError before the first is built."""

    def __init__(self, snapshot: KueueSnapshot, objects: Sequence[KubeObject]) -> None:
        check_pod_counts(source for key, source in snapshot.sources.items()
                         if key not in snapshot.inadmissible)
        super().__init__(snapshot_scheduler(objects))
        self.snapshot = snapshot
        state = snapshot.state
        for key in sorted(state.admitted, key=lambda k: (state.admitted_at.get(k, 0.0), k)):
            workload = state.workloads.get(key)
            if workload is not None:
                self.check(key, workload, state.admitted[key])

    def pod_sets(self, key: str, workload: WorkloadSpec, admission: Admission
                 ) -> list[PodSetPods] | None:
        source = self.snapshot.sources.get(key)
        if source is None:
            return None  # not a workload of this snapshot's pods: nothing to place
        state = self.snapshot.state
        out = []
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
            out.append(PodSetPods(pod_set.name, pods, topology, request))
        return out


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


def pod_count_field(source: WorkloadSource, index: int) -> tuple[str, str, str, str]:
    """Kind, namespace, name and field of the count behind pod set ``index`` of
    ``source``: a Workload's ``spec.podSets[i].count``, a Job's parallelism (or its
    completions when fewer, as Kueue takes the smaller), a carrier's replicas."""
    owner = source.owner
    if source.existing is not None or owner is None:
        return "Workload", source.namespace, source.name, f"spec.podSets[{index}].count"
    kind = owner.kind or type(owner).KIND
    field = "spec.replicas"
    if isinstance(owner, Job):
        parallelism, completions = owner.spec.parallelism, owner.spec.completions
        field = "spec.completions" if completions is not None and (
            parallelism is None or completions < parallelism) else "spec.parallelism"
    return kind, owner.namespace, owner.name, field


def check_pod_counts(sources: Iterable[WorkloadSource]) -> int:
    """The pods of ``sources``' pod sets, together; InputError naming the first count
    that takes the total past ``MAX_CREATED_PODS`` (nothing is built). Pure."""
    total = 0
    for source in sources:
        for index, pod_set in enumerate(source.pod_sets):
            count = max(pod_set.count, 0)
            total += count
            if total > MAX_CREATED_PODS:
                kind, namespace, name, field = pod_count_field(source, index)
                raise ObjectError(kind, namespace, name,
                                  f"{field}: {too_many_pods_message(count, total)}")
    return total


class _TemplatePods(Sequence[Pod]):
    """The pods of a pod set, each decoded from the template when first asked for:
    the placement stops at the first pod that does not fit, so a set that cannot be
    placed costs the pods up to that one, not its whole count. Read-only."""

    __slots__ = ("_built", "_count", "_meta", "_namespace", "_prefix", "_spec")

    def __init__(self, namespace: str, prefix: str, count: int,
                 spec: Mapping[str, object], meta: Mapping[str, object]) -> None:
        self._namespace, self._prefix, self._count, self._spec = \
            namespace, prefix, count, spec
        self._meta = meta  # the template's labels and annotations
        self._built: dict[int, Pod] = {}

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> Pod: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Pod]: ...
    def __getitem__(self, index: int | slice) -> Pod | Sequence[Pod]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(index)
        pod = self._built.get(index)
        if pod is None:
            made = decode({"apiVersion": "v1", "kind": "Pod",
                           "metadata": {**self._meta, "name": f"{self._prefix}-{index}",
                                        "namespace": self._namespace},
                           "spec": self._spec})
            assert isinstance(made, Pod)
            pod = self._built[index] = made
        return pod

    def __iter__(self) -> Iterator[Pod]:
        for i in range(self._count):
            yield self[i]


def pod_set_pods(namespace: str, prefix: str, count: int, template: dict[str, object],
                 node_labels: Mapping[str, str]) -> Sequence[Pod]:
    """``count`` pods ``prefix-0``, ``prefix-1``, ... from a pod set's template, with
    ``node_labels`` added to their node selector (a flavor's), and the template's labels
    and annotations, as the pods the job's controller creates carry them (InterPodAffinity
    and PodTopologySpread select pods by labels). Each pod is built when
    first read (the same object on every read); InputError for a ``count`` past
    ``MAX_CREATED_PODS`` (callers check first, to name the field)."""
    if count > MAX_CREATED_PODS:
        raise InputError(f"pod set {prefix}: {too_many_pods_message(count)}")
    spec = dict(template.get("spec") or {})  # type: ignore[call-overload]
    if node_labels:
        selector = dict(spec.get("nodeSelector") or {})
        selector.update(node_labels)
        spec["nodeSelector"] = selector
    raw_meta = template.get("metadata")
    meta = {key: dict(value) for key in ("labels", "annotations")
            if isinstance(raw_meta, Mapping) and isinstance(value := raw_meta.get(key), Mapping)}
    return _TemplatePods(namespace, prefix, max(count, 0), spec, meta)


def topology_assignment(scheduler: Scheduler, topology: NodeTopology,
                        placement: GangPlacement) -> TopologyAssignment | None:
    """Kueue's v1beta1 ``topologyAssignment`` of a placed pod set: pods counted per
    domain of the topology's lowest level, domains in the order of their values. As
    Kueue, when the lowest level is the hostname label only that level is written.
    None when a pod's node lacks a level's label (a preferred request spilled onto
    nodes outside the topology: no assignment Kueue could write)."""
    levels = topology.levels
    if not levels or not placement.pods:
        return None
    nodes = scheduler.cluster.nodes
    counts: dict[tuple[str, ...], int] = {}
    for pod in placement.pods:
        info = nodes.get(pod.node)
        labels = (info.node.metadata.labels or {}) if info is not None else {}
        if not all(level in labels for level in levels):
            return None
        values = tuple(labels[level] for level in levels)
        counts[values] = counts.get(values, 0) + 1
    keep = len(levels) - 1 if levels[-1] == HOSTNAME_LABEL else 0
    return TopologyAssignment(levels[keep:], tuple(
        (values[keep:], count) for values, count in sorted(counts.items())))
