"""scheduling.k8s.io/v1beta1 Workload and PodGroup (gate GenericWorkload), as the 1.37 API server
checks them on create.

Rules from the types' declarative tags (``+k8s:required``, ``+k8s:minimum``,
``+k8s:maxItems``, ``+k8s:unionMember``, ``+k8s:format``): a scheduling policy is
exactly one of ``basic`` and ``gang``; ``gang.minCount`` is at least 1; a group
has at most 4 claims (``MaxPodGroupResourceClaims``), each a DNS label naming
exactly one of a claim and a template; a Workload has 1 to 8 pod group
templates with unique DNS-label names. ``resourceClaims`` needs gate
``DRAWorkloadResourceClaims`` (dropped without it, so reported).

With ``GenericWorkload`` off the API server does not serve these kinds at all:
the document is one error at ``kind`` (requires the gate), as a gated field is.
(Stored state is read with every gate on; the scheduler then ignores the groups.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from dralab.api.features import Gate
from dralab.validation._context import Ctx, child, index
from dralab.validation._formats import (
    check_dns_label,
    check_dns_subdomain,
    name_is_dns_subdomain,
)
from dralab.validation._meta import check_object_meta

__all__ = ["MAX_POD_GROUP_CLAIMS", "MAX_POD_GROUP_TEMPLATES", "validate_pod_group",
           "validate_workload"]

MAX_POD_GROUP_CLAIMS: Final = 4       # MaxPodGroupResourceClaims
MAX_POD_GROUP_TEMPLATES: Final = 8    # WorkloadMaxPodGroupTemplates
_HIGHEST_USER_PRIORITY: Final = 1_000_000_000
_POLICIES: Final = ("basic", "gang")
_CLAIM_SOURCES: Final = ("resourceClaimName", "resourceClaimTemplateName")


def _one_of(ctx: Ctx, value: Mapping[str, Any], path: str, members: tuple[str, ...]) -> str | None:
    """The one union member set in ``value``; reports none or several (upstream's wording)."""
    present = [m for m in members if value.get(m) is not None]
    listed = ", ".join(f"`{m}`" for m in members)
    if not present:
        ctx.invalid(path, "null", f"must specify one of: {listed}")
        return None
    if len(present) > 1:
        ctx.invalid(path, "{" + ", ".join(present) + "}",
                    f"must specify exactly one of: {listed}")
        return None
    return present[0]


def _check_policy(ctx: Ctx, value: Any, path: str) -> None:
    if value is None:
        ctx.required(path)
        return
    policy = ctx.as_map(value, path)
    if policy is None:
        return
    chosen = _one_of(ctx, policy, path, _POLICIES)
    if chosen == "basic":
        ctx.as_map(policy.get("basic"), child(path, "basic"))
    elif chosen == "gang":
        gang_path = child(path, "gang")
        gang = ctx.as_map(policy.get("gang"), gang_path)
        if gang is None:
            return
        count_path = child(gang_path, "minCount")
        if gang.get("minCount") is None:
            ctx.required(count_path)
            return
        count = ctx.as_int(gang.get("minCount"), count_path, bits=32)
        if count is not None and count < 1:
            ctx.invalid(count_path, count, "must be greater than or equal to 1")


def _check_claims(ctx: Ctx, value: Any, path: str) -> None:
    claims = ctx.as_list(value, path)
    if not claims:
        return
    if not ctx.gate(Gate.DRA_WORKLOAD_RESOURCE_CLAIMS, path):
        return
    if len(claims) > MAX_POD_GROUP_CLAIMS:
        ctx.too_many(path, len(claims), MAX_POD_GROUP_CLAIMS)
    seen: set[str] = set()
    for i, item in enumerate(claims):
        item_path = index(path, i)
        claim = ctx.as_map(item, item_path)
        if claim is None:
            continue
        name_path = child(item_path, "name")
        name = ctx.as_str(claim.get("name"), name_path)
        if not name:
            if name == "" or claim.get("name") is None:  # a wrong type is reported already
                ctx.required(name_path)
        else:
            check_dns_label(ctx, name, name_path)
            if name in seen:
                ctx.duplicate(name_path, name)
            seen.add(name)
        source = _one_of(ctx, claim, item_path, _CLAIM_SOURCES)
        if source is not None:
            source_path = child(item_path, source)
            text = ctx.as_str(claim.get(source), source_path)
            if text is not None:
                check_dns_subdomain(ctx, text, source_path)


def _check_priority(ctx: Ctx, spec: Mapping[str, Any], path: str) -> None:
    class_path = child(path, "priorityClassName")
    class_name = ctx.as_str(spec.get("priorityClassName"), class_path)
    if class_name:
        check_dns_subdomain(ctx, class_name, class_path)
    priority_path = child(path, "priority")
    priority = ctx.as_int(spec.get("priority"), priority_path, bits=32)
    if priority is not None and priority > _HIGHEST_USER_PRIORITY:
        ctx.invalid(priority_path, priority,
                    f"must be less than or equal to {_HIGHEST_USER_PRIORITY}")


def validate_pod_group(ctx: Ctx, obj: Mapping[str, Any]) -> None:
    if not ctx.gate(Gate.GENERIC_WORKLOAD, "kind"):
        return
    check_object_meta(ctx, obj.get("metadata"), name_is_dns_subdomain, namespaced=True)
    if obj.get("spec") is None:
        ctx.required("spec")
        return
    spec = ctx.as_map(obj.get("spec"), "spec")
    if spec is None:
        return
    _check_policy(ctx, spec.get("schedulingPolicy"), "spec.schedulingPolicy")
    _check_claims(ctx, spec.get("resourceClaims"), "spec.resourceClaims")
    _check_priority(ctx, spec, "spec")


def validate_workload(ctx: Ctx, obj: Mapping[str, Any]) -> None:
    if not ctx.gate(Gate.GENERIC_WORKLOAD, "kind"):
        return
    check_object_meta(ctx, obj.get("metadata"), name_is_dns_subdomain, namespaced=True)
    if obj.get("spec") is None:
        ctx.required("spec")
        return
    spec = ctx.as_map(obj.get("spec"), "spec")
    if spec is None:
        return
    ref_path = "spec.controllerRef"
    ref = ctx.as_map(spec.get("controllerRef"), ref_path)
    if ref is not None:
        for field in ("kind", "name"):
            if not ctx.as_str(ref.get(field), child(ref_path, field)):
                ctx.required(child(ref_path, field))
    path = "spec.podGroupTemplates"
    templates = ctx.as_list(spec.get("podGroupTemplates"), path)
    if not templates:
        if spec.get("compositePodGroupTemplates") is None:
            ctx.required(path, "must have at least one item")
        return
    if len(templates) > MAX_POD_GROUP_TEMPLATES:
        ctx.too_many(path, len(templates), MAX_POD_GROUP_TEMPLATES)
    seen: set[str] = set()
    for i, item in enumerate(templates):
        item_path = index(path, i)
        template = ctx.as_map(item, item_path)
        if template is None:
            continue
        name_path = child(item_path, "name")
        name = ctx.as_str(template.get("name"), name_path)
        if not name:
            ctx.required(name_path)
        else:
            check_dns_label(ctx, name, name_path)
            if name in seen:
                ctx.duplicate(name_path, name)
            seen.add(name)
        _check_policy(ctx, template.get("schedulingPolicy"), child(item_path, "schedulingPolicy"))
        _check_claims(ctx, template.get("resourceClaims"), child(item_path, "resourceClaims"))
        _check_priority(ctx, template, item_path)
