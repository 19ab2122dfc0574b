"""resource.k8s.io/v1 ResourceSlice."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from dralab.api.features import Gate
from dralab.api.semver import SemverError, parse_semver
from dralab.validation._capacity import check_request_policy
from dralab.validation._context import Ctx, child, index, key
from dralab.validation._core_common import check_node_selector
from dralab.validation._dra_common import (
    QUALIFIED_KEY_PATH_MAX,
    Uniq,
    check_binding_conditions,
    check_device_name,
    check_device_taint,
    check_driver_name,
    check_fully_qualified_name,
    check_pool_name,
    check_qualified_name,
    check_skip_node_operations,
    items,
    keyed_items,
)
from dralab.validation._formats import check_dns_label, check_node_name, name_is_dns_subdomain
from dralab.validation._meta import check_object_meta

__all__ = ["validate_resource_slice"]

MAX_DEVICES: Final = 128
MAX_DEVICES_WITH_ADVANCED_FEATURES: Final = 64
MAX_COUNTER_SETS: Final = 8
MAX_COUNTERS_PER_SET: Final = 32
MAX_CONSUMPTIONS_PER_DEVICE: Final = 2
MAX_COUNTERS_PER_CONSUMPTION: Final = 32
MAX_COMPATIBILITY_GROUPS: Final = 2
MAX_ATTRIBUTES_AND_CAPACITIES: Final = 32
MAX_ATTRIBUTE_VALUES: Final = 48
MAX_ATTRIBUTE_VALUE_LENGTH: Final = 64
MAX_TAINTS: Final = 16

_SCALAR_ATTRIBUTE_FIELDS: Final = ("bool", "int", "string", "version")
_LIST_ATTRIBUTE_FIELDS: Final = ("bools", "ints", "strings", "versions")
_ITEM_TYPES: Final = {"bools": "boolean", "ints": "int64", "strings": "string",
                      "versions": "string"}
_NODE_ALLOCATABLE_NAMES: Final = frozenset({"cpu", "memory", "ephemeral-storage"})
_NOT_A_V1_DEVICE_FIELD: Final = ("not a field of a resource.k8s.io/v1 Device; v1 has the device's "
                                 "fields directly on it (`basic` is the v1beta1 layout)")
_EXACTLY_ONE_NODE_FIELD: Final = (
    "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
)
_EXACTLY_ONE_DEVICE_NODE_FIELD: Final = (
    "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
    "`perDeviceNodeSelection` is set to true in the ResourceSlice spec"
)


def validate_resource_slice(ctx: Ctx, obj: Mapping[str, Any]) -> None:
    check_object_meta(ctx, obj.get("metadata"), name_is_dns_subdomain, namespaced=False)
    spec = ctx.as_map(obj.get("spec"), "spec")
    if spec is None and obj.get("spec") is not None:
        return
    _check_spec(ctx, spec or {}, "spec")


def _check_spec(ctx: Ctx, spec: Mapping[str, Any], path: str) -> None:
    driver = check_driver_name(ctx, spec.get("driver"), child(path, "driver"))
    _check_pool(ctx, spec.get("pool"), child(path, "pool"))
    per_device = _check_node_selection(ctx, spec, path)

    if spec.get("sharedCounters") is not None and spec.get("devices") is not None:
        ctx.invalid(path, "", "only one of `sharedCounters` or `devices` is allowed")

    devices_path = child(path, "devices")
    device_list = ctx.as_list(spec.get("devices"), devices_path)
    devices = [d for d in device_list or () if isinstance(d, Mapping)]
    limit = MAX_DEVICES_WITH_ADVANCED_FEATURES if _uses_advanced_features(devices) else MAX_DEVICES
    names = Uniq(ctx)
    for device_path, raw in items(ctx, device_list, devices_path, limit):
        name = _check_device(ctx, raw, device_path, per_device)
        if name is not None:
            names.check(name, device_path)

    counters_path = child(path, "sharedCounters")
    if spec.get("sharedCounters") is not None and ctx.gate(Gate.DRA_PARTITIONABLE_DEVICES,
                                                           counters_path):
        set_names = Uniq(ctx)
        for set_path, raw in items(ctx, spec.get("sharedCounters"), counters_path,
                                   MAX_COUNTER_SETS):
            name = _check_counter_set(ctx, raw, set_path)
            if name is not None:
                set_names.check(name, set_path)

    partition_path = child(path, "partitionTypeAttribute")
    if spec.get("partitionTypeAttribute") is not None and ctx.gate(
            Gate.DRA_PARTITIONABLE_DEVICES_TYPE, partition_path):
        _check_partition_type(ctx, spec.get("partitionTypeAttribute"), driver or "",
                              device_list or (), path)

    check_skip_node_operations(ctx, spec.get("skipNodeOperations"),
                               child(path, "skipNodeOperations"))


def _check_pool(ctx: Ctx, value: Any, path: str) -> None:
    pool = ctx.as_map(value, path)
    if pool is None:
        if value is not None:
            return
        pool = {}
    check_pool_name(ctx, pool.get("name"), child(path, "name"))
    count_path = child(path, "resourceSliceCount")
    count = ctx.as_int(pool.get("resourceSliceCount"), count_path)
    if count is None and pool.get("resourceSliceCount") is None:
        count = 0
    if count is not None and count <= 0:
        ctx.invalid(count_path, count, "must be greater than zero")
    generation = ctx.as_int(pool.get("generation"), child(path, "generation"))
    if generation is not None and generation < 0:
        ctx.invalid(child(path, "generation"), generation,
                    "must be greater than or equal to zero")


def _check_node_selection(ctx: Ctx, spec: Mapping[str, Any], path: str) -> bool:
    """Exactly one of the four node fields; returns whether devices select nodes themselves."""
    set_fields: list[str] = []
    node_name_path = child(path, "nodeName")
    node_name = ctx.as_str(spec.get("nodeName"), node_name_path)
    if node_name is not None:
        if node_name:
            set_fields.append("`nodeName`")
            check_node_name(ctx, node_name, node_name_path)
        else:
            ctx.invalid(node_name_path, "", "must be either unset or set to a non-empty string")
    selector_path = child(path, "nodeSelector")
    if check_node_selector(ctx, spec.get("nodeSelector"), selector_path) is not None:
        set_fields.append("`nodeSelector`")
        _check_single_term(ctx, spec["nodeSelector"], selector_path)
    if _true_or_unset(ctx, spec.get("allNodes"), child(path, "allNodes")):
        set_fields.append("`allNodes`")
    per_device = False
    per_device_path = child(path, "perDeviceNodeSelection")
    if spec.get("perDeviceNodeSelection") is not None and ctx.gate(
            Gate.DRA_PARTITIONABLE_DEVICES, per_device_path):
        per_device = _true_or_unset(ctx, spec.get("perDeviceNodeSelection"), per_device_path)
        if per_device:
            set_fields.append("`perDeviceNodeSelection`")
    if not set_fields:
        ctx.required(path, _EXACTLY_ONE_NODE_FIELD)
    elif len(set_fields) > 1:
        ctx.invalid(path, "{" + ", ".join(set_fields) + "}",
                    _EXACTLY_ONE_NODE_FIELD + ", but multiple fields are set")
    return per_device


def _check_single_term(ctx: Ctx, selector: Mapping[str, Any], path: str) -> None:
    # One term per slice keeps the selectors of devices from several slices mergeable.
    terms = selector.get("nodeSelectorTerms")
    readable = terms is None or isinstance(terms, list | tuple)
    if readable and len(terms or ()) != 1:
        ctx.invalid(child(path, "nodeSelectorTerms"), terms or [],
                    "must have exactly one node selector term")


def _true_or_unset(ctx: Ctx, value: Any, path: str) -> bool:
    """Optional flags that may only be true; false counts as unset and is an error."""
    flag = ctx.as_bool(value, path)
    if flag is False:
        ctx.invalid(path, False, "must be either unset or set to true")
    return bool(flag)


def _uses_advanced_features(devices: Sequence[Mapping[str, Any]]) -> bool:
    """Taints, counter consumption or list attributes halve the device limit."""
    for device in devices:
        if _non_empty(device.get("taints")) or _non_empty(device.get("consumesCounters")):
            return True
        attrs = device.get("attributes")
        if isinstance(attrs, Mapping) and any(
                isinstance(a, Mapping) and any(a.get(f) is not None
                                               for f in _LIST_ATTRIBUTE_FIELDS)
                for a in attrs.values()):
            return True
    return False


def _non_empty(value: Any) -> bool:
    return isinstance(value, list | tuple) and len(value) > 0


# devices ---------------------------------------------------------------------------------
def _check_device(ctx: Ctx, raw: Any, path: str, per_device: bool) -> str | None:
    device = ctx.as_map(raw, path)
    if device is None:
        return None
    name = check_device_name(ctx, device.get("name"), child(path, "name"))
    if device.get("basic") is not None:
        ctx.forbidden(child(path, "basic"), _NOT_A_V1_DEVICE_FIELD)
    attrs_path, caps_path = child(path, "attributes"), child(path, "capacity")
    attrs = ctx.as_map(device.get("attributes"), attrs_path) or {}
    caps = ctx.as_map(device.get("capacity"), caps_path) or {}
    if len(attrs) + len(caps) > MAX_ATTRIBUTES_AND_CAPACITIES:
        ctx.invalid(path, len(attrs) + len(caps), "the total number of attributes and "
                    f"capacities must not exceed {MAX_ATTRIBUTES_AND_CAPACITIES}")
    value_count = sum(_attribute_value_count(a) for a in attrs.values())
    if value_count > MAX_ATTRIBUTE_VALUES:
        ctx.invalid(path, value_count,
                    f"the total number of attribute values must not exceed {MAX_ATTRIBUTE_VALUES}")

    for k, item_path, attr in keyed_items(ctx, attrs, attrs_path,
                                          truncate=QUALIFIED_KEY_PATH_MAX):
        check_qualified_name(ctx, k, attrs_path)
        _check_attribute(ctx, attr, item_path)

    multi_path = child(path, "allowMultipleAllocations")
    allow_multi = False
    if device.get("allowMultipleAllocations") is not None and ctx.gate(
            Gate.DRA_CONSUMABLE_CAPACITY, multi_path):
        allow_multi = bool(ctx.as_bool(device.get("allowMultipleAllocations"), multi_path))
    for k, item_path, cap in keyed_items(ctx, caps, caps_path, truncate=QUALIFIED_KEY_PATH_MAX):
        check_qualified_name(ctx, k, caps_path)
        _check_capacity(ctx, cap, item_path, allow_multi)

    taints_path = child(path, "taints")
    if device.get("taints") is not None and ctx.gate(Gate.DRA_DEVICE_TAINTS, taints_path):
        for taint_path, taint in items(ctx, device.get("taints"), taints_path, MAX_TAINTS):
            check_device_taint(ctx, taint, taint_path)

    consumes_path = child(path, "consumesCounters")
    if device.get("consumesCounters") is not None and ctx.gate(Gate.DRA_PARTITIONABLE_DEVICES,
                                                              consumes_path):
        sets = Uniq(ctx)
        for item_path, raw_item in items(ctx, device.get("consumesCounters"), consumes_path,
                                         MAX_CONSUMPTIONS_PER_DEVICE):
            counter_set = _check_consumption(ctx, raw_item, item_path)
            if counter_set is not None:
                sets.check(counter_set, item_path)

    _check_device_node_selection(ctx, device, path, per_device)

    binds_path = child(path, "bindsToNode")
    if device.get("bindsToNode") is not None and ctx.gate(Gate.DRA_DEVICE_BINDING_CONDITIONS,
                                                         binds_path):
        ctx.as_bool(device.get("bindsToNode"), binds_path)
    check_binding_conditions(ctx, device, path)

    alloc_path = child(path, "nodeAllocatableResources")
    if device.get("nodeAllocatableResources") is not None and ctx.gate(
            Gate.DRA_NODE_ALLOCATABLE_RESOURCES, alloc_path):
        _check_node_allocatable(ctx, device.get("nodeAllocatableResources"), caps, alloc_path)
    return name


def _attribute_value_count(attr: Any) -> int:
    if not isinstance(attr, Mapping):
        return 1
    lists = [attr.get(f) for f in _LIST_ATTRIBUTE_FIELDS]
    counted = sum(len(v) for v in lists if isinstance(v, list | tuple))
    return counted if counted else 1


def _check_attribute(ctx: Ctx, raw: Any, path: str) -> None:
    attr = ctx.as_map(raw, path)
    if attr is None:
        if raw is None:
            ctx.invalid(path, "", "exactly one value must be specified")
        return
    count = 0
    for field in _SCALAR_ATTRIBUTE_FIELDS:
        value = attr.get(field)
        if value is None:
            continue
        count += 1
        field_path = child(path, field)
        if field == "bool":
            ctx.as_bool(value, field_path)
        elif field == "int":
            ctx.as_int(value, field_path)
        else:
            text = ctx.as_str(value, field_path)
            if text is not None:
                _check_attribute_text(ctx, text, field_path, version=field == "version")
    for field in _LIST_ATTRIBUTE_FIELDS:
        value = attr.get(field)
        if value is None:
            continue
        count += 1
        field_path = child(path, field)
        if not ctx.gate(Gate.DRA_LIST_TYPE_ATTRIBUTES, field_path):
            continue
        entries = ctx.as_list(value, field_path)
        if entries is None:
            continue
        if not entries:
            ctx.invalid(field_path, [], "must not be empty if specified")
        for i, entry in enumerate(entries):
            _check_list_item(ctx, field, entry, index(field_path, i))
    if count == 0:
        ctx.invalid(path, "", "exactly one value must be specified")
    elif count > 1:
        ctx.invalid(path, dict(attr), "exactly one value must be specified")


def _check_list_item(ctx: Ctx, field: str, entry: Any, path: str) -> None:
    if field == "bools":
        ctx.as_bool(entry, path)
    elif field == "ints":
        ctx.as_int(entry, path)
    else:
        text = ctx.as_str(entry, path)
        if text is not None:
            _check_attribute_text(ctx, text, path, version=field == "versions")
    if entry is None:
        ctx.type_invalid(path, entry, _ITEM_TYPES[field])


def _check_attribute_text(ctx: Ctx, text: str, path: str, *, version: bool) -> None:
    if version:
        try:
            parse_semver(text)
        except SemverError:
            ctx.invalid(path, text, "must be a string compatible with semver.org spec 2.0.0")
    if len(text.encode()) > MAX_ATTRIBUTE_VALUE_LENGTH:
        ctx.too_long(path, MAX_ATTRIBUTE_VALUE_LENGTH)


def _check_capacity(ctx: Ctx, raw: Any, path: str, allow_multi: bool) -> None:
    cap = ctx.as_map(raw, path)
    if cap is None:
        if raw is None:
            ctx.required(child(path, "value"), "")
        return
    value_path = child(path, "value")
    if cap.get("value") is None:
        ctx.required(value_path, "")
    quantity = ctx.as_quantity(cap.get("value"), value_path)
    policy_path = child(path, "requestPolicy")
    if cap.get("requestPolicy") is None or not ctx.gate(Gate.DRA_CONSUMABLE_CAPACITY,
                                                        policy_path):
        return
    if allow_multi:
        check_request_policy(ctx, quantity, cap.get("requestPolicy"), policy_path)
    else:
        ctx.forbidden(policy_path, "allowMultipleAllocations must be true")


def _check_counters(ctx: Ctx, value: Any, path: str, maximum: int) -> None:
    """A map counter name -> {value}; names are DNS labels; empty maps are not allowed."""
    counters = ctx.as_map(value, path)
    if counters is None and value is not None:
        return
    if not counters:
        ctx.required(path, "")
        return
    for name, item_path, raw in keyed_items(ctx, counters, path, maximum):
        check_dns_label(ctx, name, path)
        counter = ctx.as_map(raw, item_path)
        if counter is None and raw is not None:
            continue
        counter = counter or {}
        if counter.get("value") is None:
            ctx.required(child(item_path, "value"), "")
        else:
            ctx.as_quantity(counter.get("value"), child(item_path, "value"))


def _check_counter_set(ctx: Ctx, raw: Any, path: str) -> str | None:
    counter_set = ctx.as_map(raw, path)
    if counter_set is None:
        return None
    name = ctx.as_str(counter_set.get("name"), child(path, "name"))
    if not name:
        if counter_set.get("name") is None or name == "":
            ctx.required(child(path, "name"), "")
    else:
        check_dns_label(ctx, name, child(path, "name"))
    _check_counters(ctx, counter_set.get("counters"), child(path, "counters"),
                    MAX_COUNTERS_PER_SET)
    return name


def _check_consumption(ctx: Ctx, raw: Any, path: str) -> str | None:
    consumption = ctx.as_map(raw, path)
    if consumption is None:
        return None
    set_path = child(path, "counterSet")
    counter_set = ctx.as_str(consumption.get("counterSet"), set_path)
    if not counter_set:
        if consumption.get("counterSet") is None or counter_set == "":
            ctx.required(set_path, "")
    else:
        check_dns_label(ctx, counter_set, set_path)
    _check_counters(ctx, consumption.get("counters"), child(path, "counters"),
                    MAX_COUNTERS_PER_CONSUMPTION)
    groups_path = child(path, "compatibilityGroups")
    if consumption.get("compatibilityGroups") is not None and ctx.gate(
            Gate.DRA_DEVICE_COMPATIBILITY_GROUPS, groups_path):
        groups = Uniq(ctx)
        for group_path, group in items(ctx, consumption.get("compatibilityGroups"), groups_path,
                                       MAX_COMPATIBILITY_GROUPS):
            text = ctx.as_str(group, group_path)
            if text is not None:
                check_dns_label(ctx, text, group_path)
                groups.check(text, group_path)
    return counter_set


def _check_device_node_selection(ctx: Ctx, device: Mapping[str, Any], path: str,
                                 per_device: bool) -> None:
    fields = ("nodeName", "nodeSelector", "allNodes")
    if not per_device:
        if any(device.get(f) is not None for f in fields):
            ctx.invalid(path, None, "`nodeName`, `nodeSelector` and `allNodes` can only be set "
                                    "if `perDeviceNodeSelection` is set to true in the "
                                    "ResourceSlice spec")
        return
    set_fields: list[str] = []
    node_name_path = child(path, "nodeName")
    node_name = ctx.as_str(device.get("nodeName"), node_name_path)
    if node_name is not None:
        if node_name:
            set_fields.append("`nodeName`")
            check_node_name(ctx, node_name, node_name_path)
        else:
            ctx.invalid(node_name_path, "", "must not be empty")
    selector_path = child(path, "nodeSelector")
    if check_node_selector(ctx, device.get("nodeSelector"), selector_path) is not None:
        set_fields.append("`nodeSelector`")
    if _true_or_unset(ctx, device.get("allNodes"), child(path, "allNodes")):
        set_fields.append("`allNodes`")
    if not set_fields:
        ctx.required(path, _EXACTLY_ONE_DEVICE_NODE_FIELD)
    elif len(set_fields) > 1:
        ctx.invalid(path, "{" + ", ".join(set_fields) + "}", _EXACTLY_ONE_DEVICE_NODE_FIELD)


def _check_node_allocatable(ctx: Ctx, value: Any, caps: Mapping[str, Any], path: str) -> None:
    for name, item_path, raw in keyed_items(ctx, value, path):
        if name not in _NODE_ALLOCATABLE_NAMES and not name.startswith("hugepages-"):
            ctx.invalid(item_path, name, "must be a node allocatable resource name")
        entry = ctx.as_map(raw, item_path)
        if entry is None:
            continue
        if entry.get("mapping") is None and entry.get("overhead") is None:
            ctx.required(item_path, "at least one of mapping or overhead must be set")
        mapping_path = child(item_path, "mapping")
        mapping = ctx.as_map(entry.get("mapping"), mapping_path)
        if mapping is not None:
            _check_allocatable_mapping(ctx, mapping, caps, mapping_path)
        overhead_path = child(item_path, "overhead")
        overhead = ctx.as_map(entry.get("overhead"), overhead_path)
        if overhead is not None:
            if overhead.get("perPod") is None and overhead.get("perContainer") is None:
                ctx.invalid(overhead_path, "", "at least one of perPod or perContainer must be set")
                continue
            for field in ("perPod", "perContainer"):
                q = ctx.as_quantity(overhead.get(field), child(overhead_path, field))
                if q is not None and q.sign() < 0:
                    ctx.invalid(child(overhead_path, field), str(q), "must be non-negative")


def _check_allocatable_mapping(ctx: Ctx, mapping: Mapping[str, Any], caps: Mapping[str, Any],
                               path: str) -> None:
    key_path, mult_path = child(path, "capacityKey"), child(path, "capacityMultiplier")
    capacity_key = ctx.as_str(mapping.get("capacityKey"), key_path)
    multiplier = ctx.as_quantity(mapping.get("capacityMultiplier"), mult_path)
    if capacity_key is not None:
        if not capacity_key:
            ctx.invalid(key_path, "", "capacityKey must not be an empty string")
        elif capacity_key not in caps:
            ctx.not_found(key_path, capacity_key)
        if mapping.get("capacityMultiplier") is None:
            ctx.required(mult_path, "capacityMultiplier is required when capacityKey is set")
        elif multiplier is not None and multiplier.sign() <= 0:
            ctx.invalid(mult_path, str(multiplier), "must be positive")
    device_path = child(path, "deviceMultiplier")
    device_multiplier = ctx.as_quantity(mapping.get("deviceMultiplier"), device_path)
    if device_multiplier is not None and device_multiplier.sign() <= 0:
        ctx.invalid(device_path, str(device_multiplier), "must be positive")
    if mapping.get("capacityMultiplier") is not None and mapping.get("capacityKey") is None:
        ctx.required(key_path, "capacityKey is required when capacityMultiplier is set")


def _check_partition_type(ctx: Ctx, value: Any, driver: str, devices: Sequence[Any],
                          path: str) -> None:
    attr_path = child(path, "partitionTypeAttribute")
    name = ctx.as_str(value, attr_path)
    if name is None:
        return
    consuming = [
        (i, d) for i, d in enumerate(devices)
        if isinstance(d, Mapping) and _non_empty(d.get("consumesCounters"))
    ]
    if not consuming:
        ctx.invalid(attr_path, name,
                    "may only be set on a slice which declares devices that consume counters")
        return
    before = len(ctx.errors)
    check_fully_qualified_name(ctx, name, attr_path)
    if len(ctx.errors) > before:
        return  # a malformed name matches no attribute; one error is enough
    bare = name[len(driver) + 1:] if driver and name.startswith(driver + "/") else ""
    for i, device in consuming:
        attrs = device.get("attributes")
        attrs = attrs if isinstance(attrs, Mapping) else {}
        item_path = key(child(index(child(path, "devices"), i), "attributes"), name)
        attr = attrs.get(name, attrs.get(bare) if bare else None)
        if attr is None:
            ctx.required(item_path, "device consumes counters and `partitionTypeAttribute` "
                                    "names this attribute, so it must be set")
        elif not isinstance(attr, Mapping) or attr.get("string") is None:
            ctx.invalid(item_path, attr, "must be a string value because "
                                         "`partitionTypeAttribute` names this attribute")
