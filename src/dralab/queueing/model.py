"""The values admission works on, free of the API objects they are read from.

Kueue's objects (``kueue.x-k8s.io`` ResourceFlavor, ClusterQueue, Cohort, LocalQueue,
WorkloadPriorityClass, Topology, Workload) are converted into these once; an
admission policy (Kueue's today, KAI's later) reads them and returns decisions.
Amounts are integers in milli-units of the resource (``Quantity.milli_value()``:
``cpu: 2`` is 2000, ``memory: 1Gi`` is 1073741824000, ``nvidia.com/gpu: 1`` is
1000), so sums and comparisons are exact. Resource names are Kubernetes' (``cpu``,
``memory``, ``nvidia.com/gpu``) or the names ``deviceClassMappings`` gives DRA
device classes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol

__all__ = [
    "Admission",
    "AdmissionPolicy",
    "ClusterQueueSpec",
    "CohortSpec",
    "Decision",
    "FlavorFungibility",
    "FlavorQuotas",
    "FlavorSpec",
    "NodeTopology",
    "PodSetAssignment",
    "PodSetRequest",
    "PreemptionPolicy",
    "QueueingState",
    "ResourceGroup",
    "ResourceQuota",
    "TopologyAssignment",
    "TopologyRequest",
    "WorkloadSpec",
]

Amounts = Mapping[str, int]  # resource name -> milli-units

QueueingStrategy = Literal["StrictFIFO", "BestEffortFIFO"]
WithinClusterQueue = Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority"]
ReclaimWithinCohort = Literal["Never", "LowerPriority", "Any"]
BorrowWithinCohort = Literal["Never", "LowerPriority"]
StopPolicy = Literal["None", "Hold", "HoldAndDrain"]


@dataclass(frozen=True, slots=True)
class ResourceQuota:
    """One resource of one flavor in a ClusterQueue (or Cohort). ``None`` limits: no limit."""

    nominal: int
    borrowing_limit: int | None = None
    lending_limit: int | None = None


@dataclass(frozen=True, slots=True)
class FlavorQuotas:
    flavor: str
    resources: Mapping[str, ResourceQuota]


@dataclass(frozen=True, slots=True)
class ResourceGroup:
    """Resources that are assigned flavors together, flavors in the order to try."""

    covered: tuple[str, ...]
    flavors: tuple[FlavorQuotas, ...]


@dataclass(frozen=True, slots=True)
class PreemptionPolicy:
    within_cluster_queue: WithinClusterQueue = "Never"
    reclaim_within_cohort: ReclaimWithinCohort = "Never"
    borrow_within_cohort: BorrowWithinCohort = "Never"
    max_priority_threshold: int | None = None


@dataclass(frozen=True, slots=True)
class FlavorFungibility:
    """What to do when a flavor fits only by borrowing or only by preempting:
    ``MayStopSearch`` (take it) or ``TryNextFlavor``. Kueue's defaults."""

    when_can_borrow: Literal["MayStopSearch", "TryNextFlavor"] = "MayStopSearch"
    when_can_preempt: Literal["MayStopSearch", "TryNextFlavor"] = "TryNextFlavor"
    # Which flavor wins when every candidate needs borrowing, preemption or both
    # (``spec.flavorFungibility.preference``); None reads as BorrowingOverPreemption.
    preference: Literal["BorrowingOverPreemption", "PreemptionOverBorrowing"] | None = None


@dataclass(frozen=True, slots=True)
class ClusterQueueSpec:
    name: str
    resource_groups: tuple[ResourceGroup, ...] = ()
    cohort: str | None = None
    queueing_strategy: QueueingStrategy = "BestEffortFIFO"
    # Namespaces whose LocalQueues may point here: label selector as match labels and
    # expressions are resolved by the reader; None matches every namespace.
    namespaces: frozenset[str] | None = None
    preemption: PreemptionPolicy = PreemptionPolicy()
    fair_weight: float = 1.0
    flavor_fungibility: FlavorFungibility = FlavorFungibility()
    stop_policy: StopPolicy = "None"


@dataclass(frozen=True, slots=True)
class CohortSpec:
    """A cohort; it may have a parent (hierarchical cohorts) and quota of its own."""

    name: str
    parent: str | None = None
    resource_groups: tuple[ResourceGroup, ...] = ()
    fair_weight: float = 1.0


@dataclass(frozen=True, slots=True)
class FlavorSpec:
    """A ResourceFlavor: where its quota lives (node labels and taints), and its Topology."""

    name: str
    node_labels: Mapping[str, str] = field(default_factory=dict)
    node_taints: tuple[tuple[str, str, str], ...] = ()     # (key, value, effect)
    tolerations: tuple[tuple[str, str, str, str], ...] = ()  # (key, operator, value, effect)
    topology: str | None = None


@dataclass(frozen=True, slots=True)
class NodeTopology:
    """A Kueue ``Topology`` (``spec.levels[].nodeLabel``): node-label keys from the
    broadest level to the narrowest, e.g. block, rack, ``kubernetes.io/hostname``.
    A domain of a level is the nodes that share that label's value and the values
    of every broader level (rack names need not be unique across blocks)."""

    name: str
    levels: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TopologyRequest:
    """Pod-set annotations ``kueue.x-k8s.io/podset-required-topology`` /
    ``...-preferred-topology`` / ``...-unconstrained-topology``: a node-label level."""

    level: str | None = None
    required: bool = False
    unconstrained: bool = False
    # podsetSliceRequiredTopologyConstraints (or podset-slice-required-topology with
    # podset-slice-size): (level, pods per slice), the outermost first
    slices: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class TopologyAssignment:
    """Where a TAS pod set's pods go (Kueue v1beta1 ``topologyAssignment``): the
    level keys, broadest first, and per domain of the last level its values (one
    per level) and how many pods it holds."""

    levels: tuple[str, ...]
    domains: tuple[tuple[tuple[str, ...], int], ...]


