"""The per-queue numbers KAI's proportion plugin keeps (resource_share package).

Every queue, parent or leaf, has one :class:`ResourceShare` per resource: its deserved
quota, fair share, limit (maxAllowed), over-quota weight, what its jobs have allocated
(all of it and the non-preemptible part), what they request and the historical usage.
Quantities are ``{"cpu": ..., "memory": ..., "gpu": ...}`` in KAI's units at this layer:
CPU millicores, memory bytes, GPUs in devices (fractions allowed). ``-1`` (UNLIMITED)
in deserved or maxAllowed means no bound.

The comparisons keep KAI's resource order (CPU, memory, GPU: ``rs.AllResources``),
because the capacity checks report the first resource that fails.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace

from dralab.queueing.kai.model import UNLIMITED, ResourceName

__all__ = [
    "RESOURCES",
    "Quantities",
    "QueueShare",
    "ResourceShare",
    "add",
    "chain",
    "compare",
    "less",
    "less_equal",
    "less_in_at_least_one",
    "quantities",
    "sub",
]

# rs.AllResources: CPU, Memory, GPU -- the order every per-resource loop uses.
RESOURCES: tuple[ResourceName, ...] = ("cpu", "memory", "gpu")
Quantities = dict[str, float]
# queue_resource_share.go noFairShareDrfMultiplier: a resource with no allocatable share
# weighs its allocation this many times in the dominant resource share.
NO_FAIR_SHARE_DRF_MULTIPLIER = 1000.0


def quantities(cpu: float = 0.0, memory: float = 0.0, gpu: float = 0.0) -> Quantities:
    return {"cpu": cpu, "memory": memory, "gpu": gpu}


def add(left: Mapping[str, float], right: Mapping[str, float]) -> Quantities:
    return {r: left.get(r, 0.0) + right.get(r, 0.0) for r in RESOURCES}


def sub(left: Mapping[str, float], right: Mapping[str, float]) -> Quantities:
    return {r: left.get(r, 0.0) - right.get(r, 0.0) for r in RESOURCES}


def compare(quantity: float, other: float) -> int:
    """resource_quantities.go compareQuantities: -1 (unlimited) is above every number."""
    if quantity == UNLIMITED:
        return 0 if other == UNLIMITED else 1
    if other == UNLIMITED:
        return -1
    return (quantity > other) - (quantity < other)


def less(left: Mapping[str, float], right: Mapping[str, float]) -> bool:
    """Strictly below in every resource (plain numbers: unlimited is not special here,
    as in KAI's ``Less``)."""
    return all(left.get(r, 0.0) < right.get(r, 0.0) for r in RESOURCES)


def less_equal(left: Mapping[str, float], right: Mapping[str, float]) -> bool:
    return all(compare(left.get(r, 0.0), right.get(r, 0.0)) <= 0 for r in RESOURCES)


def less_in_at_least_one(left: Mapping[str, float], right: Mapping[str, float]) -> bool:
    return not less_equal(right, left)


@dataclass(slots=True)
class ResourceShare:
    """One resource of one queue (resource_share.go ResourceShare)."""

    deserved: float = 0.0
    fair_share: float = 0.0
    max_allowed: float = 0.0
    over_quota_weight: float = 0.0
    allocated: float = 0.0
    allocated_not_preemptible: float = 0.0
    request: float = 0.0
    usage: float = 0.0

    def requestable(self) -> float:
        """What the queue may be given: its request, capped by its limit."""
        if self.max_allowed == UNLIMITED:
            return self.request
        return min(self.max_allowed, self.request)

    def allocatable(self) -> float:
        """What the queue may hold: max(deserved, fair share), capped by the limit;
        an unlimited quota answers the limit itself (-1 when both are unlimited)."""
        if self.deserved == UNLIMITED:
            return self.max_allowed
        value = max(self.deserved, self.fair_share)
        if self.max_allowed != UNLIMITED:
            value = min(self.max_allowed, value)
        return value

    def copy(self) -> ResourceShare:
        return replace(self)


@dataclass(slots=True)
class QueueShare:
    """A queue's three resource shares and what orders it (QueueAttributes).

    ``name`` is the queue's identity (KAI's UID; dralab's queue names are unique),
    ``title`` what messages call it (KAI's Name; the name when empty).
    ``created``: seconds, the creationTimestamp's order."""

    name: str
    parent: str | None = None
    children: tuple[str, ...] = ()
    priority: int = 0
    created: float = 0.0
    cpu: ResourceShare = field(default_factory=ResourceShare)
    memory: ResourceShare = field(default_factory=ResourceShare)
    gpu: ResourceShare = field(default_factory=ResourceShare)
    title: str = ""

    @property
    def display(self) -> str:
        return self.title or self.name

    def share(self, resource: str) -> ResourceShare:
        if resource == "cpu":
            return self.cpu
        if resource == "memory":
            return self.memory
        if resource == "gpu":
            return self.gpu
        # KAI answers nil for another name; a KeyError here, never a wrong resource
        raise KeyError(resource)

    def shares(self) -> Iterator[tuple[str, ResourceShare]]:
        for resource in RESOURCES:
            yield resource, self.share(resource)

    def _collect(self, pick: Callable[[ResourceShare], float]) -> Quantities:
        return {r: pick(s) for r, s in self.shares()}

    def fair_share(self) -> Quantities:
        return self._collect(lambda s: s.fair_share)

    def deserved(self) -> Quantities:
        return self._collect(lambda s: s.deserved)

    def allocated(self) -> Quantities:
        return self._collect(lambda s: s.allocated)

    def allocated_not_preemptible(self) -> Quantities:
        return self._collect(lambda s: s.allocated_not_preemptible)

    def max_allowed(self) -> Quantities:
        return self._collect(lambda s: s.max_allowed)

    def request(self) -> Quantities:
        return self._collect(lambda s: s.request)

    def requestable(self) -> Quantities:
        return self._collect(ResourceShare.requestable)

    def allocatable(self) -> Quantities:
        return self._collect(ResourceShare.allocatable)

    def dominant_resource_share(self, total: Mapping[str, float]) -> float:
        """The largest allocated/allocatable ratio over the resources (an unlimited
        allocatable share is the cluster's total; none at all weighs 1000 times)."""
        dominant = 0.0
        for resource, share in self.shares():
            allocatable = share.allocatable()
            if allocatable == UNLIMITED:
                allocatable = total.get(resource, 0.0)
            if allocatable == 0:
                value = share.allocated * NO_FAIR_SHARE_DRF_MULTIPLIER
            else:
                value = share.allocated / allocatable
            dominant = max(dominant, value)
        return dominant

    def copy(self) -> QueueShare:
        return replace(self, cpu=self.cpu.copy(), memory=self.memory.copy(),
                       gpu=self.gpu.copy())


def chain(shares: Mapping[str, QueueShare], queue: str | None) -> Iterable[QueueShare]:
    """The queue's share, then its parent's, up to the root (a cycle or a missing
    parent ends the walk)."""
    seen: set[str] = set()
    while queue is not None and queue in shares and queue not in seen:
        seen.add(queue)
        yield shares[queue]
        queue = shares[queue].parent


def fair_share_saturation(allocated: float, fair_share: float) -> float:
    """allocated / fairShare; no fair share is infinitely saturated when anything is
    allocated, an unlimited one never (reclaimable.go fairShareSaturationRatio)."""
    if fair_share == 0:
        return math.inf if allocated > 0 else 0.0
    if fair_share == UNLIMITED:
        return 0.0
    return allocated / fair_share
