"""Checks shared by all kinds: object metadata, labels, label selectors, conditions."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

from dralab.validation._context import Ctx, child, index, key
from dralab.validation._formats import (
    NameFn,
    check_label_name,
    check_label_value,
    is_qualified_name,
    name_is_dns_label,
    regex_error,
)

__all__ = [
    "check_conditions",
    "check_finalizers",
    "check_label_selector",
    "check_labels",
    "check_object_meta",
    "check_template_meta",
    "label_selector_matches",
]

_ANNOTATIONS_MAX_BYTES: Final = 256 * 1024
_STANDARD_FINALIZERS: Final = frozenset({"kubernetes", "orphan", "foregroundDeletion"})
_TEMPLATE_META_ALLOWED: Final = frozenset({"labels", "annotations"})
_OBJECT_META_FIELDS: Final = (
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
    "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "ownerReferences",
    "finalizers", "managedFields",
)


def check_object_meta(ctx: Ctx, meta_value: Any, name_fn: NameFn, *, namespaced: bool,
                      path: str = "metadata") -> Mapping[str, Any]:
    """ObjectMeta of a top-level object on create; returns the (possibly empty) map.

    A missing namespace is fine: in a file it is filled in by kubectl. For
    cluster-scoped kinds a namespace is ignored, as the API server clears it.
    """
    meta = ctx.as_map(meta_value, path) or {}
    generate_name = ctx.as_str(meta.get("generateName"), child(path, "generateName"))
    name = ctx.as_str(meta.get("name"), child(path, "name"))
    if generate_name:
        for msg in name_fn(generate_name, True):
            ctx.invalid(child(path, "generateName"), generate_name, msg)
    if not name:
        # A name of the wrong type (an unrendered `{{ .Index }}` is a map) is reported as such
        # above; it is not also missing.
        typed_wrong = any(meta.get(f) is not None and not isinstance(meta.get(f), str)
                          for f in ("name", "generateName"))
        if not generate_name and not typed_wrong:
            ctx.required(child(path, "name"), "name or generateName is required")
    else:
        for msg in name_fn(name, False):
            ctx.invalid(child(path, "name"), name, msg)
    namespace = ctx.as_str(meta.get("namespace"), child(path, "namespace"))
    if namespaced and namespace:
        for msg in name_is_dns_label(namespace, False):
            ctx.invalid(child(path, "namespace"), namespace, msg)
    generation = ctx.as_int(meta.get("generation"), child(path, "generation"))
    if generation is not None and generation < 0:
        ctx.invalid(child(path, "generation"), generation, "must be greater than or equal to 0")
    check_labels(ctx, meta.get("labels"), child(path, "labels"))
    check_annotations(ctx, meta.get("annotations"), child(path, "annotations"))
    _check_owner_references(ctx, meta.get("ownerReferences"), child(path, "ownerReferences"))
    check_finalizers(ctx, meta.get("finalizers"), child(path, "finalizers"))
    return meta


def check_template_meta(ctx: Ctx, meta_value: Any, path: str) -> Mapping[str, Any]:
    """Metadata embedded in a template that is copied into created objects.

    Only labels and annotations can be copied; anything else is refused so
    that nobody believes it takes effect.
    """
    meta = ctx.as_map(meta_value, path) or {}
    check_annotations(ctx, meta.get("annotations"), child(path, "annotations"))
    check_labels(ctx, meta.get("labels"), child(path, "labels"))
    for name in _OBJECT_META_FIELDS:
        if name not in _TEMPLATE_META_ALLOWED and meta.get(name) not in (None, "", [], {}, 0):
            ctx.forbidden(child(path, name), "cannot be set")
    return meta


def string_map(ctx: Ctx, value: Any, path: str) -> dict[str, str]:
    """A map of strings (labels, selectors); non-string values are reported."""
    raw = ctx.as_map(value, path)
    if raw is None:
        return {}
    out: dict[str, str] = {}
    for k, v in raw.items():
        text = ctx.as_str(v, key(path, k))
        if text is not None:
            out[k] = text
    return out


def check_labels(ctx: Ctx, value: Any, path: str) -> dict[str, str]:
    """Label keys and values; upstream reports both at the map's path, not per key."""
    labels = string_map(ctx, value, path)
    for k, v in labels.items():
        check_label_name(ctx, k, path)
        check_label_value(ctx, v, path)
    return labels


