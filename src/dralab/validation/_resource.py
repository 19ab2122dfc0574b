"""The remaining resource.k8s.io kinds: DeviceClass, claims, templates, DeviceTaintRule."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from dralab.api.features import Gate
from dralab.validation._claim import check_claim_spec
from dralab.validation._claim_status import check_claim_status
from dralab.validation._context import Ctx, child
from dralab.validation._core_common import is_extended_resource_name
from dralab.validation._dra_common import (
    check_device_name,
    check_device_taint,
    check_driver_name,
    check_opaque_config,
    check_pool_name,
    check_selectors,
    items,
)
from dralab.validation._formats import name_is_dns_subdomain
from dralab.validation._meta import check_conditions, check_object_meta, check_template_meta
from dralab.validation._removed import (
    DEVICE_CLASS,
    DEVICE_CLASS_SPEC,
    TAINT_RULE_SELECTOR,
    check_removed,
)

__all__ = [
    "validate_device_class",
    "validate_device_taint_rule",
    "validate_resource_claim",
    "validate_resource_claim_template",
]

CLASS_CONFIG_MAX: Final = 32
RULE_CONDITIONS_MAX: Final = 8


def validate_device_class(ctx: Ctx, obj: Mapping[str, Any]) -> None:
    check_object_meta(ctx, obj.get("metadata"), name_is_dns_subdomain, namespaced=False)
    check_removed(ctx, obj, "", DEVICE_CLASS)
    spec = ctx.as_map(obj.get("spec"), "spec")
    if spec is None:
        return
    check_removed(ctx, spec, "spec", DEVICE_CLASS_SPEC)
    check_selectors(ctx, spec.get("selectors"), "spec.selectors")
    for cfg_path, raw in items(ctx, spec.get("config"), "spec.config", CLASS_CONFIG_MAX):
        cfg = ctx.as_map(raw, cfg_path)
        if cfg is not None:
            check_opaque_config(ctx, cfg, cfg_path)
    name_path = "spec.extendedResourceName"
    if spec.get("extendedResourceName") is not None and ctx.gate(Gate.DRA_EXTENDED_RESOURCE,
                                                                name_path):
        name = ctx.as_str(spec.get("extendedResourceName"), name_path)
        if name is not None and not is_extended_resource_name(name):
            ctx.invalid(name_path, name, "must be a valid extended resource name")


def validate_resource_claim(ctx: Ctx, obj: Mapping[str, Any]) -> None:
    check_object_meta(ctx, obj.get("metadata"), name_is_dns_subdomain, namespaced=True)
    names = check_claim_spec(ctx, obj.get("spec"), "spec")
    check_claim_status(ctx, obj.get("status"), "status", names)


def validate_resource_claim_template(ctx: Ctx, obj: Mapping[str, Any]) -> None:
    check_object_meta(ctx, obj.get("metadata"), name_is_dns_subdomain, namespaced=True)
    spec = ctx.as_map(obj.get("spec"), "spec")
    if spec is None:
        return
    check_template_meta(ctx, spec.get("metadata"), "spec.metadata")
    check_claim_spec(ctx, spec.get("spec"), "spec.spec")


def validate_device_taint_rule(ctx: Ctx, obj: Mapping[str, Any]) -> None:
    # No DRADeviceTaintRules check: the API server stores the kind whenever its version is
    # served (v1.36.2 registry/resource/rest: storage per enabled resource, no gate) and accepts
    # a rule with the gate off; the gate decides only whether the scheduler and the eviction
    # controller honour it (the allocator ignores rules then).
    check_object_meta(ctx, obj.get("metadata"), name_is_dns_subdomain, namespaced=False)
    spec = ctx.as_map(obj.get("spec"), "spec")
    if spec is None and obj.get("spec") is not None:
        return
    spec = spec or {}
    selector_path = "spec.deviceSelector"
    selector = ctx.as_map(spec.get("deviceSelector"), selector_path)
    if selector is not None:
        check_removed(ctx, selector, selector_path, TAINT_RULE_SELECTOR)
        # Each present field narrows the rule; an empty selector matches every device.
        if selector.get("driver") is not None:
            check_driver_name(ctx, selector.get("driver"), child(selector_path, "driver"))
        if selector.get("pool") is not None:
            check_pool_name(ctx, selector.get("pool"), child(selector_path, "pool"))
        if selector.get("device") is not None:
            check_device_name(ctx, selector.get("device"), child(selector_path, "device"))
    check_device_taint(ctx, spec.get("taint"), "spec.taint")
    status = ctx.as_map(obj.get("status"), "status")
    if status is not None:
        conditions = status.get("conditions")
        if isinstance(conditions, list | tuple) and len(conditions) > RULE_CONDITIONS_MAX:
            ctx.too_many("status.conditions", len(conditions), RULE_CONDITIONS_MAX)
        check_conditions(ctx, conditions, "status.conditions")
