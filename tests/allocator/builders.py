"""Small builders for allocator scenarios: slices, devices, classes, claims, nodes.

Names follow the upstream shared test table (driver-a, pool-1, req-0, ...),
so scenarios ported from it read the same.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dralab.api.base import KubeObject, ObjectMeta
from dralab.api.core import (
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
)
from dralab.api.quantity import Quantity, parse_quantity
from dralab.api.resource import (
    AllocationResult,
    CapacityRequestPolicy,
    CapacityRequestPolicyRange,
    CapacityRequirements,
    CELDeviceSelector,
    Counter,
    CounterSet,
    Device,
    DeviceAllocationResult,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClaim,
    DeviceClaimConfiguration,
    DeviceClass,
    DeviceClassConfiguration,
    DeviceClassSpec,
    DeviceConstraint,
    DeviceCounterConsumption,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSelector,
    DeviceSubRequest,
    DeviceTaint,
    DeviceTaintRule,
    DeviceTaintRuleSpec,
    DeviceTaintSelector,
    DeviceToleration,
    ExactDeviceRequest,
    OpaqueDeviceConfiguration,
    ResourceClaim,
    ResourceClaimSpec,
    ResourceClaimStatus,
    ResourcePool,
    ResourceSlice,
    ResourceSliceSpec,
)

DRIVER_A = "driver-a"
DRIVER_B = "driver-b"
CLASS_A = "class-a"
CLASS_B = "class-b"
NODE_1 = "node-1"
NODE_2 = "node-2"
REGION_1 = "region-1"
REGION_2 = "region-2"
ALL_NODES = "*all-nodes"
PER_DEVICE = "*per-device"


@dataclass(frozen=True)
class Version:
    """Marks a string attribute value as a semantic version."""

    text: str


def q(value: str | int | Quantity) -> Quantity:
    if isinstance(value, Quantity):
        return value
    return parse_quantity(str(value))


def attribute(value: Any) -> DeviceAttribute:
    if isinstance(value, DeviceAttribute):
        return value
    if isinstance(value, Version):
        return DeviceAttribute(version=value.text)
    if isinstance(value, bool):
        return DeviceAttribute(bool_=value)
    if isinstance(value, int):
        return DeviceAttribute(int_=value)
    if isinstance(value, str):
        return DeviceAttribute(string=value)
    if isinstance(value, list) and value:
        first = value[0]
        if isinstance(first, Version):
            return DeviceAttribute(versions=[v.text for v in value])
        if isinstance(first, bool):
            return DeviceAttribute(bools=list(value))
        if isinstance(first, int):
            return DeviceAttribute(ints=list(value))
        return DeviceAttribute(strings=list(value))
    raise TypeError(f"cannot make an attribute of {value!r}")


def policy_range(minimum: str | int, step: str | int | None = None,
                 maximum: str | int | None = None, default: str | int | None = None
                 ) -> CapacityRequestPolicy:
    return CapacityRequestPolicy(
        default=q(default) if default is not None else q(minimum),
        valid_range=CapacityRequestPolicyRange(
            min=q(minimum),
            step=q(step) if step is not None else None,
            max=q(maximum) if maximum is not None else None,
        ),
    )


def policy_values(default: str | int, *values: str | int) -> CapacityRequestPolicy:
    return CapacityRequestPolicy(default=q(default), valid_values=[q(default)] +
                                 [q(v) for v in values])


def capacity(value: str | int, policy: CapacityRequestPolicy | None = None) -> DeviceCapacity:
    return DeviceCapacity(value=q(value), request_policy=policy)


def taint(key: str = "taint-key", value: str | None = "taint-value",
          effect: str = "NoSchedule") -> DeviceTaint:
    return DeviceTaint(key=key, value=value, effect=effect)


def toleration(key: str | None = "taint-key", operator: str | None = "Exists",
               value: str | None = None, effect: str | None = None) -> DeviceToleration:
    return DeviceToleration(key=key, operator=operator, value=value, effect=effect)


def consumes(counter_set: str, **counters: str | int) -> DeviceCounterConsumption:
    return DeviceCounterConsumption(
        counter_set=counter_set,
        counters={k.replace("_", "-"): Counter(value=q(v)) for k, v in counters.items()})


def counter_set(name: str, **counters: str | int) -> CounterSet:
    return CounterSet(name=name, counters={k.replace("_", "-"): Counter(value=q(v))
                                           for k, v in counters.items()})


def node_selector(key: str, *values: str, field_: bool = False) -> NodeSelector:
    req = NodeSelectorRequirement(key=key, operator="In", values=list(values))
    term = (NodeSelectorTerm(match_fields=[req]) if field_
            else NodeSelectorTerm(match_expressions=[req]))
    return NodeSelector(node_selector_terms=[term])


def local_selector(node: str) -> NodeSelector:
    return node_selector("metadata.name", node, field_=True)


def device(name: str, *, attrs: Mapping[str, Any] | None = None,
           cap: Mapping[str, str | int | DeviceCapacity] | None = None,
           taints: Sequence[DeviceTaint] = (),
           counters: Sequence[DeviceCounterConsumption] = (),
           multi: bool = False,
           binding: Sequence[str] = (), binding_failure: Sequence[str] = (),
           binds_to_node: bool | None = None,
           on: str | NodeSelector | None = None) -> Device:
    """A device; ``on`` sets per-device node selection (node name, ALL_NODES or a selector)."""
    capacities = {k: v if isinstance(v, DeviceCapacity) else capacity(v)
                  for k, v in (cap or {}).items()}
    node_fields: dict[str, Any] = {}
    if isinstance(on, NodeSelector):
        node_fields["node_selector"] = on
    elif on == ALL_NODES:
        node_fields["all_nodes"] = True
    elif on is not None:
        node_fields["node_name"] = on
    return Device(
        name=name,
        attributes={k: attribute(v) for k, v in (attrs or {}).items()},
        capacity=capacities,
        taints=list(taints),
        consumes_counters=list(counters),
        allow_multiple_allocations=True if multi else None,
        binding_conditions=list(binding),
        binding_failure_conditions=list(binding_failure),
        binds_to_node=binds_to_node,
        **node_fields,
    )


def devices(count: int, start: int = 0, prefix: str = "device-") -> list[Device]:
    return [device(f"{prefix}{i}") for i in range(start, start + count)]


def rslice(name: str, on: str | NodeSelector, pool: str, driver: str = DRIVER_A,
           *devs: Device, count: int = 1, generation: int = 1,
           counters: Sequence[CounterSet] = ()) -> ResourceSlice:
    """A ResourceSlice. ``on``: node name, ALL_NODES, PER_DEVICE or a NodeSelector."""
    scope: dict[str, Any] = {}
    if isinstance(on, NodeSelector):
        scope["node_selector"] = on
    elif on == ALL_NODES:
        scope["all_nodes"] = True
    elif on == PER_DEVICE:
        scope["per_device_node_selection"] = True
    else:
        scope["node_name"] = on
    return ResourceSlice(
        api_version="resource.k8s.io/v1", kind="ResourceSlice",
        metadata=ObjectMeta(name=name),
        spec=ResourceSliceSpec(
            driver=driver,
            pool=ResourcePool(name=pool, generation=generation, resource_slice_count=count),
            devices=list(devs),
            shared_counters=list(counters),
            **scope,
        ),
    )


def one_device_slice(name: str, on: str | NodeSelector, pool: str, driver: str = DRIVER_A,
                     count: int = 1, generation: int = 1) -> ResourceSlice:
    return rslice(name, on, pool, driver, device("device-1"), count=count,
                  generation=generation)


def cel(expression: str) -> DeviceSelector:
    return DeviceSelector(cel=CELDeviceSelector(expression=expression))


def dclass(name: str, driver: str | None = None, *selectors: str,
           config: Sequence[OpaqueDeviceConfiguration] = ()) -> DeviceClass:
    sels = [cel(f'device.driver == "{driver}"')] if driver else []
    sels += [cel(s) for s in selectors]
    return DeviceClass(
        api_version="resource.k8s.io/v1", kind="DeviceClass",
        metadata=ObjectMeta(name=name),
        spec=DeviceClassSpec(selectors=sels,
                             config=[DeviceClassConfiguration(opaque=c) for c in config]),
    )


def opaque(driver: str, attr: str) -> OpaqueDeviceConfiguration:
    return OpaqueDeviceConfiguration(driver=driver, parameters={attr: attr + "Value"})


def request(name: str, cls: str = CLASS_A, count: int | None = 1, *selectors: str,
            mode: str | None = None, admin: bool | None = None,
            tolerations: Sequence[DeviceToleration] = (),
            capacity_requests: Mapping[str, str | int] | None = None) -> DeviceRequest:
    return DeviceRequest(name=name, exactly=ExactDeviceRequest(
        device_class_name=cls,
        selectors=[cel(s) for s in selectors],
        allocation_mode=mode or ("ExactCount" if count is not None else None),
        count=count if mode != "All" else None,
        admin_access=admin,
        tolerations=list(tolerations),
        capacity=(CapacityRequirements(requests={k: q(v) for k, v in capacity_requests.items()})
                  if capacity_requests is not None else None),
    ))


def all_request(name: str, cls: str = CLASS_A, *selectors: str, **kw: Any) -> DeviceRequest:
    return request(name, cls, None, *selectors, mode="All", **kw)


def sub(name: str, cls: str = CLASS_A, count: int = 1, *selectors: str,
        mode: str | None = None, tolerations: Sequence[DeviceToleration] = (),
        capacity_requests: Mapping[str, str | int] | None = None) -> DeviceSubRequest:
    return DeviceSubRequest(
        name=name, device_class_name=cls, selectors=[cel(s) for s in selectors],
        allocation_mode=mode or "ExactCount", count=None if mode == "All" else count,
        tolerations=list(tolerations),
        capacity=(CapacityRequirements(requests={k: q(v) for k, v in capacity_requests.items()})
                  if capacity_requests is not None else None),
    )


def first_available(name: str, *subs: DeviceSubRequest) -> DeviceRequest:
    return DeviceRequest(name=name, first_available=list(subs))


def match(attr: str, *requests: str) -> DeviceConstraint:
    return DeviceConstraint(match_attribute=attr, requests=list(requests))


def distinct(attr: str, *requests: str) -> DeviceConstraint:
    return DeviceConstraint(distinct_attribute=attr, requests=list(requests))


def claim_config(requests: Sequence[str], config: OpaqueDeviceConfiguration
                 ) -> DeviceClaimConfiguration:
    return DeviceClaimConfiguration(requests=list(requests), opaque=config)


def claim(name: str, *requests: DeviceRequest, constraints: Sequence[DeviceConstraint] = (),
          config: Sequence[DeviceClaimConfiguration] = (), namespace: str | None = None,
          uid: str | None = None) -> ResourceClaim:
    return ResourceClaim(
        api_version="resource.k8s.io/v1", kind="ResourceClaim",
        metadata=ObjectMeta(name=name, namespace=namespace, uid=uid),
        spec=ResourceClaimSpec(devices=DeviceClaim(
            requests=list(requests), constraints=list(constraints), config=list(config))),
    )


def simple_claim(name: str, req: str = "req-0", cls: str = CLASS_A,
                 constraints: Sequence[DeviceConstraint] = ()) -> ResourceClaim:
    return claim(name, request(req, cls), constraints=constraints)


def in_use(name: str, *devs: tuple[str, str, str], admin: bool = False,
           share: str | None = None,
           consumed: Mapping[str, str | int] | None = None) -> ResourceClaim:
    """An allocated claim holding ``devs`` (driver, pool, device) — marks them in use."""
    results = [DeviceRequestAllocationResult(
        request="req", driver=d, pool=p, device=n, admin_access=True if admin else None,
        share_id=share, consumed_capacity={k: q(v) for k, v in (consumed or {}).items()})
        for d, p, n in devs]
    base = claim(name, uid=f"uid-{name}")
    return ResourceClaim(
        api_version=base.api_version, kind=base.kind, metadata=base.metadata, spec=base.spec,
        status=ResourceClaimStatus(allocation=AllocationResult(
            devices=DeviceAllocationResult(results=results))),
    )


def node(name: str = NODE_1, region: str = REGION_1, **labels: str) -> Node:
    all_labels = {"region": region, "planet": "earth", **labels}
    return Node(api_version="v1", kind="Node",
                metadata=ObjectMeta(name=name, labels=all_labels))


def taint_rule(name: str, t: DeviceTaint, driver: str | None = None, pool: str | None = None,
               dev: str | None = None) -> DeviceTaintRule:
    return DeviceTaintRule(
        api_version="resource.k8s.io/v1", kind="DeviceTaintRule",
        metadata=ObjectMeta(name=name),
        spec=DeviceTaintRuleSpec(
            device_selector=DeviceTaintSelector(driver=driver, pool=pool, device=dev),
            taint=t))


# --- scenarios -------------------------------------------------------------------------

Result = tuple[str, str, str, str]  # request, driver, pool, device
UNSCHEDULABLE = "unschedulable"


@dataclass
class Scenario:
    """Input objects and the expected outcome.

    ``expect`` is a list with one list of results per claim, UNSCHEDULABLE, or
    ``("error", substring)``.
    """

    name: str
    claims: Sequence[ResourceClaim]
    objects: Iterable[KubeObject]
    expect: Any
    node: Node | str | None = None
    features: Any = None
    node_selectors: Sequence[NodeSelector | None] | None = None
    steps: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.name


def r(request: str, pool: str, dev: str, driver: str = DRIVER_A) -> Result:
    return (request, driver, pool, dev)


def shared_device(name: str, cap: Mapping[str, str | int | DeviceCapacity], **kw: Any) -> Device:
    """A multi-allocatable device."""
    return device(name, cap=cap, multi=True, **kw)


def consumes_grouped(counter_set: str, groups: Sequence[str], **counters: str | int
                     ) -> DeviceCounterConsumption:
    """Counter consumption with compatibility groups (DRADeviceCompatibilityGroups)."""
    base = consumes(counter_set, **counters)
    return DeviceCounterConsumption(counter_set=base.counter_set, counters=base.counters,
                                    compatibility_groups=list(groups))
