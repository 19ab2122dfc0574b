"""KAI's stalegangeviction action (actions/stalegangeviction/stalegangeviction.go): a
running gang that fell below its minimum (some pod set with fewer active pods than its
minAvailable, none succeeded) for longer than the staleness grace period has every
allocated pod evicted, so that it can start again whole.

``KaiJob.stale_since`` is how long the gang has been stale (seconds; None: it just
became stale now, so its clock starts at 0). A negative grace period never evicts.
Evictions here are immediate (the session's Evict, not a statement).
"""

from __future__ import annotations

from dralab.queueing.kai.framework import ACTIVE_ALLOCATED, Session, SessionJob
from dralab.queueing.kai.placement import ACTIVE_USED

__all__ = ["is_stale", "stalegangeviction"]


def is_stale(job: SessionJob) -> bool:
    """PodGroupInfo.IsStale."""
    if any(p.status == "Succeeded" for p in job.pods):
        return False
    if job.count(ACTIVE_USED) == 0:
        return False
    return not job.gang_satisfied()


def stalegangeviction(session: Session) -> None:
    grace = session.config.staleness_grace_period
    for name in sorted(session.jobs):
        job = session.jobs[name]
        if not is_stale(job) or grace < 0:
            continue
        stale_for = job.spec.stale_since or 0.0
        if stale_for < grace:
            continue
        stmt = session.statement("stalegangeviction")
        for pod in [p for p in job.pods if p.status in ACTIVE_ALLOCATED]:
            stmt.evict(pod, reason=_message(job, pod.podset, pod.name))
        stmt.commit()


def _message(job: SessionJob, podset: str, task: str) -> str:
    """api.GetGangEvictionMessage."""
    minima = job.podsets()
    pod = f"{job.spec.namespace}/{task}"
    if list(minima) == [""]:
        return (f"Workload doesn't meet the minimum required number of pods "
                f"({minima['']}), evicting remaining pod: {pod}")
    if podset not in minima:
        return (f"Workload doesn't meet the minimum required number of pods in sub-group "
                f"{podset}, evicting remaining pod: {pod}")
    return (f"Workload doesn't meet the minimum required number of pods ({minima[podset]}) "
            f"in sub-group {podset}, evicting remaining pod: {pod}")
