"""Fields that older Kubernetes releases had and 1.37 does not: name the replacement.

The API server drops unknown fields (or, with strict field validation, says
only ``unknown field``). A manifest written for classic DRA or an early
structured-parameters release then means something else without a word: a
claim with ``resourceClassName`` asks for nothing, a pod claim with ``source``
references nothing. Each such field is reported as Forbidden with what to use
instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from dralab.validation._context import Ctx, child

__all__ = [
    "CLAIM_SPEC",
    "DEVICE_CLASS",
    "DEVICE_CLASS_SPEC",
    "POD_RESOURCE_CLAIM",
    "TAINT_RULE_SELECTOR",
    "check_removed",
]

_CLASSIC: Final = "field of classic DRA (resource.k8s.io/v1alpha2), removed in Kubernetes 1.31"

# pod.spec.resourceClaims[i]
POD_RESOURCE_CLAIM: Final[Mapping[str, str]] = {
    "source": "field removed in Kubernetes 1.31; use resourceClaimName or "
              "resourceClaimTemplateName directly",
}

# ResourceClaim.spec and ResourceClaimTemplate.spec.spec
CLAIM_SPEC: Final[Mapping[str, str]] = {
    "resourceClassName": f"{_CLASSIC}; request devices in devices.requests, each naming a "
                         "deviceClassName",
    "parametersRef": f"{_CLASSIC}; put vendor parameters in devices.config[].opaque",
    "allocationMode": f"{_CLASSIC}; claims are allocated when the first pod using them is "
                      "scheduled (per-request allocationMode is devices.requests[].exactly"
                      ".allocationMode)",
    "controller": "field removed in Kubernetes 1.32 with the DRAControlPlaneController gate; "
                  "the scheduler allocates every claim",
}

# DeviceClass (top level): classic DRA's ResourceClass kept these beside metadata.
DEVICE_CLASS: Final[Mapping[str, str]] = {
    "driverName": f"{_CLASSIC}; select the driver's devices with a spec.selectors CEL "
                  "expression such as device.driver == \"gpu.example.com\"",
    "parametersRef": f"{_CLASSIC}; put vendor parameters in spec.config[].opaque",
    "suitableNodes": f"{_CLASSIC}; device placement comes from the ResourceSlices",
}

# DeviceClass.spec
DEVICE_CLASS_SPEC: Final[Mapping[str, str]] = {
    "suitableNodes": "field removed in Kubernetes 1.32 with the DRAControlPlaneController gate; "
                     "device placement comes from the ResourceSlices",
}

# DeviceTaintRule.spec.deviceSelector
TAINT_RULE_SELECTOR: Final[Mapping[str, str]] = {
    "deviceClassName": "field removed in Kubernetes 1.35; select devices by driver, pool and "
                       "device",
    "selectors": "field removed in Kubernetes 1.35; select devices by driver, pool and device",
}


def check_removed(ctx: Ctx, obj: Mapping[str, object], path: str,
                  removed: Mapping[str, str]) -> bool:
    """Report every removed field set in ``obj``; True if there was one."""
    found = False
    for name, advice in removed.items():
        if obj.get(name) is not None:
            ctx.forbidden(child(path, name), advice)
            found = True
    return found
