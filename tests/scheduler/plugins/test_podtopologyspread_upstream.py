"""PodTopologySpread, ported from upstream's tables: one test per upstream case.

kubernetes v1.36.2, pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go and
scoring_test.go; the cases are in ``podtopologyspread_cases.py`` (function, then case name in
the test id). Each test runs what the upstream test runs on the same objects:

* TestPreFilterState: PreFilter with ListDefaulting and the case's defaultConstraints; the
  constraints (maxSkew, key, minDomains, policies, selector), counts per domain and critical
  paths (compared as upstream's comparer does, tied values sorted).
* TestPreFilterStateAddPod / RemovePod: PreFilter for the preemptor, then AddPod/RemovePod.
* TestSingleConstraint / TestMultipleConstraints: PreFilter, then Filter's code per node.
* TestPreFilterDisabled: Filter without PreFilter's state is an Error.
* TestPreScoreSkip: PreScore skips.
* TestPreScoreStateEmptyNodes: PreScore's state (ignored nodes, counts, weights).
* TestPodTopologySpreadScore: SystemDefaulting; PreScore on the case's nodes (failedNodes are
  in the cluster only), Score and NormalizeScore per node.

Upstream toggles the NodeInclusionPolicyInPodTopologySpread and MatchLabelKeysInPodTopologySpread
gates per case; both are on in v1.36.2 and dralab models them on, so a case written for a gate
switched off expects what that gate's absence does. ``KNOWN`` would list a case dralab answers
differently, as a strict expected failure with the reason; none is left.

A case's ``objs`` (the Services and ReplicaSets upstream gives its informer factory) go into the
store as ``build_cluster`` puts them there (``set_service_selector`` /
``set_controller_selector``). Upstream's Services have no namespace, as its pods; dralab's
test pods are in "default", and so are the Services here.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from dralab.api.core import Node, Pod
from dralab.api.features import FeatureGates
from dralab.cluster import ClusterState, PodInfo
from dralab.scheduler.framework import Code, CycleState, Handle, NodeScore
from dralab.scheduler.plugins.podtopologyspread import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    PodTopologySpread,
)
from dralab.scheduler.plugins.podtopologyspread_constraints import (
    DefaultConstraint,
    SpreadArgs,
    SpreadConstraint,
    parse_selector,
)

from . import podtopologyspread_cases as cases
from .kube import cluster_of, make_node, make_pod

CODES = {"Success": Code.SUCCESS, "Unschedulable": Code.UNSCHEDULABLE,
         "UnschedulableAndUnresolvable": Code.UNSCHEDULABLE_AND_UNRESOLVABLE}
# (table, case name) -> why dralab differs; every case passes since the store holds the
# Services' and controllers' selectors.
KNOWN: dict[tuple[str, str], str] = {}


def add_objects(cluster: ClusterState, rows: Sequence[Mapping[str, Any]] | None) -> None:
    """The case's Services (``Spec.Selector`` a label map) and ReplicaSets (``ObjectMeta``
    and a LabelSelector) into the store."""
    for row in rows or ():
        meta = row.get("ObjectMeta") or {}
        selector = row["Spec"]["Selector"]
        if meta:
            cluster.set_controller_selector("ReplicaSet", meta["Namespace"], meta["Name"],
                                            selector)
        else:
            cluster.set_service_selector("default", meta.get("Name", "svc"), selector)


def _known(table: str, rows: Sequence[Mapping[str, Any]]) -> list[Any]:
    out = []
    for row in rows:
        reason = KNOWN.get((table, row["name"]))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(row, id=row["name"], marks=marks))
    return out


def nodes_of(rows: Sequence[Mapping[str, Any]]) -> list[Node]:
    return [make_node(r["name"], 1000, 1 << 30, labels=r.get("labels"),
                      taints=r.get("taints", ())) for r in rows]


def pod_of(row: Mapping[str, Any], default_name: str = "p") -> Pod:
    fields = dict(row)
    fields.setdefault("name", default_name)
    return make_pod(**fields)


def pods_of(rows: Sequence[Mapping[str, Any]] | None) -> list[Pod]:
    return [pod_of(r, f"pod-{i}") for i, r in enumerate(rows or [])]


def plugin_for(cluster: ClusterState, args: SpreadArgs, row: Mapping[str, Any] | None = None
               ) -> PodTopologySpread:
    """The plugin; a case that leaves enableMatchLabelKeys false (where it has the field) runs
    with the gate MatchLabelKeysInPodTopologySpread off, as upstream's test sets it."""
    gate_off = row is not None and row.get("enableMatchLabelKeys") is False
    handle = Handle(cluster, FeatureGates(), random.Random(0), "default-scheduler")
    return PodTopologySpread(dataclasses.replace(args, match_label_keys=not gate_off), handle)


