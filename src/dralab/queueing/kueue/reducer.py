"""Kueue's partial admission (the ``PartialAdmission`` gate, beta and on by default):
the pod-set reducer and the workload scaled to fewer pods.

When a workload does not fit with every pod, and some pod set allows fewer
(``spec.podSets[].minCount`` below ``count``), Kueue searches for the largest counts
that fit (``pkg/scheduler/flavorassigner/podset_reducer.go``, used by the
scheduler's getInitialAssignments). Every pod set walks down from its count to its
minimum together: search index ``i`` of ``0..D`` (``D`` the sum of the pod sets'
``count - minCount``) gives pod set ``p`` the count ``count_p - delta_p * i // D``;
a binary search finds the smallest index whose counts fit. As upstream's, the search
assumes that fitting is monotonic in the index and returns the last fitting try.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TypeVar

from dralab.queueing.model import PodSetRequest, WorkloadSpec

__all__ = ["can_be_partially_admitted", "full_counts", "minimum_counts", "reduce_pod_sets",
           "scaled_workload"]

R = TypeVar("R")


def _minimum(pod_set: PodSetRequest) -> int:
    full = pod_set.count + pod_set.reclaimed
    return full if pod_set.min_count is None else pod_set.min_count


def can_be_partially_admitted(workload: WorkloadSpec) -> bool:
    """Kueue's CanBePartiallyAdmitted: some pod set's count is above its minCount."""
    return any(p.count + p.reclaimed > _minimum(p) for p in workload.pod_sets)


def full_counts(workload: WorkloadSpec) -> list[int]:
    """The spec's counts (before reclaimable pods are taken off)."""
    return [p.count + p.reclaimed for p in workload.pod_sets]


def reduce_pod_sets(counts: Sequence[int], minimums: Sequence[int],
                    fits: Callable[[list[int]], tuple[R | None, bool]]
                    ) -> tuple[R | None, bool]:
    """Kueue's PodSetReducer.Search: the result of ``fits`` for the largest counts
    between ``counts`` and ``minimums`` that fit, and whether one was found."""
    deltas = [full - low for full, low in zip(counts, minimums, strict=True)]
    total = sum(deltas)
    last: R | None = None
    if total == 0:
        return last, False
    last_good = 0
    low, high = 0, total + 1
    while low < high:  # sort.Search: the smallest index whose counts fit
        middle = (low + high) // 2
        # Go truncates the product's quotient (both non-negative: floor).
        tried = [full - delta * middle // total for full, delta in zip(counts, deltas,
                                                                          strict=True)]
        result, ok = fits(tried)
        if ok:
            last_good, last = middle, result
            high = middle
        else:
            low = middle + 1
    return last, low == last_good


def scaled_workload(workload: WorkloadSpec, counts: Sequence[int]) -> WorkloadSpec:
    """The workload with pod set ``i`` asking for ``counts[i]`` pods (Kueue's
    PodSetResources.ScaledTo: a pod set of none keeps its count; ScaledTo's exception
    for a TopologyRequest is the topology assignment of an admitted pod set, which a
    pending workload being reduced has not got, so a pod set asking a topology scales
    too)."""
    pod_sets = []
    for pod_set, count in zip(workload.pod_sets, counts, strict=True):
        if pod_set.count == 0 or count == pod_set.count:
            pod_sets.append(pod_set)
        else:
            pod_sets.append(replace(pod_set, count=count, reclaimed=0))
    return replace(workload, pod_sets=tuple(pod_sets))


def minimum_counts(workload: WorkloadSpec) -> list[int]:
    return [_minimum(p) for p in workload.pod_sets]
