"""Kueue's API objects, typed: ``kueue.x-k8s.io/v1beta1`` and ``v1beta2``, and the
Kueue ``Configuration`` (``config.kueue.x-k8s.io``).

The kinds follow dralab's api layer: frozen msgspec Structs derived from
``KubeObject``, camelCase on the wire, the decoded document kept in ``raw`` so that
``dralab.api.codec.encode`` writes back what dralab does not model. One class per
kind reads both versions: the fields the versions renamed are both declared
(v1beta1 ``cohort``, v1beta2 ``cohortName``; v1beta1 ``priorityClassName``, v1beta2
``priorityClassRef``) and ``api_version`` says which one the document used; the
accessors (``ClusterQueue.cohort_ref``...) hide the difference. Field names are
checked against Kueue's ``apis/kueue/v1beta{1,2}/*_types.go``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import msgspec

from dralab.api.base import KubeObject, Spec
from dralab.api.codec import DecodeError
from dralab.api.core import PodTemplateSpec, Taint, Toleration
from dralab.api.quantity import Quantity, QuantityError, parse_quantity
from dralab.api.resource import DeviceSelector

__all__ = [
    "CONFIG_GROUP",
    "KUEUE_GROUP",
    "KUEUE_KINDS",
    "KUEUE_VERSIONS",
    "ClusterQueue",
    "Cohort",
    "DeviceClassMapping",
    "KueueConfiguration",
    "KueueTopology",
    "KueueWorkload",
    "LocalQueue",
    "ResourceFlavor",
    "WorkloadPriorityClass",
    "decode_kueue",
    "is_kueue_document",
]

KUEUE_GROUP = "kueue.x-k8s.io"
CONFIG_GROUP = "config.kueue.x-k8s.io"
KUEUE_VERSIONS = ("v1beta1", "v1beta2")


# --- quota: shared by ClusterQueue and Cohort ----------------------------------------

class KueueResourceQuota(Spec, frozen=True):
    name: str = ""
    nominal_quota: Quantity | None = None
    borrowing_limit: Quantity | None = None
    lending_limit: Quantity | None = None


class KueueFlavorQuotas(Spec, frozen=True):
    name: str = ""
    resources: list[KueueResourceQuota] = []


class KueueResourceGroup(Spec, frozen=True):
    covered_resources: list[str] = []
    flavors: list[KueueFlavorQuotas] = []


class KueueFairSharing(Spec, frozen=True):
    # A Quantity on the wire (``weight: "0.5"`` or ``weight: 2``).
    weight: Quantity | None = None


# --- ResourceFlavor ----------------------------------------------------------------

class ResourceFlavorSpec(Spec, frozen=True):
    node_labels: dict[str, str] = {}
    node_taints: list[Taint] = []
    tolerations: list[Toleration] = []
    topology_name: str | None = None


class ResourceFlavor(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = f"{KUEUE_GROUP}/v1beta2"
    KIND: ClassVar[str] = "ResourceFlavor"

    spec: ResourceFlavorSpec = ResourceFlavorSpec()


# --- ClusterQueue ------------------------------------------------------------------

class BorrowWithinCohortSpec(Spec, frozen=True):
    policy: str | None = None
    max_priority_threshold: int | None = None


class ClusterQueuePreemptionSpec(Spec, frozen=True):
    within_cluster_queue: str | None = None
    reclaim_within_cohort: str | None = None
    borrow_within_cohort: BorrowWithinCohortSpec | None = None


class FlavorFungibilitySpec(Spec, frozen=True):
    when_can_borrow: str | None = None
    when_can_preempt: str | None = None
    preference: str | None = None   # v1beta2: BorrowingOverPreemption, PreemptionOverBorrowing


class LabelSelectorRequirement(Spec, frozen=True):
    key: str = ""
    operator: str = ""
    values: list[str] = []


class LabelSelector(Spec, frozen=True):
    match_labels: dict[str, str] = {}
    match_expressions: list[LabelSelectorRequirement] = []


class AdmissionScopeSpec(Spec, frozen=True):
    # UsageBasedAdmissionFairSharing or NoAdmissionFairSharing (Admission Fair Sharing)
    admission_mode: str | None = None


class ClusterQueueSpecFields(Spec, frozen=True):
    resource_groups: list[KueueResourceGroup] = []
    cohort: str | None = None           # v1beta1
    cohort_name: str | None = None      # v1beta2
    queueing_strategy: str | None = None
    namespace_selector: LabelSelector | None = None
    preemption: ClusterQueuePreemptionSpec | None = None
    fair_sharing: KueueFairSharing | None = None
    flavor_fungibility: FlavorFungibilitySpec | None = None
    stop_policy: str | None = None
    admission_scope: AdmissionScopeSpec | None = None


class ClusterQueue(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = f"{KUEUE_GROUP}/v1beta2"
    KIND: ClassVar[str] = "ClusterQueue"

    spec: ClusterQueueSpecFields = ClusterQueueSpecFields()

    @property
    def cohort_ref(self) -> str | None:
        """The cohort, whichever version's field names it."""
        return self.spec.cohort_name or self.spec.cohort or None


