"""The order KAI takes jobs in: queues by the proportion plugin's queue order, walking
the queue tree from the top, and jobs inside a leaf queue by the job order
(actions/utils/job_order_by_queue.go, plugins/proportion/queue_order,
plugins/priority, plugins/elastic).

Queue order (queue_order.go GetQueueOrderResult), first difference wins:

1. a queue not above its fair share (allocated not above it in every resource) first;
2. a queue whose allocation with its next job stays within its deserved quota first;
3. higher queue priority first;
4. a queue that would hold a resource it has no allocatable share of goes last;
5. smaller dominant resource share with its next job (and, ordering victims, without
   the victims already taken) first;
6. smaller dominant resource share as it is;
7. the queue with the smaller allocatable share (below in one resource, not above in
   any) first;
8. the earlier created queue first.

A victim queue (preempt, reclaim, consolidation choose victims with it) reverses both
orders: the queue that should give first, and in it the job that matters least.

SessionJob order: higher priority first; a job below its gang minimum before one at it, one at
it before one above (elastic); then the earlier created; then the name.

KAI keeps the queues in heaps; a heap only reorders the queue just popped from, which is
the only one whose numbers changed, so picking the best child each time is the same
order. Ties KAI leaves to map iteration go by name here.
"""

from __future__ import annotations

from collections.abc import Iterable

from dralab.queueing.kai.framework import ACTIVE_ALLOCATED, Session, SessionJob
from dralab.queueing.kai.plugins import elastic
from dralab.queueing.kai.shares import QueueShare, less, less_equal, less_in_at_least_one

__all__ = ["JobsOrder", "job_cmp", "queue_cmp"]

_RESOURCES = ("cpu", "memory", "gpu")


def job_cmp(left: SessionJob, right: SessionJob) -> int:
    """-1 when ``left`` goes first (ssn.JobOrderFn)."""
    if left.spec.priority != right.spec.priority:
        return -1 if left.spec.priority > right.spec.priority else 1
    order = elastic.job_order(elastic.job_state(left), elastic.job_state(right))
    if order:
        return order
    if left.spec.created != right.spec.created:
        return -1 if left.spec.created < right.spec.created else 1
    return -1 if left.name < right.name else (1 if left.name > right.name else 0)


def _with(base: dict[str, float], extra: dict[str, float], sign: float = 1.0) -> dict[str, float]:
    return {r: base.get(r, 0.0) + sign * extra.get(r, 0.0) for r in _RESOURCES}


def _dominant(share: QueueShare, allocated: dict[str, float], total: dict[str, float]) -> float:
    probe = share.copy()
    for resource, value in allocated.items():
        probe.share(resource).allocated = value
    return probe.dominant_resource_share(total)


def _zero_share_violation(share: QueueShare, allocated: dict[str, float]) -> bool:
    allocatable = share.allocatable()
    return any(allocatable[r] == 0 and allocated[r] > 0 for r in _RESOURCES)


def queue_cmp(session: Session, lq: QueueShare, rq: QueueShare,
              ljob: dict[str, float], rjob: dict[str, float],
              lvictims: dict[str, float] | None = None,
              rvictims: dict[str, float] | None = None) -> int:
    """-1 when ``lq`` goes first. ``ljob``/``rjob``: what the queue's next job asks;
    ``*victims``: what the victims already chosen from the queue hold."""
    l_over = less(lq.fair_share(), lq.allocated())
    r_over = less(rq.fair_share(), rq.allocated())
    if l_over != r_over:
        return 1 if l_over else -1
    l_with = _with(lq.allocated(), ljob)
    r_with = _with(rq.allocated(), rjob)
    l_starved = less_equal(l_with, lq.deserved())
    r_starved = less_equal(r_with, rq.deserved())
    if l_starved != r_starved:
        return -1 if l_starved else 1
    if lq.priority != rq.priority:
        return -1 if lq.priority > rq.priority else 1
    l_bad = _zero_share_violation(lq, l_with)
    r_bad = _zero_share_violation(rq, r_with)
    if l_bad != r_bad:
        return 1 if l_bad else -1
    total = session.total
    l_dom = _dominant(lq, _with(l_with, lvictims or {}, -1.0), total)
    r_dom = _dominant(rq, _with(r_with, rvictims or {}, -1.0), total)
    if l_dom != r_dom:
        return -1 if l_dom < r_dom else 1
    l_dom = lq.dominant_resource_share(total)
    r_dom = rq.dominant_resource_share(total)
    if l_dom != r_dom:
        return -1 if l_dom < r_dom else 1
    la, ra = lq.allocatable(), rq.allocatable()
    if less_in_at_least_one(la, ra) and less_equal(la, ra):
        return -1
    if less_in_at_least_one(ra, la) and less_equal(ra, la):
        return 1
    return -1 if lq.created < rq.created else 1


