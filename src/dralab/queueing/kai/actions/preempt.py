"""KAI's preempt action (actions/preempt/preempt.go): a pending job may evict
preemptible jobs of lower priority in its own queue.

Jobs with pending pods whose gangs can form are taken in queue order, once each. A
non-preemptible job that would go over its queue's deserved quota does not try. The
victims: preemptible jobs of the same queue with lower priority and pods running
(alive), in the victim order; the solver (``solver.solve_job``) finds the fewest that
make room; the preemptor's pods are pipelined onto what the victims release.
"""

from __future__ import annotations

import functools

from dralab.queueing.kai.actions.common import non_preemptible_over_quota, tasks_to_allocate
from dralab.queueing.kai.actions.order import JobsOrder
from dralab.queueing.kai.actions.signatures import FailedJobs
from dralab.queueing.kai.actions.solver import VictimScenario, solve_job, victim_jobs
from dralab.queueing.kai.framework import ACTIVE_ALLOCATED, Session, SessionJob
from dralab.queueing.kai.plugins import minruntime

__all__ = ["preempt"]


def _victim_filter(preemptor: SessionJob, session: Session) -> _Filter:
    return _Filter(preemptor, session)


class _Filter:
    def __init__(self, preemptor: SessionJob, session: Session) -> None:
        self.preemptor = preemptor
        self.session = session

    def __call__(self, job: SessionJob) -> bool:
        return (job.is_preemptible() and job.spec.priority < self.preemptor.spec.priority
                and job.queue == self.preemptor.queue and job.name != self.preemptor.name
                and job.count(ACTIVE_ALLOCATED) > 0
                and minruntime.victim_allowed(self.session, "preempt", self.preemptor, job))


def _victims(session: Session, keep: _Filter) -> JobsOrder:
    return JobsOrder(session, victim_jobs(session, keep), victims=True)


def _min_runtime(session: Session, scenario: VictimScenario, _: dict[str, float]) -> bool:
    return minruntime.scenario_valid(session, "preempt", scenario.preemptor,
                                     scenario.victims())


def preempt(session: Session) -> None:
    candidates = [job for job in session.jobs.values() if job.pending() and job.ready()]
    order = JobsOrder(session, candidates)
    failed: dict[str, FailedJobs] = {}
    while not order.empty():
        job = order.pop()
        if job is None:
            break
        seen = failed.setdefault(job.queue, FailedJobs())
        if session.config.use_scheduling_signatures and not seen.worth_trying(job):
            continue
        statement = None
        if not non_preemptible_over_quota(session, job, tasks_to_allocate(job, real=False)):
            statement = solve_job(session, job, "preempt",
                                  functools.partial(_victims, session, _Filter(job, session)),
                                  validator=_min_runtime)
        if statement is not None:
            statement.commit()
        else:
            seen.failed(job)
