"""Packing shapes: how many nodes kube-scheduler v1.36.2 fills, and dralab on the same objects.

Issue 39's measurement, reduced to keep the tier cheap while keeping its shape: identical nodes
with 8 GPUs (a DRA driver's ResourceSlice), 128 CPU and 1 TiB; pods with a one-GPU claim from a
ResourceClaimTemplate and a 100m CPU request.

* Bare pods pack: NodeResourcesBalancedAllocation scores the change in balance a pod makes, so
  a node already holding such a pod (75) beats an empty one (74); the nodes fill up 8 by 8.
* Four Deployments spread over every node: their pods get PodTopologySpread's system default
  constraints (owned by a ReplicaSet), which outweigh that one point.

Compared: the number of nodes used and how many nodes hold how many pods. The counts are
printed (``-s`` shows them).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

import pytest

from dralab.api.features import FeatureGates

from .api import Client
from .runs import in_namespace
from .scenario import Obj, Tracker, run_in_dralab, run_on_server
from .scenarios import claim_spec, class_, gpu, node, one_req, pod, slice_, template

NODES = 50
PODS = 200
DEPLOYMENTS = 4
_TIMEOUT_S = 300.0


def _cluster(p: str) -> list[Obj]:
    driver = f"{p}.gpu.example.com"
    objects: list[Obj] = [class_(f"{p}-gpu", driver),
                          template("one-gpu", claim_spec(one_req(f"{p}-gpu")))]
    for i in range(NODES):
        name = f"{p}-n{i:02d}"
        objects.append(node(name, cpu="128", memory="1Ti"))
        objects.append(slice_(name, driver, name, [gpu(f"gpu-{g}") for g in range(8)]))
    return objects


def _gpu_pod(name: str) -> Obj:
    return pod(name, templates={"gpu": "one-gpu"}, cpu="100m")


def _deployment(name: str, replicas: int) -> Obj:
    body = _gpu_pod("x")
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": body["spec"]}}}


def _shape(pods: list[Obj]) -> tuple[int, dict[int, int], int]:
    """(nodes used, {pods on a node: how many nodes}, pods left pending)."""
    per_node = Counter(p["spec"].get("nodeName") for p in pods)
    pending = per_node.pop(None, 0)
    return len(per_node), dict(sorted(Counter(per_node.values()).items())), pending


def _pods(items: list[Obj]) -> list[Obj]:
    return [o for o in items if o.get("kind") == "Pod"]


def _new_namespace(kube: Client) -> str:
    import uuid
    namespace = f"t-{uuid.uuid4().hex[:10]}"
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    return namespace


def _run(kube: Client, build: Callable[[str], list[Obj]],
         after: Callable[[str, list[Obj]], list[Obj]] | None = None
         ) -> tuple[str, list[Obj], list[Obj]]:
    namespace = _new_namespace(kube)
    tracker = Tracker(kube)
    objects = build(namespace)
    try:
        done = run_on_server(kube, tracker, namespace, objects)
        server = done.after
        if after is not None:
            server = after(namespace, objects)
    finally:
        tracker.cleanup()
        kube.delete("v1", "Namespace", namespace)
    return namespace, done.stored, server


def test_bare_pods_pack(kube: Client, dralab_gates: FeatureGates) -> None:
    def build(p: str) -> list[Obj]:
        return [*_cluster(p), *(_gpu_pod(f"p{i:03d}") for i in range(PODS))]

    _, stored, server = _run(kube, build)
    real = _shape(_pods(server))
    ours = _shape(_pods(run_in_dralab(stored, dralab_gates)))
    print(f"\nbare pods, {NODES} nodes / {PODS} pods: kube-scheduler {real}, dralab {ours}")
    assert real == (PODS // 8, {8: PODS // 8}, 0)
    assert ours == real


def test_deployments_spread(kube: Client, dralab_gates: FeatureGates) -> None:
    def build(p: str) -> list[Obj]:
        return _cluster(p)

    def deploy(namespace: str, objects: list[Obj]) -> list[Obj]:
        for j in range(DEPLOYMENTS):
            kube.create(_deployment(f"d{j}", PODS // DEPLOYMENTS), namespace)
        deadline = time.monotonic() + _TIMEOUT_S
        while True:
            pods = kube.list("v1", "Pod", namespace)
            if len(pods) == PODS and all(p["spec"].get("nodeName") for p in pods):
                return [{"kind": "Pod", **p} for p in pods]
            if time.monotonic() > deadline:
                pytest.fail(f"{len(pods)} pods, "
                            f"{sum(1 for p in pods if p['spec'].get('nodeName'))} bound")
            time.sleep(0.5)

    namespace, _, server = _run(kube, build, deploy)
    real = _shape(_pods(server))
    written = [*_cluster(namespace),
               *(_deployment(f"d{j}", PODS // DEPLOYMENTS) for j in range(DEPLOYMENTS))]
    ours = _shape(_pods(run_in_dralab(in_namespace(written, namespace), dralab_gates)))
    print(f"\n{DEPLOYMENTS} Deployments, {NODES} nodes / {PODS} pods: kube-scheduler {real}, "
          f"dralab {ours}")
    assert real[0] == NODES and real[2] == 0
    assert ours[0] == real[0]
    assert ours == (NODES, {PODS // NODES: NODES}, 0)
    # Every node used by both; most nodes hold PODS / NODES pods on the real scheduler too.
    assert real[1].get(PODS // NODES, 0) >= NODES * 8 // 10
