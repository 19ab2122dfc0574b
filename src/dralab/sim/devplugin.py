"""The device-plugin equivalent of a job kind's claim templates.

In device-plugin mode a pod has no claims: it asks for extended resources, as
the NVIDIA device plugin advertises them (mixed MIG strategy): ``nvidia.com/gpu``
for whole GPUs and ``nvidia.com/mig-<profile>`` for MIG devices, with the
profile's ``+`` written ``.`` (``1g.10gb+me`` -> ``nvidia.com/mig-1g.10gb.me``).

A request is translated by what it selects, not by how it is spelled: its
DeviceClass's selectors and its own are evaluated (CEL, as the allocator does)
over every device the fleet publishes in DRA mode. If all devices it matches are
whole NVIDIA GPUs it becomes ``nvidia.com/gpu: <count>``; if all are MIG devices
of one profile, ``nvidia.com/mig-<profile>: <count>``. Anything else has no
device-plugin equivalent and is reported with the reason (other drivers, a mix
of GPUs and MIG profiles, no match, ``allocationMode: All``, ``adminAccess``,
an unknown class, a CEL error). A prioritized list (``firstAvailable``) is
translated by its first, preferred, alternative. Capacity requests (GPU memory
shares) get the whole device: the device plugin cannot share by memory.

Pure: objects in, values out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import msgspec

from dralab.api.core import Container, ContainerResourceClaim, Pod
from dralab.api.quantity import Quantity
from dralab.api.resource import (
    Device,
    DeviceAttribute,
    DeviceClass,
    DeviceSubRequest,
    ExactDeviceRequest,
    ResourceClaimTemplate,
    ResourceSlice,
)
from dralab.api.semver import SemverError, parse_semver
from dralab.cel import (
    AttributeValue,
    CelError,
    CompiledSelector,
    DeviceInput,
    compile_selector,
    device_input,
)

from .spec import DeviceShape

__all__ = [
    "GPU_RESOURCE",
    "DevicePluginPlan",
    "FleetDevices",
    "device_plugin_pod",
    "mig_resource",
    "plan_claims",
]

GPU_RESOURCE = "nvidia.com/gpu"
NVIDIA_DRIVER = "gpu.nvidia.com"
_MIG_PREFIX = "nvidia.com/mig-"


def mig_resource(profile: str) -> str:
    """The device plugin's resource name for a MIG profile: ``nvidia.com/mig-1g.10gb``."""
    return _MIG_PREFIX + profile.replace("+", ".")


class DevicePluginPlan(msgspec.Struct, frozen=True, kw_only=True):
    """What a template kind's pods ask for in device-plugin mode, or why nothing can be said.

    ``requests``: (pod claim, request, resource, count) per translated request.
    ``error``: the first request that has no equivalent (one line, naming the claim
    and request); then ``requests`` is empty. ``shape``: the demand in the terms of
    a built-in device shape, for metrics (None: no GPU demand that can be named).
    """

    requests: tuple[tuple[str, str, str, int], ...] = ()
    error: str | None = None
    shape: DeviceShape | None = None

    def resources(self) -> dict[str, int]:
        """Total count per extended resource, sorted by name."""
        out: dict[str, int] = {}
        for _, _, resource, count in self.requests:
            out[resource] = out.get(resource, 0) + count
        return dict(sorted(out.items()))


@dataclass(frozen=True, slots=True)
class _Device:
    key: str           # driver/pool/device, for messages
    resource: str | None  # its device-plugin resource; None: none
    what: str          # what it is, for messages ("gpu.example.com devices")
    input: DeviceInput | None
    problem: str | None  # why it cannot be a CEL input


class _Untranslatable(Exception):
    pass


def _attribute_value(attr: DeviceAttribute) -> AttributeValue | None:
    if attr.version is not None:
        return parse_semver(attr.version)
    if attr.versions is not None:
        return [parse_semver(v) for v in attr.versions]
    value = attr.value
    return value if not isinstance(value, list) else list(value)


def _string(attrs: Mapping[str, DeviceAttribute], name: str) -> str:
    attr = attrs.get(name)
    return attr.string if attr is not None and attr.string is not None else ""


# Attributes that tell one physical GPU from another and nothing else. Every node of
# a pool publishes the same devices but for these, so devices equal but for them are
# evaluated once: a fleet of 100 nodes costs what one node per pool costs. (A selector
# naming one GPU by UUID is the price: generated UUIDs are not what templates select on.)
_IDENTITY = frozenset({"uuid", "parentUUID"})


