"""Karpenter's capacity reservations while it provisions (ReservedCapacity gate).

A reserved offering is a pool whose template node is labelled
``karpenter.sh/capacity-type: reserved`` with a ``karpenter.sh/reservation-id``
(``karpenter_offerings``); ``autoscaling.max`` is the reservation's capacity. Several
pools may draw on one reservation (the same instance type under several NodePools): a
reservation's capacity at the start of a loop is the least ``max`` of its pools less
the nodes all of them have, those in flight included (ReservationManager: the least
capacity; a launch makes the cloud provider's offering unavailable).

Within one loop, as the scheduler's ReservationManager in the strict mode provisioning
uses (ReservedOfferingModeStrict):

- a new node holds one unit of every reservation it could launch into -- each reserved
  pool of its NodePool one fresh node of which takes its pods (pessimistic: the launch
  may pick any of them), and a reserved pool whose reservation is held in full is no
  longer an option;
- a pod that some reserved pool it may use (its NodePool by weight, its preferred
  pools) would take, while the reservation had capacity when the loop began, but whose
  every such reservation is now held, gets no node in this loop ("one or more instance
  types with compatible reserved offerings are available, but could not be reserved"):
  it neither falls back to on-demand or spot, nor to a lighter NodePool, nor relaxes its
  preferences. The next loop sees the launches and falls back if nothing is left.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .groups import NodeGroup
from .units import PodUnit

__all__ = ["RESERVED_OFFERING_ERROR", "Reservations"]

CAPACITY_TYPE = "karpenter.sh/capacity-type"
RESERVATION_ID = "karpenter.sh/reservation-id"
RESERVED = "reserved"
# NodeClaim.offeringsToReserve's ReservedOfferingError.
RESERVED_OFFERING_ERROR = ("one or more instance types with compatible reserved offerings "
                           "are available, but could not be reserved")


@dataclass(slots=True)
class Reservations:
    """The reserved pools' reservations and what is left of each in this loop."""

    ids: dict[str, str] = field(default_factory=dict)  # reserved pool -> reservation id
    initial: dict[str, int] = field(default_factory=dict)  # id -> capacity at the start
    left: dict[str, int] = field(default_factory=dict)  # id -> capacity not yet held

    @classmethod
    def of(cls, groups: Iterable[NodeGroup], labels_of: Callable[[str], Mapping[str, str]]
           ) -> Reservations:
        out = cls()
        limit: dict[str, int] = {}
        used: dict[str, int] = {}
        for g in groups:
            labels = labels_of(g.name)
            rid = labels.get(RESERVATION_ID)
            if labels.get(CAPACITY_TYPE) != RESERVED or not rid:
                continue
            out.ids[g.name] = rid
            limit[rid] = min(limit.get(rid, g.max_size), g.max_size)
            used[rid] = used.get(rid, 0) + g.max_size - g.room
        out.initial = {rid: max(0, cap - used[rid]) for rid, cap in limit.items()}
        out.left = dict(out.initial)
        return out

    def __bool__(self) -> bool:
        return bool(self.ids)

    def open(self, pool: str) -> bool:
        """Whether ``pool`` may launch: not a reserved pool, or its reservation has
        capacity not yet held."""
        rid = self.ids.get(pool)
        return rid is None or self.left[rid] > 0

    def reserve(self, pools: Iterable[str]) -> None:
        """A new node holds one unit of each of ``pools``' reservations that has any left
        (the pools it could launch into)."""
        for rid in {self.ids[p] for p in pools if p in self.ids}:
            if self.left[rid] > 0:
                self.left[rid] -= 1

    def reservable(self, pools: Iterable[str]) -> list[str]:
        """The reserved pools among ``pools`` whose reservation has capacity left."""
        return [p for p in pools if p in self.ids and self.left[self.ids[p]] > 0]

    def refused(self, units: Sequence[PodUnit], may_use: Mapping[str, Collection[str]],
                takes: Callable[[str, Sequence[PodUnit]], bool]) -> set[str]:
        """The units whose reserved options were available when the loop began but are
        all held now: each reserved pool they may use (``may_use``: per unit) and that
        would take them."""
        if all(left > 0 for left in self.left.values()):
            return set()
        out = set()
        for unit in units:
            compatible = [p for p, rid in self.ids.items() if self.initial[rid] > 0
                          and p in may_use[unit.name] and takes(p, [unit])]
            if compatible and all(self.left[self.ids[p]] == 0 for p in compatible):
                out.add(unit.name)
        return out
