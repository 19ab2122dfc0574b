"""InterPodAffinity's queueing hints, ported from upstream's tables.

kubernetes v1.36.2, pkg/scheduler/framework/plugins/interpodaffinity/plugin_test.go:
Test_isSchedulableAfterPodChange (the cases of a pod added or deleted) and
Test_isSchedulableAfterNodeChange (all 12), under their upstream names. A hint answers for the
rejected pod after the event happened in the store: an added pod is placed on "fake-node"; a
deleted one was on it, and the plugin had read that node before (as PreFilter does every
cycle); an updated node had its old labels when the plugin last read it.

Not ported: the 9 cases of a placed pod whose labels change (UpdatePodLabel): dralab's pod
update event carries no old object and the plugin registers no label updates. Expected to
fail, with the reason: deleting a pod that was only nominated (dralab's PodRemoved says where
a pod counted, and a nominated pod counts nowhere, so the hint skips).
"""

# ruff: noqa: E501
from __future__ import annotations

import random
from typing import Any

import pytest

from dralab.api.core import Pod
from dralab.api.features import FeatureGates
from dralab.cluster import ClusterState, PodInfo
from dralab.cluster.events import NodeAdded, NodeUpdated, PodAdded, PodRemoved
from dralab.scheduler.framework import Handle
from dralab.scheduler.plugins.interpodaffinity import InterPodAffinity
from dralab.scheduler.plugins.interpodaffinity_terms import AffinityArgs

from .kubepods import REQUIRED, P, node

QUEUE, SKIP = True, False
_AFF = ("service", "region", ["securityscan", "value2"])


def _target_affinity() -> Pod:
    return P().uid("p").name("p").pod_affinity_in(*_AFF, REQUIRED).obj()


def _target_anti() -> Pod:
    return P().uid("p").name("p").pod_anti_affinity_in(*_AFF, REQUIRED).obj()


def _plugin(cluster: ClusterState) -> InterPodAffinity:
    return InterPodAffinity(AffinityArgs(),
                            Handle(cluster, FeatureGates(), random.Random(0), "default-scheduler"))


def _answer(hint: Any, pod: Pod) -> bool:
    return bool(hint(PodInfo(pod)) if callable(hint) else hint)


ADDED: list[tuple[str, Pod, Pod, bool]] = [
    ("add a pod which matches the pod affinity", _target_affinity(),
     P().uid("other").node("fake-node").label("service", "securityscan").obj(), QUEUE),
    ("add an un-scheduled pod", _target_affinity(),
     P().uid("other").label("service", "securityscan").obj(), SKIP),
    ("add a pod which doesn't match the pod affinity", _target_affinity(),
     P().uid("other").node("fake-node").label("aaa", "a").obj(), SKIP),
]


@pytest.mark.parametrize(("pod", "new", "expected"),
                         [pytest.param(p, n, e, id=name) for name, p, n, e in ADDED])
def test_is_schedulable_after_pod_added(pod: Pod, new: Pod, expected: bool) -> None:
    cluster = ClusterState()
    cluster.add_node(node("fake-node"))
    info = cluster.add_pod(new)
    hint = _plugin(cluster)._pod_placed(PodAdded(info.key, new.spec.node_name), cluster)
    assert _answer(hint, pod) is expected


NOMINATED = ("a pod only nominated counts on no node: dralab's PodRemoved has node None and "
             "the hint skips (upstream reads the deleted pod's nominatedNodeName)")
_SECURITYSCAN_ANTI = ("service", "region", ["securityscan", "value2"])
DELETED: list[tuple[str, Pod, P, bool, str]] = [
    ("delete a pod which doesn't match pod's anti-affinity", _target_anti(),
     P().uid("other").node("fake-node").label("aaa", "a"), SKIP, ""),
    ("delete a pod which matches pod's anti-affinity", _target_anti(),
     P().uid("other").node("fake-node").label("service", "securityscan"), QUEUE, ""),
    ("delete a pod with anti-affinity that matches pending pod",
     P().name("p").label("service", "securityscan").obj(),
     P().node("fake-node").pod_anti_affinity_in(*_SECURITYSCAN_ANTI, REQUIRED), QUEUE, ""),
    ("delete a pod with anti-affinity that doesn't match pending pod",
     P().name("p").label("service", "foo").obj(),
     P().node("fake-node").pod_anti_affinity_in(*_SECURITYSCAN_ANTI, REQUIRED), SKIP, ""),
    ("delete a pod which doesn't match pending pod's anti-affinity and has anti-affinity that doesn't match pending pod",
     P().name("p").pod_anti_affinity_in(*_SECURITYSCAN_ANTI, REQUIRED).label("service", "foo").obj(),
     P().node("fake-node").pod_anti_affinity_in(*_SECURITYSCAN_ANTI, REQUIRED).label("service", "foo"),
     SKIP, ""),
    ("delete a nominated pod which doesn't match pod's anti-affinity",
     P().name("p").pod_anti_affinity_in(*_SECURITYSCAN_ANTI, REQUIRED).obj(),
     P().label("aaa", "a"), SKIP, "nominated"),
    ("delete a nominated pod which matches pod's anti-affinity",
     P().name("p").pod_anti_affinity_in(*_SECURITYSCAN_ANTI, REQUIRED).obj(),
     P().label("service", "securityscan"), QUEUE, "nominated"),
]


