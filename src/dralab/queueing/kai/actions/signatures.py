"""KAI's scheduling signatures (actions/common/minimal_job_comparison.go,
podset/pod_info scheduling-constraints signatures): preempt, reclaim and consolidation
skip a job that is no easier to place than one with the same constraints that already
failed in the session (the scheduler's --use-scheduling-signatures, on by default).

A job's signature: per pod set, nothing when all its pods are placed, else its topology
constraints (with its parents') and its unplaced pods' constraints -- node affinity and
selector, priority class and priority, inter-pod affinity; requests are not part of it
(KAI also hashes tolerations, volumes, topology spread and host ports, which the model
folds into node names or does not hold). Easier: fewer pending pods than the failed one,
or, pods sorted by request, one smaller before any larger.
"""

from __future__ import annotations

from collections.abc import Hashable

from dralab.queueing.kai.framework import ACTIVE_ALLOCATED, SessionJob, SessionTask
from dralab.queueing.kai.model import KaiTask
from dralab.queueing.kai.placement import request_kind

__all__ = ["FailedJobs", "easier", "job_signature", "smaller_footprint"]

_MIN_GPU_DIFF = 0.01   # resource_info minGPUs: portions closer than this are equal


def _pod_signature(job: SessionJob, task: KaiTask) -> Hashable:
    return (tuple(sorted(task.node_names)), tuple(sorted(task.node_selector.items())),
            job.spec.priority_class, job.spec.priority, repr(task.pod_affinity))


def _constraints(job: SessionJob, podset: str) -> Hashable:
    parents = {g.name: g for g in job.spec.subgroups}
    chain: list[Hashable] = []
    group = parents.get(podset)
    while group is not None:
        topology = group.topology
        chain.append(None if topology is None else
                     (topology.topology, topology.required_level, topology.preferred_level))
        group = parents.get(group.parent) if group.parent else None
    root = job.spec.topology
    chain.append(None if root is None else
                 (root.topology, root.required_level, root.preferred_level))
    return tuple(chain)


def job_signature(job: SessionJob) -> Hashable:
    """PodGroupInfo.GetSchedulingConstraintsSignature."""
    parts: list[Hashable] = []
    for podset in job.podsets():
        pods = job.pods_of(podset)
        if all(p.status in ACTIVE_ALLOCATED for p in pods):
            parts.append("")
            continue
        unplaced = sorted(repr(_pod_signature(job, p.spec)) for p in pods
                           if p.status not in ACTIVE_ALLOCATED)
        parts.append(repr((_constraints(job, podset), tuple(unplaced))))
    return tuple(sorted(repr(p) for p in parts))


def _request(task: KaiTask) -> tuple[float, float, float, float, tuple[tuple[str, int], ...]]:
    """ResReq as ResourceRequirements.LessEqual reads it: CPU, memory, GPU device count,
    GPU portion, MIG instances."""
    kind = request_kind(task)
    if kind == "whole":
        count, portion = task.gpus, 1.0
    elif kind == "fraction":
        count, portion = float(task.fraction_devices or 1), task.gpus
    elif kind == "memory":
        count, portion = float(task.fraction_devices or 1), 0.0
    else:
        count, portion = 0.0, 0.0
    return (task.cpu_milli, task.memory_bytes, count, portion, tuple(sorted(task.mig.items())))


def _less_equal(left: tuple[float, float, float, float, tuple[tuple[str, int], ...]],
                right: tuple[float, float, float, float, tuple[tuple[str, int], ...]]) -> bool:
    if left[0] > right[0] or left[1] > right[1] or left[2] > right[2]:
        return False
    if not (left[3] < right[3] or abs(left[3] - right[3]) < _MIN_GPU_DIFF):
        return False
    theirs = dict(right[4])
    return all(count <= theirs.get(name, 0) for name, count in left[4])


def _sorted_requests(pods: list[SessionTask]) -> list[
        tuple[float, float, float, float, tuple[tuple[str, int], ...]]]:
    return sorted(_request(p.spec) for p in pods)


def easier(job: SessionJob, failed: SessionJob) -> bool:
    """jobEasierToScheduleComparison(job, failed)."""
    mine, theirs = job.pending(), failed.pending()
    if not mine or not theirs:
        return False
    if len(theirs) > len(mine):
        return True
    left, right = _sorted_requests(mine), _sorted_requests(theirs)
    for index, request in enumerate(left):
        if index >= len(right):
            return False
        if _less_equal(request, right[index]):
            if _less_equal(right[index], request):
                continue
            return True
    return False


def smaller_footprint(job: SessionJob, other: SessionJob) -> bool:
    """isPodGroupFootprintSmaller(job, other)."""
    mine, theirs = job.pending(), other.pending()
    if not mine or not theirs or len(mine) > len(theirs):
        return False
    left, right = _sorted_requests(mine), _sorted_requests(theirs)
    return all(_less_equal(left[i], right[i]) for i in range(len(left)))


class FailedJobs:
    """MinimalJobRepresentatives: per signature, the smallest job that failed."""

    def __init__(self) -> None:
        self.representatives: dict[Hashable, SessionJob] = {}

    def worth_trying(self, job: SessionJob) -> bool:
        failed = self.representatives.get(job_signature(job))
        return failed is None or easier(job, failed)

    def failed(self, job: SessionJob) -> None:
        key = job_signature(job)
        current = self.representatives.get(key)
        if current is not None and not smaller_footprint(job, current):
            return
        self.representatives[key] = job
