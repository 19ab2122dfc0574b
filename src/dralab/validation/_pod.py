"""core/v1 Pod and the PodSpec embedded in workload templates.

Only what scheduling depends on is checked in depth (claims, resources,
placement constraints, priority); volumes, probes and security settings are
left to the API server. Fields the API server defaults (restartPolicy,
dnsPolicy, terminationMessagePolicy, ...) may be missing in a file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from dralab.api.errors import FieldError
from dralab.api.features import FeatureGates, Gate
from dralab.api.quantity import Quantity
from dralab.validation._context import Ctx, child, index, key
from dralab.validation._core_common import (
    check_node_selector,
    check_node_selector_term,
    check_resource_quantity,
    check_tolerations,
    is_extended_resource_name,
    is_hugepages_resource_name,
    is_native_resource_name,
)
from dralab.validation._formats import (
    check_dns_label,
    check_dns_subdomain,
    check_label_name,
    is_dns1123_subdomain,
    is_qualified_name,
    name_is_dns_subdomain,
)
from dralab.validation._meta import (
    check_label_selector,
    check_labels,
    check_object_meta,
)
from dralab.validation._removed import POD_RESOURCE_CLAIM, check_removed

__all__ = ["check_pod_spec", "check_resource_amounts", "validate_container_resources",
           "validate_pod"]

RESTART_POLICIES: Final = ("Always", "OnFailure", "Never")
_DNS_POLICIES: Final = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
_PREEMPTION_POLICIES: Final = ("PreemptLowerPriority", "Never")
_STANDARD_RESOURCES: Final = frozenset({
    "cpu", "memory", "ephemeral-storage", "storage", "requests.cpu", "requests.memory",
    "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage",
    "pods", "services", "replicationcontrollers", "resourcequotas", "secrets",
    "persistentvolumeclaims", "configmaps", "requests.storage", "services.nodeports",
    "services.loadbalancers",
})
_STANDARD_CONTAINER_RESOURCES: Final = frozenset({"cpu", "memory", "ephemeral-storage"})


def validate_pod(ctx: Ctx, obj: Mapping[str, Any]) -> None:
    meta = check_object_meta(ctx, obj.get("metadata"), name_is_dns_subdomain, namespaced=True)
    pod_name = meta.get("name") if isinstance(meta.get("name"), str) else None
    spec = check_pod_spec(ctx, obj.get("spec"), "spec", pod_name=pod_name, is_pod=True)
    _check_status(ctx, obj.get("status"), "status", spec or {})


def check_pod_spec(ctx: Ctx, value: Any, path: str, *, pod_name: str | None = None,
                   is_pod: bool = False) -> Mapping[str, Any] | None:
    """A PodSpec; returns it if it is a map (missing counts as empty)."""
    spec = ctx.as_map(value, path)
    if spec is None:
        if value is not None:
            return None
        spec = {}
    claim_names = _check_pod_claims(ctx, spec.get("resourceClaims"), child(path, "resourceClaims"),
                                    pod_name)
    regular = _check_containers(ctx, spec.get("containers"), child(path, "containers"),
                                claim_names, set(), init=False, is_pod=is_pod)
    _check_containers(ctx, spec.get("initContainers"), child(path, "initContainers"),
                      claim_names, regular, init=True, is_pod=is_pod)
    _check_enum(ctx, spec.get("restartPolicy"), child(path, "restartPolicy"), RESTART_POLICIES)
    _check_enum(ctx, spec.get("dnsPolicy"), child(path, "dnsPolicy"), _DNS_POLICIES)
    check_labels(ctx, spec.get("nodeSelector"), child(path, "nodeSelector"))
    _check_affinity(ctx, spec.get("affinity"), child(path, "affinity"))
    _check_scheduling_gates(ctx, spec.get("schedulingGates"), child(path, "schedulingGates"))
    node_name = ctx.as_str(spec.get("nodeName"), child(path, "nodeName"))
    if node_name:
        check_dns_subdomain(ctx, node_name, child(path, "nodeName"))
    check_tolerations(ctx, spec.get("tolerations"), child(path, "tolerations"))
    class_name = ctx.as_str(spec.get("priorityClassName"), child(path, "priorityClassName"))
    if class_name:
        check_dns_subdomain(ctx, class_name, child(path, "priorityClassName"))
    ctx.as_int(spec.get("priority"), child(path, "priority"), bits=32)
    _check_enum(ctx, spec.get("preemptionPolicy"), child(path, "preemptionPolicy"),
                _PREEMPTION_POLICIES)
    if spec.get("schedulingGroup") is not None and \
            ctx.gate(Gate.GENERIC_WORKLOAD, child(path, "schedulingGroup")):
        _check_scheduling_group(ctx, spec.get("schedulingGroup"), child(path, "schedulingGroup"))
    return spec


def _check_scheduling_group(ctx: Ctx, value: Any, path: str) -> None:
    """Membership in a PodGroup of the pod's namespace: ``podGroupName`` is required."""
    group = ctx.as_map(value, path)
    if group is None:
        return
    name_path = child(path, "podGroupName")
    name = ctx.as_str(group.get("podGroupName"), name_path)
    if name:
        check_dns_subdomain(ctx, name, name_path)
    elif name == "" or group.get("podGroupName") is None:
        ctx.required(name_path)


