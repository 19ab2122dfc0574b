"""core/v1 and scheduling.k8s.io/v1 kinds: Pod, Node, Namespace, PriorityClass, and their parts."""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec

from .base import KubeObject, Spec
from .quantity import Quantity

__all__ = [
    "Affinity",
    "Container",
    "ContainerResourceClaim",
    "ExtendedResourceClaimStatus",
    "Namespace",
    "NamespaceSpec",
    "Node",
    "NodeAffinity",
    "NodeSelector",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "NodeSpec",
    "NodeStatus",
    "Pod",
    "PodCondition",
    "PodResourceClaim",
    "PodResourceClaimStatus",
    "PodSchedulingGate",
    "PodSchedulingGroup",
    "PodSpec",
    "PodStatus",
    "PodTemplateSpec",
    "PreferredSchedulingTerm",
    "PriorityClass",
    "ResourceRequirements",
    "Taint",
    "Toleration",
]


class NodeSelectorRequirement(Spec, frozen=True):
    key: str = ""
    operator: str = ""
    values: list[str] = []


class NodeSelectorTerm(Spec, frozen=True):
    match_expressions: list[NodeSelectorRequirement] = []
    match_fields: list[NodeSelectorRequirement] = []


class NodeSelector(Spec, frozen=True):
    """Terms are ORed; the requirements inside one term are ANDed."""

    node_selector_terms: list[NodeSelectorTerm] = []


class PreferredSchedulingTerm(Spec, frozen=True):
    weight: int = 0
    preference: NodeSelectorTerm = NodeSelectorTerm()


class NodeAffinity(Spec, frozen=True):
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] = []


class Affinity(Spec, frozen=True):
    node_affinity: NodeAffinity | None = None
    # podAffinity / podAntiAffinity are kept in the raw document only.


class Taint(Spec, frozen=True):
    key: str = ""
    value: str | None = None
    effect: str = ""
    time_added: str | None = None


class Toleration(Spec, frozen=True):
    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None
    toleration_seconds: int | None = None


class ContainerResourceClaim(Spec, frozen=True):
    name: str = ""
    request: str | None = None


class ResourceRequirements(Spec, frozen=True):
    requests: dict[str, Quantity] = {}
    limits: dict[str, Quantity] = {}
    claims: list[ContainerResourceClaim] = []


class Container(Spec, frozen=True):
    name: str = ""
    image: str | None = None
    resources: ResourceRequirements = ResourceRequirements()
    # "Always" on an init container makes it a sidecar (its requests add up).
    restart_policy: str | None = None


class PodResourceClaim(Spec, frozen=True):
    name: str = ""
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


class PodSchedulingGate(Spec, frozen=True):
    name: str = ""


class PodSchedulingGroup(Spec, frozen=True):
    """``spec.schedulingGroup``: the PodGroup (same namespace) the pod belongs to.
    Gate GenericWorkload; with the gate off the API server drops the field."""

    pod_group_name: str | None = None


class PodSpec(Spec, frozen=True):
    containers: list[Container] = []
    init_containers: list[Container] = []
    # Pod-level resources (PodLevelResources, beta and on by default since 1.34).
    resources: ResourceRequirements | None = None
    # RuntimeClass overhead, added to the pod's requests.
    overhead: dict[str, Quantity] = {}
    resource_claims: list[PodResourceClaim] = []
    node_name: str | None = None
    node_selector: dict[str, str] = {}
    affinity: Affinity | None = None
    tolerations: list[Toleration] = []
    priority: int | None = None
    priority_class_name: str | None = None
    scheduler_name: str | None = None
    scheduling_gates: list[PodSchedulingGate] = []
    scheduling_group: PodSchedulingGroup | None = None
    restart_policy: str | None = None


class PodCondition(Spec, frozen=True):
    type: str = ""
    status: str = ""
    reason: str | None = None
    message: str | None = None
    last_transition_time: str | None = None
    last_probe_time: str | None = None
    # The pod generation the writer saw (PodObservedGenerationTracking, GA in 1.35).
    observed_generation: int | None = None


class PodResourceClaimStatus(Spec, frozen=True):
    name: str = ""
    resource_claim_name: str | None = None


class ContainerExtendedResourceRequest(Spec, frozen=True):
    container_name: str = ""
    resource_name: str = ""
    request_name: str = ""


class ExtendedResourceClaimStatus(Spec, frozen=True):
    resource_claim_name: str = ""
    request_mappings: list[ContainerExtendedResourceRequest] = []


class PodStatus(Spec, frozen=True):
    phase: str | None = None
    # BestEffort, Burstable or Guaranteed: set by the API server on create.
    qos_class: str | None = msgspec.field(default=None, name="qosClass")
    conditions: list[PodCondition] = []
    nominated_node_name: str | None = None
    resource_claim_statuses: list[PodResourceClaimStatus] = []
    extended_resource_claim_status: ExtendedResourceClaimStatus | None = None


class Pod(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = "v1"
    KIND: ClassVar[str] = "Pod"
    NAMESPACED: ClassVar[bool] = True

    spec: PodSpec = PodSpec()
    status: PodStatus = PodStatus()


class PodTemplateSpec(Spec, frozen=True):
    """The pod template carried by workload kinds (metadata as a plain map of labels etc.)."""

    metadata: dict[str, Any] = {}
    spec: PodSpec = PodSpec()


class NodeSpec(Spec, frozen=True):
    unschedulable: bool | None = None
    taints: list[Taint] = []
    provider_id: str | None = msgspec.field(default=None, name="providerID")


class NodeStatus(Spec, frozen=True):
    capacity: dict[str, Quantity] = {}
    allocatable: dict[str, Quantity] = {}


class Node(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = "v1"
    KIND: ClassVar[str] = "Node"

    spec: NodeSpec = NodeSpec()
    status: NodeStatus = NodeStatus()


class NamespaceSpec(Spec, frozen=True):
    finalizers: list[str] = []


class Namespace(KubeObject, frozen=True):
    """A namespace; dralab reads its labels (the DRA admin-access label)."""

    API_VERSION: ClassVar[str] = "v1"
    KIND: ClassVar[str] = "Namespace"

    spec: NamespaceSpec = NamespaceSpec()

    @property
    def labels(self) -> dict[str, str]:
        return self.metadata.labels


class PriorityClass(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = "scheduling.k8s.io/v1"
    KIND: ClassVar[str] = "PriorityClass"

    value: int = 0
    global_default: bool | None = None
    preemption_policy: str | None = None
    description: str | None = None
