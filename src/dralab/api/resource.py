"""resource.k8s.io/v1 kinds: DeviceClass, ResourceSlice, ResourceClaim(Template), DeviceTaintRule.

Field names and nesting follow the v1 API exactly (see the API reference notes);
only the Python attribute names are snake_case. Fields that hold free-form JSON
(opaque parameters, device status data) are kept as plain data.
"""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec

from .base import KubeObject, ObjectMeta, Spec
from .core import NodeSelector
from .quantity import Quantity

__all__ = [
    "AllocatedDeviceStatus",
    "AllocationResult",
    "CELDeviceSelector",
    "CapacityRequestPolicy",
    "CapacityRequestPolicyRange",
    "CapacityRequirements",
    "Counter",
    "CounterSet",
    "Device",
    "DeviceAllocationConfiguration",
    "DeviceAllocationResult",
    "DeviceAttribute",
    "DeviceCapacity",
    "DeviceClaim",
    "DeviceClaimConfiguration",
    "DeviceClass",
    "DeviceClassConfiguration",
    "DeviceClassSpec",
    "DeviceConstraint",
    "DeviceCounterConsumption",
    "DeviceRequest",
    "DeviceRequestAllocationResult",
    "DeviceSelector",
    "DeviceSubRequest",
    "DeviceTaint",
    "DeviceTaintRule",
    "DeviceTaintRuleSpec",
    "DeviceTaintSelector",
    "DeviceToleration",
    "ExactDeviceRequest",
    "OpaqueDeviceConfiguration",
    "ResourceClaim",
    "ResourceClaimConsumerReference",
    "ResourceClaimSpec",
    "ResourceClaimStatus",
    "ResourceClaimTemplate",
    "ResourceClaimTemplateSpec",
    "ResourcePool",
    "ResourceSlice",
    "ResourceSliceSpec",
]

GROUP = "resource.k8s.io"
V1 = "resource.k8s.io/v1"


# --- selectors, config, tolerations ------------------------------------------


class CELDeviceSelector(Spec, frozen=True):
    expression: str = ""


class DeviceSelector(Spec, frozen=True):
    cel: CELDeviceSelector | None = None


class OpaqueDeviceConfiguration(Spec, frozen=True):
    driver: str = ""
    parameters: Any = None


class DeviceClassConfiguration(Spec, frozen=True):
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceToleration(Spec, frozen=True):
    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None
    toleration_seconds: int | None = None


class DeviceTaint(Spec, frozen=True):
    key: str = ""
    value: str | None = None
    effect: str = ""
    time_added: str | None = None


# --- DeviceClass --------------------------------------------------------------


class DeviceClassSpec(Spec, frozen=True):
    selectors: list[DeviceSelector] = []
    config: list[DeviceClassConfiguration] = []
    extended_resource_name: str | None = None


