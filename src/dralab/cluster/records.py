"""What the cluster store keeps per pod and per node, and the pod arithmetic behind it.

``PodInfo`` is a pod plus what scheduling needs of it, computed once; ``NodeInfo``
is a node with the pods placed (or assumed) on it and their summed requests, as
in kube-scheduler's cache. Both are owned by ``ClusterState``: only the store
changes the ones it holds (the scheduler may count ``PodInfo.attempts``);
``NodeInfo.clone()`` gives a private copy that what-if code (preemption) may
change freely.

Resource amounts are integers in milli-units (``Quantity.milli_value()``) for every
resource name, so cpu, memory and extended resources share one code path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import msgspec

from dralab.allocator.changelog import ChangeLog
from dralab.allocator.nodes import NodeView
from dralab.api.base import KubeObject
from dralab.api.core import Container, Node, Pod, PodCondition
from dralab.api.keys import key_of

from .podstatus import aggregate_requests, is_pod_level_resource, pod_level_requests

__all__ = [
    "CPU",
    "DEFAULT_MEMORY_MILLI",
    "DEFAULT_MILLI_CPU",
    "FINISHED_PHASES",
    "MEMORY",
    "PODS",
    "PREEMPT_LOWER_PRIORITY",
    "PREEMPT_NEVER",
    "NodeInfo",
    "PodInfo",
    "pod_non_zero_requests",
    "pod_requests",
    "raw_spec_field",
    "set_pod_condition",
    "with_condition",
]

CPU = "cpu"
MEMORY = "memory"
# kube-scheduler counts every pod as one unit of the "pods" resource.
PODS = "pods"
# What scoring assumes for a container that requests no cpu / memory (kube-scheduler's
# DefaultMilliCPURequest and DefaultMemoryRequest), in milli-units.
DEFAULT_MILLI_CPU = 100
DEFAULT_MEMORY_MILLI = 200 * 1024 * 1024 * 1000

PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
PREEMPT_NEVER = "Never"

FINISHED_PHASES = ("Succeeded", "Failed")


def _container_requests(container: Container) -> dict[str, int]:
    out = {name: q.milli_value() for name, q in container.resources.requests.items()}
    # A limit without a request counts as the request (API defaulting).
    for name, q in container.resources.limits.items():
        out.setdefault(name, q.milli_value())
    return out


def _with_pod_level_and_overhead(pod: Pod, total: dict[str, int]) -> dict[str, int]:
    """component-helpers PodRequests after the containers: pod-level requests (when
    the pod sets any, PodLevelResources being on by default since 1.34) replace the
    containers' cpu, memory and hugepages; the RuntimeClass overhead is added."""
    for name, quantity in pod_level_requests(pod).items():
        if is_pod_level_resource(name):
            total[name] = quantity.milli_value()
    for name, quantity in pod.spec.overhead.items():
        total[name] = total.get(name, 0) + quantity.milli_value()
    return total


def pod_requests(pod: Pod) -> dict[str, int]:
    """Effective requests in milli-units, as kube-scheduler's NodeResourcesFit counts
    them: app containers and sidecars summed, at least the largest init-container
    phase, pod-level requests over the containers', plus overhead."""
    return _with_pod_level_and_overhead(pod, aggregate_requests(pod, _container_requests))


def _non_zero(container: Container) -> dict[str, int]:
    req = _container_requests(container)
    return {CPU: req.get(CPU, DEFAULT_MILLI_CPU), MEMORY: req.get(MEMORY, DEFAULT_MEMORY_MILLI)}


def pod_non_zero_requests(pod: Pod) -> tuple[int, int]:
    """(cpu, memory) in milli-units as scoring sees them: a container that requests no
    cpu or memory counts with kube-scheduler's defaults (100m, 200Mi), so empty pods
    still spread; summed as ``pod_requests`` sums (NonMissingContainerRequests)."""
    total = _with_pod_level_and_overhead(pod, aggregate_requests(pod, _non_zero))
    return total.get(CPU, 0), total.get(MEMORY, 0)


def raw_spec_field(obj: KubeObject, name: str) -> Any:
    raw = obj.raw
    if not isinstance(raw, dict):
        return None
    spec = raw.get("spec")
    return spec.get(name) if isinstance(spec, dict) else None


