"""InterPodAffinity, ported from upstream's tables: one test per upstream case.

kubernetes v1.36.2, pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go
(TestRequiredAffinitySingleNode, TestRequiredAffinityMultipleNodes, TestPreFilterDisabled,
TestPreFilterStateAddRemovePod, TestPreFilterStateClone,
TestGetTPMapMatchingIncomingAffinityAntiAffinity) and scoring_test.go (TestPreferredAffinity,
TestPreferredAffinityWithHardPodAffinitySymmetricWeight); the tables are in
``interpodaffinity_filter_cases.py`` and ``interpodaffinity_score_cases.py`` (function, then
case name in the test id). Each test runs what the upstream test runs on the same objects:
PreFilter, then Filter per node; PreScore, Score and NormalizeScore per node; AddPod /
RemovePod against the state PreFilter builds with and without the added pod.

Upstream's namespaces (the Namespace objects its informers are given) go into the cluster
store; upstream's empty namespace is "default" here (dralab's store keys pods by
namespace and name, so unnamed pods get names).
"""

# ruff: noqa: E501
from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from dralab.api.codec import decode
from dralab.api.core import Namespace, Node, Pod
from dralab.api.features import FeatureGates
from dralab.cluster import ClusterState, PodInfo
from dralab.scheduler.framework import Code, CycleState, Handle, NodeScore
from dralab.scheduler.plugins.interpodaffinity import InterPodAffinity
from dralab.scheduler.plugins.interpodaffinity_terms import AffinityArgs

from . import interpodaffinity_filter_cases as fcases
from . import interpodaffinity_score_cases as scases
from .kubepods import REQUIRED, P, node, selector, term

CODES = {"Success": Code.SUCCESS, "Unschedulable": Code.UNSCHEDULABLE,
         "UnschedulableAndUnresolvable": Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
         "Skip": Code.SKIP, "Error": Code.ERROR}

# scoring_test.go's namespaces (nsLabelT1 / nsLabelT2)
NAMESPACES = {"subteam1.team1": {"team": "team1"}, "subteam2.team1": {"team": "team1"},
              "subteam1.team2": {"team": "team2"}, "subteam2.team2": {"team": "team2"}}


def namespace(name: str, labels: Mapping[str, str]) -> Namespace:
    obj = decode({"apiVersion": "v1", "kind": "Namespace",
                  "metadata": {"name": name, "labels": dict(labels)}})
    assert isinstance(obj, Namespace)
    return obj


def cluster_with(nodes: Sequence[Node], pods: Sequence[Pod] = (),
                 namespaces: Mapping[str, Mapping[str, str]] | None = None) -> ClusterState:
    cluster = ClusterState()
    for n in nodes:
        cluster.add_node(n)
    for p in pods:
        cluster.add_pod(p)
    for name, labels in (namespaces or {}).items():
        cluster.add_namespace(namespace(name, labels))
    return cluster


def plugin_for(cluster: ClusterState, args: AffinityArgs | None = None) -> InterPodAffinity:
    handle = Handle(cluster, FeatureGates(), random.Random(0), "default-scheduler")
    return InterPodAffinity(args or AffinityArgs(), handle)


def incoming(pod: Pod) -> PodInfo:
    return PodInfo(pod)


def outcome(status: Any) -> tuple[str, str] | None:
    if status.code == Code.SUCCESS:
        return None
    code = next(k for k, v in CODES.items() if v == status.code)
    return code, "; ".join(status.reasons)


def _ids(rows: Sequence[Mapping[str, Any]]) -> list[Any]:
    return [pytest.param(r, id=r["name"]) for r in rows]


# --- filtering_test.go ------------------------------------------------------------------

