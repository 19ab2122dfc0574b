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

import bisect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from dralab.queueing.kai.framework import ACTIVE_ALLOCATED, Session, SessionJob
from dralab.queueing.kai.model import UNLIMITED
from dralab.queueing.kai.plugins import elastic
from dralab.queueing.kai.shares import QueueShare, less, less_equal, less_in_at_least_one

__all__ = ["JobsOrder", "job_cmp", "queue_cmp"]

_RESOURCES = ("cpu", "memory", "gpu")
# queue_resource_share.go noFairShareDrfMultiplier
_NO_FAIR_SHARE_DRF_MULTIPLIER = 1000.0


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


def _dominant(share: QueueShare, allocated: Mapping[str, float],
              total: Mapping[str, float]) -> float:
    """GetDominantResourceShare with ``allocated`` in place of the queue's."""
    dominant = 0.0
    for resource in _RESOURCES:
        allocatable = share.share(resource).allocatable()
        if allocatable == UNLIMITED:
            allocatable = total.get(resource, 0.0)
        value = allocated.get(resource, 0.0)
        value = value * _NO_FAIR_SHARE_DRF_MULTIPLIER if allocatable == 0 else value / allocatable
        dominant = max(dominant, value)
    return dominant


@dataclass(frozen=True, slots=True)
class _QueueView:
    """A queue's numbers as one comparison reads them (taken once per pop)."""

    share: QueueShare
    fair: dict[str, float]
    allocated: dict[str, float]
    deserved: dict[str, float]
    allocatable: dict[str, float]
    dominant: float

    @classmethod
    def of(cls, share: QueueShare, total: Mapping[str, float]) -> _QueueView:
        return cls(share, share.fair_share(), share.allocated(), share.deserved(),
                   share.allocatable(), share.dominant_resource_share(total))


def _zero_share_violation(view: _QueueView, allocated: dict[str, float]) -> bool:
    return any(view.allocatable[r] == 0 and allocated[r] > 0 for r in _RESOURCES)


def queue_cmp(session: Session, lq: QueueShare, rq: QueueShare,
              ljob: dict[str, float], rjob: dict[str, float],
              lvictims: dict[str, float] | None = None,
              rvictims: dict[str, float] | None = None) -> int:
    """-1 when ``lq`` goes first. ``ljob``/``rjob``: what the queue's next job asks;
    ``*victims``: what the victims already chosen from the queue hold."""
    total = session.total
    return _view_cmp(total, _QueueView.of(lq, total), _QueueView.of(rq, total), ljob, rjob,
                     lvictims, rvictims)


def _view_cmp(total: Mapping[str, float], lv: _QueueView, rv: _QueueView,
              ljob: dict[str, float], rjob: dict[str, float],
              lvictims: dict[str, float] | None = None,
              rvictims: dict[str, float] | None = None) -> int:
    l_over = less(lv.fair, lv.allocated)
    r_over = less(rv.fair, rv.allocated)
    if l_over != r_over:
        return 1 if l_over else -1
    l_with = _with(lv.allocated, ljob)
    r_with = _with(rv.allocated, rjob)
    l_starved = less_equal(l_with, lv.deserved)
    r_starved = less_equal(r_with, rv.deserved)
    if l_starved != r_starved:
        return -1 if l_starved else 1
    lq, rq = lv.share, rv.share
    if lq.priority != rq.priority:
        return -1 if lq.priority > rq.priority else 1
    l_bad = _zero_share_violation(lv, l_with)
    r_bad = _zero_share_violation(rv, r_with)
    if l_bad != r_bad:
        return 1 if l_bad else -1
    l_dom = _dominant(lq, _with(l_with, lvictims or {}, -1.0), total)
    r_dom = _dominant(rq, _with(r_with, rvictims or {}, -1.0), total)
    if l_dom != r_dom:
        return -1 if l_dom < r_dom else 1
    if lv.dominant != rv.dominant:
        return -1 if lv.dominant < rv.dominant else 1
    la, ra = lv.allocatable, rv.allocatable
    if less_in_at_least_one(la, ra) and less_equal(la, ra):
        return -1
    if less_in_at_least_one(ra, la) and less_equal(ra, la):
        return 1
    return -1 if lq.created < rq.created else 1


