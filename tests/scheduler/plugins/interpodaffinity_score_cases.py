"""Upstream's InterPodAffinity scoring tables as data.

kubernetes v1.36.2, pkg/scheduler/framework/plugins/interpodaffinity/scoring_test.go:
TestPreferredAffinity and TestPreferredAffinityWithHardPodAffinitySymmetricWeight, every
case in order under its upstream name (a name upstream uses twice gets " (2)"). ``want`` is
upstream's expectedList as scores in node order; ``status`` the PreScore code upstream's
wantStatus has when PreScore does not succeed. Affinities are the documents of the Go
literals (stayWithS1InRegion ...). Read by test_interpodaffinity_upstream.py.
"""

# ruff: noqa: E501
from __future__ import annotations

from typing import Any

from .kubepods import P, selector, term, weighted

MAX = 100
_RG_CHINA = {"region": "China"}
_RG_INDIA = {"region": "India"}
_AZ1 = {"az": "az1"}
_AZ2 = {"az": "az2"}
_RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
_S1 = {"security": "S1"}
_S2 = {"security": "S2"}
_TEAM1 = selector("In", "team", ["team1"])


def _preferred(kind: str, *terms: dict[str, Any]) -> dict[str, Any]:
    return {kind: {"preferredDuringSchedulingIgnoredDuringExecution": list(terms)}}


STAY_WITH_S1_IN_REGION = _preferred("podAffinity", weighted(5, term(selector("In", "security", ["S1"]), "region")))
STAY_WITH_S2_IN_REGION = _preferred("podAffinity", weighted(6, term(selector("In", "security", ["S2"]), "region")))
AFFINITY3 = _preferred("podAffinity",
                       weighted(8, term({"matchExpressions": [{"key": "security", "operator": "NotIn", "values": ["S1"]},
                                                              {"key": "security", "operator": "In", "values": ["S2"]}]}, "region")),
                       weighted(2, term({"matchExpressions": [{"key": "security", "operator": "Exists"},
                                                              {"key": "wrongkey", "operator": "DoesNotExist"}]}, "region")))
HARD_AFFINITY = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    term(selector("In", "security", ["S1", "value2"]), "region"),
    term({"matchExpressions": [{"key": "security", "operator": "Exists"},
                               {"key": "wrongkey", "operator": "DoesNotExist"}]}, "region")]}}
AWAY_FROM_S1_IN_AZ = _preferred("podAntiAffinity", weighted(5, term(selector("In", "security", ["S1"]), "az")))
AWAY_FROM_S2_IN_AZ = _preferred("podAntiAffinity", weighted(5, term(selector("In", "security", ["S2"]), "az")))
STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ = {
    **_preferred("podAffinity", weighted(8, term(selector("In", "security", ["S1"]), "region"))),
    **_preferred("podAntiAffinity", weighted(5, term(selector("In", "security", ["S2"]), "az")))}
_NS_TERM = term(selector("In", "security", ["S1"]), "region", namespaces=["subteam2.team2"], namespace_selector=_TEAM1)
AFFINITY_NAMESPACE_SELECTOR = _preferred("podAffinity", weighted(5, _NS_TERM))
ANTI_AFFINITY_NAMESPACE_SELECTOR = _preferred("podAntiAffinity", weighted(5, _NS_TERM))
INVALID_AFFINITY_LABELS = _preferred("podAffinity", weighted(8, term(selector("In", "security", ["{{.bad-value.}}"]), "region")))
INVALID_ANTI_AFFINITY_LABELS = _preferred("podAntiAffinity", weighted(5, term(selector("In", "security", ["{{.bad-value.}}"]), "az")))


def _pod(labels: dict[str, str] | None = None, affinity: dict[str, Any] | None = None,
         node: str = "", namespace: str = "") -> Any:
    p = P().namespace(namespace).labels(labels or {})
    if affinity is not None:
        p.affinity(affinity)
    if node:
        p.node(node)
    return p.obj()


def _nodes(*rows: tuple[str, dict[str, str]]) -> list[dict[str, Any]]:
    return [{"name": name, "labels": labels} for name, labels in rows]


