"""Admission outcomes -> the Workloads and Jobs as Kueue leaves them.

Each workload is written as a ``kueue.x-k8s.io/v1beta1`` Workload: the name Kueue's
job framework gives it, an owner reference to its Job, ``spec.queueName``,
``spec.podSets`` (name, count, pod template), the priority, and the status Kueue
writes:

* admitted: ``status.admission`` (clusterQueue, podSetAssignments with flavors,
  resourceUsage, count and, for a TAS pod set placed by the placement check, the
  topologyAssignment: pods per domain of the topology's lowest level),
  ``QuotaReserved=True`` (reason QuotaReserved, "Quota reserved in ClusterQueue
  CQ") and ``Admitted=True`` (reason Admitted, "The workload is admitted"); a
  former eviction's conditions turn False, "Previously: ...";
* preempted: no admission, ``Evicted=True`` reason Preempted and ``Preempted=True``
  with the preemption reason, both with Kueue's message ("Preempted to accommodate
  a workload (UID: U, JobUID: J) due to R; preemptor path: /cohort/cq; preemptee
  path: ..."), ``QuotaReserved=False`` (reason as for pending), ``Admitted=False``
  reason NoReservation;
* pending: ``QuotaReserved=False`` with the policy's message and Kueue's reason for it
  (WaitingForQuota, ExceedsMaxQuota, NoMatchingFlavor, Misconfigured, Suspended;
  Pending when none is known);
* inadmissible (DRA charges that cannot be made): ``QuotaReserved=False`` reason
  Misconfigured with the message.

Jobs are written back with ``spec.suspend`` false when admitted (and, as Kueue
injects them, the assigned flavor's node labels and tolerations in the pod
template), true otherwise.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from dralab.api.codec import encode
from dralab.api.quantity import Quantity, QuantityFormat

from .hierarchy import ancestors
from .model import Admission, Decision, QueueingState, TopologyAssignment
from .reader import KueueSnapshot, WorkloadSource
from .topology_doc import parse_topology_assignment

__all__ = ["KUEUE_WORKLOAD_API", "SLICE_REPLACED", "admission_outcomes", "topology_assignment_doc",
           "write_jobs", "write_workloads"]

KUEUE_WORKLOAD_API = "kueue.x-k8s.io/v1beta1"
JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
_OWNER_APIS = {"Job": "batch/v1", "Pod": "v1", "StatefulSet": "apps/v1",
               "Deployment": "apps/v1", "ReplicaSet": "apps/v1"}
# Evictions that are not preemptions: the Evicted reason and Kueue's message.
_EVICTION_MESSAGES = {"ClusterQueueStopped": "The ClusterQueue is stopped"}
# The Finished reason of a workload slice replaced by a scaled-up one (kueue/policy.py).
SLICE_REPLACED = "WorkloadSliceReplaced"
# A preemptor held back by a closed preemption gate (policy.ADMISSION_GATED) also gets
# BlockedOnPreemptionGates=True, reason PreemptionGated, with the same message.
_ADMISSION_GATED = "AdmissionGated"
_PREEMPTION_REASONS = {
    "InClusterQueue": "prioritization in the ClusterQueue",
    "InCohortReclamation": "reclamation within the cohort",
    "InCohortFairSharing": "Fair Sharing within the cohort",
    "InCohortReclaimWhileBorrowing": "reclamation within the cohort while borrowing",
}


_BINARY = ("memory", "ephemeral-storage")


def quantity_text(resource: str, milli: int) -> str:
    """A resource amount as Kueue prints it in resourceUsage: canonical, in binary
    units for memory (as requests write it: ``200Mi``), decimal otherwise."""
    binary = resource in _BINARY and not milli % 1000
    return str(Quantity.from_milli(milli, QuantityFormat.BINARY_SI if binary
                                   else QuantityFormat.DECIMAL_SI))


def _admission(admission: Admission,
               topology: Sequence[TopologyAssignment | dict[str, Any] | None] = ()
               ) -> dict[str, Any]:
    assignments = []
    for index, ps in enumerate(admission.pod_sets):
        out: dict[str, Any] = {
            "name": ps.name, "flavors": dict(ps.flavors),
            "resourceUsage": {r: quantity_text(r, v) for r, v in sorted(ps.usage.items())},
            "count": ps.count}
        assigned = topology[index] if index < len(topology) else None
        if isinstance(assigned, TopologyAssignment):
            out["topologyAssignment"] = topology_assignment_doc(assigned)
        elif assigned is not None:
            # As read; a v1beta2 one (``slices``) in the v1beta1 shape this writes.
            parsed = parse_topology_assignment(assigned) if "slices" in assigned else None
            out["topologyAssignment"] = topology_assignment_doc(parsed) if parsed is not None \
                else copy.deepcopy(assigned)
        assignments.append(out)
    return {"clusterQueue": admission.cluster_queue, "podSetAssignments": assignments}


def topology_assignment_doc(assigned: TopologyAssignment) -> dict[str, Any]:
    """Kueue v1beta1 ``topologyAssignment``: ``levels`` and ``domains`` (values, count)."""
    return {"levels": list(assigned.levels),
            "domains": [{"values": list(values), "count": count}
                        for values, count in assigned.domains]}


def _input_topology(source: WorkloadSource) -> list[dict[str, Any] | None]:
    """The topologyAssignments of a Workload's admission as the input has them."""
    raw = source.existing.raw if source.existing is not None else None
    admission = ((raw or {}).get("status") or {}).get("admission") or {}
    assignments = admission.get("podSetAssignments") if isinstance(admission, dict) else None
    if not isinstance(assignments, list):
        return []
    return [a.get("topologyAssignment") if isinstance(a, dict)
            and isinstance(a.get("topologyAssignment"), dict) else None for a in assignments]


