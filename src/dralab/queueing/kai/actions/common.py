"""Placing one job inside a statement -- what allocate, and the victim-seeking actions
when they try a scenario, all do (actions/common/allocate.go, podgroup_info's
allocation_info.go, the predicates and capacity checks a task meets on a node,
gpu_sharing for shared GPUs).

A job's tasks to place: pod sets below their gang minimum first; for each, as many
pods as it lacks (a pod set already at its minimum offers one more pod, so an elastic
job grows one pod per turn). Tasks in a pod set go by task-order priority, then name.

Each task takes the best node it fits (see ``placement.order_nodes``): on idle
resources it is allocated, on resources still being released it is pipelined; a shared
GPU request chooses GPU groups (an existing one it fits, or a fresh whole GPU). If one
task finds no node, the whole job's placements in the statement are undone (gang).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from dralab.queueing.kai.framework import (
    ACTIVE_ALLOCATED,
    Session,
    SessionJob,
    SessionTask,
    Statement,
)
from dralab.queueing.kai.model import UNLIMITED, KaiNode, KaiTask
from dralab.queueing.kai.placement import WHOLE_GPU, NodeUsage, gpu_order, order_nodes, request_kind

__all__ = [
    "allocate_job",
    "fitting_node",
    "job_over_capacity",
    "non_preemptible_over_quota",
    "task_cmp",
    "tasks_to_allocate",
]

_MIG_ENABLED_LABEL = "node-role.kubernetes.io/mig-enabled"
_MIG_STRATEGY_LABEL = "nvidia.com/mig.strategy"
_SHARED = ("fraction", "memory")


def task_cmp(left: SessionTask, right: SessionTask) -> int:
    """ssn.TaskOrderFn: pods with a task-order priority first, higher first; then (KAI's
    fallback, creation time then UID) the name."""
    lp, rp = left.spec.priority, right.spec.priority
    if lp is not None and rp is None:
        return -1
    if lp is None and rp is not None:
        return 1
    if lp is not None and rp is not None and lp != rp:
        return -1 if lp > rp else 1
    return -1 if left.name < right.name else (1 if left.name > right.name else 0)


def _podset_cmp(job: SessionJob, minima: dict[str, int]) -> functools.partial[int]:
    return functools.partial(_podset_order, job, minima)


def _podset_order(job: SessionJob, minima: dict[str, int], left: str, right: str) -> int:
    """subgrouporder: a pod set below its minimum first; above it, the smaller
    allocated/minimum ratio; then the name."""
    la = job.count(ACTIVE_ALLOCATED, left)
    ra = job.count(ACTIVE_ALLOCATED, right)
    lsat, rsat = la >= minima[left], ra >= minima[right]
    if lsat and rsat:
        lr = la / minima[left] if minima[left] else float("inf")
        rr = ra / minima[right] if minima[right] else float("inf")
        if lr != rr:
            return -1 if lr < rr else 1
    elif not lsat and rsat:
        return -1
    elif lsat and not rsat:
        return 1
    return -1 if left < right else (1 if left > right else 0)


def tasks_to_allocate(job: SessionJob, real: bool = True) -> list[SessionTask]:
    """GetTasksToAllocate: the pods this turn places, in order."""
    minima = job.podsets()
    unsatisfied = sum(1 for s, m in minima.items() if job.count(ACTIVE_ALLOCATED, s) < m)
    limit = unsatisfied if unsatisfied else 1
    order = sorted(minima, key=functools.cmp_to_key(_podset_cmp(job, minima)))
    chosen: list[SessionTask] = []
    taken = 0
    for podset in order:
        if taken >= limit:
            break
        candidates = sorted((p for p in job.pods_of(podset) if p.should_allocate(real)),
                            key=functools.cmp_to_key(task_cmp))
        if not candidates:
            continue
        allocated = job.count(ACTIVE_ALLOCATED, podset)
        wanted = (minima[podset] - allocated if allocated < minima[podset]
                  else min(len(candidates), 1))
        chosen.extend(candidates[:wanted])
        taken += 1
    return chosen


# --- capacity (proportion's capacity_policy) ------------------------------------------------

def _gpu_quota(task: KaiTask) -> float:
    """GetGpusQuota: MIG slices, fractions (in hundredths) times devices, whole GPUs; a
    gpu-memory request counts none here."""
    from dralab.queueing.kai.proportion import mig_gpus
    kind = request_kind(task)
    if kind == "mig":
        return mig_gpus(task.mig)
    if kind == "fraction":
        return round(task.gpus * 100) / 100 * (task.fraction_devices or 1)
    if kind == "whole":
        return task.gpus
    return 0.0


def _over(session: Session, job: SessionJob, asked: dict[str, float],
          limits: bool = True) -> str | None:
    """resultsOverLimit then resultsWithNonPreemptibleOverQuota, up the queue chain."""
    chain = []
    queue: str | None = job.queue
    while queue is not None and queue in session.shares and queue not in chain:
        chain.append(queue)
        queue = session.shares[queue].parent
    for name in chain if limits else ():
        share = session.shares[name]
        for resource in ("cpu", "memory", "gpu"):
            rs = share.share(resource)
            want = asked.get(resource, 0.0)
            if rs.max_allowed == UNLIMITED or want == 0:
                continue
            if rs.max_allowed < rs.allocated + want:
                return (f"{_title(resource)} quota has reached the allowable limit of "
                        f"queue {share.display}")
    if job.is_preemptible():
        return None
    for name in chain:
        share = session.shares[name]
        for resource in ("cpu", "memory", "gpu"):
            rs = share.share(resource)
            want = asked.get(resource, 0.0)
            if rs.deserved == UNLIMITED or want == 0:
                continue
            if rs.deserved < rs.allocated_not_preemptible + want:
                return (f"Non-preemptible job requested {_title(resource)} over the quota "
                        f"of queue {share.display}")
    return None


def _title(resource: str) -> str:
    return {"gpu": "GPU", "cpu": "CPU", "memory": "memory"}[resource]


def _asked(tasks: Sequence[SessionTask]) -> dict[str, float]:
    return {"cpu": sum(p.spec.cpu_milli for p in tasks),
            "memory": sum(p.spec.memory_bytes for p in tasks),
            "gpu": sum(_gpu_quota(p.spec) for p in tasks)}


def job_over_capacity(session: Session, job: SessionJob,
                      tasks: Sequence[SessionTask]) -> str | None:
    """IsJobOverQueueCapacity: a reason, or None when the job may be placed."""
    return _over(session, job, _asked(tasks))


def non_preemptible_over_quota(session: Session, job: SessionJob,
                               tasks: Sequence[SessionTask]) -> str | None:
    """IsNonPreemptibleJobOverQueueQuota: only the deserved-quota check."""
    return _over(session, job, _asked(tasks), limits=False)


def _task_over_capacity(session: Session, job: SessionJob, pod: SessionTask,
                        usage: NodeUsage) -> str | None:
    """IsTaskAllocationOnNodeOverCapacity: the task's quota as this node would give it
    (GetRequiredInitQuota: a share of one GPU by GPU memory, MIG slices)."""
    from dralab.queueing.kai.proportion import mig_gpus
    task = pod.spec
    if task.mig:
        gpu = mig_gpus(task.mig)
    else:
        memory = usage.task_gpu_memory(task)
        import math
        gpu = math.ceil(memory / usage.gpu_memory * 100) / 100
    asked = {"cpu": task.cpu_milli, "memory": task.memory_bytes, "gpu": gpu}
    return _over(session, job, asked)


# --- predicates ----------------------------------------------------------------------

def _mig_strategy(node: KaiNode) -> str:
    enabled = node.labels.get(_MIG_ENABLED_LABEL)
    if enabled is not None:
        is_mig = enabled.lower() in ("1", "t", "true")
    else:
        is_mig = any(n.startswith("nvidia.com/mig-") for n in node.mig_instances)
    if not is_mig:
        return "off"
    strategy = node.labels.get(_MIG_STRATEGY_LABEL, "")
    return strategy if strategy in ("single", "mixed") else "none"


def _resource_type_error(pod: SessionTask, node: KaiNode) -> str | None:
    """PredicateByNodeResourcesType: MIG pods only on MIG nodes; a single-strategy MIG
    node takes whole GPUs only, a mixed one MIG instances only."""
    kind = request_kind(pod.spec)
    if kind == "cpu":
        return None
    strategy = _mig_strategy(node)
    if strategy == "off":
        if kind == "mig":
            return f"MIG job cannot be scheduled on non-MIG node {node.name}"
        return None
    if strategy == "single" and kind != "whole":
        return f"only whole gpu jobs can run on mig-single node {node.name}"
    if strategy == "mixed" and kind != "mig":
        return f"non MIG jobs cannot run on mig-mixed node {node.name}"
    return None


def _affinity_error(pod: SessionTask, node: KaiNode) -> str | None:
    task = pod.spec
    if task.node_names and node.name not in task.node_names:
        return "node(s) didn't match SessionTask's node affinity/selector"
    for key, value in task.node_selector.items():
        if node.labels.get(key) != value:
            return "node(s) didn't match SessionTask's node affinity/selector"
    return None


def _shared_choice(session: Session, usage: NodeUsage, pod: SessionTask,
                   pipeline_only: bool) -> tuple[tuple[str, ...], bool] | None:
    """GetNodePreferableGpuForSharing: GPU groups for a shared request, and whether it
    must wait (pipeline) for them."""
    task = pod.spec
    wanted = task.fraction_devices or 1
    groups: list[str] = []
    releasing = False
    for gpu in gpu_order(usage, task, session.config.gpu_placement):
        if gpu == WHOLE_GPU:
            fresh_releasing = pipeline_only or not usage.fits_idle(task)
            releasing = releasing or fresh_releasing
            groups.append(session.new_gpu_group())
        else:
            releasing = (releasing or not usage.fits_group_now(task, gpu)
                         or not usage.fits_idle(task))
            groups.append(gpu)
        if len(groups) == wanted:
            return tuple(groups), releasing
    return None


def _max_pods_error(session: Session, usage: NodeUsage, pod: SessionTask) -> str | None:
    """checkMaxPodsWithGpuGroupReservation: a pod slot, two when a new shared GPU needs
    its reservation pod too."""
    free = usage.free_pods()
    if request_kind(pod.spec) not in _SHARED:
        return None if free > 0 else "Node pod number exceeded"
    choice = _shared_choice(session, usage, pod, False)
    if choice is None or choice[1]:
        choice = _shared_choice(session, usage, pod, True) or choice
    new_group = choice is None or any(g not in usage.groups for g in choice[0])
    if new_group and free < 2:
        return "Node pod number exceeded"
    return None


def fitting_node(session: Session, job: SessionJob, pod: SessionTask, usage: NodeUsage,
                 record: bool = True) -> bool:
    """ssn.FittingNode: enough idle or releasing resources, then the predicates."""
    node = usage.node
    error: str | None = None
    if not usage.fits_idle_or_releasing(pod.spec):
        error = f"node {node.name} has insufficient resources"
    if error is None:
        reason = _task_over_capacity(session, job, pod, usage)
        if reason is not None:
            error = f"node does not have enough capacity. Reason: {reason}"
    if error is None:
        error = _resource_type_error(pod, node)
    if error is None and pod.spec.gpu_memory_mib > 0 and node.gpu_memory_mib <= 0:
        error = (f"node is not a gpu node or the gpu memory count on the node was not "
                 f"synced yet, node: <{node.name}>")
    if error is None:
        error = _max_pods_error(session, usage, pod)
    if error is None:
        error = _affinity_error(pod, node)
    if error is not None and record:
        job.task_errors.setdefault(pod.name, []).append(error)
    return error is None


def _place(session: Session, stmt: Statement, pod: SessionTask, usage: NodeUsage,
           pipeline_only: bool) -> bool:
    """allocateTaskToNode."""
    name = usage.node.name
    if request_kind(pod.spec) in _SHARED:
        choice = _shared_choice(session, usage, pod, pipeline_only)
        if choice is None:
            return False
        groups, releasing = choice
        if pipeline_only or releasing:
            stmt.pipeline(pod, name, groups, update_if_on_node=not pipeline_only)
        else:
            stmt.allocate(pod, name, groups)
        return True
    if not pipeline_only and usage.fits_idle(pod.spec):
        stmt.allocate(pod, name)
    else:
        stmt.pipeline(pod, name, (), update_if_on_node=not pipeline_only)
    return True


def _allocate_task(session: Session, stmt: Statement, job: SessionJob, pod: SessionTask,
                   nodes: list[NodeUsage], pipeline_only: bool) -> bool:
    placement = session.config
    for usage in order_nodes(pod.spec, nodes, placement.gpu_placement,
                             placement.cpu_placement):
        if not fitting_node(session, job, pod, usage, record=not pipeline_only):
            continue
        if _place(session, stmt, pod, usage, pipeline_only):
            return True
    return False


def _failure(job: SessionJob, pod: SessionTask, placed: int) -> None:
    """handleFailedTaskAllocation's job fit error."""
    errors = job.task_errors.get(pod.name)
    cause = "; ".join(dict.fromkeys(errors)) if errors else "no nodes"
    minima = job.podsets()
    gang = any(m > 1 for m in minima.values())
    podset = pod.podset
    minimum = minima.get(podset, 1)
    if not gang or job.count(ACTIVE_ALLOCATED | {"Releasing"}, podset) >= minimum:
        job.fit_errors.append(
            f"Resources were not found for pod {job.spec.namespace}/{pod.name} due to: {cause}")
    elif len(minima) == 1 and podset == "":
        job.fit_errors.append(
            f"Resources were found for {placed} pods while {minimum} are required for gang "
            f"scheduling. Additional pods cannot be scheduled due to: {cause}")
    else:
        job.fit_errors.append(
            f"Resources were found for {placed} pods from all sub-groups while sub-group "
            f"{podset} requires {minimum} pods for gang scheduling. Additional pods cannot "
            f"be scheduled in this sub-group due to: {cause}")


def allocate_job(session: Session, stmt: Statement, job: SessionJob, nodes: list[NodeUsage],
                 pipeline_only: bool = False,
                 tasks: Sequence[SessionTask] | None = None) -> bool:
    """common.AllocateJob: place the job's tasks of this turn (``tasks``: these), all or
    none."""
    if tasks is None:
        tasks = tasks_to_allocate(job, real=not pipeline_only)
    reason = job_over_capacity(session, job, tasks)
    if reason is not None:
        if not pipeline_only:
            job.fit_errors.append(reason)
        return False
    checkpoint = stmt.checkpoint()
    minima = job.podsets()
    order = sorted({p.podset for p in tasks}, key=functools.cmp_to_key(
        _podset_cmp(job, minima)))
    for podset in order:
        for placed, pod in enumerate(p for p in tasks if p.podset == podset):
            if not _allocate_task(session, stmt, job, pod, nodes, pipeline_only):
                _failure(job, pod, placed)
                stmt.rollback(checkpoint)
                return False
    return True
