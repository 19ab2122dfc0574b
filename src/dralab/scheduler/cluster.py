"""The cluster a scheduling run works on: nodes with their pods and requested resources,
pods, claims, templates, classes, slices and priority classes.

``ClusterState`` is the one mutable object of a run (the scheduler's cache plus
the API objects it writes). Plugins read it; only Reserve/Unreserve, PreBind,
Bind and preemption change it, through its methods. API objects themselves stay
immutable: an update replaces the object.

Resource amounts are kept as integers in milli-units (``Quantity.milli_value()``)
for every resource name, so cpu, memory and extended resources share one code path.

Pod lifecycle inside a run::

    add_pod ──> (pending) ──assume_pod──> (on a NodeInfo, assumed) ──bind_pod──> (bound)
                    ^            │                                              │
                    └─forget_pod─┘                              remove_pod (preemption victim)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import msgspec

from dralab.allocator import AllocatedState
from dralab.allocator.changelog import ChangeLog
from dralab.allocator.nodes import NodeView
from dralab.api.base import KubeObject
from dralab.api.core import Container, Node, Pod, PodCondition, PriorityClass
from dralab.api.features import FeatureGates
from dralab.api.resource import (
    DeviceClass,
    DeviceTaintRule,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)

if TYPE_CHECKING:
    from .nodetable import NodeTable

__all__ = [
    "CPU",
    "MEMORY",
    "PODS",
    "ClusterState",
    "NodeInfo",
    "PodInfo",
    "pod_key",
    "pod_non_zero_requests",
    "pod_requests",
    "set_pod_condition",
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

_FINISHED_PHASES = ("Succeeded", "Failed")
_ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
_REGION_LABELS = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")


def pod_key(pod: Pod) -> str:
    return f"{pod.metadata.namespace or 'default'}/{pod.metadata.name or ''}"


def _container_requests(container: Container) -> dict[str, int]:
    out = {name: q.milli_value() for name, q in container.resources.requests.items()}
    # A limit without a request counts as the request (API defaulting).
    for name, q in container.resources.limits.items():
        out.setdefault(name, q.milli_value())
    return out


def pod_requests(pod: Pod) -> dict[str, int]:
    """Effective requests in milli-units: max(sum of containers, largest init container)."""
    total: dict[str, int] = {}
    for c in pod.spec.containers:
        for name, v in _container_requests(c).items():
            total[name] = total.get(name, 0) + v
    for c in pod.spec.init_containers:
        for name, v in _container_requests(c).items():
            total[name] = max(total.get(name, 0), v)
    return total


def _non_zero(container: Container) -> tuple[int, int]:
    req = _container_requests(container)
    return req.get(CPU, DEFAULT_MILLI_CPU), req.get(MEMORY, DEFAULT_MEMORY_MILLI)


def pod_non_zero_requests(pod: Pod) -> tuple[int, int]:
    """(cpu, memory) in milli-units as scoring sees them: a container that requests no
    cpu or memory counts with kube-scheduler's defaults (100m, 200Mi), so empty pods
    still spread."""
    cpu = mem = 0
    for c in pod.spec.containers:
        c_cpu, c_mem = _non_zero(c)
        cpu += c_cpu
        mem += c_mem
    for c in pod.spec.init_containers:
        c_cpu, c_mem = _non_zero(c)
        cpu, mem = max(cpu, c_cpu), max(mem, c_mem)
    return cpu, mem


def _raw_spec_field(obj: KubeObject, name: str) -> Any:
    raw = obj.raw
    if not isinstance(raw, dict):
        return None
    spec = raw.get("spec")
    return spec.get(name) if isinstance(spec, dict) else None


@dataclass(slots=True, eq=False)
class PodInfo:
    """A pod plus what scheduling needs of it, computed once.

    ``sequence`` is the arrival order (queue tie-break). ``pod`` is replaced
    when the pod is updated (node name, status); the rest never changes, except
    ``assumed_node`` (the node whose NodeInfo holds the pod, bound or assumed)
    and ``attempts``, which only ``ClusterState`` and the scheduler set.
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
        return pod_key(self.pod)

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


def _zone_key(node: Node) -> str:
    labels = node.metadata.labels
    region = next((labels[k] for k in _REGION_LABELS if k in labels), "")
    zone = next((labels[k] for k in _ZONE_LABELS if k in labels), "")
    return f"{region}:\x00:{zone}" if region or zone else ""