def preferred_affinity() -> list[dict[str, Any]]:
    three = _nodes(("node1", _RG_CHINA), ("node2", _RG_INDIA), ("node3", _AZ1))
    return [
        {"name": "all nodes are same priority as Affinity is nil",
         "pod": _pod(_S1), "nodes": three, "status": "Skip"},
        {"name": "Affinity: pod that matches topology key & pods in nodes will get high score comparing to others"
                 "which doesn't match either pods in nodes or in topology key",
         "pod": _pod(_S1, STAY_WITH_S1_IN_REGION),
         "pods": [_pod(_S1, node="node1"), _pod(_S2, node="node2"), _pod(_S1, node="node3")],
         "nodes": three, "want": [MAX, 0, 0]},
        {"name": "All the nodes that have the same topology key & label value with one of them has an existing pod that match the affinity rules, have the same score",
         "pod": _pod(None, STAY_WITH_S1_IN_REGION), "pods": [_pod(_S1, node="node1")],
         "nodes": _nodes(("node1", _RG_CHINA), ("node2", _RG_CHINA_AZ1), ("node3", _RG_INDIA)),
         "want": [MAX, MAX, 0]},
        {"name": "Affinity: nodes in one region has more matching pods comparing to other region, so the region which has more matches will get high score",
         "pod": _pod(_S1, STAY_WITH_S2_IN_REGION),
         "pods": [_pod(_S2, node="node1"), _pod(_S2, node="node1"), _pod(_S2, node="node2"),
                  _pod(_S2, node="node3"), _pod(_S2, node="node4"), _pod(_S2, node="node5")],
         "nodes": _nodes(("node1", _RG_CHINA), ("node2", _RG_INDIA), ("node3", _RG_CHINA), ("node4", _RG_CHINA), ("node5", _RG_INDIA)),
         "want": [MAX, 0, MAX, MAX, 0]},
        {"name": "Affinity: different Label operators and values for pod affinity scheduling preference, including some match failures ",
         "pod": _pod(_S1, AFFINITY3),
         "pods": [_pod(_S1, node="node1"), _pod(_S2, node="node2"), _pod(_S1, node="node3")],
         "nodes": three, "want": [20, MAX, 0]},
        {"name": "Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
         "pod": _pod(_S2),
         "pods": [_pod(_S1, STAY_WITH_S1_IN_REGION, "node1"), _pod(_S2, STAY_WITH_S2_IN_REGION, "node2")],
         "nodes": three, "want": [0, MAX, 0]},
        {"name": "Affinity symmetry with namespace selector",
         "pod": _pod(_S1, namespace="subteam1.team1"),
         "pods": [_pod(_S1, AFFINITY_NAMESPACE_SELECTOR, "node1"), _pod(_S2, STAY_WITH_S2_IN_REGION, "node2")],
         "nodes": three, "want": [MAX, 0, 0]},
        {"name": "AntiAffinity symmetry with namespace selector",
         "pod": _pod(_S1, namespace="subteam1.team1"),
         "pods": [_pod(_S1, ANTI_AFFINITY_NAMESPACE_SELECTOR, "node1"), _pod(_S2, STAY_WITH_S2_IN_REGION, "node2")],
         "nodes": three, "want": [0, MAX, MAX]},
        {"name": "Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
         "pod": _pod(_S1),
         "pods": [_pod(_S1, HARD_AFFINITY, "node1"), _pod(_S2, HARD_AFFINITY, "node2")],
         "nodes": three, "want": [MAX, MAX, 0]},
        {"name": "Anti Affinity: pod that does not match existing pods in node will get high score ",
         "pod": _pod(_S1, AWAY_FROM_S1_IN_AZ),
         "pods": [_pod(_S1, node="node1"), _pod(_S2, node="node2")],
         "nodes": _nodes(("node1", _AZ1), ("node2", _RG_CHINA)), "want": [0, MAX]},
        {"name": "Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score comparing to others ",
         "pod": _pod(_S1, AWAY_FROM_S1_IN_AZ),
         "pods": [_pod(_S1, node="node1"), _pod(_S1, node="node2")],
         "nodes": _nodes(("node1", _AZ1), ("node2", _RG_CHINA)), "want": [0, MAX]},
        {"name": "Anti Affinity: one node has more matching pods comparing to other node, so the node which has more unmatches will get high score",
         "pod": _pod(_S1, AWAY_FROM_S1_IN_AZ),
         "pods": [_pod(_S1, node="node1"), _pod(_S1, node="node1"), _pod(_S2, node="node2")],
         "nodes": _nodes(("node1", _AZ1), ("node2", _RG_INDIA)), "want": [0, MAX]},
        {"name": "Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
         "pod": _pod(_S2),
         "pods": [_pod(_S1, AWAY_FROM_S2_IN_AZ, "node1"), _pod(_S2, AWAY_FROM_S1_IN_AZ, "node2")],
         "nodes": _nodes(("node1", _AZ1), ("node2", _AZ2)), "want": [0, MAX]},
        {"name": "Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity",
         "pod": _pod(_S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
         "pods": [_pod(_S1, node="node1"), _pod(_S1, node="node2")],
         "nodes": _nodes(("node1", _RG_CHINA), ("node2", _AZ1)), "want": [MAX, 0]},
        {"name": "Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing pods have the same labels",
         "pod": _pod(_S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
         "pods": [_pod(_S1, node="node1"), _pod(_S1, node="node1"), _pod(_S1, node="node2"), _pod(_S1, node="node3"),
                  _pod(_S1, node="node3"), _pod(_S1, node="node4"), _pod(_S1, node="node5")],
         "nodes": _nodes(("node1", _RG_CHINA_AZ1), ("node2", _RG_INDIA), ("node3", _RG_CHINA), ("node4", _RG_CHINA), ("node5", _RG_INDIA)),
         "want": [MAX, 0, MAX, MAX, 0]},
        {"name": "Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity & symmetry",
         "pod": _pod(_S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
         "pods": [_pod(_S1, node="node1"), _pod(_S2, node="node2"),
                  _pod(None, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ, "node3"), _pod(None, AWAY_FROM_S1_IN_AZ, "node4")],
         "nodes": _nodes(("node1", _RG_CHINA), ("node2", _AZ1), ("node3", _RG_INDIA), ("node4", _AZ2)),
         "want": [MAX, 0, MAX, 0]},
        {"name": "Avoid panic when partial nodes in a topology don't have pods with affinity",
         "pod": _pod(_S1),
         "pods": [_pod(_S1, node="node1"), _pod(None, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ, "node2")],
         "nodes": _nodes(("node1", _RG_CHINA), ("node2", _RG_CHINA)), "want": [0, 0]},
        {"name": "invalid Affinity fails PreScore",
         "pod": _pod(None, INVALID_AFFINITY_LABELS),
         "nodes": _nodes(("node1", _RG_CHINA), ("node2", _RG_CHINA)), "status": "Error"},
        {"name": "invalid AntiAffinity fails PreScore",
         "pod": _pod(None, INVALID_ANTI_AFFINITY_LABELS),
         "nodes": _nodes(("node1", _RG_CHINA), ("node2", _RG_CHINA)), "status": "Error"},
        {"name": "Affinity with pods matching NamespaceSelector",
         "pod": _pod(_S1, AFFINITY_NAMESPACE_SELECTOR, namespace="subteam1.team1"),
         "pods": [_pod(_S1, node="node1", namespace="subteam1.team1"), _pod(_S1, node="node1", namespace="subteam1.team1"),
                  _pod(_S1, node="node1", namespace="subteam1.team2"), _pod(_S1, node="node2", namespace="subteam2.team1")],
         "nodes": _nodes(("node1", _RG_CHINA), ("node2", _RG_INDIA)), "want": [MAX, 0]},
        {"name": "Affinity with pods matching both NamespaceSelector and Namespaces fields",
         "pod": _pod(_S1, AFFINITY_NAMESPACE_SELECTOR, namespace="subteam1.team1"),
         "pods": [_pod(_S1, node="node1", namespace="subteam1.team1"), _pod(_S1, node="node1", namespace="subteam1.team1"),
                  _pod(_S1, node="node1", namespace="subteam2.team2"), _pod(_S1, node="node2", namespace="subteam2.team1")],
         "nodes": _nodes(("node1", _RG_CHINA), ("node2", _RG_INDIA)), "want": [MAX, 0]},
        {"name": "Affinity with pods matching NamespaceSelector (2)",
         "pod": _pod(_S1, ANTI_AFFINITY_NAMESPACE_SELECTOR, namespace="subteam1.team1"),
         "pods": [_pod(_S1, node="node1", namespace="subteam1.team1"), _pod(_S1, node="node1", namespace="subteam1.team1"),
                  _pod(_S1, node="node1", namespace="subteam1.team2"), _pod(_S1, node="node2", namespace="subteam2.team1")],
         "nodes": _nodes(("node1", _RG_CHINA), ("node2", _RG_INDIA)), "want": [0, MAX]},
        {"name": "Affinity with pods matching both NamespaceSelector and Namespaces fields (2)",
         "pod": _pod(_S1, ANTI_AFFINITY_NAMESPACE_SELECTOR, namespace="subteam1.team1"),
         "pods": [_pod(_S1, node="node1", namespace="subteam1.team1"), _pod(_S1, node="node1", namespace="subteam1.team1"),
                  _pod(_S1, node="node1", namespace="subteam2.team2"), _pod(_S1, node="node2", namespace="subteam2.team1")],
         "nodes": _nodes(("node1", _RG_CHINA), ("node2", _RG_INDIA)), "want": [0, MAX]},
        {"name": "Ignore preferred terms of existing pods",
         "pod": _pod(_S2),
         "pods": [_pod(_S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ, "node1"), _pod(_S2, STAY_WITH_S2_IN_REGION, "node2")],
         "nodes": _nodes(("node1", _RG_CHINA), ("node2", _RG_INDIA)), "status": "Skip", "ignorePreferred": True},
        {"name": "Do not ignore preferred terms of existing pods",
         "pod": _pod(_S2),
         "pods": [_pod(_S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ, "node1"), _pod(_S2, STAY_WITH_S2_IN_REGION, "node2")],
         "nodes": _nodes(("node1", _RG_CHINA), ("node2", _RG_INDIA)), "want": [0, MAX], "ignorePreferred": False},
        {"name": "No nodes to score", "pod": _pod(_S2), "pods": [], "nodes": [], "status": "Skip"},
    ]


# Namespaces: upstream's "" (the pods' own empty namespace) is "default" here.
HARD_POD_AFFINITY = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    term(selector("In", "service", ["S1"]), "region", namespaces=["default", "subteam2.team2"],
         namespace_selector=_TEAM1)]}}


