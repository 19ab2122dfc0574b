"""Upstream's InterPodAffinity filtering tables as data.

kubernetes v1.36.2, pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go:
TestRequiredAffinitySingleNode and TestRequiredAffinityMultipleNodes, every case in order
under its upstream name. Pods are built with ``kubepods.P`` (upstream's ``st.MakePod()``
chain) or ``with_terms`` (createPodWithAffinityTerms); ``want`` is upstream's
wantPreFilterStatus / wantFilterStatus(es) as (code, reason), None for success.
Read by test_interpodaffinity_upstream.py.
"""

# ruff: noqa: E501
from __future__ import annotations

from typing import Any

from .kubepods import REQUIRED, P, node, selector, term, with_terms

AFF = "node(s) didn't match pod affinity rules"
ANTI = "node(s) didn't match pod anti-affinity rules"
EXISTING = "node(s) didn't satisfy existing pods anti-affinity rules"
UU = "UnschedulableAndUnresolvable"
U = "Unschedulable"
SKIP = ("Skip", "")
BAD_VALUE = ("parsing pod: requiredAffinityTerms: values[0][service]: Invalid value: \"{{.bad-value.}}\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")

# TestRequiredAffinitySingleNode's shared objects
_POD_LABEL = {"service": "securityscan"}
_POD_LABEL2 = {"security": "S1"}
_NODE1 = {"name": "node1", "labels": {"region": "r1", "zone": "z11"}}
_TEAM1 = selector("In", "team", ["team1"])


def _pod() -> Any:
    return P().labels(_POD_LABEL).node("node1").obj()