class JobsOrder:
    """JobsOrderByQueues: pops the next job, best queue first down the queue tree.

    ``victims``: the victim-queue variant (reverse orders; a queue is compared with the
    jobs already popped from it). A job's place in its leaf queue is fixed when it is
    pushed, as in KAI's heap."""

    def __init__(self, session: Session, jobs: Iterable[SessionJob],
                 victims: bool = False) -> None:
        self.session = session
        self.victims = victims
        self.children = session.queue_children()
        self.leaves: dict[str, list[tuple[tuple[int, int, float, str, int], SessionJob]]] = {}
        self.popped: dict[str, list[SessionJob]] = {}
        self._seq = 0
        self._requests: dict[int, dict[str, float]] = {}
        self._views: dict[str, _QueueView] = {}
        queues = session.state.queues
        for job in jobs:
            queue = queues.get(job.queue)
            if queue is None:
                continue
            if queue.parent and queue.parent not in queues:
                continue
            if self.children.get(job.queue):
                continue
            self.push(job)

    def empty(self) -> bool:
        return not any(self.leaves.values())

    def drop_after_last(self, wanted: Callable[[SessionJob], bool]) -> None:
        """Forget, in every leaf queue, the jobs that come after its last ``wanted`` one
        (all of a leaf without one). A caller that only acts on wanted jobs pops them in
        the same order: the others still stand for their queue while a wanted job waits
        behind them, and a queue with nothing wanted left only takes turns."""
        for entries in self.leaves.values():
            marks = [i for i, (_, job) in enumerate(entries) if wanted(job)]
            if self.victims:
                del entries[:marks[0] if marks else len(entries)]
            else:
                del entries[marks[-1] + 1 if marks else 0:]

    def push(self, job: SessionJob) -> None:
        self._requests.pop(id(job), None)
        self._seq += 1
        key = (-job.spec.priority, elastic.job_state(job), job.spec.created, job.name,
               self._seq)
        bisect.insort(self.leaves.setdefault(job.queue, []), (key, job),
                      key=lambda item: item[0])

    def _top_job(self, queue: str) -> SessionJob:
        entries = self.leaves[queue]
        return entries[-1][1] if self.victims else entries[0][1]

    def _request(self, job: SessionJob) -> dict[str, float]:
        cached = self._requests.get(id(job))
        if cached is None:
            from dralab.queueing.kai.actions.common import tasks_to_allocate
            pods = [p for p in tasks_to_allocate(job, real=False) if p.should_allocate(False)]
            cached = self.session.requested(pods)
            self._requests[id(job)] = cached
        return cached

    def _has_jobs(self, queue: str) -> bool:
        if self.leaves.get(queue):
            return True
        return any(self._has_jobs(c) for c in self.children.get(queue, ()))

    def _best_job(self, queue: str) -> SessionJob:
        if self.leaves.get(queue):
            return self._top_job(queue)
        best = self._best_child(self.children.get(queue, ()))
        assert best is not None
        return self._best_job(best)

    def _held_by(self, jobs: Iterable[SessionJob]) -> dict[str, float]:
        held = {r: 0.0 for r in _RESOURCES}
        for job in jobs:
            for pod in job.pods:
                if pod.status in ACTIVE_ALLOCATED and pod.node:
                    for r, v in self.session.accepted(pod, pod.node).items():
                        held[r] += v
        return held

    def _best_child(self, names: Sequence[str]) -> str | None:
        shares = self.session.shares
        best: str | None = None
        for name in names:
            if name not in shares or not self._has_jobs(name):
                continue
            if best is None or self._before(name, best):
                best = name
        return best

    def _view(self, queue: str) -> _QueueView:
        view = self._views.get(queue)
        if view is None:
            view = _QueueView.of(self.session.shares[queue], self.session.total)
            self._views[queue] = view
        return view

    def _before(self, left: str, right: str) -> bool:
        total = self.session.total
        ljob, rjob = self._best_job(left), self._best_job(right)
        if self.victims:
            lvic = self._held_by([*self.popped.get(ljob.queue, []), ljob])
            rvic = self._held_by([*self.popped.get(rjob.queue, []), rjob])
            zero = {r: 0.0 for r in _RESOURCES}
            result = _view_cmp(total, self._view(left), self._view(right), zero, zero,
                               lvic, rvic)
            return result > 0
        return _view_cmp(total, self._view(left), self._view(right),
                         self._request(ljob), self._request(rjob)) < 0

    def pop(self) -> SessionJob | None:
        # the queues' numbers only change between pops (a statement placing the job)
        self._views = {}
        queue = self._best_child(self.children.get(None, ()))
        while queue is not None and not self.leaves.get(queue):
            queue = self._best_child(self.children.get(queue, ()))
        if queue is None:
            return None
        entries = self.leaves[queue]
        job = (entries.pop() if self.victims else entries.pop(0))[1]
        if self.victims:
            self.popped.setdefault(queue, []).append(job)
        return job
