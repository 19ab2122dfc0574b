"""Pieces shared by the resource.k8s.io kinds: names, taints, tolerations, config, selectors."""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any, Final

from dralab.api.features import Gate
from dralab.validation._cel import check_cel_selector
from dralab.validation._context import Ctx, child, index, key
from dralab.validation._formats import (
    check_dns_label,
    check_dns_subdomain,
    check_label_name,
    is_c_identifier,
    is_dns1123_subdomain,
    is_label_value,
)
from dralab.validation._meta import compact_json

__all__ = [
    "DEVICE_MAX_ID_LENGTH",
    "check_binding_conditions",
    "check_device_name",
    "check_device_taint",
    "check_device_tolerations",
    "check_driver_name",
    "check_fully_qualified_name",
    "check_opaque_config",
    "check_pool_name",
    "check_qualified_name",
    "check_raw_json_object",
    "check_request_name",
    "check_selectors",
    "check_skip_node_operations",
    "check_uid",
    "items",
    "keyed_items",
]

DRIVER_NAME_MAX: Final = 63
POOL_NAME_MAX: Final = 253
DEVICE_MAX_ID_LENGTH: Final = 32
DEVICE_MAX_DOMAIN_LENGTH: Final = 63
SELECTORS_MAX: Final = 32
TOLERATIONS_MAX: Final = 16
BINDING_CONDITIONS_MAX: Final = 4
OPAQUE_PARAMETERS_MAX: Final = 10 * 1024
# Map keys longer than this are shortened in paths, as upstream does.
QUALIFIED_KEY_PATH_MAX: Final = DEVICE_MAX_DOMAIN_LENGTH + 1 + DEVICE_MAX_ID_LENGTH

