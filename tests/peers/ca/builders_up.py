"""Builders for Cluster Autoscaler's scale-up tables, ported: nodes, pods, slices and
claims as plain documents shaped like CA's test helpers (utils/test: BuildTestNode,
BuildTestPod; the DRA test's slice and claim helpers), and runners that give them to
dralab's model the way CA's tests give them to its estimator and orchestrator.

``UPSTREAM`` is the kubernetes/autoscaler tree every ported case cites."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dralab.api.codec import decode
from dralab.api.core import Node, Pod
from dralab.api.resource import ResourceClaim, ResourceSlice
from dralab.autoscale import AutoscalerOptions, ClusterAutoscaler, Estimate, LoopDecisions
from dralab.autoscale.estimator import estimate
from dralab.autoscale.groups import NodeExample, TemplateNodes, node_groups, pool_sizes
from dralab.autoscale.units import pod_units
from dralab.fleet import generate, parse_fleet
from dralab.scheduler import Scheduler, build_cluster
from dralab.scheduler.result import REASON_UNSCHEDULABLE

Doc = dict[str, Any]

UPSTREAM = ("kubernetes/autoscaler cluster-autoscaler-release-1.37 "
            "a16f0ae8b5578f09604371c75e0cad29ed794e59")
POOL_LABEL = "dralab.dev/pool"
MIB = 1024 * 1024


def node(name: str, cpu_m: int, mem: int, pods: int = 110, group: str | None = None,
         labels: Mapping[str, str] | None = None, gpu: int = 0,
         taints: Sequence[Doc] = ()) -> Doc:
    """BuildTestNode / makeNode: capacity = allocatable; ``mem`` in bytes; ``gpu``:
    nvidia.com/gpu as CA's test nodes carry it (with its taint-free GPU label)."""
    capacity: Doc = {"cpu": f"{cpu_m}m", "memory": str(mem), "pods": str(pods)}
    meta_labels = {"kubernetes.io/hostname": name, **(labels or {})}
    if gpu:
        capacity["nvidia.com/gpu"] = str(gpu)
        meta_labels["cloud.google.com/gke-accelerator"] = "nvidia-tesla-k80"
    if group:
        meta_labels[POOL_LABEL] = group
    spec: Doc = {"taints": list(taints)} if taints else {}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": meta_labels},
            "spec": spec, "status": {"capacity": capacity, "allocatable": dict(capacity)}}


def pod(name: str, cpu_m: int = 0, mem: int = 0, node_name: str | None = None,
        labels: Mapping[str, str] | None = None, namespace: str = "default",
        gpu: int = 0, owner: str | None = "rs", claims: Sequence[Doc] = (),
        tolerate_gpu: bool = False, daemon_set: str | None = None,
        claim_statuses: Sequence[Doc] = ()) -> Doc:
    """BuildTestPod: one container requesting ``cpu_m`` millicores and ``mem`` bytes;
    owned by ReplicaSet ``owner`` (CA's test pods are replicated unless said not).
    ``claims``: spec.resourceClaims entries (the container uses them all)."""
    requests: Doc = {}
    if cpu_m:
        requests["cpu"] = f"{cpu_m}m"
    if mem:
        requests["memory"] = str(mem)
    container: Doc = {"name": "c", "image": "busybox", "resources": {"requests": requests}}
    if gpu:
        container["resources"]["requests"]["nvidia.com/gpu"] = str(gpu)
        container["resources"]["limits"] = {"nvidia.com/gpu": str(gpu)}
    spec: Doc = {"containers": [container]}
    if claims:
        spec["resourceClaims"] = list(claims)
        container["resources"]["claims"] = [{"name": c["name"]} for c in claims]
    if tolerate_gpu:
        spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists"}]
    if node_name:
        spec["nodeName"] = node_name
    meta: Doc = {"name": name, "namespace": namespace, "uid": name}
    if labels:
        meta["labels"] = dict(labels)
    if daemon_set:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet",
                                    "name": daemon_set, "uid": f"uid-ds-{daemon_set}",
                                    "controller": True}]
    elif owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                    "name": owner, "uid": f"uid-rs-{owner}",
                                    "controller": True}]
    doc: Doc = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    status: Doc = {}
    if node_name:
        status["phase"] = "Running"
    if claim_statuses:
        status["resourceClaimStatuses"] = list(claim_statuses)
    if status:
        doc["status"] = status
    return doc


