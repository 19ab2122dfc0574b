"""KAI's proportion plugin at session start: every queue's deserved quota, fair share,
limit, allocation and request, per resource (pkg/scheduler/plugins/proportion).

Public API (for the session and its actions):

* :func:`divide_shares` ``(state) -> dict[str, QueueShare]``: the shares of every queue
  (parents and leaves) as the plugin computes them when a session opens. Allocation
  and request roll up from a leaf to all its ancestors.
* :func:`divide_resource` / :func:`divide_over_quota` / :func:`set_resources_share`:
  resource_division.go on one level of sibling queues (what the hierarchy repeats).
* :func:`cluster_total`, :func:`node_quantities`: the total divided among the top
  queues (sum of ready nodes' allocatable CPU, memory and GPUs, MIG instances counted
  by their GPU slices, less what pods of other schedulers use).
* :func:`task_accepted`, :func:`task_requested`: what a task counts for in its queue.
* :func:`allocate` / :func:`deallocate`: the plugin's event handlers -- a task placed
  or evicted during the session moves its queue's (and ancestors') allocation.
* :func:`victim_resources`: the reclaim validator's victim resources (a gang's core
  tasks together, the elastic ones each on their own).

The reclaim checks are in ``reclaimable``, the capacity checks in ``capacity``, the
queue order in ``queue_order``.

Division, per resource, over one level of sibling queues (resource_division.go):

1. each queue gets ``min(deserved, requestable)`` (an unlimited quota deserves the
   whole amount) -- even when the sum is more than there is (over-subscription);
2. what is left goes over quota by queue priority, highest first: rounds in which every
   unsatisfied queue with a weight gets ``left * w / sum(w)``, where
   ``w = max(0, n + k * (n - usage))`` and ``n`` the queue's over-quota weight over the
   sum of the unsatisfied queues' weights (k: kValue). A queue that asks less than its
   part gets what it asks; otherwise the part rounded down to a whole unit and the
   fraction is remembered. Rounds repeat while some queue asked less than its part;
3. then, priority by priority, the remembered fractions decide who gets the last units
   (one each, largest fraction first, then the earlier created queue, then the name).

Determinism: KAI iterates Go maps (random order) over sibling queues in step 1-2 and
over victim sub-groups; here siblings go by name and sub-groups by name. The division
does not depend on the order except through floating-point sums.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from dralab.queueing.kai.model import (
    UNLIMITED,
    KaiJob,
    KaiNode,
    KaiQueue,
    KaiState,
    KaiTask,
    PodStatus,
)
from dralab.queueing.kai.shares import (
    RESOURCES,
    Quantities,
    QueueShare,
    ResourceShare,
    chain,
    quantities,
)

__all__ = [
    "MIN_NODE_GPU_MEMORY",
    "NodePod",
    "PluginArguments",
    "allocate",
    "cluster_total",
    "deallocate",
    "divide_over_quota",
    "divide_resource",
    "divide_shares",
    "mig_gpus",
    "node_quantities",
    "plugin_arguments",
    "queue_shares",
    "queues_by_priority",
    "set_fair_shares",
    "set_resources_share",
    "task_accepted",
    "task_requested",
    "victim_resources",
]

# proportion.go: a queue's memory quota and limit are megabytes (10**6 bytes).
MEGABYTE = 1000.0 * 1000.0
# cluster_info.go snapshotNodes starts the minimum GPU memory at node_info's
# DefaultGpuMemory (100) and only lowers it to nodes above 100 MiB -- so it stays 100;
# a pending gpu-memory task's GPU request is devices * memory / 100, as KAI computes it.
MIN_NODE_GPU_MEMORY = 100
# gpu_resource_requirment.go: fractions are counted in hundredths.
_PORTION_ROUNDING = 100
# pod_status.go allocatedStatuses: what counts as allocated at session start (not
# Pipelined, not Releasing).
_ALLOCATED: frozenset[PodStatus] = frozenset({"Allocated", "Bound", "Binding", "Running"})
# activeUsedStatuses: what a pod of another scheduler holds on its node.
_ACTIVE_USED: frozenset[PodStatus] = frozenset(
    {"Allocated", "Pipelined", "Binding", "Bound", "Running", "Releasing"})
# activeAllocatedStatuses: victims' tasks already re-placed in the scenario.
_ACTIVE_ALLOCATED: frozenset[PodStatus] = frozenset(
    {"Allocated", "Pipelined", "Binding", "Bound", "Running"})
_MIG = re.compile(r"^nvidia\.com/mig-(\d+)g\.(\d+)gb$")
GPU_WORKER_LABEL = "node-role.kubernetes.io/gpu-worker"
DEFAULT_SCHEDULER_NAME = "kai-scheduler"


# --- the plugin's arguments -----------------------------------------------------------

@dataclass(frozen=True, slots=True)
class PluginArguments:
    """The proportion plugin's arguments (proportion.New): the reclaimer saturation
    multiplier (at least 1) and kValue (a value at or below 0 reads as 0)."""

    saturation_multiplier: float = 1.0
    k_value: float = 1.0


def _go_float(text: str | None, default: float) -> float:
    # strconv.ParseFloat: no surrounding blanks or digit separators (Python's float()
    # would take both); an unparsable value keeps the default, as New() does.
    if text is None or text != text.strip() or "_" in text:
        return default
    try:
        return float(text)
    except ValueError:
        return default


def plugin_arguments(arguments: Mapping[str, str]) -> PluginArguments:
    multiplier = _go_float(arguments.get("relcaimerSaturationMultiplier"), 1.0)
    k_value = _go_float(arguments.get("kValue"), 1.0)
    # written as Go compares, so a NaN passes through as it does there
    return PluginArguments(saturation_multiplier=1.0 if multiplier < 1.0 else multiplier,
                           k_value=0.0 if k_value <= 0.0 else k_value)


# --- division of one level ----------------------------------------------------------

def set_resources_share(total: Mapping[str, float], k_value: float,
                        queues: Mapping[str, QueueShare]) -> None:
    """resource_division.SetResourcesShare: divide each resource of ``total`` among
    sibling ``queues`` (their fair shares grow in place)."""
    for resource in RESOURCES:
        divide_resource(total.get(resource, 0.0), k_value, resource, queues)


def divide_resource(total: float, k_value: float, resource: str,
                    queues: Mapping[str, QueueShare]) -> float:
    """setResourceShare: deserved first, then over quota; returns what is left."""
    remaining = _give_deserved(total, queues, resource)
    if remaining > 0:
        return divide_over_quota(remaining, k_value, queues, resource)
    return 0.0


def _ordered(queues: Mapping[str, QueueShare]) -> list[QueueShare]:
    # Go ranges over a map here (random order); by name keeps it stable.
    return [queues[name] for name in sorted(queues)]


def _give_deserved(total: float, queues: Mapping[str, QueueShare], resource: str) -> float:
    remaining = total
    for queue in _ordered(queues):
        share = queue.share(resource)
        deserved = total if share.deserved == UNLIMITED else share.deserved
        amount = min(deserved, share.requestable())
        share.fair_share += amount
        remaining -= amount
    return remaining


def queues_by_priority(
        queues: Mapping[str, QueueShare]) -> tuple[dict[int, dict[str, QueueShare]], list[int]]:
    """getQueuesByPriority: the queues grouped by priority, priorities highest first."""
    groups: dict[int, dict[str, QueueShare]] = {}
    for name in sorted(queues):
        groups.setdefault(queues[name].priority, {})[name] = queues[name]
    return groups, sorted(groups, reverse=True)


@dataclass(slots=True)
class _Leftover:
    queue: QueueShare
    amount: float


def divide_over_quota(total: float, k_value: float, queues: Mapping[str, QueueShare],
                      resource: str) -> float:
    """divideOverQuotaResource: ``total`` beyond the deserved quotas, by priority then
    weight; returns what nobody could take."""
    groups, priorities = queues_by_priority(queues)
    leftovers: dict[int, dict[str, _Leftover]] = {}
    remaining = total
    for priority in priorities:
        remaining, left = _divide_up_to_fair_share(remaining, k_value, groups[priority],
                                                   resource)
        leftovers.setdefault(priority, {}).update(left)
    for priority in priorities:
        if remaining <= 0:
            break
        if leftovers.get(priority):
            remaining = _divide_leftovers(remaining, leftovers[priority], resource)
    return remaining


def _remaining_request(share: ResourceShare) -> float:
    requested = share.requestable()
    return 0.0 if requested < share.fair_share else requested - share.fair_share


def _satisfied(share: ResourceShare) -> bool:
    if share.request <= share.fair_share:
        return True
    return share.max_allowed != UNLIMITED and share.max_allowed <= share.fair_share


def _share_weights(queues: list[QueueShare], resource: str,
                   k_value: float) -> tuple[dict[str, float], float]:
    total_weight = sum(q.share(resource).over_quota_weight for q in queues
                       if _remaining_request(q.share(resource)) > 0)
    if total_weight == 0:
        return {}, 0.0
    weights: dict[str, float] = {}
    weight_sum = 0.0
    for queue in queues:
        share = queue.share(resource)
        if _satisfied(share):
            continue
        normalized = share.over_quota_weight / total_weight
        # usage is the queue's historical usage over the cluster's capacity; a queue
        # that used more than its weight's part gets less (floored at 0).
        weight = max(0.0, normalized + k_value * (normalized - share.usage))
        weights[queue.name] = weight
        weight_sum += weight
    return weights, weight_sum


def _divide_up_to_fair_share(total: float, k_value: float, group: Mapping[str, QueueShare],
                             resource: str) -> tuple[float, dict[str, _Leftover]]:
    leftovers: dict[str, _Leftover] = {}
    queues = _ordered(group)
    while True:
        another_round = False
        to_give = total
        weights, weight_sum = _share_weights(queues, resource, k_value)
        if weight_sum == 0:
            break
        for queue in queues:
            if total == 0:
                break
            share = queue.share(resource)
            if _satisfied(share):
                continue
            requested = _remaining_request(share)
            if share.over_quota_weight == 0:
                continue
            part = to_give * (weights[queue.name] / weight_sum)
            given = _give_in_round(part, requested, queue, leftovers)
            if given == 0:
                continue
            share.fair_share += given
            total -= given
            # a queue that asked less than its part left some over: another round
            # offers it to the queues still asking.
            another_round = another_round or requested < part
        if not another_round or total == 0:
            break
    return total, leftovers


def _give_in_round(part: float, requested: float, queue: QueueShare,
                   leftovers: dict[str, _Leftover]) -> float:
    if requested <= part:
        leftovers.pop(queue.name, None)
        return requested
    # KAI limits a queue's over-quota part to whole units; the fraction is remembered
    # for the last step.
    rounded = float(math.floor(part))
    given = rounded if rounded > 0 else 0.0
    if part - given > 0:
        leftovers[queue.name] = _Leftover(queue, part - given)
    return given


def _divide_leftovers(total: float, leftovers: Mapping[str, _Leftover], resource: str) -> float:
    # largest fraction first, then the earlier created queue, then by name
    order = sorted(leftovers.values(),
                   key=lambda item: (-item.amount, item.queue.created, item.queue.name))
    for item in order:
        if total == 0:
            break
        given = min(1.0, total)
        item.queue.share(resource).fair_share += given
        total -= given
    return total


# --- the hierarchy --------------------------------------------------------------------

def set_fair_shares(total: Mapping[str, float], k_value: float,
                    queues: Mapping[str, QueueShare]) -> None:
    """setFairShare: the top queues divide ``total``; each queue's fair share is then
    divided among its children, down to the leaves."""
    top = {name: q for name, q in queues.items() if not q.parent}
    _set_level(total, k_value, top, queues)


def _set_level(total: Mapping[str, float], k_value: float, level: Mapping[str, QueueShare],
               queues: Mapping[str, QueueShare]) -> None:
    if not level:
        return
    set_resources_share(total, k_value, level)
    for name in sorted(level):
        queue = level[name]
        children = {c: queues[c] for c in queue.children if c in queues}
        _set_level(queue.fair_share(), k_value, children, queues)


# --- from the session's state ---------------------------------------------------------

def mig_gpus(instances: Mapping[str, int]) -> float:
    """GPUs of MIG instances: each ``nvidia.com/mig-<g>g.<m>gb`` counts its g slices
    (a name of another form counts nothing, as KAI logs and skips it)."""
    total = 0.0
    for name, count in instances.items():
        match = _MIG.match(name)
        if match:
            total += int(match.group(1)) * count
    return total


@dataclass(frozen=True, slots=True)
class NodePod:
    """A pod on a node as the total sees it: the scheduler that placed it, its status
    and requests (CPU millicores, memory bytes, GPUs), and whether it is one of KAI's
    utility pods (resource reservation, node scaling)."""

    scheduler_name: str = ""
    status: PodStatus = "Running"
    cpu_milli: float = 0.0
    memory_bytes: float = 0.0
    gpus: float = 0.0
    utility: bool = False


def node_quantities(node: KaiNode, *, ready: bool = True,
                    restrict_to_gpu_workers: bool = False,
                    gpu_worker_label: str = GPU_WORKER_LABEL,
                    pods: Iterable[NodePod] = (),
                    scheduler_name: str = DEFAULT_SCHEDULER_NAME) -> Quantities:
    """proportion.go getNodeResources: what one node adds to the divided total.

    A node not ready adds nothing; with node-scheduling restriction on, a node without
    the GPU-worker label adds no GPUs; active pods of other schedulers (but not KAI's
    utility pods) are taken off, the resources being held outside KAI's queues."""
    if not ready:
        return quantities()
    gpus = 0.0
    if not restrict_to_gpu_workers or gpu_worker_label in node.labels:
        gpus = node.gpus + mig_gpus(node.mig_instances)
    result = quantities(node.cpu_milli, node.memory_bytes, gpus)
    for pod in pods:
        if (pod.scheduler_name != scheduler_name and pod.status in _ACTIVE_USED
                and not pod.utility):
            result["cpu"] -= pod.cpu_milli
            result["memory"] -= pod.memory_bytes
            result["gpu"] -= pod.gpus
    return result