def _condition(kind: str, status: bool, reason: str, message: str, when: str
               ) -> dict[str, Any]:
    return {"type": kind, "status": "True" if status else "False", "reason": reason,
            "message": message, "lastTransitionTime": when}


def _path(state: QueueingState, cluster_queue: str | None) -> str:
    """Kueue's ``buildCQPath``: ``/root-cohort/.../cohort/cq``."""
    if not cluster_queue:
        return "UNKNOWN"
    spec = state.cluster_queues.get(cluster_queue)
    parts = [cluster_queue, *ancestors(state.cohorts, spec.cohort if spec else None)]
    return "/" + "/".join(reversed(parts))


def _uid(source: WorkloadSource | None) -> str:
    if source is None:
        return "UNKNOWN"
    if source.existing is not None and source.existing.metadata.uid:
        return source.existing.metadata.uid
    return "UNKNOWN"


def _job_uid(source: WorkloadSource | None) -> str:
    if source is None or source.owner is None or not source.owner.metadata.uid:
        return "UNKNOWN"
    return source.owner.metadata.uid


def admission_outcomes(decisions: Iterable[Decision]) -> dict[str, Decision]:
    """The last decision about each workload (later cycles overrule earlier ones)."""
    out: dict[str, Decision] = {}
    for decision in decisions:
        out[decision.workload] = decision
    return out


def _slice_replaced_message(snapshot: KueueSnapshot, by: str) -> str:
    """Kueue's Finished message of a replaced workload slice: the new slice's UID and
    job UID label, empty when it has none."""
    source = snapshot.sources.get(by)
    meta = source.existing.metadata if source is not None and source.existing else None
    uid = meta.uid or "" if meta is not None else ""
    job_uid = meta.labels.get(JOB_UID_LABEL, "") if meta is not None else ""
    return (f"Replaced to accommodate a workload (UID: {uid}, JobUID: {job_uid}) due to "
            f"workload slice aggregation")


def _preemption_message(snapshot: KueueSnapshot, decision: Decision,
                        victim_cq: str | None) -> str:
    by = snapshot.sources.get(decision.by)
    by_spec = snapshot.state.workloads.get(decision.by)
    return (f"Preempted to accommodate a workload (UID: {_uid(by)}, JobUID: {_job_uid(by)}) "
            f"due to {_PREEMPTION_REASONS.get(decision.reason, 'UNKNOWN')}; preemptor path: "
            f"{_path(snapshot.state, by_spec.cluster_queue if by_spec else None)}; "
            f"preemptee path: {_path(snapshot.state, victim_cq)}")


