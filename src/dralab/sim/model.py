"""The typed scenario: what a checked Scenario document means, parsed once.

``spec`` holds the wire format (strings such as ``2h``, ``3/h``, ``8Gi``, kept as
written for error messages and for the claim vocabulary); ``scenario`` checks a
document and builds these values once, when it loads. Everything downstream (the
job draw, pods, metrics, node events) reads seconds, jobs per second, Quantities
and typed device requests from here and never parses a scenario field again.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Literal

from dralab.api.core import Taint, Toleration
from dralab.api.quantity import Quantity, parse_quantity

from .spec import DeviceShape, JobKind, NodeEvent, parse_duration, parse_rate

__all__ = ["DurationLaw", "Kind", "KindDevices", "NodeChange", "typed_event", "typed_kind"]

NodeAction = Literal["add", "remove", "taint", "untaint"]


@dataclass(frozen=True, slots=True)
class DurationLaw:
    """A job kind's run-time distribution, in seconds."""

    distribution: Literal["fixed", "exponential", "lognormal", "uniform"]
    mean: float = 0.0
    sigma: float = 0.5
    low: float = 0.0     # uniform
    high: float = 0.0    # uniform

    def draw(self, rng: random.Random) -> float:
        if self.distribution == "uniform":
            return rng.uniform(self.low, self.high)
        if self.distribution == "fixed":
            return self.mean
        if self.distribution == "exponential":
            return rng.expovariate(1.0 / self.mean)
        # lognormal with the given mean: mu chosen so that E[X] = mean.
        mu = math.log(self.mean) - self.sigma * self.sigma / 2
        return rng.lognormvariate(mu, self.sigma)


@dataclass(frozen=True, slots=True)
class KindDevices:
    """What each pod of a kind asks for (``devices``, or a template's translation): whole
    GPUs, one MIG device of ``profile``, or ``memory`` of a shared GPU; or a prioritized
    list of ``alternatives``."""

    type: Literal["gpu", "mig", "share"] = "gpu"
    count: int = 1
    device_class: str | None = None
    product_name: str = ""
    match_attribute: str = ""
    profile: str = ""
    memory: Quantity | None = None
    alternatives: tuple[KindDevices, ...] = ()

    @staticmethod
    def of(shape: DeviceShape) -> KindDevices:
        return KindDevices(
            type=shape.type, count=shape.count, device_class=shape.class_,
            product_name=shape.product_name, match_attribute=shape.match_attribute,
            profile=shape.profile,
            memory=parse_quantity(shape.memory) if shape.type == "share" else None,
            alternatives=tuple(KindDevices.of(a) for a in shape.first_available))

    @property
    def whole_gpus(self) -> int:
        """Whole GPUs the device-plugin model gives this request (its first alternative):
        MIG slices and shares cannot be expressed there."""
        if self.alternatives:
            return self.alternatives[0].whole_gpus
        return self.count if self.type == "gpu" else 1

    @property
    def memory_mib(self) -> int:
        return self.memory.value() // (1024 * 1024) if self.memory is not None else 0


@dataclass(frozen=True, slots=True)
class Kind:
    """One job kind, typed. ``spec`` is the document's job kind as written.

    ``rate`` is jobs per second (None with explicit ``arrivals``, in seconds);
    ``devices`` the built-in request; ``demand`` what a pod's devices stand for in
    metrics (``devices``, or for a manifest template its device-plugin translation's
    shape)."""

    name: str
    spec: JobKind
    rate: float | None
    arrivals: tuple[float, ...]
    duration: DurationLaw
    pods_per_job: int
    priority: int
    cpu: Quantity
    memory: Quantity
    tolerations: tuple[Toleration, ...]
    devices: KindDevices | None
    demand: KindDevices | None
    template: str | None
    compute_domain: bool = False   # each job creates a ComputeDomain (computedomains)


@dataclass(frozen=True, slots=True)
class NodeChange:
    """A node event at ``at`` seconds. ``add`` names a removed ``node`` to bring back, or a
    ``pool`` to grow by one node (``node`` is then that new node's name, fixed when the
    scenario loaded). ``taint`` is the taint a ``taint`` event sets; ``taint_key`` the key
    a ``taint`` or ``untaint`` event replaces or removes."""

    at: float
    action: NodeAction
    node: str
    pool: str | None = None
    taint: Taint | None = None
    taint_key: str | None = None


def _law(kind: JobKind) -> DurationLaw:
    d = kind.duration
    if d.distribution == "uniform":
        return DurationLaw("uniform", sigma=d.sigma, low=parse_duration(d.min),
                           high=parse_duration(d.max))
    return DurationLaw(d.distribution, mean=parse_duration(d.mean), sigma=d.sigma)


def typed_kind(kind: JobKind, demand: DeviceShape | None) -> Kind:
    """The typed form of a checked job kind; ``demand`` is its metrics shape."""
    return Kind(
        name=kind.name, spec=kind,
        rate=parse_rate(kind.arrival_rate) if kind.arrival_rate is not None else None,
        arrivals=tuple(sorted(parse_duration(t) for t in kind.arrivals)),
        duration=_law(kind), pods_per_job=kind.pods_per_job, priority=kind.priority,
        cpu=parse_quantity(str(kind.cpu)), memory=parse_quantity(str(kind.memory)),
        tolerations=tuple(Toleration(key=t.get("key"), operator=t.get("operator"),
                                     value=t.get("value"), effect=t.get("effect"))
                          for t in kind.tolerations),
        devices=KindDevices.of(kind.devices) if kind.devices is not None else None,
        demand=KindDevices.of(demand) if demand is not None else None,
        template=kind.template, compute_domain=kind.compute_domain)


def typed_event(event: NodeEvent, node: str) -> NodeChange:
    """The typed form of a checked node event; ``node`` its node (for a pool add, the
    name the new node gets)."""
    taint = None
    if event.action == "taint" and event.taint is not None:
        taint = Taint(key=str(event.taint["key"]), value=event.taint.get("value"),
                      effect=str(event.taint["effect"]))
    key = event.taint.get("key") if event.taint else None
    return NodeChange(at=parse_duration(event.at), action=event.action, node=node,
                      pool=event.pool, taint=taint,
                      taint_key=None if key is None else str(key))
