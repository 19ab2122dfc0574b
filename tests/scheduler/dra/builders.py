"""Builders and a one-cycle harness for DynamicResources scenarios.

Objects are small and named like the upstream plugin tests (gpu class,
node-N, pod-N). ``Harness.schedule`` drives the plugin through one
scheduling cycle by hand (PreEnqueue, PreFilter, Filter on every node, Score,
Reserve, PreBind, bind), optionally with other Filter plugins in front, so the
plugin's behaviour can be checked without the scheduler loop.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dralab.api.base import ObjectMeta
from dralab.api.core import (
    Affinity,
    Container,
    ContainerResourceClaim,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    NodeStatus,
    Pod,
    PodResourceClaim,
    PodSpec,
    ResourceRequirements,
)
from dralab.api.features import FeatureGates
from dralab.api.quantity import Quantity, parse_quantity
from dralab.api.resource import (
    AllocationResult,
    CELDeviceSelector,
    Counter,
    CounterSet,
    Device,
    DeviceAllocationResult,
    DeviceAttribute,
    DeviceClaim,
    DeviceClass,
    DeviceClassSpec,
    DeviceCounterConsumption,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSelector,
    DeviceSubRequest,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimSpec,
    ResourceClaimStatus,
    ResourceClaimTemplate,
    ResourceClaimTemplateSpec,
    ResourcePool,
    ResourceSlice,
    ResourceSliceSpec,
)
from dralab.cluster import ClusterState, NodeInfo, PodInfo
from dralab.scheduler.framework import CycleState, Handle, NodeScore, Status
from dralab.scheduler.plugins.dynamicresources.plugin import NAME, DynamicResources

DRIVER = "gpu.example.com"
GPU = "gpu"
NS = "default"


def q(value: str | int) -> Quantity:
    return parse_quantity(str(value))


def cel(expression: str) -> DeviceSelector:
    return DeviceSelector(cel=CELDeviceSelector(expression=expression))


def gpu_class(name: str = GPU, driver: str = DRIVER, *, extended: str | None = None,
              created: str | None = None, selectors: Sequence[str] = ()) -> DeviceClass:
    sels = [cel(f'device.driver == "{driver}"'), *(cel(s) for s in selectors)]
    return DeviceClass(api_version="resource.k8s.io/v1", kind="DeviceClass",
                       metadata=ObjectMeta(name=name, creation_timestamp=created),
                       spec=DeviceClassSpec(selectors=sels, extended_resource_name=extended))


def gpus(node: str, count: int, *, driver: str = DRIVER, pool: str | None = None,
         prefix: str = "gpu-", model: str = "a100") -> ResourceSlice:
    """One slice of ``count`` whole GPUs published by ``node`` (pool = node name)."""
    devices = [Device(name=f"{prefix}{i}", attributes={
        "model": DeviceAttribute(string=model), "index": DeviceAttribute(int_=i)})
        for i in range(count)]
    pool = pool or node
    return ResourceSlice(
        api_version="resource.k8s.io/v1", kind="ResourceSlice",
        metadata=ObjectMeta(name=f"{node}-{driver}-{pool}"),
        spec=ResourceSliceSpec(driver=driver, node_name=node,
                               pool=ResourcePool(name=pool, generation=1, resource_slice_count=1),
                               devices=devices))


def mig_slices(node: str, gpu_count: int, parts: int, *, driver: str = DRIVER
               ) -> list[ResourceSlice]:
    """Partitionable GPUs: a counters slice (one set per GPU with ``parts`` slices of
    memory) and a device slice with ``parts`` one-slice partitions per GPU."""
    sets = [CounterSet(name=f"gpu-{g}-cs", counters={"memory": Counter(value=q(parts))})
            for g in range(gpu_count)]
    devices = [Device(name=f"gpu-{g}-mig-{p}",
                      attributes={"type": DeviceAttribute(string="mig")},
                      consumes_counters=[DeviceCounterConsumption(
                          counter_set=f"gpu-{g}-cs", counters={"memory": Counter(value=q(1))})])
               for g in range(gpu_count) for p in range(parts)]
    pool = ResourcePool(name=node, generation=1, resource_slice_count=2)
    return [
        ResourceSlice(api_version="resource.k8s.io/v1", kind="ResourceSlice",
                      metadata=ObjectMeta(name=f"{node}-counters"),
                      spec=ResourceSliceSpec(driver=driver, node_name=node, pool=pool,
                                             shared_counters=sets)),
        ResourceSlice(api_version="resource.k8s.io/v1", kind="ResourceSlice",
                      metadata=ObjectMeta(name=f"{node}-devices"),
                      spec=ResourceSliceSpec(driver=driver, node_name=node, pool=pool,
                                             devices=devices)),
    ]


def node(name: str, labels: Mapping[str, str] | None = None,
         allocatable: Mapping[str, str | int] | None = None) -> Node:
    alloc = {"cpu": q(64), "memory": q("256Gi"), "pods": q(110)}
    alloc.update({k: q(v) for k, v in (allocatable or {}).items()})
    return Node(api_version="v1", kind="Node",
                metadata=ObjectMeta(name=name, labels=dict(labels or {})),
                status=NodeStatus(allocatable=alloc, capacity=alloc))


def request(name: str = "gpu", cls: str = GPU, count: int = 1,
            selectors: Sequence[str] = ()) -> DeviceRequest:
    return DeviceRequest(name=name, exactly=ExactDeviceRequest(
        device_class_name=cls, allocation_mode="ExactCount", count=count,
        selectors=[cel(s) for s in selectors]))


def first_available(name: str, *subs: tuple[str, str, int]) -> DeviceRequest:
    """A prioritized list of (subrequest name, class, count)."""
    return DeviceRequest(name=name, first_available=[
        DeviceSubRequest(name=n, device_class_name=c, allocation_mode="ExactCount", count=k)
        for n, c, k in subs])


def spec(*requests: DeviceRequest) -> ResourceClaimSpec:
    return ResourceClaimSpec(devices=DeviceClaim(requests=list(requests or [request()])))


def template(name: str = "gpu-template", *requests: DeviceRequest, ns: str = NS,
             labels: Mapping[str, str] | None = None,
             annotations: Mapping[str, str] | None = None) -> ResourceClaimTemplate:
    return ResourceClaimTemplate(
        api_version="resource.k8s.io/v1", kind="ResourceClaimTemplate",
        metadata=ObjectMeta(name=name, namespace=ns),
        spec=ResourceClaimTemplateSpec(
            metadata=ObjectMeta(labels=dict(labels or {}), annotations=dict(annotations or {})),
            spec=spec(*requests)))


def claim(name: str, *requests: DeviceRequest, ns: str = NS, uid: str | None = None,
          allocated: Sequence[tuple[str, str]] = (), on: str | None = None,
          reserved_for: Iterable[str] = ()) -> ResourceClaim:
    """A user claim; ``allocated`` (pool, device) pairs of DRIVER make it allocated,
    ``on`` pins that allocation to a node, ``reserved_for`` lists consumer pod UIDs."""
    status = ResourceClaimStatus()
    if allocated:
        selector = None
        if on is not None:
            selector = NodeSelector(node_selector_terms=[NodeSelectorTerm(match_fields=[
                NodeSelectorRequirement(key="metadata.name", operator="In", values=[on])])])
        results = [DeviceRequestAllocationResult(request="gpu", driver=DRIVER, pool=p, device=d)
                   for p, d in allocated]
        status = ResourceClaimStatus(
            allocation=AllocationResult(devices=DeviceAllocationResult(results=results),
                                        node_selector=selector),
            reserved_for=[ResourceClaimConsumerReference(resource="pods", name=f"p-{u}", uid=u)
                          for u in reserved_for])
    return ResourceClaim(api_version="resource.k8s.io/v1", kind="ResourceClaim",
                         metadata=ObjectMeta(name=name, namespace=ns, uid=uid or f"uid-{name}"),
                         spec=spec(*requests), status=status)


def container(name: str = "ctr", claims: Sequence[str] = (),
              requests: Mapping[str, str | int] | None = None) -> Container:
    reqs = {k: q(v) for k, v in (requests or {}).items()}
    return Container(name=name, resources=ResourceRequirements(
        requests=reqs, claims=[ContainerResourceClaim(name=c) for c in claims]))


def pod(name: str, *, ns: str = NS, uid: str | None = None,
        templates: Mapping[str, str] | None = None, claims: Mapping[str, str] | None = None,
        containers: Sequence[Container] | None = None,
        init_containers: Sequence[Container] = (), priority: int | None = None,
        nodes: Sequence[str] | None = None) -> Pod:
    """A pending pod. ``templates``/``claims``: entry name -> template / claim name.
    ``nodes``: required node affinity to these node names (by hostname label)."""
    entries = [PodResourceClaim(name=e, resource_claim_template_name=t)
               for e, t in (templates or {}).items()]
    entries += [PodResourceClaim(name=e, resource_claim_name=c) for e, c in (claims or {}).items()]
    affinity = None
    if nodes is not None:
        affinity = Affinity(node_affinity=NodeAffinity(
            required_during_scheduling_ignored_during_execution=NodeSelector(node_selector_terms=[
                NodeSelectorTerm(match_expressions=[NodeSelectorRequirement(
                    key="kubernetes.io/hostname", operator="In", values=list(nodes))])])))
    ctrs = list(containers) if containers is not None else [
        container(claims=[e.name for e in entries])]
    return Pod(api_version="v1", kind="Pod",
               metadata=ObjectMeta(name=name, namespace=ns, uid=uid),
               spec=PodSpec(containers=ctrs, init_containers=list(init_containers),
                            resource_claims=entries, priority=priority, affinity=affinity))


def cluster(nodes: Sequence[Node] = (), slices: Sequence[ResourceSlice] = (),
            classes: Sequence[DeviceClass] = (gpu_class(),),
            templates: Sequence[ResourceClaimTemplate] = (),
            claims: Sequence[ResourceClaim] = (), gates: FeatureGates | None = None
            ) -> ClusterState:
    state = ClusterState(features=gates or FeatureGates())
    for n in nodes:
        state.add_node(n)
    for s in slices:
        state.put_slice(s)
    for c in classes:
        state.add_class(c)
    for t in templates:
        state.add_template(t)
    for c in claims:
        state.add_claim(c)
    return state


def gpu_nodes(count: int, per_node: int, *, labels: bool = True
              ) -> tuple[list[Node], list[ResourceSlice]]:
    names = [f"node-{i}" for i in range(count)]
    nodes = [node(n, {"kubernetes.io/hostname": n} if labels else None) for n in names]
    return nodes, [gpus(n, per_node) for n in names]


@dataclass
class Attempt:
    """What one scheduling cycle did."""

    node: str | None
    statuses: dict[str, Status] = field(default_factory=dict)
    waiting: Status | None = None
    pre_filter: Status | None = None
    post_filter: Status | None = None
    scores: dict[str, int] = field(default_factory=dict)
    state: CycleState | None = None


class Harness:
    """DynamicResources (plus optional filters) driven through single cycles."""

    def __init__(self, state: ClusterState, *, seed: int = 1,
                 args: Mapping[str, Any] | None = None,
                 filters: Sequence[Any] = ()) -> None:
        self.cluster = state
        self.handle = Handle(state, state.features, random.Random(seed), "default-scheduler")
        self.plugin = DynamicResources(dict(args or {}), self.handle)
        # ``filters`` are factories (args, handle) -> plugin, e.g. NodeAffinity.create.
        self.filters: list[Any] = [f({}, self.handle) for f in filters]

    def add(self, p: Pod) -> PodInfo:
        return self.cluster.add_pod(p)

    def schedule(self, info: PodInfo | Pod) -> Attempt:
        if isinstance(info, Pod):
            info = self.add(info)
        plugin, cluster = self.plugin, self.cluster
        waiting = plugin.pre_enqueue(info)
        if not waiting.is_success():
            return Attempt(None, waiting=waiting)
        state = CycleState()
        for f in self.filters:
            pre = getattr(f, "pre_filter", None)
            if pre is not None:
                _, status = pre(state, info, cluster)
                if status.is_skip():
                    state.skip_filter.add(f.name)
        _, status = plugin.pre_filter(state, info, cluster)
        if status.is_skip():
            state.skip_filter.add(NAME)
        elif not status.is_success():
            return Attempt(None, pre_filter=status, state=state)
        feasible: list[NodeInfo] = []
        statuses: dict[str, Status] = {}
        checks = [f for f in self.filters if f.name not in state.skip_filter]
        if NAME not in state.skip_filter:
            checks.append(plugin)
        for n in cluster.node_infos():
            for f in checks:
                result = f.filter(state, info, n)
                if not result.is_success():
                    statuses[n.name] = result
                    break
            else:
                feasible.append(n)
        if not feasible:
            _, post = plugin.post_filter(state, info, cluster, statuses)
            return Attempt(None, statuses, post_filter=post, state=state)
        listed = []
        for n in feasible:
            value, status = plugin.score(state, info, n)
            assert status.is_success(), status
            listed.append(NodeScore(n.name, value))
        plugin.normalize_score(state, info, listed)
        scores = {s.name: s.score for s in listed}
        best = max(feasible, key=lambda n: scores[n.name])  # ties: first in node order
        status = plugin.reserve(state, info, best.name)
        if not status.is_success():
            plugin.unreserve(state, info, best.name)
            return Attempt(None, statuses, pre_filter=status, state=state)
        status = plugin.pre_bind(state, info, best.name)
        assert status.is_success(), status
        cluster.bind_pod(info, best.name)
        return Attempt(best.name, statuses, scores=scores, state=state)


def devices_of(c: ResourceClaim) -> list[tuple[str, str]]:
    """(pool, device) of every allocated device of ``c``."""
    assert c.status.allocation is not None, c.metadata.name
    return [(r.pool, r.device) for r in c.status.allocation.devices.results]


def claims_of(state: ClusterState, p: PodInfo) -> list[ResourceClaim]:
    """The claims generated for ``p`` (from its status), in entry order."""
    namespace = p.pod.metadata.namespace or NS
    out = []
    for s in p.pod.status.resource_claim_statuses:
        assert s.resource_claim_name is not None
        out.append(state.claims[f"{namespace}/{s.resource_claim_name}"])
    return out