def cluster_total(nodes: Iterable[KaiNode]) -> Quantities:
    """The total the top queues divide (every node of the snapshot, ready, no pods of
    other schedulers: the model holds neither)."""
    total = quantities()
    for node in nodes:
        for resource, value in node_quantities(node).items():
            total[resource] += value
    return total


def _portion(value: float) -> float:
    return round(value * _PORTION_ROUNDING) / _PORTION_ROUNDING


def _devices(task: KaiTask) -> int:
    return task.fraction_devices or 1


def task_requested(task: KaiTask, min_node_gpu_memory: int = MIN_NODE_GPU_MEMORY) -> Quantities:
    """What a pending task asks of its queue (ResReq's GPU quota; a gpu-memory request
    counts devices * memory / the cluster's minimum GPU memory, as KAI counts it)."""
    if task.mig:
        gpus = mig_gpus(task.mig)
    elif task.gpu_memory_mib and not task.gpus:
        # no minimum known (0): KAI adds nothing for the memory request
        gpus = (_devices(task) * (task.gpu_memory_mib / min_node_gpu_memory)
                if min_node_gpu_memory > 0 else 0.0)
    elif 0 < task.gpus < 1:
        gpus = _portion(task.gpus) * _devices(task)
    else:
        gpus = task.gpus
    return quantities(task.cpu_milli, task.memory_bytes, gpus)


