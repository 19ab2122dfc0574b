"""A snapshot of objects -> the ``QueueingState`` admission works on.

Flavors, ClusterQueues, Cohorts and LocalQueues come from Kueue's objects. Every
Job (and StatefulSet, Deployment, ReplicaSet: one pod group each) and every plain
Pod labelled ``kueue.x-k8s.io/queue-name`` becomes one Workload, named as Kueue
names it, with one pod set ``main`` (Kueue's name for a single-template job);
Workload objects already in the snapshot stand for their owner instead, and those
with ``status.admission`` hold their quota (``state.admitted``). A workload whose
DRA claims cannot be charged (an unmapped DeviceClass...) is left out of the state
and reported in ``KueueSnapshot.inadmissible`` with Kueue's message.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

import msgspec

from dralab.api.base import KubeObject
from dralab.api.core import Namespace, Pod, PodSpec, PodTemplateSpec, PriorityClass, Toleration
from dralab.api.durations import parse_go_duration
from dralab.api.podtemplate import pod_template
from dralab.api.workloads import Deployment, Job, ReplicaSet, StatefulSet

from .configured import RECLAIMABLE_PODS_GATE
from .dra import DraAccounting, Inadmissible, claim_charges
from .limitrange import adjusted, limit_range_summaries, validation_errors, validation_message
from .model import (
    Admission,
    ClusterQueueSpec,
    CohortSpec,
    FlavorFungibility,
    FlavorQuotas,
    FlavorSpec,
    PodSetAssignment,
    PodSetRequest,
    PreemptionPolicy,
    QueueingState,
    ResourceGroup,
    ResourceQuota,
    TopologyRequest,
    WorkloadSpec,
)
from .naming import workload_name
from .objects import (
    ClusterQueue,
    Cohort,
    KueueConfiguration,
    KueueFairSharing,
    KueueResourceGroup,
    KueueTopology,
    KueueWorkload,
    LabelSelector,
    LocalQueue,
    ResourceFlavor,
    WorkloadPriorityClass,
)
from .priority_boost import PRIORITY_BOOST_GATE, effective_priority
from .queue_order import (
    EVICTION_TIMESTAMP,
    PRIORITY_SORTING_GATE,
    QueueCondition,
    queue_order_timestamp,
)
from .requests import pod_requests
from .transformations import from_config, transform_pod_set

if TYPE_CHECKING:
    from .kueue.afs import AdmissionFairSharing

__all__ = [
    "DEFAULT_POD_SET",
    "PRIORITY_CLASS_LABEL",
    "QUEUE_NAME_LABEL",
    "KueueSnapshot",
    "WorkloadSource",
    "admission_fair_sharing",
    "generated_name",
    "pod_set_request",
    "read_snapshot",
]

QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name"
JOB_MIN_PARALLELISM_ANNOTATION = "kueue.x-k8s.io/job-min-parallelism"
# Kueue's workloadslicing: a scaled-up slice names the slice it replaces ("ns/name");
# honoured under the ElasticJobsViaWorkloadSlices gate (beta, on by default since 0.18).
SLICE_REPLACEMENT_ANNOTATION = "kueue.x-k8s.io/workload-slice-replacement-for"
WORKLOAD_SLICES_GATE = "ElasticJobsViaWorkloadSlices"
# ... and marks an elastic Workload (Kueue's IsElasticWorkload, under the same gate).
ELASTIC_JOB_ANNOTATION = "kueue.x-k8s.io/elastic-job"
# The gates under which a Workload's spec.preemptionGates hold back its preemptions.
PREEMPTION_GATE_FEATURES = ("ConcurrentAdmission", "MultiKueueOrchestratedPreemption")
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"
DEFAULT_POD_SET = "main"
_REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"
_POD_SET_GROUP = "kueue.x-k8s.io/podset-group-name"
_PREFERRED_TOPOLOGY = "kueue.x-k8s.io/podset-preferred-topology"
_UNCONSTRAINED_TOPOLOGY = "kueue.x-k8s.io/podset-unconstrained-topology"
# v1beta2's priorityClassRef kinds as v1beta1's priorityClassSource names them.
_REF_SOURCES = {"WorkloadPriorityClass": "kueue.x-k8s.io/workloadpriorityclass",
                "PriorityClass": "scheduling.k8s.io/priorityclass"}
# The API server's alphabet for generated names (no vowels, no look-alike digits).
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_GROUPS = {"Job": "batch", "Pod": "", "StatefulSet": "apps", "Deployment": "apps",
           "ReplicaSet": "apps"}


@dataclass(frozen=True, slots=True)
class PodSetSource:
    """A pod set as the Workload's spec writes it: name, count, the pod template."""

    name: str
    count: int
    template: dict[str, Any]
    per_pod: Mapping[str, int]
    min_count: int | None = None
    # Kueue's ValidateAdmissibility field errors of the pod set: requests above limits,
    # and outside the namespace's LimitRanges (limitrange.validation_errors)
    errors: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())


