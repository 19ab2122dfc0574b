"""Builders for Kueue's preemption tables ported to dralab.

They mirror, method for method, the wrappers Kueue's tests use
(``pkg/util/testing/v1beta2/wrappers.go`` at the pinned commit: MakeClusterQueue,
MakeCohort, MakeFlavorQuotas, MakeResourceFlavor, MakeWorkload, MakePodSet,
MakeAdmission, MakePodSetAssignment), in snake_case, so that a ported case reads
as its upstream original; ``obj()`` turns a builder into dralab's model value.
Go struct literals (``kueue.ClusterQueuePreemption{...}``, ``metav1.Condition{...}``,
``flavorassigner.FlavorAssignment{...}``) are ``S(type, Field=value)``.

Quantities are Kubernetes quantities ("1", "3Gi", "500m"), stored in milli-units.
Times are seconds: ``NOW`` is the tests' ``now``; an unset creation time is Go's
zero time, before every ``NOW``-relative time.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dralab.api.quantity import Quantity
from dralab.queueing.model import (
    Admission,
    ClusterQueueSpec,
    CohortSpec,
    FlavorFungibility,
    FlavorQuotas,
    FlavorSpec,
    PodSetAssignment,
    PodSetRequest,
    PreemptionPolicy,
    ResourceGroup,
    ResourceQuota,
    WorkloadSpec,
)
from dralab.queueing.priority_boost import effective_priority

KUEUE = "kubernetes-sigs/kueue"
KUEUE_COMMIT = "ff69552e79ad21652c36caa97038382e55625cf7"

NOW = 1_000_000.0
ZERO_TIME = 0.0


def at(seconds: float) -> float:
    """``now.Add(seconds * time.Second)``."""
    return NOW + seconds


def milli(text: str | int) -> int:
    return Quantity.parse(str(text)).milli_value()


class S:
    """A Go struct literal: its type name and fields (``Field=value``)."""

    def __init__(self, type_name: str, *items: Any, **fields: Any) -> None:
        self.type_name = type_name
        self.items = items
        self.fields = fields

    def get(self, name: str, default: Any = None) -> Any:
        return self.fields.get(name, default)


def set_of(*items: Any) -> set[Any]:
    """``sets.New(...)``."""
    return set(items)


def target_key_reason(key: str, reason: str) -> tuple[str, str]:
    """Upstream's targetKeyReason: a preempted workload's key with its reason."""
    return (key, reason)


# ResourceFlavor ---------------------------------------------------------------
class ResourceFlavorBuilder:
    def __init__(self, name: str) -> None:
        self._name = name

    def obj(self) -> FlavorSpec:
        return FlavorSpec(self._name)


def make_resource_flavor(name: str) -> ResourceFlavorBuilder:
    return ResourceFlavorBuilder(name)


# Quotas -----------------------------------------------------------------------
class FlavorQuotasBuilder:
    def __init__(self, flavor: str) -> None:
        self._flavor = flavor
        self._resources: dict[str, ResourceQuota] = {}

    def resource(self, name: str, nominal: str, borrowing_limit: str = "",
                 lending_limit: str = "") -> FlavorQuotasBuilder:
        """Resource(name, nominal[, borrowingLimit[, lendingLimit]]); "" is unset."""
        self._resources[name] = ResourceQuota(
            milli(nominal), milli(borrowing_limit) if borrowing_limit else None,
            milli(lending_limit) if lending_limit else None)
        return self

    def obj(self) -> FlavorQuotas:
        return FlavorQuotas(self._flavor, dict(self._resources))


def make_flavor_quotas(flavor: str) -> FlavorQuotasBuilder:
    return FlavorQuotasBuilder(flavor)


def _group(flavors: tuple[FlavorQuotas | FlavorQuotasBuilder, ...]) -> ResourceGroup:
    built = tuple(f.obj() if isinstance(f, FlavorQuotasBuilder) else f for f in flavors)
    covered: list[str] = []
    for flavor in built:
        covered.extend(r for r in flavor.resources if r not in covered)
    return ResourceGroup(tuple(covered), built)


def _weight(value: str) -> float:
    return milli(value) / 1000


def _preemption(policy: S) -> PreemptionPolicy:
    borrow = policy.get("BorrowWithinCohort")
    return PreemptionPolicy(
        within_cluster_queue=policy.get("WithinClusterQueue") or "Never",
        reclaim_within_cohort=policy.get("ReclaimWithinCohort") or "Never",
        borrow_within_cohort=(borrow.get("Policy") or "Never") if borrow else "Never",
        max_priority_threshold=borrow.get("MaxPriorityThreshold") if borrow else None)


class ClusterQueueBuilder:
    def __init__(self, name: str) -> None:
        self._name = name
        self._cohort: str | None = None
        self._groups: list[ResourceGroup] = []
        self._preemption = PreemptionPolicy()
        self._weight = 1.0
        self._fungibility = FlavorFungibility()

    def cohort(self, name: str) -> ClusterQueueBuilder:
        self._cohort = name
        return self

    def resource_group(self, *flavors: FlavorQuotas | FlavorQuotasBuilder
                       ) -> ClusterQueueBuilder:
        self._groups.append(_group(flavors))
        return self

    def preemption(self, policy: S) -> ClusterQueueBuilder:
        self._preemption = _preemption(policy)
        return self

    def fair_weight(self, weight: str) -> ClusterQueueBuilder:
        self._weight = _weight(weight)
        return self

    def flavor_fungibility(self, fungibility: S) -> ClusterQueueBuilder:
        self._fungibility = FlavorFungibility(
            when_can_borrow=fungibility.get("WhenCanBorrow") or "MayStopSearch",
            when_can_preempt=fungibility.get("WhenCanPreempt") or "TryNextFlavor")
        return self

    def obj(self) -> ClusterQueueSpec:
        return ClusterQueueSpec(self._name, tuple(self._groups), self._cohort,
                                preemption=self._preemption, fair_weight=self._weight,
                                flavor_fungibility=self._fungibility)


def make_cluster_queue(name: str) -> ClusterQueueBuilder:
    return ClusterQueueBuilder(name)


class CohortBuilder:
    def __init__(self, name: str) -> None:
        self._name = name
        self._parent: str | None = None
        self._groups: list[ResourceGroup] = []
        self._weight = 1.0

    def parent(self, name: str) -> CohortBuilder:
        self._parent = name
        return self

    def resource_group(self, *flavors: FlavorQuotas | FlavorQuotasBuilder) -> CohortBuilder:
        self._groups.append(_group(flavors))
        return self

    def fair_weight(self, weight: str) -> CohortBuilder:
        self._weight = _weight(weight)
        return self

    def obj(self) -> CohortSpec:
        return CohortSpec(self._name, self._parent, tuple(self._groups), self._weight)


def make_cohort(name: str) -> CohortBuilder:
    return CohortBuilder(name)


# Workloads ------------------------------------------------------------------
@dataclass
class PodSetBuilder:
    name: str
    count: int
    requests: dict[str, str] = field(default_factory=dict)

    def request(self, resource: str, quantity: str) -> PodSetBuilder:
        self.requests[resource] = quantity
        return self

    def obj(self) -> PodSetBuilder:
        return self

    def spec(self) -> PodSetRequest:
        return PodSetRequest(self.name, self.count,
                             {r: milli(q) for r, q in self.requests.items()})


def make_pod_set(name: str, count: int) -> PodSetBuilder:
    return PodSetBuilder(name, count)


@dataclass
class PodSetAssignmentBuilder:
    name: str
    flavors: dict[str, str] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)
    pods: int = 1

    def assignment(self, resource: str, flavor: str, quantity: str
                   ) -> PodSetAssignmentBuilder:
        self.flavors[resource] = flavor
        self.usage[resource] = milli(quantity)
        return self

    def count(self, pods: int) -> PodSetAssignmentBuilder:
        self.pods = pods
        return self

    def obj(self) -> PodSetAssignment:
        return PodSetAssignment(self.name, dict(self.flavors), dict(self.usage), self.pods)


def make_pod_set_assignment(name: str) -> PodSetAssignmentBuilder:
    return PodSetAssignmentBuilder(name)


class AdmissionBuilder:
    def __init__(self, cluster_queue: str) -> None:
        self._cluster_queue = cluster_queue
        self._pod_sets: list[PodSetAssignment] = [make_pod_set_assignment("main").obj()]

    def pod_sets(self, *pod_sets: PodSetAssignment | PodSetAssignmentBuilder
                 ) -> AdmissionBuilder:
        self._pod_sets = [p.obj() if isinstance(p, PodSetAssignmentBuilder) else p
                          for p in pod_sets]
        return self

    def obj(self) -> Admission:
        return Admission(self._cluster_queue, tuple(self._pod_sets))


def make_admission(cluster_queue: str) -> AdmissionBuilder:
    return AdmissionBuilder(cluster_queue)


class WorkloadBuilder:
    """A kueue.Workload: metadata, pod sets, and (once admitted) its admission with
    the time its quota was reserved; ``condition`` records expected conditions."""

    def __init__(self, name: str, namespace: str) -> None:
        self.workload_name = name
        self.namespace = namespace
        self.workload_uid = ""
        self.labels: dict[str, str] = {}
        self.annotations: dict[str, str] = {}
        self.workload_priority = 0
        self.created = ZERO_TIME
        self.pod_set_list: list[PodSetBuilder] = [make_pod_set("main", 1)]
        self.admission: Admission | None = None
        self.reserved_at: float | None = None
        self.conditions: list[S] = []

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.workload_name}"

    def clone(self) -> WorkloadBuilder:
        return copy.deepcopy(self)

    def obj(self) -> WorkloadBuilder:
        return self

    def name(self, name: str) -> WorkloadBuilder:
        self.workload_name = name
        return self

    def uid(self, uid: str) -> WorkloadBuilder:
        self.workload_uid = uid
        return self

    def label(self, key: str, value: str) -> WorkloadBuilder:
        self.labels[key] = value
        return self

    def annotation(self, key: str, value: str) -> WorkloadBuilder:
        self.annotations[key] = value
        return self

    def priority(self, priority: int) -> WorkloadBuilder:
        self.workload_priority = priority
        return self

    def creation(self, time: float) -> WorkloadBuilder:
        self.created = time
        return self

    def request(self, resource: str, quantity: str) -> WorkloadBuilder:
        self.pod_set_list[0].request(resource, quantity)
        return self

    def pod_sets(self, *pod_sets: PodSetBuilder) -> WorkloadBuilder:
        self.pod_set_list = [copy.deepcopy(p) for p in pod_sets]
        return self

    def reserve_quota_at(self, admission: Admission | AdmissionBuilder,
                         time: float) -> WorkloadBuilder:
        self.admission = admission.obj() if isinstance(admission, AdmissionBuilder) \
            else admission
        self.reserved_at = time
        return self

    def simple_reserve_quota(self, cluster_queue: str, flavor: str,
                             time: float) -> WorkloadBuilder:
        """The first pod set's requests times its count, all in ``flavor``."""
        first = self.pod_set_list[0]
        assignment = make_pod_set_assignment(first.name).count(first.count)
        for resource, quantity in first.requests.items():
            assignment.flavors[resource] = flavor
            assignment.usage[resource] = milli(quantity) * first.count
        return self.reserve_quota_at(make_admission(cluster_queue).pod_sets(assignment), time)

    def condition(self, condition: S) -> WorkloadBuilder:
        self.conditions.append(condition)
        return self

    def scheduling_stats_eviction(self, _stats: S) -> WorkloadBuilder:
        return self  # eviction counters: not modelled, not compared

    def spec(self, cluster_queue: str | None, priority_boost: bool = False) -> WorkloadSpec:
        """dralab's workload; its priority the effective one, as the reader makes it
        (``priority_boost``: Kueue's PriorityBoost gate)."""
        priority = effective_priority(self.workload_priority, self.annotations, priority_boost)
        return WorkloadSpec(self.key, "", cluster_queue, priority, self.created,
                            tuple(p.spec() for p in self.pod_set_list), evicted=self.evicted)

    @property
    def evicted(self) -> bool:
        """Kueue's IsEvicted: an Evicted condition with status True."""
        return any(c.get("Type") == "Evicted" and c.get("Status") == "True"
                   for c in self.conditions)

    def preempted(self) -> S | None:
        """The expected Preempted condition, if any."""
        for condition in self.conditions:
            if condition.get("Type") == "Preempted":
                return condition
        return None


