"""The values KAI Scheduler's policy works on, free of the API objects they come from.

KAI Scheduler (github.com/NVIDIA/KAI-Scheduler) is a pod scheduler, not an admission
layer: one scheduling session takes a snapshot of nodes, queues and pod groups, runs its
actions in order (allocate, consolidation, reclaim, preempt, stalegangeviction by
default) and binds, pipelines or evicts pods. These dataclasses are that snapshot.
The reader (``objects.py``) builds them from Queue (``scheduling.run.ai/v2``), PodGroup
(``scheduling.run.ai/v2alpha2``), pods, nodes and the scheduler's configuration; the
ported upstream test tables (``tests/peers/kai``) build them from the tables' values.

Units are KAI's own, so upstream figures compare as they are:

* queues (``spec.resources``): GPU in devices (fractions allowed), CPU in millicores,
  memory in megabytes (10**6 bytes); ``-1`` is unlimited (quota) or no limit (limit);
* nodes and tasks: GPU in devices (a task's fraction below 1 is a shared GPU), CPU in
  millicores, memory in bytes, GPU memory in MiB.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from dralab.api.resource import DeviceClass, ResourceClaim, ResourceSlice

__all__ = [
    "DEFAULT_ACTIONS",
    "DEFAULT_QUEUE_PRIORITY",
    "UNLIMITED",
    "KaiAffinityTerm",
    "KaiConfig",
    "KaiJob",
    "KaiNode",
    "KaiPlugin",
    "KaiPodAffinity",
    "KaiQueue",
    "KaiState",
    "KaiSubGroup",
    "KaiTask",
    "PodStatus",
    "QueueResource",
    "ResourceName",
    "TopologyConstraint",
]

# KAI's commonconstants.UnlimitedResourceQuantity: -1 in quota or limit.
UNLIMITED = -1.0
# pkg/common/constants: a Queue without spec.priority.
DEFAULT_QUEUE_PRIORITY = 100
# The SchedulingShard's default actions, in the order a session runs them
# (pkg/apis/kai/v1/schedulingshard_types.go setDefaultActions).
DEFAULT_ACTIONS: tuple[str, ...] = (
    "allocate", "consolidation", "reclaim", "preempt", "stalegangeviction",
)

ResourceName = Literal["gpu", "cpu", "memory"]

# pkg/scheduler/api/pod_status: the states a task (pod) has inside a session.
PodStatus = Literal[
    "Pending", "Gated", "Allocated", "Pipelined", "Binding", "Bound", "Running",
    "Releasing", "Succeeded", "Failed", "Unknown", "Deleted",
]


@dataclass(frozen=True, slots=True)
class QueueResource:
    """One resource of a Queue's ``spec.resources`` (quota, overQuotaWeight, limit).

    Defaults are the CRD's when the field is absent: no guaranteed quota, weight 1, and
    ``limit`` unset reads as 0 in the CRD (no resources beyond quota); the reader writes
    what the object says, so an omitted limit is ``0.0`` there and UNLIMITED only when
    the object says -1."""

    quota: float = 0.0
    over_quota_weight: float = 1.0
    limit: float = UNLIMITED


@dataclass(frozen=True, slots=True)
class KaiQueue:
    """A Queue. Only leaf queues (no children) hold jobs; parents divide their share
    among their children. ``created``: seconds, the order of creationTimestamp (ties in
    queue order fall back to it)."""

    name: str
    parent: str | None = None
    priority: int = DEFAULT_QUEUE_PRIORITY
    gpu: QueueResource = QueueResource()
    cpu: QueueResource = QueueResource()
    memory: QueueResource = QueueResource()
    created: float = 0.0
    preempt_min_runtime: float | None = None   # seconds
    reclaim_min_runtime: float | None = None   # seconds
    # spec.displayName: KAI's QueueInfo.Name, what its messages call the queue ("": the name)
    display_name: str = ""

    def resource(self, name: ResourceName) -> QueueResource:
        return self.gpu if name == "gpu" else self.cpu if name == "cpu" else self.memory


@dataclass(frozen=True, slots=True)
class KaiNode:
    """A node as KAI's NodeInfo sees it: allocatable GPUs (whole devices), their memory,
    CPU and memory, labels, MIG instances (resource name -> count, e.g.
    ``nvidia.com/mig-1g.10gb``) and the pod cap (``pods`` allocatable)."""

    name: str
    gpus: int = 0
    gpu_memory_mib: int = 0
    cpu_milli: float = 0.0
    memory_bytes: float = 0.0
    labels: Mapping[str, str] = field(default_factory=dict)
    mig_instances: Mapping[str, int] = field(default_factory=dict)
    max_pods: int | None = None
    gpu_name: str = ""


@dataclass(frozen=True, slots=True)
class KaiAffinityTerm:
    """A PodAffinityTerm: pods whose labels carry every ``match_labels`` pair (a
    matchLabels selector; empty: every pod) in ``namespaces`` (empty: the pod's own),
    counted per value of the nodes' ``topology_key`` label. ``weight``: a preferred
    term's weight (required terms: 0)."""

    match_labels: Mapping[str, str] = field(default_factory=dict)
    topology_key: str = ""
    namespaces: tuple[str, ...] = ()
    weight: int = 0


@dataclass(frozen=True, slots=True)
class KaiPodAffinity:
    """A pod's inter-pod affinity: required and preferred affinity and anti-affinity."""

    required: tuple[KaiAffinityTerm, ...] = ()
    required_anti: tuple[KaiAffinityTerm, ...] = ()
    preferred: tuple[KaiAffinityTerm, ...] = ()
    preferred_anti: tuple[KaiAffinityTerm, ...] = ()


@dataclass(frozen=True, slots=True)
class KaiTask:
    """A pod of a pod group. ``gpus``: whole devices (>= 1) or a fraction of one shared
    device (``gpu-fraction`` annotation, 0 < f < 1); ``gpu_memory_mib``: the
    ``gpu-memory`` annotation (a share sized by memory); ``fraction_devices``: the
    ``gpu-fraction-num-devices`` annotation (the same fraction on that many devices).
    ``node``: where it runs (Running, Releasing, ...) or None (Pending).
    ``gpu_groups``: the shared-GPU groups it holds on its node."""

    name: str
    job: str
    status: PodStatus = "Pending"
    node: str | None = None
    gpus: float = 0.0
    gpu_memory_mib: int = 0
    fraction_devices: int | None = None
    cpu_milli: float = 0.0
    memory_bytes: float = 0.0
    gpu_groups: tuple[str, ...] = ()
    mig: Mapping[str, int] = field(default_factory=dict)
    # required node affinity as node names (the tables' NodeAffinityNames) or
    # a node selector; () / {}: any node
    node_names: tuple[str, ...] = ()
    node_selector: Mapping[str, str] = field(default_factory=dict)
    priority: int | None = None
    subgroup: str | None = None
    # DRA: names of the ResourceClaims the pod uses (already resolved from templates)
    claims: tuple[str, ...] = ()
    # those of ``claims`` made from a ResourceClaimTemplate: the pod's claim entry name
    # -> the claim made for it (per pod, so KAI does not ask it for a queue label)
    template_claims: Mapping[str, str] = field(default_factory=dict)
    started: float | None = None   # seconds; when it started running
    # status.nominatedNodeName: the nominatednode plugin puts that node first
    nominated_node: str | None = None
    # the pod's labels (kubeflow's and ray's task order read the role labels)
    labels: Mapping[str, str] = field(default_factory=dict)
    # a legacy MIG pod (its MIG instance asked by an nvidia.com/mig-* annotation): KAI
    # never schedules it, and no MIG pod goes to a node running one
    legacy_mig: bool = False
    # spec.affinity.podAffinity / podAntiAffinity (the podaffinity plugin and the
    # k8s InterPodAffinity predicate); None: none
    pod_affinity: KaiPodAffinity | None = None
    # every required node-affinity term names nodes by metadata.name (matchFields In):
    # Kubernetes' NodeAffinity PreFilter turns that into a node list, which KAI's
    # node-affinities scenario filter looks up among all nodes, not just feasible ones
    node_names_by_name: bool = False


@dataclass(frozen=True, slots=True)
class TopologyConstraint:
    """A PodGroup's (or SubGroup's) ``topologyConstraint``: node-label levels of a KAI
    Topology (``kai.scheduler/v1alpha1``)."""

    topology: str = ""
    required_level: str = ""
    preferred_level: str = ""


@dataclass(frozen=True, slots=True)
class KaiSubGroup:
    name: str
    min_member: int = 0
    parent: str | None = None
    topology: TopologyConstraint | None = None


@dataclass(frozen=True, slots=True)
class KaiJob:
    """A PodGroup and its pods. ``min_member``: the gang (0 reads as 1: KAI schedules
    a pod group without minMember pod by pod); ``preemptible``: spec.preemptibility
    (None: by priority, preemptible below PriorityBuildNumber 100);
    ``stale_since``: seconds since the gang fell below min_member while running
    (the stalegangeviction action's clock), None when not stale."""

    name: str
    queue: str
    namespace: str = "default"
    priority: int = 0
    priority_class: str = ""
    preemptible: bool | None = None
    min_member: int = 1
    created: float = 0.0
    tasks: tuple[KaiTask, ...] = ()
    subgroups: tuple[KaiSubGroup, ...] = ()
    topology: TopologyConstraint | None = None
    stale_since: float | None = None
    # seconds: the PodGroup's kai.scheduler/last-start-timestamp annotation (the
    # minruntime plugin's clock); None: never started, never protected
    last_start: float | None = None

    def is_preemptible(self) -> bool:
        if self.preemptible is not None:
            return self.preemptible
        return self.priority < 100


@dataclass(frozen=True, slots=True)
class KaiPlugin:
    """One plugin of the scheduler configuration's tiers (conf.PluginOption): its name
    and its arguments as the configuration writes them (strings)."""

    name: str
    arguments: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class KaiConfig:
    """The scheduler's configuration as a session uses it (SchedulingShard /
    the scheduler ConfigMap): actions in order, placement strategies and the
    proportion plugin's ``kValue``."""

    actions: tuple[str, ...] = DEFAULT_ACTIONS
    gpu_placement: Literal["binpack", "spread"] = "binpack"
    cpu_placement: Literal["binpack", "spread"] = "binpack"
    k_value: float = 1.0
    queue_label: str = "kai.scheduler/queue"
    # max consolidation preemptees per session; -1: no cap
    max_consolidation_preemptees: int = -1
    allow_consolidating_reclaim: bool = True
    # seconds a gang may stay below its minimum before stalegangeviction evicts it
    # (the scheduler's --default-staleness-grace-period, 60 s); negative: never
    staleness_grace_period: float = 60.0
    # preempt, reclaim and consolidation skip a job no easier than a failed one with the
    # same constraints (the scheduler's --use-scheduling-signatures, on by default)
    use_scheduling_signatures: bool = True
    # the DynamicResourceAllocation feature gate (GA and on by default in the
    # Kubernetes 1.34 libraries KAI builds with); off, a pod with claims is refused
    dynamic_resource_allocation: bool = True
    # the tiers' plugins in order (conf.SchedulerConfiguration.Tiers); None: the set the
    # operator configures for gpu_placement/cpu_placement (queueing.kai.plugins.config).
    # Given, it replaces that set whole, as a configuration's tiers replace the default
    # (ResolveConfigurationFromFile): a plugin not listed is off, and nodeplacement's
    # strategies come from its own arguments, not from gpu_placement/cpu_placement.
    plugins: tuple[KaiPlugin, ...] | None = None


@dataclass(slots=True)
class KaiState:
    """One session's snapshot: what the actions read and change."""

    nodes: dict[str, KaiNode] = field(default_factory=dict)
    queues: dict[str, KaiQueue] = field(default_factory=dict)
    jobs: dict[str, KaiJob] = field(default_factory=dict)
    config: KaiConfig = KaiConfig()
    now: float = 0.0
    # Topology (kai.scheduler/v1alpha1) name -> its levels' node labels, top level
    # first: the domains a job's topologyConstraint names
    topologies: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # DRA (resource.k8s.io/v1): ResourceClaims by "namespace/name", ResourceSlices and
    # DeviceClasses by name; ``dra.py`` allocates and counts them as KAI does
    resource_claims: dict[str, ResourceClaim] = field(default_factory=dict)
    resource_slices: tuple[ResourceSlice, ...] = ()
    device_classes: dict[str, DeviceClass] = field(default_factory=dict)
    # KAI's cluster snapshot marks a node with DRA GPUs (NodeInfo.HasDRAGPUs) and then
    # refuses device-plugin GPU requests there (a "temporary fix" upstream); upstream's
    # test builder (nodes_fake) never marks a node, so the ported tables turn this off
    dra_nodes_refuse_device_plugin_gpus: bool = True
