"""Where a KAI task may go and how KAI ranks the nodes and GPUs (node_info, gpu_sharing,
the predicates' resource checks and the node/GPU order plugins).

A :class:`NodeUsage` keeps one node's books the way KAI's NodeInfo does: every pod on
the node (Allocated, Pipelined, Binding, Bound, Running, Releasing) takes its CPU,
memory, whole GPUs, MIG instances and one pod slot from *idle*; a Releasing pod's share
is also *releasing* (free once it ends) and a Pipelined pod is waiting for releasing
resources, so it takes from *releasing* instead of idle. Shared GPUs (fractions and
gpu-memory requests) are kept per GPU group in GPU memory units: what allocated pods
hold, what Releasing pods hold and what Pipelined pods wait for. A group with a live
pod takes one whole GPU from idle; a group whose every pod is Releasing gives it back
as releasing; a group of Pipelined pods only waits for a releasing GPU.

KAI updates these numbers incrementally, pod by pod; here they follow from the pods on
the node (the same totals in every order of events KAI's tests exercise).

The node order for a task is the sum of the default plugins' scores (KAI's
``scores`` package): nodeavailability (100 when it fits on idle resources),
gpusharingorder (1000 when a shared GPU of the node can take it), resourcetype (10 for
a CPU-only task on a CPU-only node) and nodeplacement (binpack: up to 9 for the node
with the least left of the resource; spread: the free share). Ties go by node name,
as KAI sorts them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from dralab.queueing.kai.model import KaiConfig, KaiNode, KaiTask, PodStatus
from dralab.queueing.kai.plugins.config import KaiPluginSet, plugin_set

__all__ = [
    "ACTIVE_USED",
    "DEFAULT_GPU_MEMORY",
    "WHOLE_GPU",
    "GroupUsage",
    "NodeUsage",
    "RequestKind",
    "gpu_order",
    "gpu_score",
    "node_gpu_memory",
    "node_scores",
    "order_nodes",
    "request_kind",
]

# node_info.DefaultGpuMemory: a node without the nvidia.com/gpu.memory label has 100
# units per GPU, so that fraction * memory stays meaningful.
DEFAULT_GPU_MEMORY = 100
# pod_info.WholeGpuIndicator: in a GPU order, "a GPU nobody shares yet".
WHOLE_GPU = "-1"
# pod_status activeUsedStatuses: what holds resources on a node.
ACTIVE_USED: frozenset[PodStatus] = frozenset(
    {"Allocated", "Pipelined", "Binding", "Bound", "Running", "Releasing"})
# scores.go
_MAX_HIGH_DENSITY = 9.0
_RESOURCE_TYPE = 10.0
_AVAILABILITY = 100.0
_GPU_SHARING = 1000.0
_NOMINATED_NODE = 1000000.0
_MIG_PREFIX = "nvidia.com/mig-"
# node_info.GpuCountLabel, read with strconv.Atoi (an optional sign, then digits)
_GPU_COUNT_LABEL = "nvidia.com/gpu.count"
_GO_INT = re.compile(r"[+-]?[0-9]+")

RequestKind = Literal["cpu", "whole", "fraction", "memory", "mig"]


def request_kind(task: KaiTask) -> RequestKind:
    """pod_info's ResourceRequestType: MIG instances, a gpu-memory share, a fraction of a
    GPU, whole GPUs, or none (CPU only)."""
    if task.mig:
        return "mig"
    if task.gpu_memory_mib > 0 and task.gpus == 0:
        return "memory"
    if 0 < task.gpus < 1:
        return "fraction"
    if task.gpus >= 1:
        return "whole"
    return "cpu"


def node_gpu_memory(node: KaiNode) -> int:
    """node_info.getNodeGpuMemory: the label's MiB rounded down to a multiple of 100 (so
    no two shares get the same bytes); none: DefaultGpuMemory."""
    if node.gpu_memory_mib <= 0:
        return DEFAULT_GPU_MEMORY
    return node.gpu_memory_mib - node.gpu_memory_mib % 100


def _devices(task: KaiTask) -> int:
    return task.fraction_devices or 1


@dataclass(slots=True)
class GroupUsage:
    """One shared GPU (a GPU group) of a node, in GPU memory units."""

    allocated: int = 0   # pods neither Releasing nor Pipelined
    releasing: int = 0   # Releasing pods
    pipelined: int = 0   # Pipelined pods waiting for it

    @property
    def used(self) -> int:
        return self.allocated + self.releasing + self.pipelined

    def live(self) -> bool:
        """Holds a GPU taken from idle (KAI's AllocatedSharedGPUsMemory entry)."""
        return self.allocated > 0 or self.releasing > 0

    def all_releasing(self) -> bool:
        """isAllGpuReleased: nothing on it but what is going away."""
        return self.allocated == 0 and self.pipelined == 0


@dataclass(slots=True)
class _Placed:
    status: PodStatus
    groups: tuple[str, ...]


@dataclass(slots=True)
class NodeUsage:
    """One node's books during a session (see the module docstring)."""

    node: KaiNode
    gpu_memory: int = 0
    pods: dict[tuple[str, str], _Placed] = field(default_factory=dict)
    specs: dict[tuple[str, str], KaiTask] = field(default_factory=dict)
    # whole resources: what non-pipelined pods take from idle, what Releasing pods
    # hold and what Pipelined pods wait for
    taken: dict[str, float] = field(default_factory=dict)
    releasing_held: dict[str, float] = field(default_factory=dict)
    pipelined_wait: dict[str, float] = field(default_factory=dict)
    groups: dict[str, GroupUsage] = field(default_factory=dict)

    @classmethod
    def of(cls, node: KaiNode) -> NodeUsage:
        return cls(node=node, gpu_memory=node_gpu_memory(node))

    # --- what a task holds ---------------------------------------------------------

    def task_gpu_memory(self, task: KaiTask) -> int:
        """GetResourceGpuMemory: a gpu-memory request as asked, else the fraction of
        this node's GPU memory (truncated, as Go converts to int64)."""
        if task.gpu_memory_mib > 0:
            return task.gpu_memory_mib
        kind = request_kind(task)
        portion = task.gpus if kind == "fraction" else 1.0 if kind == "whole" else 0.0
        return int(portion * self.gpu_memory)

    def task_portion(self, task: KaiTask) -> float:
        """getResourceGpuPortion: the share of one GPU (a memory request in hundredths,
        rounded up)."""
        if task.gpu_memory_mib > 0:
            return math.ceil(task.gpu_memory_mib / self.gpu_memory * 100) / 100
        kind = request_kind(task)
        return task.gpus if kind == "fraction" else float(task.gpus)

    def accepted_gpus(self, task: KaiTask) -> float:
        """setAcceptedResources' GPUs on this node: a shared request's portion (in
        hundredths) times its devices, whole GPUs as asked, MIG none."""
        kind = request_kind(task)
        if kind in ("fraction", "memory"):
            portion = round(self.task_portion(task) * 100)
            return portion * (task.fraction_devices or 1) / 100
        if kind == "whole":
            return float(task.gpus)
        return 0.0

    def valid_portion(self, task: KaiTask) -> bool:
        portion = self.task_portion(task)
        return portion <= 1 or portion == int(portion)

    @staticmethod
    def whole_amounts(task: KaiTask, shared: bool) -> dict[str, float]:
        """getAcceptedTaskResourceWithoutSharedGPU: CPU, memory, whole GPUs, MIG
        instances and one pod slot (a shared GPU is booked per group instead)."""
        amounts: dict[str, float] = {"cpu": task.cpu_milli, "memory": task.memory_bytes,
                                     "pods": 1.0}
        if not shared and request_kind(task) == "whole":
            amounts["gpu"] = task.gpus
        for name, count in task.mig.items():
            amounts[name] = float(count)
        return amounts

    # --- booking -------------------------------------------------------------------

    def add(self, key: tuple[str, str], task: KaiTask, status: PodStatus,
            groups: tuple[str, ...]) -> None:
        if status not in ACTIVE_USED:
            return
        shared = bool(groups) and request_kind(task) in ("fraction", "memory")
        self.pods[key] = _Placed(status, groups)
        self.specs[key] = task
        self._book(task, status, groups, shared, 1)

    def remove(self, key: tuple[str, str]) -> None:
        placed = self.pods.pop(key, None)
        if placed is None:
            return
        task = self.specs.pop(key)
        shared = bool(placed.groups) and request_kind(task) in ("fraction", "memory")
        self._book(task, placed.status, placed.groups, shared, -1)

    def _book(self, task: KaiTask, status: PodStatus, groups: tuple[str, ...],
              shared: bool, sign: int) -> None:
        amounts = self.whole_amounts(task, shared)
        for name, value in amounts.items():
            if status == "Pipelined":
                self.pipelined_wait[name] = self.pipelined_wait.get(name, 0.0) + sign * value
            else:
                self.taken[name] = self.taken.get(name, 0.0) + sign * value
                if status == "Releasing":
                    self.releasing_held[name] = (
                        self.releasing_held.get(name, 0.0) + sign * value)
        if not shared:
            return
        memory = self.task_gpu_memory(task)
        for group in groups:
            usage = self.groups.setdefault(group, GroupUsage())
            if status == "Pipelined":
                usage.pipelined += sign * memory
            elif status == "Releasing":
                usage.releasing += sign * memory
            else:
                usage.allocated += sign * memory

    # --- what is left ----------------------------------------------------------------

    def allocatable(self, name: str) -> float:
        if name == "cpu":
            return self.node.cpu_milli
        if name == "memory":
            return self.node.memory_bytes
        if name == "gpu":
            return float(self.node.gpus)
        if name == "pods":
            return math.inf if self.node.max_pods is None else float(self.node.max_pods)
        return float(self.node.mig_instances.get(name, 0))

    def idle(self, name: str) -> float:
        value = self.allocatable(name) - self.taken.get(name, 0.0)
        if name == "gpu":
            value -= sum(1 for g in self.groups.values() if g.live())
        return value

    def releasing(self, name: str) -> float:
        value = self.releasing_held.get(name, 0.0) - self.pipelined_wait.get(name, 0.0)
        if name == "gpu":
            for group in self.groups.values():
                if group.releasing > 0 and group.allocated == 0 and group.pipelined == 0:
                    value += 1
                elif group.pipelined > 0 and not group.live():
                    value -= 1
        return value

    def non_allocated(self, name: str) -> float:
        return self.idle(name) + self.releasing(name)

    def used_gpus(self) -> float:
        """Whole GPUs in use plus shared GPUs with anything on them."""
        return (self.taken.get("gpu", 0.0) + self.pipelined_wait.get("gpu", 0.0)
                + sum(1 for g in self.groups.values() if g.used > 0))

    def is_mig(self) -> bool:
        return any(name.startswith(_MIG_PREFIX) for name in self.node.mig_instances)

    def cpu_only(self) -> bool:
        return not self.is_mig() and self.node.gpus <= 0

    # --- shared GPUs -----------------------------------------------------------------

    def fits_group(self, task: KaiTask, group: str) -> bool:
        """IsTaskFitOnGpuGroup: the group is in use, has the memory once its releasing
        pods are gone, and is not wholly going away."""
        usage = self.groups.get(group)
        if usage is None or usage.used == 0:
            return False
        free = self.gpu_memory - usage.allocated - usage.pipelined
        return free - self.task_gpu_memory(task) >= 0 and not usage.all_releasing()

    def fits_group_now(self, task: KaiTask, group: str) -> bool:
        """EnoughIdleResourcesOnGpu: room without waiting for releasing pods."""
        usage = self.groups.get(group)
        if usage is None or not usage.live():
            return False
        return (self.gpu_memory - usage.allocated - usage.releasing
                - self.task_gpu_memory(task)) >= 0

    def used_portion(self, group: str) -> float:
        usage = self.groups.get(group)
        return 0.0 if usage is None else usage.used / self.gpu_memory

    def fitting_group_count(self, task: KaiTask) -> int:
        count = 0
        for group in sorted(self.groups):
            if self.fits_group(task, group):
                count += 1
                if count >= _devices(task):
                    break
        return count

    # --- does it fit -------------------------------------------------------------------

    def _fits(self, task: KaiTask, available: Mapping[str, float], pods: int = 1) -> bool:
        kind = request_kind(task)
        base = (("cpu", task.cpu_milli), ("memory", task.memory_bytes), ("pods", float(pods)))
        if any(value > available.get(name, 0.0) for name, value in base):
            return False
        if kind in ("cpu", "whole", "mig"):
            if not self.valid_portion(task):
                return False
            gpus = task.gpus if kind == "whole" else 0.0
            if gpus > available.get("gpu", 0.0):
                return False
            return all(count <= available.get(name, 0.0) for name, count in task.mig.items())
        if not self.valid_portion(task):
            return False
        whole = math.floor(available.get("gpu", 0.0))
        return whole + self.fitting_group_count(task) >= _devices(task)

    def _available(self, task: KaiTask, releasing: bool) -> dict[str, float]:
        names = {"cpu", "memory", "pods", "gpu", *task.mig}
        if releasing:
            return {n: self.non_allocated(n) for n in names}
        return {n: self.idle(n) for n in names}

    def fits_idle(self, task: KaiTask) -> bool:
        """IsTaskAllocatable: fits on idle resources (a pod asking nothing always does)."""
        if (request_kind(task) == "cpu" and not task.cpu_milli and not task.memory_bytes
                and not task.claims):
            return True
        return self._fits(task, self._available(task, False))

    def fits_idle_or_releasing(self, task: KaiTask, pods: int = 1) -> bool:
        """IsTaskAllocatableOnReleasingOrIdle (``pods``: slots the request stands for)."""
        return self._fits(task, self._available(task, True), pods)

    def free_pods(self) -> float:
        return self.non_allocated("pods")


# --- order of nodes and GPUs --------------------------------------------------------------

def _binpack_range(resource: str, nodes: Iterable[NodeUsage]) -> tuple[float, float]:
    low, high = math.inf, 0.0
    for usage in nodes:
        if usage.allocatable(resource) == 0:
            continue
        current = usage.non_allocated(resource)
        low = min(low, current)
        high = max(high, current)
    return low, high


def _binpack_score(usage: NodeUsage, resource: str, low: float, high: float) -> float:
    if usage.allocatable(resource) == 0 or high == 0:
        return 0.0
    if low == high:
        return _MAX_HIGH_DENSITY
    current = usage.non_allocated(resource)
    return _MAX_HIGH_DENSITY * (1 - (current - low) / (high - low))


def _spread_score(usage: NodeUsage, resource: str) -> float:
    """nodeResourceSpread: the free share of the resource; for GPUs out of the node's
    nvidia.com/gpu.count label when it reads as a number (GetNumberOfGPUsInNode), so a
    MIG node counts its physical GPUs, else its allocatable GPUs."""
    total = usage.allocatable(resource)
    if resource == "gpu":
        label = usage.node.labels.get(_GPU_COUNT_LABEL, "")
        if _GO_INT.fullmatch(label):
            total = float(int(label))
    if total == 0:
        return 0.0
    return usage.non_allocated(resource) / total


def node_scores(task: KaiTask, nodes: list[NodeUsage],
                plugins: KaiPluginSet) -> dict[str, float]:
    """ssn.NodeOrderFn for every node, by name: the sum of the node-order plugins that
    are on (nodeavailability 100 when the task fits on idle resources, gpusharingorder
    1000 when a shared GPU of the node can take it, resourcetype 10 for a CPU-only task
    on a CPU-only node, nominatednode 1,000,000 on the node the pod's status nominates,
    nodeplacement binpack up to 9 / spread the free share; binpack's
    range is over ``nodes``, as NodePreOrderFn takes it over the nodes being ordered)."""
    cpu_task = request_kind(task) == "cpu"
    resource = "cpu" if cpu_task else "gpu"
    strategy = plugins.node_strategy(resource)
    availability = plugins.on("nodeavailability")
    sharing = plugins.on("gpusharingorder")
    resource_type = plugins.on("resourcetype")
    nominated = task.nominated_node if plugins.on("nominatednode") else None
    low, high = _binpack_range(resource, nodes)
    out: dict[str, float] = {}
    for usage in nodes:
        score = 0.0
        if nominated is not None and usage.node.name == nominated:
            score += _NOMINATED_NODE
        if availability and usage.fits_idle(task):
            score += _AVAILABILITY
        if sharing and any(usage.fits_group(task, g) for g in usage.groups):
            score += _GPU_SHARING
        if resource_type and cpu_task and usage.cpu_only():
            score += _RESOURCE_TYPE
        if strategy == "spread":
            score += _spread_score(usage, resource)
        elif strategy == "binpack":
            score += _binpack_score(usage, resource, low, high)
        out[usage.node.name] = score
    return out


def order_nodes(task: KaiTask, nodes: list[NodeUsage], gpu_placement: str,
                cpu_placement: str,
                topology: Mapping[str, float] | None = None,
                plugins: KaiPluginSet | None = None,
                extra: Mapping[str, float] | None = None) -> list[NodeUsage]:
    """ssn.OrderedNodesByTask: highest total score of the node-order plugins on first
    (:func:`node_scores`), ties by node name. ``plugins``: the session's plugins (None:
    the operator's set for ``gpu_placement``/``cpu_placement``). ``topology``: the
    topology plugin's node scores (a node without one is left out, as KAI drops a node
    whose score fails). ``extra``: other plugins' node scores added (podaffinity's)."""
    if plugins is None:
        plugins = plugin_set(KaiConfig(gpu_placement=_strategy(gpu_placement),
                                       cpu_placement=_strategy(cpu_placement)))
    scores = node_scores(task, nodes, plugins)
    scored: list[tuple[float, str, NodeUsage]] = []
    for usage in nodes:
        score = scores[usage.node.name]
        if extra is not None:
            score += extra.get(usage.node.name, 0.0)
        if topology is not None:
            if usage.node.name not in topology:
                continue
            score += topology[usage.node.name]
        scored.append((-score, usage.node.name, usage))
    scored.sort(key=lambda item: (item[0], item[1]))
    return [item[2] for item in scored]


def _strategy(value: str) -> Literal["binpack", "spread"]:
    return "spread" if value == "spread" else "binpack"


def gpu_score(usage: NodeUsage, gpu: str, plugins: KaiPluginSet) -> float | None:
    """ssn.GpuOrderFn: the sum of gpupack (the used share of a shared GPU, 0 for a
    fresh one) and gpuspread (1 minus that, 1 for a fresh one) when on. None when a
    plugin fails: a shared GPU on a node whose GPU memory is below KAI's 100 units
    (GetUsedGpuPortion's "invalid GPU memory"), which sortGPUs then leaves out."""
    pack, spread = plugins.on("gpupack"), plugins.on("gpuspread")
    if gpu == WHOLE_GPU:
        return 1.0 if spread else 0.0
    if not (pack or spread):
        return 0.0
    if usage.gpu_memory < DEFAULT_GPU_MEMORY:
        return None
    used = usage.used_portion(gpu)
    return (used if pack else 0.0) + (1 - used if spread else 0.0)


def gpu_order(usage: NodeUsage, task: KaiTask, gpu_placement: str,
              plugins: KaiPluginSet | None = None) -> list[str]:
    """ssn.FittingGPUs: the shared GPUs the task fits on, and one WHOLE_GPU entry per
    idle or releasing whole GPU, best first by :func:`gpu_score` (gpupack: the fullest
    shared GPU first, a fresh GPU last; gpuspread: the emptiest first, a fresh GPU
    first; neither: all equal). Equal scores keep shared GPUs by group name, then the
    fresh GPUs. ``plugins`` None: the operator's set for ``gpu_placement``."""
    if plugins is None:
        plugins = plugin_set(KaiConfig(gpu_placement=_strategy(gpu_placement)))
    candidates = [g for g in sorted(usage.groups) if usage.fits_group(task, g)]
    fresh = int(usage.idle("gpu")) + int(usage.releasing("gpu"))
    if usage.idle("gpu") > 0 or usage.releasing("gpu") > 0:
        candidates += [WHOLE_GPU] * max(fresh, 0)
    by_score: dict[float, list[str]] = {}
    for group in candidates:
        score = gpu_score(usage, group, plugins)
        if score is not None:
            by_score.setdefault(score, []).append(group)
    ordered: list[str] = []
    for score in sorted(by_score, reverse=True):
        ordered.extend(by_score[score])
    return ordered
