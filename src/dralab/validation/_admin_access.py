"""Admin access against the namespace label, as the API server's admission checks it.

A ResourceClaim or ResourceClaimTemplate that asks for ``adminAccess: true`` is
only accepted in a namespace labelled ``resource.kubernetes.io/admin-access:
"true"`` (the REST strategies of both kinds look the Namespace up on create).
The same holds for an allocation result with admin access written into a
claim's status. This needs a second object, so it runs over the whole input
and only where the claim's Namespace is part of it: without the Namespace
there is nothing to check against.

Upstream reports the first request with admin access only, at
``spec.devices.requests[i].adminAccess`` (the internal type's path, for
templates too); we report the same single error at the field's real path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from dralab.api.errors import ErrorType, FieldError

__all__ = ["ADMIN_ACCESS_LABEL", "check_admin_access"]

ADMIN_ACCESS_LABEL: Final = "resource.kubernetes.io/admin-access"
_MESSAGE: Final = (f"admin access to devices requires the `{ADMIN_ACCESS_LABEL}: true` label "
                   "on the containing namespace")
_RESOURCE_GROUP: Final = "resource.k8s.io/"


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list) else []


def _namespace_labels(objects: Sequence[Any]) -> dict[str, Mapping[str, Any]]:
    """Labels of every Namespace in the input, by name."""
    found: dict[str, Mapping[str, Any]] = {}
    for obj in objects:
        data = _map(obj)
        if data.get("apiVersion") != "v1" or data.get("kind") != "Namespace":
            continue
        meta = _map(data.get("metadata"))
        name = meta.get("name")
        if isinstance(name, str) and name:
            found[name] = _map(meta.get("labels"))
    return found


def _first_admin_request(spec: Mapping[str, Any], path: str) -> str | None:
    """Path of the first request's ``adminAccess: true`` (v1/v1beta2 ``exactly``, or v1beta1)."""
    requests = _list(_map(spec.get("devices")).get("requests"))
    for i, request in enumerate(requests):
        req = _map(request)
        exactly = _map(req.get("exactly"))
        if exactly.get("adminAccess") is True:
            return f"{path}.devices.requests[{i}].exactly.adminAccess"
        if req.get("adminAccess") is True:  # v1beta1 keeps the field on the request
            return f"{path}.devices.requests[{i}].adminAccess"
    return None


def _first_admin_result(status: Mapping[str, Any]) -> str | None:
    results = _list(_map(_map(status.get("allocation")).get("devices")).get("results"))
    for i, result in enumerate(results):
        if _map(result).get("adminAccess") is True:
            return f"status.allocation.devices.results[{i}].adminAccess"
    return None


def _admin_paths(data: Mapping[str, Any]) -> list[str]:
    kind = data.get("kind")
    if kind == "ResourceClaim":
        spec_path = _first_admin_request(_map(data.get("spec")), "spec")
        status_path = _first_admin_result(_map(data.get("status")))
        return [p for p in (spec_path, status_path) if p is not None]
    if kind == "ResourceClaimTemplate":
        inner = _map(_map(data.get("spec")).get("spec"))
        found = _first_admin_request(inner, "spec.spec")
        return [found] if found is not None else []
    return []


def check_admin_access(objects: Sequence[Any]) -> list[tuple[int, FieldError]]:
    """(object index, error) for every claim or template asking for admin access in
    a Namespace of the input that lacks the label. Pure; tolerates malformed objects."""
    namespaces = _namespace_labels(objects)
    if not namespaces:
        return []
    problems: list[tuple[int, FieldError]] = []
    for n, obj in enumerate(objects):
        data = _map(obj)
        api_version = data.get("apiVersion")
        if not isinstance(api_version, str) or not api_version.startswith(_RESOURCE_GROUP):
            continue
        paths = _admin_paths(data)
        if not paths:
            continue
        namespace = _map(data.get("metadata")).get("namespace") or "default"
        labels = namespaces.get(namespace) if isinstance(namespace, str) else None
        if labels is None or labels.get(ADMIN_ACCESS_LABEL) == "true":
            continue
        problems.extend((n, FieldError(path=p, type=ErrorType.FORBIDDEN, detail=_MESSAGE))
                        for p in paths)
    return problems
