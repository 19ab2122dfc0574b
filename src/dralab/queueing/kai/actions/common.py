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
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from dralab.queueing.kai import capacity, dra
from dralab.queueing.kai.actions.topology import node_scores_for, reset_scores, subset_nodes
from dralab.queueing.kai.capacity import CapacityResult
from dralab.queueing.kai.framework import (
    ACTIVE_ALLOCATED,
    POD_SCHEDULING_ERRORS,
    Session,
    SessionJob,
    SessionTask,
    Statement,
)
from dralab.queueing.kai.model import KaiNode, KaiTask, TopologyConstraint
from dralab.queueing.kai.placement import WHOLE_GPU, NodeUsage, gpu_order, order_nodes, request_kind
from dralab.queueing.kai.plugins import podaffinity
from dralab.queueing.kai.plugins.config import plugin_set
from dralab.queueing.kai.plugins.order import kubeflow_order, podset_order, ray_order, task_order
from dralab.queueing.kai.proportion import mig_gpus

__all__ = [
    "OverCapacity",
    "allocate_job",
    "fitting_node",
    "job_over_capacity",
    "non_preemptible_over_quota",
    "podset_cmp",
    "predicate_error",
    "task_cmp",
    "tasks_to_allocate",
]

_MIG_ENABLED_LABEL = "node-role.kubernetes.io/mig-enabled"
_MIG_STRATEGY_LABEL = "nvidia.com/mig.strategy"
_SHARED = ("fraction", "memory")


def task_cmp(left: SessionTask, right: SessionTask) -> int:
    """ssn.TaskOrderFn: the task order plugins in the default tiers' order (kubeflow's
    master/launcher and ray's head pod first, then taskorder: pods with a task-order
    priority first, higher first); then (KAI's fallback, creation time then UID) the
    name."""
    order = (kubeflow_order(left.spec.labels, right.spec.labels)
             or ray_order(left.spec.labels, right.spec.labels)
             or task_order(left.spec.priority, right.spec.priority))
    if order:
        return order
    return -1 if left.name < right.name else (1 if left.name > right.name else 0)


def _podset_cmp(job: SessionJob, minima: dict[str, int]) -> functools.partial[int]:
    return functools.partial(_podset_order, job, minima)


def podset_cmp(job: SessionJob, minima: dict[str, int], left: str, right: str) -> int:
    """ssn.PodSetOrderFn on two of ``job``'s pod sets (-1: ``left`` first)."""
    return _podset_order(job, minima, left, right)


def _podset_order(job: SessionJob, minima: dict[str, int], left: str, right: str) -> int:
    """subgrouporder: a pod set below its minimum first; above it, the smaller
    allocated/minimum ratio; then the name."""
    order = podset_order(job.count(ACTIVE_ALLOCATED, left), minima.get(left, 0),
                         job.count(ACTIVE_ALLOCATED, right), minima.get(right, 0))
    if order:
        return order
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


# --- capacity (proportion's capacity_policy, in ``capacity``) ------------------------------

def _gpu_quota(task: KaiTask) -> float:
    """GetGpusQuota: MIG slices, fractions (in hundredths) times devices, whole GPUs; a
    gpu-memory request counts none here."""
    kind = request_kind(task)
    if kind == "mig":
        return mig_gpus(task.mig)
    if kind == "fraction":
        return round(task.gpus * 100) / 100 * (task.fraction_devices or 1)
    if kind == "whole":
        return task.gpus
    return 0.0


def _asked(tasks: Sequence[SessionTask]) -> dict[str, float]:
    return {"cpu": sum(p.spec.cpu_milli for p in tasks),
            "memory": sum(p.spec.memory_bytes for p in tasks),
            "gpu": sum(_gpu_quota(p.spec) for p in tasks)}


