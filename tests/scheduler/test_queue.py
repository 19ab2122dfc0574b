"""The scheduling queue and loop: back-off, queueing hints, PreEnqueue re-checks,
pop from backoffQ, the leftover flush, equivalence classes and Permit Wait."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
import pytest

from dralab.api.core import Pod
from dralab.cluster import ClusterState, PodInfo
from dralab.scheduler.framework import CycleState, Handle, Status
from dralab.scheduler.plugins.prioritysort import PrioritySort
from dralab.scheduler.plugins.registry import default_registry
from dralab.scheduler.queue import SchedulingQueue
from dralab.scheduler.scheduler import Scheduler, StillClock

from .builders import node, pod


def _cluster(*objects: object) -> ClusterState:
    cluster = ClusterState()
    for obj in objects:
        cluster.add_node(obj)  # type: ignore[arg-type]
    return cluster


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(("attempts", "seconds"),
                         [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 10.0), (9, 10.0)])
def test_backoff_doubles_from_one_second_to_ten(attempts: int, seconds: float) -> None:
    queue = SchedulingQueue(PrioritySort())
    queued = queue.add(PodInfo(pod("p", "1")))
    queued.attempts, queued.failed_at = attempts, 100.0
    assert queued.backoff_expiry() == 100.0 + seconds


def test_pod_rejected_for_resources_waits_for_a_pod_to_leave() -> None:
    clock = _Clock()
    cluster = _cluster(node("n1", cpu="4"))
    scheduler = Scheduler.build(cluster, clock=clock)
    big = scheduler.add_pod(pod("big", "3"))
    scheduler.schedule_pending()
    assert big.assumed_node == "n1"
    waiting = scheduler.add_pod(pod("waiting", "2"))
    assert scheduler.schedule_pending() == 1
    assert waiting.assumed_node is None
    # A new pending pod, a bound pod, a pod status write: none frees room.
    other = scheduler.add_pod(pod("small", "1"))
    assert scheduler.schedule_pending() == 1
    assert other.assumed_node == "n1"
    clock.now = 30.0
    assert scheduler.schedule_pending() == 0
    # The assigned pod leaves: NodeResourcesFit's hint moves "waiting" back.
    scheduler.delete_pod(big.key)
    assert scheduler.schedule_pending() == 1
    assert waiting.assumed_node == "n1"


def test_taint_rejection_is_not_retried_when_a_pod_leaves_but_when_a_node_comes() -> None:
    clock = _Clock()
    cluster = _cluster(node("tainted", taints=["dedicated=infer:NoSchedule"]))
    scheduler = Scheduler.build(cluster, clock=clock)
    bound = scheduler.add_pod(pod("bound", "1", node_name="tainted"))
    waiting = scheduler.add_pod(pod("waiting", "1"))
    assert scheduler.schedule_pending() == 1
    scheduler.delete_pod(bound.key)
    assert scheduler.schedule_pending() == 0  # TaintToleration ignores pod deletions
    cluster.add_node(node("clean"))
    assert scheduler.schedule_pending() == 1
    assert waiting.assumed_node == "clean"


def test_leftover_flush_after_five_minutes() -> None:
    clock = _Clock()
    scheduler = Scheduler.build(_cluster(node("n1", cpu="1")), clock=clock)
    scheduler.add_pod(pod("p", "2"))
    assert scheduler.schedule_pending() == 1
    # Flushed on the 30 s tick after it has waited more than five minutes.
    assert scheduler.next_wakeup() == 330.0
    clock.now = 300.0
    assert scheduler.schedule_pending() == 0
    clock.now = 330.0
    assert scheduler.schedule_pending() == 1


def test_active_queue_before_backoff_queue() -> None:
    """A pod moved back while backing off waits behind every active pod, then is
    taken at once when activeQ is empty (SchedulerPopFromBackoffQ)."""
    clock = _Clock()
    cluster = _cluster(node("n1", cpu="4"))
    order: list[str] = []
    scheduler = Scheduler.build(cluster, clock=clock,
                                observe=lambda a: order.append(a.pod.pod.metadata.name or ""))
    holder = scheduler.add_pod(pod("holder", "4", priority=100))  # not preemptible
    scheduler.schedule_pending()
    scheduler.add_pod(pod("first", "2", priority=10))
    scheduler.schedule_pending()
    scheduler.delete_pod(holder.key)          # "first" goes to backoffQ (failed at 0 s)
    scheduler.add_pod(pod("second", "1"))     # activeQ, lower priority
    order.clear()
    scheduler.schedule_pending()
    assert order == ["second", "first"]


def test_scheduling_gates_rechecked_when_removed() -> None:
    scheduler = Scheduler.build(_cluster(node("n1")))
    gated = scheduler.add_pod(pod("gated", "1", gates=["example.com/wait"]))
    assert scheduler.schedule_pending() == 0
    assert "default/gated" in scheduler.queue.gated
    ungated = msgspec.structs.replace(gated.pod, spec=msgspec.structs.replace(
        gated.pod.spec, scheduling_gates=[]))
    scheduler.update_pod(gated, ungated)
    assert scheduler.schedule_pending() == 1
    assert gated.assumed_node == "n1"


def test_equivalent_pods_cost_one_cycle_per_event() -> None:
    clock = _Clock()
    scheduler = Scheduler.build(_cluster(node("n1", cpu="2")), clock=clock)
    holder = scheduler.add_pod(pod("holder", "2"))
    scheduler.schedule_pending()
    pods = [scheduler.add_pod(pod(f"p{i}", "1"), equivalence="kind") for i in range(6)]
    assert scheduler.schedule_pending() == 1     # p0 fails; p1..p5 join its class
    assert scheduler.parked == 5
    scheduler.delete_pod(holder.key)
    assert scheduler.schedule_pending() == 3     # p0, p1 placed; p2 fails for the class
    assert [p.assumed_node for p in pods] == ["n1", "n1", None, None, None, None]


def test_the_same_pods_without_classes_each_take_a_cycle() -> None:
    scheduler = Scheduler.build(_cluster(node("n1", cpu="2")))
    scheduler.add_pod(pod("holder", "2"))
    scheduler.schedule_pending()
    for i in range(6):
        scheduler.add_pod(pod(f"p{i}", "1"))
    assert scheduler.schedule_pending() == 6


class _WaitPermit:
    """A Permit plugin that holds every pod for ``timeout`` seconds."""

    name = "HoldAll"

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout

    @classmethod
    def factory(cls, timeout: float) -> Any:
        def create(args: Mapping[str, Any], handle: Handle) -> _WaitPermit:
            return cls(timeout)
        return create

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        return Status.wait(self.name, self.timeout)

    def events_to_register(self) -> tuple[()]:
        return ()


def _holding(timeout: float, **kwargs: Any) -> Scheduler:
    registry = default_registry().with_plugin("HoldAll", _WaitPermit.factory(timeout))
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1",
              "kind": "KubeSchedulerConfiguration",
              "profiles": [{"schedulerName": "default-scheduler",
                            "plugins": {"permit": {"enabled": [{"name": "HoldAll"}]}}}]}
    return Scheduler.build(_cluster(node("n1", cpu="2")), config, registry=registry, **kwargs)


def test_permit_wait_times_out_with_upstreams_message() -> None:
    scheduler = _holding(600)
    result = scheduler.run([scheduler.cluster.add_pod(pod("p", "1"))])
    assert not result.placed
    [left] = result.unplaced
    assert left.message.startswith(
        "0/1 nodes are available: 1 rejected due to timeout after waiting 10m0s at plugin "
        "HoldAll.")
    assert left.pod.spec.node_name is None
    assert scheduler.cluster.nodes["n1"].pods == []


def test_permit_wait_holds_the_room_until_allowed() -> None:
    clock = StillClock()
    scheduler = _holding(60, clock=clock)
    first = scheduler.add_pod(pod("first", "2"))
    scheduler.schedule_pending()
    waiting = scheduler.waiting.get(first.key)
    assert waiting is not None and waiting.pending_plugins == ["HoldAll"]
    second = scheduler.add_pod(pod("second", "2"))
    scheduler.schedule_pending()
    assert second.assumed_node is None        # the waiting pod keeps its node's room
    waiting.allow("HoldAll")
    scheduler.schedule_pending()
    assert first.pod.spec.node_name == "n1"
    assert scheduler.waiting.get(first.key) is None


def test_no_rejecting_in_tree_plugin_lacks_hints() -> None:
    from dralab.scheduler.profile import parse_config

    cluster = ClusterState()
    scheduler = Scheduler.build(cluster, parse_config(None))
    framework = scheduler.frameworks["default-scheduler"]
    rejecting = {name for point in ("preEnqueue", "preFilter", "filter", "reserve", "permit")
                 for name in framework.points[point]}
    lacking = {name for name in rejecting
               if not callable(getattr(framework.plugins[name], "events_to_register", None))}
    assert rejecting and not lacking, lacking


def test_pod_objects_are_not_mutated_by_the_queue() -> None:
    scheduler = Scheduler.build(_cluster(node("n1")))
    original: Pod = pod("p", "1")
    scheduler.add_pod(original)
    scheduler.schedule_pending()
    assert original.spec.node_name is None
