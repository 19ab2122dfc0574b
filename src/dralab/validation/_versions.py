"""Validation of documents in an older served version: check the v1 form, report in their own.

The API server converts a v1beta1 or v1beta2 object to its internal (v1-shaped)
form and validates that. We do the same with ``dralab.api.versions.to_v1`` and
the v1 validators, then name every field as the document spells it. Fields of
the other layout (``exactly`` in a v1beta1 request, device fields outside
``basic``) are unknown to the version; the API server drops unknown fields,
which for a file means the object silently differs from what it says, so they
are reported as Forbidden (like the v1 validators do for v1beta1 fields).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, Final

from dralab.api.errors import FieldError
from dralab.api.versions import path_in_version, to_v1
from dralab.validation._context import Ctx, child, index

__all__ = ["validate_converted"]

_V1BETA1: Final = "resource.k8s.io/v1beta1"
_NOT_A_REQUEST_FIELD: Final = ("not a field of a resource.k8s.io/v1beta1 DeviceRequest; "
                               "v1beta1 has the request's fields directly on it "
                               "(`exactly` is the resource.k8s.io/v1 layout)")
_NOT_A_DEVICE_FIELD: Final = ("not a field of a resource.k8s.io/v1beta1 Device; it belongs "
                              "under `basic` (the flat device is the resource.k8s.io/v1 layout)")


def _requests_of(spec: Any, path: str) -> list[tuple[str, Mapping[str, Any]]]:
    spec_map = spec if isinstance(spec, Mapping) else {}
    devices = spec_map.get("devices")
    requests = devices.get("requests") if isinstance(devices, Mapping) else None
    if not isinstance(requests, list):
        return []
    base = child(child(path, "devices"), "requests")
    return [(index(base, i), r) for i, r in enumerate(requests) if isinstance(r, Mapping)]


def _check_v1beta1_requests(ctx: Ctx, spec: Any, path: str) -> None:
    for req_path, request in _requests_of(spec, path):
        if request.get("exactly") is not None:
            ctx.forbidden(child(req_path, "exactly"), _NOT_A_REQUEST_FIELD)


def _check_v1beta1_claim(ctx: Ctx, obj: Mapping[str, Any]) -> None:
    _check_v1beta1_requests(ctx, obj.get("spec"), "spec")


def _check_v1beta1_template(ctx: Ctx, obj: Mapping[str, Any]) -> None:
    spec = obj.get("spec")
    if isinstance(spec, Mapping):
        _check_v1beta1_requests(ctx, spec.get("spec"), "spec.spec")


def _check_v1beta1_slice(ctx: Ctx, obj: Mapping[str, Any]) -> None:
    spec = obj.get("spec")
    devices = spec.get("devices") if isinstance(spec, Mapping) else None
    for i, device in enumerate(devices if isinstance(devices, list) else ()):
        if not isinstance(device, Mapping):
            continue
        path = index("spec.devices", i)
        ctx.as_map(device.get("basic"), child(path, "basic"))
        for name in device:
            if name not in ("name", "basic") and device[name] is not None:
                ctx.forbidden(child(path, name), _NOT_A_DEVICE_FIELD)


_SHAPE_CHECKS: Final[Mapping[tuple[str, str], Callable[[Ctx, Mapping[str, Any]], None]]] = {
    (_V1BETA1, "ResourceClaim"): _check_v1beta1_claim,
    (_V1BETA1, "ResourceClaimTemplate"): _check_v1beta1_template,
    (_V1BETA1, "ResourceSlice"): _check_v1beta1_slice,
}


def _in_version(error: FieldError, api_version: str, kind: str) -> FieldError:
    path = path_in_version(error.path, api_version, kind)
    detail = error.detail
    if api_version == _V1BETA1 and "`exactly`" in detail:
        # "exactly one of `exactly` or `firstAvailable`": v1beta1 spells the first deviceClassName.
        detail = detail.replace("`exactly`", "`deviceClassName`")
    # "not a field of a resource.k8s.io/v1 X" is about the version the user wrote.
    detail = detail.replace("not a field of a resource.k8s.io/v1 ",
                            f"not a field of a {api_version} ")
    if path == error.path and detail == error.detail:
        return error
    return dataclasses.replace(error, path=path, detail=detail)


def validate_converted(ctx: Ctx, obj: Mapping[str, Any], hub_validator: Callable[
        [Ctx, Mapping[str, Any]], None]) -> None:
    """Validate ``obj`` (a served older version) with the validator of its v1 kind.

    Errors land in ``ctx`` with the field paths of ``obj``'s own version.
    """
    api_version, kind = str(obj.get("apiVersion")), str(obj.get("kind"))
    shape_check = _SHAPE_CHECKS.get((api_version, kind))
    if shape_check is not None:
        shape_check(ctx, obj)
    inner = Ctx(ctx.features)
    hub_validator(inner, to_v1(obj))
    ctx.errors.extend(_in_version(e, api_version, kind) for e in inner.errors)