def make_workload(name: str, namespace: str) -> WorkloadBuilder:
    return WorkloadBuilder(name, namespace)


# Assignments ------------------------------------------------------------------
@dataclass(frozen=True)
class PodSetFlavors:
    """One pod set of a flavorassigner.Assignment: per resource (flavor, mode)."""

    name: str
    count: int
    flavors: Mapping[str, tuple[str, str]]


def single_pod_set_assignment(flavors: Mapping[str, S]) -> list[PodSetFlavors]:
    """Upstream's singlePodSetAssignment: pod set "main", count 1."""
    return [PodSetFlavors("main", 1, {r: (f.get("Name"), f.get("Mode")) for r, f in
                                      flavors.items()})]


def assignment_pod_sets(assignment: S | list[PodSetFlavors]) -> list[PodSetFlavors]:
    """A flavorassigner.Assignment literal (or singlePodSetAssignment's result)."""
    if isinstance(assignment, list):
        return assignment
    return [PodSetFlavors(p.get("Name"), p.get("Count") or 0,  # Go zero value: no pods
                          {r: (f.get("Name"), f.get("Mode")) for r, f in p.get("Flavors").items()})
            for p in assignment.get("PodSets")]


# Running one case -------------------------------------------------------------
@dataclass
class PreemptionRun:
    """What dralab's target selection returned for one case, and what it needs to
    word Kueue's messages: victim key -> reason, and each ClusterQueue's path."""

    targets: dict[str, str]
    cluster_queue_of: dict[str, str]
    paths: dict[str, str]
    usage_unchanged: bool


