"""The cluster a scheduling run works on: nodes with their pods and requested resources,
pods, claims, templates, classes, slices and priority classes.

``ClusterState`` is the one mutable object of a run (the scheduler's cache plus
the API objects it writes). Plugins read it; only Reserve/Unreserve, PreBind,
Bind and preemption change it, through its methods. API objects themselves stay
immutable: an update replaces the object.

Resource amounts are kept as integers in milli-units (``Quantity.milli_value()``)
for every resource name, so cpu, memory and extended resources share one code path.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from dralab.allocator import AllocatedState
from dralab.api.core import Container, Node, Pod, PriorityClass
from dralab.api.features import FeatureGates
from dralab.api.resource import (
    DeviceClass,
    DeviceTaintRule,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)

__all__ = ["ClusterState", "NodeInfo", "PodInfo", "pod_key", "pod_requests"]

# kube-scheduler counts every pod as one unit of the "pods" resource.
PODS = "pods"


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


@dataclass(slots=True)
class PodInfo:
    """A pod plus what scheduling needs of it, computed once.

    ``sequence`` is the arrival order (queue tie-break). ``pod`` is replaced
    when the pod is updated (node name, status); the rest never changes.
    """

    pod: Pod
    priority: int = 0
    requests: dict[str, int] = field(default_factory=dict)
    sequence: int = 0
    attempts: int = 0

    @property
    def key(self) -> str:
        return pod_key(self.pod)

    @property
    def node_name(self) -> str | None:
        return self.pod.spec.node_name


@dataclass(slots=True)
class NodeInfo:
    """A node, the pods assigned (or assumed) on it, and their summed requests."""

    node: Node
    allocatable: dict[str, int]
    pods: list[PodInfo] = field(default_factory=list)
    requested: dict[str, int] = field(default_factory=dict)
    generation: int = 0  # bumped on every change, for caches

    @classmethod
    def of(cls, node: Node) -> NodeInfo:
        status = node.status
        source = status.allocatable or status.capacity
        allocatable = {name: q.milli_value() for name, q in source.items()}
        return cls(node=node, allocatable=allocatable)

    @property
    def name(self) -> str:
        return self.node.metadata.name or ""

    def add_pod(self, info: PodInfo) -> None:
        self.pods.append(info)
        for name, v in info.requests.items():
            self.requested[name] = self.requested.get(name, 0) + v
        self.requested[PODS] = self.requested.get(PODS, 0) + 1000
        self.generation += 1

    def remove_pod(self, key: str) -> PodInfo | None:
        for i, info in enumerate(self.pods):
            if info.key == key:
                del self.pods[i]
                for name, v in info.requests.items():
                    self.requested[name] = self.requested.get(name, 0) - v
                self.requested[PODS] = self.requested.get(PODS, 0) - 1000
                self.generation += 1
                return info
        return None

    def free(self, resource: str) -> int:
        return self.allocatable.get(resource, 0) - self.requested.get(resource, 0)

    def clone(self) -> NodeInfo:
        return NodeInfo(self.node, dict(self.allocatable), list(self.pods),
                        dict(self.requested), self.generation)


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

    # --- building ---------------------------------------------------------------
    def add_node(self, node: Node) -> NodeInfo:
        info = NodeInfo.of(node)
        self.nodes[info.name] = info
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

    def add_pod(self, pod: Pod) -> PodInfo:
        """Register a pod; a pod that already has spec.nodeName is placed on its node."""
        self._sequence += 1
        info = PodInfo(pod=pod, priority=self.resolve_priority(pod),
                       requests=pod_requests(pod), sequence=self._sequence)
        self.pods[info.key] = info
        if pod.spec.node_name and pod.spec.node_name in self.nodes:
            self.nodes[pod.spec.node_name].add_pod(info)
        return info

    def add_claim(self, claim: ResourceClaim) -> None:
        key = f"{claim.metadata.namespace or 'default'}/{claim.metadata.name or ''}"
        old = self.claims.get(key)
        if old is not None and old.status.allocation is not None:
            self.allocated.remove_claim(old)
        self.claims[key] = claim
        if claim.status.allocation is not None:
            self.allocated.add_claim(claim)

    def remove_claim(self, key: str) -> ResourceClaim | None:
        claim = self.claims.pop(key, None)
        if claim is not None and claim.status.allocation is not None:
            self.allocated.remove_claim(claim)
        return claim

    # --- queries ----------------------------------------------------------------
    def node_infos(self) -> list[NodeInfo]:
        return list(self.nodes.values())

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
