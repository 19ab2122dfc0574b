"""DRA devices in quota, as Kueue's KEP-2941 accounts for them.

Two paths lead into a ClusterQueue's quota:

* **ResourceClaimTemplates** a pod template references: each device request's
  DeviceClass is looked up in the Configuration's ``resources.deviceClassMappings``
  and charged to the mapping's ``name``. How much depends on the mapping's
  ``sources``: none, **count** mode (the request's ``count``, default 1);
  a ``counter`` source, **counters** mode for partitionable devices (the largest
  value of that counter that any eligible device consumes, times ``count``);
  a ``capacity`` source, **capacity** mode for consumable capacity (the request's
  ``capacity.requests`` for that dimension, or the device's default or full
  capacity, rounded up to what the device's request policy allows; the largest over
  eligible devices, times ``count``). Eligible devices: in ResourceSlices of the
  source's driver, accepted by the source's ``deviceSelector``, the DeviceClass's
  selectors and the request's own.
* **DRA-backed extended resources** (a DeviceClass with ``extendedResourceName``):
  the container request already counts them, once; the claim the scheduler creates
  for them is never charged again. If a mapping also names that DeviceClass, the
  mapping's name is the quota key.

A ``firstAvailable`` request is charged as the envelope of its alternatives (the
largest charge of each resource), so that whichever the scheduler picks fits the
quota held (Kueue PR #14130 for issue #13599). A DeviceClass no mapping names makes
the workload inadmissible with Kueue's message; so does ``allocationMode: All``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dralab.api.core import PodSpec
from dralab.api.resource import (
    Device,
    DeviceClass,
    DeviceSelector,
    ResourceClaimTemplate,
    ResourceSlice,
)
from dralab.api.semver import SemverError, parse_semver
from dralab.cel import CelError, compile_selector, device_input

from .objects import DeviceClassMapping, DeviceClassSourceConfig, KueueConfiguration

__all__ = ["DraAccounting", "Inadmissible", "claim_charges"]


class Inadmissible(Exception):
    """The workload cannot be charged; ``message`` is the condition message Kueue writes."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True, slots=True)
class _Mapped:
    resource: str
    source: DeviceClassSourceConfig | None


@dataclass(slots=True)
class DraAccounting:
    """What DRA charging needs from a snapshot: the mappings, DeviceClasses, claim
    templates (``namespace/name``) and ResourceSlices."""

    mappings: Sequence[DeviceClassMapping] = ()
    device_classes: Mapping[str, DeviceClass] = field(default_factory=dict)
    templates: Mapping[str, ResourceClaimTemplate] = field(default_factory=dict)
    slices: Sequence[ResourceSlice] = ()
    _by_class: dict[str, _Mapped] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        for mapping in self.mappings:
            source = mapping.sources[0] if mapping.sources else None
            for name in mapping.device_class_names:
                self._by_class.setdefault(name, _Mapped(mapping.name, source))

    @classmethod
    def of(cls, config: KueueConfiguration | None, objects: Iterable[Any]) -> DraAccounting:
        classes: dict[str, DeviceClass] = {}
        templates: dict[str, ResourceClaimTemplate] = {}
        slices: list[ResourceSlice] = []
        for obj in objects:
            if isinstance(obj, DeviceClass):
                classes[obj.name] = obj
            elif isinstance(obj, ResourceClaimTemplate):
                templates[obj.ref] = obj
            elif isinstance(obj, ResourceSlice):
                slices.append(obj)
        mappings = config.resources.device_class_mappings if config else []
        return cls(mappings, classes, templates, slices)

    # --- extended resources ----------------------------------------------------------

    def extended_resource_key(self, resource: str) -> str:
        """The quota key of a container's request for ``resource``: the mapping's name
        when a DeviceClass backs it and a count-mode mapping names that class."""
        for device_class in self.device_classes.values():
            if device_class.spec.extended_resource_name == resource:
                mapped = self._by_class.get(device_class.name)
                if mapped is not None:
                    if mapped.source is not None:
                        raise Inadmissible(
                            f"extended resource {resource} resolves to DeviceClass "
                            f"{device_class.name}, whose mapping has sources")
                    return mapped.resource
        return resource

    # --- one device request ----------------------------------------------------------

    def _eligible(self, driver: str, selectors: Sequence[DeviceSelector]) -> list[Device]:
        compiled = []
        for selector in selectors:
            if selector.cel is None:
                continue
            try:
                compiled.append(compile_selector(selector.cel.expression))
            except CelError as exc:
                raise Inadmissible(f"CEL compilation failed: {exc}") from None
        out = []
        for slice_ in self.slices:
            if slice_.spec.driver != driver:
                continue
            for device in slice_.spec.devices:
                if all(_accepts(c, driver, device) for c in compiled):
                    out.append(device)
        return out

    def _selectors(self, class_name: str, own: Sequence[DeviceSelector],
                   source_selector: DeviceSelector | None) -> list[DeviceSelector]:
        device_class = self.device_classes.get(class_name)
        out = list(device_class.spec.selectors) if device_class else []
        out.extend(own)
        if source_selector is not None:
            out.append(source_selector)
        return out

    def charge(self, class_name: str, count: int, selectors: Sequence[DeviceSelector],
               capacity: Mapping[str, Any], podset: str, where: str) -> tuple[str, int]:
        """(quota resource, milli-units) one exact device request costs one pod."""
        mapped = self._by_class.get(class_name)
        if mapped is None:
            raise Inadmissible(
                f'{where}: Not found: "DeviceClass {class_name} is not mapped in DRA '
                f'configuration for podset {podset}"')
        source = mapped.source
        if source is None:
            return mapped.resource, count * 1000
        if source.counter is not None:
            counter = source.counter
            devices = self._eligible(counter.driver, self._selectors(
                class_name, selectors, counter.device_selector))
            if not devices:
                raise Inadmissible(f"insufficient matching devices for DeviceClass "
                                   f"{class_name} in podset {podset}")
            values = [c.value.milli_value() for d in devices for use in d.consumes_counters
                      for name, c in use.counters.items() if name == counter.name]
            if not values:
                raise Inadmissible(f"no consumesCounters entry for counter {counter.name} "
                                   f"in DeviceClass {class_name} devices")
            return mapped.resource, count * max(values)
        assert source.capacity is not None
        dimension = source.capacity
        devices = self._eligible(dimension.driver, self._selectors(
            class_name, selectors, dimension.device_selector))
        asked = _requested(capacity, dimension.name, dimension.driver)
        charges = [c for d in devices
                   if (c := _capacity_charge(d, dimension.name, dimension.driver, asked))
                   is not None]
        if not charges:
            raise Inadmissible(f"insufficient matching devices for DeviceClass {class_name} "
                               f"capacity {dimension.name} in podset {podset}")
        return mapped.resource, count * max(charges)