def _metadata(source: WorkloadSource) -> dict[str, Any]:
    meta: dict[str, Any]
    if source.existing is not None and source.existing.raw is not None:
        meta = copy.deepcopy(dict(source.existing.raw.get("metadata") or {}))
        meta.pop("managedFields", None)
        return meta
    meta = {"name": source.name, "namespace": source.namespace}
    owner = source.owner
    if owner is not None and owner.metadata.uid:
        meta["labels"] = {JOB_UID_LABEL: owner.metadata.uid}
    if owner is not None:
        kind = owner.kind or type(owner).KIND
        ref: dict[str, Any] = {"apiVersion": owner.api_version or _OWNER_APIS.get(kind, ""),
                               "kind": kind, "name": owner.name}
        if owner.metadata.uid:
            ref["uid"] = owner.metadata.uid
        ref |= {"controller": True, "blockOwnerDeletion": True}
        meta["ownerReferences"] = [ref]
    return meta


def _spec(source: WorkloadSource) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "podSets": [{"name": ps.name, "count": ps.count,
                     **({"minCount": ps.min_count} if ps.min_count is not None else {}),
                     "template": copy.deepcopy(ps.template)}
                    for ps in source.pod_sets],
        "queueName": source.queue_name,
    }
    if source.priority_class:
        spec["priorityClassName"] = source.priority_class
        spec["priorityClassSource"] = source.priority_class_source or ""
    spec["priority"] = source.priority
    if source.existing is not None and source.existing.spec.active is not None:
        spec["active"] = source.existing.spec.active
    return spec


def _previous(source: WorkloadSource) -> list[dict[str, Any]]:
    if source.existing is None or source.existing.raw is None:
        return []
    status = source.existing.raw.get("status") or {}
    return [dict(c) for c in status.get("conditions") or [] if isinstance(c, dict)]


def _previous_reclaimable(source: WorkloadSource) -> list[dict[str, Any]]:
    """``status.reclaimablePods`` as read: the job integration's, kept by admission."""
    if source.existing is None or source.existing.raw is None:
        return []
    status = source.existing.raw.get("status") or {}
    return [dict(r) for r in status.get("reclaimablePods") or [] if isinstance(r, dict)]


def _set(conditions: list[dict[str, Any]], new: dict[str, Any]) -> None:
    """``apimeta.SetStatusCondition``: replace the condition of that type, keeping its
    transition time when the status does not change."""
    for index, old in enumerate(conditions):
        if old.get("type") == new["type"]:
            if old.get("status") == new["status"] and old.get("lastTransitionTime"):
                new = new | {"lastTransitionTime": old["lastTransitionTime"]}
            conditions[index] = new
            return
    conditions.append(new)


def _reset(conditions: list[dict[str, Any]], kind: str, reason: str, when: str) -> None:
    for old in conditions:
        if old.get("type") == kind and old.get("status") == "True":
            _set(conditions, _condition(kind, False, reason,
                                        f"Previously: {old.get('message', '')}", when))
            return


