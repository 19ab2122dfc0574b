"""Karpenter's offerings and how consolidation picks a replacement among them
(sigs.k8s.io/karpenter pkg/cloudprovider/types.go: InstanceType, Offering,
OrderByPrice, WorstLaunchPrice, SatisfiesMinValues; pkg/controllers/disruption
consolidation.go computeConsolidation / computeSpotToSpotConsolidation,
multinodeconsolidation.go filterOutSameInstanceType).

In dralab an **offering** is one autoscaled Fleet pool: its template node's labels
say the instance type (``node.kubernetes.io/instance-type``, the pool's name when
absent), the capacity type (``karpenter.sh/capacity-type``: ``on-demand`` when
absent, ``spot`` or ``reserved``), the zone (``topology.kubernetes.io/zone``) and a
reservation (``karpenter.sh/reservation-id``); its ``autoscaling.pricePerHour`` is
the offering's price, and it is available while the pool has room (``max`` is a
reserved offering's ReservationCapacity). An **instance type** is the offerings
sharing an instance-type label; its per-offering capacity overrides are the pools'
own sizes. Names follow Karpenter's cloudprovider types.

A replacement (one new NodeClaim) may launch any instance type that has an offering
one fresh node of which takes every pod left over; as upstream:

* a reserved offering that fits pins the NodeClaim to reserved capacity (the
  scheduler injects the reserved requirement, ReservedCapacity gate, on by default);
* otherwise, when every candidate is spot and the NodeClaim allows spot, the
  spot-to-spot rules: the ``SpotToSpotConsolidation`` gate (default off) must be
  on; the options are the spot ones cheaper than the candidates; a single node needs
  at least 15 of them (MinInstanceTypesForSpotToSpotConsolidation) and the launch
  is limited to the 15 cheapest (more when minValues needs more);
* otherwise the options whose worst launch price is below the candidates' price; a
  NodeClaim allowing both spot and on-demand launches spot.

minValues (the NodePool's requirements) must still hold on the options that remain,
or there is no command. The launch is the cheapest offering the NodeClaim allows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from dralab.allocator.nodes import NodeSelectorError, NodeView, compile_node_selector
from dralab.api.core import Pod

__all__ = ["CAPACITY_TYPE", "INSTANCE_TYPE", "MIN_INSTANCE_TYPES_FOR_SPOT_TO_SPOT",
           "ON_DEMAND", "RESERVATION_ID", "RESERVED", "SPOT", "ConsolidationCandidate",
           "InstanceTypeOption", "Offering", "Replacement", "capacity_types_for",
           "choose_replacement", "instance_types", "offering_of", "satisfies_min_values"]

INSTANCE_TYPE = "node.kubernetes.io/instance-type"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
RESERVATION_ID = "karpenter.sh/reservation-id"
ZONE = "topology.kubernetes.io/zone"
ON_DEMAND, SPOT, RESERVED = "on-demand", "spot", "reserved"
# disruption.MinInstanceTypesForSpotToSpotConsolidation.
MIN_INSTANCE_TYPES_FOR_SPOT_TO_SPOT = 15
# WorstLaunchPrice's order: the capacity types a launch is tried in.
_LAUNCH_ORDER = (RESERVED, SPOT, ON_DEMAND)


@dataclass(frozen=True, slots=True)
class Offering:
    """cloudprovider.Offering: one pool (instance type x zone x capacity type)."""

    pool: str
    instance_type: str
    capacity_type: str
    zone: str | None
    price: float
    available: bool
    labels: Mapping[str, str]


def offering_of(pool: str, labels: Mapping[str, str], price: float, available: bool
                ) -> Offering:
    return Offering(pool, labels.get(INSTANCE_TYPE, pool),
                    labels.get(CAPACITY_TYPE, ON_DEMAND), labels.get(ZONE), price, available,
                    labels)


def _admits(pod: Pod, labels: Mapping[str, str]) -> bool:
    """Whether a node with ``labels`` meets the pod's nodeSelector and required node
    affinity."""
    if any(labels.get(k) != v for k, v in pod.spec.node_selector.items()):
        return False
    affinity = pod.spec.affinity
    node_affinity = affinity.node_affinity if affinity is not None else None
    required = node_affinity.required_during_scheduling_ignored_during_execution \
        if node_affinity is not None else None
    if required is None:
        return True
    try:
        return compile_node_selector(required).matches(NodeView("", labels))
    except NodeSelectorError:
        return False


def capacity_types_for(pods: Iterable[Pod], offerings: Iterable[Offering]) -> frozenset[str]:
    """The capacity types a NodeClaim for ``pods`` may have: those of the offerings
    (the NodePool's, its requirements already met) whose labels every pod's required
    node selection meets."""
    pods = list(pods)
    return frozenset(o.capacity_type for o in offerings
                     if all(_admits(p, o.labels) for p in pods))


@dataclass(frozen=True, slots=True)
class InstanceTypeOption:
    """One of a NodeClaim's InstanceTypeOptions: the type's offerings that fit and that
    the NodeClaim's capacity types allow."""

    name: str
    offerings: tuple[Offering, ...]

    @property
    def price(self) -> float:
        """OrderByPrice's key: its cheapest available offering."""
        return min((o.price for o in self.offerings if o.available), default=math.inf)

    @property
    def worst_launch_price(self) -> float:
        """Offerings.WorstLaunchPrice: the dearest offering of the first capacity type
        (reserved, spot, on-demand) it has."""
        for capacity in _LAUNCH_ORDER:
            prices = [o.price for o in self.offerings
                      if o.available and o.capacity_type == capacity]
            if prices:
                return max(prices)
        return math.inf

    def restricted(self, capacity_types: frozenset[str]) -> InstanceTypeOption | None:
        kept = tuple(o for o in self.offerings if o.capacity_type in capacity_types)
        return InstanceTypeOption(self.name, kept) if kept else None


def instance_types(offerings: Iterable[Offering]) -> list[InstanceTypeOption]:
    """The offerings grouped by instance type, ordered by price (then name)."""
    by_type: dict[str, list[Offering]] = {}
    for o in offerings:
        by_type.setdefault(o.instance_type, []).append(o)
    options = [InstanceTypeOption(name, tuple(sorted(group, key=lambda o: (o.price, o.pool))))
               for name, group in by_type.items()]
    return sorted(options, key=lambda o: (o.price, o.name))


def satisfies_min_values(options: Sequence[InstanceTypeOption], min_values: Mapping[str, int]
                         ) -> tuple[int, bool]:
    """InstanceTypes.SatisfiesMinValues over options in price order: how many of the
    first options it takes to meet every key's minValues, and whether they are met."""
    if not min_values:
        return 0, True
    seen: dict[str, set[str]] = {key: set() for key in min_values}
    for index, option in enumerate(options):
        for key in min_values:
            seen[key].update(o.labels[key] for o in option.offerings if key in o.labels)
            if key == INSTANCE_TYPE:
                seen[key].add(option.name)
        if all(len(seen[k]) >= n for k, n in min_values.items()):
            return index + 1, True
    return len(options), False


@dataclass(frozen=True, slots=True)
class Replacement:
    """The replacement NodeClaim: its instance type options (price order) and the
    offering launched (the cheapest it allows)."""

    options: tuple[InstanceTypeOption, ...]
    launch: Offering


@dataclass(frozen=True, slots=True)
class ConsolidationCandidate:
    """What the choice reads of a candidate: its offering's type, capacity type, price."""

    instance_type: str
    capacity_type: str
    price: float


def _below(options: Sequence[InstanceTypeOption], max_price: float,
           min_values: Mapping[str, int]) -> list[InstanceTypeOption] | None:
    """NodeClaim.RemoveInstanceTypeOptionsByPriceAndMinValues (None: minValues fails)."""
    kept = [o for o in options if o.worst_launch_price < max_price]
    return kept if satisfies_min_values(kept, min_values)[1] else None


def _launch(options: Sequence[InstanceTypeOption], capacity_types: frozenset[str]
            ) -> Offering | None:
    """The cheapest available offering of the first allowed capacity type, in
    reserved, spot, on-demand order."""
    for capacity in _LAUNCH_ORDER:
        if capacity not in capacity_types:
            continue
        found = [o for opt in options for o in opt.offerings
                 if o.available and o.capacity_type == capacity]
        if found:
            return min(found, key=lambda o: (o.price, o.pool))
    return None


def _same_type_price(options: Sequence[InstanceTypeOption],
                     candidates: Sequence[ConsolidationCandidate]) -> float:
    """filterOutSameInstanceType's bound: the cheapest candidate price among the
    candidates' types that are also options (no bound when none is)."""
    names = {o.name for o in options}
    prices = [c.price for c in candidates if c.instance_type in names]
    return min(prices, default=math.inf)


def choose_replacement(fitting: Sequence[Offering], candidates: Sequence[ConsolidationCandidate],
                       allowed: frozenset[str], *, multi: bool,
                       spot_to_spot: bool, min_values: Mapping[str, int]
                       ) -> Replacement | None:
    """The replacement for ``candidates`` whose leftover pods ``fitting`` offerings
    take (one fresh node each), or None when Karpenter finds no command. ``allowed``:
    the capacity types the NodeClaim's requirements allow (the NodePool's and the
    pods'); ``multi``: multi-node consolidation (filterOutSameInstanceType applies)."""
    price = sum(c.price for c in candidates)
    fitting = [o for o in fitting if o.capacity_type in allowed and o.available]
    if any(o.capacity_type == RESERVED for o in fitting):
        allowed = frozenset({RESERVED})  # the scheduler pins reserved capacity
    options = [r for o in instance_types(fitting) if (r := o.restricted(allowed))]
    if allowed != {RESERVED} and SPOT in allowed and \
            all(c.capacity_type == SPOT for c in candidates):
        if not spot_to_spot:
            return None  # "SpotToSpotConsolidation is disabled, ..."
        allowed = frozenset({SPOT})
        options = [r for o in options if (r := o.restricted(allowed))]
        kept = _below(options, price, min_values)
        if not kept:
            return None
        if not multi:
            if len(kept) < MIN_INSTANCE_TYPES_FOR_SPOT_TO_SPOT:
                return None  # "SpotToSpotConsolidation requires 15 cheaper ..."
            needed = satisfies_min_values(kept, min_values)[0] if min_values else 0
            kept = kept[:max(MIN_INSTANCE_TYPES_FOR_SPOT_TO_SPOT, needed)]
    else:
        kept = _below(options, price, min_values)
        if not kept:
            return None  # "Can't replace with a cheaper node" (or minValues)
        if SPOT in allowed and ON_DEMAND in allowed:
            allowed = frozenset({SPOT})  # never fall back to a dearer on-demand launch
    if multi:
        kept = _below(kept, _same_type_price(kept, candidates), min_values)
        if not kept:
            return None
    launch = _launch(kept, allowed)
    return Replacement(tuple(kept), launch) if launch is not None else None