def check_annotations(ctx: Ctx, value: Any, path: str) -> None:
    annotations = string_map(ctx, value, path)
    total = 0
    for k, v in annotations.items():
        for msg in is_qualified_name(k.lower()):
            ctx.invalid(path, k, msg)
        total += len(k.encode()) + len(v.encode())
    if total > _ANNOTATIONS_MAX_BYTES:
        ctx.too_long(path, _ANNOTATIONS_MAX_BYTES)


def _check_owner_references(ctx: Ctx, value: Any, path: str) -> None:
    refs = ctx.as_list(value, path)
    if refs is None:
        return
    controllers: list[str] = []
    for i, raw in enumerate(refs):
        ref_path = index(path, i)
        ref = ctx.as_map(raw, ref_path)
        if ref is None:
            continue
        api_version = ctx.as_str(ref.get("apiVersion"), child(ref_path, "apiVersion")) or ""
        kind = ctx.as_str(ref.get("kind"), child(ref_path, "kind")) or ""
        name = ctx.as_str(ref.get("name"), child(ref_path, "name")) or ""
        uid = ctx.as_str(ref.get("uid"), child(ref_path, "uid")) or ""
        if not api_version.rpartition("/")[2]:
            ctx.invalid(child(ref_path, "apiVersion"), api_version, "version must not be empty")
        if not kind:
            ctx.invalid(child(ref_path, "kind"), kind, "must not be empty")
        if not name:
            ctx.invalid(child(ref_path, "name"), name, "must not be empty")
        if not uid:
            ctx.invalid(child(ref_path, "uid"), uid, "must not be empty")
        if ctx.as_bool(ref.get("controller"), child(ref_path, "controller")):
            controllers.append(f"{kind}/{name}")
    if len(controllers) > 1:
        ctx.invalid(path, refs, "Only one reference can have Controller set to true. Found "
                    f'"true" in references for {controllers[0]} and {controllers[1]}')


def check_finalizers(ctx: Ctx, value: Any, path: str, *, indexed: bool = True) -> None:
    """Finalizer names; ``indexed=False`` reports at the list's path, as Namespace's spec does."""
    for i, name in ctx.string_list(value, path):
        item_path = index(path, i) if indexed else path
        msgs = is_qualified_name(name)
        for msg in msgs:
            ctx.invalid(item_path, name, msg)
        if not msgs and "/" not in name and name not in _STANDARD_FINALIZERS:
            ctx.invalid(item_path, name,
                        "name is neither a standard finalizer name nor is it fully qualified")


# label selectors ----------------------------------------------------------------
_SELECTOR_OPS: Final = ("In", "NotIn", "Exists", "DoesNotExist")


