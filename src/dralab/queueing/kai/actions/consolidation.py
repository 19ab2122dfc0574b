"""KAI's consolidation action (actions/consolidation/consolidation.go): move running
preemptible pods to other nodes so that a pending preemptible job fits -- with nobody
evicted for good.

Off when the session allows no consolidation preemptees (0). Pending preemptible jobs
whose gangs can form are taken in queue order, once each, if the cluster has enough
idle or releasing GPUs for them at all. Victims: any preemptible job with allocated pods
(up to the configured number of victim jobs), in the victim order. A scenario is valid
only if every victim was placed again (pipelined to its new node).
"""

from __future__ import annotations

import functools

from dralab.queueing.kai.actions.common import tasks_to_allocate
from dralab.queueing.kai.actions.order import JobsOrder
from dralab.queueing.kai.actions.signatures import FailedJobs
from dralab.queueing.kai.actions.solver import VictimScenario, solve_job, victim_jobs
from dralab.queueing.kai.framework import ACTIVE_ALLOCATED, Session, SessionJob
from dralab.queueing.kai.placement import request_kind

__all__ = ["consolidation"]


def _all_reallocated(session: Session, scenario: VictimScenario,
                     required: dict[str, float]) -> bool:
    return all(t.status != "Releasing" for tasks in scenario.victims().values() for t in tasks)


class _Filter:
    """buildPreemptibleFilterFunc, with its counter of victim jobs."""

    def __init__(self, preemptor: SessionJob, limit: int) -> None:
        self.preemptor = preemptor
        self.limit = limit
        self.count = 0

    def __call__(self, job: SessionJob) -> bool:
        if not job.is_preemptible() or job.name == self.preemptor.name:
            return False
        if self.limit != -1 and self.count > self.limit:
            return False
        if job.count(ACTIVE_ALLOCATED) == 0:
            return False
        self.count += 1
        return True


def _enough_gpus(session: Session, job: SessionJob) -> bool:
    """IsEnoughGPUsAllocatableForJob: idle and releasing GPUs (shared GPUs' free parts
    and MIG slices counted) against what the job's tasks of this turn ask."""
    from dralab.queueing.kai.proportion import mig_gpus
    free = 0.0
    free_memory = 0.0
    for usage in session.nodes.values():
        shared = sum(1 - usage.used_portion(g) for g, u in sorted(usage.groups.items())
                     if u.live())
        whole = usage.idle("gpu") + usage.releasing("gpu")
        mig = sum(_mig_slices(n) * (usage.idle(n) + usage.releasing(n))
                  for n in usage.node.mig_instances)
        free += shared + whole + mig
        free_memory += shared * usage.gpu_memory + int(whole) * usage.gpu_memory
    asked = 0.0
    asked_memory = 0.0
    for pod in tasks_to_allocate(job, real=False):
        kind = request_kind(pod.spec)
        if kind == "whole" or kind == "fraction":
            asked += pod.spec.gpus * (pod.spec.fraction_devices or 1 if kind == "fraction" else 1)
        elif kind == "mig":
            asked += mig_gpus(pod.spec.mig)
        asked_memory += pod.spec.gpu_memory_mib * (pod.spec.fraction_devices or 1)
    return free >= asked and free_memory >= asked_memory


def _mig_slices(name: str) -> int:
    from dralab.queueing.kai.proportion import mig_gpus
    return int(mig_gpus({name: 1}))


def _victims(session: Session, preemptor: SessionJob, limit: int) -> JobsOrder:
    return JobsOrder(session, victim_jobs(session, _Filter(preemptor, limit)), victims=True)


def consolidation(session: Session) -> None:
    limit = session.config.max_consolidation_preemptees
    if limit == 0:
        return
    candidates = [job for job in session.jobs.values()
                  if job.pending() and job.ready() and job.is_preemptible()]
    order = JobsOrder(session, candidates)
    failed = FailedJobs()
    while not order.empty():
        job = order.pop()
        if job is None:
            break
        if session.config.use_scheduling_signatures and not failed.worth_trying(job):
            continue
        statement = None
        if _enough_gpus(session, job):
            statement = solve_job(session, job, "consolidation",
                                  functools.partial(_victims, session, job, limit),
                                  validator=_all_reallocated)
        if statement is not None:
            statement.commit()
        else:
            failed.failed(job)
