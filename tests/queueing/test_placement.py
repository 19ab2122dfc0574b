"""The whole-pod-set check: every pod through the real scheduler on a fork."""

from __future__ import annotations

from dralab.queueing.placement import (
    GangFailure,
    GangPlacement,
    commit_pod_sets,
    place_pod_sets,
)
from dralab.scheduler.scheduler import Scheduler

from .fleets import NS, contents, gpu_pod, h100_cluster


def test_five_full_node_pods_do_not_fit_four_nodes_though_each_alone_would() -> None:
    scheduler = Scheduler.build(h100_cluster(4))
    pods = [gpu_pod(f"w-{i}") for i in range(5)]
    for pod in pods:
        assert isinstance(place_pod_sets(scheduler, [pod]), GangPlacement)
    four = place_pod_sets(scheduler, pods[:4])
    assert isinstance(four, GangPlacement)
    assert sorted(four.nodes().values()) == ["h100-01", "h100-02", "h100-03", "h100-04"]
    for placed in four.pods:
        (devices,) = placed.devices.values()
        assert len(devices) == 8 and all(d.startswith("gpu.nvidia.com/") for d in devices)
        assert all(f"/{placed.node}/" in d for d in devices)  # the node's own pool
    five = place_pod_sets(scheduler, pods)
    assert isinstance(five, GangFailure)
    assert (five.pod, five.placed) == (f"{NS}/w-4", 4)
    assert "0/4 nodes are available" in five.message
    assert "cannot allocate all claims" in five.message


def test_a_check_changes_nothing_not_even_the_runs_randomness() -> None:
    scheduler = Scheduler.build(h100_cluster(4))
    cluster = scheduler.cluster
    before = contents(cluster)
    state, start = scheduler.cycle.rng.getstate(), scheduler.cycle.next_start_node_index
    version = cluster.version
    for count in (3, 5):
        place_pod_sets(scheduler, [gpu_pod(f"w-{i}") for i in range(count)])
        assert contents(cluster) == before
        assert scheduler.cycle.rng.getstate() == state
        assert scheduler.cycle.next_start_node_index == start
        assert not cluster.forks
    assert cluster.version > version  # versions only grow; contents are what count
    # The loop carries on as if nothing was tried: same placements as a fresh run.
    fresh = Scheduler.build(h100_cluster(4))
    for s in (scheduler, fresh):
        for i in range(3):
            s.add_pod(gpu_pod(f"real-{i}", 4))
    placed = [(p.pod.metadata.name, p.node) for p in scheduler.run().placed]
    assert placed == [(p.pod.metadata.name, p.node) for p in fresh.run().placed]


def test_commit_binds_a_full_set_and_keeps_nothing_of_a_partial_one() -> None:
    scheduler = Scheduler.build(h100_cluster(4))
    cluster = scheduler.cluster
    before = contents(cluster)
    failed = commit_pod_sets(scheduler, [gpu_pod(f"big-{i}") for i in range(5)])
    assert isinstance(failed, GangFailure) and contents(cluster) == before
    done = commit_pod_sets(scheduler, [gpu_pod(f"w-{i}", 4) for i in range(3)])
    assert isinstance(done, GangPlacement)
    for placed in done.pods:
        info = cluster.pods[placed.pod]
        assert info.pod.spec.node_name == placed.node
        (key,) = placed.devices
        assert cluster.claims[key].status.allocation is not None
    # What is left: 32 - 12 GPUs, so five more 4-GPU pods fit, six do not.
    assert isinstance(place_pod_sets(scheduler, [gpu_pod(f"x-{i}", 4) for i in range(5)]),
                      GangPlacement)
    assert isinstance(place_pod_sets(scheduler, [gpu_pod(f"x-{i}", 4) for i in range(6)]),
                      GangFailure)


def test_pending_pods_of_the_loop_are_checked_and_committed_out_of_the_queue() -> None:
    scheduler = Scheduler.build(h100_cluster(2))
    pods = [gpu_pod(f"w-{i}") for i in range(2)]
    for pod in pods:
        scheduler.add_pod(pod)
    assert isinstance(place_pod_sets(scheduler, pods), GangPlacement)
    assert all(not info.assumed_node for info in scheduler.cluster.pods.values())
    done = commit_pod_sets(scheduler, pods)
    assert isinstance(done, GangPlacement)
    result = scheduler.run()
    assert result.placed == () and result.unplaced == ()
    assert {p.spec.node_name for p in result.pods} == {"h100-01", "h100-02"}
    again = place_pod_sets(scheduler, pods)
    assert isinstance(again, GangFailure) and "is already on node" in again.message


def test_an_empty_set_is_placed_and_a_pod_without_profile_fails() -> None:
    scheduler = Scheduler.build(h100_cluster(1))
    assert place_pod_sets(scheduler, []) == GangPlacement(())
    failed = place_pod_sets(scheduler, [gpu_pod("w", scheduler_name="other")])
    assert isinstance(failed, GangFailure) and "no profile" in failed.message