def _signature(driver: str, d: Device) -> bytes:
    return msgspec.msgpack.encode([
        driver, {k: a for k, a in d.attributes.items() if k not in _IDENTITY},
        {n: str(c.value) for n, c in d.capacity.items()}, bool(d.allow_multiple_allocations)])


class FleetDevices:
    """The devices a fleet publishes (one per distinct kind, see ``_IDENTITY``), as CEL
    inputs with their device-plugin resource.

    Built once per fleet; compiled selectors are cached by expression.
    """

    def __init__(self, slices: Iterable[ResourceSlice]) -> None:
        self.devices: list[_Device] = []
        self._compiled: dict[str, CompiledSelector | str] = {}
        seen: set[bytes] = set()
        for s in slices:
            driver = s.spec.driver
            for d in s.spec.devices:
                signature = _signature(driver, d)
                if signature not in seen:
                    seen.add(signature)
                    self.devices.append(self._device(driver, s.spec.pool.name, d))

    @staticmethod
    def _device(driver: str, pool: str, d: Device) -> _Device:
        key = f"{driver}/{pool}/{d.name}"
        attrs = d.attributes
        kind = _string(attrs, "type") if driver == NVIDIA_DRIVER else ""
        resource: str | None = None
        what = f"{driver} devices"
        if kind == "gpu":
            resource = GPU_RESOURCE
        elif kind == "mig" and _string(attrs, "profile"):
            resource = mig_resource(_string(attrs, "profile"))
        elif kind:
            what = f"{driver} {kind} devices"
        try:
            values = {n: v for n, a in attrs.items() if (v := _attribute_value(a)) is not None}
            cel_input = device_input(driver, values,
                                     {n: c.value for n, c in d.capacity.items()},
                                     bool(d.allow_multiple_allocations))
        except (SemverError, CelError) as exc:
            return _Device(key, resource, what, None, f"device {key}: {exc}")
        return _Device(key, resource, what, cel_input, None)

    def _selector(self, expression: str) -> CompiledSelector:
        found = self._compiled.get(expression)
        if found is None:
            try:
                found = compile_selector(expression)
            except CelError as exc:
                found = str(exc)
            self._compiled[expression] = found
        if isinstance(found, str):
            raise _Untranslatable(f"CEL compile error: {found}")
        return found

    def matching(self, expressions: Sequence[str]) -> list[_Device]:
        """Devices every expression accepts (evaluated in order, as the allocator does)."""
        selectors = [self._selector(e) for e in expressions]
        out = []
        for dev in self.devices:
            ok = True
            for sel in selectors:
                if dev.input is None:
                    raise _Untranslatable(str(dev.problem))
                try:
                    ok = bool(sel.evaluate(dev.input))
                except CelError as exc:
                    raise _Untranslatable(f"CEL runtime error on device {dev.key}: {exc}"
                                          ) from None
                if not ok:
                    break
            if ok:
                out.append(dev)
        return out


def _class_expressions(cls: DeviceClass) -> list[str]:
    return [s.cel.expression for s in cls.spec.selectors if s.cel is not None]


def _request(source: ExactDeviceRequest | DeviceSubRequest, classes: Mapping[str, DeviceClass],
             fleet: FleetDevices) -> tuple[str, int]:
    """(resource, count) of one request; _Untranslatable with the reason otherwise."""
    if isinstance(source, ExactDeviceRequest) and source.admin_access:
        raise _Untranslatable("adminAccess")
    mode = source.allocation_mode or "ExactCount"
    if mode != "ExactCount":
        raise _Untranslatable(f"allocationMode {mode}")
    cls = classes.get(source.device_class_name)
    if cls is None:
        raise _Untranslatable(f"DeviceClass {source.device_class_name} is neither in the fleet "
                              "nor in the template")
    expressions = _class_expressions(cls) + [s.cel.expression for s in source.selectors
                                             if s.cel is not None]
    matched = fleet.matching(expressions)
    if not matched:
        raise _Untranslatable(f"class {cls.name} and its selectors match no device of the fleet")
    kinds = sorted({d.resource or d.what for d in matched})
    if len(kinds) > 1 or matched[0].resource is None:
        raise _Untranslatable(
            f"it matches {' and '.join(kinds)}: only whole NVIDIA GPUs ({GPU_RESOURCE}) or "
            f"MIG devices of one profile ({_MIG_PREFIX}<profile>) have an equivalent")
    # An unset or zero count means one device, as the API server defaults it.
    return kinds[0], source.count or 1


