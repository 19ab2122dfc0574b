"""KAI's elastic plugin: its job order puts a job below its gang minimum before one at
or above it, and one exactly at its minimum before one above it (extra pods of an
elastic job wait for every other job's gang)."""

from __future__ import annotations

from collections.abc import Mapping

from dralab.queueing.kai.framework import ACTIVE_ALLOCATED, SessionJob

__all__ = ["ABOVE", "AT", "BELOW", "job_order", "job_state", "min_available_state"]

BELOW, AT, ABOVE = -1, 0, 1


def min_available_state(minima: Mapping[str, int], allocated: Mapping[str, int]) -> int:
    """minAvailableState: BELOW when some pod set has fewer active allocated pods than
    its minimum, AT when every pod set has exactly its minimum, else ABOVE."""
    exact = True
    for podset, minimum in minima.items():
        count = allocated.get(podset, 0)
        if count < minimum:
            return BELOW
        if count > minimum:
            exact = False
    return AT if exact else ABOVE


def job_state(job: SessionJob) -> int:
    minima = job.podsets()
    if not job.spec.subgroups and not minima:
        # a pod group without pods still has its default pod set and its minimum (the
        # session lists pod sets from pods, so it has none here)
        minima = {"": max(job.spec.min_member, 1)}
    return min_available_state(minima, {s: job.count(ACTIVE_ALLOCATED, s) for s in minima})


def job_order(left: int, right: int) -> int:
    """JobOrderFn on two jobs' states: -1 left first, 1 right first, 0 equal."""
    if left == BELOW and right != BELOW:
        return -1
    if left == AT and right == ABOVE:
        return -1
    if left != BELOW and right == BELOW:
        return 1
    if left == ABOVE and right == AT:
        return 1
    return 0
