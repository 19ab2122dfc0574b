"""Cluster-scoped inputs: core/v1 Node and Namespace, scheduling.k8s.io/v1 PriorityClass."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from dralab.validation._context import Ctx, child, key
from dralab.validation._core_common import check_node_taints, check_resource_quantity
from dralab.validation._formats import name_is_dns_label, name_is_dns_subdomain
from dralab.validation._meta import check_finalizers, check_object_meta

__all__ = ["validate_namespace", "validate_node", "validate_priority_class"]

HIGHEST_USER_PRIORITY: Final = 1_000_000_000
_SYSTEM_PREFIX: Final = "system-"
# name -> (value, globalDefault) of the built-in classes.
_SYSTEM_CLASSES: Final = {
    "system-node-critical": (2_000_001_000, False),
    "system-cluster-critical": (2_000_000_000, False),
}


def validate_node(ctx: Ctx, obj: Mapping[str, Any]) -> None:
    check_object_meta(ctx, obj.get("metadata"), name_is_dns_subdomain, namespaced=False)
    spec = ctx.as_map(obj.get("spec"), "spec")
    if spec is not None:
        # Upstream reports these under "metadata.taints" (a slip in the Go code);
        # we point at the field that is actually wrong.
        check_node_taints(ctx, spec.get("taints"), "spec.taints")
        ctx.as_bool(spec.get("unschedulable"), "spec.unschedulable")
    status = ctx.as_map(obj.get("status"), "status")
    if status is not None:
        for field in ("capacity", "allocatable"):
            field_path = child("status", field)
            for name, amount in (ctx.as_map(status.get(field), field_path) or {}).items():
                check_resource_quantity(ctx, name, amount, key(field_path, name))


def validate_namespace(ctx: Ctx, obj: Mapping[str, Any]) -> None:
    check_object_meta(ctx, obj.get("metadata"), name_is_dns_label, namespaced=False)
    spec = ctx.as_map(obj.get("spec"), "spec")
    if spec is not None:
        check_finalizers(ctx, spec.get("finalizers"), "spec.finalizers", indexed=False)


def validate_priority_class(ctx: Ctx, obj: Mapping[str, Any]) -> None:
    meta = check_object_meta(ctx, obj.get("metadata"), name_is_dns_subdomain, namespaced=False)
    raw_name = meta.get("name")
    name = raw_name if isinstance(raw_name, str) else ""
    value = ctx.as_int(obj.get("value"), "value", bits=32)
    if value is None and obj.get("value") is None:
        value = 0
    global_default = bool(ctx.as_bool(obj.get("globalDefault"), "globalDefault"))
    if name.startswith(_SYSTEM_PREFIX):
        problem = _system_class_problem(name, value, global_default)
        if problem:
            ctx.forbidden("metadata.name", f"priority class names with '{_SYSTEM_PREFIX}' prefix "
                                           f"are reserved for system use only. error: {problem}")
    elif value is not None and value > HIGHEST_USER_PRIORITY:
        ctx.forbidden("value", "maximum allowed value of a user defined priority is "
                               f"{HIGHEST_USER_PRIORITY}")
    policy = ctx.as_str(obj.get("preemptionPolicy"), "preemptionPolicy")
    if policy is not None:
        if not policy:
            ctx.required("preemptionPolicy", "")
        elif policy not in ("PreemptLowerPriority", "Never"):
            ctx.not_supported("preemptionPolicy", policy, ("PreemptLowerPriority", "Never"))


def _system_class_problem(name: str, value: int | None, global_default: bool) -> str:
    known = _SYSTEM_CLASSES.get(name)
    if known is None:
        return f"{name} is not a known system priority class"
    if value != known[0]:
        return f"value of {name} PriorityClass must be {known[0]}"
    if global_default != known[1]:
        return f"globalDefault of {name} PriorityClass must be {str(known[1]).lower()}"
    return ""
