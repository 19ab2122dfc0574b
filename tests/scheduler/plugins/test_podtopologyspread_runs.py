"""PodTopologySpread in whole scheduling runs: the default profile, workloads, messages."""

from __future__ import annotations

from collections import Counter
from typing import Any

from dralab.api.codec import decode
from dralab.api.core import Pod
from dralab.scheduler import schedule

from ..builders import node, placements, pod, workload


def spread_pod(name: str, key: str, *, action: str = "DoNotSchedule", skew: int = 1) -> Pod:
    doc: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "pause",
                                 "resources": {"requests": {"cpu": "1"}}}],
                 "topologySpreadConstraints": [{
                     "maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": action,
                     "labelSelector": {"matchLabels": {"app": "web"}}}]}}
    obj = decode(doc)
    assert isinstance(obj, Pod)
    return obj


def per_node(result: Any) -> Counter[str | None]:
    return Counter(placements(result).values())


def gpu_nodes(count: int) -> list[Any]:
    return [node(f"n{i:02d}", "128", "1Ti", gpus=8) for i in range(count)]


def test_bare_pods_pack_and_replica_sets_spread() -> None:
    """Issue 39's two shapes, small: bare pods fill nodes 8 by 8 (BalancedAllocation's 75 for
    a node already used beats 74 for an empty one); Deployments' pods get the system default
    constraints and spread, one pod of each Deployment per node."""
    bare = schedule([*gpu_nodes(10), *(pod(f"p{i}", "100m", gpus=1) for i in range(40))])
    assert sorted(per_node(bare).values()) == [8] * 5
    deployments = schedule([*gpu_nodes(10), *(workload(
        "Deployment", f"d{j}", {"replicas": 10}, cpu="100m", gpus=1) for j in range(4))])
    assert sorted(per_node(deployments).values()) == [4] * 10


def test_stateful_set_pods_spread_despite_their_per_pod_labels() -> None:
    """statefulset.kubernetes.io/pod-name and apps.kubernetes.io/pod-index are no part of the
    set's selector: the system defaults still see the set's other pods."""
    result = schedule([*gpu_nodes(10), workload("StatefulSet", "s", {
        "replicas": 10, "serviceName": "s"}, cpu="100m", gpus=1)])
    assert sorted(per_node(result).values()) == [1] * 10


def test_do_not_schedule_zone_spread_and_its_messages() -> None:
    nodes = [node("a", "2", labels={"zone": "z1"}), node("b", "2", labels={"zone": "z2"}),
             node("c", "2")]
    result = schedule([*nodes, *(spread_pod(f"p{i}", "zone") for i in range(5))])
    got = placements(result)
    assert Counter(got.values()) == Counter({"a": 2, "b": 2, None: 1})
    (left,) = result.unplaced
    assert left.message.startswith(
        "0/3 nodes are available: 1 node(s) didn't match pod topology spread constraints "
        "(missing required label), 2 Insufficient cpu.")
    # The missing label cannot be fixed by eviction; the full nodes might, but hold equals.
    assert "1 Preemption is not helpful for scheduling" in left.message


def test_skew_rejection_is_unschedulable() -> None:
    """z1 (node a, room) and z2 (node b, full). With one pod in each zone the new one may go to
    z1; with two in z1 and one in z2, z1 is off by the skew (Unschedulable: an eviction could
    help, so preemption looks, finding no victim of lower priority) and b is full."""
    nodes = [node("a", "8", labels={"zone": "z1"}), node("b", "1", labels={"zone": "z2"})]
    running = [spread_pod("r1", "zone"), spread_pod("r2", "zone")]
    placed = [decode({**(p.raw or {}), "spec": {**(p.raw or {})["spec"], "nodeName": n}})
              for p, n in zip(running, ("a", "b"), strict=True)]
    blocker = pod("blocker", "1", node_name="b")
    result = schedule([*nodes, *placed, blocker, spread_pod("new", "zone")])
    assert placements(result)["new"] == "a"  # z1 has 1, z2 has 1: skew allows z1
    first = placed[0].raw or {}
    again = decode({**first, "metadata": {**first["metadata"], "name": "r3"}})
    result = schedule([*nodes, placed[0], again, placed[1], blocker, spread_pod("new", "zone")])
    (left,) = result.unplaced
    assert left.message == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match pod topology "
        "spread constraints. no new claims to deallocate, preemption: 0/2 nodes are available: "
        "2 No preemption victims found for incoming pod.")


