"""InterPodAffinity and NodePorts: dralab against kube-scheduler v1.36.2 on the same objects.

Small clusters whose outcome is determined (nodes differ in allocatable CPU where a choice is
left, so the real scheduler's pick is no coin toss):

* a Deployment with required pod anti-affinity on the hostname: one replica per node, the rest
  pending with ``node(s) didn't match pod anti-affinity rules``;
* a required affinity pair: a pod that must run next to another lands on its node; one whose
  affinity selects nothing (and not itself) stays pending, ``node(s) didn't match pod affinity
  rules``, where preemption cannot help;
* a hostPort conflict: two nodes, three pods asking for the same host port.

Compared: per pod its node or its PodScheduled=False message and FailedScheduling event (the
Deployment's pods, whose names are random, by shape: pods per node and the pending messages).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from dralab.api.features import FeatureGates

from .api import Client
from .runs import in_namespace, run_scenario, scheduling_differences
from .scenario import Tracker, observe, run_in_dralab, run_on_server
from .scenarios import node, pod

Obj = dict[str, Any]
_TIMEOUT_S = 120.0
HOSTNAME = "kubernetes.io/hostname"


def _nodes(p: str, count: int) -> list[Obj]:
    # Different allocatable CPU: NodeResourcesFit's scores differ, no tie to break.
    return [node(f"{p}-n{i}", cpu=str(8 * (i + 1)), memory="32Gi") for i in range(count)]


def _labelled(obj: Obj, labels: dict[str, str]) -> Obj:
    obj["metadata"]["labels"] = dict(labels)
    return obj


def _affinity(kind: str, labels: dict[str, str]) -> Obj:
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": dict(labels)}, "topologyKey": HOSTNAME}]}}


def affinity_pair(p: str) -> list[Obj]:
    db = _labelled(pod("db", cpu="100m"), {"app": "db"})
    web = _labelled(pod("web", cpu="100m"), {"app": "web"})
    web["spec"]["affinity"] = _affinity("podAffinity", {"app": "db"})
    orphan = _labelled(pod("orphan", cpu="100m"), {"app": "orphan"})
    orphan["spec"]["affinity"] = _affinity("podAffinity", {"app": "missing"})
    return [*_nodes(p, 2), db, web, orphan]


def host_port_conflict(p: str) -> list[Obj]:
    pods = []
    for i in range(3):
        obj = pod(f"agent-{i}", cpu="100m")
        obj["spec"]["containers"][0]["ports"] = [{"containerPort": 8080, "hostPort": 8080}]
        pods.append(obj)
    return [*_nodes(p, 2), *pods]


@pytest.mark.parametrize("build", [affinity_pair, host_port_conflict],
                         ids=["affinity_pair", "host_port_conflict"])
def test_pods_agree_with_kube_scheduler(kube: Client, dralab_gates: FeatureGates,
                                        build: Callable[[str], list[Obj]]) -> None:
    run = run_scenario(kube, dralab_gates, build.__name__, build)
    assert not run.server_error and not run.dralab_error, (run.server_error, run.dralab_error)
    server, ours = observe(run.server), observe(run.dralab)
    print(f"\n{build.__name__}: kube-scheduler {dict(server.nodes)} {dict(server.messages)}"
          f"\n{build.__name__}: dralab         {dict(ours.nodes)} {dict(ours.messages)}")
    assert scheduling_differences(run) == []
    assert scheduling_differences(run.as_written()) == []
    # Something placed and something left pending, or the comparison proved little.
    assert any(server.nodes.values()) and server.messages


REPLICAS = 4
NODES = 3


def _deployment(name: str) -> Obj:
    labels = {"app": name}
    body = pod("x", cpu="100m")
    body["spec"]["affinity"] = _affinity("podAntiAffinity", labels)
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": REPLICAS, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": body["spec"]}}}


def _shape(pods: list[Obj]) -> tuple[list[int], list[str]]:
    """(pods per used node, sorted; PodScheduled=False messages, sorted)."""
    per_node = Counter(p["spec"].get("nodeName") for p in pods if p["spec"].get("nodeName"))
    messages = []
    for p in pods:
        for cond in (p.get("status") or {}).get("conditions") or []:
            if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
                messages.append(f"{cond.get('reason')}: {cond.get('message')}")
    return sorted(per_node.values()), sorted(messages)


def test_anti_affinity_deployment_one_replica_per_node(kube: Client,
                                                        dralab_gates: FeatureGates) -> None:
    import uuid
    namespace = f"t-{uuid.uuid4().hex[:10]}"
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    tracker = Tracker(kube)
    nodes = _nodes(namespace, NODES)
    try:
        run_on_server(kube, tracker, namespace, nodes)
        kube.create(_deployment("web"), namespace)
        deadline = time.monotonic() + _TIMEOUT_S
        while True:
            pods = kube.list("v1", "Pod", namespace)
            if len(pods) == REPLICAS and sum(1 for p in pods if p["spec"].get("nodeName")) \
                    == NODES and len(_shape(pods)[1]) == REPLICAS - NODES:
                break
            if time.monotonic() > deadline:
                pytest.fail(f"{len(pods)} pods: {_shape(pods)}")
            time.sleep(0.5)
    finally:
        tracker.cleanup()
        kube.delete("v1", "Namespace", namespace)
    real = _shape(pods)
    written = in_namespace([*nodes, _deployment("web")], namespace)
    ours = _shape([p for p in run_in_dralab(written, dralab_gates) if p.get("kind") == "Pod"])
    print(f"\nanti-affinity Deployment, {NODES} nodes / {REPLICAS} replicas: "
          f"kube-scheduler {real}, dralab {ours}")
    assert real[0] == [1] * NODES
    assert ours == real
