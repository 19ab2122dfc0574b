"""KAI's reclaim action (actions/reclaim/reclaim.go): a pending job of a queue below its
fair share takes resources back from other queues' preemptible jobs.

Jobs with pending pods whose gangs can form are taken in queue order, once each. A job
may reclaim only if its queue with it stays within its fair share (and a
non-preemptible job within its deserved quota: ``reclaimable.can_reclaim_resources``).
Victims: preemptible jobs with allocated pods in other queues, in the victim order. A
scenario is valid when ``reclaimable.reclaimable`` accepts it on the shares as they were
when the job's solution started (every victim queue fits a reclaim strategy; the
reclaimer stays less saturated than the siblings it takes from).
"""

from __future__ import annotations

import dataclasses
import functools

from dralab.queueing.kai import proportion, reclaimable
from dralab.queueing.kai.actions.common import tasks_to_allocate
from dralab.queueing.kai.actions.order import JobsOrder
from dralab.queueing.kai.actions.signatures import FailedJobs
from dralab.queueing.kai.actions.solver import VictimScenario, solve_job
from dralab.queueing.kai.framework import ACTIVE_ALLOCATED, Session, SessionJob, SessionTask
from dralab.queueing.kai.plugins import minruntime
from dralab.queueing.kai.shares import QueueShare

__all__ = ["reclaim"]


def _victims(session: Session, reclaimer: SessionJob) -> JobsOrder:
    jobs = [job for job in session.jobs.values()
            if job.queue != reclaimer.queue and job.is_preemptible()
            and job.count(ACTIVE_ALLOCATED) > 0
            and minruntime.victim_allowed(session, "reclaim", reclaimer, job)]
    return JobsOrder(session, jobs, victims=True)


def _victims_by_queue(session: Session,
                      scenario: VictimScenario) -> dict[str, list[dict[str, float]]]:
    result: dict[str, list[dict[str, float]]] = {}
    ignore = session.config.allow_consolidating_reclaim
    for name, tasks in sorted(scenario.victims().items()):
        job = session.jobs[name]
        specs = [dataclasses.replace(t.spec, status=t.status) for t in tasks]
        amounts = [session.accepted(t, t.node) if t.node else {} for t in tasks]
        resources = proportion.victim_resources(job.spec, specs, amounts,
                                                ignore_reallocated=ignore)
        if resources:
            result.setdefault(job.queue, []).extend(dict(r) for r in resources)
    return result


class _Validator:
    """proportion's reclaimableFn on the shares copied at the job's solution start."""

    def __init__(self, shares: dict[str, QueueShare], reclaimer: SessionJob) -> None:
        self.shares = shares
        self.reclaimer = reclaimer

    def __call__(self, session: Session, scenario: VictimScenario,
                 required: dict[str, float]) -> bool:
        return reclaimable.reclaimable(
            self.shares, self.reclaimer.queue, required, self.reclaimer.is_preemptible(),
            _victims_by_queue(session, scenario)) and minruntime.scenario_valid(
            session, "reclaim", self.reclaimer, scenario.victims())


def _required(session: Session, pending: list[SessionTask]) -> dict[str, float]:
    return session.requested(pending)


def reclaim(session: Session) -> None:
    candidates = [job for job in session.jobs.values() if job.pending() and job.ready()]
    order = JobsOrder(session, candidates)
    failed: dict[str, FailedJobs] = {}
    while not order.empty():
        job = order.pop()
        if job is None:
            break
        if job.queue not in session.shares:
            continue
        required = session.requested(
            [p for p in tasks_to_allocate(job, real=False) if p.should_allocate(False)])
        if not reclaimable.can_reclaim_resources(session.shares, job.queue, required,
                                                 job.is_preemptible()):
            continue
        seen = failed.setdefault(job.queue, FailedJobs())
        if session.config.use_scheduling_signatures and not seen.worth_trying(job):
            continue
        snapshot = {name: share.copy() for name, share in session.shares.items()}
        statement = solve_job(
            session, job, "reclaim", functools.partial(_victims, session, job),
            validator=_Validator(snapshot, job),
            required=functools.partial(_required, session))
        if statement is not None:
            statement.commit()
        else:
            seen.failed(job)
