"""DynamicResources' queueing hints: a pod waiting for devices is retried when a claim is
deallocated or slices arrive, not when other claims are merely allocated; a pod waiting
for its shared claim to exist is re-checked when it is created."""

from __future__ import annotations

from dralab.cluster import ClusterState
from dralab.scheduler import Scheduler

from .builders import claim, gpu_class, gpus, node, pod, request, template


def _cluster() -> ClusterState:
    cluster = ClusterState()
    cluster.add_class(gpu_class())
    cluster.add_template(template("one", request()))
    cluster.add_node(node("n1"), [gpus("n1", 1)])
    return cluster


def test_device_freed_by_a_finished_pod_moves_the_waiting_pod() -> None:
    cycles: list[str] = []
    scheduler = Scheduler.build(_cluster(), observe=lambda a: cycles.append(a.pod.key))
    first = scheduler.add_pod(pod("first", templates={"gpu": "one"}))
    second = scheduler.add_pod(pod("second", templates={"gpu": "one"}))
    scheduler.schedule_pending()
    assert first.assumed_node == "n1" and second.assumed_node is None
    # Another node's devices being taken is no news for "second".
    cycles.clear()
    scheduler.cluster.add_node(node("n2"), [gpus("n2", 1)])
    third = scheduler.add_pod(pod("third", templates={"gpu": "one"}))
    scheduler.schedule_pending()
    # The new node (NodeAdded, SlicesChanged) moved "second" to backoffQ; "third", fresh
    # in activeQ, goes first and takes n2; "second" is tried again and waits.
    assert cycles == ["default/third", "default/second"]
    assert third.assumed_node == "n2" and second.assumed_node is None
    cycles.clear()
    scheduler.schedule_pending()
    assert cycles == []
    # "first" finishes: its generated claim is deleted, its device is free.
    scheduler.delete_pod(first.key)
    scheduler.schedule_pending()
    assert cycles == ["default/second"] and second.assumed_node == "n1"


def test_pod_waiting_for_its_shared_claim_is_rechecked_when_it_appears() -> None:
    cluster = _cluster()
    scheduler = Scheduler.build(cluster)
    waiting = scheduler.add_pod(pod("user", claims={"gpu": "shared"}))
    assert scheduler.schedule_pending() == 0
    assert waiting.key in scheduler.queue.gated
    cluster.add_claim(claim("shared", request()))
    assert scheduler.schedule_pending() == 1
    assert waiting.assumed_node == "n1"