def hard_pod_affinity_symmetric_weight() -> list[dict[str, Any]]:
    three = _nodes(("node1", _RG_CHINA), ("node2", _RG_INDIA), ("node3", _AZ1))
    service_s1 = {"service": "S1"}

    def placed() -> list[Any]:
        return [_pod(None, HARD_POD_AFFINITY, "node1"), _pod(None, HARD_POD_AFFINITY, "node2")]

    return [
        {"name": "with default weight", "pod": _pod(service_s1), "pods": placed(), "nodes": three,
         "hardPodAffinityWeight": 1, "want": [MAX, MAX, 0]},
        {"name": "with zero weight", "pod": _pod(service_s1), "pods": placed(), "nodes": three,
         "hardPodAffinityWeight": 0, "status": "Skip"},
        {"name": "with no matching namespace", "pod": _pod(service_s1, namespace="subteam1.team2"),
         "pods": placed(), "nodes": three, "hardPodAffinityWeight": 1, "status": "Skip"},
        {"name": "with matching NamespaceSelector", "pod": _pod(service_s1, namespace="subteam1.team1"),
         "pods": placed(), "nodes": three, "hardPodAffinityWeight": 1, "want": [MAX, MAX, 0]},
        {"name": "with matching Namespaces", "pod": _pod(service_s1, namespace="subteam2.team2"),
         "pods": placed(), "nodes": three, "hardPodAffinityWeight": 1, "want": [MAX, MAX, 0]},
    ]
