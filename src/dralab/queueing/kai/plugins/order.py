"""KAI's taskorder and subgrouporder plugins: the order of a job's pods and of its pod
sets within one allocation turn. Both answer -1 (left first), 1 (right first) or 0
(equal: the session's next order function, then its fallback, decides)."""

from __future__ import annotations

import math

__all__ = ["podset_order", "task_order"]


def task_order(left: int | None, right: int | None) -> int:
    """taskorder.TaskOrderFn on the pods' kai.scheduler/task-priority labels (None: no
    label): a pod with the label before one without, then the higher value first."""
    if left is not None and right is None:
        return -1
    if left is None and right is not None:
        return 1
    if left is None or right is None or left == right:
        return 0
    return -1 if left > right else 1


def _ratio(active: int, minimum: int) -> float:
    # Go's float division: n/0 is +Inf, 0/0 is NaN (which compares false both ways)
    if minimum == 0:
        return math.inf if active > 0 else math.nan
    return active / minimum


def podset_order(left_active: int, left_min: int, right_active: int, right_min: int) -> int:
    """subgrouporder.PodSetOrderFn on each pod set's active allocated pods and minimum:
    one below its minimum first (both below: equal); both at or above it, the lower
    allocated/minimum ratio first."""
    left_ok = left_active >= left_min
    right_ok = right_active >= right_min
    if not left_ok and not right_ok:
        return 0
    if not left_ok:
        return -1
    if not right_ok:
        return 1
    lr, rr = _ratio(left_active, left_min), _ratio(right_active, right_min)
    if lr < rr:
        return -1
    if rr < lr:
        return 1
    return 0
