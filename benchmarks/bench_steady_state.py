"""Scheduler throughput in upstream's steady-state DRA shapes (issue 15, item 4).

kube-scheduler's scheduler_perf (test/integration/scheduler_perf/dra,
``SteadyStateClusterResourceClaimTemplate``): 500 nodes, each with one
ResourceSlice of 10 devices (pool = node name) of driver
``test-driver.cdi.k8s.io``; ``initClaims`` claims allocated before the measurement
(empty: 0, half: 2,500, full: 4,990 of the 5,000 devices); then pods from a
ResourceClaimTemplate come 10 at a time: created, scheduled, deleted (their claims
with them), again, so the cluster stays at the same level of use. Here the
allocated claims fill the nodes in name order, device by device (what allocating
them one by one with a first-fit allocator does), and a run is ``--pods`` pods.

Claim templates (``--shape``):
* ``plain``: one request of one device of the class (upstream's template);
* ``cel``: the same request with a CEL selector on a device attribute;
* ``match``: two requests of one device each with a ``matchAttribute``
  constraint on an attribute every device of a node shares.

Prints pods per second (pods created, scheduled and deleted, claims included)
per shape and level; upstream's figures for these shapes (perf-dash,
``SchedulingThroughput``) are around 75-81 pods/s, and for the 5,000-pods fill
(bench_scheduler.py / bench_dra_schedule.py) about 250-320 pods/s, with 711
pods/s reported for a 1.37 queueing change.

    python benchmarks/bench_steady_state.py [--nodes 500] [--pods 2000]
        [--shape plain|cel|match ...] [--level empty|half|full ...]
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path
from typing import Any

from dralab.api.base import KubeObject
from dralab.api.codec import decode
from dralab.scheduler import Scheduler, build_cluster

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scheduler import CLASS, DRIVER, device_class, node, node_slice

DEVICES_PER_NODE = 10
PODS_PER_ROUND = 10
LEVELS = {"empty": 0.0, "half": 0.5, "full": None}  # full: all devices but 10
SHAPES = ("plain", "cel", "match")


def template(shape: str) -> KubeObject:
    request: dict[str, Any] = {"name": "req-0", "exactly": {"deviceClassName": CLASS}}
    devices: dict[str, Any] = {"requests": [request]}
    if shape == "cel":
        request["exactly"]["selectors"] = [{"cel": {
            "expression": f'device.attributes["{DRIVER}"].model == "A100"'}}]
    elif shape == "match":
        devices["requests"] = [request, {"name": "req-1",
                                         "exactly": {"deviceClassName": CLASS}}]
        devices["constraints"] = [{"requests": ["req-0", "req-1"],
                                   "matchAttribute": f"{DRIVER}/family"}]
    return decode({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                   "metadata": {"name": "steady", "namespace": "test"},
                   "spec": {"spec": {"devices": devices}}})


def allocated_claim(i: int, node_name: str, device: str) -> KubeObject:
    return decode({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": f"init-{i:05d}", "namespace": "init", "uid": f"init-{i}"},
        "spec": {"devices": {"requests": [{"name": "req-0",
                                           "exactly": {"deviceClassName": CLASS}}]}},
        "status": {"allocation": {
            "devices": {"results": [{"request": "req-0", "driver": DRIVER,
                                     "pool": node_name, "device": device}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{
                "key": "metadata.name", "operator": "In", "values": [node_name]}]}]}}},
    })


def steady_pod(i: int) -> KubeObject:
    return decode({"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": f"pod-{i:06d}", "namespace": "test", "uid": f"uid-{i}"},
                   "spec": {"containers": [{
                       "name": "main", "image": "pause",
                       "resources": {"requests": {"cpu": "100m", "memory": "128Mi"},
                                     "claims": [{"name": "dev"}]}}],
                       "resourceClaims": [{"name": "dev",
                                           "resourceClaimTemplateName": "steady"}]}})


def init_claims(nodes: int, level: str) -> int:
    total = nodes * DEVICES_PER_NODE
    share = LEVELS[level]
    return total - PODS_PER_ROUND if share is None else int(total * share)


def run(nodes: int, shape: str, level: str, pods: int) -> tuple[float, int, int]:
    """(seconds for ``pods`` pods in rounds of 10, pods placed, claims allocated before)."""
    names = [f"scheduler-perf-dra-{i:05d}" for i in range(nodes)]
    objects: list[KubeObject] = [node(n, 0) for n in names]
    objects += [device_class(), template(shape)]
    objects += [node_slice(n, DEVICES_PER_NODE) for n in names]
    claims = init_claims(nodes, level)
    objects += [allocated_claim(i, names[i // DEVICES_PER_NODE],
                                f"instance-{i % DEVICES_PER_NODE}") for i in range(claims)]
    cluster, _ = build_cluster(objects)
    scheduler = Scheduler.build(cluster)
    made = [steady_pod(i) for i in range(pods)]
    gc.collect()
    placed = 0
    start = time.process_time()
    for first in range(0, pods, PODS_PER_ROUND):
        batch = [cluster.add_pod(p) for p in made[first:first + PODS_PER_ROUND]]  # type: ignore[arg-type]
        scheduler.run(batch)
        placed += sum(1 for info in batch if info.assumed_node is not None
                      or info.pod.spec.node_name)
        for info in batch:
            scheduler.delete_pod(info.key)
    return time.process_time() - start, placed, claims


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=2000, help="pods per shape and level")
    parser.add_argument("--shape", action="append", choices=SHAPES)
    parser.add_argument("--level", action="append", choices=list(LEVELS))
    args = parser.parse_args(argv)
    print(f"steady state: {args.nodes} nodes x {DEVICES_PER_NODE} devices, pods in rounds of "
          f"{PODS_PER_ROUND} (created, scheduled, deleted); process CPU time")
    print(f"{'shape':<6} {'level':<6} {'allocated':>9} {'pods':>6} {'placed':>6} "
          f"{'seconds':>8} {'pods/s':>8}")
    for shape in args.shape or SHAPES:
        for level in args.level or list(LEVELS):
            seconds, placed, claims = run(args.nodes, shape, level, args.pods)
            print(f"{shape:<6} {level:<6} {claims:>9} {args.pods:>6} {placed:>6} "
                  f"{seconds:>8.2f} {args.pods / seconds:>8.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
