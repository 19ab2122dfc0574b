"""Turning claims into search input: everything that does not depend on the node.

Validation mirrors upstream's order so the first problem reported is the same:
per request (in spec order) the prioritized-list and consumable-capacity
gates, then per (sub)request the selector kinds, admin access gate, class and
allocation mode; after all requests the 32-results bound; then constraints.
Problems are recorded, not raised, together with their position, because
"All" requests interleave node-dependent checks (see ``search``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from dralab.api.quantity import Quantity
from dralab.api.resource import (
    DeviceClass,
    DeviceRequest,
    DeviceSelector,
    DeviceSubRequest,
    DeviceToleration,
    ExactDeviceRequest,
    ResourceClaim,
)
from dralab.cel import Features as CelFeatures

from .features import AllocatorFeatures
from .selection import Selector, selector

__all__ = ["MAX_RESULTS", "PreparedClaim", "Req", "Slot", "claim_label", "prepare_claim"]

# resourceapi.AllocationResultsMaxSize
MAX_RESULTS = 32


def claim_label(claim: ResourceClaim) -> str:
    """How upstream names a claim in messages: namespace/name, or name."""
    ns = claim.metadata.namespace
    return f"{ns}/{claim.name}" if ns else claim.name


@dataclass(eq=False, slots=True)
class Req:
    """One request, or one subrequest of a firstAvailable list."""

    name: str  # own name
    parent: str  # parent request for subrequests, else ""
    full_name: str  # "parent/sub" or name, as written into results
    cls: DeviceClass
    selectors: tuple[Selector, ...]  # class selectors, then the request's
    labels: tuple[str, ...]  # owner of each selector, for messages
    request_selectors_from: int  # index of the first request selector
    all_mode: bool
    count: int
    admin: bool
    tolerations: tuple[DeviceToleration, ...]
    capacity: Mapping[str, Quantity] | None
    source: ExactDeviceRequest | DeviceSubRequest = field(repr=False)

    @property
    def base_name(self) -> str:
        return self.parent or self.name

    @property
    def sub_name(self) -> str:
        return self.name if self.parent else ""


@dataclass(eq=False, slots=True)
class Slot:
    """One entry of ``spec.devices.requests``: a plain request or a list of alternatives."""

    name: str
    req: Req | None
    subs: tuple[Req, ...]


@dataclass(eq=False, slots=True)
class PreparedClaim:
    """A claim validated as far as possible without a node."""

    claim: ResourceClaim
    label: str
    slots: tuple[Slot, ...]
    flat: tuple[Req, ...]  # every (sub)request in validation order
    error: str | None = None
    error_at: int = 0  # the error comes after validating flat[:error_at]
    # (kind, attribute, requests) per constraint; kind "match" or "distinct".
    constraints: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    constraint_error: str | None = None
    has_config: bool = False  # any class or claim config to merge into the result
    # Without "All" requests the lower bound on devices does not depend on the node.
    has_all: bool = False
    minimum: int = 0


class _Invalid(Exception):
    pass


def _request_selectors(label: str, name: str, selectors: Sequence[DeviceSelector],
                       cel: CelFeatures) -> tuple[tuple[Selector, ...], tuple[str, ...]]:
    if not selectors:
        return (), ()
    out, labels = [], []
    for i, s in enumerate(selectors):
        if s.cel is None:
            raise _Invalid(f"claim {label}, request {name}, selector #{i}: CEL expression "
                           "empty (unsupported selector type?)")
        out.append(selector(s.cel.expression, cel))
        labels.append(f"claim {label}: selector #{i}")
    return tuple(out), tuple(labels)


# Class selectors per (class object, CEL features); the entry keeps the class
# alive, so its id cannot be reused while cached.
_CLASS_SELECTORS: dict[tuple[int, CelFeatures],
                       tuple[DeviceClass, tuple[Selector, ...], tuple[str, ...]]] = {}


def _class_selectors(cls: DeviceClass, cel: CelFeatures
                     ) -> tuple[tuple[Selector, ...], tuple[str, ...]]:
    key = (id(cls), cel)
    found = _CLASS_SELECTORS.get(key)
    if found is not None and found[0] is cls:
        return found[1], found[2]
    out, labels = [], []
    for i, s in enumerate(cls.spec.selectors):
        if s.cel is None:
            raise _Invalid(f"class {cls.name}, selector #{i}: CEL expression empty "
                           "(unsupported selector type?)")
        out.append(selector(s.cel.expression, cel))
        labels.append(f"class {cls.name}: selector #{i}")
    if len(_CLASS_SELECTORS) > 4096:
        _CLASS_SELECTORS.clear()
    _CLASS_SELECTORS[key] = (cls, tuple(out), tuple(labels))
    return tuple(out), tuple(labels)


def _make_req(label: str, name: str, parent: str, source: ExactDeviceRequest | DeviceSubRequest,
              admin_flag: bool | None, classes: Mapping[str, DeviceClass],
              features: AllocatorFeatures, cel: CelFeatures) -> Req:
    req_sels, req_labels = _request_selectors(label, name, source.selectors, cel)
    if admin_flag is not None and not features.admin_access:
        raise _Invalid(f"claim {label}, request {name}: admin access is requested, but the "
                       "feature is disabled")
    class_name = source.device_class_name
    if not class_name:
        raise _Invalid(f"claim {label}, request {name}: missing device class name "
                       "(unsupported request type?)")
    cls = classes.get(class_name)
    if cls is None:
        raise _Invalid(f"claim {label}, request {name}: could not retrieve device class "
                       f"{class_name}: deviceclass.resource.k8s.io \"{class_name}\" not found")
    cls_sels, cls_labels = _class_selectors(cls, cel)
    mode = source.allocation_mode or "ExactCount"
    if mode == "ExactCount":
        count = 1 if source.count is None else source.count
    elif mode == "All":
        count = 0
    else:
        raise _Invalid(f"claim {label}, request {name}: unsupported count mode {mode}")
    return Req(
        name=name,
        parent=parent,
        full_name=f"{parent}/{name}" if parent else name,
        cls=cls,
        selectors=cls_sels + req_sels if req_sels else cls_sels,
        labels=cls_labels + req_labels if req_labels else cls_labels,
        request_selectors_from=len(cls_sels),
        all_mode=mode == "All",
        count=count,
        admin=bool(admin_flag),
        tolerations=tuple(source.tolerations),
        capacity=source.capacity.requests if source.capacity is not None else None,
        source=source,
    )


def _slot(label: str, request: DeviceRequest, classes: Mapping[str, DeviceClass],
          features: AllocatorFeatures, cel: CelFeatures, flat: list[Req]) -> Slot:
    subs = request.first_available
    if subs and not features.prioritized_list:
        raise _Invalid(f"claim {label}, request {request.name}: has subrequests, but the "
                       "DRAPrioritizedList feature is disabled")
    exact = request.exactly
    if not features.consumable_capacity:
        if exact is not None and exact.capacity is not None:
            raise _Invalid(f"claim {label}, request {request.name}: has capacity requests, "
                           "but the DRAConsumableCapacity feature is disabled")
        for sub in subs:
            if sub.capacity is not None:
                raise _Invalid(f"claim {label}, subrequest {sub.name}: has capacity requests, "
                               "but the DRAConsumableCapacity feature is disabled")
    if subs:
        made = []
        for sub in subs:
            req = _make_req(label, sub.name, request.name, sub, None, classes, features, cel)
            flat.append(req)
            made.append(req)
        return Slot(request.name, None, tuple(made))
    if exact is None:
        raise _Invalid(f"claim {label}, request {request.name}: missing device class name "
                       "(unsupported request type?)")
    req = _make_req(label, request.name, "", exact, exact.admin_access, classes, features, cel)
    flat.append(req)
    return Slot(request.name, req, ())


def prepare_claim(claim: ResourceClaim, classes: Mapping[str, DeviceClass],
                  features: AllocatorFeatures, cel: CelFeatures) -> PreparedClaim:
    """Validate ``claim``; never raises for bad input (problems are recorded)."""
    label = claim_label(claim)
    flat: list[Req] = []
    slots: list[Slot] = []
    prepared = PreparedClaim(claim=claim, label=label, slots=(), flat=())
    try:
        for request in claim.spec.devices.requests:
            slots.append(_slot(label, request, classes, features, cel, flat))
    except _Invalid as exc:
        prepared.error = str(exc)
    prepared.error_at = len(flat)
    prepared.has_config = bool(claim.spec.devices.config) or any(r.cls.spec.config for r in flat)
    prepared.flat = tuple(flat)
    prepared.slots = tuple(slots)
    prepared.has_all = any(r.all_mode for r in flat)
    if not prepared.has_all and prepared.error is None:
        prepared.minimum = sum(slot.req.count if slot.req is not None
                               else min(s.count for s in slot.subs) for slot in slots)
    constraints = []
    for i, c in enumerate(claim.spec.devices.constraints):
        if c.match_attribute is not None:
            constraints.append(("match", c.match_attribute, tuple(c.requests)))
        elif c.distinct_attribute is not None:
            constraints.append(("distinct", c.distinct_attribute, tuple(c.requests)))
        else:
            prepared.constraint_error = (f"claim {label}, constraint #{i}: empty constraint "
                                         "(unsupported constraint type?)")
            break
    prepared.constraints = tuple(constraints)
    return prepared
