"""Builders for Kueue's flavor-assigner and scheduler tables ported to dralab.

They mirror the wrappers Kueue's tests use (``pkg/util/testing/v1beta2/wrappers.go``:
MakeClusterQueue, MakeFlavorQuotas, MakePodSet, MakeResourceFlavor) closely enough
that a case reads like its upstream original, and produce dralab's model values.
Quantities are written as Kubernetes quantities ("1", "10Mi", "500m") and stored in
milli-units as the model does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from dralab.api.quantity import Quantity
from dralab.queueing.model import (
    ClusterQueueSpec,
    CohortSpec,
    FlavorFungibility,
    FlavorQuotas,
    FlavorSpec,
    PodSetRequest,
    PreemptionPolicy,
    ResourceGroup,
    ResourceQuota,
    WorkloadSpec,
)

# Kueue's pinned commit for every ported table.
KUEUE = "kubernetes-sigs/kueue"
KUEUE_COMMIT = "ff69552e79ad21652c36caa97038382e55625cf7"

NO_SCHEDULE = "NoSchedule"


def milli(text: str | int) -> int:
    return Quantity.parse(str(text)).milli_value()


def usage(amounts: Mapping[tuple[str, str], str | int]) -> dict[tuple[str, str], int]:
    """(flavor, resource) -> quantity text, as milli-units."""
    return {fr: milli(v) for fr, v in amounts.items()}


def rf(name: str, labels: Mapping[str, str] | None = None,
       taints: tuple[tuple[str, str, str], ...] = (),
       tolerations: tuple[tuple[str, str, str, str], ...] = (),
       topology: str | None = None) -> FlavorSpec:
    """MakeResourceFlavor(name).NodeLabel(...).Taint(...).Toleration(...)."""
    return FlavorSpec(name, dict(labels or {}), taints, tolerations, topology)


def fq(flavor: str, **quotas: object) -> FlavorQuotas:
    """MakeFlavorQuotas(flavor).Resource(name, nominal[, borrowingLimit[, lendingLimit]]).

    Keyword names are resource names with ``_`` for ``/`` and ``.`` spelled out by
    ``res``; a value is the nominal quota text or a tuple (nominal, borrowing,
    lending) with ``None`` or ``""`` for an unset limit."""
    return fq_map(flavor, {_resource_name(k): v for k, v in quotas.items()})


def fq_map(flavor: str, quotas: Mapping[str, object]) -> FlavorQuotas:
    out: dict[str, ResourceQuota] = {}
    for resource, value in quotas.items():
        if isinstance(value, tuple):
            nominal, borrowing, lending = [*value, None, None][:3]
            out[resource] = ResourceQuota(
                milli(nominal),
                milli(borrowing) if borrowing not in (None, "") else None,
                milli(lending) if lending not in (None, "") else None)
        else:
            out[resource] = ResourceQuota(milli(str(value)))
    return FlavorQuotas(flavor, out)


# Resource names that are not Python identifiers, by the keyword used for them.
_RESOURCE_ALIASES = {"gpu": "example.com/gpu"}


def _resource_name(keyword: str) -> str:
    return _RESOURCE_ALIASES.get(keyword, keyword)


def group(*flavors: FlavorQuotas) -> ResourceGroup:
    """A ResourceGroup: its covered resources are those its flavors list, in order."""
    covered: list[str] = []
    for flavor in flavors:
        for resource in flavor.resources:
            if resource not in covered:
                covered.append(resource)
    return ResourceGroup(tuple(covered), tuple(flavors))


def preemption(within: str = "Never", reclaim: str = "Never",
               borrow: str = "Never") -> PreemptionPolicy:
    return PreemptionPolicy(within, reclaim, borrow)  # type: ignore[arg-type]


def fungibility(when_can_borrow: str = "MayStopSearch", when_can_preempt: str = "TryNextFlavor",
                preference: str | None = None) -> FlavorFungibility:
    return FlavorFungibility(when_can_borrow, when_can_preempt, preference)  # type: ignore[arg-type]


def cq(name: str, *groups: ResourceGroup, cohort: str | None = None,
       policy: PreemptionPolicy | None = None, flavor_fungibility: FlavorFungibility | None = None,
       strategy: str = "BestEffortFIFO", weight: float = 1.0,
       stop_policy: str = "None") -> ClusterQueueSpec:
    """MakeClusterQueue(name): BestEffortFIFO, whenCanBorrow MayStopSearch, whenCanPreempt
    TryNextFlavor, as the wrapper sets them."""
    return ClusterQueueSpec(
        name, tuple(groups), cohort, strategy,  # type: ignore[arg-type]
        None, policy or PreemptionPolicy(), weight,
        flavor_fungibility or FlavorFungibility(), stop_policy)  # type: ignore[arg-type]


def cohort(name: str, *groups: ResourceGroup, parent: str | None = None,
           weight: float = 1.0) -> CohortSpec:
    return CohortSpec(name, parent, tuple(groups), weight)


def ps(name: str, count: int, requests: Mapping[str, str | int] | None = None,
       node_selector: Mapping[str, str] | None = None,
       tolerations: tuple[tuple[str, str, str, str], ...] = (),
       affinity: tuple[tuple[tuple[str, str, tuple[str, ...]], ...], ...] = (),
       group: str | None = None, min_count: int | None = None) -> PodSetRequest:
    """MakePodSet(name, count).Request(...).PodSetGroup(group).SetMinimumCount(min_count):
    requests per pod."""
    per_pod = {r: milli(v) for r, v in (requests or {}).items()}
    return PodSetRequest(name, count, per_pod, dict(node_selector or {}), tolerations,
                         None, affinity, group, min_count)


def workload(key: str, *pod_sets: PodSetRequest, queue: str = "main",
             cluster_queue: str | None = None, priority: int = 0,
             created: float = 0.0) -> WorkloadSpec:
    return WorkloadSpec(key, queue, cluster_queue, priority, created, tuple(pod_sets))


@dataclass(frozen=True)
class WantPodSet:
    """What upstream's PodSetAssignment asserts: flavors (resource -> (flavor, mode)),
    status reasons (compared sorted, as statusComparer does) and count."""

    name: str
    flavors: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    reasons: tuple[str, ...] = ()
    count: int = 1
