"""ResourceClaimSpec (claims and templates): requests, constraints, config."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from dralab.api.features import Gate
from dralab.validation._cel import check_cel_length
from dralab.validation._context import Ctx, child, index
from dralab.validation._dra_common import (
    QUALIFIED_KEY_PATH_MAX,
    Uniq,
    check_device_tolerations,
    check_fully_qualified_name,
    check_opaque_config,
    check_qualified_name,
    check_request_name,
    check_selectors,
    items,
    keyed_items,
)
from dralab.validation._formats import check_dns_label, check_dns_subdomain
from dralab.validation._removed import CLAIM_SPEC, check_removed

__all__ = ["RequestNames", "check_claim_spec", "check_request_refs"]

REQUESTS_MAX: Final = 32
SUBREQUESTS_MAX: Final = 8
CONSTRAINTS_MAX: Final = 32
CONFIG_MAX: Final = 32
DERIVED_ATTRIBUTES_MAX: Final = 32

_ALLOCATION_MODES: Final = ("All", "ExactCount")
_REF_DETAIL: Final = ("must be the name of a request in the claim or the name of a request and "
                      "a subrequest separated by '/'")
# Fields of the v1beta1 flat request form; in v1 they belong under `exactly`.
_FLAT_REQUEST_FIELDS: Final = ("deviceClassName", "selectors", "allocationMode", "count",
                               "adminAccess", "tolerations", "capacity")


@dataclass(frozen=True, slots=True)
class RequestNames:
    """Request names of a claim, with the subrequest names of prioritized lists."""

    subrequests: Mapping[str, frozenset[str] | None] = field(default_factory=dict)

    def has(self, ref: str) -> bool:
        parts = ref.split("/")
        if len(parts) > 2 or parts[0] not in self.subrequests:
            return False
        if len(parts) == 1:
            return True
        subs = self.subrequests[parts[0]]
        return subs is not None and parts[1] in subs


def gather_request_names(devices: Mapping[str, Any]) -> RequestNames:
    out: dict[str, frozenset[str] | None] = {}
    requests = devices.get("requests")
    for request in requests if isinstance(requests, list | tuple) else ():
        if not isinstance(request, Mapping) or not isinstance(request.get("name"), str):
            continue
        subs = request.get("firstAvailable")
        if isinstance(subs, list | tuple) and subs:
            out[request["name"]] = frozenset(
                s["name"] for s in subs
                if isinstance(s, Mapping) and isinstance(s.get("name"), str))
        else:
            out[request["name"]] = None
    return RequestNames(out)


def _constraint_attributes(devices: Mapping[str, Any]) -> dict[str, set[str]]:
    """Attribute names used by constraints per request reference ("" = every request)."""
    out: dict[str, set[str]] = {}
    constraints = devices.get("constraints")
    for c in constraints if isinstance(constraints, list | tuple) else ():
        if not isinstance(c, Mapping):
            continue
        name = c.get("matchAttribute") or c.get("distinctAttribute")
        if not isinstance(name, str):
            continue
        refs = c.get("requests")
        targets = [r for r in refs if isinstance(r, str)] if isinstance(refs, list) and refs \
            else [""]
        for target in targets:
            out.setdefault(target, set()).add(name)
    return out


def check_claim_spec(ctx: Ctx, value: Any, path: str) -> RequestNames:
    """A ResourceClaimSpec; returns the request names, which status checks need."""
    spec = ctx.as_map(value, path)
    if spec is not None:
        check_removed(ctx, spec, path, CLAIM_SPEC)
    devices_path = child(path, "devices")
    devices = ctx.as_map(spec.get("devices"), devices_path) if spec is not None else None
    if devices is None:
        return RequestNames()
    names = gather_request_names(devices)
    used = _constraint_attributes(devices)
    requests_path = child(devices_path, "requests")
    uniq = Uniq(ctx)
    for req_path, raw in items(ctx, devices.get("requests"), requests_path, REQUESTS_MAX):
        name = _check_request(ctx, raw, req_path, used)
        if name is not None:
            uniq.check(name, req_path)
    for c_path, raw in items(ctx, devices.get("constraints"), child(devices_path, "constraints"),
                             CONSTRAINTS_MAX):
        _check_constraint(ctx, raw, c_path, names)
    for cfg_path, raw in items(ctx, devices.get("config"), child(devices_path, "config"),
                               CONFIG_MAX):
        cfg = ctx.as_map(raw, cfg_path)
        if cfg is not None:
            check_request_refs(ctx, cfg.get("requests"), child(cfg_path, "requests"), names)
            check_opaque_config(ctx, cfg, cfg_path)
    return names


def check_request_refs(ctx: Ctx, value: Any, path: str, names: RequestNames) -> None:
    """A list of unique references to requests (``req`` or ``req/subreq``)."""
    refs = ctx.string_list(value, path)
    if len(refs) > REQUESTS_MAX:
        ctx.too_many(path, len(refs), REQUESTS_MAX)
        return
    uniq = Uniq(ctx)
    for i, ref in refs:
        check_request_ref(ctx, ref, index(path, i), names)
        uniq.check(ref, index(path, i))


def check_request_ref(ctx: Ctx, ref: str, path: str, names: RequestNames) -> None:
    parts = ref.split("/")
    if len(parts) > 2:
        ctx.invalid(path, ref, _REF_DETAIL)
        return
    for part in parts:
        check_dns_label(ctx, part, path)
    if not names.has(ref):
        ctx.invalid(path, ref, _REF_DETAIL)


def _check_request(ctx: Ctx, raw: Any, path: str, used: Mapping[str, set[str]]) -> str | None:
    request = ctx.as_map(raw, path)
    if request is None:
        return None
    name = check_request_name(ctx, request.get("name"), child(path, "name"))
    for flat in _FLAT_REQUEST_FIELDS:
        if request.get(flat) is not None:
            ctx.forbidden(child(path, flat),
                          "not a field of a resource.k8s.io/v1 DeviceRequest; it belongs under "
                          "`exactly` or in the `firstAvailable` entries")
    subs = request.get("firstAvailable")
    has_first = subs is not None and not (isinstance(subs, list | tuple) and not subs)
    has_exactly = request.get("exactly") is not None
    if not has_first and not has_exactly:
        ctx.required(path, "exactly one of `exactly` or `firstAvailable` is required")
    elif has_first and has_exactly:
        ctx.invalid(path, None, "exactly one of `exactly` or `firstAvailable` is required, but "
                                "multiple fields are set")
    elif has_first:
        subs_path = child(path, "firstAvailable")
        if ctx.gate(Gate.DRA_PRIORITIZED_LIST, subs_path):
            uniq = Uniq(ctx)
            for sub_path, sub in items(ctx, subs, subs_path, SUBREQUESTS_MAX):
                sub_name = _check_exact(ctx, sub, sub_path, name or "", used, subrequest=True)
                if sub_name is not None:
                    uniq.check(sub_name, sub_path)
    else:
        _check_exact(ctx, request.get("exactly"), child(path, "exactly"), name or "", used,
                     subrequest=False)
    return name


def _check_exact(ctx: Ctx, raw: Any, path: str, request_name: str,
                 used: Mapping[str, set[str]], *, subrequest: bool) -> str | None:
    """ExactDeviceRequest, or a DeviceSubRequest when ``subrequest``; returns the sub name."""
    req = ctx.as_map(raw, path)
    if req is None:
        return None
    sub_name = None
    ref = request_name
    if subrequest:
        sub_name = check_request_name(ctx, req.get("name"), child(path, "name"))
        ref = f"{request_name}/{sub_name or ''}"
    class_path = child(path, "deviceClassName")
    class_name = ctx.as_str(req.get("deviceClassName"), class_path)
    if not class_name:
        if req.get("deviceClassName") is None or class_name == "":
            ctx.required(class_path, "")
    else:
        check_dns_subdomain(ctx, class_name, class_path)
    check_selectors(ctx, req.get("selectors"), child(path, "selectors"))
    derived_path = child(path, "derivedAttributes")
    if req.get("derivedAttributes") is not None and ctx.gate(Gate.DRA_DERIVED_ATTRIBUTES,
                                                            derived_path):
        _check_derived_attributes(ctx, req.get("derivedAttributes"), derived_path, ref, used)
    _check_allocation_mode(ctx, req, path)
    admin_path = child(path, "adminAccess")
    if req.get("adminAccess") is not None:
        if subrequest:
            ctx.forbidden(admin_path, "admin access is not supported in subrequests")
        elif ctx.gate(Gate.DRA_ADMIN_ACCESS, admin_path):
            ctx.as_bool(req.get("adminAccess"), admin_path)
    check_device_tolerations(ctx, req.get("tolerations"), child(path, "tolerations"))
    capacity_path = child(path, "capacity")
    if req.get("capacity") is not None and ctx.gate(Gate.DRA_CONSUMABLE_CAPACITY, capacity_path):
        capacity = ctx.as_map(req.get("capacity"), capacity_path)
        if capacity is not None:
            requests_path = child(capacity_path, "requests")
            for k, item_path, amount in keyed_items(ctx, capacity.get("requests"), requests_path,
                                                    truncate=QUALIFIED_KEY_PATH_MAX):
                check_qualified_name(ctx, k, requests_path)
                if amount is None:
                    ctx.required(item_path, "")
                ctx.as_quantity(amount, item_path)
    return sub_name


def _check_allocation_mode(ctx: Ctx, req: Mapping[str, Any], path: str) -> None:
    mode_path, count_path = child(path, "allocationMode"), child(path, "count")
    mode = ctx.as_str(req.get("allocationMode"), mode_path)
    count = ctx.as_int(req.get("count"), count_path)
    if req.get("allocationMode") is not None and mode is None:
        return
    mode = mode or "ExactCount"  # the API server's default
    if mode == "All":
        if count:
            ctx.invalid(count_path, count, "must not be specified when allocationMode is 'All'")
    elif mode == "ExactCount":
        # An unset (or zero) count defaults to 1, so only negative counts get here.
        if count is not None and count < 0:
            ctx.invalid(count_path, count, "must be greater than zero")
    else:
        ctx.not_supported(mode_path, mode, _ALLOCATION_MODES)


def _check_derived_attributes(ctx: Ctx, value: Any, path: str, ref: str,
                              used: Mapping[str, set[str]]) -> None:
    uniq = Uniq(ctx)
    parent = ref.split("/")[0]
    for attr_path, raw in items(ctx, value, path, DERIVED_ATTRIBUTES_MAX):
        attr = ctx.as_map(raw, attr_path)
        if attr is None:
            continue
        name_path = child(attr_path, "name")
        name = ctx.as_str(attr.get("name"), name_path)
        if not name:
            if attr.get("name") is None or name == "":
                ctx.required(name_path, "")
        else:
            check_fully_qualified_name(ctx, name, name_path)
            if not any(name in used.get(target, ()) for target in ("", ref, parent)):
                ctx.invalid(name_path, name, "must be referenced by at least one matchAttribute "
                                             "or distinctAttribute constraint targeting this "
                                             "request")
            uniq.check(name, attr_path)
        expr_path = child(attr_path, "expression")
        expression = ctx.as_str(attr.get("expression"), expr_path)
        if expression is not None or attr.get("expression") is None:
            check_cel_length(ctx, expression or "", expr_path)


def _check_constraint(ctx: Ctx, raw: Any, path: str, names: RequestNames) -> None:
    constraint = ctx.as_map(raw, path)
    if constraint is None:
        return
    check_request_refs(ctx, constraint.get("requests"), child(path, "requests"), names)
    match, distinct = constraint.get("matchAttribute"), constraint.get("distinctAttribute")
    if match is not None and distinct is not None:
        ctx.invalid(path, None, 'exactly one of "matchAttribute" or "distinctAttribute" is '
                                "required, but multiple fields are set")
    if match is not None:
        check_fully_qualified_name(ctx, match, child(path, "matchAttribute"))
    elif distinct is not None:
        distinct_path = child(path, "distinctAttribute")
        if ctx.gate(Gate.DRA_CONSUMABLE_CAPACITY, distinct_path):
            check_fully_qualified_name(ctx, distinct, distinct_path)
    elif ctx.features.is_enabled(Gate.DRA_CONSUMABLE_CAPACITY):
        ctx.required(path, 'exactly one of "matchAttribute" or "distinctAttribute" is required')
    else:
        ctx.required(child(path, "matchAttribute"), "")