def list_args(row: Mapping[str, Any]) -> SpreadArgs:
    defaults = tuple(DefaultConstraint(c["MaxSkew"], c["TopologyKey"], c["WhenUnsatisfiable"])
                     for c in row.get("defaultConstraints") or row.get("DefaultConstraints") or [])
    return SpreadArgs(defaults, False)


def _selector_key(raw: Any) -> tuple[bool, frozenset[Any]]:
    selector = parse_selector(None if raw == "NOTHING" else raw)
    return selector.nothing, frozenset(selector.requirements)


def check_constraints(got: Sequence[SpreadConstraint], want: Sequence[Mapping[str, Any]]
                      ) -> None:
    assert [(c.max_skew, c.topology_key, c.min_domains, c.node_affinity_policy,
             c.node_taints_policy, (c.selector.nothing, frozenset(c.selector.requirements)))
            for c in got] == [
        (w["MaxSkew"], w["TopologyKey"], w["MinDomains"], w["NodeAffinityPolicy"],
         w["NodeTaintsPolicy"], _selector_key(w.get("Selector"))) for w in want]


def _paths(pair: Sequence[Sequence[Any]]) -> list[tuple[str, int]]:
    """upstream's criticalPaths comparer: values of equal counts sorted."""
    (v0, n0), (v1, n1) = pair
    if n0 == n1 and v0 > v1:
        v0, v1 = v1, v0
    return [(v0, n0), (v1, n1)]


def check_filter_state(state: CycleState, want: Mapping[str, Any]) -> None:
    data = state.get("PreFilterPodTopologySpread")
    assert data is not None
    check_constraints(data.constraints, want.get("Constraints") or [])  # type: ignore[attr-defined]
    assert [dict(c) for c in data.counts] == [  # type: ignore[attr-defined]
        dict(m or {}) for m in want.get("TpValueToMatchNum") or []]
    assert [_paths(p.paths) for p in data.paths] == [  # type: ignore[attr-defined]
        _paths(p) for p in want.get("CriticalPaths") or []]


# --- filtering_test.go ---------------------------------------------------------------------

@pytest.mark.parametrize("row", _known("TestPreFilterState", cases.PRE_FILTER_STATE))
def test_pre_filter_state(row: Mapping[str, Any]) -> None:
    cluster = cluster_of(nodes_of(row.get("nodes") or []), pods_of(row.get("existingPods")))
    add_objects(cluster, row.get("objs"))
    incoming = cluster.add_pod(pod_of(row["pod"]))
    plugin = plugin_for(cluster, list_args(row), row)
    state = CycleState()
    _, status = plugin.pre_filter(state, incoming, cluster)
    if row.get("wantPrefilterStatus") == "STATUS:Skip":
        assert status.code is Code.SKIP
        return
    assert status.is_success()
    check_filter_state(state, row["want"])


def _preemption_setup(row: Mapping[str, Any]) -> tuple[ClusterState, PodInfo,
                                                        PodTopologySpread, CycleState]:
    cluster = cluster_of(nodes_of(row.get("nodes") or []), pods_of(row.get("existingPods")))
    preemptor = cluster.add_pod(pod_of(row["preemptor"], "preemptor"))
    plugin = plugin_for(cluster, SpreadArgs((), False))
    state = CycleState()
    _, status = plugin.pre_filter(state, preemptor, cluster)
    assert status.is_success()
    return cluster, preemptor, plugin, state


