"""PodTopologySpread Filter, ported from upstream's table.

kubernetes v1.36.2, pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go,
TestSingleConstraint: one test per case, named by the case (PreFilter over all nodes, then
Filter per node, the expected status code per node). Cases whose comment says "in real case,
it's false" expect what the plugin alone answers (NodeAffinity would reject those nodes).
Node inclusion policies are on (NodeInclusionPolicyInPodTopologySpread is GA).

Written compactly: a node is ``"name zone=zone1 node=name"``, an existing pod
``"name@node foo"`` (labels with empty values, ``ns1/`` for another namespace, a trailing
``!`` when terminating).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from dralab.api.features import FeatureGates
from dralab.scheduler.framework import Code, CycleState, Handle
from dralab.scheduler.plugins.podtopologyspread import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    PodTopologySpread,
)
from dralab.scheduler.plugins.podtopologyspread_constraints import SpreadArgs

from .kube import cluster_of, make_node, make_pod

OK, NO, NEVER = Code.SUCCESS, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE
FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}
ZONES4 = ("node-a zone=zone1 node=node-a", "node-b zone=zone1 node=node-b",
          "node-x zone=zone2 node=node-x", "node-y zone=zone2 node=node-y")


def spread(max_skew: int, key: str, selector: Mapping[str, Any] | None = FOO,
           min_domains: int | None = None, affinity_policy: str | None = None,
           taints_policy: str | None = None, action: str = "DoNotSchedule") -> dict[str, Any]:
    out: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": action}
    if selector is not None:
        out["labelSelector"] = dict(selector)
    if min_domains is not None:
        out["minDomains"] = min_domains
    if affinity_policy:
        out["nodeAffinityPolicy"] = affinity_policy
    if taints_policy:
        out["nodeTaintsPolicy"] = taints_policy
    return out


def nodes_of(specs: Sequence[str]) -> list[Any]:
    out = []
    for spec in specs:
        name, *pairs = spec.split()
        taints = [dict(zip(("key", "value", "effect"), t[6:].replace(":", "=").split("="),
                           strict=True)) for t in pairs if t.startswith("taint:")]
        labels = dict(p.split("=", 1) if "=" in p else (p, "") for p in pairs
                      if not p.startswith("taint:"))
        out.append(make_node(name, 1000, 1 << 30, labels=labels, taints=taints))
    return out


def pods_of(specs: Sequence[str]) -> list[Any]:
    out = []
    for spec in specs:
        head, *labels = spec.split()
        terminating = head.endswith("!")
        head = head.rstrip("!")
        name, _, node = head.partition("@")
        namespace, _, name = name.rpartition("/")
        out.append(make_pod(name, namespace=namespace or "default", node=node,
                            labels=dict.fromkeys(labels, ""), terminating=terminating))
    return out


@dataclass
class Case:
    spread: Sequence[dict[str, Any]]
    nodes: Sequence[str]
    existing: Sequence[str]
    want: Mapping[str, Code]
    labels: Sequence[str] = ("foo",)
    pod: dict[str, Any] = field(default_factory=dict)


CASES: dict[str, Case] = {
    "no existing pods": Case([spread(1, "zone")], ZONES4, [],
                             {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK}),
    "no existing pods, incoming pod doesn't match itself": Case(
        [spread(1, "zone", BAR)], ZONES4, [],
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK}),
    "existing pods in a different namespace do not count": Case(
        [spread(1, "zone")], ZONES4,
        ["ns1/p-a1@node-a foo", "ns2/p-b1@node-a foo", "p-x1@node-x foo", "p-y1@node-y foo"],
        {"node-a": OK, "node-b": OK, "node-x": NO, "node-y": NO}),
    "existing pods do not match null selector": Case(
        [spread(1, "zone", None)], ZONES4, ["p-x1@node-x foo", "p-y1@node-y foo"],
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK}),
    "pods spread across zones as 3/3, all nodes fit": Case(
        [spread(1, "zone")], ZONES4,
        ["p-a1@node-a foo", "p-a2@node-a foo", "p-b1@node-b foo", "p-y1@node-y foo",
         "p-y2@node-y foo", "p-y3@node-y foo"],
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK}),
    "pods spread across zones as 1/2 due to absence of label 'zone' on node-b": Case(
        [spread(1, "zone")],
        ("node-a zone=zone1 node=node-a", "node-b zon=zone1 node=node-b",
         "node-x zone=zone2 node=node-x", "node-y zone=zone2 node=node-y"),
        ["p-a1@node-a foo", "p-b1@node-b foo", "p-x1@node-x foo", "p-y1@node-y foo"],
        {"node-a": OK, "node-b": NEVER, "node-x": NO, "node-y": NO}),
    "pod cannot be scheduled as all nodes don't have label 'rack'": Case(
        [spread(1, "rack")], ("node-a zone=zone1 node=node-a", "node-x zone=zone2 node=node-x"),
        [], {"node-a": NEVER, "node-x": NEVER}),
    "pods spread across nodes as 2/1/0/3, only node-x fits": Case(
        [spread(1, "node")], ZONES4,
        ["p-a1@node-a foo", "p-a2@node-a foo", "p-b1@node-b foo", "p-y1@node-y foo",
         "p-y2@node-y foo", "p-y3@node-y foo"],
        {"node-a": NO, "node-b": NO, "node-x": OK, "node-y": NO}),
    "pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit": Case(
        [spread(2, "node")], ZONES4,
        ["p-a1@node-a foo", "p-a2@node-a foo", "p-b1@node-b foo", "p-y1@node-y foo",
         "p-y2@node-y foo", "p-y3@node-y foo"],
        {"node-a": NO, "node-b": OK, "node-x": OK, "node-y": NO}),
    "pods spread across nodes as 2/1/0/3, but pod doesn't match itself": Case(
        [spread(1, "node")], ZONES4,
        ["p-a1@node-a foo", "p-a2@node-a foo", "p-b1@node-b foo", "p-y1@node-y foo",
         "p-y2@node-y foo", "p-y3@node-y foo"],
        {"node-a": NO, "node-b": OK, "node-x": OK, "node-y": NO}, labels=("bar",)),
    "incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits": Case(
        [spread(1, "node")], ZONES4,
        ["p-a1@node-a foo", "p-a2@node-a foo", "p-b1@node-b foo", "p-y1@node-y foo",
         "p-y2@node-y foo", "p-y3@node-y foo"],
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": NO},
        pod={"node_affinity_in": {"node": ["node-a", "node-y"]}}),
    "terminating Pods should be excluded": Case(
        [spread(1, "node")], ("node-a node=node-a", "node-b node=node-b"),
        ["p-a@node-a! foo", "p-b@node-b foo"], {"node-a": OK, "node-b": NO}),
    "incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits": Case(
        [spread(1, "zone")], ZONES4, ["p-b1@node-b foo", "p-b2@node-b foo", "p-y1@node-y foo"],
        {"node-a": OK, "node-b": OK, "node-x": NO, "node-y": NO},
        pod={"node_affinity_not_in": {"node": ["node-b"]}}),
    "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, "
    "then the third node fits": Case(
        [spread(2, "node", min_domains=4)],
        ("node-a node=node-a", "node-b node=node-b", "node-c node=node-c"),
        ["p-a1@node-a foo", "p-a2@node-a foo", "p-b1@node-b foo", "p-b2@node-b foo",
         "p-c1@node-c foo"],
        {"node-a": NO, "node-b": NO, "node-c": OK}),
    "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, "
    "then the all nodes fit": Case(
        [spread(2, "node", min_domains=2)],
        ("node-a node=node-a", "node-b node=node-b", "node-c node=node-c"),
        ["p-a1@node-a foo", "p-a2@node-a foo", "p-b1@node-b foo", "p-b2@node-b foo",
         "p-c1@node-c foo"],
        {"node-a": OK, "node-b": OK, "node-c": OK}),
    "pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, "
    "then the third and fourth nodes fit": Case(
        [spread(2, "zone", min_domains=3)], ZONES4,
        ["p-b1@node-a foo", "p-b2@node-b foo", "p-y1@node-y foo"],
        {"node-a": NO, "node-b": NO, "node-x": OK, "node-y": OK}),
    "pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, "
    "then the all nodes fit": Case(
        [spread(2, "zone", min_domains=1)], ZONES4,
        ["p-b1@node-a foo", "p-b2@node-b foo", "p-y1@node-y foo"],
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK}),
    "NodeAffinityPolicy honored with labelSelectors": Case(
        [spread(1, "node")],
        ("node-a node=node-a foo", "node-b node=node-b foo", "node-x node=node-x foo",
         "node-y node=node-y"),
        ["p-b1@node-a foo", "p-b2@node-b foo", "p-y1@node-y foo"],
        {"node-a": NO, "node-b": NO, "node-x": OK, "node-y": OK},
        pod={"node_selector": {"foo": ""}}),
    "NodeAffinityPolicy ignored with labelSelectors": Case(
        [spread(1, "node", affinity_policy="Ignore")],
        ("node-a node=node-a foo", "node-b node=node-b foo", "node-x node=node-x foo",
         "node-y node=node-y"),
        ["p-b1@node-a foo", "p-b2@node-b foo", "p-y1@node-y foo"],
        {"node-a": NO, "node-b": NO, "node-x": OK, "node-y": NO},
        pod={"node_selector": {"foo": ""}}),
    "NodeAffinityPolicy honored with nodeAffinity": Case(
        [spread(1, "node")],
        ("node-a node=node-a foo", "node-b node=node-b foo", "node-x node=node-x foo",
         "node-y node=node-y"),
        ["p-b1@node-a foo", "p-b2@node-b foo", "p-y1@node-y foo"],
        {"node-a": NO, "node-b": NO, "node-x": OK, "node-y": OK},
        pod={"node_affinity_in": {"foo": [""]}}),
    # Upstream names this case like the one two above (a copy-paste in the Go table).
    "NodeAffinityPolicy ignored with labelSelectors (nodeAffinity)": Case(
        [spread(1, "node", affinity_policy="Ignore")],
        ("node-a node=node-a foo", "node-b node=node-b foo", "node-x node=node-x foo",
         "node-y node=node-y"),
        ["p-b1@node-a foo", "p-b2@node-b foo", "p-y1@node-y foo"],
        {"node-a": NO, "node-b": NO, "node-x": OK, "node-y": NO},
        pod={"node_affinity_in": {"foo": [""]}}),
}


def _run(case: Case) -> dict[str, Code]:
    nodes = nodes_of(case.nodes)
    cluster = cluster_of(nodes, pods_of(case.existing))
    incoming = cluster.add_pod(make_pod("p", labels=dict.fromkeys(case.labels, ""),
                                        spread=case.spread, **case.pod))
    plugin = PodTopologySpread(SpreadArgs(), Handle(cluster, FeatureGates(), random.Random(0),
                                                    "default-scheduler"))
    state = CycleState()
    _, status = plugin.pre_filter(state, incoming, cluster)
    assert status.is_success()
    out = {}
    for node in nodes:
        result = plugin.filter(state, incoming, cluster.nodes[node.metadata.name or ""])
        out[node.metadata.name or ""] = result.code
        if result.code is NO:
            assert result.reasons == (ERR_REASON_CONSTRAINTS_NOT_MATCH,)
        elif result.code is NEVER:
            assert result.reasons == (ERR_REASON_NODE_LABEL_NOT_MATCH,)
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_single_constraint(name: str) -> None:
    assert _run(CASES[name]) == dict(CASES[name].want)
