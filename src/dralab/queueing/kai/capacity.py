"""KAI's capacity policy (proportion/capacity_policy): may a job (or one task on a node)
be allocated in its queue, given the limits and, for non-preemptible jobs, the quotas
of its queue and every ancestor?

Public API (the allocate, reclaim, preempt and consolidation actions call these on the
shares of ``proportion``):

* :func:`job_over_capacity` ``(shares, job, requested)`` (IsJobOverQueueCapacity): the
  limit check, then the non-preemptible quota check; ``requested`` is the sum of the
  job's tasks to allocate (:func:`requested_of`).
* :func:`non_preemptible_over_quota` ``(shares, job, requested)``
  (IsNonPreemptibleJobOverQuota): the quota check only.
* :func:`task_on_node_over_capacity` ``(shares, job, requested)``
  (IsTaskAllocationOnNodeOverCapacity): both, for one task's quota on a node
  (its quota on that node: :func:`task_node_quota`).
* :func:`over_limit`, :func:`non_preemptible_over_quota_check`: the two checks.

Each returns a :class:`CapacityResult`: schedulable, or the reason (``OverLimit`` /
``NonPreemptibleOverQuota``), KAI's message and the queue details it reports.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from dralab.queueing.kai.model import UNLIMITED, KaiJob, KaiNode, KaiTask
from dralab.queueing.kai.proportion import mig_gpus
from dralab.queueing.kai.shares import RESOURCES, Quantities, QueueShare, chain, quantities

__all__ = [
    "NON_PREEMPTIBLE_OVER_QUOTA",
    "OVER_LIMIT",
    "SCHEDULABLE",
    "CapacityResult",
    "QuotaDetails",
    "humanize",
    "job_over_capacity",
    "non_preemptible_over_quota",
    "non_preemptible_over_quota_check",
    "over_limit",
    "over_limit_resource",
    "over_quota_resource",
    "requested_of",
    "task_node_quota",
    "task_on_node_over_capacity",
]

# v2alpha2 UnschedulableReason values
OVER_LIMIT = "OverLimit"
NON_PREEMPTIBLE_OVER_QUOTA = "NonPreemptibleOverQuota"
_MILLI_CPU_TO_CORES = 1000.0
_MEMORY_TO_GB = 1000.0 * 1000.0 * 1000.0


@dataclass(frozen=True, slots=True)
class QuotaDetails:
    """The QuotaDetails of an unschedulable explanation (quantities in KAI's units)."""

    name: str
    queue_requested: Quantities
    queue_deserved: Quantities
    queue_allocated: Quantities
    queue_allocated_non_preemptible: Quantities
    queue_limits: Quantities
    job_requested: Quantities
    job_requested_non_preemptible: Quantities


@dataclass(frozen=True, slots=True)
class CapacityResult:
    schedulable: bool = True
    reason: str = ""
    message: str = ""
    details: QuotaDetails | None = field(default=None)


SCHEDULABLE = CapacityResult()


def humanize(value: float, unit: float) -> str:
    """resource_info.HumanizeResource: 'Unlimited' for -1, else go-humanize's
    FtoaWithDigits(value/unit, 3): six decimals, trailing zeros and point stripped,
    then cut (not rounded) to three decimals."""
    if value == UNLIMITED:
        return "Unlimited"
    text = f"{value / unit:.6f}".rstrip("0").rstrip(".")
    point = text.find(".")
    if point >= 0 and point + 1 + 3 < len(text):
        text = text[:point + 1 + 3]
    return text


def _go_float(value: float) -> str:
    """Go's %v of a float64 (shortest representation, no '.0' for integers)."""
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    return repr(value)


def requested_of(tasks: Iterable[Mapping[str, float]]) -> Quantities:
    """getRequiredQuota: the sum of the tasks' GPU quota, CPU and memory."""
    total = quantities()
    for amounts in tasks:
        for resource in RESOURCES:
            total[resource] += amounts.get(resource, 0.0)
    return total


def _go_divide(numerator: float, denominator: float) -> float:
    # Go's float division: x/0 is +-Inf, 0/0 NaN (Python raises)
    if denominator == 0:
        return math.nan if numerator == 0 else math.copysign(math.inf, numerator)
    return numerator / denominator


def task_node_quota(task: KaiTask, node: KaiNode) -> Quantities:
    """NodeInfo.GetRequiredInitQuota: the quota one task takes on ``node`` -- its MIG
    slices, or the GPU memory it asks (gpu-memory, or its portion of a device: 1 for
    whole GPUs, however many) over the node's per-GPU memory, rounded up to hundredths.
    Upstream's own rule, kept as is: a multi-GPU task counts one device here, and a node
    without GPU memory gives NaN (no limit is then crossed)."""
    if task.mig:
        gpus = mig_gpus(task.mig)
    else:
        if task.gpu_memory_mib:
            memory = float(task.gpu_memory_mib)
        else:
            portion = 1.0 if task.gpus >= 1 else task.gpus
            memory = float(int(portion * node.gpu_memory_mib))
        gpus = math.ceil(_go_divide(memory, node.gpu_memory_mib) * 100) / 100 \
            if node.gpu_memory_mib else _go_divide(memory, 0.0)
    return quantities(task.cpu_milli, task.memory_bytes, gpus)


def over_limit_resource(queue: QueueShare, requested: Mapping[str, float]) -> str | None:
    """isOverLimit: the first resource (CPU, memory, GPU) the job asks for that takes the
    queue above its limit."""
    for resource, share in queue.shares():
        if share.max_allowed == UNLIMITED:
            continue
        asked = requested.get(resource, 0.0)
        if asked == 0:
            continue
        if share.max_allowed < share.allocated + asked:
            return resource
    return None


def over_quota_resource(queue: QueueShare, requested: Mapping[str, float]) -> str | None:
    """isAllocatedNonPreemptibleOverQuota: the first resource the job asks for that takes
    the queue's non-preemptible allocation above its deserved quota."""
    for resource, share in queue.shares():
        if share.deserved == UNLIMITED:
            continue
        asked = requested.get(resource, 0.0)
        if asked == 0:
            continue
        if share.deserved < share.allocated_not_preemptible + asked:
            return resource
    return None


def _details(queue: QueueShare, requested: Mapping[str, float],
             requested_non_preemptible: Mapping[str, float]) -> QuotaDetails:
    return QuotaDetails(
        name=queue.name, queue_requested=queue.request(), queue_deserved=queue.deserved(),
        queue_allocated=queue.allocated(),
        queue_allocated_non_preemptible=queue.allocated_not_preemptible(),
        queue_limits=queue.max_allowed(), job_requested=dict(requested),
        job_requested_non_preemptible=dict(requested_non_preemptible))


_UNITS = {"gpu": 1.0, "cpu": _MILLI_CPU_TO_CORES, "memory": _MEMORY_TO_GB}


def over_limit_message(queue: QueueShare, resource: str, requested: Mapping[str, float]) -> str:
    """api.GetJobOverMaxAllowedMessageForQueue."""
    unit = _UNITS[resource]
    limit = humanize(queue.share(resource).max_allowed, unit)
    used = humanize(queue.share(resource).allocated, unit)
    asked = humanize(requested.get(resource, 0.0), unit)
    if resource == "gpu":
        name, detail = "GPUs", (f"Limit is {limit} GPUs, currently {used} GPUs allocated and "
                                f"workload requested {asked} GPUs")
    elif resource == "cpu":
        name, detail = "CPU cores", (f"Limit is {limit} cores, currently {used} cores allocated "
                                     f"and workload requested {asked} cores")
    else:
        name, detail = "memory", (f"Limit is {limit} GB, currently {used} GB allocated and "
                                  f"workload requested {asked} GB")
    return f"{queue.display} quota has reached the allowable limit of {name}. {detail}"


def over_quota_message(queue: QueueShare, resource: str, requested: Mapping[str, float]) -> str:
    """api.GetBuildOverCapacityMessageForQueue."""
    unit = _UNITS[resource]
    deserved = humanize(queue.share(resource).deserved, unit)
    used = humanize(queue.share(resource).allocated_not_preemptible, unit)
    if resource == "gpu":
        detail = (f"Workload requested {_go_float(requested.get('gpu', 0.0))} GPUs, but "
                  f"{queue.display} quota is {deserved} GPUs, while {used} GPUs are already "
                  "allocated for non-preemptible pods.")
    elif resource == "cpu":
        detail = (f"Workload requested {humanize(requested.get('cpu', 0.0), unit)} CPU cores, "
                  f"but {queue.display} quota is {deserved} cores, while {used} cores are "
                  "already allocated for non-preemptible pods.")
    else:
        detail = (f"Workload requested {humanize(requested.get('memory', 0.0), unit)} GB "
                  f"memory, but {queue.display} quota is {deserved} GB, while {used} GB are "
                  "already allocated for non-preemptible pods.")
    return (f"Non-preemptible workload is over quota. {detail} "
            "Use a preemptible workload to go over quota.")


def over_limit(shares: Mapping[str, QueueShare], job: KaiJob,
               requested: Mapping[str, float]) -> CapacityResult:
    """resultsOverLimit: the job's queue and every ancestor stay within their limits."""
    for queue in chain(shares, job.queue):
        resource = over_limit_resource(queue, requested)
        if resource is not None:
            non_preemptible = quantities() if job.is_preemptible() else dict(requested)
            return CapacityResult(False, OVER_LIMIT,
                                  over_limit_message(queue, resource, requested),
                                  _details(queue, requested, non_preemptible))
    return SCHEDULABLE


def non_preemptible_over_quota_check(shares: Mapping[str, QueueShare], job: KaiJob,
                                     requested: Mapping[str, float]) -> CapacityResult:
    """resultsWithNonPreemptibleOverQuota: a non-preemptible job keeps its queue and
    every ancestor's non-preemptible allocation within deserved quota."""
    if job.is_preemptible():
        return SCHEDULABLE
    for queue in chain(shares, job.queue):
        resource = over_quota_resource(queue, requested)
        if resource is not None:
            return CapacityResult(False, NON_PREEMPTIBLE_OVER_QUOTA,
                                  over_quota_message(queue, resource, requested),
                                  _details(queue, requested, requested))
    return SCHEDULABLE


def _first_failure(results: Sequence[CapacityResult]) -> CapacityResult:
    for result in results:
        if not result.schedulable:
            return result
    return SCHEDULABLE


def job_over_capacity(shares: Mapping[str, QueueShare], job: KaiJob,
                      requested: Mapping[str, float]) -> CapacityResult:
    limit = over_limit(shares, job, requested)
    if not limit.schedulable:
        return limit
    return non_preemptible_over_quota_check(shares, job, requested)


def non_preemptible_over_quota(shares: Mapping[str, QueueShare], job: KaiJob,
                               requested: Mapping[str, float]) -> CapacityResult:
    return non_preemptible_over_quota_check(shares, job, requested)


def task_on_node_over_capacity(shares: Mapping[str, QueueShare], job: KaiJob,
                               requested: Mapping[str, float]) -> CapacityResult:
    return _first_failure([over_limit(shares, job, requested),
                           non_preemptible_over_quota_check(shares, job, requested)])
