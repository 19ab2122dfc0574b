"""Cluster Autoscaler's node-removal simulation table, ported whole.

kubernetes/autoscaler, branch cluster-autoscaler-release-1.37 at
a16f0ae8b5578f09604371c75e0cad29ed794e59, cluster-autoscaler/simulator/cluster_test.go,
TestSimulateNodeRemoval (8 cases, ids = upstream's names), against dralab's
``simulate_node_removal`` with the scheduler's own plugins: CA's default drain rules
(testDeleteOptions: system pods, local storage and custom controllers block), the
ReplicaSet rs in the listers, every node of the case a destination. The removed
node stays a tainted ghost while its pods are placed, so a topology spread
constraint that ignores taints still counts it ("phantom zone").
"""

from __future__ import annotations

import pytest

from dralab.autoscale.drainability import (
    ControllerListers,
    DeleteOptions,
    DrainContext,
    default_rules,
)
from dralab.autoscale.scaledown import simulate_node_removal

from .builders_down import Doc, cluster_of, node, pod

RS_OWNER = ("ReplicaSet", "rs")
NOW = 1_800_000_000.0


def _node(name: str, hostname: bool = False) -> Doc:
    return node(name, 1000, 2000000, ready=True,
                labels={"kubernetes.io/hostname": name} if hostname else None)


def _rs_pod(name: str, milli_cpu: int, node_name: str) -> Doc:
    out = pod(name, milli_cpu, 100000, node_name=node_name, owner=RS_OWNER)
    out["metadata"]["ownerReferences"][0]["apiVersion"] = "extensions/v1beta1"
    return out


def _topo_pod(name: str, node_name: str, honor: bool) -> Doc:
    out = _rs_pod(name, 100, node_name)
    out["metadata"]["labels"] = {"app": "topo-app"}
    constraint: Doc = {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                       "whenUnsatisfiable": "DoNotSchedule", "minDomains": 2,
                       "labelSelector": {"matchLabels": {"app": "topo-app"}}}
    if honor:
        constraint["nodeTaintsPolicy"] = "Honor"
    out["spec"]["topologySpreadConstraints"] = [constraint]
    return out


N1, N2, N3, N4 = _node("n1"), _node("n2"), _node("n3"), _node("n4")
POD_A = _rs_pod("drainable-rs-pod-a", 100, "n2")
POD_B = _rs_pod("drainable-rs-pod-b", 100, "n2")
STANDALONE = pod("standalone-on-non-drainable", 100, 100000, node_name="n3")
LARGE = pod("large-pod-on-full", 1000, 100000, node_name="n4")
TOPO = [_node("topo-n1", True), _node("topo-n2", True), _node("topo-n3", True)]
DEFAULT_TOPO = [_topo_pod(f"default-tsc-pod-n{i}", f"topo-n{i}", False) for i in (1, 2, 3)]
HONOR_TOPO = [_topo_pod(f"honor-tsc-pod-n{i}", f"topo-n{i}", True) for i in (1, 2, 3)]
BLOCKERS = [pod("blocker-n2", 100, 100000, node_name="topo-n2"),
            pod("blocker-n3", 100, 100000, node_name="topo-n3")]

# (name, node to remove, nodes, pods, want rescheduled pods or None, want reason or None)
CASES: list[tuple[str, str, list[Doc], list[Doc], list[str] | None, str | None]] = [
    ("just an empty node, should be removed", "n1", [N1], [], [], None),
    ("just a drainable node, but nowhere for pods to go to", "n2", [N2], [POD_A, POD_B], None,
     "NoPlaceToMovePods"),
    ("drainable node, and a mostly empty node that can take its pods", "n2", [N2, N3],
     [POD_A, POD_B, STANDALONE], ["default/drainable-rs-pod-a", "default/drainable-rs-pod-b"],
     None),
    ("drainable node, and a full node that cannot fit anymore pods", "n2", [N2, N4],
     [POD_A, POD_B, LARGE], None, "NoPlaceToMovePods"),
    ("4 nodes, 1 empty, 1 drainable", "n1", [N1, N2, N4, N3],
     [POD_A, POD_B, STANDALONE, LARGE], [], None),
    ("topology spread constraint test - node unremovable due to phantom zone", "topo-n1", TOPO,
     [*DEFAULT_TOPO, *BLOCKERS], None, "NoPlaceToMovePods"),
    ("topology spread constraint test - node removable with nodeTaintsPolicy Honor", "topo-n1",
     TOPO, HONOR_TOPO, ["default/honor-tsc-pod-n1"], None),
    ("candidate not in clusterSnapshot should be marked unremovable", "n5", [], [], None,
     "NoNodeInfo"),
]

RULES = default_rules(DeleteOptions(skip_nodes_with_system_pods=True,
                                    skip_nodes_with_local_storage=True,
                                    skip_nodes_with_custom_controller_pods=True))
CTX = DrainContext(now=NOW, listers=ControllerListers(replica_sets={("default", "rs"): 5}))


@pytest.mark.parametrize(("name", "nodes", "pods", "want_moved", "want_reason"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_simulate_node_removal(name: str, nodes: list[Doc], pods: list[Doc],
                               want_moved: list[str] | None, want_reason: str | None) -> None:
    cluster, scheduler = cluster_of([*nodes, *pods])
    before = {n: [p.key for p in cluster.nodes[n].pods] for n in cluster.node_names()}
    destinations = [n["metadata"]["name"] for n in nodes]
    moved, unremovable = simulate_node_removal(scheduler, name, destinations, RULES, CTX)
    if want_reason is None:
        assert (moved, unremovable) == (want_moved, None)
    else:
        assert moved == [] and unremovable is not None
        assert (unremovable.node, unremovable.reason) == (name, want_reason)
    # Not persisted: the cluster is as it was.
    assert {n: [p.key for p in cluster.nodes[n].pods] for n in cluster.node_names()} == before
