"""dralab's scheduler next to the real kube-scheduler, on the same objects, in one run.

The real one is kube-scheduler from ``KUBEBUILDER_ASSETS`` (etcd, kube-apiserver and
kube-scheduler; envtest's convention, as the conformance tier): a control plane on loopback
started by the tier's own helper (``tests/k8s/controlplane.py``), without the controller
manager, so nothing but the scheduler acts on the objects. Without the binaries the benchmark
prints "skipped: no binaries" and exits 0. It is a benchmark, not a test: it prints figures.

Shapes (``--only``, repeatable; default ``spread-affinity``):

* ``spread-affinity``: 1,000 nodes (64 CPU, 256 GiB, a ResourceSlice of 10 devices each) and
  2,000 pods of 4 ReplicaSets, each pod with one claim of one device (a ResourceClaim of its
  own, made beforehand: no resourceclaim controller needed) and required pod anti-affinity on
  the hostname against its ReplicaSet's pods; the ReplicaSets' pods also get PodTopologySpread's
  system default constraints. Every ReplicaSet ends with one replica per node.
* ``packing``: issue 39's two shapes at full size: 500 nodes with 8 GPUs (a ResourceSlice),
  128 CPU and 1 TiB; 2,000 pods with a one-GPU claim and a 100m CPU request, as bare pods
  (kube-scheduler v1.36.2 used 250 nodes) and as the pods of 4 ReplicaSets (all 500 nodes).

Measured for the real scheduler: its process's CPU (utime + stime from /proc/<pid>/stat)
from just before the first pod is created to the moment every pod is bound, divided by the
pods bound (and its inverse, pods per CPU second); and pods bound per second of wall clock
over the same span, which on a small machine is bounded by the benchmark's own pod creation
(8 Python client threads, one TLS connection per request: about 13 pods/s on the 2-core
machine), so the CPU figures are the ones to compare.
For dralab: the CPU time of ``Scheduler.run`` on the same objects (as the server stored
them), and pods per CPU second. Placements are compared as nodes used and pods per node.

    KUBEBUILDER_ASSETS=/usr/local/kubebuilder/bin \\
        python benchmarks/bench_kube_scheduler.py [--quick] [--only spread-affinity|packing ...]
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The control-plane helper and the thin API client live with the conformance tier; this
# benchmark reuses them rather than keeping a second copy.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.k8s.api import Client
from tests.k8s.controlplane import ControlPlane, missing_binaries

from dralab.api.codec import decode
from dralab.scheduler import Scheduler, build_cluster

Obj = dict[str, Any]
NAMESPACE = "bench"  # one namespace per shape: bench-s1, bench-s2, ...
DRIVER = "bench.gpu.example.com"
CLASS = "bench-gpu"
RESOURCE = "resource.k8s.io/v1"
THREADS = 8
_TIMEOUT_S = 1800.0  # bounds a hang of the real scheduler; measures nothing


# -- objects (plain documents: the same for the server and for dralab) ------------------------

def _node(name: str, cpu: str, memory: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}}}


def _slice(node: str, devices: int) -> Obj:
    return {"apiVersion": RESOURCE, "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpus"},
            "spec": {"driver": DRIVER, "nodeName": node,
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}"} for i in range(devices)]}}


def _device_class() -> Obj:
    return {"apiVersion": RESOURCE, "kind": "DeviceClass", "metadata": {"name": CLASS},
            "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]}}


def _claim(name: str, namespace: str) -> Obj:
    return {"apiVersion": RESOURCE, "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"devices": {"requests": [
                {"name": "gpu", "exactly": {"deviceClassName": CLASS}}]}}}


def _replica_set(name: str, replicas: int, namespace: str) -> Obj:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": {
                         "containers": [{"name": "main", "image": "pause"}]}}}}


def _pod(name: str, namespace: str, cpu: str, memory: str | None, owner: str | None,
         anti_affinity: bool) -> Obj:
    requests = {"cpu": cpu} | ({"memory": memory} if memory else {})
    spec: Obj = {"containers": [{"name": "main", "image": "pause",
                                 "resources": {"requests": requests,
                                               "claims": [{"name": "gpu"}]}}],
                 "resourceClaims": [{"name": "gpu", "resourceClaimName": name}]}
    meta: Obj = {"name": name, "namespace": namespace}
    if owner is not None:
        meta["labels"] = {"app": owner}
        # The uid is filled in once the ReplicaSet exists (the server's).
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                    "name": owner, "uid": "", "controller": True}]
        if anti_affinity:
            spec["affinity"] = {"podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [{
                    "labelSelector": {"matchLabels": {"app": owner}},
                    "topologyKey": "kubernetes.io/hostname"}]}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


@dataclass(frozen=True)
class Shape:
    label: str
    namespace: str
    nodes: list[Obj]
    slices: list[Obj]
    owners: list[Obj]
    pods: list[Obj]

    def claims(self) -> list[Obj]:
        return [_claim(p["metadata"]["name"], self.namespace) for p in self.pods]


def _shape(label: str, nodes: int, cpu: str, memory: str, devices: int, pods: int,
           pod_cpu: str, pod_memory: str | None, owners: int, anti_affinity: bool) -> Shape:
    # Names of their own per shape: claims a shape leaves behind keep their finalizer (no
    # resourceclaim controller here to drop it) and their devices, which must not be the
    # next shape's.
    global _SHAPES_MADE
    _SHAPES_MADE += 1
    prefix = f"s{_SHAPES_MADE}"
    namespace = f"{NAMESPACE}-{prefix}"
    names = [f"{prefix}-node-{i:04d}" for i in range(nodes)]
    rs = [f"rs-{j}" for j in range(owners)]
    return Shape(label, namespace, [_node(n, cpu, memory) for n in names],
                 [_slice(n, devices) for n in names],
                 [_replica_set(r, pods // owners, namespace) for r in rs],
                 [_pod(f"pod-{i:05d}", namespace, pod_cpu, pod_memory,
                       rs[i % owners] if rs else None, anti_affinity) for i in range(pods)])


_SHAPES_MADE = 0


SHAPES: dict[str, list[Callable[[int], Shape]]] = {  # argument: divide the sizes by it
    "spread-affinity": [lambda k: _shape(
        "4 ReplicaSets, anti-affinity + spread", 1000 // k, "64", "256Gi", 10, 2000 // k,
        "100m", "128Mi", 4, True)],
    "packing": [
        lambda k: _shape("bare pods (packing)", 500 // k, "128", "1Ti", 8, 2000 // k, "100m",
                         None, 0, False),
        lambda k: _shape("4 ReplicaSets (spreading)", 500 // k, "128", "1Ti", 8, 2000 // k,
                         "100m", None, 4, False)],
}


# -- the real kube-scheduler ------------------------------------------------------------------

def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _make_node(kube: Client, node: Obj) -> None:
    name = node["metadata"]["name"]
    kube.create({"apiVersion": "v1", "kind": "Node", "metadata": node["metadata"]})
    # NodeTaint admission adds node.kubernetes.io/not-ready; no kubelet here to make the node
    # Ready and no lifecycle controller to take the taint off, so the benchmark does both.
    kube.patch("v1", "Node", name, {"spec": {"taints": None}})
    resources = node["status"]["allocatable"]
    kube.patch_status("v1", "Node", name, {"status": {
        "capacity": resources, "allocatable": resources,
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                        "message": "set by bench_kube_scheduler"}]}})


@dataclass(frozen=True)
class Measured:
    cpu_per_pod: float
    pods_per_s: float
    bound: int
    per_node: Counter[int]
    stored: list[Obj]


def _run_real(kube: Client, scheduler_pid: int, shape: Shape) -> Measured:
    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(lambda n: _make_node(kube, n), shape.nodes))
        list(pool.map(kube.create, shape.slices))
        uids = {rs["metadata"]["name"]: kube.create(rs)["metadata"]["uid"] for rs in shape.owners}
        claims = list(pool.map(kube.create, shape.claims()))
        pods = copy.deepcopy(shape.pods)
        for pod in pods:
            for ref in pod["metadata"].get("ownerReferences", []):
                ref["uid"] = uids[ref["name"]]
        stored_rs = [kube.get("apps/v1", "ReplicaSet", r["metadata"]["name"], shape.namespace)
                     for r in shape.owners]
        cpu0, t0 = _cpu_seconds(scheduler_pid), time.monotonic()
        created = list(pool.map(kube.create, pods))
    deadline = t0 + _TIMEOUT_S
    while True:
        listed = kube.list("v1", "Pod", shape.namespace)
        bound = [p for p in listed if p["spec"].get("nodeName")]
        if len(bound) == len(pods) or time.monotonic() > deadline:
            break
        # Pods the scheduler gave up on stay pending: stop once the count stops moving.
        if _settled(kube, listed):
            break
        time.sleep(1.0)
    cpu, wall = _cpu_seconds(scheduler_pid) - cpu0, time.monotonic() - t0
    nodes = [{"apiVersion": "v1", "kind": "Node", **kube.get("v1", "Node", n["metadata"]["name"])}
             for n in shape.nodes]
    slices = [{"apiVersion": RESOURCE, "kind": "ResourceSlice", **s} for s in
              kube.list(RESOURCE, "ResourceSlice")]
    stored = [*nodes, *slices, {"apiVersion": RESOURCE, **kube.get(RESOURCE, "DeviceClass", CLASS),
                                "kind": "DeviceClass"},
              *({"apiVersion": "apps/v1", "kind": "ReplicaSet", **r} for r in stored_rs),
              *({"apiVersion": RESOURCE, "kind": "ResourceClaim", **c} for c in claims),
              *({"apiVersion": "v1", "kind": "Pod", **p} for p in created)]
    per_node = Counter(Counter(p["spec"]["nodeName"] for p in bound).values())
    return Measured(cpu / max(len(bound), 1), len(bound) / wall if wall else 0.0, len(bound),
                    per_node, stored)


def _settled(kube: Client, listed: list[Obj]) -> bool:
    """Every unbound pod has been found unschedulable (PodScheduled False) at least once."""
    pending = [p for p in listed if not p["spec"].get("nodeName")]
    return bool(pending) and all(
        any(c.get("type") == "PodScheduled" and c.get("status") == "False"
            for c in (p.get("status") or {}).get("conditions") or [])
        for p in pending) and len(pending) < len(listed)


def _cleanup(kube: Client, shape: Shape) -> None:
    namespace = shape.namespace
    kube.request("DELETE", f"/api/v1/namespaces/{namespace}/pods",
                 query={"gracePeriodSeconds": "0"})
    kube.request("DELETE", f"/apis/apps/v1/namespaces/{namespace}/replicasets")
    kube.request("DELETE", f"/apis/{RESOURCE}/resourceslices")
    kube.request("DELETE", "/api/v1/nodes")
    # Wait until the scheduler's cache is empty of them, so the next shape starts clean.
    while kube.list("v1", "Pod", namespace) or kube.list("v1", "Node"):
        time.sleep(1.0)


# -- dralab -----------------------------------------------------------------------------------

def _run_dralab(stored: list[Obj]) -> Measured:
    """dralab's scheduler on the objects as the server stored them, pods unbound."""
    objects = []
    for obj in copy.deepcopy(stored):
        obj.get("metadata", {}).pop("managedFields", None)
        if obj["kind"] == "Pod":
            obj["spec"].pop("nodeName", None)
            obj.pop("status", None)
        if obj["kind"] == "ResourceClaim":
            obj.pop("status", None)
        objects.append(decode(obj))
    cluster, pending = build_cluster(objects)
    scheduler = Scheduler.build(cluster)
    start = time.process_time()
    result = scheduler.run(pending)
    cpu = time.process_time() - start
    placed = len(result.placed)
    per_node = Counter(Counter(p.node for p in result.placed).values())
    return Measured(cpu / max(placed, 1), placed / cpu if cpu else 0.0, placed, per_node, [])


