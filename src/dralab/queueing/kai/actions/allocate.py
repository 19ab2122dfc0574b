"""KAI's allocate action (actions/allocate/allocate.go).

Jobs with pending pods whose gangs can be formed (enough alive, ungated pods) are taken
in queue order (``order.JobsOrder``). Each job gets a statement: its tasks of this turn
are placed (``common.allocate_job``); if any task of a gang pod set was pipelined while
the set lacks allocated pods, every placement of the job becomes a pipeline (the gang
starts together once resources are released). A job that placed anything is committed
and, if it still has pending pods (an elastic job above its minimum), goes back into
the order for one more pod; one that could not is discarded.
"""

from __future__ import annotations

from dralab.queueing.kai.actions.common import allocate_job
from dralab.queueing.kai.actions.order import JobsOrder
from dralab.queueing.kai.framework import ALLOCATED, Session

__all__ = ["allocate"]


def allocate(session: Session) -> None:
    candidates = [job for job in session.jobs.values() if job.pending() and job.ready()]
    order = JobsOrder(session, candidates)
    nodes = list(session.nodes.values())
    while not order.empty():
        job = order.pop()
        if job is None:
            break
        stmt = session.statement("allocate")
        already = job.count(ALLOCATED) > 0
        if not allocate_job(session, stmt, job, nodes):
            stmt.discard()
            continue
        pipelined = False
        if job.should_pipeline():
            stmt.convert_allocated_to_pipelined(job.name)
            pipelined = True
        stmt.commit()
        if not pipelined and not already:
            job.started = True
        if job.pending():
            order.push(job)