def _check_enum(ctx: Ctx, value: Any, path: str, allowed: tuple[str, ...]) -> None:
    """An enum the API server defaults: missing or empty is fine, others must be known."""
    text = ctx.as_str(value, path)
    if text and text not in allowed:
        ctx.not_supported(path, text, allowed)


# resource claims ---------------------------------------------------------------------------
def _check_pod_claims(ctx: Ctx, value: Any, path: str, pod_name: str | None) -> set[str]:
    names: set[str] = set()
    for i, raw in enumerate(ctx.as_list(value, path) or ()):
        claim_path = index(path, i)
        claim = ctx.as_map(raw, claim_path)
        if claim is None:
            continue
        name_path = child(claim_path, "name")
        name = ctx.as_str(claim.get("name"), name_path)
        claim_name = ctx.as_str(claim.get("resourceClaimName"),
                                child(claim_path, "resourceClaimName"))
        template = ctx.as_str(claim.get("resourceClaimTemplateName"),
                              child(claim_path, "resourceClaimTemplateName"))
        if not name:
            if claim.get("name") is None or name == "":
                ctx.required(name_path, "")
        elif name in names:
            ctx.duplicate(name_path, name)
        else:
            before = len(ctx.errors)
            check_dns_label(ctx, name, name_path)
            if len(ctx.errors) == before and pod_name and template is not None:
                # The generated claim is named <pod>-<claim>, which must be valid too.
                final = f"{pod_name}-{name}"
                for msg in is_dns1123_subdomain(final):
                    ctx.invalid(name_path, final, "final ResourceClaim name: " + msg)
            names.add(name)
        removed = check_removed(ctx, claim, claim_path, POD_RESOURCE_CLAIM)
        if claim_name is not None and template is not None:
            ctx.invalid(claim_path, dict(claim), "at most one of `resourceClaimName` or "
                                                 "`resourceClaimTemplateName` may be specified")
        elif claim_name is None and template is None and not removed:
            ctx.invalid(claim_path, dict(claim), "must specify one of: `resourceClaimName`, "
                                                 "`resourceClaimTemplateName`")
        elif claim_name is not None:
            check_dns_subdomain(ctx, claim_name, child(claim_path, "resourceClaimName"))
        elif template is not None:
            check_dns_subdomain(ctx, template, child(claim_path, "resourceClaimTemplateName"))
    return names


# containers ---------------------------------------------------------------------------------
def _check_containers(ctx: Ctx, value: Any, path: str, claim_names: set[str],
                      other_names: set[str], *, init: bool, is_pod: bool) -> set[str]:
    """Regular or init containers; returns all container names seen so far."""
    containers = ctx.as_list(value, path)
    if not containers:
        if not init and (containers is not None or value is None):
            ctx.required(path, "")
        return set(other_names)
    names = set(other_names)
    for i, raw in enumerate(containers):
        ctr_path = index(path, i)
        ctr = ctx.as_map(raw, ctr_path)
        if ctr is None:
            continue
        name_path = child(ctr_path, "name")
        name = ctx.as_str(ctr.get("name"), name_path)
        if not name:
            if ctr.get("name") is None or name == "":
                ctx.required(name_path, "")
        else:
            check_dns_label(ctx, name, name_path)
        image = ctx.as_str(ctr.get("image"), child(ctr_path, "image"))
        if not image:
            if ctr.get("image") is None or image == "":
                ctx.required(child(ctr_path, "image"), "")
        elif is_pod and image != image.strip():
            ctx.invalid(child(ctr_path, "image"), image,
                        "must not have leading or trailing whitespace")
        _check_resources(ctx, ctr.get("resources"), child(ctr_path, "resources"), claim_names)
        if name:
            if name in names:
                ctx.duplicate(name_path, name)
            names.add(name)
        if init:
            policy = ctx.as_str(ctr.get("restartPolicy"), child(ctr_path, "restartPolicy"))
            if policy is not None and policy != "Always":
                ctx.not_supported(child(ctr_path, "restartPolicy"), policy, ("Always",))
    return names


