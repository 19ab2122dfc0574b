"""DeviceClasses: those the drivers install, and the platform classes a Fleet asks for."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from dralab.api.base import ObjectMeta
from dralab.api.resource import (
    CELDeviceSelector,
    DeviceClass,
    DeviceClassConfiguration,
    DeviceClassSpec,
    DeviceSelector,
    OpaqueDeviceConfiguration,
)

from . import example, nvidia
from .catalog import get_model
from .spec import PlatformClass

__all__ = ["driver_classes", "platform_class"]

_NV = nvidia.DRIVER
_CD = nvidia.CD_DRIVER
NVIDIA_CONFIG_API = "resource.nvidia.com/v1beta1"


def _cls(name: str, expression: str, extended: str | None = None,
         config: list[DeviceClassConfiguration] | None = None) -> DeviceClass:
    return DeviceClass(metadata=ObjectMeta(name=name), spec=DeviceClassSpec(
        selectors=[DeviceSelector(cel=CELDeviceSelector(expression=expression))],
        config=config or [], extended_resource_name=extended))


def _nv_type(kind: str) -> str:
    return f"device.driver == '{_NV}' && device.attributes['{_NV}'].type == '{kind}'"


def driver_classes(nvidia_used: bool, compute_domains: bool, example_used: bool,
                   nic_drivers: Iterable[str], example_extended: str | None = None
                   ) -> list[DeviceClass]:
    """Classes the drivers' Helm charts install, for the drivers the fleet runs.

    NVIDIA (notes §4): ``gpu.nvidia.com`` (with ``extendedResourceName:
    nvidia.com/gpu``), ``mig.nvidia.com``, ``vfio.gpu.nvidia.com``, and the two
    ComputeDomain classes when a pool publishes them. The example driver's
    chart installs ``gpu.example.com``, with ``extendedResourceName`` when its
    ``deviceClass.extendedResourceName`` value is set (``example_extended``).
    NIC drivers get one class named after the driver.
    """
    out: list[DeviceClass] = []
    if nvidia_used:
        out += [_cls("gpu.nvidia.com", _nv_type("gpu"), "nvidia.com/gpu"),
                _cls("mig.nvidia.com", _nv_type("mig")),
                _cls("vfio.gpu.nvidia.com", _nv_type("vfio"))]
    if compute_domains:
        out += [
            _cls("compute-domain-default-channel.nvidia.com",
                 f"device.driver == '{_CD}' && device.attributes['{_CD}'].type == 'channel' "
                 f"&& device.attributes['{_CD}'].id == 0"),
            _cls("compute-domain-daemon.nvidia.com",
                 f"device.driver == '{_CD}' && device.attributes['{_CD}'].type == 'daemon'"),
        ]
    if example_used:
        out.append(_cls(example.DRIVER, f"device.driver == '{example.DRIVER}'",
                        example_extended))
    for driver in sorted(set(nic_drivers)):
        out.append(_cls(driver, f"device.driver == '{driver}'"))
    return out


def _quote_list(values: list[str]) -> str:
    return "[" + ", ".join("'" + v.replace("'", "\\'") + "'" for v in values) + "]"


def _sharing_config(spec: PlatformClass) -> list[DeviceClassConfiguration]:
    sharing = spec.sharing
    if sharing is None:
        return []
    params: dict[str, Any] = {"strategy": sharing.strategy}
    if sharing.strategy == "TimeSlicing":
        params["timeSlicingConfig"] = {"interval": sharing.interval or "Default"}
    else:
        mps: dict[str, Any] = {}
        if sharing.active_thread_percentage is not None:
            mps["defaultActiveThreadPercentage"] = sharing.active_thread_percentage
        if sharing.pinned_memory_limit is not None:
            mps["defaultPinnedDeviceMemoryLimit"] = sharing.pinned_memory_limit
        params["mpsConfig"] = mps
    kind = "MigDeviceConfig" if spec.type == "mig" else "GpuConfig"
    return [DeviceClassConfiguration(opaque=OpaqueDeviceConfiguration(
        driver=_NV, parameters={"apiVersion": NVIDIA_CONFIG_API, "kind": kind,
                                "sharing": params}))]


def platform_class(spec: PlatformClass) -> DeviceClass:
    """A platform class: driver and type, then model, profile and extra CEL, ANDed."""
    if spec.driver == "example":
        domain = example.DRIVER
        parts = [f"device.driver == '{domain}'"]
        name_attr = "model"
    else:
        domain = _NV
        parts = [_nv_type(spec.type)]
        name_attr = "productName"
    products = sorted({get_model(m).product_name for m in spec.models})
    if len(products) == 1:
        parts.append(f"device.attributes['{domain}'].{name_attr} == '{products[0]}'")
    elif products:
        parts.append(f"device.attributes['{domain}'].{name_attr} in {_quote_list(products)}")
    if spec.profiles:
        parts.append(f"device.attributes['{domain}'].profile in {_quote_list(spec.profiles)}")
    if spec.cel.strip():
        parts.append(f"({spec.cel.strip()})")
    return _cls(spec.name, " && ".join(parts), spec.extended_resource_name,
                _sharing_config(spec))