@dataclass(frozen=True, slots=True)
class WorkloadSource:
    """Where a workload came from: what the writer needs to write it as Kueue does."""

    key: str
    name: str
    namespace: str
    queue_name: str
    owner: KubeObject | None          # the Job (or other carrier, or Pod) it stands for
    existing: KueueWorkload | None     # the Workload object of the snapshot, if any
    pod_sets: tuple[PodSetSource, ...]
    priority: int
    priority_class: str | None
    priority_class_source: str | None
    created: float


@dataclass(slots=True)
class KueueSnapshot:
    state: QueueingState
    sources: dict[str, WorkloadSource] = field(default_factory=dict)
    inadmissible: dict[str, str] = field(default_factory=dict)
    config: KueueConfiguration | None = None
    topologies: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Admissions as read, of workloads whose reclaimable pods make them charge less than
    # ``state.admitted`` says: written back unchanged (Kueue does not rewrite them).
    admissions_read: dict[str, Admission] = field(default_factory=dict)
    # Kueue's Admission Fair Sharing when configured (``admission_fair_sharing``)
    afs: AdmissionFairSharing | None = None

    @property
    def fair_sharing(self) -> bool:
        return self.config is not None and self.config.fair_sharing_enabled


# --- queues and flavors ------------------------------------------------------------

def _optional_milli(q: Any) -> int | None:
    return None if q is None else int(q.milli_value())


def _groups(groups: Sequence[KueueResourceGroup]) -> tuple[ResourceGroup, ...]:
    out = []
    for group in groups:
        flavors = tuple(
            FlavorQuotas(flavor.name, {
                r.name: ResourceQuota(_optional_milli(r.nominal_quota) or 0,
                                      _optional_milli(r.borrowing_limit),
                                      _optional_milli(r.lending_limit))
                for r in flavor.resources})
            for flavor in group.flavors)
        out.append(ResourceGroup(tuple(group.covered_resources), flavors))
    return tuple(out)


def _weight(fair: KueueFairSharing | None) -> float:
    if fair is None or fair.weight is None:
        return 1.0
    return fair.weight.as_approximate_float()


def _fungibility(value: str | None, default: str) -> Any:
    # v1beta1 spelled "may stop here" Borrow and Preempt; v1beta2 MayStopSearch.
    if value in ("Borrow", "Preempt", "MayStopSearch"):
        return "MayStopSearch"
    return "TryNextFlavor" if value == "TryNextFlavor" else default


def _required_node_affinity(spec: PodSpec
                            ) -> tuple[tuple[tuple[str, str, tuple[str, ...]], ...], ...]:
    """The pod template's required node affinity terms (matchExpressions only: Kueue
    matches flavors on node labels, matchFields name no label)."""
    affinity = spec.affinity
    node_affinity = affinity.node_affinity if affinity is not None else None
    required = node_affinity.required_during_scheduling_ignored_during_execution \
        if node_affinity is not None else None
    if required is None:
        return ()
    return tuple(tuple((e.key, e.operator, tuple(e.values)) for e in term.match_expressions)
                 for term in required.node_selector_terms)


def _group_name(annotations: Mapping[str, Any]) -> str | None:
    value = annotations.get(_POD_SET_GROUP)
    return str(value) if value else None


def _preference(value: str | None) -> Any:
    return value if value in ("BorrowingOverPreemption", "PreemptionOverBorrowing") else None


