"""KAI's reclaim checks (proportion/reclaimable and reclaimable/strategies).

Public API (the reclaim action calls these on the shares of ``proportion``):

* :func:`can_reclaim_resources` ``(shares, queue, required, preemptible)``: may a job of
  ``queue`` asking ``required`` reclaim at all? Its queue with the job must stay within
  its fair share in every resource, and a non-preemptible job also within its deserved
  quota for what is non-preemptible (CanReclaimResourcesFn).
* :func:`reclaimable` ``(shares, queue, required, preemptible, victims_by_queue,
  saturation_multiplier=1.0)``: is this scenario (victims' resources per victim queue,
  see ``proportion.victim_resources``) a valid reclaim? Every victim queue, seen at the
  level where its branch meets the reclaimer's, must fit a reclaim strategy before each
  of its victims is taken; then, from the reclaimer's queue up to the top, each level
  with the job must stay less saturated (allocated/fair share) than every sibling that
  loses resources, and a non-preemptible job within deserved quota.
  Call it on a copy of the shares per job (KAI clones them when a job's solution starts).
* :func:`fits_reclaim_strategy`, :func:`maintain_fair_share`,
  :func:`guarantee_deserved_quota`: the two strategies (either allows the reclaim).

Determinism: KAI ranges over a Go map of victim queues; here they go by name (the
remaining allocation of a shared ancestor depends on the order victims are taken).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from dralab.queueing.kai.model import UNLIMITED
from dralab.queueing.kai.shares import (
    RESOURCES,
    Quantities,
    QueueShare,
    add,
    chain,
    fair_share_saturation,
    less_equal,
    sub,
)

__all__ = [
    "can_reclaim_resources",
    "fits_reclaim_strategy",
    "guarantee_deserved_quota",
    "leveled_queues",
    "maintain_fair_share",
    "reclaimable",
]


def can_reclaim_resources(shares: Mapping[str, QueueShare], queue: str,
                          required: Mapping[str, float], preemptible: bool) -> bool:
    own = shares[queue]
    if not less_equal(add(own.allocated(), required), own.fair_share()):
        return False
    if preemptible:
        return True
    return less_equal(add(own.allocated_not_preemptible(), required), own.deserved())


def maintain_fair_share(reclaimee: QueueShare, remaining: Mapping[str, float]) -> bool:
    """MaintainFairShareStrategy: the reclaimee holds more than it may (its allocatable
    share) in some resource."""
    return not less_equal(remaining, reclaimee.allocatable())


def guarantee_deserved_quota(required: Mapping[str, float], reclaimer: QueueShare,
                             reclaimee: QueueShare, remaining: Mapping[str, float]) -> bool:
    """GuaranteeDeservedQuotaStrategy: the reclaimer stays within its deserved quota with
    the job, and the reclaimee is above its own in some resource."""
    if not less_equal(add(reclaimer.allocated(), required), reclaimer.deserved()):
        return False
    return not less_equal(remaining, reclaimee.deserved())


def fits_reclaim_strategy(required: Mapping[str, float], reclaimer: QueueShare,
                          reclaimee: QueueShare, remaining: Mapping[str, float]) -> bool:
    return (maintain_fair_share(reclaimee, remaining)
            or guarantee_deserved_quota(required, reclaimer, reclaimee, remaining))


def _path(shares: Mapping[str, QueueShare], queue: str | None) -> list[QueueShare]:
    path: list[QueueShare] = []
    seen: set[str] = set()
    while queue is not None and queue in shares and queue not in seen:
        seen.add(queue)
        path.insert(0, shares[queue])
        queue = shares[queue].parent
    return path


def leveled_queues(shares: Mapping[str, QueueShare], reclaimer: str,
                   reclaimee: str) -> tuple[QueueShare, QueueShare]:
    """getLeveledQueues: the two queues where the branches from the top part (the
    first level they differ at, or the last common depth)."""
    ours = _path(shares, reclaimer)
    theirs = _path(shares, reclaimee)
    pair = (ours[0], theirs[0])
    for mine, other in zip(ours, theirs, strict=False):
        pair = (mine, other)
        if mine.name != other.name:
            break
    return pair


def _involved(resources: Iterable[Mapping[str, float] | None]) -> set[str]:
    names: set[str] = set()
    for amounts in resources:
        if amounts is None:
            continue
        names.update(r for r in RESOURCES if amounts.get(r, 0.0) > 0)
    return names


def reclaimable(shares: Mapping[str, QueueShare], queue: str, required: Mapping[str, float],
                preemptible: bool, victims_by_queue: Mapping[str, Sequence[Mapping[str, float]]],
                saturation_multiplier: float = 1.0) -> bool:
    remaining: dict[str, Quantities] = {}
    involved: dict[str, set[str]] = {}
    for victim_queue in sorted(victims_by_queue):
        victims = victims_by_queue[victim_queue]
        reclaimer, reclaimee = leveled_queues(shares, queue, victim_queue)
        involved[victim_queue] = _involved(victims)
        if reclaimee.name not in remaining:
            remaining[reclaimee.name] = reclaimee.allocated()
        for amounts in victims:
            if not fits_reclaim_strategy(required, reclaimer, reclaimee,
                                         remaining[reclaimee.name]):
                return False
            for ancestor in chain(shares, victim_queue):
                left = remaining.get(ancestor.name, ancestor.allocated())
                remaining[ancestor.name] = sub(left, amounts)
                involved.setdefault(ancestor.name, set()).update(involved[victim_queue])
    return _within_boundaries(shares, queue, required, preemptible, remaining, involved,
                              saturation_multiplier)


def _within_boundaries(shares: Mapping[str, QueueShare], queue: str,
                       required: Mapping[str, float], preemptible: bool,
                       remaining: Mapping[str, Quantities], involved: Mapping[str, set[str]],
                       multiplier: float) -> bool:
    reclaimer_involved = _involved([required])
    for level in chain(shares, queue):
        with_job = add(remaining.get(level.name, level.allocated()), required)
        for sibling_name in sorted(remaining):
            sibling = shares[sibling_name]
            if sibling.parent != level.parent or sibling.name == level.name:
                continue
            resources = involved.get(sibling_name, set()) | reclaimer_involved
            if not _saturation_lower(resources, with_job, level.fair_share(),
                                     remaining[sibling_name], sibling.fair_share(), multiplier):
                return False
        if preemptible:
            continue
        if not less_equal(add(level.allocated_not_preemptible(), required), level.deserved()):
            return False
    return True


def _saturation_lower(resources: Iterable[str], reclaimer_allocated: Mapping[str, float],
                      reclaimer_fair: Mapping[str, float], sibling_allocated: Mapping[str, float],
                      sibling_fair: Mapping[str, float], multiplier: float) -> bool:
    """isFairShareSaturationLowerPerResource: a reclaimer level above its fair share
    must stay strictly less saturated (times the multiplier) than the sibling."""
    for resource in resources:
        mine, theirs = reclaimer_fair[resource], sibling_fair[resource]
        if mine == UNLIMITED and theirs == UNLIMITED:
            continue
        ratio = fair_share_saturation(reclaimer_allocated[resource], mine)
        sibling_ratio = fair_share_saturation(sibling_allocated[resource], theirs)
        if ratio > 1 and theirs > 0 and ratio * multiplier >= sibling_ratio:
            return False
    return True
