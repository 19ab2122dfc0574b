"""Scheduler benchmark: the issue's shapes built in memory, scheduled end to end.

Cluster: nodes with 64 cpu / 256Gi; per node one ResourceSlice of driver
``test-driver.cdi.k8s.io`` (pool = node name) with N devices ``instance-<i>`` as in
bench_allocator.py; DeviceClass ``test-class``; one ResourceClaimTemplate with one
request of one device; every pod references it and asks for 100m cpu / 128Mi.
``--mode device-plugin`` instead advertises ``nvidia.com/gpu: N`` per node and pods
request one (no DRA at all: the framework's own cost).

Prints pods/s and microseconds per pod for each shape, the target being >= 350
pods/s end to end (cluster building included), and the per-pod cost against
fleet size; "2nd half" is the cost per pod over the last half of the pods, once
every node has been looked at (one-time work per node, such as the first device
search, is then behind).

``spread`` measures PodTopologySpread's cost in one run: the fill shape with the default
profile and with PodTopologySpread disabled (the profile before the plugin existed),
alternated, bare pods (no spread: the plugin skips them); then 1,000 nodes with pods a
ReplicaSet controls (the system default constraints spread them), CPU time per pod.
``affinity`` does the same for InterPodAffinity, NodePorts and ImageLocality (bare pods with
and without them; then 1,000 nodes with 4 ReplicaSets keeping one replica per node by
required anti-affinity).

``--ref COMMIT`` compares the fill shape's scheduling CPU per pod with the tree at COMMIT in
the same run: a temporary ``git worktree`` of COMMIT, and this script run once per tree per
round in a fresh interpreter (``PYTHONPATH`` = that tree's ``src``), alternated, best of
three. E.g. ``--ref f5a16a6^``: the profile before issue 39's scoring and plugins.

    python benchmarks/bench_scheduler.py [--quick] [--mode dra|device-plugin] [--profile]
        [--only fill|large|fleet|spread|affinity ...] [--fleet NODES ...] [--ref COMMIT]
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from dralab.api.base import KubeObject, ObjectMeta
from dralab.api.codec import decode
from dralab.api.quantity import parse_quantity
from dralab.api.resource import (
    CELDeviceSelector,
    Device,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClass,
    DeviceClassSpec,
    DeviceSelector,
    ResourcePool,
    ResourceSlice,
    ResourceSliceSpec,
)
from dralab.scheduler import Scheduler, build_cluster

DRIVER = "test-driver.cdi.k8s.io"
CLASS = "test-class"
TARGET_PODS_PER_S = 350


def device_class() -> DeviceClass:
    return DeviceClass(metadata=ObjectMeta(name=CLASS), spec=DeviceClassSpec(selectors=[
        DeviceSelector(cel=CELDeviceSelector(expression=f'device.driver == "{DRIVER}"'))]))


def node_slice(node: str, count: int) -> ResourceSlice:
    devices = [Device(
        name=f"instance-{i}",
        attributes={"model": DeviceAttribute(string="A100"),
                    "family": DeviceAttribute(string="GPU"),
                    "driverVersion": DeviceAttribute(version="1.2.3"),
                    "dra.example.com/numa": DeviceAttribute(int_=i)},
        capacity={"memory": DeviceCapacity(value=parse_quantity("1Gi"))},
    ) for i in range(count)]
    return ResourceSlice(metadata=ObjectMeta(name=f"{node}-slice"), spec=ResourceSliceSpec(
        driver=DRIVER, node_name=node,
        pool=ResourcePool(name=node, generation=1, resource_slice_count=1), devices=devices))


def node(name: str, gpus: int) -> KubeObject:
    allocatable: dict[str, Any] = {"cpu": "64", "memory": "256Gi", "pods": "110"}
    if gpus:
        allocatable["nvidia.com/gpu"] = str(gpus)
    return decode({"apiVersion": "v1", "kind": "Node", "metadata": {
        "name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": allocatable, "capacity": allocatable}})


_WITHOUT_SPREAD = {
    "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler", "plugins": {
        "multiPoint": {"disabled": [{"name": "PodTopologySpread"}]}}}]}


_WITHOUT_AFFINITY = {
    "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler", "plugins": {
        "multiPoint": {"disabled": [{"name": "InterPodAffinity"}, {"name": "NodePorts"},
                                    {"name": "ImageLocality"}]}}}]}


def pod(name: str, dra: bool, owner: str | None = None,
        anti_affinity: bool = False) -> KubeObject:
    requests: dict[str, str] = {"cpu": "100m", "memory": "128Mi"}
    container: dict[str, Any] = {"name": "main", "image": "pause",
                                 "resources": {"requests": requests}}
    spec: dict[str, Any] = {"containers": [container]}
    if dra:
        spec["resourceClaims"] = [{"name": "dev", "resourceClaimTemplateName": "one-device"}]
        container["resources"]["claims"] = [{"name": "dev"}]
    else:
        requests["nvidia.com/gpu"] = "1"
        container["resources"]["limits"] = {"nvidia.com/gpu": "1"}
    meta: dict[str, Any] = {"name": name, "namespace": "bench", "uid": f"uid-{name}"}
    if owner:  # a ReplicaSet's pod: PodTopologySpread's system defaults apply
        meta["labels"] = {"app": owner}
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                    "name": owner, "uid": f"uid-{owner}", "controller": True}]
    if anti_affinity and owner:  # one replica of the ReplicaSet per node
        spec["affinity"] = {"podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [{
                "labelSelector": {"matchLabels": {"app": owner}},
                "topologyKey": "kubernetes.io/hostname"}]}}
    return decode({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})


def objects(nodes: int, devices: int, pods: int, dra: bool, owners: int = 0,
            anti_affinity: bool = False) -> list[KubeObject]:
    names = [f"node-{i:05d}" for i in range(nodes)]
    out: list[KubeObject] = [node(n, 0 if dra else devices) for n in names]
    if dra:
        out.append(device_class())
        out.extend(node_slice(n, devices) for n in names)
        out.append(decode({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-device", "namespace": "bench"},
            "spec": {"spec": {"devices": {"requests": [
                {"name": "req-0", "exactly": {"deviceClassName": CLASS}}]}}}}))
    out.extend(pod(f"pod-{i:05d}", dra, f"rs-{i % owners}" if owners else None,
                   anti_affinity) for i in range(pods))
    # The ReplicaSets themselves: PodTopologySpread's default selector is theirs (a pod whose
    # ReplicaSet is not in the input gets none, as upstream). Each owns its pods: none created.
    out.extend(decode({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": f"rs-{j}", "namespace": "bench", "uid": f"uid-rs-{j}"},
        "spec": {"replicas": len(range(j, pods, owners)),
                 "selector": {"matchLabels": {"app": f"rs-{j}"}},
                 "template": {"metadata": {"labels": {"app": f"rs-{j}"}},
                              "spec": {"containers": [{"name": "c", "image": "pause"}]}}}})
        for j in range(owners))
    return out


def run(nodes: int, devices: int, pods: int, dra: bool, profile: bool = False,
        config: dict[str, Any] | None = None, owners: int = 0
        ) -> tuple[float, float, int, float]:
    """(build seconds, scheduling seconds, pods placed, seconds for the second half
    of the pods: the steady state, once every node has been looked at)."""
    inputs = objects(nodes, devices, pods, dra, owners)
    gc.collect()
    start = time.perf_counter()
    cluster, pending = build_cluster(inputs)
    half: list[float] = []

    def observe(attempt: object) -> None:
        half.append(0.0)
        if len(half) == pods // 2:
            half[0] = time.perf_counter()

    scheduler = Scheduler.build(cluster, config, observe=observe)
    built = time.perf_counter()
    profiler = cProfile.Profile() if profile else None
    if profiler:
        profiler.enable()
    result = scheduler.run(pending)
    if profiler:
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(35)
    done = time.perf_counter()
    steady = done - half[0] if len(half) >= pods // 2 > 0 else 0.0
    return built - start, done - built, len(result.placed), steady


def report(label: str, nodes: int, devices: int, pods: int, dra: bool, profile: bool) -> float:
    build_s, run_s, placed, steady_s = run(nodes, devices, pods, dra, profile)
    total = build_s + run_s
    rate = pods / total if total else float("inf")
    verdict = "ok" if rate >= TARGET_PODS_PER_S else "below target"
    steady = steady_s / (pods - pods // 2) * 1e6
    print(f"{label:<34} {nodes:>6} nodes {pods:>6} pods  placed {placed:>6}  "
          f"build {build_s:6.2f}s  run {run_s:6.2f}s  {rate:7.0f} pods/s  "
          f"{run_s / pods * 1e6:7.0f} us/pod  (2nd half {steady:5.0f} us/pod)  [{verdict}]")
    return rate


def cpu_per_pod(nodes: int, pods: int, dra: bool, config: dict[str, Any] | None,
                owners: int = 0, anti_affinity: bool = False) -> tuple[float, int, int]:
    """(CPU seconds per scheduled pod, pods placed, nodes used): scheduling only."""
    inputs = objects(nodes, 10, pods, dra, owners, anti_affinity)
    gc.collect()
    cluster, pending = build_cluster(inputs)
    scheduler = Scheduler.build(cluster, config)
    start = time.process_time()
    result = scheduler.run(pending)
    cpu = time.process_time() - start
    used = len({p.node for p in result.placed})
    return cpu / max(len(result.placed), 1), len(result.placed), used


def spread(scale: int, dra: bool) -> None:
    """PodTopologySpread's cost, measured in one run (see the module docstring)."""
    nodes, pods = 500 // scale, 5000 // scale
    best: dict[str, float] = {}
    for _ in range(3):  # alternated, best of three: the machine's noise hits both alike
        for label, config in (("without PodTopologySpread", _WITHOUT_SPREAD),
                              ("default profile", None)):
            cpu, _, _ = cpu_per_pod(nodes, pods, dra, config)
            best[label] = min(best.get(label, cpu), cpu)
    for label, cpu in best.items():
        print(f"bare pods, {label:<26} {nodes:>5} nodes {pods:>6} pods  "
              f"{cpu * 1e6:7.0f} us CPU/pod  {1 / cpu:7.0f} pods/CPU-s")
    ratio = best["default profile"] / best["without PodTopologySpread"]
    print(f"bare pods: default profile / without PodTopologySpread = {ratio:.3f}")
    nodes, pods = 1000 // scale, 2000 // scale
    cpu, placed, used = cpu_per_pod(nodes, pods, dra, None, owners=4)
    print(f"4 ReplicaSets (system default spread) {nodes:>5} nodes {pods:>6} pods  placed "
          f"{placed}  on {used} nodes  {cpu * 1e6:7.0f} us CPU/pod  {1 / cpu:7.0f} pods/CPU-s")