def _tolerations(items: Sequence[Toleration]) -> tuple[tuple[str, str, str, str], ...]:
    return tuple((t.key or "", t.operator or "Equal", t.value or "", t.effect or "")
                 for t in items)


def _flavor(obj: ResourceFlavor) -> FlavorSpec:
    return FlavorSpec(
        name=obj.name,
        node_labels=dict(obj.spec.node_labels),
        node_taints=tuple((t.key, t.value or "", t.effect) for t in obj.spec.node_taints),
        tolerations=_tolerations(obj.spec.tolerations),
        topology=obj.spec.topology_name)


def _selector_matches(selector: LabelSelector, labels: Mapping[str, str]) -> bool:
    if any(labels.get(k) != v for k, v in selector.match_labels.items()):
        return False
    for req in selector.match_expressions:
        present = req.key in labels
        if req.operator == "In" and not (present and labels[req.key] in req.values):
            return False
        if req.operator == "NotIn" and present and labels[req.key] in req.values:
            return False
        if req.operator == "Exists" and not present:
            return False
        if req.operator == "DoesNotExist" and present:
            return False
    return True


def _namespaces(selector: LabelSelector | None,
                labels: Mapping[str, Mapping[str, str]]) -> frozenset[str] | None:
    """Kueue: no selector admits no namespace; ``{}`` admits all (None here)."""
    if selector is None:
        return frozenset()
    if not selector.match_labels and not selector.match_expressions:
        return None
    return frozenset(ns for ns, own in labels.items() if _selector_matches(selector, own))


def _cluster_queue(obj: ClusterQueue, labels: Mapping[str, Mapping[str, str]]
                   ) -> ClusterQueueSpec:
    spec = obj.spec
    pre = spec.preemption
    borrow = pre.borrow_within_cohort if pre else None
    preemption = PreemptionPolicy(
        within_cluster_queue=(pre.within_cluster_queue if pre and pre.within_cluster_queue
                              else "Never"),  # type: ignore[arg-type]
        reclaim_within_cohort=(pre.reclaim_within_cohort if pre and pre.reclaim_within_cohort
                               else "Never"),  # type: ignore[arg-type]
        borrow_within_cohort=(borrow.policy if borrow and borrow.policy
                              else "Never"),  # type: ignore[arg-type]
        max_priority_threshold=borrow.max_priority_threshold if borrow else None)
    fungible = spec.flavor_fungibility
    return ClusterQueueSpec(
        name=obj.name,
        resource_groups=_groups(spec.resource_groups),
        cohort=obj.cohort_ref,
        queueing_strategy=(spec.queueing_strategy or "BestEffortFIFO"),  # type: ignore[arg-type]
        namespaces=_namespaces(spec.namespace_selector, labels),
        preemption=preemption,
        fair_weight=_weight(spec.fair_sharing),
        flavor_fungibility=FlavorFungibility(
            _fungibility(fungible.when_can_borrow if fungible else None, "MayStopSearch"),
            _fungibility(fungible.when_can_preempt if fungible else None, "TryNextFlavor"),
            _preference(fungible.preference if fungible else None)),
        stop_policy=(spec.stop_policy or "None"))  # type: ignore[arg-type]


# --- workloads ---------------------------------------------------------------------

