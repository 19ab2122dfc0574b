"""The time Kueue queues a pending workload by (``workload.Ordering.GetQueueOrderTimestamp``):
its creation, unless a condition moves it back in the line.

* Evicted=True for ``PodsReadyTimeout`` (waitForPodsReady): the eviction's time, when
  ``waitForPodsReady.requeuingStrategy.timestamp`` is ``Eviction`` (Kueue's default);
* Evicted=True for ``AdmissionCheck``: the eviction's time, always;
* with the PrioritySortingWithinCohort gate off (it is on by default), Preempted=True
  for ``InCohortReclaimWhileBorrowing``: the preemption's time plus a millisecond, so
  that the preempted workload queues strictly after its preemptor.

Kueue orders a ClusterQueue's pending workloads by priority, then by this time; the
scheduler's classical iterator uses it as its FIFO rule too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["CREATION_TIMESTAMP", "EVICTION_TIMESTAMP", "PRIORITY_SORTING_GATE",
           "QueueCondition", "queue_order_timestamp"]

# waitForPodsReady.requeuingStrategy.timestamp values (Kueue's RequeuingTimestamp).
EVICTION_TIMESTAMP = "Eviction"
CREATION_TIMESTAMP = "Creation"
# Kueue's beta gate, on by default.
PRIORITY_SORTING_GATE = "PrioritySortingWithinCohort"

_PODS_READY_TIMEOUT = "PodsReadyTimeout"
_ADMISSION_CHECK = "AdmissionCheck"
_RECLAIM_WHILE_BORROWING = "InCohortReclaimWhileBorrowing"
_EPSILON = 0.001  # Kueue adds one millisecond


@dataclass(frozen=True, slots=True)
class QueueCondition:
    """A Workload status condition as the queue order reads it (``time``: its
    lastTransitionTime in seconds)."""

    type: str
    status: str
    reason: str
    time: float


def _find(conditions: Iterable[QueueCondition], kind: str) -> QueueCondition | None:
    return next((c for c in conditions if c.type == kind), None)


def queue_order_timestamp(created: float, conditions: Iterable[QueueCondition],
                          requeuing_timestamp: str = EVICTION_TIMESTAMP,
                          priority_sorting: bool = True) -> float:
    """The time the workload queues by (see the module's docstring)."""
    conditions = tuple(conditions)
    evicted = _find(conditions, "Evicted")
    if evicted is not None and evicted.status == "True":
        if evicted.reason == _PODS_READY_TIMEOUT and requeuing_timestamp == EVICTION_TIMESTAMP:
            return evicted.time
        if evicted.reason == _ADMISSION_CHECK:
            return evicted.time
    if not priority_sorting:
        preempted = _find(conditions, "Preempted")
        if (preempted is not None and preempted.status == "True"
                and preempted.reason == _RECLAIM_WHILE_BORROWING):
            return preempted.time + _EPSILON
    return created