def fleet(groups: Mapping[str, Mapping[str, Any]]) -> Doc:
    """A Fleet whose pools are CA's node groups: ``groups[name]`` = {min, max, cpu,
    memory, pods, priority, price}; the nodes themselves are given as Node objects
    labelled with the pool (the Fleet only makes a template for a group with none)."""
    pools = []
    for name, g in groups.items():
        pools.append({"name": name, "count": 0, "cpu": g.get("cpu", "1"),
                      "memory": g.get("memory", "1Gi"), "pods": g.get("pods", 110),
                      "autoscaling": {"min": g.get("min", 0), "max": g.get("max", 10),
                                      "pricePerHour": g.get("price", 1.0),
                                      "provisioningDelay": "0s",
                                      "priority": g.get("priority", 0)}})
    return {"apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet",
            "metadata": {"name": "ca"}, "spec": {"pools": pools}}


@dataclass
class ProviderTemplate:
    """What a test's cloud provider gives as a group's TemplateNodeInfo."""

    node: Doc
    slices: Sequence[Doc] = ()
    pods: Sequence[Doc] = ()
    claims: Sequence[Doc] = ()

    def example(self) -> NodeExample:
        n = decode(self.node)
        assert isinstance(n, Node)
        slices = tuple(s for s in (decode(d) for d in self.slices)
                       if isinstance(s, ResourceSlice))
        pods = tuple(p for p in (decode(d) for d in self.pods) if isinstance(p, Pod))
        claims = tuple(c for c in (decode(d) for d in self.claims)
                       if isinstance(c, ResourceClaim))
        return NodeExample(n, slices, pods, claims, from_provider=True)


@dataclass
class Loop:
    """One CA loop over the documents, as ``dralab autoscale`` runs it: the pending pods
    are first scheduled on the existing nodes, the rest go to the model."""

    fleet_doc: Doc
    docs: Sequence[Doc]
    options: AutoscalerOptions = field(default_factory=AutoscalerOptions)
    templates: Mapping[str, ProviderTemplate] = field(default_factory=dict)
    daemon_sets: Sequence[Doc] = ()
    # False: the pending pods go to the orchestrator as they are (upstream calls
    # ScaleUp with them directly), not first tried on the existing nodes.
    schedule_first: bool = True

    def run(self) -> LoopDecisions:
        the_fleet = parse_fleet(self.fleet_doc, "fleet.yaml")
        objects = [*generate(the_fleet).classes, *(decode(d) for d in self.docs)]
        cluster, pending = build_cluster(objects)
        scheduler = Scheduler.build(cluster, None, 0)
        waiting = []
        if not self.schedule_first:
            waiting = list(pending)
        else:
            result = scheduler.run(pending)
            for item in result.unplaced:
                key = f"{item.pod.metadata.namespace or 'default'}/{item.pod.metadata.name}"
                info = cluster.pods.get(key)
                if item.reason == REASON_UNSCHEDULABLE and info is not None:
                    waiting.append(info)
        daemon_sets = tuple(decode(d) for d in self.daemon_sets)
        model = ClusterAutoscaler(
            scheduler, the_fleet, self.options, daemon_sets=daemon_sets,  # type: ignore[arg-type]
            provider_templates={k: t.example() for k, t in self.templates.items()})
        return model.loop(waiting, 0.0)


def estimate_on(cluster_docs: Iterable[Doc], template: Doc, pending: Sequence[Doc],
                max_nodes: int = 0, fastpath: bool = False) -> Estimate:
    """CA's estimator test: ``Estimate(pods, template)`` on a snapshot of
    ``cluster_docs``, the pods not scheduled anywhere first; group "ng" (max 1000)."""
    the_fleet = parse_fleet(fleet({"ng": {"max": 1000}}), "fleet.yaml")
    docs = [*cluster_docs, *pending]
    cluster, waiting = build_cluster([decode(d) for d in docs])
    scheduler = Scheduler.build(cluster, None, 0)
    groups = node_groups(the_fleet, pool_sizes(the_fleet, (i.node for i in cluster.nodes.values())))
    example = ProviderTemplate(copy.deepcopy(template)).example()
    templates = TemplateNodes(the_fleet, {}, cluster.node_names(), None, {"ng": example})
    units = pod_units(waiting)
    return estimate(scheduler, templates, groups["ng"], units, max_nodes=max_nodes,
                    measures=(), fastpath=fastpath)


