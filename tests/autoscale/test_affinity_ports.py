"""The autoscaler's estimate with host ports and pod anti-affinity: the scheduler's NodePorts
and InterPodAffinity plugins decide how many pods a new node takes, as in Cluster Autoscaler's
binpacking estimator (which runs kube-scheduler's Filter plugins on its template node).

Upstream's case "hostport conflict forces pod-per-node" (binpacking_estimator_test.go,
TestBinpackingEstimate) is ported with the whole table in
tests/peers/ca/test_binpacking_estimator.py; here, the same shape through a whole loop: a
1-CPU, 5000 MiB template node; 8 pods of 200m CPU and 1000 MiB with hostPort 5555 need 8
nodes (without the port they fit 5 to a node).
"""

from __future__ import annotations

from typing import Any

from .helpers import fleet, pod, run

POOL = {"count": 0, "cpu": "1", "memory": "5000Mi",
        "autoscaling": {"min": 0, "max": 20, "pricePerHour": 1.0,
                        "provisioningDelay": "1m", "priority": 0}}


def _estimatee(i: int, host_port: int | None = None,
               anti_affinity: bool = False) -> dict[str, Any]:
    doc = pod(f"estimatee-{i}", cpu="200m", memory="1000Mi", labels={"app": "estimatee"})
    if host_port is not None:
        doc["spec"]["containers"][0]["ports"] = [{"containerPort": host_port,
                                                  "hostPort": host_port}]
    if anti_affinity:
        doc["spec"]["affinity"] = {"podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [{
                "labelSelector": {"matchLabels": {"app": "estimatee"}},
                "topologyKey": "kubernetes.io/hostname"}]}}
    return doc


def _added(*pods: dict[str, Any]) -> list[tuple[str, int]]:
    decisions = run(fleet("cpu", cpu=POOL), *pods).to_dict()
    assert decisions["pending"] == []
    return [(up["pool"], up["add"]) for up in decisions["scaleUp"]]


def test_without_the_port_pods_share_nodes() -> None:
    assert _added(*(_estimatee(i) for i in range(8))) == [("cpu", 2)]


def test_required_anti_affinity_forces_a_pod_per_node() -> None:
    assert _added(*(_estimatee(i, anti_affinity=True) for i in range(6))) == [("cpu", 6)]
