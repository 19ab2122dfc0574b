"""Workloads whose controller creates no pod because they are suspended.

A Job with ``spec.suspend: true`` gets no pods from the Job controller, so ``dralab
schedule`` has nothing of it to place: the output would be silent about it. Kueue creates
its Jobs suspended and unsuspends a Job when it admits it, so such input is common; the
warning names the Job and where its admission is decided.
"""

from __future__ import annotations

from collections.abc import Iterable

from dralab.api.base import KubeObject
from dralab.api.workloads import Job

__all__ = ["suspended_job_warnings"]

KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


# A live cluster under Kueue may hold hundreds of queued Jobs: name a few, count the rest.
MAX_NAMED = 5


def suspended_job_warnings(objects: Iterable[KubeObject]) -> list[str]:
    """One line per suspended Job among ``objects``, in input order; past ``MAX_NAMED``,
    one line counting the others."""
    out: list[str] = []
    for obj in objects:
        if not isinstance(obj, Job) or obj.spec is None or not obj.spec.suspend:
            continue
        meta = obj.metadata
        queue = (meta.labels or {}).get(KUEUE_QUEUE_LABEL)
        then = (f"Kueue unsuspends it when LocalQueue {queue} admits it (dralab admit "
                "decides that)" if queue else "it runs once unsuspended")
        out.append(f"Job {meta.namespace or 'default'}/{meta.name} is suspended "
                   f"(spec.suspend: true): the Job controller creates no pods for it, so "
                   f"none is scheduled; {then}")
    if len(out) > MAX_NAMED:
        out[MAX_NAMED:] = [f"{len(out) - MAX_NAMED} more suspended Jobs: no pods are "
                           "scheduled for them either"]
    return out