@pytest.mark.parametrize("row", _ids(fcases.single_node()))
def test_required_affinity_single_node(row: Mapping[str, Any]) -> None:
    n = node(row["node"]["name"], row["node"]["labels"])
    cluster = cluster_with([n], row.get("pods") or [], NAMESPACES)
    plugin = plugin_for(cluster)
    state = CycleState()
    pod = incoming(row["pod"])
    _, status = plugin.pre_filter(state, pod, cluster)
    want_pre = row.get("pre")
    if want_pre is not None:
        assert (next(k for k, v in CODES.items() if v == status.code),
                "; ".join(status.reasons)) == (want_pre[0], want_pre[1] or "; ".join(
                    status.reasons))
        return
    assert status.code == Code.SUCCESS
    assert outcome(plugin.filter(state, pod, cluster.nodes[n.metadata.name or ""])) == \
        row.get("want")


@pytest.mark.parametrize("row", _ids(fcases.multiple_nodes()))
def test_required_affinity_multiple_nodes(row: Mapping[str, Any]) -> None:
    nodes = fcases.make_nodes(row["nodes"])
    cluster = cluster_with(nodes, row.get("pods") or [], {"NS1": {}})
    plugin = plugin_for(cluster)
    state = CycleState()
    pod = incoming(row["pod"])
    _, status = plugin.pre_filter(state, pod, cluster)
    if row.get("pre"):
        assert status.code == Code.SKIP
        return
    assert status.code == Code.SUCCESS
    got = [outcome(plugin.filter(state, pod, cluster.nodes[n.metadata.name or ""]))
           for n in nodes]
    assert got == row["want"]


def test_pre_filter_disabled() -> None:
    cluster = cluster_with([node("n")])
    status = plugin_for(cluster).filter(CycleState(), incoming(P().obj()), cluster.nodes["n"])
    assert status.code == Code.ERROR


# TestPreFilterStateAddRemovePod's shared terms
_LABEL1 = {"region": "r1", "zone": "z11"}
_LABEL2 = {"region": "r1", "zone": "z12"}
_LABEL3 = {"region": "r2", "zone": "z21"}
_SELECTOR1 = {"foo": "bar"}
_ANTI_FOO_BAR = {"requiredDuringSchedulingIgnoredDuringExecution": [
    term(selector("In", "foo", ["bar"]), "region")]}
_COMPLEX_TERMS = [term(selector("In", "foo", ["bar", "buzz"]), "region"),
                  term(selector("NotIn", "service", ["bar", "security", "test"]), "zone")]
_ANTI_COMPLEX = {"requiredDuringSchedulingIgnoredDuringExecution": _COMPLEX_TERMS}
_AFFINITY_COMPLEX = {"requiredDuringSchedulingIgnoredDuringExecution": _COMPLEX_TERMS}


def _add_remove_cases() -> list[dict[str, Any]]:
    nodes = [("nodeA", _LABEL1), ("nodeB", _LABEL2), ("nodeC", _LABEL3)]
    return [
        {"name": "preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
         "pending": P().name("pending").labels(_SELECTOR1).affinity({"podAntiAffinity": _ANTI_FOO_BAR}),
         "existing": [P().name("p1").labels(_SELECTOR1).node("nodeA"),
                      P().name("p2").node("nodeC").affinity({"podAntiAffinity": _ANTI_FOO_BAR})],
         "added": P().name("addedPod").labels(_SELECTOR1).node("nodeB").affinity({"podAntiAffinity": _ANTI_FOO_BAR}),
         "nodes": nodes, "anti": {("region", "r1"): 2}, "affinity": {}},
        {"name": "preFilterState anti-affinity terms are updated correctly after adding and removing a pod (2)",
         "pending": P().name("pending").labels(_SELECTOR1).affinity({"podAntiAffinity": _ANTI_COMPLEX}),
         "existing": [P().name("p1").labels(_SELECTOR1).node("nodeA"),
                      P().name("p2").node("nodeC").affinity({"podAntiAffinity": _ANTI_FOO_BAR})],
         "added": P().name("addedPod").labels(_SELECTOR1).node("nodeA").affinity({"podAntiAffinity": _ANTI_COMPLEX}),
         "nodes": nodes,
         "anti": {("region", "r1"): 2, ("zone", "z11"): 2, ("zone", "z21"): 1}, "affinity": {}},
        {"name": "preFilterState matching pod affinity and anti-affinity are updated correctly after adding and removing a pod",
         "pending": P().name("pending").labels(_SELECTOR1).affinity({"podAffinity": _AFFINITY_COMPLEX}),
         "existing": [P().name("p1").labels(_SELECTOR1).node("nodeA"),
                      P().name("p2").node("nodeC").affinity({"podAntiAffinity": _ANTI_FOO_BAR,
                                                             "podAffinity": _AFFINITY_COMPLEX})],
         "added": P().name("addedPod").labels(_SELECTOR1).node("nodeA").affinity({"podAntiAffinity": _ANTI_COMPLEX}),
         "nodes": nodes, "anti": {}, "affinity": {("region", "r1"): 2, ("zone", "z11"): 2}},
    ]