def _timestamp(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _topology(annotations: Mapping[str, Any]) -> TopologyRequest | None:
    required = annotations.get(_REQUIRED_TOPOLOGY)
    preferred = annotations.get(_PREFERRED_TOPOLOGY)
    unconstrained = str(annotations.get(_UNCONSTRAINED_TOPOLOGY, "")).lower() == "true"
    if required:
        return TopologyRequest(level=str(required), required=True)
    if preferred:
        return TopologyRequest(level=str(preferred))
    return TopologyRequest(unconstrained=True) if unconstrained else None


def _job_count(job: Job) -> int:
    # Kueue: parallelism (defaulted to 1), never more than completions.
    count = 1 if job.spec.parallelism is None else job.spec.parallelism
    if job.spec.completions is not None and job.spec.completions < count:
        count = job.spec.completions
    return count


def _count(owner: KubeObject) -> int:
    if isinstance(owner, Job):
        return _job_count(owner)
    if isinstance(owner, Deployment | ReplicaSet | StatefulSet):
        return 1 if owner.spec.replicas is None else owner.spec.replicas
    return 1


def _min_count(owner: KubeObject) -> int | None:
    """Kueue's batch/Job integration: the ``kueue.x-k8s.io/job-min-parallelism``
    annotation is the pod set's minCount (ignored unless an integer, as Kueue)."""
    if not isinstance(owner, Job):
        return None
    value = owner.metadata.annotations.get(JOB_MIN_PARALLELISM_ANNOTATION)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _raw_template(owner: KubeObject) -> dict[str, Any]:
    raw = owner.raw or {}
    if isinstance(owner, Pod):
        meta = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
        assert isinstance(meta, dict)
        kept = {k: meta[k] for k in ("labels", "annotations") if k in meta}
        return {"metadata": kept, "spec": raw.get("spec") or {}}
    spec = raw.get("spec") if isinstance(raw.get("spec"), dict) else {}
    assert isinstance(spec, dict)
    template = spec.get("template")
    return dict(template) if isinstance(template, dict) else {}


class _Reader:
    def __init__(self, objects: Sequence[KubeObject]) -> None:
        self.objects = objects
        self.config = next((o for o in objects if isinstance(o, KueueConfiguration)), None)
        self.dra = DraAccounting.of(self.config, objects)
        self.wpc = {o.name: o.value for o in objects if isinstance(o, WorkloadPriorityClass)}
        self.pc = {o.name: o.value for o in objects if isinstance(o, PriorityClass)}
        self.default_pc = next((o.value for o in objects
                                if isinstance(o, PriorityClass) and o.global_default), 0)
        self.local_queues = {o.ref: o.spec.cluster_queue for o in objects
                             if isinstance(o, LocalQueue)}
        self.limit_ranges = limit_range_summaries(objects)

    def priority(self, labels: Mapping[str, str], template: PodTemplateSpec
                 ) -> tuple[int, str | None, str | None]:
        wpc = labels.get(PRIORITY_CLASS_LABEL)
        if wpc and wpc in self.wpc:
            return self.wpc[wpc], wpc, "kueue.x-k8s.io/workloadpriorityclass"
        name = template.spec.priority_class_name
        if name and name in self.pc:
            return self.pc[name], name, "scheduling.k8s.io/priorityclass"
        if template.spec.priority is not None:
            return template.spec.priority, None, None
        return self.default_pc, None, None

    def pod_set(self, name: str, index: int, count: int, template: PodTemplateSpec,
                raw_template: dict[str, Any], namespace: str,
                group: str | None = None, min_count: int | None = None,
                reclaimable: int = 0) -> tuple[PodSetSource, PodSetRequest]:
        """The pod set as the writer keeps it and as admission charges it: ``count`` less
        its ``reclaimable`` pods (Workload status.reclaimablePods, Kueue's ReclaimablePods
        gate, on by default), never below 0."""
        raw_spec = raw_template.get("spec") if isinstance(raw_template.get("spec"), dict) \
            else None
        # Kueue reads the pod set through AdjustResources: LimitRange defaults first
        limit_range = self.limit_ranges.get(namespace)
        spec = adjusted(template.spec, limit_range)
        per_pod = pod_requests(spec, raw_spec)
        resource_errors, range_errors = validation_errors(spec, index, limit_range, raw_spec)
        # Kueue's TAS places by the template's own requests (NewRequestsFromPodSpec):
        # neither the deviceClassMappings' DRA charges nor their renames count there.
        template_requests = dict(per_pod)
        per_pod = {self.dra.extended_resource_key(k): v for k, v in per_pod.items()}
        for resource, amount in claim_charges(template.spec, namespace, name, index,
                                              self.dra).items():
            per_pod[resource] = per_pod.get(resource, 0) + amount
        annotations = template.metadata.get("annotations")
        reclaimed = min(max(reclaimable, 0), count) if self.config is None or \
            self.config.feature_gates.get(RECLAIMABLE_PODS_GATE, True) else 0
        request = PodSetRequest(
            name=name, count=count - reclaimed, per_pod=per_pod, min_count=min_count,
            reclaimed=reclaimed,
            spec_requests=template_requests if template_requests != per_pod else None,
            node_selector=dict(template.spec.node_selector),
            tolerations=_tolerations(template.spec.tolerations),
            topology=_topology(annotations if isinstance(annotations, dict) else {}),
            node_affinity=_required_node_affinity(template.spec),
            group=group or _group_name(annotations if isinstance(annotations, dict) else {}))
        return PodSetSource(name, count, raw_template, per_pod, min_count,
                            (tuple(resource_errors), tuple(range_errors))), request


def pod_set_request(objects: Sequence[KubeObject], pod: Pod, count: int,
                    name: str = DEFAULT_POD_SET) -> PodSetRequest:
    """What Kueue charges for ``count`` pods like ``pod`` (a pod set), given the snapshot's
    ``objects`` (the Configuration's deviceClassMappings, DeviceClasses, claim templates,
    slices). Inadmissible (with Kueue's message) for an unmapped device class."""
    template = pod_template(pod)
    assert template is not None
    reader = _Reader(objects)
    request = reader.pod_set(name, 0, count, template, _raw_template(pod), pod.namespace)[1]
    return transform_pod_set(request, from_config(reader.config))


def read_snapshot(objects: Sequence[KubeObject]) -> KueueSnapshot:
    """The queueing state of a snapshot, and where each workload came from."""
    reader = _Reader(objects)
    ns_labels: dict[str, dict[str, str]] = {}
    for obj in objects:
        if obj.namespace:
            ns_labels.setdefault(obj.namespace, {"kubernetes.io/metadata.name": obj.namespace})
    for obj in objects:
        if isinstance(obj, Namespace):
            ns_labels[obj.name] = {"kubernetes.io/metadata.name": obj.name} | obj.labels
    state = QueueingState()
    snapshot = KueueSnapshot(state=state, config=reader.config,
                             afs=admission_fair_sharing(objects))
    for obj in objects:
        if isinstance(obj, ResourceFlavor):
            state.flavors[obj.name] = _flavor(obj)
        elif isinstance(obj, ClusterQueue):
            state.cluster_queues[obj.name] = _cluster_queue(obj, ns_labels)
        elif isinstance(obj, Cohort):
            state.cohorts[obj.name] = CohortSpec(
                obj.name, obj.spec.parent_name or None, _groups(obj.spec.resource_groups),
                _weight(obj.spec.fair_sharing))
        elif isinstance(obj, LocalQueue):
            state.local_queues[obj.ref] = obj.spec.cluster_queue
        elif isinstance(obj, KueueTopology):
            snapshot.topologies[obj.name] = tuple(level.node_label for level in obj.spec.levels)
    # Cohorts a ClusterQueue names without a Cohort object exist implicitly, without quota.
    for cq in list(state.cluster_queues.values()):
        if cq.cohort and cq.cohort not in state.cohorts:
            state.cohorts[cq.cohort] = CohortSpec(cq.cohort)
    owned = _owned_by_workloads(objects)
    for order, obj in enumerate(objects):
        if isinstance(obj, KueueWorkload):
            _add_existing(reader, snapshot, obj, float(order))
        elif _is_queued(obj) and _uid_or_ref(obj) not in owned:
            _add_derived(reader, snapshot, obj, float(order))
    # Kueue asks quota what resources.transformations make of the pods' requests
    transformations = from_config(reader.config)
    for key, spec in state.workloads.items():
        pod_sets = tuple(transform_pod_set(p, transformations) for p in spec.pod_sets)
        if pod_sets != spec.pod_sets:
            state.workloads[key] = replace(spec, pod_sets=pod_sets)
    return snapshot


def admission_fair_sharing(objects: Sequence[KubeObject]) -> AdmissionFairSharing | None:
    """Kueue's Admission Fair Sharing as the snapshot sets it up (afs.py): the
    Configuration's admissionFairSharing with the AdmissionFairSharing gate (beta, on),
    the ClusterQueues whose admissionScope is usage based, the LocalQueues' weights and
    their status.fairSharing.admissionFairSharingStatus (consumedResources, lastUpdate;
    without one, a history that starts empty at the first cycle). None without the
    Configuration's section or with the gate off: the queues' order is as without.
    The inputs are validated first (checks.py)."""
    config = next((o for o in objects if isinstance(o, KueueConfiguration)), None)
    if config is None or config.admission_fair_sharing is None:
        return None
    # Imported here: the engine's package is loaded only when admission runs.
    from .kueue.afs import (
        AFS_GATE,
        DEFAULT_SAMPLING,
        USAGE_BASED,
        AdmissionFairSharing,
        AFSConfig,
        LocalQueueUsage,
    )

    if not config.feature_gates.get(AFS_GATE, True):
        return None
    section = config.admission_fair_sharing
    half_life = parse_go_duration(section.usage_half_life_time or "0")
    # Kueue's defaulting: an unset (zero) sampling interval is 5m
    sampling = parse_go_duration(section.usage_sampling_interval or "0") or DEFAULT_SAMPLING
    queues = [o.name for o in objects if isinstance(o, ClusterQueue)
              and o.spec.admission_scope is not None
              and o.spec.admission_scope.admission_mode == USAGE_BASED]
    weights: dict[str, float] = {}
    usage: dict[str, LocalQueueUsage] = {}
    for obj in objects:
        if not isinstance(obj, LocalQueue):
            continue
        weights[obj.ref] = _weight(obj.spec.fair_sharing)
        fair = obj.status.fair_sharing
        status = fair.admission_fair_sharing_status if fair is not None else None
        if status is not None:
            usage[obj.ref] = LocalQueueUsage(
                {r: q.as_approximate_float() for r, q in status.consumed_resources.items()},
                _timestamp(status.last_update))
    return AdmissionFairSharing(AFSConfig(half_life, sampling, dict(section.resource_weights)),
                                queues, weights, usage)


def _uid_or_ref(obj: KubeObject) -> tuple[str, str]:
    return (obj.kind or type(obj).KIND, obj.ref)


def _owned_by_workloads(objects: Sequence[KubeObject]) -> set[tuple[str, str]]:
    out = set()
    for obj in objects:
        if isinstance(obj, KueueWorkload):
            for ref in obj.metadata.owner_references:
                out.add((ref.kind, f"{obj.namespace}/{ref.name}"))
    return out


def _is_queued(obj: KubeObject) -> bool:
    if not isinstance(obj, Job | Pod | StatefulSet | Deployment | ReplicaSet):
        return False
    if QUEUE_NAME_LABEL not in obj.metadata.labels:
        return False
    # A pod some controller owns is that controller's business (its Job's Workload).
    return not (isinstance(obj, Pod) and any(r.controller for r in obj.metadata.owner_references))


def _spec_for(reader: _Reader, snapshot: KueueSnapshot, source: WorkloadSource,
              requests: tuple[PodSetRequest, ...], priority: int | None = None,
              queued_at: float | None = None) -> None:
    queue_key = f"{source.namespace}/{source.queue_name}"
    snapshot.state.workloads[source.key] = WorkloadSpec(
        key=source.key, queue=queue_key, cluster_queue=reader.local_queues.get(queue_key),
        priority=source.priority if priority is None else priority,
        created=source.created if queued_at is None else queued_at, pod_sets=requests,
        invalid=validation_message([(list(p.errors[0]), list(p.errors[1]))
                                    for p in source.pod_sets]))
    snapshot.sources[source.key] = source


def _queue_order(config: KueueConfiguration | None, wl: KueueWorkload, created: float
                 ) -> float:
    """The time Kueue queues the Workload by: its creation, unless its Evicted or
    Preempted condition moves it (``queue_order``)."""
    conditions = [QueueCondition(c.type, c.status, c.reason or "",
                                 _timestamp(c.last_transition_time) or 0.0)
                  for c in wl.status.conditions]
    return queue_order_timestamp(
        created, conditions,
        config.requeuing_timestamp if config is not None else EVICTION_TIMESTAMP,
        config.feature_gates.get(PRIORITY_SORTING_GATE, True) if config is not None else True)


def _named(owner: KubeObject, order: float) -> KubeObject:
    """``owner`` with a name: one given only ``generateName`` gets the API server's
    five-character suffix, drawn from its place in the input instead of at random."""
    meta = owner.metadata
    if meta.name or not meta.generate_name:
        return owner
    name = generated_name(meta.namespace or "", meta.generate_name, int(order))
    return msgspec.structs.replace(owner, metadata=msgspec.structs.replace(meta, name=name))


def generated_name(namespace: str, generate_name: str, order: int) -> str:
    """``generateName`` plus the API server's five-character suffix, drawn from the
    object's place in the input instead of at random (the same input, the same name)."""
    seed = f"{namespace}/{generate_name}/{order}".encode()
    digest = hashlib.sha1(seed, usedforsecurity=False).hexdigest()
    return generate_name + "".join(
        _SUFFIX_ALPHABET[int(digest[i:i + 2], 16) % len(_SUFFIX_ALPHABET)]
        for i in range(0, 10, 2))


def _add_derived(reader: _Reader, snapshot: KueueSnapshot, owner: KubeObject,
                 order: float) -> None:
    owner = _named(owner, order)
    template = pod_template(owner)
    assert template is not None
    kind = owner.kind or type(owner).KIND
    name = workload_name(kind, _GROUPS.get(kind, ""), owner.name, owner.metadata.uid or "")
    key = f"{owner.namespace}/{name}"
    labels = owner.metadata.labels
    priority, pc, pc_source = reader.priority(labels, template)
    created = _timestamp(owner.metadata.creation_timestamp)
    pod_sets: tuple[PodSetSource, ...] = ()
    requests: tuple[PodSetRequest, ...] = ()
    message = ""
    try:
        made = reader.pod_set(DEFAULT_POD_SET, 0, _count(owner), template,
                              _raw_template(owner), owner.namespace,
                              min_count=_min_count(owner))
        pod_sets, requests = (made[0],), (made[1],)
    except Inadmissible as exc:
        message = exc.message
        pod_sets = (PodSetSource(DEFAULT_POD_SET, _count(owner), _raw_template(owner), {}),)
    source = WorkloadSource(
        key=key, name=name, namespace=owner.namespace, queue_name=labels[QUEUE_NAME_LABEL],
        owner=owner, existing=None, pod_sets=pod_sets, priority=priority,
        priority_class=pc, priority_class_source=pc_source,
        created=order if created is None else created)
    if message:
        snapshot.sources[key] = source
        snapshot.inadmissible[key] = message
        return
    _spec_for(reader, snapshot, source, requests)


def _add_existing(reader: _Reader, snapshot: KueueSnapshot, wl: KueueWorkload,
                  order: float) -> None:
    key = wl.ref
    raw_sets = ((wl.raw or {}).get("spec") or {}).get("podSets") or []
    owner = next((o for o in reader.objects
                  for ref in wl.metadata.owner_references
                  if o.name == ref.name and (o.kind or type(o).KIND) == ref.kind
                  and o.namespace == wl.namespace), None)
    pod_sets = []
    requests = []
    message = ""
    reclaimable = {r.name: r.count for r in wl.status.reclaimable_pods}
    for index, ps in enumerate(wl.spec.pod_sets):
        raw = raw_sets[index].get("template", {}) if index < len(raw_sets) else {}
        try:
            group = ps.topology_request.pod_set_group_name if ps.topology_request else None
            made = reader.pod_set(ps.name, index, ps.count, ps.template, dict(raw), wl.namespace,
                                  group, ps.min_count, reclaimable.get(ps.name, 0))
        except Inadmissible as exc:
            message = message or exc.message
            pod_sets.append(PodSetSource(ps.name, ps.count, dict(raw), {}))
            continue
        pod_sets.append(made[0])
        requests.append(made[1])
    ref = wl.spec.priority_class_ref
    class_name = wl.spec.priority_class_name or (ref.name if ref else None)
    class_source = wl.spec.priority_class_source or (
        _REF_SOURCES.get(ref.kind, "") if ref else None)
    priority = wl.spec.priority
    if priority is None:
        priority = reader.wpc.get(class_name or "", reader.pc.get(class_name or "", 0))
    created = _timestamp(wl.metadata.creation_timestamp)
    source = WorkloadSource(
        key=key, name=wl.name, namespace=wl.namespace, queue_name=wl.spec.queue_name or "",
        owner=owner, existing=wl, pod_sets=tuple(pod_sets), priority=priority,
        priority_class=class_name, priority_class_source=class_source,
        created=order if created is None else created)
    if message:
        snapshot.sources[key] = source
        snapshot.inadmissible[key] = message
        return
    # Kueue compares the effective priority (PriorityBoost); the Workload keeps its own.
    boost_on = reader.config is not None and reader.config.feature_gates.get(
        PRIORITY_BOOST_GATE, False)
    _spec_for(reader, snapshot, source, tuple(requests),
              effective_priority(priority, wl.metadata.annotations, boost_on),
              _queue_order(reader.config, wl, source.created))
    slices_on = reader.config is None or reader.config.feature_gates.get(
        WORKLOAD_SLICES_GATE, True)
    replaces = wl.metadata.annotations.get(SLICE_REPLACEMENT_ANNOTATION)
    if replaces and slices_on:
        snapshot.state.workloads[key] = replace(snapshot.state.workloads[key],
                                                replaces=replaces)
    if slices_on and wl.metadata.annotations.get(ELASTIC_JOB_ANNOTATION) == "true":
        snapshot.state.workloads[key] = replace(snapshot.state.workloads[key], elastic=True)
    if _preemption_gated(reader.config, wl):
        snapshot.state.workloads[key] = replace(snapshot.state.workloads[key],
                                                preemption_gated=True)
    admission = wl.status.admission
    evicted = wl.condition("Evicted")
    reserved = wl.condition("QuotaReserved")
    # Evicted=True while QuotaReserved=True: its eviction is in progress (Kueue unsets
    # the reservation once the job has stopped) and it still holds its quota
    evicting = evicted is not None and evicted.status == "True" and \
        reserved is not None and reserved.status == "True"
    if evicting and admission is not None and admission.cluster_queue:
        snapshot.state.workloads[key] = replace(snapshot.state.workloads[key], evicted=True)
    if admission is not None and admission.cluster_queue and (evicting or not (
            evicted is not None and evicted.status == "True")):
        read = Admission(admission.cluster_queue, tuple(
            PodSetAssignment(a.name, dict(a.flavors),
                             {r: q.milli_value() for r, q in a.resource_usage.items()},
                             a.count if a.count is not None else _count_of(wl, a.name))
            for a in admission.pod_set_assignments))
        charged = _after_reclaim(read, {p.name: p.count for p in requests})
        snapshot.state.admitted[key] = charged
        if charged != read:
            snapshot.admissions_read[key] = read
        since = _timestamp(reserved.last_transition_time if reserved else None)
        if since is not None:
            snapshot.state.admitted_at[key] = since


def _preemption_gated(config: KueueConfiguration | None, wl: KueueWorkload) -> bool:
    """Kueue's HasClosedPreemptionGate, under ConcurrentAdmission or
    MultiKueueOrchestratedPreemption (both alpha, off): a gate of spec.preemptionGates
    that status.preemptionGates does not hold Open (absent there: closed)."""
    gates = config.feature_gates if config is not None else {}
    if not any(gates.get(g, False) for g in PREEMPTION_GATE_FEATURES):
        return False
    raw = wl.raw or {}
    spec_gates = (raw.get("spec") or {}).get("preemptionGates") or []
    states = (raw.get("status") or {}).get("preemptionGates") or []
    position = {g.get("name"): g.get("position") for g in states if isinstance(g, dict)}
    return any(isinstance(g, dict) and position.get(g.get("name"), "Closed") == "Closed"
               for g in spec_gates)


def _after_reclaim(admission: Admission, counts: Mapping[str, int]) -> Admission:
    """What an admitted workload charges (Kueue's totalRequestsFromAdmission): a pod set
    with fewer pods left after its reclaimable ones than the admission's count charges
    its usage scaled to them; one admitted partially keeps its count."""
    pod_sets = []
    for assigned in admission.pod_sets:
        left = counts.get(assigned.name, assigned.count)
        if left < assigned.count and assigned.count > 0:
            assigned = PodSetAssignment(
                assigned.name, assigned.flavors,
                {r: v // assigned.count * left for r, v in assigned.usage.items()}, left)
        pod_sets.append(assigned)
    return Admission(admission.cluster_queue, tuple(pod_sets))


def _count_of(wl: KueueWorkload, pod_set: str) -> int:
    return next((ps.count for ps in wl.spec.pod_sets if ps.name == pod_set), 0)
