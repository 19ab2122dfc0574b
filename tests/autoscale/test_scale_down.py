"""Scale-down (Cluster Autoscaler's rules, DRA utilisation) and its clock: the
unneeded time and the delay after a scale-up; Karpenter's cheapest set and
consolidation."""

from __future__ import annotations

import pytest

from dralab.autoscale import AutoscalerOptions, ClusterAutoscaler, cluster_objects
from dralab.cluster import PodInfo
from dralab.scheduler import Scheduler, build_cluster

from .helpers import PRODUCT, Doc, fleet, load, pod, run, summary, template

TWO_H100 = fleet("cpu", "h100", h100={"count": 2})
ANY_GPU = template("any")
FIVE_GPUS = template("five", count=5)

SCENARIOS: list[tuple[str, list[Doc], list[tuple[str, float]]]] = [
    ("empty nodes go", [TWO_H100], [("h100-01", 0.0), ("h100-02", 0.0)]),
    ("never below min",
     [fleet("cpu", "h100", h100={"count": 2, "autoscaling": {"min": 1}})], [("h100-01", 0.0)]),
    ("a pod without a controller cannot move",
     [TWO_H100, pod("bare", cpu="1", node="h100-01", owned=False)], [("h100-02", 0.0)]),
    ("safe-to-evict lets a bare pod move",
     [TWO_H100, pod("bare", cpu="1", node="h100-01", owned=False,
                    annotations={"cluster-autoscaler.kubernetes.io/safe-to-evict": "true"})],
     [("h100-01", 0.0), ("h100-02", 0.0)]),  # the pod moves to a CPU node
    ("safe-to-evict false pins a replicated pod",
     [TWO_H100, pod("pinned", cpu="1", node="h100-01",
                    annotations={"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"})],
     [("h100-02", 0.0)]),
    # One GPU of eight in use: 0.125 by DRA, and the pod fits on the other node; that
    # node then holds it and cannot go too.
    ("a one-GPU pod moves to the other node", [TWO_H100, ANY_GPU, pod("p", "any")],
     [("h100-01", 0.125)]),
    # Five of eight GPUs: 0.625 >= 0.5 although its CPU is idle (CA reads DRA only).
    ("DRA utilisation above the threshold keeps a node",
     [TWO_H100, FIVE_GPUS, pod("p", "five")], [("h100-02", 0.0)]),
    ("a pod that fits nowhere else blocks",
     [fleet("cpu", "h100", h100={"count": 1}), ANY_GPU, pod("p", "any")], []),
    ("fixed pools never scale down", [fleet("cpu")], []),
]


@pytest.mark.parametrize(("docs", "expected"), [s[1:] for s in SCENARIOS],
                         ids=[s[0] for s in SCENARIOS])
def test_scale_down(docs: list[Doc], expected: list[tuple[str, float]]) -> None:
    doc = summary(run(*docs))
    assert doc["scaleUp"] == [] and doc["pending"] == []
    assert [(d["node"], d["utilization"]) for d in doc["scaleDown"]] == expected


def test_a_pod_no_group_can_help_does_not_stop_scale_down() -> None:
    # Cluster Autoscaler skips scale-down only in a loop that scaled up; a pod that
    # no node group can help stays pending and the empty nodes still go.
    doc = summary(run(TWO_H100, template("l4", cel=f"{PRODUCT}.contains('L4')"),
                      pod("p", "l4")))
    assert doc["scaleUp"] == []
    assert doc["pending"][0]["pod"] == "default/p"
    assert [d["node"] for d in doc["scaleDown"]] == ["h100-01", "h100-02"]


def test_no_scale_down_in_a_loop_that_scales_up() -> None:
    # The empty h100 node would go (see above), but this loop adds an L4 node.
    doc = summary(run(fleet("cpu", "h100", "l4", h100={"count": 1}),
                      template("l4", cel=f"{PRODUCT}.contains('L4')"), pod("p", "l4")))
    assert [u["pool"] for u in doc["scaleUp"]] == ["l4"]
    assert doc["scaleDown"] == []


def _model(*docs: Doc) -> tuple[ClusterAutoscaler, list[PodInfo]]:
    data = load(*docs)
    cluster, pending = build_cluster(cluster_objects(data))
    scheduler = Scheduler.build(cluster)
    result = scheduler.run(pending)
    waiting = [cluster.pods[f"default/{u.pod.metadata.name}"] for u in result.unplaced]
    return ClusterAutoscaler(scheduler, data.fleet, AutoscalerOptions()), waiting


def test_unneeded_time_must_pass() -> None:
    model, pending = _model(fleet("cpu", "h100", h100={"count": 1}))
    assert pending == []
    first = model.loop([], 0.0)
    assert [d.node for d in first.unneeded] == ["h100-01"] and first.scale_downs == ()
    # CA (unneeded.Nodes.RemovableAt) removes a node unneeded for longer than the
    # unneeded time: at exactly 600 s it is not yet; its next loop (10 s on) removes it.
    assert model.loop([], 599.0).scale_downs == ()
    assert model.loop([], 600.0).scale_downs == ()
    ready = model.loop([], 610.0)
    assert [(d.node, d.since) for d in ready.scale_downs] == [("h100-01", 0.0)]