def _line(who: str, shape: Shape, m: Measured, wall: bool) -> str:
    spread = ", ".join(f"{n} node(s) x {k}" for k, n in sorted(m.per_node.items()))
    rate = 1 / m.cpu_per_pod if m.cpu_per_pod else 0.0
    return (f"  {who:<22} bound {m.bound:>5}/{len(shape.pods)}  on {sum(m.per_node.values()):>4} "
            f"nodes ({spread})  {m.cpu_per_pod * 1e3:7.2f} ms CPU/pod  {rate:6.1f} pods/CPU-s"
            + (f"  {m.pods_per_s:6.1f} pods/s wall" if wall else ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", choices=sorted(SHAPES),
                        help="run only these shapes (repeatable; default spread-affinity)")
    parser.add_argument("--quick", action="store_true", help="sizes divided by 10")
    args = parser.parse_args(argv)
    assets = os.environ.get("KUBEBUILDER_ASSETS", "")
    needed = ("etcd", "kube-apiserver", "kube-scheduler")
    if not assets or set(needed) & set(missing_binaries(Path(assets))):
        print("skipped: no binaries (set KUBEBUILDER_ASSETS to a directory holding etcd, "
              "kube-apiserver and kube-scheduler)")
        return 0
    plane = ControlPlane(Path(assets), components=("kube-scheduler",)).start()
    try:
        kube = Client(plane.url, plane.ssl_context())
        version = kube.request("GET", "/version").get("gitVersion", "?")
        kube.create(_device_class())
        pid = plane._procs["kube-scheduler"].pid  # the helper keeps its children by name
        print(f"kube-scheduler {version} (default profile, default feature gates) next to "
              f"dralab, {os.cpu_count()} CPUs")
        for name in args.only or ["spread-affinity"]:
            for make in SHAPES[name]:
                shape = make(10 if args.quick else 1)
                print(f"{shape.label}: {len(shape.nodes)} nodes, {len(shape.pods)} pods")
                kube.create({"apiVersion": "v1", "kind": "Namespace",
                             "metadata": {"name": shape.namespace}})
                # The ServiceAccount admission plugin wants the namespace's default account,
                # which the controller manager (not running here) would make.
                kube.create({"apiVersion": "v1", "kind": "ServiceAccount",
                             "metadata": {"name": "default", "namespace": shape.namespace}})
                real = _run_real(kube, pid, shape)
                print(_line(f"kube-scheduler {version}", shape, real, True),
                      flush=True)
                ours = _run_dralab(real.stored)
                print(_line("dralab", shape, ours, False), flush=True)
                if real.cpu_per_pod and ours.cpu_per_pod:
                    print(f"  CPU per pod: kube-scheduler / dralab = "
                          f"{real.cpu_per_pod / ours.cpu_per_pod:.1f}", flush=True)
                _cleanup(kube, shape)
    finally:
        plane.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