class DeviceClass(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = V1
    KIND: ClassVar[str] = "DeviceClass"

    spec: DeviceClassSpec = DeviceClassSpec()


# --- ResourceSlice ------------------------------------------------------------


class DeviceAttribute(Spec, frozen=True):
    """Exactly one field is set. Python names avoid shadowing builtins."""

    int_: int | None = msgspec.field(default=None, name="int")
    bool_: bool | None = msgspec.field(default=None, name="bool")
    string: str | None = None
    version: str | None = None
    ints: list[int] | None = None
    bools: list[bool] | None = None
    strings: list[str] | None = None
    versions: list[str] | None = None

    @property
    def value(self) -> int | bool | str | list[Any] | None:
        """The one value that is set (version strings unparsed)."""
        return self.typed()[1]

    @property
    def type_name(self) -> str:
        return self.typed()[0]

    def typed(self) -> tuple[str, int | bool | str | list[Any] | None]:
        """(type name, value) of the field that is set, in field order; ("", None) if none."""
        # (plain tests: allocators read this for every device a constraint looks at)
        if self.int_ is not None:
            return "int", self.int_
        if self.bool_ is not None:
            return "bool", self.bool_
        if self.string is not None:
            return "string", self.string
        if self.version is not None:
            return "version", self.version
        if self.ints is not None:
            return "ints", self.ints
        if self.bools is not None:
            return "bools", self.bools
        if self.strings is not None:
            return "strings", self.strings
        if self.versions is not None:
            return "versions", self.versions
        return "", None


class CapacityRequestPolicyRange(Spec, frozen=True):
    min: Quantity | None = None
    max: Quantity | None = None
    step: Quantity | None = None


class CapacityRequestPolicy(Spec, frozen=True):
    default: Quantity | None = None
    valid_values: list[Quantity] = []
    valid_range: CapacityRequestPolicyRange | None = None


class DeviceCapacity(Spec, frozen=True):
    value: Quantity = Quantity(0)
    request_policy: CapacityRequestPolicy | None = None


class Counter(Spec, frozen=True):
    value: Quantity = Quantity(0)


class CounterSet(Spec, frozen=True):
    name: str = ""
    counters: dict[str, Counter] = {}


class DeviceCounterConsumption(Spec, frozen=True):
    counter_set: str = ""
    counters: dict[str, Counter] = {}
    compatibility_groups: list[str] = []


class Device(Spec, frozen=True):
    name: str = ""
    attributes: dict[str, DeviceAttribute] = {}
    capacity: dict[str, DeviceCapacity] = {}
    consumes_counters: list[DeviceCounterConsumption] = []
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    taints: list[DeviceTaint] = []
    binds_to_node: bool | None = None
    binding_conditions: list[str] = []
    binding_failure_conditions: list[str] = []
    allow_multiple_allocations: bool | None = None
    node_allocatable_resources: dict[str, Any] | None = None


class ResourcePool(Spec, frozen=True):
    name: str = ""
    generation: int = 0
    resource_slice_count: int = 0


class ResourceSliceSpec(Spec, frozen=True):
    driver: str = ""
    pool: ResourcePool = ResourcePool()
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    per_device_node_selection: bool | None = None
    devices: list[Device] = []
    shared_counters: list[CounterSet] = []
    partition_type_attribute: str | None = None
    skip_node_operations: list[str] = []


class ResourceSlice(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = V1
    KIND: ClassVar[str] = "ResourceSlice"

    spec: ResourceSliceSpec = ResourceSliceSpec()


# --- ResourceClaim ------------------------------------------------------------


class CapacityRequirements(Spec, frozen=True):
    requests: dict[str, Quantity] = {}


class ExactDeviceRequest(Spec, frozen=True):
    device_class_name: str = ""
    selectors: list[DeviceSelector] = []
    allocation_mode: str | None = None
    count: int | None = None
    admin_access: bool | None = None
    tolerations: list[DeviceToleration] = []
    capacity: CapacityRequirements | None = None
    derived_attributes: list[Any] = []


class DeviceSubRequest(Spec, frozen=True):
    name: str = ""
    device_class_name: str = ""
    selectors: list[DeviceSelector] = []
    allocation_mode: str | None = None
    count: int | None = None
    tolerations: list[DeviceToleration] = []
    capacity: CapacityRequirements | None = None
    derived_attributes: list[Any] = []


class DeviceRequest(Spec, frozen=True):
    name: str = ""
    exactly: ExactDeviceRequest | None = None
    first_available: list[DeviceSubRequest] = []


class DeviceConstraint(Spec, frozen=True):
    requests: list[str] = []
    match_attribute: str | None = None
    distinct_attribute: str | None = None


class DeviceClaimConfiguration(Spec, frozen=True):
    requests: list[str] = []
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceClaim(Spec, frozen=True):
    requests: list[DeviceRequest] = []
    constraints: list[DeviceConstraint] = []
    config: list[DeviceClaimConfiguration] = []


class ResourceClaimSpec(Spec, frozen=True):
    devices: DeviceClaim = DeviceClaim()


class DeviceRequestAllocationResult(Spec, frozen=True):
    request: str = ""
    driver: str = ""
    pool: str = ""
    device: str = ""
    admin_access: bool | None = None
    tolerations: list[DeviceToleration] = []
    binding_conditions: list[str] = []
    binding_failure_conditions: list[str] = []
    share_id: str | None = msgspec.field(default=None, name="shareID")
    consumed_capacity: dict[str, Quantity] = {}
    skip_node_operations: list[str] = []


class DeviceAllocationConfiguration(Spec, frozen=True):
    source: str = ""
    requests: list[str] = []
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceAllocationResult(Spec, frozen=True):
    results: list[DeviceRequestAllocationResult] = []
    config: list[DeviceAllocationConfiguration] = []


class AllocationResult(Spec, frozen=True):
    devices: DeviceAllocationResult = DeviceAllocationResult()
    node_selector: NodeSelector | None = None
    allocation_timestamp: str | None = None


class ResourceClaimConsumerReference(Spec, frozen=True):
    api_group: str | None = None
    resource: str = ""
    name: str = ""
    uid: str = ""


class AllocatedDeviceStatus(Spec, frozen=True):
    driver: str = ""
    pool: str = ""
    device: str = ""
    share_id: str | None = msgspec.field(default=None, name="shareID")
    conditions: list[dict[str, Any]] = []
    data: Any = None
    network_data: dict[str, Any] | None = None


class ResourceClaimStatus(Spec, frozen=True):
    allocation: AllocationResult | None = None
    reserved_for: list[ResourceClaimConsumerReference] = []
    devices: list[AllocatedDeviceStatus] = []


class ResourceClaim(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = V1
    KIND: ClassVar[str] = "ResourceClaim"
    NAMESPACED: ClassVar[bool] = True

    spec: ResourceClaimSpec = ResourceClaimSpec()
    status: ResourceClaimStatus = ResourceClaimStatus()

    @property
    def allocated(self) -> bool:
        return self.status.allocation is not None


class ResourceClaimTemplateSpec(Spec, frozen=True):
    metadata: ObjectMeta = ObjectMeta()
    spec: ResourceClaimSpec = ResourceClaimSpec()


class ResourceClaimTemplate(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = V1
    KIND: ClassVar[str] = "ResourceClaimTemplate"
    NAMESPACED: ClassVar[bool] = True

    spec: ResourceClaimTemplateSpec = ResourceClaimTemplateSpec()


# --- DeviceTaintRule ----------------------------------------------------------


class DeviceTaintSelector(Spec, frozen=True):
    driver: str | None = None
    pool: str | None = None
    device: str | None = None


class DeviceTaintRuleSpec(Spec, frozen=True):
    device_selector: DeviceTaintSelector | None = None
    taint: DeviceTaint = DeviceTaint()


class DeviceTaintRuleStatus(Spec, frozen=True):
    conditions: list[dict[str, Any]] = []


class DeviceTaintRule(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = V1
    KIND: ClassVar[str] = "DeviceTaintRule"

    spec: DeviceTaintRuleSpec = DeviceTaintRuleSpec()
    status: DeviceTaintRuleStatus = DeviceTaintRuleStatus()