def scale_ups(decisions: LoopDecisions) -> dict[str, int]:
    out: dict[str, int] = {}
    for up in decisions.scale_ups:
        out[up.pool] = out.get(up.pool, 0) + up.add
    return out


def pod_names(keys: Iterable[str]) -> list[str]:
    return sorted(k.partition("/")[2] for k in keys)


@dataclass(frozen=True)
class NodeConfig:
    """orchestrator_test.go's NodeConfig (memory in bytes; group "" is no node group)."""

    name: str
    cpu: int
    memory: int
    gpu: int = 0
    group: str = ""


@dataclass(frozen=True)
class PodConfig:
    """orchestrator_test.go's PodConfig."""

    name: str
    cpu: int
    memory: int = 0
    gpu: int = 0
    node: str = ""
    tolerates_gpu: bool = False


GPU_TAINT: Doc = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


def config_node(n: NodeConfig) -> Doc:
    """buildTestNode: BuildTestNode, plus AddGpusToNode (capacity and the GPU taint)."""
    return node(n.name, n.cpu, n.memory, 100, group=n.group or None, gpu=n.gpu,
                taints=[GPU_TAINT] if n.gpu else ())


def config_pod(p: PodConfig) -> Doc:
    """buildTestPod: BuildTestPod (no owner), RequestGpuForPod, TolerateGpuForPod."""
    return pod(p.name, p.cpu, p.memory, node_name=p.node or None, gpu=p.gpu, owner=None,
               tolerate_gpu=p.tolerates_gpu)


@dataclass
class ScaleUpTest:
    """runSimpleScaleUpTest: node groups of the nodes' groups (min 1, max 10 unless
    ``groups`` says), ``templates`` for groups without nodes (NodeTemplateConfigs),
    ``choose``: the (group, size) the mock expander picks (None: the configured one).
    ``options`` records the options the expander saw first (as LastInputOptions)."""

    nodes: Sequence[NodeConfig]
    pods: Sequence[PodConfig]
    extra_pods: Sequence[PodConfig]
    choose: tuple[str, int] | None = None
    options: AutoscalerOptions = field(default_factory=AutoscalerOptions)
    groups: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    templates: Mapping[str, NodeConfig] = field(default_factory=dict)
    seen: list[tuple[str, int]] = field(default_factory=list)
    schedule_first: bool = True  # as ``Loop.schedule_first``

    def run(self, monkeypatch: Any) -> LoopDecisions:
        import dralab.autoscale.clusterautoscaler as ca

        real_choose = ca.choose
        calls = 0

        def mock_choose(name: str, options: Sequence[Estimate], rng: Any,
                        priorities: Any = None) -> Estimate:
            nonlocal calls
            calls += 1
            if calls == 1:
                self.seen[:] = [(o.group.name, o.node_count) for o in options]
                if self.choose is not None:
                    picked = [o for o in options
                              if (o.group.name, o.node_count) == self.choose]
                    assert picked, f"did not find expansionOptionToChoose {self.choose}"
                    return picked[0]
            return real_choose(name, options, rng, priorities)

        monkeypatch.setattr(ca, "choose", mock_choose)
        names = {n.group for n in self.nodes if n.group} | set(self.groups) | set(self.templates)
        groups = {}
        for name in sorted(names):
            low, high = self.groups.get(name, (1, 10))
            groups[name] = {"min": low, "max": high, "cpu": "1", "memory": "1Gi"}
        docs = [*(config_node(n) for n in self.nodes), *(config_pod(p) for p in self.pods),
                *(config_pod(p) for p in self.extra_pods)]
        templates = {name: ProviderTemplate(config_node(n)) for name, n in self.templates.items()}
        return Loop(fleet(groups), docs, self.options, templates,
                    schedule_first=self.schedule_first).run()