def _state_maps(state: CycleState) -> tuple[dict[Any, int], ...]:
    data: Any = state.get("PreFilterInterPodAffinity")
    assert data is not None
    return dict(data.existing), dict(data.affinity), dict(data.anti_affinity)


@pytest.mark.parametrize("row", _ids(_add_remove_cases()))
def test_pre_filter_state_add_remove_pod(row: Mapping[str, Any]) -> None:
    """Upstream's second case shares the first's name; "(2)" tells them apart here."""
    nodes = [node(name, labels) for name, labels in row["nodes"]]
    pending = incoming(row["pending"].obj())
    existing = [p.obj() for p in row["existing"]]
    added = row["added"].obj()

    def pre_filter(pods: list[Pod]) -> tuple[InterPodAffinity, CycleState, ClusterState]:
        cluster = cluster_with(nodes, pods)
        plugin = plugin_for(cluster)
        state = CycleState()
        _, status = plugin.pre_filter(state, pending, cluster)
        assert status.code == Code.SUCCESS
        return plugin, state, cluster

    _, all_state, _ = pre_filter([*existing, added])
    plugin, state, cluster = pre_filter(existing)
    original = _state_maps(state)
    node_info = cluster.nodes[added.spec.node_name or ""]
    assert plugin.add_pod(state, pending, PodInfo(added), node_info).code == Code.SUCCESS
    after = _state_maps(state)
    assert after[2] == row["anti"]
    assert after[1] == row["affinity"]
    assert after == _state_maps(all_state)
    assert plugin.remove_pod(state, pending, PodInfo(added), node_info).code == Code.SUCCESS
    assert _state_maps(state) == original


def test_pre_filter_state_clone() -> None:
    cluster = cluster_with([node("nodeA", {"name": "nodeA"})],
                           [P().node("nodeA").label("x", "").obj()])
    plugin = plugin_for(cluster)
    state = CycleState()
    pod = incoming(P().pod_affinity_exists("x", "name", REQUIRED)
                   .pod_anti_affinity_exists("x", "name", REQUIRED).obj())
    plugin.pre_filter(state, pod, cluster)
    source: Any = state.get("PreFilterInterPodAffinity")
    clone = source.clone()
    assert clone is not source
    assert (clone.existing, clone.affinity, clone.anti_affinity) == (
        source.existing, source.affinity, source.anti_affinity)
    clone.affinity[("name", "nodeA")] += 1
    assert source.affinity[("name", "nodeA")] == 1


