"""Placement-check benchmark: can a 64-pod set be placed on a 1,000-node H100 fleet?

Fleet: ``--nodes`` H100 nodes from ``dralab.fleet`` (8 GPUs each, NVIDIA DRA driver
slices), 16 nodes per rack and 8 racks per block; a quarter of the nodes already
run one 4-GPU pod. The pod set: ``--pods`` pods, each with a claim template asking
for ``--gpus`` GPUs (default 8, a whole node). Timed, each on a fork that is
reverted (``place_pod_sets``) unless said otherwise:

* the whole-set check without topology (it fits);
* the same check for a set one pod larger than the free whole nodes (it fails at
  the last pod);
* ``commit_pod_sets`` of the set (kept);
* required block and preferred rack (Kueue TAS, BestFit), on the original fleet.

    python benchmarks/bench_placement.py [--nodes N] [--pods P] [--gpus G]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

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
from dralab.controllers.snapshotbuild import build_cluster
from dralab.fleet import generate, parse_fleet
from dralab.queueing.model import NodeTopology, TopologyRequest
from dralab.queueing.placement import GangFailure, commit_pod_sets, place_pod_sets
from dralab.scheduler.scheduler import Scheduler

NS = "bench"
BLOCK = "dralab.dev/topology-block"
RACK = "dralab.dev/topology-rack"
TOPOLOGY = NodeTopology("default", (BLOCK, RACK, "kubernetes.io/hostname"))


def template(gpus: int) -> ResourceClaimTemplate:
    return ResourceClaimTemplate(
        metadata=ObjectMeta(name=f"gpus-{gpus}", namespace=NS),
        spec=ResourceClaimTemplateSpec(spec=ResourceClaimSpec(devices=DeviceClaim(requests=[
            DeviceRequest(name="gpus", exactly=ExactDeviceRequest(
                device_class_name="gpu.nvidia.com", allocation_mode="ExactCount",
                count=gpus))]))))


def pod(name: str, gpus: int, node_selector: dict[str, str] | None = None) -> Pod:
    return Pod(metadata=ObjectMeta(name=name, namespace=NS), spec=PodSpec(
        containers=[Container(name="main", resources=ResourceRequirements(
            requests={"cpu": parse_quantity("8")}, claims=[ContainerResourceClaim(name="g")]))],
        resource_claims=[PodResourceClaim(name="g", resource_claim_template_name=f"gpus-{gpus}")],
        node_selector=node_selector or {}))


def fleet_scheduler(nodes: int) -> Scheduler:
    fleet = parse_fleet({
        "apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet", "metadata": {"name": "bench"},
        "spec": {"pools": [{"name": "h100", "count": nodes, "namePrefix": "h100-",
                            "cpu": "192", "memory": "2Ti",
                            "gpu": {"model": "h100-80gb-sxm", "count": 8},
                            "topology": {"nodesPerRack": 16, "racksPerBlock": 8}}]}}, "bench")
    cluster, _ = build_cluster([*generate(fleet, 1).objects(), template(4), template(8)])
    scheduler = Scheduler.build(cluster, seed=1)
    busy = [pod(f"busy-{i}", 4, {"kubernetes.io/hostname": name})
            for i, name in enumerate(list(cluster.nodes)[::4])]
    assert not isinstance(commit_pod_sets(scheduler, busy), GangFailure)
    return scheduler


def timed(label: str, fn: Callable[[], object], pods: int) -> None:
    start = time.perf_counter()
    outcome = fn()
    elapsed = time.perf_counter() - start
    verdict = "does not fit" if isinstance(outcome, GangFailure) else "placed"
    where = getattr(outcome, "domain", None)
    extra = f" in {where.level.rsplit('/', 1)[-1]} {where.name}" if where is not None else ""
    print(f"{label}: {pods} pods {verdict}{extra} in {elapsed * 1000:.0f} ms "
          f"({pods / elapsed:.0f} pods/s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=64)
    parser.add_argument("--gpus", type=int, default=8)
    args = parser.parse_args()
    start = time.perf_counter()
    scheduler = fleet_scheduler(args.nodes)
    print(f"fleet: {args.nodes} H100 nodes, {args.nodes // 4 + (args.nodes % 4 > 0)} busy, "
          f"built in {time.perf_counter() - start:.1f} s")
    pods = [pod(f"w-{i}", args.gpus) for i in range(args.pods)]
    free = sum(1 for info in scheduler.cluster.nodes.values() if not info.pods)
    too_many = [pod(f"w-{i}", 8) for i in range(free + 1)]
    timed("whole-set check", lambda: place_pod_sets(scheduler, pods), args.pods)
    timed("whole-set check, again", lambda: place_pod_sets(scheduler, pods), args.pods)
    timed(f"check of {free + 1} whole-node pods ({free} free nodes)",
          lambda: place_pod_sets(scheduler, too_many), free + 1)
    timed("required block (BestFit)", lambda: place_pod_sets(
        scheduler, pods, TOPOLOGY, TopologyRequest(BLOCK, required=True)), args.pods)
    timed("preferred rack (falls back to block)", lambda: place_pod_sets(
        scheduler, pods, TOPOLOGY, TopologyRequest(RACK)), args.pods)
    timed("commit", lambda: commit_pod_sets(scheduler, pods), args.pods)


if __name__ == "__main__":
    main()
