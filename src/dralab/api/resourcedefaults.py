"""The API server's defaults for the device requests of ResourceClaims and ResourceClaimTemplates.

kube-apiserver fills them in when it decodes a resource.k8s.io/v1 object, so every claim stored
in a cluster (and every claim the resourceclaim controller copies from a stored template) has
them; manifests written by hand usually do not. Applied to what dralab writes, its claims read
as the cluster would hold them. Kubernetes v1.36.2, pkg/apis/resource/v1/defaults.go
(SetDefaults_ExactDeviceRequest, SetDefaults_DeviceSubRequest) and zz_generated.defaults.go
(a DeviceToleration's operator):

* ``allocationMode``: ``ExactCount`` when empty;
* ``count``: 1 when the mode is ``ExactCount`` and the count is unset (Go's zero value, so an
  explicit 0 as well);
* a toleration's ``operator``: ``Equal`` when empty.

Nothing else in a claim's spec has a default. Specs are immutable: a spec that already has
every default is returned as it is (the same object).
"""

from __future__ import annotations

from typing import TypeVar

from msgspec.structs import replace

from .resource import (
    DeviceRequest,
    DeviceSubRequest,
    DeviceToleration,
    ExactDeviceRequest,
    ResourceClaimSpec,
)

__all__ = ["default_claim_spec"]

EXACT_COUNT = "ExactCount"
_R = TypeVar("_R", ExactDeviceRequest, DeviceSubRequest)


def _tolerations(items: list[DeviceToleration]) -> list[DeviceToleration]:
    if all(t.operator for t in items):
        return items
    return [t if t.operator else replace(t, operator="Equal") for t in items]


def _request(request: _R) -> _R:
    mode = request.allocation_mode or EXACT_COUNT
    count = request.count
    if mode == EXACT_COUNT and not count:
        count = 1
    tolerations = _tolerations(request.tolerations)
    if (mode == request.allocation_mode and count == request.count
            and tolerations is request.tolerations):
        return request
    return replace(request, allocation_mode=mode, count=count, tolerations=tolerations)


def _device_request(request: DeviceRequest) -> DeviceRequest:
    exactly = _request(request.exactly) if request.exactly is not None else None
    subs = [_request(sub) for sub in request.first_available]
    if exactly is request.exactly and all(
            a is b for a, b in zip(subs, request.first_available, strict=True)):
        return request
    return replace(request, exactly=exactly, first_available=subs)


def default_claim_spec(spec: ResourceClaimSpec) -> ResourceClaimSpec:
    """``spec`` with the API server's defaults filled in."""
    requests = [_device_request(r) for r in spec.devices.requests]
    if all(a is b for a, b in zip(requests, spec.devices.requests, strict=True)):
        return spec
    return replace(spec, devices=replace(spec.devices, requests=requests))
