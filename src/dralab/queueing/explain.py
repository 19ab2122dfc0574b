"""Why a workload is (not) admitted: ``dralab explain workload NAMESPACE/NAME``.

After admission has run on a snapshot, one workload's story: admitted (the
ClusterQueue, flavors and usage), preempted (by whom, why), inadmissible (an
unmapped device class, a missing queue), or pending with Kueue's message and the
quota it meets: for every flavor and resource the workload asks for, the
ClusterQueue's nominal quota, borrowing limit, what its admitted workloads use and
what this workload needs. With nodes in the snapshot it also says whether the
whole pod set could be placed on them now, pod by pod, with the devices its
claims ask for (what Kueue's admission does not check). Its pods count against
``MAX_CREATED_PODS``: a larger pod set is an InputError before one is built.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dralab.api.base import KubeObject
from dralab.api.core import Node
from dralab.api.keys import object_key

from .feasibility import flavor_topology
from .hierarchy import cycle_cohorts, cycle_reason
from .model import Decision, NodeTopology, QueueingState, TopologyAssignment
from .reader import KueueSnapshot, WorkloadSource
from .tas_summary import assignment_line, pinned_pods
from .writer import quantity_text

__all__ = ["WorkloadExplanation", "explain_workload", "find_workload"]


@dataclass(frozen=True, slots=True)
class WorkloadExplanation:
    key: str
    owner: str
    status: str                     # Admitted | Pending | Preempted | Inadmissible
    lines: tuple[str, ...] = ()
    placement: tuple[str, ...] = ()
    admitted: bool = False

    def render(self) -> str:
        out = [f"Workload {self.key} ({self.owner}): {self.status}", *self.lines]
        if self.placement:
            out += ["Placement on the snapshot's nodes (every pod, with its devices):",
                    *self.placement]
        return "\n".join(out) + "\n"


def find_workload(snapshot: KueueSnapshot, target: str) -> str | None:
    """The workload key for ``target``: ``namespace/name`` of the Workload or of the Job
    (or pod) it stands for; a bare name is looked up in namespace default."""
    namespace, _, name = target.rpartition("/")
    key = object_key(namespace or "default", name)
    if key in snapshot.sources:
        return key
    for wkey, source in sorted(snapshot.sources.items()):
        owner = source.owner
        if owner is not None and object_key(owner.namespace, owner.name) == key:
            return wkey
    return None


def explain_workload(snapshot: KueueSnapshot, decisions: Sequence[Decision], key: str,
                     objects: Sequence[KubeObject] = (),
                     topology: Mapping[str, Sequence[TopologyAssignment | None]] | None = None
                     ) -> WorkloadExplanation:
    """``topology``: per workload admitted in the run, its pod sets' topologyAssignments
    (``cli.admit.admit_snapshot``); an admitted TAS pod set gets a line saying where
    they put its pods."""
    source = snapshot.sources[key]
    owner = f"{(source.owner.kind if source.owner is not None else 'Workload')} " \
            f"{source.namespace}/{source.owner.name if source.owner is not None else source.name}"
    state = snapshot.state
    mine = [d for d in decisions if d.workload == key]
    placement = _placement(snapshot, source, objects, (topology or {}).get(key, ())) \
        if any(isinstance(o, Node) for o in objects) else ()
    if key in snapshot.inadmissible:
        return WorkloadExplanation(key, owner, "Inadmissible",
                                   (f"  {snapshot.inadmissible[key]}",), placement)
    admission = state.admitted.get(key)
    if admission is not None:
        lines = [f"  admitted to ClusterQueue {admission.cluster_queue}"]
        for ps in admission.pod_sets:
            flavors = ", ".join(f"{r}: {f}" for r, f in sorted(ps.flavors.items()))
            usage = ", ".join(f"{r}: {quantity_text(r, v)}" for r, v in sorted(ps.usage.items()))
            lines.append(f"  pod set {ps.name} ({ps.count} pods): flavors {flavors}; "
                         f"usage {usage}")
        lines += _assignment_lines(snapshot, source, (topology or {}).get(key, ()), objects)
        return WorkloadExplanation(key, owner, "Admitted", tuple(lines), placement, True)
    preempted = [d for d in mine if d.preempted]
    lines = []
    status = "Pending"
    if preempted:
        last = preempted[-1]
        status = "Preempted"
        lines.append(f"  preempted by {last.by} ({last.reason}); waiting again")
    pending = [d.pending for d in mine if d.pending]
    if pending:
        lines.append(f"  {pending[-1]}")
    lines += _cycle_lines(state, key)
    lines += _quota_lines(state, key)
    return WorkloadExplanation(key, owner, status, tuple(lines), placement)


def _assignment_lines(snapshot: KueueSnapshot, source: WorkloadSource,
                      assignments: Sequence[TopologyAssignment | None],
                      objects: Sequence[KubeObject]) -> list[str]:
    """Where Kueue's TAS put each pod set, per domain of its Topology's levels."""
    if not any(assignments):
        return []
    labels = {o.name: dict(o.metadata.labels or {}) for o in objects if isinstance(o, Node)}
    topology = _topology_of(snapshot, source.key)
    return [assignment_line(pod_set.name, assigned, topology, labels)
            for pod_set, assigned in zip(source.pod_sets, assignments, strict=False)
            if assigned is not None]


def _cycle_lines(state: QueueingState, key: str) -> list[str]:
    """Why the workload's ClusterQueue is inactive when its cohort has a parent cycle."""
    workload = state.workloads.get(key)
    cq = state.cluster_queues.get(workload.cluster_queue or "") if workload else None
    if cq is None or not cq.cohort or cq.cohort not in cycle_cohorts(state.cohorts):
        return []
    return [f"  {cycle_reason(state.cohorts, cq.name, cq.cohort)}"]