def task_accepted(task: KaiTask, node: KaiNode | None = None) -> Quantities:
    """What a placed task holds (AcceptedResource): its MIG slices, its fraction (a
    gpu-memory request as the share of its node's GPU memory) or its whole GPUs."""
    if task.mig:
        gpus = mig_gpus(task.mig)
    elif task.gpu_memory_mib and not task.gpus:
        memory = node.gpu_memory_mib if node is not None and node.gpu_memory_mib else 0
        portion = task.gpu_memory_mib / memory if memory else 0.0
        gpus = _portion(portion) * _devices(task)
    elif 0 < task.gpus < 1:
        gpus = _portion(task.gpus) * _devices(task)
    else:
        gpus = task.gpus
    return quantities(task.cpu_milli, task.memory_bytes, gpus)


def _queue_share(queue: KaiQueue, children: tuple[str, ...]) -> QueueShare:
    def from_spec(quota: float, limit: float, weight: float, scale: float) -> ResourceShare:
        return ResourceShare(deserved=max(UNLIMITED, quota * scale),
                             max_allowed=max(UNLIMITED, limit * scale),
                             over_quota_weight=weight)

    return QueueShare(
        name=queue.name, parent=queue.parent, children=children, priority=queue.priority,
        created=queue.created,
        cpu=from_spec(queue.cpu.quota, queue.cpu.limit, queue.cpu.over_quota_weight, 1.0),
        memory=from_spec(queue.memory.quota, queue.memory.limit,
                         queue.memory.over_quota_weight, MEGABYTE),
        gpu=from_spec(queue.gpu.quota, queue.gpu.limit, queue.gpu.over_quota_weight, 1.0),
        title=queue.display_name,
    )