class JobsOrder:
    """JobsOrderByQueues: pops the next job, best queue first down the queue tree.

    ``victims``: the victim-queue variant (reverse orders; a queue is compared with the
    jobs already popped from it)."""

    def __init__(self, session: Session, jobs: Iterable[SessionJob], victims: bool = False) -> None:
        self.session = session
        self.victims = victims
        self.leaves: dict[str, list[SessionJob]] = {}
        self.popped: dict[str, list[SessionJob]] = {}
        queues = session.state.queues
        for job in jobs:
            queue = queues.get(job.queue)
            if queue is None:
                continue
            if queue.parent and queue.parent not in queues:
                continue
            if not session.is_leaf(job.queue):
                continue
            self.leaves.setdefault(job.queue, []).append(job)
        self._requests: dict[str, dict[str, float]] = {}

    def empty(self) -> bool:
        return not any(self.leaves.values())

    def push(self, job: SessionJob) -> None:
        self._requests.pop(job.name, None)
        self.leaves.setdefault(job.queue, []).append(job)

    def _top_job(self, queue: str) -> SessionJob:
        jobs = self.leaves[queue]
        best = jobs[0]
        for job in jobs[1:]:
            result = job_cmp(job, best)
            if (result > 0) if self.victims else (result < 0):
                best = job
        return best

    def _request(self, job: SessionJob) -> dict[str, float]:
        if job.name not in self._requests:
            from dralab.queueing.kai.actions.common import tasks_to_allocate
            pods = [p for p in tasks_to_allocate(job, real=False) if p.should_allocate(False)]
            self._requests[job.name] = self.session.requested(pods)
        return self._requests[job.name]

    def _has_jobs(self, queue: str) -> bool:
        if self.leaves.get(queue):
            return True
        return any(self._has_jobs(c) for c in self._children(queue))

    def _children(self, queue: str | None) -> list[str]:
        return sorted(name for name, q in self.session.state.queues.items()
                      if (q.parent or None) == queue)

    def _best_job(self, queue: str) -> SessionJob:
        if self.leaves.get(queue):
            return self._top_job(queue)
        best = self._best_child(self._children(queue))
        assert best is not None
        return self._best_job(best)

    def _victims_of(self, queue: str) -> dict[str, float]:
        held = {r: 0.0 for r in _RESOURCES}
        for job in self.popped.get(queue, []):
            for pod in job.pods:
                if pod.status in ACTIVE_ALLOCATED and pod.node:
                    for r, v in self.session.accepted(pod, pod.node).items():
                        held[r] += v
        return held

    def _best_child(self, names: list[str]) -> str | None:
        shares = self.session.shares
        best: str | None = None
        for name in names:
            if not self._has_jobs(name) or name not in shares:
                continue
            if best is None:
                best = name
                continue
            if self._before(name, best):
                best = name
        return best

    def _before(self, left: str, right: str) -> bool:
        shares = self.session.shares
        ljob, rjob = self._best_job(left), self._best_job(right)
        if self.victims:
            lvic = _with(self._victims_of(self._leaf_of(ljob)), self._held(ljob))
            rvic = _with(self._victims_of(self._leaf_of(rjob)), self._held(rjob))
            zero = {r: 0.0 for r in _RESOURCES}
            result = queue_cmp(self.session, shares[left], shares[right], zero, zero,
                               lvic, rvic)
            return result > 0
        return queue_cmp(self.session, shares[left], shares[right],
                         self._request(ljob), self._request(rjob)) < 0

    @staticmethod
    def _leaf_of(job: SessionJob) -> str:
        return job.queue

    def _held(self, job: SessionJob) -> dict[str, float]:
        held = {r: 0.0 for r in _RESOURCES}
        for pod in job.pods:
            if pod.status in ACTIVE_ALLOCATED and pod.node:
                for r, v in self.session.accepted(pod, pod.node).items():
                    held[r] += v
        return held

    def pop(self) -> SessionJob | None:
        queue = self._best_child(self._children(None))
        while queue is not None and not self.leaves.get(queue):
            queue = self._best_child(self._children(queue))
        if queue is None:
            return None
        job = self._top_job(queue)
        self.leaves[queue].remove(job)
        if self.victims:
            self.popped.setdefault(queue, []).append(job)
        return job