def single_node() -> list[dict[str, Any]]:
    return [
        {"name": "A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
         "pod": P().obj(), "node": _NODE1, "pre": SKIP},
        {"name": "satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches the existing pod",
         "pod": P().namespace("").labels(_POD_LABEL2).pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED).obj(),
         "pods": [_pod()], "node": _NODE1},
        {"name": "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in labelSelector that matches the existing pod",
         "pod": P().namespace("").labels(_POD_LABEL2).pod_affinity_not_in("service", "region", ["securityscan3", "value3"], REQUIRED).obj(),
         "pods": [_pod()], "node": _NODE1},
        {"name": "Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
         "pod": with_terms("", "", _POD_LABEL2, [term(selector("In", "service", ["securityscan", "value2"]), namespaces=["DiffNameSpace"])], None),
         "pods": [P().namespace("ns").label("service", "securityscan").node("node1").obj()],
         "node": _NODE1, "want": (UU, AFF)},
        {"name": "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
         "pod": P().namespace("").labels(_POD_LABEL).pod_affinity_in("service", "", ["antivirusscan", "value2"], REQUIRED).obj(),
         "pods": [_pod()], "node": _NODE1, "want": (UU, AFF)},
        {"name": "satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnoredDuringExecution ",
         "pod": with_terms("", "", _POD_LABEL2, [
             term({"matchExpressions": [{"key": "service", "operator": "Exists"},
                                        {"key": "wrongkey", "operator": "DoesNotExist"}]}, "region"),
             term({"matchExpressions": [{"key": "service", "operator": "In", "values": ["securityscan"]},
                                        {"key": "service", "operator": "NotIn", "values": ["WrongValue"]}]}, "region")], None),
         "pods": [_pod()], "node": _NODE1},
        {"name": "The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node because one of the matchExpression item don't match.",
         "pod": with_terms("", "", _POD_LABEL2, [
             term({"matchExpressions": [{"key": "service", "operator": "Exists"},
                                        {"key": "wrongkey", "operator": "DoesNotExist"}]}, "region"),
             term({"matchExpressions": [{"key": "service", "operator": "In", "values": ["securityscan2"]},
                                        {"key": "service", "operator": "NotIn", "values": ["WrongValue"]}]}, "region")], None),
         "pods": [_pod()], "node": _NODE1, "want": (UU, AFF)},
        {"name": "satisfies the PodAffinity and PodAntiAffinity with the existing pod",
         "pod": P().namespace("").labels(_POD_LABEL2)
         .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
         .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"], REQUIRED).obj(),
         "pods": [_pod()], "node": _NODE1},
        {"name": "satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
         "pod": P().namespace("").labels(_POD_LABEL2)
         .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
         .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"], REQUIRED).obj(),
         "pods": [P().namespace("").node("node1").labels(_POD_LABEL)
                  .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"], REQUIRED).obj()],
         "node": _NODE1},
        {"name": "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
         "pod": P().namespace("").labels(_POD_LABEL2)
         .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
         .pod_anti_affinity_in("service", "zone", ["securityscan", "value2"], REQUIRED).obj(),
         "pods": [_pod()], "node": _NODE1, "want": (U, ANTI)},
        {"name": "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing pod",
         "pod": P().namespace("").labels(_POD_LABEL)
         .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
         .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"], REQUIRED).obj(),
         "pods": [P().namespace("").labels(_POD_LABEL).node("node1")
                  .pod_anti_affinity_in("service", "zone", ["securityscan", "value2"], REQUIRED).obj()],
         "node": _NODE1, "want": (U, EXISTING)},
        {"name": "pod matches its own Label in PodAffinity and that matches the existing pod Labels",
         "pod": P().namespace("").labels(_POD_LABEL)
         .pod_affinity_not_in("service", "region", ["securityscan", "value2"], REQUIRED).obj(),
         "pods": [P().label("service", "securityscan").node("node2").obj()],
         "node": _NODE1, "want": (UU, AFF)},
        {"name": "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod",
         "pod": P().labels(_POD_LABEL).obj(),
         "pods": [P().namespace("").node("node1").labels(_POD_LABEL)
                  .pod_anti_affinity_in("service", "zone", ["securityscan", "value2"], REQUIRED).obj()],
         "node": _NODE1, "want": (U, EXISTING)},
        {"name": "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy PodAntiAffinity symmetry with the existing pod",
         "pod": P().labels(_POD_LABEL).obj(),
         "pods": [P().namespace("").node("node1").labels(_POD_LABEL)
                  .pod_anti_affinity_not_in("service", "zone", ["securityscan", "value2"], REQUIRED).obj()],
         "node": _NODE1, "pre": SKIP},
        {"name": "satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with incoming pod",
         "pod": P().namespace("").labels(_POD_LABEL)
         .pod_anti_affinity_exists("service", "region", REQUIRED)
         .pod_anti_affinity_exists("security", "region", REQUIRED).obj(),
         "pods": [P().namespace("").node("node1").labels(_POD_LABEL2)
                  .pod_anti_affinity_exists("security", "zone", REQUIRED).obj()],
         "node": _NODE1, "want": (U, ANTI)},
        {"name": "PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
         "pod": P().namespace("").labels(_POD_LABEL)
         .pod_anti_affinity_exists("service", "zone", REQUIRED)
         .pod_anti_affinity_exists("security", "zone", REQUIRED).obj(),
         "pods": [P().namespace("").node("node1").labels(_POD_LABEL2)
                  .pod_anti_affinity_exists("security", "zone", REQUIRED).obj()],
         "node": _NODE1, "want": (U, ANTI)},
        {"name": "PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
         "pod": P().namespace("").labels(_POD_LABEL2)
         .pod_anti_affinity_exists("security", "zone", REQUIRED).obj(),
         "pods": [P().namespace("").node("node1").labels(_POD_LABEL)
                  .pod_anti_affinity_exists("service", "zone", REQUIRED)
                  .pod_anti_affinity_exists("security", "zone", REQUIRED).obj()],
         "node": _NODE1, "want": (U, EXISTING)},
        {"name": "PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on AffinityTerms",
         "pod": P().namespace("").labels({"abc": "", "xyz": ""})
         .pod_anti_affinity_exists("abc", "zone", REQUIRED)
         .pod_anti_affinity_exists("def", "zone", REQUIRED).obj(),
         "pods": [P().namespace("").node("node1").labels({"def": "", "xyz": ""})
                  .pod_anti_affinity_exists("abc", "zone", REQUIRED)
                  .pod_anti_affinity_exists("def", "zone", REQUIRED).obj()],
         "node": _NODE1, "want": (U, ANTI)},
        {"name": "PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on AffinityTerms",
         "pod": P().namespace("").labels({"def": "", "xyz": ""})
         .pod_anti_affinity_exists("abc", "zone", REQUIRED)
         .pod_anti_affinity_exists("def", "zone", REQUIRED).obj(),
         "pods": [P().namespace("").node("node1").labels({"abc": "", "xyz": ""})
                  .pod_anti_affinity_exists("abc", "zone", REQUIRED)
                  .pod_anti_affinity_exists("def", "zone", REQUIRED).obj()],
         "node": _NODE1, "want": (U, ANTI)},
        {"name": "PodAffinity fails PreFilter with an invalid affinity label syntax",
         "pod": P().namespace("").labels(_POD_LABEL)
         .pod_affinity_in("service", "region", ["{{.bad-value.}}"], REQUIRED)
         .pod_affinity_in("service", "node", ["antivirusscan", "value2"], REQUIRED).obj(),
         "node": _NODE1, "pre": (UU, BAD_VALUE)},
        {"name": "PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax",
         "pod": P().namespace("").labels(_POD_LABEL)
         .pod_affinity_in("service", "region", ["foo"], REQUIRED)
         .pod_affinity_in("service", "node", ["{{.bad-value.}}"], REQUIRED).obj(),
         "node": _NODE1, "pre": (UU, BAD_VALUE)},
        {"name": "affinity with NamespaceSelector",
         "pod": with_terms("", "", _POD_LABEL2, [term(selector("In", "service", ["securityscan", "value2"]), "region", namespace_selector=_TEAM1)], None),
         "pods": [P().namespace("subteam1.team1").labels(_POD_LABEL).node("node1").obj()],
         "node": _NODE1},
        {"name": "affinity with non-matching NamespaceSelector",
         "pod": with_terms("", "", _POD_LABEL2, [term(selector("In", "service", ["securityscan", "value2"]), "region", namespace_selector=_TEAM1)], None),
         "pods": [P().namespace("subteam1.team2").labels(_POD_LABEL).node("node1").obj()],
         "node": _NODE1, "want": (UU, AFF)},
        {"name": "anti-affinity with matching NamespaceSelector",
         "pod": with_terms("subteam1.team1", "", _POD_LABEL2, None, [term(selector("In", "service", ["securityscan", "value2"]), "zone", namespace_selector=_TEAM1)]),
         "pods": [P().namespace("subteam2.team1").labels(_POD_LABEL).node("node1").obj()],
         "node": _NODE1, "want": (U, ANTI)},
        {"name": "anti-affinity with matching all NamespaceSelector",
         "pod": with_terms("subteam1.team1", "", _POD_LABEL2, None, [term(selector("In", "service", ["securityscan", "value2"]), "zone", namespace_selector={})]),
         "pods": [P().namespace("subteam2.team1").labels(_POD_LABEL).node("node1").obj()],
         "node": _NODE1, "want": (U, ANTI)},
        {"name": "anti-affinity with non-matching NamespaceSelector",
         "pod": with_terms("subteam1.team1", "", _POD_LABEL2, None, [term(selector("In", "service", ["securityscan", "value2"]), "zone", namespace_selector=_TEAM1)]),
         "pods": [P().namespace("subteam1.team2").labels(_POD_LABEL).node("node1").obj()],
         "node": _NODE1},
    ]


