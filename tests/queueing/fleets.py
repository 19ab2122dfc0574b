"""Real-shaped fleets and GPU pods for placement tests: H100 nodes from ``dralab.fleet``
(8 GPUs each, published through the NVIDIA DRA driver's ResourceSlices, with the
fleet's block/rack labels) and pods whose claim template asks for N GPUs."""

from __future__ import annotations

from collections.abc import Mapping

from dralab.api.base import ObjectMeta
from dralab.api.core import (
    Container,
    ContainerResourceClaim,
    Pod,
    PodResourceClaim,
    PodSpec,
    ResourceRequirements,
)
from dralab.api.quantity import parse_quantity
from dralab.api.resource import (
    DeviceClaim,
    DeviceRequest,
    ExactDeviceRequest,
    ResourceClaimSpec,
    ResourceClaimTemplate,
    ResourceClaimTemplateSpec,
)
from dralab.cluster import ClusterState
from dralab.controllers.snapshotbuild import build_cluster
from dralab.fleet import generate, parse_fleet

NS = "team-a"
BLOCK = "dralab.dev/topology-block"
RACK = "dralab.dev/topology-rack"
HOST = "kubernetes.io/hostname"
GPU_CLASS = "gpu.nvidia.com"


def gpu_template(gpus: int) -> ResourceClaimTemplate:
    return ResourceClaimTemplate(
        api_version="resource.k8s.io/v1", kind="ResourceClaimTemplate",
        metadata=ObjectMeta(name=f"gpus-{gpus}", namespace=NS),
        spec=ResourceClaimTemplateSpec(spec=ResourceClaimSpec(devices=DeviceClaim(requests=[
            DeviceRequest(name="gpus", exactly=ExactDeviceRequest(
                device_class_name=GPU_CLASS, allocation_mode="ExactCount", count=gpus))]))))


def h100_cluster(nodes: int, nodes_per_rack: int = 0, racks_per_block: int = 0,
                 templates: tuple[int, ...] = (8, 4)) -> ClusterState:
    """``nodes`` H100 nodes (8 GPUs each) and claim templates ``gpus-N``."""
    fleet = parse_fleet({
        "apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet", "metadata": {"name": "t"},
        "spec": {"pools": [{
            "name": "h100", "count": nodes, "namePrefix": "h100-", "cpu": "192",
            "memory": "2Ti", "gpu": {"model": "h100-80gb-sxm", "count": 8},
            "topology": {"nodesPerRack": nodes_per_rack, "racksPerBlock": racks_per_block}}]}},
        "fleet.yaml")
    objects = [*generate(fleet, 1).objects(), *(gpu_template(n) for n in templates)]
    cluster, _ = build_cluster(objects)
    return cluster


def gpu_pod(name: str, gpus: int = 8, *, cpu: str = "8", labels: Mapping[str, str] | None = None,
            annotations: Mapping[str, str] | None = None,
            node_selector: Mapping[str, str] | None = None,
            scheduler_name: str | None = None) -> Pod:
    """A pending pod whose claim is made from the ``gpus-N`` template."""
    return Pod(api_version="v1", kind="Pod",
               metadata=ObjectMeta(name=name, namespace=NS, labels=dict(labels or {}),
                                   annotations=dict(annotations or {})),
               spec=PodSpec(
                   containers=[Container(name="main", resources=ResourceRequirements(
                       requests={"cpu": parse_quantity(cpu)},
                       claims=[ContainerResourceClaim(name="gpus")]))],
                   resource_claims=[PodResourceClaim(name="gpus",
                                                     resource_claim_template_name=f"gpus-{gpus}")],
                   node_selector=dict(node_selector or {}),
                   scheduler_name=scheduler_name))


def contents(cluster: ClusterState) -> object:
    """What the store holds, for before/after comparisons (not versions or events)."""
    return (
        {k: (p.pod, p.assumed_node) for k, p in cluster.pods.items()},
        dict(cluster.claims),
        {n: ([p.key for p in info.pods], dict(info.requested)) for n, info in
         cluster.nodes.items()},
        cluster.slices,
    )
