"""NodePorts, ported from upstream's tables: one test per upstream case.

kubernetes v1.36.2, pkg/scheduler/framework/plugins/nodeports/node_ports_test.go:
TestNodePorts, TestPreFilterDisabled, Test_isSchedulableAfterPodDeleted and TestFits, every
case under its upstream name. ``new_pod(host, "PROTO/IP/PORT", ...)`` is upstream's newPod;
a NodeInfo holding pods is a node in a ClusterState with those pods placed on it.

Not ported: Test_isSchedulableAfterPodDeleted's "backoff-wrong-old-object" (a hint given an
object that is no pod: dralab's events carry keys, never objects of another type).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest

from dralab.api.codec import decode
from dralab.api.core import Pod
from dralab.api.features import FeatureGates
from dralab.cluster import ClusterState, NodeInfo, PodInfo
from dralab.cluster.events import PodRemoved
from dralab.scheduler.framework import Code, CycleState, Handle
from dralab.scheduler.plugins.nodeports import ERR_REASON, NodePorts, host_ports, ports_conflict

from .kubepods import P, node

UNSCHEDULABLE = ("Unschedulable", ERR_REASON)


def new_pod(host: str, *infos: str) -> Pod:
    ports = []
    for info in infos:
        protocol, ip, port = info.split("/")
        ports.append({"containerPort": int(port), "hostIP": ip, "hostPort": int(port),
                      "protocol": protocol})
    pod = P().container_port(ports)
    if host:
        pod.node(host)
    return pod.obj()


def node_info(*pods: Pod) -> NodeInfo:
    """framework.NewNodeInfo(pods...): a node named as the pods' node, holding them."""
    cluster = ClusterState()
    cluster.add_node(node("m1"))
    for pod in pods:
        data = pod.raw or {}
        placed = decode({**data, "spec": {**data.get("spec", {}), "nodeName": "m1"}})
        assert isinstance(placed, Pod)
        cluster.add_pod(placed)
    return cluster.nodes["m1"]


def plugin() -> NodePorts:
    handle = Handle(ClusterState(), FeatureGates(), random.Random(0), "default-scheduler")
    return NodePorts(handle)


def _sidecar(sidecar: bool) -> Pod:
    return P().init_container_port(sidecar, [{"containerPort": 8001, "hostPort": 8001,
                                              "protocol": "TCP"}]).obj()