def _built(value: Any) -> Any:
    return value.obj() if hasattr(value, "obj") else value


@dataclass
class AdmittedState:
    """The quota tree with the admitted workloads in it, as the cache's snapshot."""

    specs: dict[str, ClusterQueueSpec]
    tree: Any
    index: Any
    workloads: dict[str, WorkloadSpec]
    admitted_at: dict[str, float]


def build_state(cluster_queues: list[Any], cohorts: list[Any] | None,
                admitted: list[WorkloadBuilder]) -> AdmittedState:
    """The ClusterQueues, Cohorts and admitted workloads in dralab's quota tree."""
    # Imported here so that collecting the builders alone needs no engine.
    from dralab.queueing.kueue.index import AdmittedIndex, admission_usage
    from dralab.queueing.kueue.quota import QuotaTree

    specs = {q.name: q for q in (_built(c) for c in cluster_queues)}
    cohort_specs = {c.name: c for c in (_built(c) for c in cohorts or [])}
    tree = QuotaTree(specs, cohort_specs)
    index = AdmittedIndex(tree)
    workloads: dict[str, WorkloadSpec] = {}
    admitted_at: dict[str, float] = {}
    for workload in admitted:
        assert workload.admission is not None and workload.reserved_at is not None
        name = workload.admission.cluster_queue
        workloads[workload.key] = workload.spec(name)
        admitted_at[workload.key] = workload.reserved_at
        index.add(workload.key, name, admission_usage(workload.admission),
                  workload.workload_priority)
    return AdmittedState(specs, tree, index, workloads, admitted_at)