@pytest.mark.parametrize("row", _known("TestPreFilterStateAddPod", cases.ADD_POD))
def test_pre_filter_state_add_pod(row: Mapping[str, Any]) -> None:
    cluster, preemptor, plugin, state = _preemption_setup(row)
    added = PodInfo(pod=pod_of(row["addedPod"], "added"))
    node = cluster.nodes[row["nodes"][row.get("nodeIdx", 0)]["name"]]
    assert plugin.add_pod(state, preemptor, added, node).is_success()
    check_filter_state(state, row["want"])


@pytest.mark.parametrize("row", _known("TestPreFilterStateRemovePod", cases.REMOVE_POD))
def test_pre_filter_state_remove_pod(row: Mapping[str, Any]) -> None:
    cluster, preemptor, plugin, state = _preemption_setup(row)
    index = row.get("deletedPodIdx", 0)
    existing = row.get("existingPods") or []
    if 0 <= index < len(existing):
        name = existing[index].get("name", f"pod-{index}")
        deleted = cluster.pods[f"{existing[index].get('namespace', 'default')}/{name}"]
    else:
        deleted = PodInfo(pod=pod_of(row["deletedPod"], "deleted"))
    node = cluster.nodes[row["nodes"][row.get("nodeIdx", 0)]["name"]]
    assert plugin.remove_pod(state, preemptor, deleted, node).is_success()
    check_filter_state(state, row["want"])


def _filter_codes(row: Mapping[str, Any]) -> dict[str, Code]:
    nodes = nodes_of(row.get("nodes") or [])
    cluster = cluster_of(nodes, pods_of(row.get("existingPods")))
    incoming = cluster.add_pod(pod_of(row["pod"]))
    plugin = plugin_for(cluster, SpreadArgs((), False))
    state = CycleState()
    _, status = plugin.pre_filter(state, incoming, cluster)
    assert status.is_success()
    out: dict[str, Code] = {}
    for node in nodes:
        result = plugin.filter(state, incoming, cluster.nodes[node.metadata.name or ""])
        out[node.metadata.name or ""] = result.code
        if result.code is Code.UNSCHEDULABLE:
            assert result.reasons == (ERR_REASON_CONSTRAINTS_NOT_MATCH,)
        elif result.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            assert result.reasons == (ERR_REASON_NODE_LABEL_NOT_MATCH,)
    return out


@pytest.mark.parametrize("row", _known("TestSingleConstraint", cases.SINGLE_CONSTRAINT))
def test_single_constraint(row: Mapping[str, Any]) -> None:
    assert _filter_codes(row) == {k: CODES[v] for k, v in row["wantStatusCode"].items()}


@pytest.mark.parametrize("row", _known("TestMultipleConstraints", cases.MULTIPLE_CONSTRAINTS))
def test_multiple_constraints(row: Mapping[str, Any]) -> None:
    assert _filter_codes(row) == {k: CODES[v] for k, v in row["wantStatusCode"].items()}


def test_pre_filter_disabled() -> None:
    """TestPreFilterDisabled: Filter without PreFilter's state is an Error."""
    cluster = cluster_of([make_node("n", 1000, 1 << 30)])
    incoming = cluster.add_pod(make_pod("p"))
    plugin = plugin_for(cluster, SpreadArgs((), False))
    assert plugin.filter(CycleState(), incoming, cluster.nodes["n"]).code is Code.ERROR


# --- scoring_test.go -----------------------------------------------------------------------

