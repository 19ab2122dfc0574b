"""core/v1 building blocks reused elsewhere: node selectors, taints, tolerations, resources."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from dralab.api.quantity import Quantity
from dralab.validation._context import Ctx, child, index, key
from dralab.validation._formats import (
    check_label_name,
    check_label_value,
    check_node_name,
    is_label_value,
    is_qualified_name,
)

__all__ = [
    "check_node_selector",
    "check_node_selector_term",
    "check_node_taints",
    "check_resource_quantity",
    "check_tolerations",
    "is_extended_resource_name",
    "is_integer_resource_name",
]

# node selectors -----------------------------------------------------------------------


def check_node_selector(ctx: Ctx, value: Any, path: str, *,
                        allow_invalid_values: bool = False) -> Mapping[str, Any] | None:
    """A core NodeSelector: at least one term; returns the selector map if readable."""
    selector = ctx.as_map(value, path)
    if selector is None:
        return None
    terms_path = child(path, "nodeSelectorTerms")
    raw_terms = selector.get("nodeSelectorTerms")
    terms = ctx.as_list(raw_terms, terms_path)
    if terms is None and raw_terms is not None:
        return selector  # wrong type, already reported
    if not terms:
        ctx.required(terms_path, "must have at least one node selector term")
        return selector
    for i, term in enumerate(terms):
        check_node_selector_term(ctx, term, index(terms_path, i),
                                 allow_invalid_values=allow_invalid_values)
    return selector


def check_node_selector_term(ctx: Ctx, value: Any, path: str, *,
                             allow_invalid_values: bool = False) -> None:
    term = ctx.as_map(value, path)
    if term is None:
        return
    exprs_path = child(path, "matchExpressions")
    for j, raw in enumerate(ctx.as_list(term.get("matchExpressions"), exprs_path) or ()):
        _check_requirement(ctx, raw, index(exprs_path, j), allow_invalid_values)
    fields_path = child(path, "matchFields")
    for j, raw in enumerate(ctx.as_list(term.get("matchFields"), fields_path) or ()):
        _check_field_requirement(ctx, raw, index(fields_path, j))


def _check_requirement(ctx: Ctx, value: Any, path: str, allow_invalid_values: bool) -> None:
    req = ctx.as_map(value, path)
    if req is None:
        return
    op = ctx.as_str(req.get("operator"), child(path, "operator"))
    values_path = child(path, "values")
    values = ctx.string_list(req.get("values"), values_path)
    if op in ("In", "NotIn"):
        if not values:
            ctx.required(values_path, "must be specified when `operator` is 'In' or 'NotIn'")
    elif op in ("Exists", "DoesNotExist"):
        if values:
            ctx.forbidden(values_path,
                          "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            ctx.required(values_path,
                         "must be specified single value when `operator` is 'Lt' or 'Gt'")
    else:
        ctx.invalid(child(path, "operator"), op or "", "not a valid selector operator")
    check_label_name(ctx, ctx.as_str(req.get("key"), child(path, "key")) or "",
                     child(path, "key"))
    if not allow_invalid_values:
        for j, v in values:
            check_label_value(ctx, v, index(values_path, j))


def _check_field_requirement(ctx: Ctx, value: Any, path: str) -> None:
    req = ctx.as_map(value, path)
    if req is None:
        return
    op = ctx.as_str(req.get("operator"), child(path, "operator"))
    values_path = child(path, "values")
    values = ctx.string_list(req.get("values"), values_path)
    if op in ("In", "NotIn"):
        if len(values) != 1:
            ctx.required(values_path, "must be only one value when `operator` is 'In' or "
                                      "'NotIn' for node field selector")
    else:
        ctx.invalid(child(path, "operator"), op or "", "not a valid selector operator")
    field_key = ctx.as_str(req.get("key"), child(path, "key"))
    if field_key != "metadata.name":
        ctx.invalid(child(path, "key"), field_key or "", "not a valid field selector key")
    else:
        for j, v in values:
            check_node_name(ctx, v, index(values_path, j))


# taints and tolerations -------------------------------------------------------------------
_NODE_TAINT_EFFECTS: Final = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _check_node_taint_effect(ctx: Ctx, effect: str | None, path: str, allow_empty: bool) -> None:
    if not effect:
        if not allow_empty:
            ctx.required(path, "")
        return
    if effect not in _NODE_TAINT_EFFECTS:
        ctx.not_supported(path, effect, _NODE_TAINT_EFFECTS)


def check_node_taints(ctx: Ctx, value: Any, path: str) -> None:
    """Node taints: unique by (key, effect)."""
    seen: set[tuple[str, str]] = set()
    for i, raw in enumerate(ctx.as_list(value, path) or ()):
        taint_path = index(path, i)
        taint = ctx.as_map(raw, taint_path)
        if taint is None:
            continue
        taint_key = ctx.as_str(taint.get("key"), child(taint_path, "key")) or ""
        check_label_name(ctx, taint_key, child(taint_path, "key"))
        taint_value = ctx.as_str(taint.get("value"), child(taint_path, "value")) or ""
        errs = is_label_value(taint_value)
        if errs:
            ctx.invalid(child(taint_path, "value"), taint_value, ";".join(errs))
        effect = ctx.as_str(taint.get("effect"), child(taint_path, "effect"))
        _check_node_taint_effect(ctx, effect, child(taint_path, "effect"), allow_empty=False)
        ctx.as_time(taint.get("timeAdded"), child(taint_path, "timeAdded"))
        ident = (taint_key, effect or "")
        if ident in seen:
            ctx.duplicate(taint_path, dict(taint), "taints must be unique by key and effect pair")
            continue
        seen.add(ident)


def check_tolerations(ctx: Ctx, value: Any, path: str) -> None:
    """Pod tolerations (``ValidateTolerations``)."""
    for i, raw in enumerate(ctx.as_list(value, path) or ()):
        tol_path = index(path, i)
        tol = ctx.as_map(raw, tol_path)
        if tol is None:
            continue
        tol_key = ctx.as_str(tol.get("key"), child(tol_path, "key")) or ""
        op = ctx.as_str(tol.get("operator"), child(tol_path, "operator")) or ""
        tol_value = ctx.as_str(tol.get("value"), child(tol_path, "value")) or ""
        effect = ctx.as_str(tol.get("effect"), child(tol_path, "effect")) or ""
        seconds = ctx.as_int(tol.get("tolerationSeconds"), child(tol_path, "tolerationSeconds"))
        if tol_key:
            check_label_name(ctx, tol_key, child(tol_path, "key"))
        if not tol_key and op != "Exists":
            ctx.invalid(child(tol_path, "operator"), op,
                        'operator must be Exists when `key` is empty, which means "match all '
                        'values and all keys"')
        if seconds is not None and effect != "NoExecute":
            ctx.invalid(child(tol_path, "effect"), effect,
                        "effect must be 'NoExecute' when `tolerationSeconds` is set")
        # Upstream reports value problems at the operator's path; kept for fidelity.
        if op in ("Equal", ""):
            errs = is_label_value(tol_value)
            if errs:
                ctx.invalid(child(tol_path, "operator"), tol_value, ";".join(errs))
        elif op == "Exists":
            if tol_value:
                ctx.invalid(child(tol_path, "operator"), tol_value,
                            "value must be empty when `operator` is 'Exists'")
        else:
            ctx.not_supported(child(tol_path, "operator"), op, ("Equal", "Exists"))
        _check_node_taint_effect(ctx, effect, child(tol_path, "effect"), allow_empty=True)


# resource names and quantities ------------------------------------------------------------
_INTEGER_RESOURCES: Final = frozenset({
    "pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps",
    "persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
    "requests.storage",
})


def is_native_resource_name(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource_name(name: str) -> bool:
    """Vendor resources such as ``nvidia.com/gpu`` (``IsExtendedResourceName``)."""
    if is_native_resource_name(name) or name.startswith("requests."):
        return False
    # Quota refers to these as "requests.<name>", which must be a qualified name too.
    return not is_qualified_name("requests." + name)


def is_hugepages_resource_name(name: str) -> bool:
    return name.startswith("hugepages-")


def is_integer_resource_name(name: str) -> bool:
    return name in _INTEGER_RESOURCES or is_extended_resource_name(name)


def check_resource_quantity(ctx: Ctx, name: str, value: Any, path: str) -> Quantity | None:
    """A resource amount: non-negative, whole for integer resources."""
    q = ctx.as_quantity(value, path)
    if q is None:
        if value is None:
            ctx.required(path, "")
        return None
    if q.sign() < 0:
        ctx.invalid(path, str(q), "must be greater than or equal to 0")
    if is_integer_resource_name(name) and q.milli_value() % 1000 != 0:
        ctx.invalid(path, str(q), "must be an integer")
    return q


def quantity_map(ctx: Ctx, value: Any, path: str) -> dict[str, tuple[str, Any]]:
    """Entries of a resource map with their paths, for callers that check them."""
    raw = ctx.as_map(value, path)
    if raw is None:
        return {}
    return {name: (key(path, name), amount) for name, amount in raw.items()}
