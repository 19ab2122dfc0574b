"""GangScheduling (opt-in Permit plugin): a gang binds all together or not at all.

Pods ask for a whole H100 node each (8 GPUs from a claim template) on fleets built
with ``dralab.fleet``; the gang is named by ``dralab.dev/gang`` and sized by
``dralab.dev/gang-size`` (or Kueue's pod-group label and total-count annotation).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from dralab.api.core import (
    Pod,
)
from dralab.cluster import ClusterState
from dralab.queueing.placement import GangPlacement, commit_pod_sets, place_pod_sets
from dralab.scheduler.plugins.gangscheduling import GANG_LABEL, GANG_SIZE, NAME, gang_of
from dralab.scheduler.profile import ConfigError
from dralab.scheduler.scheduler import Scheduler, StillClock
from queueing.fleets import NS, gpu_pod, h100_cluster


def config(**args: Any) -> dict[str, Any]:
    profile: dict[str, Any] = {"plugins": {"multiPoint": {"enabled": [{"name": NAME}]}}}
    if args:
        profile["pluginConfig"] = [{"name": NAME, "args": args}]
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [profile]}


def h100s(nodes: int) -> ClusterState:
    return h100_cluster(nodes, templates=(8,))


def member(name: str, labels: Mapping[str, str] | None = None,
           annotations: Mapping[str, str] | None = None) -> Pod:
    return gpu_pod(name, 8, labels=labels, annotations=annotations)


def gang(name: str, size: int, count: int | None = None) -> list[Pod]:
    labels = {GANG_LABEL: name, GANG_SIZE: str(size)}
    return [member(f"{name}-{i}", labels) for i in range(size if count is None else count)]


def allocated(cluster: ClusterState) -> list[str]:
    return sorted(k for k, c in cluster.claims.items() if c.status.allocation is not None)


def test_a_gang_that_fits_binds_every_member() -> None:
    scheduler = Scheduler.build(h100s(4), config())
    for pod in gang("train", 4):
        scheduler.add_pod(pod)
    result = scheduler.run()
    assert sorted(p.node for p in result.placed) == ["h100-01", "h100-02", "h100-03", "h100-04"]
    assert result.unplaced == () and len(scheduler.waiting) == 0
    assert len(allocated(scheduler.cluster)) == 4


def test_three_of_four_fit_so_none_binds_and_all_let_go_after_the_timeout() -> None:
    scheduler = Scheduler.build(h100s(3), config())
    assert isinstance(scheduler.clock, StillClock)
    first, *rest = gang("train", 4)
    scheduler.add_pod(first)
    scheduler.schedule_pending()
    scheduler.clock.now = 100.0  # the others come later
    for pod in rest:
        scheduler.add_pod(pod)
    scheduler.schedule_pending()
    # Three members hold a node each, waiting at Permit; the fourth found none.
    assert sorted(w.node for w in scheduler.waiting) == ["h100-01", "h100-02", "h100-03"]
    assert all(w.pending_plugins == [NAME] for w in scheduler.waiting)
    assert len(allocated(scheduler.cluster)) == 3
    result = scheduler.run()  # the clock moves on to the first member's timeout
    assert result.placed == () and len(scheduler.waiting) == 0
    assert allocated(scheduler.cluster) == []
    assert all(not info.pods for info in scheduler.cluster.nodes.values())
    assert all(not p.spec.node_name for p in result.pods)
    messages = {u.pod.metadata.name: u.message for u in result.unplaced}
    assert messages["train-0"] == ("0/1 nodes are available: 1 rejected due to timeout "
                                   "after waiting 5m0s at plugin GangScheduling.")
    # The others had waited only 200 s: the first one's release let them go.
    assert ("pod team-a/train-0 of gang team-a/train was rejected; the gang binds all "
            "together or not at all") in messages["train-1"]
    # The release let train-3 take a node; alone at Permit, it timed out in turn.
    assert "at plugin GangScheduling" in messages["train-3"]


def test_the_timeout_is_configurable_and_checked() -> None:
    scheduler = Scheduler.build(h100s(1), config(permitWaitingTimeSeconds=30))
    for pod in gang("train", 2):
        scheduler.add_pod(pod)
    scheduler.schedule_pending()
    (waiting,) = scheduler.waiting
    assert waiting.deadline() == 30.0
    with pytest.raises(ConfigError, match=r"permitWaitingTimeSeconds: Invalid value: -1"):
        Scheduler.build(h100s(1), config(permitWaitingTimeSeconds=-1))


def test_pods_outside_gangs_and_kueue_pod_groups() -> None:
    scheduler = Scheduler.build(h100s(2), config())
    scheduler.add_pod(member("alone"))
    kueue = {"kueue.x-k8s.io/pod-group-name": "grp"}
    count = {"kueue.x-k8s.io/pod-group-total-count": "2"}
    first = member("grp-0", kueue, count)
    assert gang_of(first) == (f"{NS}/grp", 2)
    scheduler.add_pod(first)
    scheduler.schedule_pending()
    assert [w.key for w in scheduler.waiting] == [f"{NS}/grp-0"]
    scheduler.add_pod(member("grp-1", kueue, count))
    scheduler.schedule_pending()
    # h100s(2): the lone pod took a node, grp-0 the other; grp-1 finds none.
    assert [w.key for w in scheduler.waiting] == [f"{NS}/grp-0"]
    result = scheduler.run()
    assert [p.pod.metadata.name for p in result.placed] == ["alone"]


def test_a_deleted_waiting_member_releases_the_rest() -> None:
    scheduler = Scheduler.build(h100s(3), config())
    for pod in gang("train", 3, count=2):
        scheduler.add_pod(pod)
    scheduler.schedule_pending()
    assert len(scheduler.waiting) == 2
    scheduler.delete_pod(f"{NS}/train-0")
    scheduler.schedule_pending()
    assert len(scheduler.waiting) == 0 and allocated(scheduler.cluster) == []


def test_not_in_the_default_profile_and_no_gang_labels_no_gang() -> None:
    default = Scheduler.build(h100s(1))
    assert NAME not in default.frameworks["default-scheduler"].plugins
    for pod in gang("train", 2):
        default.add_pod(pod)
    # Without the plugin the first member binds alone and the second stays pending.
    result = default.run()
    assert [p.pod.metadata.name for p in result.placed] == ["train-0"]
    assert gang_of(member("x", {GANG_LABEL: "g", GANG_SIZE: "two"})) is None
    assert gang_of(member("x", {GANG_LABEL: "g"}, {GANG_SIZE: "3"})) == (f"{NS}/g", 3)


def test_a_placement_check_of_a_gang_neither_waits_nor_releases_real_waiters() -> None:
    scheduler = Scheduler.build(h100s(4), config())
    scheduler.add_pod(gang("train", 3)[0])
    scheduler.schedule_pending()
    (real,) = scheduler.waiting
    # The check places the two other members on a fork: the gang would complete, but
    # the real waiting member is neither allowed nor bound by a what-if.
    rest = gang("train", 3)[1:]
    assert isinstance(place_pod_sets(scheduler, rest), GangPlacement)
    assert real.allowed == set() and [w.key for w in scheduler.waiting] == [real.key]
    # A committed set is complete by itself: its members bind without waiting.
    other = gang("infer", 2)
    done = commit_pod_sets(scheduler, other)
    assert isinstance(done, GangPlacement)
    assert all(scheduler.cluster.pods[p.pod].pod.spec.node_name == p.node for p in done.pods)
    assert [w.key for w in scheduler.waiting] == [real.key]