def _qualified(name: str, driver: str) -> str:
    return name if "/" in name else f"{driver}/{name}"


def _requested(capacity: Mapping[str, Any], name: str, driver: str) -> int | None:
    wanted = _qualified(name, driver)
    for key, quantity in capacity.items():
        if _qualified(key, driver) == wanted:
            return int(quantity.milli_value())
    return None


def _capacity_charge(device: Device, name: str, driver: str, asked: int | None) -> int | None:
    """What one device charges for ``asked`` (None: its default or whole capacity),
    rounded up as its request policy rounds; None if the device cannot serve it."""
    wanted = _qualified(name, driver)
    found = next((c for key, c in device.capacity.items()
                  if _qualified(key, driver) == wanted), None)
    if found is None:
        return None
    whole = found.value.milli_value()
    policy = found.request_policy
    if asked is None:
        return policy.default.milli_value() if policy and policy.default else whole
    if policy is None:
        return asked if asked <= whole else None
    if policy.valid_values:
        fitting = sorted(v.milli_value() for v in policy.valid_values
                         if v.milli_value() >= asked)
        return fitting[0] if fitting else None
    if policy.valid_range is not None:
        low = policy.valid_range.min.milli_value() if policy.valid_range.min else 0
        high = policy.valid_range.max.milli_value() if policy.valid_range.max else whole
        value = max(asked, low)
        step = policy.valid_range.step.milli_value() if policy.valid_range.step else 0
        if step > 0:
            value = low + -(-(value - low) // step) * step
        return value if value <= high else None
    return asked if asked <= whole else None


def _attribute(value: Any, version: bool) -> Any:
    if version:
        return [parse_semver(v) for v in value] if isinstance(value, list) \
            else parse_semver(value)
    return value


def _accepts(selector: Any, driver: str, device: Device) -> bool:
    try:
        attributes = {name: _attribute(a.value, a.version is not None or a.versions is not None)
                      for name, a in device.attributes.items() if a.value is not None}
        data = device_input(driver, attributes,
                            {name: c.value for name, c in device.capacity.items()},
                            bool(device.allow_multiple_allocations))
        return bool(selector.evaluate(data))
    except (CelError, SemverError):
        return False  # a device the selector cannot judge is not eligible, as in the scheduler


def _envelope(charges: Iterable[Mapping[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for one in charges:
        for name, value in one.items():
            out[name] = max(out.get(name, 0), value)
    return out


def claim_charges(spec: PodSpec, namespace: str, podset: str, podset_index: int,
                  dra: DraAccounting) -> dict[str, int]:
    """What the claim templates of one pod of a pod set cost (milli-units per resource)."""
    out: dict[str, int] = {}
    for index, claim in enumerate(spec.resource_claims):
        if claim.resource_claim_template_name is None:
            continue  # a claim made elsewhere: Kueue charges only templates
        where = (f"spec.podSets[{podset_index}].template.spec.resourceClaims[{index}]"
                 f".resourceClaimTemplateName")
        key = f"{namespace}/{claim.resource_claim_template_name}"
        template = dra.templates.get(key)
        if template is None:
            raise Inadmissible(f'{where}: Not found: "ResourceClaimTemplate '
                               f'{claim.resource_claim_template_name} not found"')
        for request in template.spec.spec.devices.requests:
            if request.exactly is not None:
                exact = request.exactly
                if exact.allocation_mode == "All":
                    raise Inadmissible(f"{where}: Unsupported value: allocationMode All of "
                                       f"request {request.name} is not supported")
                resource, amount = dra.charge(
                    exact.device_class_name, exact.count or 1, exact.selectors,
                    exact.capacity.requests if exact.capacity else {}, podset, where)
                out[resource] = out.get(resource, 0) + amount
                continue
            alternatives = []
            for sub in request.first_available:
                if sub.allocation_mode == "All":
                    raise Inadmissible(f"{where}: Unsupported value: allocationMode All of "
                                       f"request {request.name}/{sub.name} is not supported")
                resource, amount = dra.charge(
                    sub.device_class_name, sub.count or 1, sub.selectors,
                    sub.capacity.requests if sub.capacity else {}, podset, where)
                alternatives.append({resource: amount})
            for resource, amount in _envelope(alternatives).items():
                out[resource] = out.get(resource, 0) + amount
    return out