NODE_PORTS: list[dict[str, Any]] = [
    {"name": "skip filter", "pod": P().obj(), "existing": [], "pre": "Skip"},
    {"name": "other port", "pod": new_pod("m1", "UDP/127.0.0.1/8080"),
     "existing": [new_pod("m1", "UDP/127.0.0.1/9090")]},
    {"name": "same udp port", "pod": new_pod("m1", "UDP/127.0.0.1/8080"),
     "existing": [new_pod("m1", "UDP/127.0.0.1/8080")], "want": UNSCHEDULABLE},
    {"name": "same tcp port", "pod": new_pod("m1", "TCP/127.0.0.1/8080"),
     "existing": [new_pod("m1", "TCP/127.0.0.1/8080")], "want": UNSCHEDULABLE},
    {"name": "different host ip", "pod": new_pod("m1", "TCP/127.0.0.1/8080"),
     "existing": [new_pod("m1", "TCP/127.0.0.2/8080")]},
    {"name": "different protocol", "pod": new_pod("m1", "UDP/127.0.0.1/8080"),
     "existing": [new_pod("m1", "TCP/127.0.0.1/8080")]},
    {"name": "second udp port conflict",
     "pod": new_pod("m1", "UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
     "existing": [new_pod("m1", "UDP/127.0.0.1/8080")], "want": UNSCHEDULABLE},
    {"name": "first tcp port conflict",
     "pod": new_pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
     "existing": [new_pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081")],
     "want": UNSCHEDULABLE},
    {"name": "first tcp port conflict due to 0.0.0.0 hostIP",
     "pod": new_pod("m1", "TCP/0.0.0.0/8001"),
     "existing": [new_pod("m1", "TCP/127.0.0.1/8001")], "want": UNSCHEDULABLE},
    {"name": "TCP hostPort conflict due to 0.0.0.0 hostIP",
     "pod": new_pod("m1", "TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
     "existing": [new_pod("m1", "TCP/127.0.0.1/8001")], "want": UNSCHEDULABLE},
    {"name": "second tcp port conflict to 0.0.0.0 hostIP",
     "pod": new_pod("m1", "TCP/127.0.0.1/8001"),
     "existing": [new_pod("m1", "TCP/0.0.0.0/8001")], "want": UNSCHEDULABLE},
    {"name": "second different protocol", "pod": new_pod("m1", "UDP/127.0.0.1/8001"),
     "existing": [new_pod("m1", "TCP/0.0.0.0/8001")]},
    {"name": "UDP hostPort conflict due to 0.0.0.0 hostIP",
     "pod": new_pod("m1", "UDP/127.0.0.1/8001"),
     "existing": [new_pod("m1", "TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001")],
     "want": UNSCHEDULABLE},
    {"name": "non-sidecar initContainer using hostPort", "pod": _sidecar(False),
     "existing": [new_pod("m1", "TCP/0.0.0.0/8001")], "pre": "Skip"},
    {"name": "TCP hostPort conflict from sidecar initContainer", "pod": _sidecar(True),
     "existing": [new_pod("m1", "TCP/0.0.0.0/8001")], "want": UNSCHEDULABLE},
]


@pytest.mark.parametrize("row", [pytest.param(r, id=r["name"]) for r in NODE_PORTS])
def test_node_ports(row: dict[str, Any]) -> None:
    p = plugin()
    state = CycleState()
    pod = PodInfo(row["pod"])
    _, status = p.pre_filter(state, pod, ClusterState())
    if row.get("pre") == "Skip":
        assert status.code == Code.SKIP
        return
    assert status.code == Code.SUCCESS
    got = p.filter(state, pod, node_info(*row["existing"]))
    want = row.get("want")
    if want is None:
        assert got.code == Code.SUCCESS
    else:
        assert (got.code, got.reasons) == (Code.UNSCHEDULABLE, (want[1],))


def test_pre_filter_disabled() -> None:
    """Filter without PreFilter's state is an Error (for a pod with host ports: a pod without
    any passes, see NodePorts.filter)."""
    got = plugin().filter(CycleState(), PodInfo(P().host_port(8080).obj()), node_info())
    assert got.code == Code.ERROR


HINTS: list[tuple[str, Pod, Any]] = [
    ("skip-queue-on-unscheduled", P().obj(), False),
    ("skip-queue-on-non-hostport", P().node("fake-node").obj(), False),
    ("skip-queue-on-unrelated-hostport", P().node("fake-node").host_port(8081).obj(), False),
    ("queue-on-released-hostport", P().node("fake-node").host_port(8080).obj(), True),
]


@pytest.mark.parametrize(("old", "expected"), [pytest.param(o, e, id=n) for n, o, e in HINTS])
def test_is_schedulable_after_pod_deleted(old: Pod, expected: bool) -> None:
    """The deleted pod was on a node whose ports Filter had read (as for a pod NodePorts
    rejected); the hint then answers from its ports."""
    cluster = ClusterState()
    cluster.add_node(node("fake-node"))
    old_info = cluster.add_pod(old)
    handle = Handle(cluster, FeatureGates(), random.Random(0), "default-scheduler")
    p = NodePorts(handle)
    target = PodInfo(P().host_port(8080).obj())
    p.used_ports(cluster.nodes["fake-node"])
    p.ports(old_info)
    hint = p._pod_gone(PodRemoved(old_info.key, old.spec.node_name), cluster)
    answer = hint(target) if callable(hint) else hint
    assert answer is expected


FITS: list[tuple[str, Pod, Sequence[str], bool]] = [
    ("non-conflicting ports", new_pod("p", "TCP/127.0.0.1/80"), ["TCP/127.0.0.1/9090"], True),
    ("multiple non-conflicting ports",
     new_pod("p", "TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90",
             "TCP/127.0.1.1/100"),
     ["TCP/127.0.0.1/9090", "TCP/127.0.0.1/9191", "TCP/127.0.1.1/8080"], True),
    ("same ports on different protocols", new_pod("m1", "TCP/127.0.0.1/80"),
     ["UDP/127.0.0.1/80"], True),
    ("conflicting ports", new_pod("m1", "TCP/127.0.0.1/80"), ["TCP/127.0.0.1/80"], False),
    ("multiple ports, some conflicting",
     new_pod("p", "TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90",
             "TCP/127.0.1.1/100"),
     ["TCP/127.0.0.1/9090", "TCP/127.0.1.1/90", "TCP/127.0.1.1/8080"], False),
]


@pytest.mark.parametrize(("pod", "existing", "expect"),
                         [pytest.param(p, e, x, id=n) for n, p, e, x in FITS])
def test_fits(pod: Pod, existing: Sequence[str], expect: bool) -> None:
    info = node_info(new_pod("p1", *existing))
    assert (not ports_conflict(host_ports(PodInfo(pod)), plugin().used_ports(info))) is expect
