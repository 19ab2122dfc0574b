"""DefaultPreemption: victims, node choice, retry, PreemptionPolicy."""

from __future__ import annotations

from dralab.cluster import PodInfo
from dralab.scheduler import schedule
from dralab.scheduler.plugins.defaultpreemption import Candidate, importance, pick_one_node

from .builders import DRA_POST_FILTER, node, placements, pod, priority_class


def test_evicts_lower_priority_and_retries() -> None:
    result = schedule([node("a", "4"), pod("low", "3", priority=1, node_name="a"),
                       pod("high", "3", priority=100)])
    assert placements(result) == {"high": "a"}
    (evicted,) = result.evicted
    assert (evicted.pod.metadata.name, evicted.node, evicted.preemptor) == (
        "low", "a", "default/high")
    condition = evicted.pod.status.conditions[-1]
    assert (condition.type, condition.reason, condition.message) == (
        "DisruptionTarget", "PreemptionByScheduler",
        "default-scheduler: preempting to accommodate a higher priority pod")
    (placed,) = result.placed
    assert placed.attempts == 2
    assert placed.pod.status.nominated_node_name is None
    # Every pod is reported, the victim included, in arrival order.
    assert [p.metadata.name for p in result.pods] == ["low", "high"]
    assert not result.all_placed


def test_reprieves_the_more_important_victims() -> None:
    result = schedule([
        node("a", "4"),
        pod("v1", "1", priority=1, node_name="a"), pod("v5", "1", priority=5, node_name="a"),
        pod("v3", "2", priority=3, node_name="a"), pod("high", "2", priority=100)])
    # All three are removed, then put back most important first: v5 fits with high,
    # v3 does not (evicted), v1 does again. Only v3 goes.
    assert placements(result)["high"] == "a"
    assert [e.pod.metadata.name for e in result.evicted] == ["v3"]


def test_prefers_node_with_lowest_priority_victims() -> None:
    result = schedule([
        node("a", "4"), node("b", "4"),
        pod("mid", "3", priority=50, node_name="a"), pod("low", "3", priority=10, node_name="b"),
        pod("high", "3", priority=100)])
    assert placements(result)["high"] == "b"
    assert [e.pod.metadata.name for e in result.evicted] == ["low"]


def test_fewest_victims_on_a_tie() -> None:
    result = schedule([
        node("a", "4"), node("b", "4"),
        pod("a1", "2", priority=10, node_name="a"), pod("a2", "2", priority=10, node_name="a"),
        pod("b1", "3", priority=10, node_name="b"), pod("high", "4", priority=100)])
    # Both nodes need evictions of priority 10; b's sum of priorities is smaller.
    assert placements(result)["high"] == "b"
    assert [e.pod.metadata.name for e in result.evicted] == ["b1"]


def test_no_victims_of_lower_priority() -> None:
    result = schedule([node("a", "4"), pod("peer", "3", priority=100, node_name="a"),
                       pod("high", "3", priority=100)])
    (unplaced,) = result.unplaced
    assert unplaced.message == (
        f"0/1 nodes are available: 1 Insufficient cpu. {DRA_POST_FILTER}preemption: "
        "0/1 nodes are available: 1 No preemption victims found for incoming pod.")
    assert result.evicted == ()


def test_eviction_would_not_help() -> None:
    # Removing every lower-priority pod still leaves too little cpu: the Filter
    # rejection on the emptied node is what preemption reports.
    result = schedule([node("a", "4"), pod("peer", "2", priority=100, node_name="a"),
                       pod("low", "1", priority=1, node_name="a"),
                       pod("high", "3", priority=100)])
    (unplaced,) = result.unplaced
    assert unplaced.message == (
        f"0/1 nodes are available: 1 Insufficient cpu. {DRA_POST_FILTER}preemption: "
        "0/1 nodes are available: 1 Insufficient cpu.")
    assert result.evicted == ()


def test_preemption_policy_never_on_pod() -> None:
    result = schedule([node("a", "4"), pod("low", "3", priority=1, node_name="a"),
                       pod("high", "3", priority=100, preemption_policy="Never")])
    (unplaced,) = result.unplaced
    assert unplaced.message.endswith("preemption: not eligible due to preemptionPolicy=Never.")
    assert result.evicted == ()


def test_preemption_policy_never_from_priority_class() -> None:
    result = schedule([priority_class("batch", 1000, preemption_policy="Never"),
                       node("a", "4"), pod("low", "3", priority=1, node_name="a"),
                       pod("high", "3", priority_class="batch")])
    assert result.evicted == ()
    assert result.unplaced[0].pod.metadata.name == "high"


def test_priority_class_value_and_global_default() -> None:
    result = schedule([priority_class("base", 5, global_default=True),
                       priority_class("urgent", 1000), node("a", "2"),
                       pod("plain", "2"), pod("urgent", "2", priority_class="urgent")])
    assert placements(result) == {"urgent": "a", "plain": None}


def test_unschedulable_pods_retried_after_eviction() -> None:
    # "waiting" cannot fit anywhere at first; the eviction on node a frees room for it
    # too once "high" took its share, so it is retried and lands.
    result = schedule([
        node("a", "4"), pod("low", "4", priority=1, node_name="a"),
        pod("high", "2", priority=100), pod("waiting", "2", priority=50)])
    assert placements(result) == {"high": "a", "waiting": "a"}


def _info(name: str, priority: int, sequence: int) -> PodInfo:
    return PodInfo(pod=pod(name), priority=priority, sequence=sequence)


def test_pick_one_node_criteria() -> None:
    a = Candidate("a", (_info("a1", 10, 1),))
    b = Candidate("b", (_info("b1", 5, 2), _info("b2", 5, 3)))
    c = Candidate("c", (_info("c1", 5, 4),))
    assert pick_one_node([a, b, c]) is c  # lowest top priority, then smaller sum
    d = Candidate("d", (_info("d1", 5, 9),))
    assert pick_one_node([c, d]) is d  # same priorities and count: the later start
    assert pick_one_node([]) is None


def test_importance_order() -> None:
    pods = [_info("x", 1, 3), _info("y", 9, 2), _info("z", 1, 1)]
    assert [p.key for p in sorted(pods, key=importance)] == [
        "default/y", "default/z", "default/x"]