_DEVICE_TAINT_EFFECTS: Final = ("NoExecute", "NoSchedule", "None")
_UID_RE: Final = re.compile(
    "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_SKIP_OPERATIONS: Final = ("*", "NodePrepareResources", "NodeUnprepareResources")


# iteration helpers ------------------------------------------------------------------
def items(ctx: Ctx, value: Any, path: str, maximum: int = -1) -> Iterator[tuple[str, Any]]:
    """(path, item) of a list; more than ``maximum`` items is reported and nothing yielded.

    Stopping at the size limit mirrors upstream: a list that is too long is
    not examined further (protection against huge objects).
    """
    seq = ctx.as_list(value, path)
    if seq is None:
        return
    if 0 <= maximum < len(seq):
        ctx.too_many(path, len(seq), maximum)
        return
    for i, item in enumerate(seq):
        yield index(path, i), item


def keyed_items(ctx: Ctx, value: Any, path: str, maximum: int = -1,
                truncate: int = -1) -> Iterator[tuple[str, str, Any]]:
    """(key, path, value) of a map; like ``items`` for the size limit."""
    mapping = ctx.as_map(value, path)
    if mapping is None:
        return
    if 0 <= maximum < len(mapping):
        ctx.too_many(path, len(mapping), maximum)
        return
    for k, v in mapping.items():
        yield k, key(path, _truncate(k, truncate) if truncate >= 0 else k), v


def _truncate(text: str, max_len: int) -> str:
    if len(text) <= max_len:
        return text
    max_len = max(max_len, 16)
    if len(text) <= max_len:
        return text
    remaining = max_len - 3
    return text[: (remaining + 1) // 2] + "..." + text[len(text) - remaining // 2:]


class Uniq:
    """Reports the second and later occurrences of a key, at the item's path."""

    __slots__ = ("_ctx", "_seen")

    def __init__(self, ctx: Ctx) -> None:
        self._ctx = ctx
        self._seen: set[Hashable] = set()

    def check(self, ident: Hashable, path: str, shown: Any = None) -> bool:
        if ident in self._seen:
            self._ctx.duplicate(path, ident if shown is None else shown)
            return False
        self._seen.add(ident)
        return True


# names -----------------------------------------------------------------------------------
def _required_name(ctx: Ctx, value: Any, path: str) -> str | None:
    """The non-empty string at ``path``; reports a wrong type or a missing value."""
    name = ctx.as_str(value, path)
    if value is not None and name is None:
        return None
    if not name:
        ctx.required(path, "")
        return None
    return name


def check_driver_name(ctx: Ctx, value: Any, path: str) -> str | None:
    """Driver names follow CSI driver names: DNS subdomain (any case), at most 63 bytes."""
    name = _required_name(ctx, value, path)
    if name is None:
        return None
    if len(name.encode()) > DRIVER_NAME_MAX:
        ctx.too_long(path, DRIVER_NAME_MAX)
    for msg in is_dns1123_subdomain(name.lower()):
        ctx.invalid(path, name, msg)
    return name


def check_pool_name(ctx: Ctx, value: Any, path: str) -> str | None:
    """One or more DNS subdomains separated by '/', at most 253 bytes in all."""
    name = _required_name(ctx, value, path)
    if name is None:
        return None
    if len(name.encode()) > POOL_NAME_MAX:
        ctx.too_long(path, POOL_NAME_MAX)
    for part in name.split("/"):
        check_dns_subdomain(ctx, part, path)
    return name


def _check_label_like(ctx: Ctx, value: Any, path: str) -> str | None:
    name = _required_name(ctx, value, path)
    if name is None:
        return None
    check_dns_label(ctx, name, path)
    return name


def check_device_name(ctx: Ctx, value: Any, path: str) -> str | None:
    return _check_label_like(ctx, value, path)


def check_request_name(ctx: Ctx, value: Any, path: str) -> str | None:
    return _check_label_like(ctx, value, path)


# A problem found by a pure check: ("too_long", limit, "") or ("invalid", value, detail).
Problem = tuple[str, Any, str]


def _c_identifier_problems(ident: str) -> list[Problem]:
    problems: list[Problem] = []
    if len(ident.encode()) > DEVICE_MAX_ID_LENGTH:
        problems.append(("too_long", DEVICE_MAX_ID_LENGTH, ""))
    problems.extend(("invalid", ident, msg) for msg in is_c_identifier(ident))
    return problems


def _domain_problems(domain: str) -> list[Problem]:
    problems: list[Problem] = []
    if len(domain.encode()) > DRIVER_NAME_MAX:
        problems.append(("too_long", DRIVER_NAME_MAX, ""))
    problems.extend(("invalid", domain, msg) for msg in is_dns1123_subdomain(domain.lower()))
    return problems


@lru_cache(maxsize=65536)
def _qualified_name_problems(name: str) -> tuple[Problem, ...]:
    # Memoised: every device of a driver repeats the same few attribute names.
    parts = name.split("/")
    if len(parts) == 1:
        return tuple(_c_identifier_problems(parts[0]))
    if len(parts) > 2:
        return (("invalid", name, "must not contain more than one slash"),)
    domain, ident = parts
    problems: list[Problem] = []
    if domain:
        problems.extend(_domain_problems(domain))
    else:
        problems.append(("invalid", "", "the domain must not be empty"))
    if ident:
        problems.extend(_c_identifier_problems(ident))
    else:
        problems.append(("invalid", "", "the name must not be empty"))
    return tuple(problems)


def check_qualified_name(ctx: Ctx, name: str, path: str) -> None:
    """Attribute/capacity names: ``id`` or ``domain/id`` (``validateQualifiedName``).

    Upstream reports key problems at the map's path, not at the key.
    """
    for kind, value, detail in _qualified_name_problems(name):
        if kind == "too_long":
            ctx.too_long(path, value)
        else:
            ctx.invalid(path, value, detail)


def check_fully_qualified_name(ctx: Ctx, value: Any, path: str) -> str | None:
    name = ctx.as_str(value, path)
    if name is None:
        return None
    check_qualified_name(ctx, name, path)
    if "/" not in name:
        ctx.invalid(path, name, "a fully qualified name must be a domain and a name separated "
                                "by a slash")
    return name


def check_uid(ctx: Ctx, value: Any, path: str) -> None:
    uid = ctx.as_str(value, path)
    if uid is None:
        return
    if len(uid) != 36:
        ctx.invalid(path, uid, f"error validating uid: invalid UUID length: {len(uid)}")
    elif not _UID_RE.fullmatch(uid):
        ctx.invalid(path, uid, "error validating uid: invalid UUID format")
    elif uid != uid.lower():
        ctx.invalid(path, uid, "uid must be in RFC 4122 normalized form, "
                               "`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase "
                               "hexadecimal characters")


# selectors and config ---------------------------------------------------------------------
def check_selectors(ctx: Ctx, value: Any, path: str) -> None:
    """``selectors[]`` of classes, requests and subrequests."""
    for sel_path, raw in items(ctx, value, path, SELECTORS_MAX):
        selector = ctx.as_map(raw, sel_path)
        if selector is None:
            continue
        cel_path = child(sel_path, "cel")
        cel = ctx.as_map(selector.get("cel"), cel_path)
        if cel is None:
            if selector.get("cel") is None:
                ctx.required(cel_path, "")
            continue
        expr_path = child(cel_path, "expression")
        expression = ctx.as_str(cel.get("expression"), expr_path)
        if expression is None and cel.get("expression") is not None:
            continue
        check_cel_selector(ctx, expression or "", expr_path)


def check_raw_json_object(ctx: Ctx, value: Any, path: str, max_bytes: int) -> None:
    """Embedded JSON (``runtime.RawExtension``): required, bounded, and an object."""
    if value is None:
        ctx.required(path, "")
        return
    if len(compact_json(value).encode()) > max_bytes:
        ctx.too_long(path, max_bytes)
    elif not isinstance(value, Mapping):
        ctx.invalid(path, "<value omitted>", "must be a valid JSON object")


def check_opaque_config(ctx: Ctx, config: Mapping[str, Any], path: str) -> None:
    """The ``opaque`` member of a DeviceConfiguration."""
    opaque_path = child(path, "opaque")
    opaque = ctx.as_map(config.get("opaque"), opaque_path)
    if opaque is None:
        if config.get("opaque") is None:
            ctx.required(opaque_path, "")
        return
    check_driver_name(ctx, opaque.get("driver"), child(opaque_path, "driver"))
    check_raw_json_object(ctx, opaque.get("parameters"), child(opaque_path, "parameters"),
                          OPAQUE_PARAMETERS_MAX)


# taints and tolerations ---------------------------------------------------------------------
def check_device_taint(ctx: Ctx, value: Any, path: str) -> None:
    taint = ctx.as_map(value, path)
    if taint is None:
        if value is None:
            taint = {}
        else:
            return
    taint_key = ctx.as_str(taint.get("key"), child(path, "key"))
    check_label_name(ctx, taint_key or "", child(path, "key"))
    taint_value = ctx.as_str(taint.get("value"), child(path, "value"))
    if taint_value:
        for msg in is_label_value(taint_value):
            ctx.invalid(child(path, "value"), taint_value, msg)
    effect = ctx.as_str(taint.get("effect"), child(path, "effect"))
    if not effect:
        ctx.required(child(path, "effect"), "")
    elif effect not in _DEVICE_TAINT_EFFECTS:
        ctx.not_supported(child(path, "effect"), effect, _DEVICE_TAINT_EFFECTS)
    ctx.as_time(taint.get("timeAdded"), child(path, "timeAdded"))


def check_device_tolerations(ctx: Ctx, value: Any, path: str) -> None:
    """DeviceToleration list of requests, subrequests and allocation results."""
    if value is None or not ctx.gate(Gate.DRA_DEVICE_TAINTS, path):
        return
    for tol_path, raw in items(ctx, value, path, TOLERATIONS_MAX):
        tol = ctx.as_map(raw, tol_path)
        if tol is None:
            continue
        tol_key = ctx.as_str(tol.get("key"), child(tol_path, "key")) or ""
        if tol_key:
            check_label_name(ctx, tol_key, child(tol_path, "key"))
        # The operator defaults to Equal.
        op = ctx.as_str(tol.get("operator"), child(tol_path, "operator")) or "Equal"
        tol_value = ctx.as_str(tol.get("value"), child(tol_path, "value")) or ""
        if op == "Exists":
            if tol_value:
                ctx.invalid(child(tol_path, "value"), tol_value,
                            "must be empty for operator `Exists`")
        elif op == "Equal":
            for msg in is_label_value(tol_value):
                ctx.invalid(child(tol_path, "value"), tol_value, msg)
            if not tol_key:
                ctx.invalid(child(tol_path, "operator"), op,
                            'operator must be Exists when `key` is empty, which means "match '
                            'all values and all keys"')
        else:
            ctx.not_supported(child(tol_path, "operator"), op, ("Equal", "Exists"))
        effect = ctx.as_str(tol.get("effect"), child(tol_path, "effect")) or ""
        if effect and effect not in _DEVICE_TAINT_EFFECTS:
            ctx.not_supported(child(tol_path, "effect"), effect, _DEVICE_TAINT_EFFECTS)
        seconds = ctx.as_int(tol.get("tolerationSeconds"), child(tol_path, "tolerationSeconds"))
        if seconds is not None and effect != "NoExecute":
            ctx.invalid(child(tol_path, "effect"), effect,
                        "effect must be 'NoExecute' when `tolerationSeconds` is set")


# binding conditions and node operations -------------------------------------------------------
def check_binding_conditions(ctx: Ctx, obj: Mapping[str, Any], path: str) -> None:
    """bindingConditions / bindingFailureConditions of devices and allocation results."""
    names: dict[str, list[tuple[int, str]]] = {}
    for field in ("bindingConditions", "bindingFailureConditions"):
        field_path = child(path, field)
        if obj.get(field) is None or not ctx.gate(Gate.DRA_DEVICE_BINDING_CONDITIONS, field_path):
            names[field] = []
            continue
        entries = ctx.string_list(obj.get(field), field_path)
        if len(entries) > BINDING_CONDITIONS_MAX:
            ctx.too_many(field_path, len(entries), BINDING_CONDITIONS_MAX)
        else:
            for i, name in entries:
                check_label_name(ctx, name, index(field_path, i))
        names[field] = entries
    conditions, failures = names["bindingConditions"], names["bindingFailureConditions"]
    uniq = Uniq(ctx)
    for i, name in conditions:
        uniq.check(name, index(child(path, "bindingConditions"), i))
    condition_set = {name for _, name in conditions}
    uniq = Uniq(ctx)
    for i, name in failures:
        item_path = index(child(path, "bindingFailureConditions"), i)
        uniq.check(name, item_path)
        if name in condition_set:
            ctx.invalid(item_path, name,
                        "bindingFailureConditions must not overlap with bindingConditions")
    if not conditions and failures:
        ctx.invalid(child(path, "bindingConditions"), [],
                    "bindingConditions are required to use bindingFailureConditions")
    if not failures and conditions:
        ctx.invalid(child(path, "bindingFailureConditions"), [],
                    "bindingFailureConditions are required to use bindingConditions")


def check_skip_node_operations(ctx: Ctx, value: Any, path: str) -> None:
    if value is None or not ctx.gate(Gate.DRA_OPTIONAL_NODE_OPERATIONS, path):
        return
    entries = ctx.string_list(value, path)
    uniq = Uniq(ctx)
    for i, op in entries:
        if op not in _SKIP_OPERATIONS:
            ctx.not_supported(index(path, i), op, _SKIP_OPERATIONS)
        uniq.check(op, index(path, i))
    ops = {op for _, op in entries}
    if "NodePrepareResources" in ops and not ops & {"NodeUnprepareResources", "*"}:
        ctx.invalid(path, [op for _, op in entries],
                    "NodePrepareResources cannot be skipped unless NodeUnprepareResources is "
                    "also skipped")


def check_unique_strings(ctx: Ctx, entries: Sequence[tuple[int, str]], path: str,
                         check: Callable[[Ctx, str, str], Any] | None = None) -> None:
    uniq = Uniq(ctx)
    for i, text in entries:
        item_path = index(path, i)
        if check is not None:
            check(ctx, text, item_path)
        uniq.check(text, item_path)