def affinity(scale: int, dra: bool) -> None:
    """InterPodAffinity's, NodePorts' and ImageLocality's cost, measured in one run: bare pods
    (none of them acts: PreFilter and PreScore skip) with the default profile and without the
    three plugins, alternated, best of three; then 4 ReplicaSets whose pods keep one replica per
    node (required hostname anti-affinity) and are spread by the system defaults."""
    nodes, pods = 500 // scale, 5000 // scale
    best: dict[str, float] = {}
    for _ in range(3):
        for label, config in (("without the three plugins", _WITHOUT_AFFINITY),
                              ("default profile", None)):
            cpu, _, _ = cpu_per_pod(nodes, pods, dra, config)
            best[label] = min(best.get(label, cpu), cpu)
    for label, cpu in best.items():
        print(f"bare pods, {label:<26} {nodes:>5} nodes {pods:>6} pods  "
              f"{cpu * 1e6:7.0f} us CPU/pod  {1 / cpu:7.0f} pods/CPU-s")
    ratio = best["default profile"] / best["without the three plugins"]
    print(f"bare pods: default profile / without InterPodAffinity, NodePorts, ImageLocality = "
          f"{ratio:.3f}")
    nodes, pods = 1000 // scale, 2000 // scale
    cpu, placed, used = cpu_per_pod(nodes, pods, dra, None, owners=4, anti_affinity=True)
    print(f"4 ReplicaSets, anti-affinity + spread {nodes:>5} nodes {pods:>6} pods  placed "
          f"{placed}  on {used} nodes  {cpu * 1e6:7.0f} us CPU/pod  {1 / cpu:7.0f} pods/CPU-s")


