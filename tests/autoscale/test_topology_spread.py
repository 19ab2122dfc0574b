"""The autoscaler's estimate with topology spread constraints: PodTopologySpread decides how
many pods each new node takes, as in Cluster Autoscaler's binpacking estimator (which runs
kube-scheduler's Filter plugins on its template nodes, the cluster's other nodes counting as
domains).

Upstream's table (kubernetes/autoscaler cluster-autoscaler/estimator/
binpacking_estimator_test.go, TestBinpackingEstimate), its topology spreading cases included,
is ported whole in tests/peers/ca/test_binpacking_estimator.py. Here, the zonal case through a
whole loop: the old node (100m CPU, 100 MiB, zone-jupiter) carries a NoSchedule taint so the
loop's scheduling leaves it empty; PodTopologySpread still counts it as an empty domain
(nodeTaintsPolicy Ignore, the default) and no pod lands on it. The template node: 1 CPU,
5000 MiB, 10 pods, zone-mars.
"""

from __future__ import annotations

from typing import Any

from .helpers import fleet, pod, run

TEMPLATE = {"count": 0, "cpu": "1", "memory": "5000Mi", "pods": 10,
            "topology": {"zone": "zone-mars"},
            "autoscaling": {"min": 0, "max": 20, "pricePerHour": 1.0,
                            "provisioningDelay": "1m", "priority": 0}}
OLD_NODE = {"name": "old", "count": 1, "cpu": "100m", "memory": "100Mi", "pods": 10,
            "topology": {"zone": "zone-jupiter"},
            "taints": [{"key": "dralab.dev/estimator-only", "value": "true",
                        "effect": "NoSchedule"}]}
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def _fleet() -> dict[str, Any]:
    doc = fleet("cpu", cpu=TEMPLATE)
    doc["spec"]["pools"].insert(0, dict(OLD_NODE))
    return doc


def _estimatee(i: int, key: str, max_skew: int, cpu: str, memory: str) -> dict[str, Any]:
    doc = pod(f"estimatee-{i}", cpu=cpu, memory=memory, owned=False,
              labels={"app": "estimatee"})
    doc["spec"]["topologySpreadConstraints"] = [{
        "maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "estimatee"}}, "minDomains": 1}]
    return doc


def _outcome(model: str, *pods: dict[str, Any]) -> tuple[list[tuple[str, int, int]], int]:
    decisions = run(_fleet(), *pods, model=model).to_dict()
    ups = [(up["pool"], up["add"], len(up["pods"])) for up in decisions["scaleUp"]]
    return ups, len(decisions["pending"])


def test_zonal_spread_max_skew_2_only_allows_2_pods() -> None:
    pods = [_estimatee(i, ZONE, 2, "20m", "100") for i in range(8)]
    ups, pending = _outcome("cluster-autoscaler", *pods)
    assert ups == [("cpu", 1, 2)]
    assert pending == 6


def test_without_the_constraint_pods_share_nodes() -> None:
    pods = [_estimatee(i, HOSTNAME, 2, "200m", "200") for i in range(8)]
    for doc in pods:
        del doc["spec"]["topologySpreadConstraints"]
    assert _outcome("cluster-autoscaler", *pods) == ([("cpu", 2, 8)], 0)


def test_karpenter_model_packs_by_the_same_filter() -> None:
    # Karpenter's own scheduling simulation honours topology spread too (its
    # topology.go): the hostname case gives the same node count.
    pods = [_estimatee(i, HOSTNAME, 2, "200m", "200") for i in range(8)]
    assert _outcome("karpenter", *pods) == ([("cpu", 4, 8)], 0)