@pytest.mark.parametrize("row", _known("TestPreScoreSkip", cases.PRE_SCORE_SKIP))
def test_pre_score_skip(row: Mapping[str, Any]) -> None:
    nodes = nodes_of(row.get("nodes") or [])
    cluster = cluster_of(nodes)
    add_objects(cluster, row.get("objs"))
    incoming = cluster.add_pod(pod_of(row["pod"]))
    plugin = plugin_for(cluster, list_args(row["config"]))
    status = plugin.pre_score(CycleState(), incoming,
                              [cluster.nodes[n.metadata.name or ""] for n in nodes])
    assert status.code is Code.SKIP


@pytest.mark.parametrize("row", _known("TestPreScoreStateEmptyNodes", cases.PRE_SCORE_STATE))
def test_pre_score_state_empty_nodes(row: Mapping[str, Any]) -> None:
    nodes = nodes_of(row.get("nodes") or [])
    cluster = cluster_of(nodes)
    add_objects(cluster, row.get("objs"))
    incoming = cluster.add_pod(pod_of(row["pod"]))
    config = row.get("config") or {}
    args = list_args(config) if config.get("DefaultingType") == "List" else SpreadArgs()
    plugin = plugin_for(cluster, args)
    state = CycleState()
    assert plugin.pre_score(state, incoming, [cluster.nodes[n.metadata.name or ""]
                                              for n in nodes]).is_success()
    data: Any = state.get("PreScorePodTopologySpread")
    want = row["want"]
    check_constraints(data.constraints, want.get("Constraints") or [])
    assert data.ignored == set(want.get("IgnoredNodes") or ())
    # Upstream keeps no counts for a hostname constraint (counted per node in Score).
    got_counts = [dict(counts) for counts in data.counts]
    assert got_counts == [dict(m or {}) for m in want.get("TopologyValueToPodCounts") or []]
    assert data.weights == pytest.approx(list(want.get("TopologyNormalizingWeight") or []))


@pytest.mark.parametrize("row", _known("TestPodTopologySpreadScore", cases.SCORE))
def test_pod_topology_spread_score(row: Mapping[str, Any]) -> None:
    nodes = nodes_of(row.get("nodes") or [])
    cluster = cluster_of([*nodes, *nodes_of(row.get("failedNodes") or [])],
                         pods_of(row.get("existingPods")))
    add_objects(cluster, row.get("objs"))
    incoming = cluster.add_pod(pod_of(row["pod"]))
    plugin = plugin_for(cluster, SpreadArgs(), row)
    state = CycleState()
    infos = [cluster.nodes[n.metadata.name or ""] for n in nodes]
    assert plugin.pre_score(state, incoming, infos).is_success()
    scores = []
    for info in infos:
        value, status = plugin.score(state, incoming, info)
        assert status.is_success()
        scores.append(NodeScore(info.name, value))
    assert plugin.normalize_score(state, incoming, scores).is_success()
    assert [(s.name, s.score) for s in scores] == [(w["Name"], w["Score"]) for w in row["want"]]


def test_the_gate_switches_match_label_keys_off() -> None:
    """create() reads MatchLabelKeysInPodTopologySpread (what the cases above set directly)."""
    cluster = cluster_of([])
    for value in (True, False):
        gates = FeatureGates().with_overrides({"MatchLabelKeysInPodTopologySpread": value})
        plugin = PodTopologySpread.create({}, Handle(cluster, gates, random.Random(0), "x"))
        assert plugin._args.match_label_keys is value


def test_every_upstream_case_is_here() -> None:
    """The tables' sizes in v1.36.2 (a case lost while editing would go unnoticed)."""
    assert [len(t) for t in (cases.PRE_FILTER_STATE, cases.ADD_POD, cases.REMOVE_POD,
                             cases.SINGLE_CONSTRAINT, cases.MULTIPLE_CONSTRAINTS,
                             cases.PRE_SCORE_SKIP, cases.PRE_SCORE_STATE, cases.SCORE)] == [
        36, 16, 9, 23, 13, 2, 12, 28]
    assert math.isclose(cases.PRE_SCORE_STATE[0]["want"]["TopologyNormalizingWeight"][0],
                        math.log(4))
