"""Cluster store benchmark (issue 11): node churn under the DRA plugin, and forks.

* **Node churn**: a fleet of A100 nodes with the NVIDIA driver's DynamicMIG
  (every MIG placement advertised: ~300 devices per node), generated with
  ``dralab.fleet``; pods asking for a 1g MIG device are scheduled until every
  node has been looked at. Then one node is removed and added back, several
  times: each change is timed together with the DynamicResources plugin's cache
  update (``AllocatorCache.refresh``), and so is the next pod's whole
  scheduling cycle. Target: <= 50 ms per change (before the store, ~10 s: the
  slice index was rebuilt and every remembered outcome dropped).
* **Forks**: ``fork()`` + 10 changes (a template node with its slices, pods added,
  assumed, bound and removed, a claim, a node removed) + ``revert()`` on fleets
  of 500, 1,000 and 5,000 nodes. Target: <= 10 ms, flat in fleet size. The
  first ``node_infos()`` after the revert is shown apart: a fork that changed
  the node set makes the next reader redo the snapshot order, O(nodes), as any
  node change does.

Prints figures; asserts nothing.

    python benchmarks/bench_store.py [--nodes 1000] [--sizes 500,1000,5000] [--only churn|fork]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from typing import Any

from dralab.api.base import KubeObject, ObjectMeta
from dralab.api.codec import decode
from dralab.api.core import Node, Pod
from dralab.api.quantity import parse_quantity
from dralab.api.resource import (
    Device,
    DeviceAttribute,
    DeviceCapacity,
    ResourceClaim,
    ResourcePool,
    ResourceSlice,
    ResourceSliceSpec,
)
from dralab.cluster import ClusterState
from dralab.fleet import generate, parse_fleet
from dralab.scheduler import Scheduler, build_cluster
from dralab.scheduler.plugins.dynamicresources.plugin import DynamicResources

CHURN_TARGET_MS = 50.0
FORK_TARGET_MS = 10.0
MIG_CLASS = "mig-1g"


def mig_fleet(nodes: int) -> list[KubeObject]:
    doc = {"apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet", "metadata": {"name": "mig"},
           "spec": {"seed": 0, "kubernetesVersion": "1.36",
                    "nvidia": {"driverVersion": "580.105.08", "cudaDriverVersion": "13.0"},
                    "deviceClasses": [{
                        "name": MIG_CLASS, "type": "mig",
                        "cel": "device.attributes['gpu.nvidia.com'].profile.startsWith('1g.')"}],
                    "pools": [{"name": "a100-mig", "count": nodes,
                               "namePrefix": "a100-mig-node-", "cpu": "128", "memory": "1Ti",
                               "gpu": {"model": "a100-40gb", "count": 8,
                                       "mig": {"mode": "dynamic"}}}]}}
    return list(generate(parse_fleet(doc, "<bench>"), seed=0).objects())


def mig_template() -> KubeObject:
    return decode({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                   "metadata": {"name": "mig", "namespace": "default"},
                   "spec": {"spec": {"devices": {"requests": [
                       {"name": "g", "exactly": {"deviceClassName": MIG_CLASS}}]}}}})


def mig_pod(i: int) -> Pod:
    pod = decode({"apiVersion": "v1", "kind": "Pod",
                  "metadata": {"name": f"p{i:06d}", "namespace": "default", "uid": f"u{i}"},
                  "spec": {"containers": [{"name": "c", "image": "x", "resources": {
                      "requests": {"cpu": "1"}, "claims": [{"name": "g"}]}}],
                      "resourceClaims": [{"name": "g", "resourceClaimTemplateName": "mig"}]}})
    assert isinstance(pod, Pod)
    return pod


def churn(nodes: int, rounds: int) -> None:
    start = time.perf_counter()
    objects = [*mig_fleet(nodes), mig_template()]
    devices = sum(len(o.spec.devices) for o in objects if isinstance(o, ResourceSlice))
    cluster, _ = build_cluster(objects)
    scheduler = Scheduler.build(cluster)
    framework = scheduler.frameworks["default-scheduler"]
    plugin = framework.plugins["DynamicResources"]
    assert isinstance(plugin, DynamicResources)
    counter = iter(range(10**6))

    def schedule_one() -> str | None:
        info = cluster.add_pod(mig_pod(next(counter)))
        framework.run_pre_enqueue(info)
        return scheduler.cycle.schedule_one(framework, info).node

    # Warm up: enough pods that every node has been searched once.
    warm = max(200, nodes // 2)
    for _ in range(warm):
        schedule_one()
    steady = []
    for _ in range(20):
        t = time.perf_counter()
        schedule_one()
        steady.append(time.perf_counter() - t)
    print(f"churn: {nodes} DynamicMIG nodes, {devices} devices; set up and {warm} pods "
          f"warm-up in {time.perf_counter() - start:.1f} s; steady pod cycle "
          f"{1000 * statistics.median(steady):.2f} ms (median)")
    rebuilds = plugin.cache.rebuilds
    names = list(cluster.nodes)
    rows: dict[str, list[float]] = {"remove": [], "pod after remove": [], "add": [],
                                    "pod after add": []}
    for k in range(rounds):
        name = names[(k * 7919) % len(names)]
        node = cluster.nodes[name].node
        slices = cluster.slices_of(name)
        for pod in list(cluster.nodes[name].pods):  # its pods go first, as a drain would
            cluster.remove_pod(pod.key)
        gc.collect()
        t = time.perf_counter()
        cluster.remove_node(name)
        plugin.cache.refresh(cluster)
        rows["remove"].append(time.perf_counter() - t)
        t = time.perf_counter()
        schedule_one()
        rows["pod after remove"].append(time.perf_counter() - t)
        t = time.perf_counter()
        cluster.add_node(node, slices)
        plugin.cache.refresh(cluster)
        rows["add"].append(time.perf_counter() - t)
        t = time.perf_counter()
        schedule_one()
        rows["pod after add"].append(time.perf_counter() - t)
    full = plugin.cache.rebuilds - rebuilds
    for label, values in rows.items():
        ms = [1000 * v for v in values]
        verdict = ""
        if label in ("remove", "add"):
            verdict = "  [ok]" if max(ms) <= CHURN_TARGET_MS else "  [above target]"
        print(f"  {label:<18} median {statistics.median(ms):7.2f} ms  max {max(ms):7.2f} ms"
              f"{verdict}")
    print(f"  slice index rebuilt from scratch {full} time(s) during {rounds} remove/add rounds")


def plain_node(name: str) -> Node:
    allocatable: dict[str, Any] = {"cpu": "64", "memory": "256Gi", "pods": "110"}
    node = decode({"apiVersion": "v1", "kind": "Node", "metadata": {
        "name": name, "labels": {"kubernetes.io/hostname": name,
                                 "topology.kubernetes.io/zone": f"zone-{hash(name) % 3}"}},
        "status": {"allocatable": allocatable, "capacity": allocatable}})
    assert isinstance(node, Node)
    return node


def gpu_slice(node: str) -> ResourceSlice:
    devices = [Device(name=f"gpu-{i}", attributes={"model": DeviceAttribute(string="A100")},
                      capacity={"memory": DeviceCapacity(value=parse_quantity("40Gi"))})
               for i in range(8)]
    return ResourceSlice(metadata=ObjectMeta(name=f"{node}-gpus"), spec=ResourceSliceSpec(
        driver="gpu.example.com", node_name=node,
        pool=ResourcePool(name=node, generation=1, resource_slice_count=1), devices=devices))


def plain_pod(name: str, node: str | None = None) -> Pod:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x", "resources": {
        "requests": {"cpu": "500m", "memory": "1Gi"}}}]}
    if node:
        spec["nodeName"] = node
    pod = decode({"apiVersion": "v1", "kind": "Pod",
                  "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
                  "spec": spec})
    assert isinstance(pod, Pod)
    return pod


def fork_cluster(nodes: int) -> ClusterState:
    cluster = ClusterState()
    for i in range(nodes):
        name = f"node-{i:05d}"
        cluster.add_node(plain_node(name), [gpu_slice(name)])
        for j in range(4):
            cluster.add_pod(plain_pod(f"{name}-p{j}", name))
    for j in range(50):
        cluster.add_pod(plain_pod(f"pending-{j}"))
    cluster.node_infos()
    return cluster


def what_if(cluster: ClusterState, template: Node, template_slice: ResourceSlice,
            claim: ResourceClaim, victim_node: str) -> None:
    """fork() + 10 changes + revert()."""
    cluster.fork()
    cluster.add_node(template, [template_slice])                       # 1
    a = cluster.add_pod(plain_pod("what-if-a"))                        # 2
    b = cluster.add_pod(plain_pod("what-if-b"))                        # 3
    cluster.assume_pod(a, template.name)                               # 4
    cluster.bind_pod(a, template.name)                                 # 5
    cluster.assume_pod(b, template.name)                               # 6
    cluster.add_claim(claim)                                           # 7
    pending = cluster.pods["default/pending-0"]
    cluster.bind_pod(pending, "node-00001")                            # 8
    cluster.remove_pod(f"default/{victim_node}-p0")                    # 9
    cluster.remove_node(victim_node)                                   # 10
    cluster.revert()


def forks(sizes: list[int], repeat: int) -> None:
    print(f"fork() + 10 changes + revert() (target <= {FORK_TARGET_MS:.0f} ms, "
          "flat in fleet size):")
    template = plain_node("template-node")
    template_slice = gpu_slice("template-node")
    claim = decode({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": "what-if", "namespace": "default"},
                    "spec": {"devices": {"requests": [
                        {"name": "g", "exactly": {"deviceClassName": "gpu"}}]}}})
    assert isinstance(claim, ResourceClaim)
    for nodes in sizes:
        cluster = fork_cluster(nodes)
        before = cluster.revision
        times, readers = [], []
        for k in range(repeat):
            victim = f"node-{(k * 37) % nodes:05d}"
            gc.collect()
            t = time.perf_counter()
            what_if(cluster, template, template_slice, claim, victim)
            times.append(time.perf_counter() - t)
            t = time.perf_counter()
            cluster.node_infos()
            readers.append(time.perf_counter() - t)
        ms = [1000 * v for v in times]
        verdict = "ok" if max(ms) <= FORK_TARGET_MS else "above target"
        events = (cluster.revision - before) // repeat
        print(f"  {nodes:>6} nodes  median {statistics.median(ms):6.3f} ms  "
              f"max {max(ms):6.3f} ms  ({events} events each)  [{verdict}]   "
              f"next node_infos() {1000 * statistics.median(readers):6.3f} ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000, help="DynamicMIG fleet size")
    parser.add_argument("--rounds", type=int, default=5, help="remove/add rounds")
    parser.add_argument("--sizes", default="500,1000,5000", help="fleet sizes for forks")
    parser.add_argument("--repeat", type=int, default=200, help="what-ifs per fleet size")
    parser.add_argument("--only", choices=["churn", "fork"], help="run one part")
    args = parser.parse_args(argv)
    if args.only in (None, "fork"):
        forks([int(n) for n in args.sizes.split(",")], args.repeat)
    if args.only in (None, "churn"):
        churn(args.nodes, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