def job_over_capacity(session: Session, job: SessionJob,
                      tasks: Sequence[SessionTask]) -> CapacityResult | None:
    """IsJobOverQueueCapacity: why the job may not be placed, or None."""
    result = capacity.job_over_capacity(session.shares, job.spec, _asked(tasks))
    return None if result.schedulable else result


def non_preemptible_over_quota(session: Session, job: SessionJob,
                               tasks: Sequence[SessionTask]) -> CapacityResult | None:
    """IsNonPreemptibleJobOverQueueQuota: only the deserved-quota check."""
    result = capacity.non_preemptible_over_quota(session.shares, job.spec, _asked(tasks))
    return None if result.schedulable else result


def _task_over_capacity(session: Session, job: SessionJob, pod: SessionTask,
                        usage: NodeUsage) -> str | None:
    """IsTaskAllocationOnNodeOverCapacity: the task's quota as this node would give it
    (GetRequiredInitQuota: a share of one GPU by GPU memory, MIG slices)."""
    task = pod.spec
    if task.mig:
        gpu = mig_gpus(task.mig)
    else:
        memory = usage.task_gpu_memory(task)
        gpu = math.ceil(memory / usage.gpu_memory * 100) / 100
    asked = {"cpu": task.cpu_milli, "memory": task.memory_bytes, "gpu": gpu}
    result = capacity.task_on_node_over_capacity(session.shares, job.spec, asked)
    return None if result.schedulable else f"{result.reason}, Details: {result.message}"


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


def _resource_type_error(pod: SessionTask, node: KaiNode,
                         session: Session | None = None,
                         usage: NodeUsage | None = None) -> str | None:
    """PredicateByNodeResourcesType: a legacy MIG pod nowhere; MIG pods only on MIG nodes
    without legacy MIG pods; a single-strategy MIG node takes whole GPUs only, a mixed
    one MIG instances only."""
    if pod.spec.legacy_mig:
        return f"Legacy MIG jobs cannot be scheduled on node {node.name}"
    kind = request_kind(pod.spec)
    if kind == "cpu":
        return None
    strategy = _mig_strategy(node)
    if strategy != "off" and kind == "mig" and usage is not None and session is not None:
        legacy = sorted(f"{session.jobs[job].spec.namespace}/{name}"
                        for (job, name), spec in usage.specs.items()
                        if spec.legacy_mig and job in session.jobs)
        if legacy:
            return (f"MIG job cannot be scheduled on node with legacy MIG jobs: "
                    f"<[{' '.join(legacy)}]>")
    if strategy == "off":
        if kind == "mig":
            return "MIG job cannot be scheduled on non-MIG node"
        return None
    if strategy == "single" and kind != "whole":
        return "only whole gpu jobs can run on a node with MigStrategy='single'"
    if strategy == "mixed" and kind != "mig":
        return "non MIG jobs cant run on a node with MigStrategy='mixed'"
    return None


def _affinity_error(pod: SessionTask, node: KaiNode) -> str | None:
    task = pod.spec
    if task.node_names and node.name not in task.node_names:
        return "node(s) didn't match Pod's node affinity/selector"
    for key, value in task.node_selector.items():
        if node.labels.get(key) != value:
            return "node(s) didn't match Pod's node affinity/selector"
    return None


def _shared_choice(session: Session, usage: NodeUsage, pod: SessionTask,
                   pipeline_only: bool) -> tuple[tuple[str, ...], bool] | None:
    """GetNodePreferableGpuForSharing: GPU groups for a shared request, and whether it
    must wait (pipeline) for them."""
    task = pod.spec
    wanted = task.fraction_devices or 1
    groups: list[str] = []
    releasing = False
    for gpu in gpu_order(usage, task, session.config.gpu_placement,
                         plugin_set(session.config)):
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
        error = predicate_error(session, job, pod, usage)
    if error is not None and record:
        job.task_errors.setdefault(pod.name, []).append(error)
    return error is None


OverCapacity = Callable[[Session, SessionJob, SessionTask, NodeUsage], str | None]