def queue_shares(state: KaiState) -> dict[str, QueueShare]:
    """The queues' quota, limits, allocation and request, before any division."""
    children: dict[str, list[str]] = {}
    for name in sorted(state.queues):
        parent = state.queues[name].parent
        if parent:
            children.setdefault(parent, []).append(name)
    shares = {name: _queue_share(q, tuple(children.get(name, ())))
              for name, q in state.queues.items()}
    for job_name in sorted(state.jobs):
        job = state.jobs[job_name]
        non_preemptible = not job.is_preemptible()
        for task in job.tasks:
            if task.status in _ALLOCATED:
                node = state.nodes.get(task.node) if task.node else None
                amounts = task_accepted(task, node)
                for queue in chain(shares, job.queue):
                    for resource, share in queue.shares():
                        share.allocated += amounts[resource]
                        share.request += amounts[resource]
                        if non_preemptible:
                            share.allocated_not_preemptible += amounts[resource]
            elif task.status == "Pending":
                amounts = task_requested(task)
                for queue in chain(shares, job.queue):
                    for resource, share in queue.shares():
                        share.request += amounts[resource]
    return shares


def divide_shares(state: KaiState) -> dict[str, QueueShare]:
    """Every queue's shares as the proportion plugin computes them at session open."""
    shares = queue_shares(state)
    total = cluster_total(state.nodes[name] for name in sorted(state.nodes))
    # New(): a kValue below or at 0 is taken as 0.
    k_value = 0.0 if state.config.k_value <= 0.0 else state.config.k_value
    set_fair_shares(total, k_value, shares)
    return shares


