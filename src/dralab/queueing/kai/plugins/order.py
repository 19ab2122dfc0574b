"""KAI's task and pod-set order plugins: kubeflow, ray and taskorder (the order of a
job's pods, asked in that order, the configuration's) and subgrouporder (the order of
its pod sets) within one allocation turn. Each answers -1 (left first), 1 (right first)
or 0 (equal: the next order function, then the session's fallback, decides)."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping

__all__ = ["kubeflow_order", "podset_order", "ray_order", "task_order"]

# kubeflow: training.kubeflow.org/job-role master or launcher first
_KUBEFLOW_ROLE = "training.kubeflow.org/job-role"
_KUBEFLOW_MASTERS = ("master", "launcher")
# ray: the head node's pod first
_RAY_ROLE = "ray.io/node-type"
_RAY_MASTERS = ("head",)


def _role_order(left: Mapping[str, str], right: Mapping[str, str], key: str,
                masters: Collection[str]) -> int:
    lm = key in left and left[key] in masters
    rm = key in right and right[key] in masters
    if lm and not rm:
        return -1
    if rm and not lm:
        return 1
    return 0


def kubeflow_order(left: Mapping[str, str], right: Mapping[str, str]) -> int:
    """kubeflow.TaskOrderFn on the pods' labels: a master/launcher pod first."""
    return _role_order(left, right, _KUBEFLOW_ROLE, _KUBEFLOW_MASTERS)


def ray_order(left: Mapping[str, str], right: Mapping[str, str]) -> int:
    """ray.TaskOrderFn on the pods' labels: the head pod first."""
    return _role_order(left, right, _RAY_ROLE, _RAY_MASTERS)


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
