"""KAI's queue order (proportion/queue_order): which of two queues' jobs a session tries
first, given their shares (``proportion.divide_shares``).

Public API (for the actions' job queues):

* :func:`queue_order` ``(left, right, left_job, right_job, total, left_victims=(),
  right_victims=())`` -> -1 (left first), 1 (right first); never 0, the creation time
  breaks the last tie. ``left_job``/``right_job`` are the quantities of each queue's
  next job's tasks to allocate (:func:`job_init_request`); victims, the allocations of
  jobs the scenario already evicts from that queue.

The rules, in order: a queue within its fair share (in some resource) before one over
it in all; a queue that stays within deserved quota with its job before one that does
not (as the guarantee-deserved-quota reclaim strategy); higher queue priority; a queue
that would hold a resource it has no allocatable share of goes last; the smaller
dominant resource share with the job (less the victims), then without it; the smaller
allocatable share; the earlier created queue.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from dralab.queueing.kai.model import KaiTask
from dralab.queueing.kai.proportion import MIN_NODE_GPU_MEMORY, task_requested
from dralab.queueing.kai.shares import (
    RESOURCES,
    Quantities,
    QueueShare,
    add,
    less,
    less_equal,
    less_in_at_least_one,
    quantities,
)

__all__ = ["LEFT_FIRST", "RIGHT_FIRST", "job_init_request", "queue_order"]

LEFT_FIRST = -1
RIGHT_FIRST = 1
_EQUAL = 0


def job_init_request(tasks: Iterable[KaiTask],
                     min_node_gpu_memory: int = MIN_NODE_GPU_MEMORY) -> Quantities:
    """GetTasksToAllocateInitResource: the summed requests of a job's tasks to allocate,
    a gpu-memory task counting devices * memory / the cluster's minimum GPU memory."""
    total = quantities()
    for task in tasks:
        total = add(total, task_requested(task, min_node_gpu_memory))
    return total


def _under_utilized(left: QueueShare, right: QueueShare) -> int:
    left_over = less(left.fair_share(), left.allocated())
    right_over = less(right.fair_share(), right.allocated())
    if not left_over and right_over:
        return LEFT_FIRST
    if left_over and not right_over:
        return RIGHT_FIRST
    return _EQUAL


def _under_quota(left: QueueShare, right: QueueShare, left_job: Mapping[str, float],
                 right_job: Mapping[str, float]) -> int:
    left_starved = less_equal(add(left.allocated(), left_job), left.deserved())
    right_starved = less_equal(add(right.allocated(), right_job), right.deserved())
    if left_starved and not right_starved:
        return LEFT_FIRST
    if right_starved and not left_starved:
        return RIGHT_FIRST
    return _EQUAL


def _priority(left: QueueShare, right: QueueShare) -> int:
    if left.priority > right.priority:
        return LEFT_FIRST
    if left.priority < right.priority:
        return RIGHT_FIRST
    return _EQUAL


def _zero_share_violation(queue: QueueShare, job: Mapping[str, float]) -> bool:
    with_job = add(queue.allocated(), job)
    allocatable = queue.allocatable()
    return any(allocatable[r] == 0 and with_job[r] > 0 for r in RESOURCES)


def _zero_share(left: QueueShare, right: QueueShare, left_job: Mapping[str, float],
                right_job: Mapping[str, float]) -> int:
    left_bad = _zero_share_violation(left, left_job)
    right_bad = _zero_share_violation(right, right_job)
    if left_bad and not right_bad:
        return RIGHT_FIRST
    if right_bad and not left_bad:
        return LEFT_FIRST
    return _EQUAL


def _dominant_with(queue: QueueShare, job: Mapping[str, float],
                   victims: Iterable[Mapping[str, float]], total: Mapping[str, float]) -> float:
    probe = queue.copy()
    for resource, share in probe.shares():
        share.allocated += job.get(resource, 0.0)
        for victim in victims:
            share.allocated -= victim.get(resource, 0.0)
    return probe.dominant_resource_share(total)


def _smaller(left_share: float, right_share: float) -> int:
    if left_share < right_share:
        return LEFT_FIRST
    if left_share > right_share:
        return RIGHT_FIRST
    return _EQUAL


def _allocatable(left: QueueShare, right: QueueShare) -> int:
    left_q, right_q = left.allocatable(), right.allocatable()
    if less_in_at_least_one(left_q, right_q) and less_equal(left_q, right_q):
        return LEFT_FIRST
    if less_in_at_least_one(right_q, left_q) and less_equal(right_q, left_q):
        return RIGHT_FIRST
    return _EQUAL


def queue_order(left: QueueShare, right: QueueShare, left_job: Mapping[str, float],
                right_job: Mapping[str, float], total: Mapping[str, float],
                left_victims: Iterable[Mapping[str, float]] = (),
                right_victims: Iterable[Mapping[str, float]] = ()) -> int:
    left_victims, right_victims = list(left_victims), list(right_victims)
    for result in (
        _under_utilized(left, right),
        _under_quota(left, right, left_job, right_job),
        _priority(left, right),
        _zero_share(left, right, left_job, right_job),
        _smaller(_dominant_with(left, left_job, left_victims, total),
                 _dominant_with(right, right_job, right_victims, total)),
        _smaller(left.dominant_resource_share(total), right.dominant_resource_share(total)),
        _allocatable(left, right),
    ):
        if result != _EQUAL:
            return result
    # the last tie-breaker: the earlier created queue (KAI's Before; equal times put
    # the right queue first, as there)
    return LEFT_FIRST if left.created < right.created else RIGHT_FIRST