def _fill_cpu_in(src: Path, nodes: int, pods: int, mode: str) -> tuple[float, int]:
    """(CPU seconds per pod, pods placed) of the fill shape, scheduled by the dralab in
    ``src`` in a fresh interpreter (this script's ``--fill-cpu``)."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run([sys.executable, __file__, "--fill-cpu", str(nodes), str(pods),
                          "--mode", mode], env=env, check=True, capture_output=True, text=True)
    origin, cpu, placed = out.stdout.split()
    if Path(origin).resolve().parent.parent != src.resolve():
        raise RuntimeError(f"dralab came from {origin}, not {src}")
    return float(cpu), int(placed)


def against_ref(ref: str, scale: int, mode: str) -> None:
    """The fill shape's scheduling CPU per pod here and at ``ref``, in one run."""
    repo = Path(__file__).resolve().parent.parent
    nodes, pods = 500 // scale, 5000 // scale
    tree = Path(tempfile.mkdtemp(prefix="dralab-bench-ref-"))
    subprocess.run(["git", "worktree", "add", "--detach", str(tree), ref], cwd=repo,
                   check=True, capture_output=True)
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=tree, check=True,
                                capture_output=True, text=True).stdout.strip()
        trees = {"this tree": repo / "src", f"{ref} ({commit})": tree / "src"}
        best: dict[str, tuple[float, int]] = {}
        for _ in range(3):  # alternated, best of three: the machine's noise hits both alike
            for label, src in trees.items():
                cpu, placed = _fill_cpu_in(src, nodes, pods, mode)
                if label not in best or cpu < best[label][0]:
                    best[label] = (cpu, placed)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=repo,
                       check=False, capture_output=True)
    for label, (cpu, placed) in best.items():
        print(f"fill, {label:<28} {nodes:>5} nodes {pods:>6} pods  placed {placed:>6}  "
              f"{cpu * 1e6:7.0f} us CPU/pod  {1 / cpu:7.0f} pods/CPU-s")
    here, there = (best[label][0] for label in trees)
    print(f"fill: this tree / {ref} = {here / there:.3f} (CPU per pod; < 1 is faster)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller shapes")
    parser.add_argument("--mode", choices=["dra", "device-plugin"], default="dra")
    parser.add_argument("--profile", action="store_true", help="cProfile the first shape")
    parser.add_argument("--only", action="append",
                        choices=["fill", "large", "fleet", "spread", "affinity"],
                        help="run only these shapes (repeatable)")
    parser.add_argument("--fleet", type=int, action="append",
                        help="fleet sizes for the per-pod cost (repeatable)")
    parser.add_argument("--ref", help="compare the fill shape with the tree at this commit")
    parser.add_argument("--fill-cpu", nargs=2, type=int, metavar=("NODES", "PODS"),
                        help=argparse.SUPPRESS)  # the child of --ref
    args = parser.parse_args(argv)
    dra = args.mode == "dra"
    if args.fill_cpu:
        import dralab
        nodes, pods = args.fill_cpu
        cpu, placed, _ = cpu_per_pod(nodes, pods, dra, None)
        print(dralab.__file__, cpu, placed)
        return 0
    scale = 10 if args.quick else 1
    only = set(args.only or ("fill", "large", "fleet", "spread", "affinity"))
    print(f"mode: {args.mode}; target >= {TARGET_PODS_PER_S} pods/s end to end")
    if "fill" in only:
        report("fill: 500 nodes x 10 devices", 500 // scale, 10, 5000 // scale, dra,
               args.profile)
    if "large" in only:
        report("large: 10,000 pods on 5,000 nodes", 5000 // scale, 10, 10000 // scale, dra,
               False)
    if "fleet" in only:
        print("per-pod cost vs fleet size (1,000 pods):")
        for nodes in args.fleet or (100, 500, 1000, 2000, 5000, 10000):
            report(f"  fleet {nodes}", nodes // scale, 10, 1000 // scale, dra, False)
    if "spread" in only:
        spread(scale, dra)
    if "affinity" in only:
        affinity(scale, dra)
    if args.ref:
        against_ref(args.ref, scale, args.mode)
    return 0


if __name__ == "__main__":
    sys.exit(main())
