"""ResourceClaimStatus: allocation result, reservations and per-device status.

Checked as for a new allocation: results written today must satisfy today's
rules. The API server would not re-validate an allocation it stored earlier.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any, Final

from dralab.api.features import Gate
from dralab.validation._claim import RequestNames, check_request_ref, check_request_refs
from dralab.validation._context import Ctx, child
from dralab.validation._core_common import check_node_selector
from dralab.validation._dra_common import (
    QUALIFIED_KEY_PATH_MAX,
    Uniq,
    check_binding_conditions,
    check_device_name,
    check_device_tolerations,
    check_driver_name,
    check_opaque_config,
    check_pool_name,
    check_qualified_name,
    check_raw_json_object,
    check_skip_node_operations,
    check_uid,
    items,
    keyed_items,
)
from dralab.validation._meta import check_conditions

__all__ = ["check_claim_status"]

RESULTS_MAX: Final = 32
ALLOCATION_CONFIG_MAX: Final = 64  # class config + claim config
RESERVED_FOR_MAX: Final = 256
DEVICE_CONDITIONS_MAX: Final = 8
DEVICE_DATA_MAX: Final = 10 * 1024
INTERFACE_NAME_MAX: Final = 256
HARDWARE_ADDRESS_MAX: Final = 128
IPS_MAX: Final = 16
_CONFIG_SOURCES: Final = ("FromClaim", "FromClass")

DeviceId = tuple[str, str, str, str]


def check_claim_status(ctx: Ctx, value: Any, path: str, names: RequestNames) -> None:
    status = ctx.as_map(value, path)
    if status is None:
        return
    allocation_path = child(path, "allocation")
    allocation = ctx.as_map(status.get("allocation"), allocation_path)

    reserved_path = child(path, "reservedFor")
    uids = Uniq(ctx)
    reserved = 0
    for ref_path, raw in items(ctx, status.get("reservedFor"), reserved_path, RESERVED_FOR_MAX):
        reserved += 1
        uid = _check_consumer_ref(ctx, raw, ref_path)
        if uid:
            uids.check(uid, ref_path)

    allocated: set[DeviceId] = set()
    if allocation is not None:
        allocated = _allocated_devices(allocation)
    devices_path = child(path, "devices")
    if status.get("devices") is not None and ctx.gate(Gate.DRA_RESOURCE_CLAIM_DEVICE_STATUS,
                                                      devices_path):
        seen = Uniq(ctx)
        for dev_path, raw in items(ctx, status.get("devices"), devices_path):
            ident = _check_device_status(ctx, raw, dev_path, allocated)
            if ident is not None:
                seen.check(ident, dev_path, "/".join(p for p in ident if p))

    if reserved and allocation is None:
        ctx.forbidden(reserved_path, "may not be specified when `allocated` is not set")
    if allocation is not None:
        _check_allocation(ctx, allocation, allocation_path, names)


def _check_consumer_ref(ctx: Ctx, raw: Any, path: str) -> str | None:
    ref = ctx.as_map(raw, path)
    if ref is None:
        return None
    ctx.as_str(ref.get("apiGroup"), child(path, "apiGroup"))
    for name in ("resource", "name", "uid"):
        text = ctx.as_str(ref.get(name), child(path, name))
        if text == "" or ref.get(name) is None:
            ctx.required(child(path, name), "")
    uid = ref.get("uid")
    return uid if isinstance(uid, str) and uid else None


def _device_id(entry: Mapping[str, Any]) -> DeviceId:
    def text(name: str) -> str:
        value = entry.get(name)
        return value if isinstance(value, str) else ""
    return text("driver"), text("pool"), text("device"), text("shareID")


def _allocated_devices(allocation: Mapping[str, Any]) -> set[DeviceId]:
    devices = allocation.get("devices")
    results = devices.get("results") if isinstance(devices, Mapping) else None
    return {_device_id(r) for r in (results if isinstance(results, list | tuple) else ())
            if isinstance(r, Mapping)}


def _check_allocation(ctx: Ctx, allocation: Mapping[str, Any], path: str,
                      names: RequestNames) -> None:
    devices_path = child(path, "devices")
    devices = ctx.as_map(allocation.get("devices"), devices_path) or {}
    for result_path, raw in items(ctx, devices.get("results"), child(devices_path, "results"),
                                  RESULTS_MAX):
        _check_result(ctx, raw, result_path, names)
    for cfg_path, raw in items(ctx, devices.get("config"), child(devices_path, "config"),
                               ALLOCATION_CONFIG_MAX):
        cfg = ctx.as_map(raw, cfg_path)
        if cfg is None:
            continue
        source_path = child(cfg_path, "source")
        source = ctx.as_str(cfg.get("source"), source_path)
        if not source:
            if cfg.get("source") is None or source == "":
                ctx.required(source_path, "")
        elif source not in _CONFIG_SOURCES:
            ctx.not_supported(source_path, source, _CONFIG_SOURCES)
        check_request_refs(ctx, cfg.get("requests"), child(cfg_path, "requests"), names)
        check_opaque_config(ctx, cfg, cfg_path)
    check_node_selector(ctx, allocation.get("nodeSelector"), child(path, "nodeSelector"))
    timestamp_path = child(path, "allocationTimestamp")
    if allocation.get("allocationTimestamp") is not None and ctx.gate(
            Gate.DRA_DEVICE_BINDING_CONDITIONS, timestamp_path):
        ctx.as_time(allocation.get("allocationTimestamp"), timestamp_path)


def _check_result(ctx: Ctx, raw: Any, path: str, names: RequestNames) -> None:
    result = ctx.as_map(raw, path)
    if result is None:
        return
    request_path = child(path, "request")
    request = ctx.as_str(result.get("request"), request_path)
    if not request:
        if result.get("request") is None or request == "":
            ctx.required(request_path, "")
    else:
        check_request_ref(ctx, request, request_path, names)
    check_driver_name(ctx, result.get("driver"), child(path, "driver"))
    check_pool_name(ctx, result.get("pool"), child(path, "pool"))
    check_device_name(ctx, result.get("device"), child(path, "device"))
    check_binding_conditions(ctx, result, path)
    check_device_tolerations(ctx, result.get("tolerations"), child(path, "tolerations"))
    admin_path = child(path, "adminAccess")
    if result.get("adminAccess") is not None and ctx.gate(Gate.DRA_ADMIN_ACCESS, admin_path):
        ctx.as_bool(result.get("adminAccess"), admin_path)
    share_path = child(path, "shareID")
    if result.get("shareID") is not None and ctx.gate(Gate.DRA_CONSUMABLE_CAPACITY, share_path):
        check_uid(ctx, result.get("shareID"), share_path)
    consumed_path = child(path, "consumedCapacity")
    if result.get("consumedCapacity") is not None and ctx.gate(Gate.DRA_CONSUMABLE_CAPACITY,
                                                               consumed_path):
        for k, item_path, amount in keyed_items(ctx, result.get("consumedCapacity"), consumed_path,
                                                truncate=QUALIFIED_KEY_PATH_MAX):
            check_qualified_name(ctx, k, consumed_path)
            if amount is None:
                ctx.required(item_path, "")
            ctx.as_quantity(amount, item_path)
    check_skip_node_operations(ctx, result.get("skipNodeOperations"),
                               child(path, "skipNodeOperations"))


def _check_device_status(ctx: Ctx, raw: Any, path: str,
                         allocated: set[DeviceId]) -> DeviceId | None:
    device = ctx.as_map(raw, path)
    if device is None:
        return None
    check_driver_name(ctx, device.get("driver"), child(path, "driver"))
    check_pool_name(ctx, device.get("pool"), child(path, "pool"))
    check_device_name(ctx, device.get("device"), child(path, "device"))
    if device.get("shareID") is not None:
        check_uid(ctx, device.get("shareID"), child(path, "shareID"))
    ident = _device_id(device)
    if ident not in allocated:
        ctx.invalid(path, "/".join(p for p in ident if p), "must be an allocated device in the "
                                                           "claim")
    conditions_path = child(path, "conditions")
    conditions = device.get("conditions")
    if isinstance(conditions, list | tuple) and len(conditions) > DEVICE_CONDITIONS_MAX:
        ctx.too_many(conditions_path, len(conditions), DEVICE_CONDITIONS_MAX)
    check_conditions(ctx, conditions, conditions_path)
    if device.get("data") is not None:
        check_raw_json_object(ctx, device.get("data"), child(path, "data"), DEVICE_DATA_MAX)
    _check_network_data(ctx, device.get("networkData"), child(path, "networkData"))
    return ident


def _check_network_data(ctx: Ctx, value: Any, path: str) -> None:
    data = ctx.as_map(value, path)
    if data is None:
        return
    interface = ctx.as_str(data.get("interfaceName"), child(path, "interfaceName"))
    if interface is not None and len(interface.encode()) > INTERFACE_NAME_MAX:
        ctx.too_long(child(path, "interfaceName"), INTERFACE_NAME_MAX)
    hardware = ctx.as_str(data.get("hardwareAddress"), child(path, "hardwareAddress"))
    if hardware is not None and len(hardware.encode()) > HARDWARE_ADDRESS_MAX:
        ctx.too_long(child(path, "hardwareAddress"), HARDWARE_ADDRESS_MAX)
    ips_path = child(path, "ips")
    ips = ctx.string_list(data.get("ips"), ips_path)
    if len(ips) > IPS_MAX:
        ctx.too_many(ips_path, len(ips), IPS_MAX)
        return
    uniq = Uniq(ctx)
    for i, text in ips:
        item_path = f"{ips_path}[{i}]"
        _check_interface_address(ctx, text, item_path)
        uniq.check(text, item_path)


def _check_interface_address(ctx: Ctx, text: str, path: str) -> None:
    try:
        address = ipaddress.ip_interface(text)
    except ValueError:
        ctx.invalid(path, text,
                    "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)")
        return
    if "/" not in text:
        ctx.invalid(path, text,
                    "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)")
    elif str(address) != text:
        ctx.invalid(path, text, f'must be in canonical form ("{address}")')