def _deleted_params() -> list[Any]:
    out = []
    for name, pod, old, expected, how in DELETED:
        marks = [pytest.mark.xfail(strict=True, reason=NOMINATED)] \
            if how == "nominated" and expected is QUEUE else []
        out.append(pytest.param(pod, old, expected, how, id=name, marks=marks))
    return out


@pytest.mark.parametrize(("pod", "old", "expected", "how"), _deleted_params())
def test_is_schedulable_after_pod_deleted(pod: Pod, old: P, expected: bool, how: str) -> None:
    cluster = ClusterState()
    cluster.add_node(node("fake-node"))
    info = cluster.add_pod(old.obj())
    where = None if how == "nominated" else "fake-node"  # a nominated pod counted nowhere
    plugin = _plugin(cluster)
    plugin._index.with_affinity(cluster)  # PreFilter reads every node's pods each cycle
    plugin._index.terms(info)
    cluster.remove_pod(info.key)
    hint = plugin._pod_gone(PodRemoved(info.key, where), cluster)
    assert _answer(hint, pod) is expected


def _anti_zone() -> Pod:
    return P().name("p").pod_anti_affinity("zone", {"matchLabels": {"another": "label"}},
                                           REQUIRED).obj()


def _aff_zone(key: str = "zone") -> Pod:
    return P().name("p").pod_affinity_in("service", key, ["securityscan", "value2"],
                                         REQUIRED).obj()


NODES: list[tuple[str, Pod, dict[str, str] | None, dict[str, str], bool]] = [
    ("add a new node with matched pod affinity topologyKey", _aff_zone(), None, {"zone": "zone1"}, QUEUE),
    ("add a new node without matched topologyKey", _aff_zone("region"), None, {"zone": "zone1"}, SKIP),
    ("update node label but not topologyKey", _aff_zone(), {"aaa": "a"}, {"aaa": "b"}, SKIP),
    ("update node label that isn't related to the pod affinity", _aff_zone(), {"zone": "zone1"},
     {"zone": "zone1", "unrelated-label": "unrelated"}, SKIP),
    ("update node with different affinity topologyKey value", _aff_zone(), {"zone": "zone1"}, {"zone": "zone2"}, QUEUE),
    ("update node to have the affinity topology label", _aff_zone(), {"aaa": "a"}, {"zone": "zone1"}, QUEUE),
    ("add a new node with matched pod anti-affinity topologyKey", _anti_zone(), None, {"zone": "zone1"}, QUEUE),
    ("add a new node without matched pod anti-affinity topologyKey", _anti_zone(), None, {}, QUEUE),
    ("update node label that isn't related to the pod anti-affinity", _anti_zone(), {"zone": "zone1"},
     {"zone": "zone1", "unrelated-label": "unrelated"}, SKIP),
    ("update node with different anti-affinity topologyKey value", _anti_zone(), {"zone": "zone1"}, {"zone": "zone2"}, QUEUE),
    ("update node to have the anti-affinity topology label", _anti_zone(), {"aaa": "a"}, {"zone": "zone1"}, SKIP),
    ("update node label not to have anti-affinity topology label", _anti_zone(), {"zone": "zone1"}, {"aaa": "a"}, QUEUE),
]


@pytest.mark.parametrize(("pod", "old", "new", "expected"),
                         [pytest.param(p, o, n, e, id=name) for name, p, o, n, e in NODES])
def test_is_schedulable_after_node_change(pod: Pod, old: dict[str, str] | None,
                                          new: dict[str, str], expected: bool) -> None:
    cluster = ClusterState()
    plugin = _plugin(cluster)
    event: NodeAdded | NodeUpdated
    if old is None:
        cluster.add_node(node("node-a", new))
        event = NodeAdded("node-a")
    else:
        cluster.add_node(node("node-a", old))
        plugin._index.with_affinity(cluster)  # the plugin read the node before the update
        cluster.add_node(node("node-a", new))
        event = NodeUpdated("node-a")
    assert _answer(plugin._node_changed(event, cluster), pod) is expected


def test_an_updated_node_the_plugin_never_read_queues_anti_affinity() -> None:
    cluster = ClusterState()
    cluster.add_node(node("node-a", {"aaa": "a"}))
    cluster.add_node(node("node-a", {"zone": "zone1"}))
    hint = _plugin(cluster)._node_changed(NodeUpdated("node-a"), cluster)
    assert _answer(hint, _anti_zone()) is QUEUE
    assert _answer(hint, _aff_zone("region")) is SKIP