def _on(obj: Pod, node_name: str, name: str | None = None, priority: int | None = None) -> Pod:
    raw = obj.raw or {}
    meta = {**raw["metadata"], **({"name": name} if name else {})}
    spec = {**raw["spec"], "nodeName": node_name,
            **({"priority": priority} if priority is not None else {})}
    placed = decode({**raw, "metadata": meta, "spec": spec})
    assert isinstance(placed, Pod)
    return placed


def test_preemption_evicts_what_the_spread_needs() -> None:
    """Node a (zone z1) is full with two low-priority pods of the spread; node b (z2) with a
    pod of higher priority than the preemptor. Freeing one cpu on a would do for
    NodeResourcesFit, but with one pod left in z1 and none in z2 the skew is still 2: the dry
    run counts the victims out through RemovePod and keeps both as victims."""
    nodes = [node("a", "2", labels={"zone": "z1"}), node("b", "2", labels={"zone": "z2"})]
    low = [_on(spread_pod("low1", "zone"), "a", priority=0),
           _on(spread_pod("low2", "zone"), "a", priority=0)]
    guard = pod("guard", "2", node_name="b", priority=100)
    web = decode({**(spread_pod("web", "zone").raw or {})})
    raw = web.raw or {}
    high = decode({**raw, "spec": {**raw["spec"], "priority": 50}})
    result = schedule([*nodes, *low, guard, high])
    assert sorted(e.pod.metadata.name for e in result.evicted) == ["low1", "low2"]
    assert placements(result)["web"] == "a"


def test_queueing_hints() -> None:
    """A pod PodTopologySpread rejected is tried again when a placed pod it selects arrives or a
    placed pod leaves, or when a node with its topology keys comes; not for an unplaced pod,
    nor for a pod of another namespace or that its constraints do not select."""
    import random

    from dralab.api.features import FeatureGates
    from dralab.cluster import ClusterState
    from dralab.cluster.events import NodeAdded, PodAdded, PodRemoved
    from dralab.scheduler.framework import Handle
    from dralab.scheduler.plugins.podtopologyspread import PodTopologySpread

    cluster = ClusterState()
    cluster.add_node(node("a", "2", labels={"zone": "z1"}))
    cluster.add_node(node("bare", "2"))
    rejected = cluster.add_pod(spread_pod("web", "zone"))
    plugin = PodTopologySpread.create({}, Handle(cluster, FeatureGates(), random.Random(0), "x"))
    hints = {event: hint.hint for hint in plugin.events_to_register() for event in hint.events}

    def answer(event: Any) -> bool:
        result = hints[type(event)](event, cluster)
        return result(rejected) if callable(result) else bool(result)

    same = cluster.add_pod(_on(spread_pod("other-web", "zone"), "a"))
    assert answer(PodAdded(same.key, "a"))
    unplaced = cluster.add_pod(spread_pod("pending-web", "zone"))
    assert not answer(PodAdded(unplaced.key, None))
    unrelated = cluster.add_pod(pod("db", "1", node_name="a", labels={"app": "db"}))
    assert not answer(PodAdded(unrelated.key, "a"))
    assert answer(PodRemoved("default/gone", "a"))
    assert not answer(PodRemoved("default/gone", None))
    assert answer(NodeAdded("a"))
    assert not answer(NodeAdded("bare"))