@dataclass(frozen=True, slots=True)
class PodSetRequest:
    """One pod set of a workload: ``count`` pods, each asking for ``per_pod``."""

    name: str
    count: int
    per_pod: Amounts
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[tuple[str, str, str, str], ...] = ()
    topology: TopologyRequest | None = None
    # requiredDuringSchedulingIgnoredDuringExecution node affinity: terms (ORed), each
    # a tuple of (key, operator, values) expressions (ANDed); () when there is none.
    node_affinity: tuple[tuple[tuple[str, str, tuple[str, ...]], ...], ...] = ()
    # Kueue's podSetGroupName (topologyRequest, or the kueue.x-k8s.io/podset-group-name
    # annotation): pod sets of one group get their flavors together.
    group: str | None = None
    # ``spec.podSets[].minCount``: with Kueue's PartialAdmission the pod set may be
    # admitted with as few as this many pods (None: exactly ``count``).
    min_count: int | None = None
    # Pods of the spec's count already left out of ``count`` (Workload
    # ``status.reclaimablePods``, Kueue's ReclaimablePods gate): the spec's count is
    # ``count + reclaimed``.
    reclaimed: int = 0
    # The pod template's own requests when ``per_pod``, what quota is asked, differs
    # from them (Kueue's resources.transformations: transformations.py); Kueue's TAS
    # places pods by these. None: ``per_pod``.
    spec_requests: Amounts | None = None


@dataclass(frozen=True, slots=True)
class WorkloadSpec:
    """A Workload: its key (``namespace/name``), the LocalQueue and its ClusterQueue,
    the priority (WorkloadPriorityClass or pod priority), ``created`` (seconds; the
    order of creationTimestamp) and its pod sets. ``replaces``: the key of the workload
    slice this one replaces (Kueue's kueue.x-k8s.io/workload-slice-replacement-for
    annotation, ElasticJobsViaWorkloadSlices). ``elastic``: the Workload is marked
    kueue.x-k8s.io/elastic-job: "true" (Kueue's IsElasticWorkload, same gate).
    ``invalid``: why Kueue's ValidateAdmissibility refuses its pod templates (requests
    above limits, or outside the namespace's LimitRanges: ``limitrange.py``), or "".
    ``evicted``: an admitted workload whose eviction is in progress (Evicted=True while
    it still holds its quota reservation, until its job stops): preemption takes it
    first, without evicting it again. ``preemption_gated``: one of its
    spec.preemptionGates is closed (not Open in status.preemptionGates), under
    ConcurrentAdmission or MultiKueueOrchestratedPreemption (alpha, off): it may not
    preempt."""

    key: str
    queue: str
    cluster_queue: str | None
    priority: int
    created: float
    pod_sets: tuple[PodSetRequest, ...]
    replaces: str | None = None
    elastic: bool = False
    invalid: str = ""
    evicted: bool = False
    preemption_gated: bool = False


@dataclass(frozen=True, slots=True)
class PodSetAssignment:
    name: str
    flavors: Mapping[str, str]          # resource -> flavor
    usage: Amounts                      # resource -> total for the pod set
    count: int


@dataclass(frozen=True, slots=True)
class Admission:
    cluster_queue: str
    pod_sets: tuple[PodSetAssignment, ...]


@dataclass(slots=True)
class QueueingState:
    """What admission sees: the queues and flavors, every workload, and the admissions
    in force (admitted or holding quota)."""

    flavors: dict[str, FlavorSpec] = field(default_factory=dict)
    cluster_queues: dict[str, ClusterQueueSpec] = field(default_factory=dict)
    cohorts: dict[str, CohortSpec] = field(default_factory=dict)
    local_queues: dict[str, str] = field(default_factory=dict)  # "ns/name" -> ClusterQueue
    workloads: dict[str, WorkloadSpec] = field(default_factory=dict)
    admitted: dict[str, Admission] = field(default_factory=dict)
    # When each admitted workload got its quota (seconds; Kueue's QuotaReserved
    # lastTransitionTime): preemption evicts the most recently admitted first.
    # Policies write it when they admit; a missing entry reads as the creation time.
    admitted_at: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Decision:
    """What one admission cycle decided for one workload.

    ``admitted``: its Admission; ``preempted``: it was evicted (``by`` the workload
    that needed the room, ``reason`` Kueue's: InClusterQueue, InCohortReclamation,
    InCohortFairSharing, InCohortReclaimWhileBorrowing); ``pending``: the message
    Kueue writes in the QuotaReserved=False condition, ``pending_reason`` its reason."""

    workload: str
    admitted: Admission | None = None
    preempted: bool = False
    by: str = ""
    reason: str = ""
    pending: str = ""
    # Kueue's QuotaReserved=False reason with ``pending`` (WaitingForQuota,
    # ExceedsMaxQuota, NoMatchingFlavor, Misconfigured, Suspended, ...); "" if unknown.
    pending_reason: str = ""


class AdmissionPolicy(Protocol):
    """One admission cycle over ``state``: the decisions, applied to ``state`` too
    (admitted workloads enter ``state.admitted``, preempted ones leave it)."""

    def cycle(self, state: QueueingState, now: float) -> list[Decision]: ...