def _shape(requests: Sequence[tuple[str, str, str, int]],
           sources: Sequence[ExactDeviceRequest | DeviceSubRequest]) -> DeviceShape | None:
    gpus = sum(n for _, _, r, n in requests if r == GPU_RESOURCE)
    if gpus:
        if len(sources) == 1 and sources[0].capacity is not None \
                and "memory" in sources[0].capacity.requests:
            memory = sources[0].capacity.requests["memory"]
            return DeviceShape(type="share", memory=str(memory))
        return DeviceShape(type="gpu", count=gpus)
    for _, _, resource, _ in requests:
        if resource.startswith(_MIG_PREFIX):
            return DeviceShape(type="mig", profile=resource[len(_MIG_PREFIX):])
    return None


def plan_claims(pod: Pod, templates: Mapping[str, ResourceClaimTemplate],
                kind_template: tuple[str, int] | None, classes: Mapping[str, DeviceClass],
                fleet: FleetDevices) -> DevicePluginPlan:
    """Translate the claims of ``pod`` (their templates by name in ``templates``).

    ``kind_template``: (name, whole GPUs) of the template generated from the job
    kind's ``devices``, which keeps the built-in translation (whole GPUs).
    """
    requests: list[tuple[str, str, str, int]] = []
    sources: list[ExactDeviceRequest | DeviceSubRequest] = []
    for ref in pod.spec.resource_claims:
        name = ref.resource_claim_template_name or ""
        if kind_template is not None and name == kind_template[0] and name not in templates:
            if kind_template[1]:
                requests.append((ref.name, "", GPU_RESOURCE, kind_template[1]))
            continue
        rct = templates[name]
        for req in rct.spec.spec.devices.requests:
            label = f"claim {ref.name} (ResourceClaimTemplate {name}) request {req.name}"
            source: ExactDeviceRequest | DeviceSubRequest
            if req.exactly is not None:
                source = req.exactly
            elif req.first_available:
                source = req.first_available[0]
                label += f"/{source.name}"
            else:
                continue
            try:
                resource, count = _request(source, classes, fleet)
            except _Untranslatable as exc:
                return DevicePluginPlan(error=f"{label}: no device-plugin equivalent: {exc}")
            requests.append((ref.name, req.name, resource, count))
            sources.append(source)
    return DevicePluginPlan(requests=tuple(requests), shape=_shape(requests, sources))


def _add(resources: Mapping[str, Quantity], extra: Mapping[str, int]) -> dict[str, Quantity]:
    out = dict(resources)
    for name, count in extra.items():
        amount = Quantity.from_int(count)
        out[name] = out[name] + amount if name in out else amount
    return out


def _claim_owner(containers: Sequence[Container], claim: str, request: str) -> int | None:
    for i, c in enumerate(containers):
        for ref in c.resources.claims:
            if ref.name == claim and (ref.request is None or ref.request == request
                                      or not request):
                return i
    return None


def device_plugin_pod(pod: Pod, plan: DevicePluginPlan) -> Pod:
    """``pod`` without claims, asking for the plan's extended resources instead.

    Each request's resources go to the first container that uses its claim (or
    that request of it), else to the first init container that does, else to
    the first container: where a device-plugin manifest would put the limit.
    """
    spec = pod.spec
    extra: list[dict[str, int]] = [{} for _ in spec.containers]
    extra_init: list[dict[str, int]] = [{} for _ in spec.init_containers]
    for claim, request, resource, count in plan.requests:
        i = _claim_owner(spec.containers, claim, request)
        target = extra
        if i is None:
            i = _claim_owner(spec.init_containers, claim, request)
            target = extra_init if i is not None else extra
        if i is None:
            i = 0
        target[i][resource] = target[i].get(resource, 0) + count

    def rewrite(containers: Sequence[Container], adds: Sequence[dict[str, int]]
                ) -> list[Container]:
        out = []
        for c, add in zip(containers, adds, strict=True):
            r = c.resources
            no_claims: list[ContainerResourceClaim] = []
            out.append(msgspec.structs.replace(c, resources=msgspec.structs.replace(
                r, claims=no_claims, requests=_add(r.requests, add),
                limits=_add(r.limits, add))))
        return out

    if spec.containers:
        new_spec = msgspec.structs.replace(
            spec, resource_claims=[], containers=rewrite(spec.containers, extra),
            init_containers=rewrite(spec.init_containers, extra_init))
    else:
        new_spec = msgspec.structs.replace(spec, resource_claims=[])
    return msgspec.structs.replace(pod, spec=new_spec)