def predicate_error(session: Session, job: SessionJob, pod: SessionTask, usage: NodeUsage,
                    over_capacity: OverCapacity | None = None) -> str | None:
    """The predicates plugin's evaluateTaskOnPredicates, in its order: the
    over-capacity check (``over_capacity``: the session's, as upstream passes the
    function in), the node's resource type, GPU memory synced (the node's GPU memory
    label), max pods with a GPU group's reservation pod, then the k8s predicates this
    session has (node affinity/selector, DRA). The first failure's message, or None."""
    node = usage.node
    check = _task_over_capacity if over_capacity is None else over_capacity
    reason = check(session, job, pod, usage)
    if reason is not None:
        return f"node does not have enough capacity. Reason: {reason}"
    error = _resource_type_error(pod, node, session, usage)
    if error is None and pod.spec.gpu_memory_mib > 0 and node.gpu_memory_mib <= 0:
        error = (f"node is not a gpu node or the gpu memory count on the node was not "
                 f"synced yet, task: <{job.spec.namespace}/{pod.name}>, node: <{node.name}>")
    if error is None:
        error = _max_pods_error(session, usage, pod)
    if error is None:
        error = _affinity_error(pod, node)
    if error is None and podaffinity.in_use(session):
        error = podaffinity.session_filter(session, job, pod, node)
    if error is None:
        error = dra.predicate_error(session, job.spec, pod.spec, node)
    return error


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
                   nodes: list[NodeUsage], pipeline_only: bool,
                   score_keys: Sequence[str] = ()) -> bool:
    placement = session.config
    scores = node_scores_for(session, score_keys) if score_keys else None
    plugins = plugin_set(placement)
    extra = (podaffinity.session_scores(session, job, pod, (u.node for u in nodes))
             if plugins.on("podaffinity") and podaffinity.in_use(session) else None)
    for usage in order_nodes(pod.spec, nodes, placement.gpu_placement,
                             placement.cpu_placement, scores, plugins, extra):
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
        job.fit_errors.append((POD_SCHEDULING_ERRORS,
            f"Resources were not found for pod {job.spec.namespace}/{pod.name} due to: {cause}"))
    elif len(minima) == 1 and podset == "":
        job.fit_errors.append((POD_SCHEDULING_ERRORS,
            f"Resources were found for {placed} pods while {minimum} are required for gang "
            f"scheduling. Additional pods cannot be scheduled due to: {cause}"))
    else:
        job.fit_errors.append((POD_SCHEDULING_ERRORS,
            f"Resources were found for {placed} pods from all sub-groups while sub-group "
            f"{podset} requires {minimum} pods for gang scheduling. Additional pods cannot "
            f"be scheduled in this sub-group due to: {cause}"))


@dataclass(slots=True)
class _Group:
    """A sub-group set (``podsets`` and ``sets`` under it) of a job; the root is the job
    itself (KAI's RootSubGroupSet, with the job's topology constraint)."""

    name: str
    constraint: TopologyConstraint | None
    keys: tuple[str, ...]
    sets: list[_Group] = field(default_factory=list)
    podsets: list[str] = field(default_factory=list)
    podset_constraints: dict[str, TopologyConstraint | None] = field(default_factory=dict)

    def all_podsets(self) -> list[str]:
        found = list(self.podsets)
        for child in self.sets:
            found.extend(child.all_podsets())
        return found


def _groups(job: SessionJob) -> _Group:
    subgroups = job.spec.subgroups
    parents = {g.parent for g in subgroups if g.parent}
    root = _Group("", job.spec.topology, ("set:",))

    def fill(group: _Group, parent: str | None) -> None:
        for sub in sorted((g for g in subgroups if (g.parent or None) == parent),
                          key=lambda g: g.name):
            if sub.name in parents:
                child = _Group(sub.name, sub.topology, (f"set:{sub.name}", *group.keys))
                fill(child, sub.name)
                group.sets.append(child)
            else:
                group.podsets.append(sub.name)
                group.podset_constraints[sub.name] = sub.topology
    fill(root, None)
    covered = set(root.all_podsets())
    for pod in job.pods:
        if pod.podset not in covered:
            root.podsets.append(pod.podset)
            root.podset_constraints[pod.podset] = None
            covered.add(pod.podset)
    return root


