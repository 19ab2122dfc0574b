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