def _check_resource_name(ctx: Ctx, name: str, path: str) -> None:
    msgs = is_qualified_name(name)
    for msg in msgs:
        ctx.invalid(path, name, msg)
    if msgs:
        return
    if "/" not in name:
        if name not in _STANDARD_RESOURCES and not name.startswith(("hugepages-",
                                                                   "requests.hugepages-")):
            ctx.invalid(path, name, "must be a standard resource type or fully qualified")
        if name not in _STANDARD_CONTAINER_RESOURCES and not is_hugepages_resource_name(name):
            ctx.invalid(path, name, "must be a standard resource for containers")
    elif not is_native_resource_name(name) and not is_extended_resource_name(name):
        ctx.invalid(path, name, "doesn't follow extended resource name standard")


def _overcommit_allowed(name: str) -> bool:
    # Extended resources (GPUs, ...) and hugepages cannot be overcommitted.
    return is_native_resource_name(name) and not is_hugepages_resource_name(name)


def _resource_list(ctx: Ctx, value: Any, path: str) -> dict[str, Quantity]:
    amounts: dict[str, Quantity] = {}
    for name, amount in (ctx.as_map(value, path) or {}).items():
        item_path = key(path, name)
        _check_resource_name(ctx, name, item_path)
        q = check_resource_quantity(ctx, name, amount, item_path)
        if q is not None:
            amounts[name] = q
    return amounts


def _check_resources(ctx: Ctx, value: Any, path: str, claim_names: set[str]) -> None:
    resources = ctx.as_map(value, path)
    if resources is None:
        return
    check_resource_amounts(ctx, resources, path)
    _check_claim_refs(ctx, resources.get("claims"), child(path, "claims"), claim_names)


def check_resource_amounts(ctx: Ctx, resources: Mapping[str, Any], path: str) -> None:
    """A container's ``resources`` limits and requests (``ValidateResourceRequirements``
    without claims): names, non-negative amounts, whole extended resources, and requests
    equal to limits (or below them, for cpu and memory)."""
    limits_path, requests_path = child(path, "limits"), child(path, "requests")
    limits = _resource_list(ctx, resources.get("limits"), limits_path)
    requests = _resource_list(ctx, resources.get("requests"), requests_path)
    has_compute = False
    has_hugepages = False
    for name in (*limits, *requests):
        has_compute = has_compute or name in ("cpu", "memory")
        has_hugepages = has_hugepages or is_hugepages_resource_name(name)
    for name, amount in requests.items():
        limit = limits.get(name)
        if limit is not None:
            if amount != limit and not _overcommit_allowed(name):
                ctx.invalid(requests_path, str(amount), f"must be equal to {name} limit of {limit}")
            elif amount > limit:
                ctx.invalid(requests_path, str(amount),
                            f"must be less than or equal to {name} limit of {limit}")
        elif not _overcommit_allowed(name):
            ctx.required(limits_path, "Limit must be set for non overcommitable resources")
    if has_hugepages and not has_compute:
        ctx.forbidden(path, "HugePages require cpu or memory")