def test_delay_after_add_blocks_scale_down() -> None:
    model, pending = _model(fleet("cpu", "h100", "l4", h100={"count": 1}),
                            template("l4", cel=f"{PRODUCT}.contains('L4')"), pod("p", "l4"))
    up = model.loop(pending, 0.0)
    assert [(u.pool, u.add, u.ready_at) for u in up.scale_ups] == [("l4", 1, 180.0)]
    assert up.unneeded == ()  # no scale-down in a loop that scaled up
    # The pod is helped by the node in flight: no second scale-up, and h100-01 is
    # unneeded from 60 s on -- but only removable 600 s after the scale-up.
    later = model.loop(pending, 60.0)
    assert later.scale_ups == () and later.helped_by_upcoming == ("default/p",)
    assert model.loop([], 100.0).scale_downs == ()
    assert model.loop([], 599.0).scale_downs == ()
    assert [d.node for d in model.loop([], 700.0).scale_downs] == ["h100-01"]


# The Karpenter cases below are about DRA-aware launches: --ignore-dra-requests=false.
def test_karpenter_launches_the_cheapest_set() -> None:
    docs = [fleet("cpu", "h100", "h100s", "l4"), ANY_GPU,
            *[pod(f"w{i:02d}", "any") for i in range(12)]]
    karpenter = summary(run(*docs, model="karpenter", ignore_dra_requests=False))
    assert [(u["pool"], u["add"], len(u["pods"])) for u in karpenter["scaleUp"]] == \
        [("l4", 2, 12)]  # $8/h, where Cluster Autoscaler's most-pods takes two H100s
    ca = summary(run(*docs, expander="most-pods"))
    assert [(u["pool"], u["add"]) for u in ca["scaleUp"]] == [("h100", 2)]


def test_karpenter_consolidation_deletes_a_node_whose_pods_fit_elsewhere() -> None:
    doc = summary(run(fleet("cpu", "l4", l4={"count": 2}), ANY_GPU, pod("p", "any"),
                      pod("q", "any"), model="karpenter", ignore_dra_requests=False))
    assert doc == {"scaleUp": [], "pending": [],
                   "scaleDown": [{"node": "l4-01", "pool": "l4", "utilization": 0.125}]}


def test_karpenter_consolidation_replaces_with_a_cheaper_node() -> None:
    doc = summary(run(fleet("cpu", "h100", "l4", h100={"count": 1}), ANY_GPU, pod("p", "any"),
                      model="karpenter", ignore_dra_requests=False))
    assert doc == {"scaleUp": [{"pool": "l4", "add": 1, "pods": ["default/p"]}],
                   "pending": [],
                   "scaleDown": [{"node": "h100-01", "pool": "h100", "utilization": 0.125}]}
    # Cluster Autoscaler only deletes: the pod fits on no other node, so nothing goes.
    assert summary(run(fleet("cpu", "h100", "l4", h100={"count": 1}), ANY_GPU,
                       pod("p", "any")))["scaleDown"] == []


def test_karpenter_launches_several_nodes_of_one_type() -> None:
    # Twenty one-GPU pods: l4 nodes ($4, eight GPUs) are cheapest per pod, node after node.
    docs = [fleet("cpu", "h100", "l4"), ANY_GPU, *[pod(f"w{i:02d}", "any") for i in range(20)]]
    doc = summary(run(*docs, model="karpenter", ignore_dra_requests=False))
    assert [(u["pool"], u["add"], len(u["pods"])) for u in doc["scaleUp"]] == [("l4", 3, 20)]
    assert doc["pending"] == []


def test_utilisation_is_measured_before_any_removal_is_simulated() -> None:
    # Cluster Autoscaler measures every candidate's utilisation on the cluster as it
    # is, then simulates the removals in order. small-01's pod moves onto small-02
    # first (60% then), but small-02 was at 30% when measured, so it is still a
    # candidate, and both pods move on to the fixed CPU nodes: both nodes go.
    small = {"name": "small", "count": 2, "cpu": "10", "memory": "40Gi",
             "autoscaling": {"min": 0, "max": 3, "pricePerHour": 1.0,
                             "provisioningDelay": "1m"}}
    pools = [small, {"name": "cpu", "count": 2, "cpu": "32", "memory": "128Gi"}]
    doc = summary(run({"apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet",
                       "metadata": {"name": "test"}, "spec": {"pools": pools}},
                      pod("a", cpu="3", node="small-01"), pod("b", cpu="3", node="small-02")))
    assert doc["scaleUp"] == [] and doc["pending"] == []
    assert [(d["node"], d["utilization"]) for d in doc["scaleDown"]] == [
        ("small-01", 0.3), ("small-02", 0.3)]