def write_workloads(snapshot: KueueSnapshot, decisions: Iterable[Decision], when: str,
                    topology: Mapping[str, Sequence[TopologyAssignment | None]] | None = None
                    ) -> list[dict[str, Any]]:
    """Every workload of the snapshot as a v1beta1 Workload document, in input order.

    ``snapshot.state`` is the state after admission; ``decisions`` all decisions made
    (the last one about a workload counts); ``when``: the conditions' transition time;
    ``topology``: per workload admitted in this run, the ``topologyAssignment`` of each
    pod set (None: not a TAS pod set) from the placement check. A workload admitted
    before keeps the topologyAssignment its input has.
    """
    decisions = list(decisions)
    last = admission_outcomes(decisions)
    # The eviction that still stands for each workload: one not followed by an admission.
    evicted: dict[str, Decision] = {}
    for made in decisions:
        if made.preempted:
            evicted[made.workload] = made
        elif made.admitted is not None:
            evicted.pop(made.workload, None)
    state = snapshot.state
    out = []
    for key, source in snapshot.sources.items():
        conditions = _previous(source)
        status: dict[str, Any] = {}
        admitted = state.admitted.get(key)
        decision = last.get(key)
        if key in snapshot.inadmissible:
            _set(conditions, _condition("QuotaReserved", False, "Misconfigured",
                                        snapshot.inadmissible[key], when))
        elif admitted is not None and state.workloads[key].evicted and decision is None:
            # Still being evicted (a run of one cycle: its job has not stopped): as read.
            status["admission"] = _admission(snapshot.admissions_read.get(key, admitted),
                                             _input_topology(source))
        elif admitted is not None:
            newly = decision is not None and decision.admitted is not None
            assigned: Sequence[TopologyAssignment | dict[str, Any] | None] = \
                (topology or {}).get(key, ()) if newly else _input_topology(source)
            # An admission that stands is written as it was read (reclaimable pods make
            # it charge less, but Kueue leaves it as it is).
            status["admission"] = _admission(
                admitted if newly else snapshot.admissions_read.get(key, admitted), assigned)
            _set(conditions, _condition("QuotaReserved", True, "QuotaReserved",
                                        f"Quota reserved in ClusterQueue "
                                        f"{admitted.cluster_queue}", when))
            _reset(conditions, "Evicted", "QuotaReserved", when)
            _reset(conditions, "Preempted", "QuotaReserved", when)
            _set(conditions, _condition("Admitted", True, "Admitted",
                                        "The workload is admitted", when))
        elif key in evicted and evicted[key].reason == SLICE_REPLACED:
            # Kueue's replaceWorkloadSlice: the old slice keeps its admission and
            # conditions as read and finishes.
            raw_status = (source.existing.raw or {}).get("status") or {} \
                if source.existing is not None else {}
            if raw_status.get("admission"):
                status["admission"] = copy.deepcopy(raw_status["admission"])
            _set(conditions, _condition("Finished", True, SLICE_REPLACED,
                                        _slice_replaced_message(snapshot, evicted[key].by),
                                        when))
        elif key in evicted:
            eviction = evicted[key]
            preempted = eviction.reason not in _EVICTION_MESSAGES
            message = _preemption_message(snapshot, eviction, _victim_cq(snapshot, key)) \
                if preempted else _EVICTION_MESSAGES[eviction.reason]
            # Requeued after the eviction: QuotaReserved says why it waits now.
            waiting = decision.pending if decision is not None and decision.pending else message
            _set(conditions, _condition("QuotaReserved", False, _pending_reason(decision),
                                        waiting, when))
            _set(conditions, _condition("Admitted", False, "NoReservation",
                                        "The workload has no reservation", when))
            _set(conditions, _condition("Evicted", True, "Preempted" if preempted
                                        else eviction.reason, message, when))
            if preempted:
                _set(conditions, _condition("Preempted", True, eviction.reason or "UNKNOWN",
                                            message, when))
        else:
            message = decision.pending if decision is not None and decision.pending else \
                _unqueued_message(snapshot, key)
            _set(conditions, _condition("QuotaReserved", False, _pending_reason(decision),
                                        message, when))
            if _pending_reason(decision) == _ADMISSION_GATED:
                _set(conditions, _condition("BlockedOnPreemptionGates", True, "PreemptionGated",
                                            message, when))
            if any(c.get("type") == "Admitted" for c in conditions):
                _set(conditions, _condition("Admitted", False, "NoReservation",
                                            "The workload has no reservation", when))
        status["conditions"] = conditions
        reclaimable = _previous_reclaimable(source)
        if reclaimable:
            status["reclaimablePods"] = reclaimable
        out.append({"apiVersion": KUEUE_WORKLOAD_API, "kind": "Workload",
                    "metadata": _metadata(source), "spec": _spec(source), "status": status})
    return out


def _pending_reason(decision: Decision | None) -> str:
    """Kueue's QuotaReserved=False reason (UnadmittedWorkloadsObservability, on by
    default: WaitingForQuota, ExceedsMaxQuota, NoMatchingFlavor, ...); Pending, its
    fallback, when the decision names none."""
    return decision.pending_reason if decision is not None and decision.pending_reason \
        else "Pending"