_RG_CHINA = {"region": "China"}
_RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
_RG_INDIA = {"region": "India"}


def _n(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"name": name, "labels": labels}


def _abc(name: str, zone: str) -> dict[str, Any]:
    return _n(name, {"region": "r1", "zone": zone, "hostname": name})


def multiple_nodes() -> list[dict[str, Any]]:
    return [
        {"name": "A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them has an existing pod that matches the affinity rules",
         "pod": P().namespace("").pod_affinity_in("foo", "region", ["bar"], REQUIRED).obj(),
         "pods": [P().name("p1").node("node1").labels({"foo": "bar"}).obj()],
         "nodes": [_n("node1", _RG_CHINA), _n("node2", _RG_CHINA_AZ1), _n("node3", _RG_INDIA)],
         "want": [None, None, (UU, AFF)]},
        {"name": "The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the collection "
                 "should not be blocked from being scheduled onto any node, even there's no existing pod that matches the rule anywhere.",
         "pod": P().namespace("").labels({"foo": "bar", "service": "securityscan"})
         .pod_affinity_in("foo", "zone", ["bar"], REQUIRED)
         .pod_affinity_in("service", "zone", ["securityscan"], REQUIRED).obj(),
         "pods": [P().name("p1").node("nodeA").labels({"foo": "bar"}).obj()],
         "nodes": [_n("nodeA", {"zone": "az1", "hostname": "h1"}), _n("nodeB", {"zone": "az2", "hostname": "h2"})],
         "want": [None, None]},
        {"name": "The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
         "pod": P().namespace("").labels({"foo": "bar", "service": "securityscan"})
         .pod_affinity_in("foo", "zone", ["bar"], REQUIRED)
         .pod_affinity_in("service", "zone", ["securityscan"], REQUIRED).obj(),
         "pods": [P().name("p1").node("nodeA").labels({"foo": "bar"}).obj()],
         "nodes": [_n("nodeA", {"zoneLabel": "az1", "hostname": "h1"}), _n("nodeB", {"zoneLabel": "az2", "hostname": "h2"})],
         "want": [(UU, AFF), (UU, AFF)]},
        {"name": "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
         "pod": P().namespace("").pod_anti_affinity_in("foo", "region", ["abc"], REQUIRED).obj(),
         "pods": [P().node("nodeA").labels({"foo": "abc"}).obj()],
         "nodes": [_n("nodeA", {"region": "r1", "hostname": "nodeA"}), _n("nodeB", {"region": "r1", "hostname": "nodeB"})],
         "want": [(U, ANTI), (U, ANTI)]},
        {"name": "This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
         "pod": P().namespace("").pod_anti_affinity_in("foo", "region", ["abc"], REQUIRED)
         .pod_anti_affinity_in("service", "zone", ["securityscan"], REQUIRED).obj(),
         "pods": [P().node("nodeA").labels({"foo": "abc", "service": "securityscan"}).obj()],
         "nodes": [_n("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}), _n("nodeB", {"region": "r1", "zone": "z2", "hostname": "nodeB"})],
         "want": [(U, ANTI), (U, ANTI)]},
        {"name": "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
         "pod": P().namespace("").pod_anti_affinity_in("foo", "region", ["abc"], REQUIRED).obj(),
         "pods": [P().node("nodeA").labels({"foo": "abc"}).obj()],
         "nodes": [_n("nodeA", _RG_CHINA), _n("nodeB", _RG_CHINA_AZ1), _n("nodeC", _RG_INDIA)],
         "want": [(U, ANTI), (U, ANTI), None]},
        {"name": "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC has an existing pod that match the inter pod affinity rule but in different namespace)",
         "pod": P().namespace("NS1").labels({"foo": "123"}).pod_anti_affinity_in("foo", "region", ["bar"], REQUIRED).obj(),
         "pods": [P().node("nodeA").namespace("NS1").labels({"foo": "bar"}).obj(),
                  P().node("nodeC").namespace("NS2").pod_anti_affinity_in("foo", "region", ["123"], REQUIRED).obj()],
         "nodes": [_n("nodeA", _RG_CHINA), _n("nodeB", _RG_CHINA_AZ1), _n("nodeC", _RG_INDIA)],
         "want": [(U, ANTI), (U, ANTI), None]},
        {"name": "Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector of the term is firstly checked, and then topologyKey of the term is also checked",
         "pod": P().label("foo", "").obj(),
         "pods": [P().node("nodeA").namespace("").pod_anti_affinity_exists("foo", "invalid-node-label", REQUIRED).obj()],
         "nodes": [_abc("nodeA", "z1"), _n("nodeB", {"region": "r1", "zone": "z1", "hostname": "nodeB"})],
         "pre": SKIP, "want": [None, None]},
        {"name": "Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
         "pod": P().node("nodeA").namespace("").pod_anti_affinity_exists("foo", "invalid-node-label", REQUIRED).obj(),
         "pods": [P().node("nodeA").labels({"foo": ""}).obj()],
         "nodes": [_abc("nodeA", "z1"), _n("nodeB", {"region": "r1", "zone": "z1", "hostname": "nodeB"})],
         "want": [None, None]},
        {"name": "Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each existingPod's terms on all nodes",
         "pod": P().label("foo", "").label("bar", "").obj(),
         "pods": [P().node("nodeA").namespace("").pod_anti_affinity_exists("foo", "zone", REQUIRED).obj(),
                  P().node("nodeA").namespace("").pod_anti_affinity_exists("bar", "region", REQUIRED).obj()],
         "nodes": [_abc("nodeA", "z1"), _abc("nodeB", "z2")],
         "want": [(U, EXISTING), (U, EXISTING)]},
        {"name": "Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates one anti-affinity rule of existingPod",
         "pod": P().namespace("").pod_anti_affinity_exists("foo", "zone", REQUIRED)
         .pod_anti_affinity_exists("bar", "region", REQUIRED).obj(),
         "pods": [P().node("nodeA").labels({"foo": ""}).obj(), P().node("nodeB").labels({"bar": ""}).obj()],
         "nodes": [_abc("nodeA", "z1"), _abc("nodeB", "z2")],
         "want": [(U, ANTI), (U, ANTI)]},
        {"name": "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
         "pod": P().label("foo", "").label("bar", "").obj(),
         "pods": [P().node("nodeA").namespace("").pod_anti_affinity_exists("foo", "invalid-node-label", REQUIRED)
                  .pod_anti_affinity_exists("bar", "zone", REQUIRED).obj()],
         "nodes": [_abc("nodeA", "z1"), _abc("nodeB", "z2")],
         "want": [(U, EXISTING), None]},
        {"name": "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
         "pod": P().namespace("").pod_anti_affinity_exists("foo", "invalid-node-label", REQUIRED)
         .pod_anti_affinity_exists("bar", "zone", REQUIRED).obj(),
         "pods": [P().name("podA").node("nodeA").labels({"foo": "", "bar": ""}).obj()],
         "nodes": [_abc("nodeA", "z1"), _abc("nodeB", "z2")],
         "want": [(U, ANTI), None]},
        {"name": "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
         "pod": P().label("foo", "").label("bar", "").obj(),
         "pods": [P().namespace("").node("nodeA").pod_anti_affinity_exists("foo", "region", REQUIRED)
                  .pod_anti_affinity_exists("bar", "zone", REQUIRED).obj()],
         "nodes": [_abc("nodeA", "z1"), _abc("nodeB", "z2")],
         "want": [(U, EXISTING), (U, EXISTING)]},
        {"name": "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
         "pod": P().namespace("").pod_anti_affinity_exists("foo", "region", REQUIRED)
         .pod_anti_affinity_exists("bar", "zone", REQUIRED).obj(),
         "pods": [P().node("nodeA").labels({"foo": "", "bar": ""}).obj()],
         "nodes": [_abc("nodeA", "z1"), _abc("nodeB", "z2")],
         "want": [(U, ANTI), (U, ANTI)]},
        {"name": "Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term matches incoming pod, so incoming pod can only be scheduled to nodeC",
         "pod": P().label("foo", "").label("bar", "").obj(),
         "pods": [P().node("nodeA").namespace("").pod_anti_affinity_exists("foo", "zone", REQUIRED)
                  .pod_anti_affinity_exists("labelA", "zone", REQUIRED).obj(),
                  P().node("nodeB").namespace("").pod_anti_affinity_exists("bar", "zone", REQUIRED)
                  .pod_anti_affinity_exists("labelB", "zone", REQUIRED).obj()],
         "nodes": [_abc("nodeA", "z1"), _abc("nodeB", "z2"), _abc("nodeC", "z3")],
         "want": [(U, EXISTING), (U, EXISTING), None]},
        {"name": "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match",
         "pod": P().namespace("").pod_affinity_exists("foo", "region", REQUIRED)
         .pod_affinity_exists("bar", "zone", REQUIRED).obj(),
         "pods": [P().name("pod1").labels({"foo": "", "bar": ""}).node("nodeA").obj()],
         "nodes": [_abc("nodeA", "z1"), _n("nodeB", {"region": "r1", "zone": "z1", "hostname": "nodeB"})],
         "want": [None, None]},
        {"name": "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match, and the match logic should be satisfied on the same pod",
         "pod": P().namespace("").pod_affinity_exists("foo", "region", REQUIRED)
         .pod_affinity_exists("bar", "zone", REQUIRED).obj(),
         "pods": [P().node("nodeA").name("pod1").namespace("").labels({"foo": ""}).obj(),
                  P().node("nodeB").name("pod2").namespace("").labels({"bar": ""}).obj()],
         "nodes": [_abc("nodeA", "z1"), _abc("nodeB", "z2")],
         "want": [(UU, AFF), (UU, AFF)]},
    ]


def make_nodes(rows: list[dict[str, Any]]) -> list[Any]:
    return [node(r["name"], r["labels"]) for r in rows]