# --- LocalQueue, Cohort, WorkloadPriorityClass, Topology -----------------------------

class LocalQueueSpec(Spec, frozen=True):
    cluster_queue: str = ""
    stop_policy: str | None = None
    fair_sharing: KueueFairSharing | None = None


class LocalQueueAdmissionFairSharingStatus(Spec, frozen=True):
    # Admission Fair Sharing's decayed history per resource, and when it was updated
    consumed_resources: dict[str, Quantity] = {}
    last_update: str | None = None


class LocalQueueFairSharingStatus(Spec, frozen=True):
    admission_fair_sharing_status: LocalQueueAdmissionFairSharingStatus | None = None


class LocalQueueStatus(Spec, frozen=True):
    fair_sharing: LocalQueueFairSharingStatus | None = None


class LocalQueue(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = f"{KUEUE_GROUP}/v1beta2"
    KIND: ClassVar[str] = "LocalQueue"
    NAMESPACED: ClassVar[bool] = True

    spec: LocalQueueSpec = LocalQueueSpec()
    status: LocalQueueStatus = LocalQueueStatus()


class CohortSpecFields(Spec, frozen=True):
    parent_name: str | None = None
    resource_groups: list[KueueResourceGroup] = []
    fair_sharing: KueueFairSharing | None = None


class Cohort(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = f"{KUEUE_GROUP}/v1beta2"
    KIND: ClassVar[str] = "Cohort"

    spec: CohortSpecFields = CohortSpecFields()


class WorkloadPriorityClass(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = f"{KUEUE_GROUP}/v1beta2"
    KIND: ClassVar[str] = "WorkloadPriorityClass"

    value: int = 0
    description: str | None = None


class TopologyLevel(Spec, frozen=True):
    node_label: str = ""


class TopologySpecFields(Spec, frozen=True):
    levels: list[TopologyLevel] = []


class KueueTopology(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = f"{KUEUE_GROUP}/v1beta2"
    KIND: ClassVar[str] = "Topology"

    spec: TopologySpecFields = TopologySpecFields()


# --- Workload ----------------------------------------------------------------------

class PodSetTopologyRequest(Spec, frozen=True):
    required: str | None = None
    preferred: str | None = None
    unconstrained: bool | None = None
    pod_set_group_name: str | None = None


class KueuePodSet(Spec, frozen=True):
    name: str = ""
    count: int = 1
    min_count: int | None = None
    template: PodTemplateSpec = PodTemplateSpec()
    topology_request: PodSetTopologyRequest | None = None


class PriorityClassRef(Spec, frozen=True):
    group: str = ""
    kind: str = ""
    name: str = ""


class KueueWorkloadSpec(Spec, frozen=True):
    pod_sets: list[KueuePodSet] = []
    queue_name: str | None = None
    priority: int | None = None
    priority_class_name: str | None = None      # v1beta1
    priority_class_source: str | None = None    # v1beta1
    priority_class_ref: PriorityClassRef | None = None  # v1beta2
    active: bool | None = None


class KueuePodSetAssignment(Spec, frozen=True):
    name: str = ""
    flavors: dict[str, str] = {}
    resource_usage: dict[str, Quantity] = {}
    count: int | None = None


class KueueAdmission(Spec, frozen=True):
    cluster_queue: str = ""
    pod_set_assignments: list[KueuePodSetAssignment] = []


class KueueCondition(Spec, frozen=True):
    type: str = ""
    status: str = ""
    reason: str | None = None
    message: str | None = None
    last_transition_time: str | None = None
    observed_generation: int | None = None


class KueueReclaimablePod(Spec, frozen=True):
    name: str = ""
    count: int = 0


class KueueWorkloadStatus(Spec, frozen=True):
    admission: KueueAdmission | None = None
    conditions: list[KueueCondition] = []
    reclaimable_pods: list[KueueReclaimablePod] = []


class KueueWorkload(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = f"{KUEUE_GROUP}/v1beta2"
    KIND: ClassVar[str] = "Workload"
    NAMESPACED: ClassVar[bool] = True

    spec: KueueWorkloadSpec = KueueWorkloadSpec()
    status: KueueWorkloadStatus = KueueWorkloadStatus()

    def condition(self, kind: str) -> KueueCondition | None:
        return next((c for c in self.status.conditions if c.type == kind), None)


# --- Configuration -----------------------------------------------------------------

class DeviceClassCounterSource(Spec, frozen=True):
    name: str = ""
    driver: str = ""
    device_selector: DeviceSelector | None = None


class DeviceClassCapacitySource(Spec, frozen=True):
    name: str = ""
    driver: str = ""
    device_selector: DeviceSelector | None = None


class DeviceClassSourceConfig(Spec, frozen=True):
    counter: DeviceClassCounterSource | None = None
    capacity: DeviceClassCapacitySource | None = None


class DeviceClassMapping(Spec, frozen=True):
    name: str = ""
    device_class_names: list[str] = []
    sources: list[DeviceClassSourceConfig] = []


class ConfigTransformation(Spec, frozen=True):
    """resources.transformations[]: ``input`` into ``outputs`` per unit, Retain (the
    default) or Replace; ``multiplyBy`` scales the outputs."""

    input: str = ""
    strategy: Literal["Retain", "Replace"] | None = None
    multiply_by: str = ""
    outputs: dict[str, Quantity] = {}


class ConfigResources(Spec, frozen=True):
    device_class_mappings: list[DeviceClassMapping] = []
    exclude_resource_prefixes: list[str] = []
    transformations: list[ConfigTransformation] = []


class ConfigFairSharing(Spec, frozen=True):
    enable: bool | None = None            # v1beta1
    preemption_strategies: list[str] = []


class ConfigAdmissionFairSharing(Spec, frozen=True):
    """admissionFairSharing: Go durations ("168h", "5m"); weights per resource."""

    usage_half_life_time: str | None = None
    usage_sampling_interval: str | None = None
    resource_weights: dict[str, float] = {}


class ConfigRequeuingStrategy(Spec, frozen=True):
    timestamp: str | None = None          # Eviction (Kueue's default) or Creation


class ConfigWaitForPodsReady(Spec, frozen=True):
    requeuing_strategy: ConfigRequeuingStrategy | None = None


class KueueConfiguration(KubeObject, frozen=True):
    """The Kueue manager's Configuration (``config.kueue.x-k8s.io``): the parts that
    decide admission. v1beta2 enables fair sharing by the presence of ``fairSharing``;
    v1beta1 by ``fairSharing.enable``."""

    API_VERSION: ClassVar[str] = f"{CONFIG_GROUP}/v1beta2"
    KIND: ClassVar[str] = "Configuration"

    resources: ConfigResources = ConfigResources()
    fair_sharing: ConfigFairSharing | None = None
    wait_for_pods_ready: ConfigWaitForPodsReady | None = None
    feature_gates: dict[str, bool] = {}
    admission_fair_sharing: ConfigAdmissionFairSharing | None = None

    @property
    def requeuing_timestamp(self) -> str:
        """waitForPodsReady.requeuingStrategy.timestamp, Kueue's default Eviction."""
        strategy = self.wait_for_pods_ready.requeuing_strategy \
            if self.wait_for_pods_ready is not None else None
        return (strategy.timestamp if strategy is not None else None) or "Eviction"

    @property
    def fair_sharing_enabled(self) -> bool:
        if self.fair_sharing is None:
            return False
        if self.api_version.endswith("/v1beta1"):
            return bool(self.fair_sharing.enable)
        return self.fair_sharing.enable is not False


# --- decoding ----------------------------------------------------------------------

KUEUE_KINDS: Mapping[str, type[KubeObject]] = {
    "ResourceFlavor": ResourceFlavor,
    "ClusterQueue": ClusterQueue,
    "LocalQueue": LocalQueue,
    "Cohort": Cohort,
    "WorkloadPriorityClass": WorkloadPriorityClass,
    "Topology": KueueTopology,
    "Workload": KueueWorkload,
}


def _group_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def is_kueue_document(data: Mapping[str, Any]) -> bool:
    """Whether a plain document belongs to Kueue's API groups."""
    api_version = data.get("apiVersion")
    if not isinstance(api_version, str):
        return False
    return _group_version(api_version)[0] in (KUEUE_GROUP, CONFIG_GROUP)


def _dec_hook(tp: type, obj: Any) -> Any:
    if tp is Quantity:
        if isinstance(obj, bool) or not isinstance(obj, int | float | str):
            raise TypeError(f"Expected `quantity`, got `{type(obj).__name__}`")
        try:
            return parse_quantity(obj if isinstance(obj, str) else repr(obj))
        except QuantityError as exc:
            raise ValueError(str(exc)) from None
    raise NotImplementedError(f"cannot decode {tp!r}")


_PATH_SUFFIX = " - at `$"


def decode_kueue(data: Mapping[str, Any]) -> KubeObject:
    """A Kueue document as its typed object; DecodeError (with the field path) for a
    version Kueue does not serve, a kind dralab does not model, or a type mismatch."""
    api_version = str(data.get("apiVersion", ""))
    kind = str(data.get("kind", ""))
    group, version = _group_version(api_version)
    cls: type[KubeObject] | None
    if group == CONFIG_GROUP:
        cls = KueueConfiguration if kind == "Configuration" else None
        served: tuple[str, ...] = KUEUE_VERSIONS
    else:
        cls = KUEUE_KINDS.get(kind)
        served = KUEUE_VERSIONS
    if version not in served:
        raise DecodeError("", f'no matches for kind "{kind}" in version "{api_version}" '
                              f"(Kueue serves {', '.join(served)})")
    if cls is None:
        raise DecodeError("", f'kind "{kind}" of {group} is not modelled by dralab')
    payload = dict(data)
    payload["__raw__"] = data
    try:
        return msgspec.convert(payload, cls, dec_hook=_dec_hook)
    except msgspec.ValidationError as err:
        text = str(err)
        at = text.rfind(_PATH_SUFFIX)
        if at < 0:
            raise DecodeError("", text) from None
        path = text[at + len(_PATH_SUFFIX):].rstrip("`").lstrip(".")
        raise DecodeError(path, text[:at]) from None
