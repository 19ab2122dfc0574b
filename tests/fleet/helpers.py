"""Builders for fleet tests: one-pool fleets, MIG claims, allocation helpers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dralab.api.base import ObjectMeta
from dralab.api.resource import (
    CELDeviceSelector,
    DeviceClaim,
    DeviceConstraint,
    DeviceRequest,
    DeviceSelector,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimSpec,
)
from dralab.fleet import Fleet, parse_fleet

NV = "gpu.nvidia.com"


def fleet_of(model: str | None, *, count: int = 1, gpus: int = 8, mig: str = "off",
             driver: str = "nvidia", **pool: Any) -> Fleet:
    """A fleet with one pool ``p`` of ``count`` nodes (``p-01`` ...)."""
    gpu: dict[str, Any] = {"count": gpus, "mig": {"mode": mig}}
    if model is not None:
        gpu["model"] = model
    gpu.update(pool.pop("gpu", {}))
    data = {"apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet",
            "spec": {"pools": [{"name": "p", "count": count, "driver": driver, "gpu": gpu,
                                **pool}]}}
    return parse_fleet(data, "<test>")


def selector(expression: str) -> DeviceSelector:
    return DeviceSelector(cel=CELDeviceSelector(expression=expression))


def request(name: str, device_class: str = "gpu.nvidia.com", *cel: str,
            count: int | None = None) -> DeviceRequest:
    return DeviceRequest(name=name, exactly=ExactDeviceRequest(
        device_class_name=device_class, selectors=[selector(c) for c in cel], count=count))


def claim(name: str, *requests: DeviceRequest,
          match: Sequence[str] = (), namespace: str = "default") -> ResourceClaim:
    constraints = [DeviceConstraint(match_attribute=m) for m in match]
    return ResourceClaim(metadata=ObjectMeta(name=name, namespace=namespace),
                         spec=ResourceClaimSpec(devices=DeviceClaim(
                             requests=list(requests), constraints=constraints)))


def mig_claim(name: str, profiles: Sequence[str]) -> ResourceClaim:
    """One MIG request per profile, all on the same GPU (matchAttribute parentUUID)."""
    reqs = [request(f"mig-{i}", "mig.nvidia.com",
                    f"device.attributes['{NV}'].profile == '{p}'")
            for i, p in enumerate(profiles)]
    return claim(name, *reqs, match=[f"{NV}/parentUUID"])


def devices_of(outcome: Any) -> list[str]:
    """Device names of an Allocated outcome, claim by claim, result by result."""
    return [r.device for c in outcome.claims
            for r in c.status.allocation.devices.results]