# --- during the session ---------------------------------------------------------------

def _move(shares: Mapping[str, QueueShare], job: KaiJob, amounts: Mapping[str, float],
          sign: float) -> None:
    non_preemptible = not job.is_preemptible()
    for queue in chain(shares, job.queue):
        for resource, share in queue.shares():
            share.allocated += sign * amounts.get(resource, 0.0)
            if non_preemptible:
                share.allocated_not_preemptible += sign * amounts.get(resource, 0.0)


def allocate(shares: Mapping[str, QueueShare], job: KaiJob,
             amounts: Mapping[str, float]) -> None:
    """The plugin's AllocateFunc: a task of ``job`` placed (or pipelined) with
    ``amounts`` (see :func:`task_accepted`) adds to its queue and ancestors' allocation."""
    _move(shares, job, amounts, 1.0)


def deallocate(shares: Mapping[str, QueueShare], job: KaiJob,
               amounts: Mapping[str, float]) -> None:
    """The plugin's DeallocateFunc: a task evicted (or unpipelined) gives it back."""
    _move(shares, job, amounts, -1.0)


def _min_available(job: KaiJob, subgroup: str | None) -> int:
    if subgroup is None:
        if job.subgroups:
            return 0
        return job.min_member
    for group in job.subgroups:
        if group.name == subgroup:
            return group.min_member
    return 0


def victim_resources(job: KaiJob, tasks: Sequence[KaiTask],
                     amounts: Sequence[Mapping[str, float]],
                     ignore_reallocated: bool = True) -> list[Quantities]:
    """getVictimResources: the resources a victim job gives back, as the reclaim check
    sees them. Per sub-group, the first minAvailable tasks are its core (counted
    together, once for the whole job), the rest elastic (each on its own).
    ``amounts[i]`` is what ``tasks[i]`` holds; with ``ignore_reallocated`` (the
    session's allowConsolidatingReclaim) a task already placed again in the scenario
    (an active allocated status) counts nothing."""
    by_group: dict[str, list[int]] = {}
    for index, task in enumerate(tasks):
        by_group.setdefault(task.subgroup or "", []).append(index)
    core: list[int] = []
    elastic: list[int] = []
    # Go ranges over a map of sub-groups; by name here.
    for group in sorted(by_group):
        indices = by_group[group]
        minimum = _min_available(job, group or None)
        core.extend(indices[:minimum])
        elastic.extend(indices[minimum:])

    def total(indices: Sequence[int]) -> Quantities | None:
        kept = [i for i in indices
                if not (ignore_reallocated and tasks[i].status in _ACTIVE_ALLOCATED)]
        if not kept:
            return None
        result = quantities()
        for i in kept:
            for resource in RESOURCES:
                result[resource] += amounts[i].get(resource, 0.0)
        return result

    result: list[Quantities] = []
    for index in elastic:
        single = total([index])
        if single is not None:
            result.append(single)
    together = total(core)
    if together is not None:
        result.append(together)
    return result