def _check_claim_refs(ctx: Ctx, value: Any, path: str, claim_names: set[str]) -> None:
    """``resources.claims``: each names a pod claim, optionally one request of it."""
    seen: set[str] = set()
    for i, raw in enumerate(ctx.as_list(value, path) or ()):
        ref_path = index(path, i)
        ref = ctx.as_map(raw, ref_path)
        if ref is None:
            continue
        name = ctx.as_str(ref.get("name"), child(ref_path, "name"))
        request = ctx.as_str(ref.get("request"), child(ref_path, "request")) or ""
        if not name:
            if ref.get("name") is None or name == "":
                ctx.required(ref_path, "")
            continue
        if name in seen:
            ctx.duplicate(ref_path, name)  # the whole claim is already referenced
        else:
            ident = name
            if request:
                check_dns_label(ctx, request, child(ref_path, "request"))
                ident = f"{name}/{request}"
            if ident in seen:
                ctx.duplicate(ref_path, ident)
            elif not request and any(s.startswith(name + "/") for s in seen):
                ctx.duplicate(ref_path, name)
            seen.add(ident)
        if name not in claim_names:
            detail = "must be one of the names in pod.spec.resourceClaims"
            detail += ": " + ", ".join(sorted(claim_names)) if claim_names else " which is empty"
            ctx.not_found(ref_path, name, detail)


# placement ----------------------------------------------------------------------------------
def _check_affinity(ctx: Ctx, value: Any, path: str) -> None:
    affinity = ctx.as_map(value, path)
    if affinity is None:
        return
    node_path = child(path, "nodeAffinity")
    node = ctx.as_map(affinity.get("nodeAffinity"), node_path)
    if node is not None:
        check_node_selector(ctx, node.get("requiredDuringSchedulingIgnoredDuringExecution"),
                            child(node_path, "requiredDuringSchedulingIgnoredDuringExecution"))
        preferred_path = child(node_path, "preferredDuringSchedulingIgnoredDuringExecution")
        for i, raw in enumerate(ctx.as_list(
                node.get("preferredDuringSchedulingIgnoredDuringExecution"), preferred_path) or ()):
            term_path = index(preferred_path, i)
            term = ctx.as_map(raw, term_path)
            if term is None:
                continue
            _check_weight(ctx, term.get("weight"), child(term_path, "weight"))
            # Preferred terms may name label values that are invalid: they then just never match.
            check_node_selector_term(ctx, term.get("preference") or {},
                                     child(term_path, "preference"), allow_invalid_values=True)
    for kind in ("podAffinity", "podAntiAffinity"):
        _check_pod_affinity(ctx, affinity.get(kind), child(path, kind))


def _check_weight(ctx: Ctx, value: Any, path: str) -> None:
    weight = ctx.as_int(value, path, bits=32)
    if value is None:
        weight = 0
    if weight is not None and not 1 <= weight <= 100:
        ctx.invalid(path, weight, "must be in the range 1-100")


def _check_pod_affinity(ctx: Ctx, value: Any, path: str) -> None:
    affinity = ctx.as_map(value, path)
    if affinity is None:
        return
    required_path = child(path, "requiredDuringSchedulingIgnoredDuringExecution")
    for i, raw in enumerate(ctx.as_list(
            affinity.get("requiredDuringSchedulingIgnoredDuringExecution"), required_path) or ()):
        _check_pod_affinity_term(ctx, raw, index(required_path, i))
    preferred_path = child(path, "preferredDuringSchedulingIgnoredDuringExecution")
    for i, raw in enumerate(ctx.as_list(
            affinity.get("preferredDuringSchedulingIgnoredDuringExecution"), preferred_path) or ()):
        term_path = index(preferred_path, i)
        term = ctx.as_map(raw, term_path)
        if term is None:
            continue
        _check_weight(ctx, term.get("weight"), child(term_path, "weight"))
        _check_pod_affinity_term(ctx, term.get("podAffinityTerm") or {},
                                 child(term_path, "podAffinityTerm"))


def _check_pod_affinity_term(ctx: Ctx, value: Any, path: str) -> None:
    term = ctx.as_map(value, path)
    if term is None:
        return
    check_label_selector(ctx, term.get("labelSelector"), child(path, "labelSelector"))
    check_label_selector(ctx, term.get("namespaceSelector"), child(path, "namespaceSelector"))
    for _, namespace in ctx.string_list(term.get("namespaces"), child(path, "namespaces")):
        # Upstream reports every bad namespace at ".namespace" (sic).
        check_dns_label(ctx, namespace, child(path, "namespace"))
    topology_path = child(path, "topologyKey")
    topology = ctx.as_str(term.get("topologyKey"), topology_path) or ""
    if not topology:
        ctx.required(topology_path, "can not be empty")
    check_label_name(ctx, topology, topology_path)


