"""The claim-shape vocabulary: what a pod asks of devices, in a few words, as DRA objects.

A ``ClaimShape`` says "N whole GPUs", "one MIG instance of profile 3g.40gb" or "a
share of a GPU's memory", optionally restricted to a product and with
alternatives in order of preference. ``claim_template`` writes it as the
ResourceClaimTemplate a pod references. The simulator's job kinds speak this
vocabulary; so can anything that rewrites workloads into DRA (a migration
assistant), which is why it lives with the objects and not in the simulator.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from .base import ObjectMeta
from .celtext import cel_string
from .quantity import parse_quantity
from .resource import (
    CapacityRequirements,
    CELDeviceSelector,
    DeviceClaim,
    DeviceConstraint,
    DeviceRequest,
    DeviceSelector,
    DeviceSubRequest,
    ExactDeviceRequest,
    ResourceClaimSpec,
    ResourceClaimTemplate,
    ResourceClaimTemplateSpec,
)

__all__ = [
    "GPU_CLASS",
    "MIG_CLASS",
    "REQUEST_NAME",
    "ClaimShape",
    "claim_spec",
    "claim_template",
    "exact_request",
    "mig_fraction",
]

# The DeviceClasses of NVIDIA's DRA driver, and the attribute domain of its devices.
GPU_CLASS = "gpu.nvidia.com"
MIG_CLASS = "mig.nvidia.com"
_NVIDIA = "gpu.nvidia.com"
# The one request of a shaped claim; alternatives are its subrequests alt0, alt1, ...
REQUEST_NAME = "gpu"


@dataclass(frozen=True, slots=True)
class ClaimShape:
    """One device request in words.

    ``type``: ``gpu`` (``count`` whole GPUs), ``mig`` (one instance of ``profile``)
    or ``share`` (``memory`` of a GPU that allows multiple allocations).
    ``device_class`` overrides the driver's class; ``product_name`` pins the model;
    ``match_attribute`` keeps several GPUs on one value of an attribute (e.g. the
    same NVLink domain). ``first_available``: alternatives in order of preference
    (then the other fields are not used).
    """

    type: Literal["gpu", "mig", "share"] = "gpu"
    count: int = 1
    device_class: str | None = None
    product_name: str = ""
    match_attribute: str = ""
    profile: str = ""
    memory: str = ""
    first_available: tuple[ClaimShape, ...] = ()


def _cel(expression: str) -> DeviceSelector:
    return DeviceSelector(cel=CELDeviceSelector(expression=expression))


def _attribute_is(name: str, value: str) -> DeviceSelector:
    """``device.attributes["gpu.nvidia.com"].<name> == <value>``, the value quoted for CEL
    (never pasted: a quote in it must not end the string)."""
    return _cel(f"device.attributes[{cel_string(_NVIDIA)}].{name} == {cel_string(value)}")


def exact_request(shape: ClaimShape) -> ExactDeviceRequest:
    """The request for one alternative (``first_available`` not looked at)."""
    selectors: list[DeviceSelector] = []
    capacity = None
    if shape.type == "mig":
        cls = shape.device_class or MIG_CLASS
        selectors.append(_attribute_is("profile", shape.profile))
        count = 1
    elif shape.type == "share":
        cls = shape.device_class or GPU_CLASS
        selectors.append(_cel("device.allowMultipleAllocations"))
        capacity = CapacityRequirements(requests={"memory": parse_quantity(shape.memory)})
        count = 1
    else:
        cls = shape.device_class or GPU_CLASS
        count = shape.count
    if shape.product_name:
        selectors.append(_attribute_is("productName", shape.product_name))
    return ExactDeviceRequest(device_class_name=cls, selectors=selectors, count=count,
                              capacity=capacity)


def claim_spec(shape: ClaimShape) -> ResourceClaimSpec:
    """The claim spec: one request ``gpu`` (with subrequests for alternatives)."""
    constraints: list[DeviceConstraint] = []
    if shape.first_available:
        subs = []
        for i, alt in enumerate(shape.first_available):
            ex = exact_request(alt)
            subs.append(DeviceSubRequest(name=f"alt{i}", device_class_name=ex.device_class_name,
                                         selectors=ex.selectors, count=ex.count,
                                         capacity=ex.capacity))
        request = DeviceRequest(name=REQUEST_NAME, first_available=subs)
    else:
        request = DeviceRequest(name=REQUEST_NAME, exactly=exact_request(shape))
        if shape.match_attribute and shape.count > 1:
            constraints.append(DeviceConstraint(match_attribute=shape.match_attribute))
    return ResourceClaimSpec(devices=DeviceClaim(requests=[request], constraints=constraints))


def claim_template(name: str, namespace: str | None, shape: ClaimShape) -> ResourceClaimTemplate:
    """The ResourceClaimTemplate ``namespace/name`` whose claims ask for ``shape``."""
    return ResourceClaimTemplate(
        api_version=ResourceClaimTemplate.API_VERSION, kind=ResourceClaimTemplate.KIND,
        metadata=ObjectMeta(name=name, namespace=namespace),
        spec=ResourceClaimTemplateSpec(spec=claim_spec(shape)))


_MIG_SLICES = 7
_MIG_COMPUTE = re.compile(r"([1-7])g\.")


def mig_fraction(profile: str) -> float:
    """The share of a GPU a MIG profile ``<g>g.<memory>...`` takes: g of its 7 compute
    slices; a whole GPU for a name of another shape (nothing to go by)."""
    match = _MIG_COMPUTE.match(profile)
    return int(match.group(1)) / _MIG_SLICES if match else 1.0
