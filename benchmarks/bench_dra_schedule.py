"""End-to-end DRA scheduling benchmark: the default profile fills a GPU cluster.

Cluster: ``--nodes`` nodes (default 500), each publishing one ResourceSlice of
``--gpus`` whole GPUs (default 10) of driver ``gpu.example.com``, pool = node
name; one DeviceClass ``gpu``; one ResourceClaimTemplate asking for one GPU.
Pods: ``--pods`` (default 5,000) pods, each with one template claim and 100m
cpu. Runs ``Scheduler.run`` (PreEnqueue creates the claims, DynamicResources
allocates them) and prints pods per second, target >= 350, plus the DRA
plugin's outcome-cache hits. Also runs the same pods without claims, for the
framework's own cost. ``--policy pack`` uses the pack device policy.

    python benchmarks/bench_dra_schedule.py [--nodes N] [--gpus G] [--pods P]
"""

from __future__ import annotations

import argparse
import gc
import time

from dralab.api.base import ObjectMeta
from dralab.api.core import (
    Container,
    ContainerResourceClaim,
    Node,
    NodeStatus,
    Pod,
    PodResourceClaim,
    PodSpec,
    ResourceRequirements,
)
from dralab.api.quantity import parse_quantity
from dralab.api.resource import (
    CELDeviceSelector,
    Device,
    DeviceAttribute,
    DeviceClaim,
    DeviceClass,
    DeviceClassSpec,
    DeviceRequest,
    DeviceSelector,
    ExactDeviceRequest,
    ResourceClaimSpec,
    ResourceClaimTemplate,
    ResourceClaimTemplateSpec,
    ResourcePool,
    ResourceSlice,
    ResourceSliceSpec,
)
from dralab.cluster import ClusterState
from dralab.scheduler.scheduler import Scheduler

TARGET = 350.0
DRIVER = "gpu.example.com"


def build(nodes: int, gpus: int, pods: int, claims: bool) -> ClusterState:
    state = ClusterState()
    alloc = {"cpu": parse_quantity("64"), "memory": parse_quantity("256Gi"),
             "pods": parse_quantity("110")}
    for n in range(nodes):
        name = f"node-{n}"
        state.add_node(Node(metadata=ObjectMeta(name=name, labels={
            "kubernetes.io/hostname": name}), status=NodeStatus(allocatable=alloc)))
        state.put_slice(ResourceSlice(
            metadata=ObjectMeta(name=f"{name}-gpus"),
            spec=ResourceSliceSpec(driver=DRIVER, node_name=name,
                                   pool=ResourcePool(name=name, generation=1,
                                                     resource_slice_count=1),
                                   devices=[Device(name=f"gpu-{i}", attributes={
                                       "model": DeviceAttribute(string="a100")})
                                       for i in range(gpus)])))
    state.add_class(DeviceClass(metadata=ObjectMeta(name="gpu"), spec=DeviceClassSpec(
        selectors=[DeviceSelector(cel=CELDeviceSelector(
            expression=f'device.driver == "{DRIVER}"'))])))
    state.add_template(ResourceClaimTemplate(
        metadata=ObjectMeta(name="one-gpu", namespace="default"),
        spec=ResourceClaimTemplateSpec(spec=ResourceClaimSpec(devices=DeviceClaim(requests=[
            DeviceRequest(name="gpu", exactly=ExactDeviceRequest(
                device_class_name="gpu", allocation_mode="ExactCount", count=1))])))))
    for i in range(pods):
        entries = [PodResourceClaim(name="gpu", resource_claim_template_name="one-gpu")]
        state.add_pod(Pod(metadata=ObjectMeta(name=f"pod-{i}", namespace="default"),
                          spec=PodSpec(
            containers=[Container(name="c", resources=ResourceRequirements(
                requests={"cpu": parse_quantity("100m")},
                claims=[ContainerResourceClaim(name="gpu")] if claims else []))],
            resource_claims=entries if claims else [])))
    return state


def run(nodes: int, gpus: int, pods: int, claims: bool, policy: str) -> tuple[float, int, str]:
    state = build(nodes, gpus, pods, claims)
    config = None
    if policy != "first-fit":
        config = {"apiVersion": "kubescheduler.config.k8s.io/v1",
                  "kind": "KubeSchedulerConfiguration",
                  "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
                      {"name": "DynamicResources", "args": {"devicePolicy": policy}}]}]}
    gc.collect()
    start = time.perf_counter()
    scheduler = Scheduler.build(state, config, seed=1)
    result = scheduler.run()
    elapsed = time.perf_counter() - start
    extra = ""
    framework = next(iter(scheduler.frameworks.values()))
    dra = framework.plugins.get("DynamicResources")
    cache = getattr(dra, "cache", None)
    if claims and cache is not None:
        extra = f", outcome cache {cache.total_hits} hits / {cache.misses} searches"
    return elapsed, len(result.placed), extra


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--gpus", type=int, default=10)
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--policy", default="first-fit")
    args = parser.parse_args()
    for claims in (True, False):
        elapsed, placed, extra = run(args.nodes, args.gpus, args.pods, claims, args.policy)
        label = "one-GPU claim per pod" if claims else "no claims (framework only)"
        rate = args.pods / elapsed
        verdict = ""
        if claims:
            verdict = f" (target >= {TARGET:.0f}: {'met' if rate >= TARGET else 'MISSED'})"
        print(f"{label}: {args.pods} pods on {args.nodes} nodes x {args.gpus} GPUs, "
              f"{placed} placed in {elapsed:.2f} s = {rate:.0f} pods/s{verdict}{extra}")


if __name__ == "__main__":
    main()