def run_preemption(cluster_queues: list[Any], cohorts: list[Any] | None,
                   admitted: list[WorkloadBuilder], incoming: WorkloadBuilder,
                   target_cq: str, assignment: list[PodSetFlavors], fair_sharing: bool,
                   strategies: tuple[str, ...] = ()) -> PreemptionRun:
    """Upstream's harness: the cache with the flavors, ClusterQueues, Cohorts and
    admitted workloads; GetTargets for ``incoming`` in ``target_cq`` with
    ``assignment`` (resources in mode Preempt need preemption; the usage is the pod
    sets' requests times the assignment's counts, in the assigned flavors)."""
    from dralab.queueing.kueue.preemption import DEFAULT_FAIR_STRATEGIES, find_targets

    state = build_state(cluster_queues, cohorts, admitted)
    specs, tree, index = state.specs, state.tree, state.index
    workloads, admitted_at = state.workloads, state.admitted_at
    before = {n: dict(node.usage) for n, node in [*tree.cluster_queues.items(),
                                                  *tree.cohorts.items()]}
    usage: dict[tuple[str, str], int] = {}
    needed: set[tuple[str, str]] = set()
    for pod_set, flavors in zip(incoming.pod_set_list, assignment, strict=True):
        for resource, (flavor, mode) in flavors.flavors.items():
            if mode == "Preempt":
                needed.add((flavor, resource))
        for resource, quantity in pod_set.requests.items():
            amount = milli(quantity) * flavors.count
            if amount:
                fr = (flavors.flavors[resource][0], resource)
                usage[fr] = usage.get(fr, 0) + amount
    targets = find_targets(incoming.spec(target_cq), target_cq, specs[target_cq], usage, index,
                           workloads, admitted_at, fair_sharing,
                           strategies or DEFAULT_FAIR_STRATEGIES,  # type: ignore[arg-type]
                           needed=needed)
    after = {n: dict(node.usage) for n, node in [*tree.cluster_queues.items(),
                                                 *tree.cohorts.items()]}
    paths: dict[str, str] = {}
    for name, node in tree.cluster_queues.items():
        parts = []
        current: Any = node
        while current is not None:
            parts.append(current.name)
            current = current.parent
        paths[name] = "/" + "/".join(reversed(parts))
    strip = {n: {fr: v for fr, v in u.items() if v} for n, u in before.items()}
    return PreemptionRun({t.workload: t.reason for t in targets},
                         {k: index.cluster_queue[k] for k in workloads},
                         paths,
                         strip == {n: {fr: v for fr, v in u.items() if v}
                                   for n, u in after.items()})