def check_label_selector(ctx: Ctx, value: Any, path: str) -> Mapping[str, Any] | None:
    """A metav1.LabelSelector; returns it when it can be evaluated, else None."""
    selector = ctx.as_map(value, path)
    if selector is None:
        return None
    usable = True
    exprs_path = child(path, "matchExpressions")
    for i, raw in enumerate(ctx.as_list(selector.get("matchExpressions"), exprs_path) or ()):
        expr_path = index(exprs_path, i)
        expr = ctx.as_map(raw, expr_path)
        if expr is None:
            usable = False
            continue
        op = ctx.as_str(expr.get("operator"), child(expr_path, "operator"))
        values = ctx.string_list(expr.get("values"), child(expr_path, "values"))
        if op in ("In", "NotIn"):
            if not values:
                ctx.required(child(expr_path, "values"),
                             "must be specified when `operator` is 'In' or 'NotIn'")
                usable = False
        elif op in ("Exists", "DoesNotExist"):
            if values:
                ctx.forbidden(child(expr_path, "values"),
                              "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
                usable = False
        else:
            ctx.invalid(child(expr_path, "operator"), op or "", "not a valid selector operator")
            usable = False
        k = ctx.as_str(expr.get("key"), child(expr_path, "key"))
        check_label_name(ctx, k or "", child(expr_path, "key"))
        for j, v in values:
            check_label_value(ctx, v, index(child(expr_path, "values"), j))
    check_labels(ctx, selector.get("matchLabels"), child(path, "matchLabels"))
    return selector if usable else None


def label_selector_matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """Whether labels satisfy a selector already checked by check_label_selector."""
    match_labels = selector.get("matchLabels")
    if isinstance(match_labels, Mapping):
        for k, v in match_labels.items():
            if labels.get(k) != v:
                return False
    exprs = selector.get("matchExpressions")
    for expr in exprs if isinstance(exprs, list) else ():
        if not isinstance(expr, Mapping):
            continue
        k, op = expr.get("key"), expr.get("operator")
        raw_values = expr.get("values")
        values: list[Any] = raw_values if isinstance(raw_values, list) else []
        present = isinstance(k, str) and k in labels
        if op == "In" and not (present and labels[str(k)] in values):
            return False
        if op == "NotIn" and present and labels[str(k)] in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
    return True


def selector_is_empty(selector: Mapping[str, Any]) -> bool:
    labels, exprs = selector.get("matchLabels"), selector.get("matchExpressions")
    return not labels and not exprs


# conditions -----------------------------------------------------------------------
_CONDITION_STATUSES: Final = ("False", "True", "Unknown")
_REASON_FMT: Final = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?"
_REASON_RE: Final = re.compile(_REASON_FMT)
_REASON_MSG: Final = (
    "a condition reason must start with alphabetic character, optionally followed by a string"
    " of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'"
)
_REASON_MAX: Final = 1024
_MESSAGE_MAX: Final = 32768


def check_conditions(ctx: Ctx, value: Any, path: str) -> None:
    """A list of metav1.Condition (``ValidateConditions``)."""
    seen: set[str] = set()
    for i, raw in enumerate(ctx.as_list(value, path) or ()):
        cond_path = index(path, i)
        cond = ctx.as_map(raw, cond_path)
        if cond is None:
            continue
        ctype = ctx.as_str(cond.get("type"), child(cond_path, "type")) or ""
        if ctype in seen:
            ctx.duplicate(child(cond_path, "type"), ctype)
        seen.add(ctype)
        check_label_name(ctx, ctype, child(cond_path, "type"))
        status = ctx.as_str(cond.get("status"), child(cond_path, "status"))
        if status not in _CONDITION_STATUSES:
            ctx.not_supported(child(cond_path, "status"), status or "", _CONDITION_STATUSES)
        observed = ctx.as_int(cond.get("observedGeneration"),
                              child(cond_path, "observedGeneration"))
        if observed is not None and observed < 0:
            ctx.invalid(child(cond_path, "observedGeneration"), observed,
                        "must be greater than or equal to zero")
        if not ctx.as_time(cond.get("lastTransitionTime"), child(cond_path, "lastTransitionTime")):
            ctx.required(child(cond_path, "lastTransitionTime"), "must be set")
        reason = ctx.as_str(cond.get("reason"), child(cond_path, "reason"))
        if not reason:
            ctx.required(child(cond_path, "reason"), "must be set")
        else:
            if not _REASON_RE.fullmatch(reason):
                ctx.invalid(child(cond_path, "reason"), reason,
                            regex_error(_REASON_MSG, _REASON_FMT, "my_name", "MY_NAME", "MyName",
                                        "ReasonA,ReasonB", "ReasonA:ReasonB"))
            if len(reason.encode()) > _REASON_MAX:
                ctx.too_long(child(cond_path, "reason"), _REASON_MAX)
        message = ctx.as_str(cond.get("message"), child(cond_path, "message"))
        if message is not None and len(message.encode()) > _MESSAGE_MAX:
            ctx.too_long(child(cond_path, "message"), _MESSAGE_MAX)


def compact_json(value: Any) -> str:
    """The bytes kubectl would send for an embedded JSON value."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