def _victim_cq(snapshot: KueueSnapshot, key: str) -> str | None:
    """The ClusterQueue a preempted workload held quota in (where its LocalQueue points)."""
    source = snapshot.sources.get(key)
    existing = source.existing if source else None
    if existing is not None and existing.status.admission is not None:
        return existing.status.admission.cluster_queue
    spec = snapshot.state.workloads.get(key)
    return spec.cluster_queue if spec else None


def _unqueued_message(snapshot: KueueSnapshot, key: str) -> str:
    """Why a workload no decision mentions waits: Kueue's messages for a missing queue."""
    spec = snapshot.state.workloads.get(key)
    if spec is None:
        return ""
    if spec.cluster_queue is None:
        return f"LocalQueue {spec.queue.split('/', 1)[-1]} doesn't exist"
    if spec.cluster_queue not in snapshot.state.cluster_queues:
        return f"ClusterQueue {spec.cluster_queue} doesn't exist"
    return "Workload is pending"


def _inject(template: dict[str, Any], flavor_labels: Mapping[str, str],
            tolerations: Iterable[tuple[str, str, str, str]]) -> None:
    spec = template.setdefault("spec", {})
    if flavor_labels:
        selector = spec.setdefault("nodeSelector", {})
        for key, value in flavor_labels.items():
            selector.setdefault(key, value)
    extra = [{k: v for k, v in (("key", key), ("operator", op), ("value", value),
                                ("effect", effect)) if v}
             for key, op, value, effect in tolerations]
    if extra:
        present = spec.setdefault("tolerations", [])
        present.extend(t for t in extra if t not in present)


# Kueue's TopologySchedulingGate: the pods of a TAS pod set wait behind it until
# Kueue's topology ungater pins each to a node of its topologyAssignment.
TOPOLOGY_SCHEDULING_GATE = "kueue.x-k8s.io/topology"
_UNCONSTRAINED = "kueue.x-k8s.io/podset-unconstrained-topology"
_TOPOLOGY_ANNOTATIONS = ("kueue.x-k8s.io/podset-required-topology",
                         "kueue.x-k8s.io/podset-preferred-topology", _UNCONSTRAINED)


def write_jobs(snapshot: KueueSnapshot,
               topology: Mapping[str, Sequence[TopologyAssignment | None]] | None = None
               ) -> list[dict[str, Any]]:
    """The Jobs behind the workloads, ``spec.suspend`` set as Kueue sets it. A Job whose
    pod set has a topologyAssignment (``topology`` for workloads admitted in this run,
    else the Workload's input) gets Kueue's topology scheduling gate in its template,
    and the unconstrained annotation when it asked no topology (Kueue's FromAssignment
    with TopologyAwareScheduling)."""
    state = snapshot.state
    out = []
    for key, source in snapshot.sources.items():
        owner = source.owner
        if owner is None or (owner.kind or type(owner).KIND) != "Job":
            continue
        doc = copy.deepcopy(encode(owner))
        spec = doc.setdefault("spec", {})
        admitted = state.admitted.get(key)
        spec["suspend"] = admitted is None
        if admitted is not None and admitted.pod_sets:
            template = spec.setdefault("template", {})
            labels: dict[str, str] = {}
            tolerations: list[tuple[str, str, str, str]] = []
            for flavor_name in dict.fromkeys(admitted.pod_sets[0].flavors.values()):
                flavor = state.flavors.get(flavor_name)
                if flavor is not None:
                    labels.update(flavor.node_labels)
                    tolerations.extend(flavor.tolerations)
            _inject(template, labels, tolerations)
            assigned = (topology or {}).get(key) or _input_topology(source)
            if assigned and assigned[0] is not None:
                _gate(template)
        out.append(doc)
    return out


def _gate(template: dict[str, Any]) -> None:
    meta = template.setdefault("metadata", {})
    annotations = meta.get("annotations") or {}
    if not any(key in annotations for key in _TOPOLOGY_ANNOTATIONS):
        meta["annotations"] = {**annotations, _UNCONSTRAINED: "true"}
    gates = template.setdefault("spec", {}).setdefault("schedulingGates", [])
    if not any(g.get("name") == TOPOLOGY_SCHEDULING_GATE for g in gates
               if isinstance(g, dict)):
        gates.append({"name": TOPOLOGY_SCHEDULING_GATE})