def _quota_lines(state: QueueingState, key: str) -> list[str]:
    workload = state.workloads.get(key)
    if workload is None or workload.cluster_queue is None:
        queue = workload.queue if workload is not None else "?"
        return [f"  LocalQueue {queue} leads to no ClusterQueue"]
    cq = state.cluster_queues.get(workload.cluster_queue)
    if cq is None:
        return [f"  ClusterQueue {workload.cluster_queue} does not exist"]
    need: dict[str, int] = {}
    for ps in workload.pod_sets:
        for resource, amount in ps.per_pod.items():
            need[resource] = need.get(resource, 0) + amount * ps.count
    used: dict[tuple[str, str], int] = {}
    for other, admission in state.admitted.items():
        spec = state.workloads.get(other)
        if spec is None or admission.cluster_queue != cq.name:
            continue
        for assigned in admission.pod_sets:
            for resource, amount in assigned.usage.items():
                name = assigned.flavors.get(resource, "")
                used[(name, resource)] = used.get((name, resource), 0) + amount
    cohort = f", cohort {cq.cohort}" if cq.cohort else ""
    lines = [f"  ClusterQueue {cq.name} ({cq.queueing_strategy}{cohort}):"]
    for group in cq.resource_groups:
        for flavor in group.flavors:
            for resource in group.covered:
                if resource not in need:
                    continue
                quota = flavor.resources.get(resource)
                nominal = quantity_text(resource, quota.nominal) if quota else "0"
                borrow = "" if quota is None or quota.borrowing_limit is None \
                    else f", borrowing limit {quantity_text(resource, quota.borrowing_limit)}"
                in_use = quantity_text(resource, used.get((flavor.flavor, resource), 0))
                lines.append(
                    f"    {flavor.flavor} {resource}: nominal {nominal}{borrow}, in use "
                    f"{in_use}, this workload needs {quantity_text(resource, need[resource])}")
    uncovered = sorted(r for r in need if not any(r in g.covered for g in cq.resource_groups))
    if uncovered:
        lines.append(f"    not covered by any resource group: {', '.join(uncovered)}")
    return lines


def _placement(snapshot: KueueSnapshot, source: WorkloadSource,
               objects: Sequence[KubeObject],
               assignments: Sequence[TopologyAssignment | None] = ()) -> tuple[str, ...]:
    """Whether every pod of the workload fits on the snapshot's nodes now (a fork of the
    cluster, reverted), within the topology domain its pod set asks for when its flavor
    has a Topology: one line per pod set. A pod set Kueue's TAS assigned to nodes is
    tried on those nodes, each pod on its own, as Kueue's TAS ungater pins them: Kueue
    counts node capacity only, so this says whether its devices are there too."""
    from .feasibility import check_pod_counts, pod_set_pods, snapshot_scheduler
    from .placement import GangFailure, place_pod_sets

    check_pod_counts([source])  # before the cluster or a pod is built
    scheduler = snapshot_scheduler(objects)
    workload = snapshot.state.workloads.get(source.key)
    topology = _topology_of(snapshot, source.key)
    lines: list[str] = []
    for index, pod_set in enumerate(source.pod_sets):
        pods = pod_set_pods(source.namespace, f"{source.name}-{pod_set.name}", pod_set.count,
                            pod_set.template, {})
        request = workload.pod_sets[index].topology \
            if workload is not None and index < len(workload.pod_sets) else None
        assigned = assignments[index] if index < len(assignments) else None
        pinned = pinned_pods(pods, assigned) if assigned is not None else None
        outcome = place_pod_sets(scheduler, pods, topology, request) if pinned is None \
            else place_pod_sets(scheduler, pinned)
        where = f"pod set {pod_set.name}"
        if pinned is not None:
            where += " (on the nodes of Kueue's topologyAssignment)"
        elif request is not None and topology is not None and request.level:
            how = "required" if request.required else "preferred"
            where += f" ({how} {request.level} of topology {topology.name})"
        if isinstance(outcome, GangFailure):
            lines.append(f"  {where} does not fit: {outcome.placed} of {len(pods)} pods "
                         f"placed; {outcome.message}")
            continue
        nodes = sorted({p.node for p in outcome.pods})
        lines.append(f"  {where}: all {len(pods)} pods fit, on {', '.join(nodes)}")
    return tuple(lines)


def _topology_of(snapshot: KueueSnapshot, key: str) -> NodeTopology | None:
    """The Topology of the flavor the workload got (admitted), else of the first flavor
    of its ClusterQueue that has one."""
    state = snapshot.state
    names: list[str] = []
    admission = state.admitted.get(key)
    if admission is not None:
        names = [f for ps in admission.pod_sets for f in ps.flavors.values()]
    else:
        workload = state.workloads.get(key)
        cq = state.cluster_queues.get(workload.cluster_queue or "") if workload else None
        if cq is not None:
            names = [f.flavor for g in cq.resource_groups for f in g.flavors]
    return flavor_topology(snapshot, names)