def _tp_map_cases() -> list[dict[str, Any]]:
    def normal(*labels: str) -> P:
        pod = P().name("normal").node("nodeA")
        for label in labels:
            pod.label(label, "")
        return pod

    def affi(name: str, affinity: Sequence[str], anti: Sequence[str]) -> Pod:
        pod = P().name(name)
        for key in affinity:
            pod.pod_affinity_exists(key, "hostname", REQUIRED)
        for key in anti:
            pod.pod_anti_affinity_exists(key, "hostname", REQUIRED)
        return pod.obj()

    one = {("hostname", "nodeA"): 1}
    return [
        {"name": "nil test", "existing": [], "pod": P().name("aaa-normal").obj(),
         "affinity": {}, "anti": {}},
        {"name": "incoming pod without affinity/anti-affinity causes a no-op",
         "existing": [normal("aaa")], "pod": P().name("aaa-normal").obj(),
         "affinity": {}, "anti": {}},
        {"name": "no pod has label that violates incoming pod's affinity and anti-affinity",
         "existing": [normal("bbb")], "pod": affi("aaa-anti", ["aaa"], ["aaa"]),
         "affinity": {}, "anti": {}},
        {"name": "existing pod matches incoming pod's affinity and anti-affinity - single term case",
         "existing": [normal("aaa")], "pod": affi("affi-antiaffi", ["aaa"], ["aaa"]),
         "affinity": one, "anti": one},
        {"name": "existing pod matches incoming pod's affinity and anti-affinity - multiple terms case",
         "existing": [normal("aaa", "bbb")], "pod": affi("affi-antiaffi", ["aaa", "bbb"], ["aaa"]),
         "affinity": {("hostname", "nodeA"): 2}, "anti": one},
        {"name": "existing pod not match incoming pod's affinity but matches anti-affinity",
         "existing": [normal("aaa")],
         "pod": affi("affi-antiaffi", ["aaa", "bbb"], ["aaa", "bbb"]),
         "affinity": {}, "anti": one},
        {"name": "incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 1",
         "existing": [normal("aaa", "bbb")],
         "pod": affi("anaffi-antiaffiti", ["aaa", "ccc"], ["aaa", "ccc"]),
         "affinity": {}, "anti": one},
        {"name": "incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 2",
         "existing": [normal("bbb")],
         "pod": affi("affi-antiaffi", ["aaa", "bbb"], ["aaa", "bbb"]),
         "affinity": {}, "anti": one},
    ]


@pytest.mark.parametrize("row", _ids(_tp_map_cases()))
def test_get_tp_map_matching_incoming_affinity_anti_affinity(row: Mapping[str, Any]) -> None:
    """getIncomingAffinityAntiAffinityCounts, read from PreFilter's state (no state: a
    PreFilter that skipped counted nothing)."""
    cluster = cluster_with([node("nodeA", {"hostname": "nodeA"})],
                           [p.obj() for p in row["existing"]])
    plugin = plugin_for(cluster)
    state = CycleState()
    plugin.pre_filter(state, incoming(row["pod"]), cluster)
    data: Any = state.get("PreFilterInterPodAffinity")
    got = ({}, {}) if data is None else (dict(data.affinity), dict(data.anti_affinity))
    assert got == (row["affinity"], row["anti"])


# --- scoring_test.go --------------------------------------------------------------------

def _run_scores(row: Mapping[str, Any], args: AffinityArgs) -> list[int] | str:
    nodes = [node(n["name"], n["labels"]) for n in row["nodes"]]
    cluster = cluster_with(nodes, row.get("pods") or [], NAMESPACES)
    plugin = plugin_for(cluster, args)
    state = CycleState()
    pod = incoming(row["pod"])
    infos = [cluster.nodes[n.metadata.name or ""] for n in nodes]
    status = plugin.pre_score(state, pod, infos)
    if status.code != Code.SUCCESS:
        return next(k for k, v in CODES.items() if v == status.code)
    scores = []
    for info in infos:
        value, s = plugin.score(state, pod, info)
        assert s.code == Code.SUCCESS
        scores.append(NodeScore(info.name, value))
    plugin.normalize_score(state, pod, scores)
    return [s.score for s in scores]


@pytest.mark.parametrize("row", _ids(scases.preferred_affinity()))
def test_preferred_affinity(row: Mapping[str, Any]) -> None:
    got = _run_scores(row, AffinityArgs(1, bool(row.get("ignorePreferred"))))
    assert got == row.get("status", row.get("want"))


@pytest.mark.parametrize("row", _ids(scases.hard_pod_affinity_symmetric_weight()))
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(
        row: Mapping[str, Any]) -> None:
    got = _run_scores(row, AffinityArgs(row["hardPodAffinityWeight"]))
    assert got == row.get("status", row.get("want"))