@dataclass(slots=True)
class ClusterState:
    """Everything a scheduling run reads and writes. See the module docstring."""

    features: FeatureGates = field(default_factory=FeatureGates)
    nodes: dict[str, NodeInfo] = field(default_factory=dict)
    pods: dict[str, PodInfo] = field(default_factory=dict)
    claims: dict[str, ResourceClaim] = field(default_factory=dict)
    templates: dict[str, ResourceClaimTemplate] = field(default_factory=dict)
    classes: dict[str, DeviceClass] = field(default_factory=dict)
    slices: list[ResourceSlice] = field(default_factory=list)
    taint_rules: list[DeviceTaintRule] = field(default_factory=list)
    priority_classes: dict[str, PriorityClass] = field(default_factory=dict)
    allocated: AllocatedState = field(default_factory=AllocatedState)
    _sequence: int = 0
    node_version: int = 0  # bumped whenever the set of nodes changes, for plugin caches
    version: int = 0  # bumped by every change of nodes, claims or pod placements
    _node_list: list[NodeInfo] | None = None
    _node_names: list[str] | None = None
    _node_index: dict[str, int] | None = None
    # Names of nodes whose pods changed, in order (see NodeInfo._log).
    _node_log: ChangeLog[str] = field(default_factory=ChangeLog)
    _node_table: NodeTable | None = None

    # --- building ---------------------------------------------------------------
    def add_node(self, node: Node) -> NodeInfo:
        info = NodeInfo.of(node)
        info._log = self._node_log
        old = self.nodes.get(info.name)
        if old is not None:  # a replaced node keeps its pods
            for pod in old.pods:
                info.add_pod(pod)
        self.nodes[info.name] = info
        self._node_list = self._node_names = self._node_index = None
        self.node_version += 1
        self.version += 1
        return info

    def remove_node(self, name: str) -> NodeInfo | None:
        """Take a node out of the cluster; remove its pods first (they are not touched)."""
        info = self.nodes.pop(name, None)
        if info is not None:
            self._node_list = self._node_names = self._node_index = None
            self.node_version += 1
            self.version += 1
        return info

    def resolve_priority(self, pod: Pod) -> int:
        """spec.priority, else the PriorityClass's value, else the global default, else 0."""
        if pod.spec.priority is not None:
            return pod.spec.priority
        if pod.spec.priority_class_name:
            pc = self.priority_classes.get(pod.spec.priority_class_name)
            if pc is not None:
                return pc.value
        for pc in self.priority_classes.values():
            if pc.global_default:
                return pc.value
        return 0

    def resolve_preemption_policy(self, pod: Pod) -> str:
        """spec.preemptionPolicy, else the PriorityClass's (as admission copies it)."""
        value = _raw_spec_field(pod, "preemptionPolicy")
        if isinstance(value, str) and value:
            return value
        name = pod.spec.priority_class_name
        pc = self.priority_classes.get(name) if name else None
        if pc is None:
            pc = next((p for p in self.priority_classes.values() if p.global_default), None)
        if pc is not None and pc.preemption_policy:
            return pc.preemption_policy
        return PREEMPT_LOWER_PRIORITY

    def add_pod(self, pod: Pod) -> PodInfo:
        """Register a pod; a pod that already has spec.nodeName is placed on its node,
        unless it has finished (phase Succeeded or Failed): a finished pod holds
        nothing, and kube-scheduler does not even watch it."""
        self._sequence += 1
        info = PodInfo(pod=pod, priority=self.resolve_priority(pod),
                       requests=pod_requests(pod), sequence=self._sequence,
                       non_zero=pod_non_zero_requests(pod),
                       preemption_policy=self.resolve_preemption_policy(pod))
        self.pods[info.key] = info
        node = pod.spec.node_name
        if node and node in self.nodes and pod.status.phase not in _FINISHED_PHASES:
            self.nodes[node].add_pod(info)
            info.assumed_node = node
        return info

    def add_claim(self, claim: ResourceClaim) -> None:
        key = f"{claim.metadata.namespace or 'default'}/{claim.metadata.name or ''}"
        old = self.claims.get(key)
        if old is not None and old.status.allocation is not None:
            self.allocated.remove_claim(old)
        self.claims[key] = claim
        if claim.status.allocation is not None:
            self.allocated.add_claim(claim)
        self.version += 1

    def remove_claim(self, key: str) -> ResourceClaim | None:
        claim = self.claims.pop(key, None)
        if claim is not None and claim.status.allocation is not None:
            self.allocated.remove_claim(claim)
        self.version += 1
        return claim

    # --- pod lifecycle ------------------------------------------------------------
    def assume_pod(self, info: PodInfo, node_name: str) -> None:
        """Count ``info`` on ``node_name`` before binding (kube-scheduler's assume), so
        later cycles see its resources in use. KeyError if the node does not exist."""
        if info.assumed_node is not None:
            raise ValueError(f"pod {info.key} is already on node {info.assumed_node}")
        self.nodes[node_name].add_pod(info)
        info.assumed_node = node_name
        self.version += 1

    def forget_pod(self, info: PodInfo) -> None:
        """Undo ``assume_pod`` (a later phase failed). Idempotent."""
        if info.assumed_node is None:
            return
        node = self.nodes.get(info.assumed_node)
        if node is not None:
            node.remove_pod(info.key)
        info.assumed_node = None
        self.version += 1

    def update_pod(self, info: PodInfo, pod: Pod) -> None:
        """Replace the API object of a known pod (status writes, claim statuses)."""
        info.pod = pod
        self.pods[info.key] = info

    def bind_pod(self, info: PodInfo, node_name: str) -> Pod:
        """Write the binding: a new Pod with spec.nodeName, condition PodScheduled=True
        and no nominatedNodeName, as the API server's binding does. The pod must be
        assumed on ``node_name`` already (it is assumed here otherwise)."""
        if info.assumed_node != node_name:
            self.forget_pod(info)
            self.assume_pod(info, node_name)
        pod = info.pod
        status = msgspec.structs.replace(
            pod.status, nominated_node_name=None,
            conditions=_set_condition(pod.status.conditions,
                                      PodCondition(type="PodScheduled", status="True")))
        bound = msgspec.structs.replace(
            pod, spec=msgspec.structs.replace(pod.spec, node_name=node_name), status=status)
        self.update_pod(info, bound)
        return bound

    def remove_pod(self, key: str) -> PodInfo | None:
        """Delete a pod (a preemption victim): off its node, out of the cluster, its
        claims released (``dralab.scheduler.claims.release_pod_claims``)."""
        info = self.pods.pop(key, None)
        if info is None:
            return None
        self.version += 1
        if info.assumed_node is not None:
            node = self.nodes.get(info.assumed_node)
            if node is not None:
                node.remove_pod(key)
        spec = info.pod.spec
        if spec.resource_claims or info.pod.status.extended_resource_claim_status is not None:
            try:
                from .claims import release_pod_claims
            except ModuleNotFoundError as exc:  # the DRA half is not installed
                if exc.name != f"{__package__}.claims":
                    raise
            else:
                release_pod_claims(self, info)
        return info

    # --- queries ----------------------------------------------------------------
    def node_infos(self) -> list[NodeInfo]:
        """Nodes in kube-scheduler's snapshot order: zones taken round-robin (each in
        arrival order), so a rotating search visits zones evenly. Cached; do not mutate."""
        if self._node_list is None:
            zones: dict[str, list[NodeInfo]] = {}
            for info in self.nodes.values():
                zones.setdefault(_zone_key(info.node), []).append(info)
            order: list[NodeInfo] = []
            columns = list(zones.values())
            depth = max((len(c) for c in columns), default=0)
            for i in range(depth):
                order.extend(c[i] for c in columns if i < len(c))
            self._node_list = order
        return self._node_list

    def node_names(self) -> list[str]:
        """Names in ``node_infos`` order. Cached; do not mutate."""
        if self._node_names is None:
            self._node_names = [n.name for n in self.node_infos()]
        return self._node_names

    def node_index(self) -> dict[str, int]:
        """Name -> position in ``node_infos``. Cached; do not mutate."""
        if self._node_index is None:
            self._node_index = {n: i for i, n in enumerate(self.node_names())}
        return self._node_index

    def node_log(self) -> ChangeLog[str]:
        """Names of nodes whose pods changed, oldest first (for incremental caches)."""
        return self._node_log

    def node_table(self) -> NodeTable | None:
        """Per-node resource numbers as arrays in ``node_infos`` order, brought up to
        date; None when some amount is too large for exact array arithmetic."""
        table = self._node_table
        if table is None:
            from .nodetable import NodeTable

            table = self._node_table = NodeTable(self)
        return table if table.sync() else None

    def pending_pods(self) -> Iterator[PodInfo]:
        return (p for p in self.pods.values() if not p.pod.spec.node_name)

    def claim(self, namespace: str, name: str) -> ResourceClaim | None:
        return self.claims.get(f"{namespace or 'default'}/{name}")

    def template(self, namespace: str, name: str) -> ResourceClaimTemplate | None:
        return self.templates.get(f"{namespace or 'default'}/{name}")

    def objects(self) -> Iterable[object]:
        yield from (n.node for n in self.nodes.values())
        yield from (p.pod for p in self.pods.values())
        yield from self.claims.values()


def _set_condition(conditions: list[PodCondition], new: PodCondition) -> list[PodCondition]:
    """``conditions`` with the entry of ``new.type`` replaced (or appended)."""
    out = [new if c.type == new.type else c for c in conditions]
    if not any(c.type == new.type for c in conditions):
        out.append(new)
    return out


def set_pod_condition(pod: Pod, condition: PodCondition) -> Pod:
    """A copy of ``pod`` whose condition of that type is ``condition``."""
    status = msgspec.structs.replace(
        pod.status, conditions=_set_condition(pod.status.conditions, condition))
    return msgspec.structs.replace(pod, status=status)