def _podset_pods(job: SessionJob, podsets: Sequence[str]) -> list[SessionTask]:
    wanted = set(podsets)
    return [p for p in job.pods if p.podset in wanted]


class _JobPlacer:
    """allocateSubGroupSet / allocatePodSet / allocateTasksOnNodeSet of one job."""

    def __init__(self, session: Session, stmt: Statement, job: SessionJob,
                 pipeline_only: bool) -> None:
        self.session = session
        self.stmt = stmt
        self.job = job
        self.pipeline_only = pipeline_only
        minima = job.podsets()
        self.order = functools.cmp_to_key(_podset_cmp(job, minima))

    def place_set(self, group: _Group, nodes: list[NodeUsage],
                  tasks: Sequence[SessionTask]) -> bool:
        podsets = group.all_podsets()
        mine = [t for t in tasks if t.podset in podsets]
        for node_set in subset_nodes(self.session, self.job, group.name, group.keys[0],
                                     group.constraint, _podset_pods(self.job, podsets),
                                     mine, nodes):
            checkpoint = self.stmt.checkpoint()
            if self._on_nodes(group, node_set, mine):
                return True
            self.stmt.rollback(checkpoint)
        return False

    def _on_nodes(self, group: _Group, nodes: list[NodeUsage],
                  tasks: Sequence[SessionTask]) -> bool:
        for child in group.sets:
            if not self.place_set(child, nodes, tasks):
                return False
        for podset in sorted(group.podsets, key=self.order):
            mine = [t for t in tasks if t.podset == podset]
            if not self._place_podset(group, podset, nodes, mine):
                return False
        return True

    def _place_podset(self, group: _Group, podset: str, nodes: list[NodeUsage],
                      tasks: Sequence[SessionTask]) -> bool:
        key = f"podset:{podset}"
        keys = (key, *group.keys)
        for node_set in subset_nodes(self.session, self.job, podset, key,
                                     group.podset_constraints.get(podset),
                                     _podset_pods(self.job, [podset]), tasks, nodes):
            checkpoint = self.stmt.checkpoint()
            if self._place_tasks(node_set, tasks, keys):
                return True
            self.stmt.rollback(checkpoint)
        return False

    def _place_tasks(self, nodes: list[NodeUsage], tasks: Sequence[SessionTask],
                     keys: Sequence[str]) -> bool:
        for placed, pod in enumerate(tasks):
            if not _allocate_task(self.session, self.stmt, self.job, pod, nodes,
                                  self.pipeline_only, keys):
                _failure(self.job, pod, placed)
                return False
        return True


def allocate_job(session: Session, stmt: Statement, job: SessionJob, nodes: list[NodeUsage],
                 pipeline_only: bool = False,
                 tasks: Sequence[SessionTask] | None = None) -> bool:
    """common.AllocateJob: place the job's tasks of this turn (``tasks``: these), all or
    none, pod set by pod set inside the node sets topology allows."""
    reset_scores(session)
    if tasks is None:
        tasks = tasks_to_allocate(job, real=not pipeline_only)
    over = job_over_capacity(session, job, tasks)
    if over is not None:
        if not pipeline_only:
            job.fit_errors.append((over.reason, over.message))
        return False
    checkpoint = stmt.checkpoint()
    placer = _JobPlacer(session, stmt, job, pipeline_only)
    if placer.place_set(_groups(job), nodes, tasks):
        return True
    stmt.rollback(checkpoint)
    return False
