"""Preemption's remembered dry runs (``plugins/dryruns.py``): a pod asking again gets
the failures that cannot have changed from memory, and a fresh dry run wherever
something it read changed: the node's pods, or devices of a pool the node sees
taken or freed by a pod elsewhere. And what-ifs leave the queue as it was."""

from __future__ import annotations

import msgspec

from dralab.api.base import ObjectMeta
from dralab.cluster import ClusterState
from dralab.scheduler.plugins.defaultpreemption import DefaultPreemption
from dralab.scheduler.plugins.dryruns import DryRuns
from dralab.scheduler.scheduler import Scheduler

from . import builders as b
from .dra import builders as dra


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _dry_runs(scheduler: Scheduler) -> DryRuns:
    plugin = scheduler.frameworks["default-scheduler"].plugins["DefaultPreemption"]
    assert isinstance(plugin, DefaultPreemption)
    return plugin._dry_runs


def test_a_failure_is_remembered_until_the_node_changes() -> None:
    cluster = ClusterState()
    cluster.add_node(b.node("a", cpu="8"))
    clock = _Clock()
    scheduler = Scheduler.build(cluster, clock=clock)
    high = scheduler.add_pod(b.pod("high", "4", priority=100, node_name="a"))
    scheduler.add_pod(b.pod("low", "4", priority=0, node_name="a"))
    mid = scheduler.add_pod(b.pod("mid", "6", priority=50))
    scheduler.schedule_pending()
    # Evicting "low" leaves 4 cpu: too little. The dry run on "a" fails.
    assert mid.assumed_node is None
    runs = _dry_runs(scheduler)
    assert (runs.hits, runs.misses) == (0, 1)
    # An event elsewhere (a new node too small for "mid") asks again: remembered.
    cluster.add_node(b.node("tiny", cpu="1"))
    clock.now = 20.0
    scheduler.schedule_pending()
    assert (runs.hits, runs.misses) == (1, 1)
    # "high" leaves and a second low-priority pod takes its place: now evicting both
    # low pods makes room, which only a fresh dry run on "a" can find.
    scheduler.delete_pod(high.key)
    scheduler.add_pod(b.pod("low2", "4", priority=0, node_name="a"))
    clock.now = 40.0
    scheduler.schedule_pending()
    assert mid.assumed_node == "a"
    assert runs.misses == 2


def _shared_device() -> dra.ResourceSlice:
    base = dra.gpus("x", 1, pool="shared", prefix="net-")
    spec = msgspec.structs.replace(base.spec, node_name=None, all_nodes=True)
    return msgspec.structs.replace(base, metadata=ObjectMeta(name="shared-pool"), spec=spec)


def test_a_device_freed_on_another_node_makes_the_node_ask_again() -> None:
    # One network-attached device, seen by every node, held by "holder" on node m.
    # "mid" may run on node a only, where "low" takes all the cpu: evicting "low" is
    # not enough while the device is taken. Once "holder" leaves m (no event on a),
    # the pool's change sends a to a fresh dry run, which evicts "low".
    cpu8 = {"cpu": 8}
    state = dra.cluster([dra.node("a", {"kubernetes.io/hostname": "a"}, cpu8),
                         dra.node("m", {"kubernetes.io/hostname": "m"}, cpu8)],
                        [_shared_device()], templates=[dra.template("net")])
    clock = _Clock()
    scheduler = Scheduler.build(state, clock=clock)
    one_cpu = [dra.container(claims=["gpu"], requests={"cpu": 1})]
    holder = scheduler.add_pod(dra.pod("holder", templates={"gpu": "net"}, priority=100,
                                       nodes=["m"], containers=one_cpu))
    scheduler.schedule_pending()
    assert holder.assumed_node == "m"
    low = scheduler.add_pod(dra.pod("low", priority=0, nodes=["a"],
                                    containers=[dra.container(requests={"cpu": 8})]))
    scheduler.schedule_pending()
    assert low.assumed_node == "a"
    mid = scheduler.add_pod(dra.pod("mid", templates={"gpu": "net"}, priority=50,
                                    nodes=["a"], containers=[dra.container(
                                        claims=["gpu"], requests={"cpu": 4})]))
    scheduler.schedule_pending()
    assert mid.assumed_node is None
    runs = _dry_runs(scheduler)
    assert runs.misses == 1
    scheduler.delete_pod(holder.key)
    clock.now = 20.0
    scheduler.schedule_pending()
    assert mid.assumed_node == "a"
    assert low.key not in state.pods
    assert runs.misses == 2


def test_a_what_if_does_not_move_waiting_pods() -> None:
    cluster = ClusterState()
    cluster.add_node(b.node("a", cpu="2"))
    clock = _Clock()
    scheduler = Scheduler.build(cluster, clock=clock)
    waiting = scheduler.add_pod(b.pod("waiting", "4"))
    assert scheduler.schedule_pending() == 1
    assert scheduler.queue.pods[waiting.key].where == "unschedulable"
    # A node that would fit it, added and taken back inside a what-if whose inner
    # what-if drains the store's events: the pod stays where it waits.
    scheduler.fork()
    cluster.add_node(b.node("big", cpu="8"))
    scheduler.fork()
    scheduler.revert()
    scheduler.revert()
    clock.now = 20.0
    assert scheduler.schedule_pending() == 0
    assert scheduler.queue.pods[waiting.key].where == "unschedulable"
    # The same node, kept (committed): its event reaches the pod, which is placed.
    scheduler.fork()
    cluster.add_node(b.node("big", cpu="8"))
    scheduler.fork()
    scheduler.revert()
    scheduler.commit()
    assert scheduler.schedule_pending() == 1
    assert waiting.assumed_node == "big"


def test_unrecorded_rejections_count_a_node_once() -> None:
    # A pod nominated to a node it no longer fits: that node is tried alone first
    # (rejected), then the ring search rejects it again and places the pod elsewhere.
    # kube-scheduler moves its start index by the nodes processed, each node once;
    # not recording the ring search's rejections must not count that node twice.
    def start_after(record: bool) -> int:
        cluster = ClusterState()
        for i in range(40):  # enough nodes for the masked search
            cluster.add_node(b.node(f"n{i:02d}", cpu="1" if i < 20 else "8"))
        scheduler = Scheduler.build(cluster)
        scheduler.cycle.record_rejections = record
        scheduler.cycle.next_start_node_index = 3
        pending = b.pod("p", "2")
        pending = msgspec.structs.replace(pending, status=msgspec.structs.replace(
            pending.status, nominated_node_name="n05"))
        info = scheduler.add_pod(pending)
        scheduler.schedule_pending()
        assert info.assumed_node is not None and info.assumed_node >= "n20"
        return scheduler.cycle.next_start_node_index

    assert start_after(False) == start_after(True)