def _check_scheduling_gates(ctx: Ctx, value: Any, path: str) -> None:
    seen: set[str] = set()
    for i, raw in enumerate(ctx.as_list(value, path) or ()):
        gate_path = index(path, i)
        gate = ctx.as_map(raw, gate_path)
        if gate is None:
            continue
        name = ctx.as_str(gate.get("name"), child(gate_path, "name")) or ""
        for msg in is_qualified_name(name):
            ctx.invalid(gate_path, name, msg)
        if name in seen:
            ctx.duplicate(gate_path, name)
        seen.add(name)


# status ---------------------------------------------------------------------------------------
def _check_status(ctx: Ctx, value: Any, path: str, spec: Mapping[str, Any]) -> None:
    status = ctx.as_map(value, path)
    if status is None:
        return
    claims = spec.get("resourceClaims")
    pod_claims = {c["name"] for c in (claims if isinstance(claims, list) else ())
                  if isinstance(c, Mapping) and isinstance(c.get("name"), str)}
    statuses_path = child(path, "resourceClaimStatuses")
    seen: set[str] = set()
    for i, raw in enumerate(ctx.as_list(status.get("resourceClaimStatuses"), statuses_path) or ()):
        item_path = index(statuses_path, i)
        entry = ctx.as_map(raw, item_path)
        if entry is None:
            continue
        name_path = child(item_path, "name")
        name = ctx.as_str(entry.get("name"), name_path) or ""
        if name not in pod_claims:
            ctx.invalid(name_path, name, "must match the name of an entry in `spec.resourceClaims`")
        if name in seen:
            ctx.duplicate(name_path, name)
        seen.add(name)
        claim_path = child(item_path, "resourceClaimName")
        claim_name = ctx.as_str(entry.get("resourceClaimName"), claim_path)
        if claim_name is not None:
            check_dns_subdomain(ctx, claim_name, claim_path)
    _check_extended_status(ctx, status.get("extendedResourceClaimStatus"),
                           child(path, "extendedResourceClaimStatus"), spec)


def _check_extended_status(ctx: Ctx, value: Any, path: str, spec: Mapping[str, Any]) -> None:
    """The scheduler-written claim that backs extended resources with devices."""
    status = ctx.as_map(value, path)
    if status is None:
        return
    if not ctx.gate(Gate.DRA_EXTENDED_RESOURCE, path):
        return
    claim_path = child(path, "resourceClaimName")
    claim_name = ctx.as_str(status.get("resourceClaimName"), claim_path)
    if not claim_name:
        ctx.required(claim_path, "")
    else:
        check_dns_subdomain(ctx, claim_name, claim_path)
    containers: set[str] = set()
    for field in ("initContainers", "containers"):
        entries = spec.get(field)
        if isinstance(entries, list):
            containers.update(c["name"] for c in entries
                              if isinstance(c, Mapping) and isinstance(c.get("name"), str))
    mappings_path = child(path, "requestMappings")
    mappings = ctx.as_list(status.get("requestMappings"), mappings_path)
    if not mappings:
        if mappings is not None or status.get("requestMappings") is None:
            ctx.required(mappings_path, "")
        return
    for i, raw in enumerate(mappings):
        item_path = index(mappings_path, i)
        entry = ctx.as_map(raw, item_path)
        if entry is None:
            continue
        container = ctx.as_str(entry.get("containerName"), child(item_path, "containerName"))
        if container not in containers:
            ctx.invalid(child(item_path, "containerName"), container or "",
                        "must match the name of a container in the pod")
        resource = ctx.as_str(entry.get("resourceName"), child(item_path, "resourceName"))
        if not resource:
            ctx.required(child(item_path, "resourceName"), "")
        request = ctx.as_str(entry.get("requestName"), child(item_path, "requestName"))
        if not request:
            ctx.required(child(item_path, "requestName"), "")
        else:
            check_dns_label(ctx, request, child(item_path, "requestName"))


def validate_container_resources(value: Any, path: str) -> list[FieldError]:
    """The API server's rules for one container's ``resources`` limits and requests, at
    ``path`` (e.g. ``spec.replicatedJobs[0].template.spec.template.spec.containers[0]
    .resources``): for pod templates of custom resources, whose controllers create the
    Pods the API server then checks. Pure; never raises on malformed input."""
    ctx = Ctx(FeatureGates())
    resources = ctx.as_map(value, path)
    if resources is not None:
        check_resource_amounts(ctx, resources, path)
    return ctx.errors
