"""Device needs (what one container's GPUs become) and their ResourceClaimTemplates.

A ``DeviceNeed`` is the claim-shape vocabulary (``dralab.api.claimshape``) plus
the CEL selectors translated from GPU node labels. Workloads of one namespace
asking for the same need share one template, named by what it holds
(``gpu-1``, ``gpu-8-h100-80gb-hbm3``, ``mig-1g-5gb``, ``gpu-share-8gi``; a short
hash of the selectors when no product names them). ``class_for`` lets a caller
(the pilot plan) use platform DeviceClasses named by use instead of the driver's.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass

import msgspec

from dralab.api.base import ObjectMeta
from dralab.api.claimshape import ClaimShape, exact_request
from dralab.api.resource import (
    CELDeviceSelector,
    DeviceClaim,
    DeviceRequest,
    DeviceSelector,
    ResourceClaimSpec,
    ResourceClaimTemplate,
    ResourceClaimTemplateSpec,
)

__all__ = ["ClassChooser", "DeviceNeed", "TemplateNames", "claim_template"]

_MAX_NAME = 63
_SLUG = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True, slots=True)
class DeviceNeed:
    """``type`` gpu (``count`` whole GPUs), mig (``count`` devices of ``profile``) or share
    (``memory`` of a GPU that allows multiple allocations); ``selectors``: extra CEL;
    ``product``: the product label the selectors came from (names the template)."""

    type: str
    count: int = 1
    profile: str = ""
    memory: str = ""
    selectors: tuple[str, ...] = ()
    product: str = ""

    def words(self) -> str:
        """``8 GPUs``, ``1 MIG 1g.5gb``, ``a 8Gi share of a GPU``."""
        if self.type == "mig":
            return f"{self.count} MIG {self.profile}"
        if self.type == "share":
            return f"a {self.memory} share of a GPU"
        return f"{self.count} GPU{'s' if self.count != 1 else ''}"


ClassChooser = Callable[[DeviceNeed], str | None]


def _slug(text: str) -> str:
    return _SLUG.sub("-", text.lower()).strip("-")


def _base_name(need: DeviceNeed) -> str:
    if need.type == "mig":
        name = f"mig-{_slug(need.profile)}" + (f"-x{need.count}" if need.count > 1 else "")
    elif need.type == "share":
        name = f"gpu-share-{_slug(need.memory)}"
    else:
        name = f"gpu-{need.count}"
    if need.product:
        name += "-" + _slug(need.product.removeprefix("NVIDIA-").removesuffix("-SHARED"))
    elif need.selectors:
        digest = hashlib.sha256("\n".join(need.selectors).encode()).hexdigest()[:6]
        name += f"-{digest}"
    return name[:_MAX_NAME].rstrip("-")


class TemplateNames:
    """Template names per namespace: one per distinct need, never two needs on one name."""

    def __init__(self) -> None:
        self._names: dict[tuple[str | None, DeviceNeed], str] = {}
        self._taken: set[tuple[str | None, str]] = set()

    def name(self, namespace: str | None, need: DeviceNeed) -> str:
        key = (namespace, need)
        if key in self._names:
            return self._names[key]
        base = _base_name(need)
        name, n = base, 2
        while (namespace, name) in self._taken:
            name = f"{base[:_MAX_NAME - 4]}-{n}"
            n += 1
        self._names[key] = name
        self._taken.add((namespace, name))
        return name

    def items(self) -> list[tuple[str | None, str, DeviceNeed]]:
        """(namespace, name, need), sorted by namespace and name."""
        return sorted(((ns, name, need) for (ns, need), name in self._names.items()),
                      key=lambda t: (t[0] or "", t[1]))


def claim_template(namespace: str | None, name: str, need: DeviceNeed,
                   class_for: ClassChooser | None = None) -> ResourceClaimTemplate:
    """The template whose claims ask for ``need``: one request ``gpu``."""
    device_class = class_for(need) if class_for is not None else None
    shape = ClaimShape(type="share" if need.type == "share" else
                       "mig" if need.type == "mig" else "gpu",
                       count=need.count, profile=need.profile, memory=need.memory,
                       device_class=device_class)
    request = exact_request(shape)
    extra = [DeviceSelector(cel=CELDeviceSelector(expression=e)) for e in need.selectors]
    request = msgspec.structs.replace(request, count=need.count,
                                      selectors=[*request.selectors, *extra])
    spec = ResourceClaimSpec(devices=DeviceClaim(requests=[
        DeviceRequest(name="gpu", exactly=request)]))
    return ResourceClaimTemplate(
        api_version=ResourceClaimTemplate.API_VERSION, kind=ResourceClaimTemplate.KIND,
        metadata=ObjectMeta(name=name, namespace=namespace),
        spec=ResourceClaimTemplateSpec(spec=spec))