@dataclass(slots=True, eq=False)
class PodInfo:
    """A pod plus what scheduling needs of it, computed once.

    ``sequence`` is the arrival order (queue tie-break). ``pod`` is replaced
    when the pod is updated (node name, status) and ``assumed_node`` is the node
    whose NodeInfo holds the pod (bound or assumed): both only by the store that
    holds the PodInfo, which restores them on ``revert``. ``attempts`` belongs to
    the scheduling queue (not restored). The rest never changes.
    Compared by identity: two PodInfos are the same pod only if they are one object.
    """

    pod: Pod
    priority: int = 0
    requests: dict[str, int] = field(default_factory=dict)
    sequence: int = 0
    attempts: int = 0
    non_zero: tuple[int, int] = (DEFAULT_MILLI_CPU, DEFAULT_MEMORY_MILLI)
    preemption_policy: str = PREEMPT_LOWER_PRIORITY
    assumed_node: str | None = None

    @property
    def key(self) -> str:
        return key_of(self.pod)

    @property
    def node_name(self) -> str | None:
        return self.pod.spec.node_name

    @property
    def start_time(self) -> str:
        """status.startTime as written (RFC 3339 sorts as text), "" when unknown."""
        raw = self.pod.raw
        status = raw.get("status") if isinstance(raw, dict) else None
        value = status.get("startTime") if isinstance(status, dict) else None
        return value if isinstance(value, str) else ""


@dataclass(slots=True, eq=False)
class NodeInfo:
    """A node, the pods assigned (or assumed) on it, and their summed requests.

    ``allocatable`` never changes once built (``alloc_cpu``/``alloc_memory`` copy two of
    its entries); ``requested`` sums the pods' requests (plus 1000 milli "pods" each);
    ``non_zero_cpu``/``non_zero_memory`` sum what scoring assumes (see
    ``pod_non_zero_requests``). ``generation`` changes on every update, for caches.

    A NodeInfo held by a ``ClusterState`` is changed by that store only;
    ``add_pod``/``remove_pod`` are for ``clone()``s (what-if copies).
    """

    node: Node
    allocatable: dict[str, int]
    pods: list[PodInfo] = field(default_factory=list)
    requested: dict[str, int] = field(default_factory=dict)
    non_zero_cpu: int = 0
    non_zero_memory: int = 0
    generation: int = 0
    _view: NodeView | None = None
    # The owning cluster's node journal (None for clones): every add/remove is
    # recorded there so per-node caches (``NodeTable``, Filter masks) update just
    # the nodes that changed instead of rescanning all of them per pod.
    _log: ChangeLog[str] | None = None
    # The node's zone key for the snapshot order, worked out once by the store.
    _zone: str | None = None
    name: str = field(init=False, default="")
    alloc_cpu: int = field(init=False, default=0)
    alloc_memory: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        # Plain attributes: filter and score loops read them for every node of every cycle.
        self.name = self.node.metadata.name or ""
        self.alloc_cpu = self.allocatable.get(CPU, 0)
        self.alloc_memory = self.allocatable.get(MEMORY, 0)

    @classmethod
    def of(cls, node: Node) -> NodeInfo:
        status = node.status
        source = status.allocatable or status.capacity
        allocatable = {name: q.milli_value() for name, q in source.items()}
        return cls(node=node, allocatable=allocatable)

    @property
    def view(self) -> NodeView:
        """Name and labels for node-selector matching (built once per NodeInfo)."""
        if self._view is None:
            self._view = NodeView(self.name, MappingProxyType(dict(self.node.metadata.labels)))
        return self._view

    def add_pod(self, info: PodInfo) -> None:
        self.pods.append(info)
        requested = self.requested
        for name, v in info.requests.items():
            requested[name] = requested.get(name, 0) + v
        requested[PODS] = requested.get(PODS, 0) + 1000
        self.non_zero_cpu += info.non_zero[0]
        self.non_zero_memory += info.non_zero[1]
        self.generation += 1
        if self._log is not None:
            self._log.append(self.name)

    def remove_pod(self, key: str) -> PodInfo | None:
        for i, info in enumerate(self.pods):
            if info.key == key:
                del self.pods[i]
                requested = self.requested
                for name, v in info.requests.items():
                    requested[name] = requested.get(name, 0) - v
                requested[PODS] = requested.get(PODS, 0) - 1000
                self.non_zero_cpu -= info.non_zero[0]
                self.non_zero_memory -= info.non_zero[1]
                self.generation += 1
                if self._log is not None:
                    self._log.append(self.name)
                return info
        return None

    def free(self, resource: str) -> int:
        return self.allocatable.get(resource, 0) - self.requested.get(resource, 0)

    def clone(self) -> NodeInfo:
        """An independent copy for what-if changes (preemption); PodInfos are shared."""
        return NodeInfo(self.node, self.allocatable, list(self.pods), dict(self.requested),
                        self.non_zero_cpu, self.non_zero_memory, self.generation, self._view)


def with_condition(conditions: list[PodCondition], new: PodCondition) -> list[PodCondition]:
    """``conditions`` with the entry of ``new.type`` replaced (or appended)."""
    out = [new if c.type == new.type else c for c in conditions]
    if not any(c.type == new.type for c in conditions):
        out.append(new)
    return out


def set_pod_condition(pod: Pod, condition: PodCondition) -> Pod:
    """A copy of ``pod`` whose condition of that type is ``condition``."""
    status = msgspec.structs.replace(
        pod.status, conditions=with_condition(pod.status.conditions, condition))
    return msgspec.structs.replace(pod, status=status)
