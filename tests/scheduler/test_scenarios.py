"""Scenario table: small clusters, expected node per pod and the exact message."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from dralab.api.features import FeatureGates
from dralab.scheduler import schedule

from .builders import DRA_POST_FILTER, match, node, placements, pod, toleration

NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"


@dataclass
class Scenario:
    name: str
    objects: list[Any]
    placed: dict[str, str | None]
    messages: dict[str, str] = field(default_factory=dict)


def msg(head: str, preemption: str) -> str:
    return f"{head} {DRA_POST_FILTER}preemption: {preemption}"


SCENARIOS = [
    Scenario("fits", [node("a", "4"), pod("p", "2", "1Gi")], {"p": "a"}),
    Scenario("cpu larger than any node: unresolvable",
             [node("a", "1"), node("b", "1"), pod("p", "2")], {"p": None},
             {"p": msg("0/2 nodes are available: 2 Insufficient cpu.",
                       f"0/2 nodes are available: 2 {NOT_HELPFUL}.")}),
    Scenario("cpu and memory short on one node, both counted",
             [node("a", "2", "4Gi"), pod("used", "2", "4Gi", node_name="a"),
              pod("p", "1", "1Gi")], {"p": None},
             {"p": msg("0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory.",
                       f"0/1 nodes are available: 1 {NO_VICTIMS}.")}),
    Scenario("too many pods", [node("a", "4", pods=1), pod("used", node_name="a"),
                               pod("p", "1")], {"p": None},
             {"p": msg("0/1 nodes are available: 1 Too many pods.",
                       f"0/1 nodes are available: 1 {NO_VICTIMS}.")}),
    Scenario("ephemeral storage", [node("a", extra={"ephemeral-storage": "10Gi"}),
                                   pod("p", extra={"ephemeral-storage": "20Gi"})], {"p": None},
             {"p": msg("0/1 nodes are available: 1 Insufficient ephemeral-storage.",
                       f"0/1 nodes are available: 1 {NOT_HELPFUL}.")}),
    Scenario("nodeSelector", [node("a", labels={"gpu": "l4"}), node("b", labels={"gpu": "h100"}),
                              pod("p", "1", node_selector={"gpu": "h100"})], {"p": "b"}),
    Scenario("nodeSelector matches nothing",
             [node("a", labels={"gpu": "l4"}), pod("p", "1", node_selector={"gpu": "h100"})],
             {"p": None},
             {"p": msg("0/1 nodes are available: 1 node(s) didn't match Pod's node "
                       "affinity/selector.", f"0/1 nodes are available: 1 {NOT_HELPFUL}.")}),
    Scenario("required affinity In / NotIn",
             [node("a", labels={"zone": "z1"}), node("b", labels={"zone": "z2"}),
              node("c", labels={"zone": "z3"}),
              pod("in", "1", required=[match("zone", "In", "z2")]),
              pod("notin", "1", required=[match("zone", "NotIn", "z1", "z2")])],
             {"in": "b", "notin": "c"}),
    Scenario("required affinity terms are ORed",
             [node("a", labels={"x": "1"}), node("b", labels={"y": "1"}), node("c"),
              pod("p", "1", required=[match("x", "Exists"), match("y", "Exists")],
                  preferred=[(10, match("y", "Exists"))])], {"p": "b"}),
    Scenario("preferred affinity picks the heavier term",
             [node("a", labels={"disk": "ssd"}), node("b", labels={"disk": "hdd", "fast": "1"}),
              pod("p", "1", preferred=[(10, match("disk", "In", "ssd")),
                                       (50, match("fast", "Exists"))])], {"p": "b"}),
    Scenario("NoSchedule taint filters",
             [node("a", taints=["gpu=true:NoSchedule"]), node("b", "1"),
              pod("p", "2")], {"p": None},
             {"p": msg("0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated "
                       "taint(s).", f"0/2 nodes are available: 2 {NOT_HELPFUL}.")}),
    Scenario("tolerated taint",
             [node("a", taints=["gpu=true:NoSchedule", "x:NoExecute"]),
              pod("p", "1", tolerations=[toleration("gpu", "NoSchedule", "true"),
                                         toleration("x", operator="Exists")])], {"p": "a"}),
    Scenario("toleration value mismatch",
             [node("a", taints=["gpu=true:NoSchedule"]),
              pod("p", "1", tolerations=[toleration("gpu", "NoSchedule", "false")])],
             {"p": None}),
    Scenario("PreferNoSchedule steers but does not filter",
             [node("a", taints=["spot:PreferNoSchedule"]),
              node("b", taints=["spot:PreferNoSchedule"]), node("c", "1"),
              pod("p", "2"), pod("q", "500m")], {"p": "a", "q": "c"}),
    Scenario("cordoned node",
             [node("a", unschedulable=True), pod("p", "1")], {"p": None},
             {"p": msg("0/1 nodes are available: 1 node(s) were unschedulable.",
                       f"0/1 nodes are available: 1 {NOT_HELPFUL}.")}),
    Scenario("cordoned node tolerated",
             [node("a", unschedulable=True),
              pod("p", "1", tolerations=[toleration("node.kubernetes.io/unschedulable",
                                                    operator="Exists")])], {"p": "a"}),
    Scenario("higher priority first, whatever the input order",
             [node("a", "2"), pod("low", "2", priority=1), pod("high", "2", priority=10)],
             {"high": "a", "low": None}),
    Scenario("equal priority: arrival order",
             [node("a", "2"), pod("first", "2"), pod("second", "2")],
             {"first": "a", "second": None}),
    Scenario("extended resource", [node("a", gpus=1), node("b", gpus=4), pod("p", "1", gpus=3)],
             {"p": "b"}),
    Scenario("extended resource missing", [node("a"), pod("p", "1", gpus=1)], {"p": None},
             {"p": msg("0/1 nodes are available: 1 Insufficient nvidia.com/gpu.",
                       f"0/1 nodes are available: 1 {NOT_HELPFUL}.")}),
    Scenario("pods on nodes count", [node("a", "4"), node("b", "4"),
                                     pod("x", "3", node_name="a"), pod("p", "2")], {"p": "b"}),
    Scenario("no nodes", [pod("p", "1")], {"p": None},
             {"p": "no nodes available to schedule pods"}),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_scenario(scenario: Scenario) -> None:
    result = schedule(scenario.objects)
    got = placements(result)
    assert {k: got.get(k) for k in scenario.placed} == scenario.placed
    by_name = {u.pod.metadata.name: u for u in result.unplaced}
    for name, expected in scenario.messages.items():
        assert by_name[name].message == expected
        condition = by_name[name].pod.status.conditions[-1]
        assert (condition.type, condition.status, condition.reason, condition.message) == (
            "PodScheduled", "False", "Unschedulable", expected)


def test_placed_pod_is_bound() -> None:
    result = schedule([node("a"), pod("p", "1")])
    bound = result.placed[0].pod
    assert bound.spec.node_name == "a"
    assert [(c.type, c.status) for c in bound.status.conditions] == [("PodScheduled", "True")]
    assert [p.spec.node_name for p in result.pods] == ["a"]


def test_gated_pod_stays_pending_with_reason() -> None:
    result = schedule([node("a"), pod("g", "1", gates=["wait", "more"])])
    (unplaced,) = result.unplaced
    assert unplaced.reason == "SchedulingGated"
    assert unplaced.message == "waiting for scheduling gates: [wait more]"
    condition = unplaced.pod.status.conditions[-1]
    assert (condition.reason, condition.message) == (
        "SchedulingGated", "Scheduling is blocked due to non-empty scheduling gates")


def test_pod_held_by_another_pre_enqueue_plugin_gets_no_gate_wording() -> None:
    # A pod whose claim template does not exist has no scheduling gates: DynamicResources'
    # PreEnqueue holds it, and its message is reported with NotReadyForScheduling.
    # kube-scheduler 1.36.2 writes nothing into such a pod (its queue keeps it in
    # unschedulablePods, scheduling_queue.go runPreEnqueuePlugins); KEP-5501's condition
    # comes only with SchedulerPreEnqueuePodStatus.
    held = pod("h", "1", claims=[{"name": "gpu", "resourceClaimTemplateName": "missing"}])
    result = schedule([node("a"), held])
    (unplaced,) = result.unplaced
    assert unplaced.reason == "NotReadyForScheduling"
    assert unplaced.message == 'pod "default/h": ResourceClaim not created yet'
    assert unplaced.pod.status.conditions == []
    assert unplaced.pod.status.phase == "Pending"

    gates = FeatureGates().with_overrides({"SchedulerPreEnqueuePodStatus": True})
    (unplaced,) = schedule([node("a"), held], features=gates).unplaced
    condition = unplaced.pod.status.conditions[-1]
    assert (condition.reason, condition.message) == (
        "NotReadyForScheduling", 'pod "default/h": ResourceClaim not created yet')


def test_unknown_scheduler_left_alone() -> None:
    result = schedule([node("a"), pod("u", "1", scheduler_name="volcano")])
    (unplaced,) = result.unplaced
    assert unplaced.reason == "NoProfile"
    assert unplaced.pod.status.conditions == []
    assert not result.all_placed


def test_pods_without_namespace_get_default() -> None:
    result = schedule([node("a"), pod("p", "1", namespace=None)])
    assert result.placed[0].pod.metadata.namespace == "default"
