"""Kueue's TAS flavor-snapshot tables, ported case by case.

Source: kubernetes-sigs/kueue at ff69552e79ad21652c36caa97038382e55625cf7,
``pkg/cache/scheduler/tas_flavor_snapshot_test.go``, every Test function; one pytest
case per upstream case, ids = ``<TestFunction>/<upstream case name>``. They run against
``dralab.queueing.kueue.tas`` (the TAS assigner, Kueue's ``TASFlavorSnapshot``).

Units: Kueue's ``resources.Requests`` hold CPU in milli-cores and everything else in
units; dralab holds every resource in milli-units, so ``_req`` scales all but CPU by
1000. Kueue's feature gates that change only its internal representation
(``VectorizedResourceRequests``, ``TASCachingRemainingResources``) change nothing in
dralab: their cases run once per upstream sub-test, with the same expectation.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping

import pytest

from dralab.queueing.kueue.tas import (
    TASFlavorSnapshot,
    TASNode,
    TASTopologyRequest,
    _Leaf,
    add_assumed_usage,
    compute_usage_per_domain,
    count_pods_in_assignment,
    truncate_assignment,
)
from dralab.queueing.kueue.tas_domains import HOSTNAME_LABEL, Domain, TASGates
from dralab.queueing.model import TopologyAssignment

GI = 1024 ** 3


def _req(**amounts: int) -> dict[str, int]:
    """Kueue requests (CPU milli, the rest units; ``nvidia_com_gpu`` for
    ``nvidia.com/gpu``) in dralab's milli-units."""
    out = {}
    for key, value in amounts.items():
        name = key.replace("nvidia_com_", "nvidia.com/")
        out[name] = value if name == "cpu" else value * 1000
    return out


def _ta(levels: list[str], *domains: tuple[list[str], int]) -> TopologyAssignment:
    return TopologyAssignment(tuple(levels), tuple((tuple(v), n) for v, n in domains))


def _snapshot(levels: list[str], nodes: list[TASNode] | None = None, name: str = "dummy",
              gates: TASGates | None = None) -> TASFlavorSnapshot:
    return TASFlavorSnapshot(name, levels, nodes or [], gates=gates)


# -- TestFreeCapacityPerDomain --------------------------------------------------------

def _free_capacity_snapshot(capacities: Mapping[str, tuple[dict[str, int], dict[str, int] | None]]
                            ) -> TASFlavorSnapshot:
    s = _snapshot(["level"])
    for did, (free, tas_usage) in capacities.items():
        s.leaves[did] = _Leaf(Domain(did, (did,)), None, dict(free), dict(free),
                              None if tas_usage is None else dict(tas_usage))
    return s


_Capacities = dict[str, tuple[dict[str, int], dict[str, int] | None]]
FREE_CAPACITY: dict[str, tuple[_Capacities, str]] = {
    "domains with free capacity and TAS usage": (
        {"domain2": (_req(cpu=1000, memory=2 * GI), _req(memory=GI, cpu=500)),
         "domain1": (_req(memory=4 * GI, cpu=2000, nvidia_com_gpu=1),
                     _req(cpu=500, nvidia_com_gpu=1, memory=2 * GI))},
        '{"domain1":{"freeCapacity":{"cpu":"2","memory":"4Gi","nvidia.com/gpu":"1"},'
        '"tasUsage":{"cpu":"500m","memory":"2Gi","nvidia.com/gpu":"1"}},'
        '"domain2":{"freeCapacity":{"cpu":"1","memory":"2Gi"},'
        '"tasUsage":{"cpu":"500m","memory":"1Gi"}}}'),
    "domain with free capacity, but without TAS usage": (
        {"domain1": (_req(cpu=1000), None)},
        '{"domain1":{"freeCapacity":{"cpu":"1"},"tasUsage":{}}}'),
    "domain without free capacity and without TAS usage": (
        {"domain1": ({}, None)}, '{"domain1":{"freeCapacity":{},"tasUsage":{}}}'),
    "snapshot without domains": ({}, "{}"),
}


@pytest.mark.parametrize("vectorized", [True, False],
                         ids=["VectorizedResourceRequests=true",
                              "VectorizedResourceRequests=false"])
@pytest.mark.parametrize("name", list(FREE_CAPACITY),
                         ids=[f"TestFreeCapacityPerDomain/{n}" for n in FREE_CAPACITY])
def test_free_capacity_per_domain(name: str, vectorized: bool) -> None:
    capacities, want = FREE_CAPACITY[name]
    got = _free_capacity_snapshot(capacities).serialize_free_capacity_per_domain()
    assert got == want
    json.loads(got)


# -- TestIsTopologyAssignmentStale ----------------------------------------------------

BLOCK, RACK = "cloud.provider.com/topology-block", "cloud.provider.com/topology-rack"


def _stale_tree(lowest: str) -> TASFlavorSnapshot:
    if lowest == "hostname":
        return _snapshot([BLOCK, HOSTNAME_LABEL],
                         [TASNode("n1", {BLOCK: "b1", HOSTNAME_LABEL: "n1"}, {})])
    return _snapshot([BLOCK, RACK], [TASNode("n1", {BLOCK: "b1", RACK: "r1"}, {})])


STALE = {
    "existing hostname leaf is not stale": ("hostname", ["n1"], False, ""),
    "missing hostname leaf is stale": ("hostname", ["n2"], True, "n2"),
    "deleted node is stale even when its hostname matches an existing root domain ID": (
        "hostname", ["b1"], True, "b1"),
    "existing non-hostname leaf is not stale": ("rack", ["b1", "r1"], False, ""),
    "missing non-hostname leaf is stale": ("rack", ["b1", "r2"], True, "b1"),
}


@pytest.mark.parametrize("name", list(STALE),
                         ids=[f"TestIsTopologyAssignmentStale/{n}" for n in STALE])
def test_is_topology_assignment_stale(name: str) -> None:
    tree, values, want_stale, want_domain = STALE[name]
    s = _stale_tree(tree)
    got = s.is_topology_assignment_stale(TopologyAssignment((), ((tuple(values), 0),)))
    assert got == (want_stale, want_domain)


# -- TestMergeTopologyAssignments -----------------------------------------------------

L12 = ["level-1", "level-2"]
AB, AC, DE, DF = ["a", "b"], ["a", "c"], ["d", "e"], ["d", "f"]
MERGE = {
    "topologies with different domains, all a before b": (
        [(AB, 1), (AC, 1)], [(DE, 1), (DF, 1)], [(AB, 1), (AC, 1), (DE, 1), (DF, 1)]),
    "topologies with different domains, all b before a": (
        [(DE, 1), (DF, 1)], [(AB, 1), (AC, 1)], [(AB, 1), (AC, 1), (DE, 1), (DF, 1)]),
    "topologies with different domains, mixed order": (
        [(AC, 1), (DE, 1)], [(AB, 1), (DF, 1)], [(AB, 1), (AC, 1), (DE, 1), (DF, 1)]),
    "topologies with different and the same domains, mixed order": (
        [(AC, 1), (DE, 1)], [(AB, 1), (DE, 1)], [(AB, 1), (AC, 1), (DE, 2)]),
    "topology a with empty domains": ([], [(AB, 1), (DE, 1)], [(AB, 1), (DE, 1)]),
    "topology b with empty domain": ([(AC, 1), (DE, 1)], [], [(AC, 1), (DE, 1)]),
}


@pytest.mark.parametrize("name", list(MERGE),
                         ids=[f"TestMergeTopologyAssignments/{n}" for n in MERGE])
def test_merge_topology_assignments(name: str) -> None:
    nodes = [TASNode(n, {"level-1": l1, "level-2": l2}, {})
             for n, l1, l2 in (("x", "a", "b"), ("y", "a", "c"), ("z", "d", "e"),
                               ("w", "d", "f"))]
    s = _snapshot(L12, nodes)
    a, b, want = MERGE[name]
    got = s.merge_topology_assignments(_ta(L12, *a), _ta(L12, *b))
    assert got == _ta(L12, *want)


# -- TestHasLevel -----------------------------------------------------------------------

HAS_LEVEL: dict[str, tuple[TASTopologyRequest | None, bool]] = {
    "topology request nil": (None, False),
    "topology request empty": (TASTopologyRequest(), False),
    "required": (TASTopologyRequest(required="level-1"), True),
    "required – invalid level": (TASTopologyRequest(required="invalid-level"), False),
    "preferred": (TASTopologyRequest(preferred="level-1"), True),
    "preferred – invalid level": (TASTopologyRequest(preferred="invalid-level"), False),
    "unconstrained": (TASTopologyRequest(unconstrained=True), True),
    # a slice-only request: podSetSliceRequiredTopology without a size (HasLevel reads
    # only the level)
    "slice-only": (TASTopologyRequest(slice_constraints=(("level-1", 0),)), True),
    "slice-only – invalid level": (
        TASTopologyRequest(slice_constraints=(("invalid-level", 0),)), False),
}


@pytest.mark.parametrize("name", list(HAS_LEVEL),
                         ids=[f"TestHasLevel/{n}" for n in HAS_LEVEL])
def test_has_level(name: str) -> None:
    request, want = HAS_LEVEL[name]
    assert _snapshot(L12).has_level(request) is want


# -- TestSortedDomainsWithLeader / TestSortedDomains -----------------------------------

def _domain(did: str, value: str, **counts: int) -> Domain:
    d = Domain(did, (value,))
    for key, v in counts.items():
        setattr(d, key, v)
    return d


def _leader(did: str, value: str, affinity: int = 0, leaders: int = 0, slices: int = 0,
            pods: int = 0) -> Domain:
    return _domain(did, value, affinity_score=affinity, leader_count=leaders,
                   slice_count_with_leader=slices, pod_count_with_leader=pods)


def _plain(did: str, value: str, affinity: int = 0, slices: int = 0, pods: int = 0) -> Domain:
    return _domain(did, value, affinity_score=affinity, slice_count=slices, pod_count=pods)


# name: (domains, unconstrained, TASRespectNodeAffinityPreferred, want order)
SORTED_WITH_LEADER = {
    "affinityScore descending: higher affinity score comes first": (
        [_leader("low-affinity", "a", 10, 1, 5, 10), _leader("high-affinity", "b", 100, 1, 5, 10)],
        False, True, ["high-affinity", "low-affinity"]),
    "affinityScore ignored when feature gate is disabled": (
        [_leader("low-affinity", "a", 10, 1, 5, 10), _leader("high-affinity", "b", 100, 1, 5, 10)],
        False, False, ["low-affinity", "high-affinity"]),
    "leaderCount descending: domains that can host leader come first": (
        [_leader("no-leader", "a", 0, 0, 10, 10), _leader("has-leader", "b", 0, 1, 1, 1)],
        False, False, ["has-leader", "no-leader"]),
    "leader capability prioritized over preferred affinity": (
        [_leader("preferred-no-leader", "a", 100, 0, 0, 0),
         _leader("non-preferred-has-leader", "b", 10, 1, 5, 10)],
        False, True, ["non-preferred-has-leader", "preferred-no-leader"]),
    "BestFit: sliceCountWithLeader descending": (
        [_leader("a", "a", 0, 1, 3, 1), _leader("b", "b", 0, 1, 1, 1),
         _leader("c", "c", 0, 1, 2, 1)],
        False, False, ["a", "c", "b"]),
    "LeastFreeCapacity: sliceCountWithLeader ascending": (
        [_leader("a", "a", 0, 1, 3, 1), _leader("b", "b", 0, 1, 1, 1),
         _leader("c", "c", 0, 1, 2, 1)],
        True, False, ["b", "c", "a"]),
    "BestFit: podCountWithLeader ascending as tiebreaker": (
        [_leader("large", "a", 0, 1, 5, 100), _leader("small", "b", 0, 1, 5, 10),
         _leader("medium", "c", 0, 1, 5, 50)],
        False, False, ["small", "medium", "large"]),
    "LeastFreeCapacity: podCountWithLeader ascending as tiebreaker": (
        [_leader("large", "a", 0, 1, 5, 100), _leader("small", "b", 0, 1, 5, 10),
         _leader("medium", "c", 0, 1, 5, 50)],
        True, False, ["small", "medium", "large"]),
    "levelValues ascending as final tiebreaker": (
        [_leader("c", "c", 0, 1, 5, 10), _leader("a", "a", 0, 1, 5, 10),
         _leader("b", "b", 0, 1, 5, 10)],
        False, False, ["a", "b", "c"]),
}


@pytest.mark.parametrize("name", list(SORTED_WITH_LEADER),
                         ids=[f"TestSortedDomainsWithLeader/{n}" for n in SORTED_WITH_LEADER])
def test_sorted_domains_with_leader(name: str) -> None:
    domains, unconstrained, affinity, want = SORTED_WITH_LEADER[name]
    s = _snapshot(["block"], name="test",
                  gates=TASGates(respect_node_affinity_preferred=affinity))
    assert [d.id for d in s.sorted_domains_with_leader(domains, unconstrained)] == want


SORTED = {
    "affinityScore descending: higher affinity score comes first": (
        [_plain("low-affinity", "a", 10, 5, 10), _plain("high-affinity", "b", 100, 5, 10)],
        False, True, ["high-affinity", "low-affinity"]),
    "affinityScore ignored when feature gate is disabled": (
        [_plain("low-affinity", "a", 10, 5, 10), _plain("high-affinity", "b", 100, 5, 10)],
        False, False, ["low-affinity", "high-affinity"]),
    "BestFit: sliceCount descending": (
        [_plain("a", "a", 0, 3, 1), _plain("b", "b", 0, 1, 1), _plain("c", "c", 0, 2, 1)],
        False, False, ["a", "c", "b"]),
    "LeastFreeCapacity: sliceCount ascending": (
        [_plain("a", "a", 0, 3, 1), _plain("b", "b", 0, 1, 1), _plain("c", "c", 0, 2, 1)],
        True, False, ["b", "c", "a"]),
    "BestFit: podCount ascending as tiebreaker": (
        [_plain("large", "a", 0, 5, 100), _plain("small", "b", 0, 5, 10),
         _plain("medium", "c", 0, 5, 50)],
        False, False, ["small", "medium", "large"]),
    "LeastFreeCapacity: podCount ascending as tiebreaker": (
        [_plain("large", "a", 0, 5, 100), _plain("small", "b", 0, 5, 10),
         _plain("medium", "c", 0, 5, 50)],
        True, False, ["small", "medium", "large"]),
    "levelValues ascending as final tiebreaker": (
        [_plain("c", "c", 0, 5, 10), _plain("a", "a", 0, 5, 10), _plain("b", "b", 0, 5, 10)],
        False, False, ["a", "b", "c"]),
}


@pytest.mark.parametrize("name", list(SORTED), ids=[f"TestSortedDomains/{n}" for n in SORTED])
def test_sorted_domains(name: str) -> None:
    domains, unconstrained, affinity, want = SORTED[name]
    s = _snapshot(["block"], name="test",
                  gates=TASGates(respect_node_affinity_preferred=affinity))
    assert [d.id for d in s.sorted_domains(domains, unconstrained)] == want


# -- TestCompareDomainLevelValues -------------------------------------------------------

HOSTNAME_LEVELS = ["block", "rack", HOSTNAME_LABEL]
_P1 = Domain("b1-r1", ("b1", "r1"))
_P2 = Domain("b1-r2", ("b1", "r2"))


def _node_domain(name: str, parent: Domain) -> Domain:
    return Domain(name, (*parent.level_values, name), parent=parent)


COMPARE = {
    "isLowestLevelNode with same-parent sibling domains: ascending by hostname": (
        HOSTNAME_LEVELS, _node_domain("node-a", _P1), _node_domain("node-b", _P1), -1),
    "isLowestLevelNode with same-parent sibling domains: descending by hostname": (
        HOSTNAME_LEVELS, _node_domain("node-b", _P1), _node_domain("node-a", _P1), 1),
    "isLowestLevelNode with same-parent sibling domains: equal hostname": (
        HOSTNAME_LEVELS, _node_domain("node-a", _P1), _node_domain("node-a", _P1), 0),
    "fallback comparator: multi-level inputs with different parents sorted lexicographically "
    "across levels": (
        HOSTNAME_LEVELS, _node_domain("node-z", _P1), _node_domain("node-a", _P2), -1),
    "fallback comparator: non-hostname levels sorted lexicographically across levels": (
        ["block", "rack"], Domain("b1-r1", ("b1", "r1")), Domain("b1-r2", ("b1", "r2")), -1),
}


@pytest.mark.parametrize("name", list(COMPARE),
                         ids=[f"TestCompareDomainLevelValues/{n}" for n in COMPARE])
def test_compare_domain_level_values(name: str) -> None:
    levels, a, b, want = COMPARE[name]
    got = _snapshot(levels, name="test").compare_domain_level_values(a, b)
    assert (got > 0) - (got < 0) == want


# -- TestCountPodsInAssignment ------------------------------------------------------------

H = ["hostname"]
COUNT_PODS = {
    "empty assignment": (_ta(H), 0),
    "single domain": (_ta(H, (["node-a"], 3)), 3),
    "multiple domains": (_ta(H, (["node-a"], 2), (["node-b"], 3), (["node-c"], 1)), 6),
}


@pytest.mark.parametrize("name", list(COUNT_PODS),
                         ids=[f"TestCountPodsInAssignment/{n}" for n in COUNT_PODS])
def test_count_pods_in_assignment(name: str) -> None:
    assignment, want = COUNT_PODS[name]
    assert count_pods_in_assignment(assignment) == want


# -- TestComputeAssumedUsageFromAssignment --------------------------------------------------

COMPUTE_USAGE = {
    "empty assignment": (_ta(H), {}),
    "single domain with one pod": (
        _ta(H, (["node-a"], 1)), {"node-a": _req(cpu=1000, memory=1024, pods=1)}),
    "multiple domains": (
        _ta(H, (["node-a"], 2), (["node-b"], 3)),
        {"node-a": _req(cpu=2000, memory=2048, pods=2),
         "node-b": _req(cpu=3000, memory=3072, pods=3)}),
}


@pytest.mark.parametrize("name", list(COMPUTE_USAGE),
                         ids=[f"TestComputeAssumedUsageFromAssignment/{n}" for n in COMPUTE_USAGE])
def test_compute_assumed_usage_from_assignment(name: str) -> None:
    assignment, want = COMPUTE_USAGE[name]
    assert compute_usage_per_domain(assignment, _req(cpu=1000, memory=1024)) == want


# -- TestAddAssumedUsage ---------------------------------------------------------------------

ADD_ASSUMED = {
    "includes pod count for existing and new domains": (
        {"node-a": _req(cpu=1000, pods=1)},
        _ta(H, (["node-a"], 1), (["node-b"], 2)), _req(cpu=500, memory=2048),
        {"node-a": _req(cpu=1500, memory=2048, pods=2),
         "node-b": _req(cpu=1000, memory=4096, pods=2)}),
    "includes pod count starting from empty assumed usage": (
        {}, _ta(H, (["node-a"], 3)), _req(cpu=250, memory=512),
        {"node-a": _req(cpu=750, memory=1536, pods=3)}),
}


@pytest.mark.parametrize("name", list(ADD_ASSUMED),
                         ids=[f"TestAddAssumedUsage/{n}" for n in ADD_ASSUMED])
def test_add_assumed_usage(name: str) -> None:
    assumed, assignment, single_pod, want = ADD_ASSUMED[name]
    assumed = {d: dict(a) for d, a in assumed.items()}
    add_assumed_usage(assumed, assignment, single_pod)
    assert assumed == want


# -- TestTruncateAssignment ---------------------------------------------------------------------

TRUNCATE = {
    "truncate to zero": (_ta(H, (["node-a"], 2)), 0, _ta(H)),
    "no truncation needed": (_ta(H, (["node-a"], 2), (["node-b"], 1)), 3,
                             _ta(H, (["node-a"], 2), (["node-b"], 1))),
    "truncate to single domain": (_ta(H, (["node-a"], 3), (["node-b"], 2)), 3,
                                  _ta(H, (["node-a"], 3))),
    "truncation preserves assignment order not lex order": (
        _ta(H, (["node-z"], 3), (["node-a"], 2)), 3, _ta(H, (["node-z"], 3))),
    "partial domain truncation": (_ta(H, (["node-a"], 3), (["node-b"], 3)), 4,
                                  _ta(H, (["node-a"], 3), (["node-b"], 1))),
    "truncate within first domain": (_ta(H, (["node-a"], 5), (["node-b"], 3)), 2,
                                     _ta(H, (["node-a"], 2))),
}


@pytest.mark.parametrize("name", list(TRUNCATE),
                         ids=[f"TestTruncateAssignment/{n}" for n in TRUNCATE])
def test_truncate_assignment(name: str) -> None:
    assignment, count, want = TRUNCATE[name]
    assert truncate_assignment(assignment, count) == want


# -- TestTASCachingRemainingResourcesFeatureGate -------------------------------------------------

@pytest.mark.parametrize("enable_caching", [True, False],
                         ids=["TestTASCachingRemainingResourcesFeatureGate/enableCaching=true",
                              "TestTASCachingRemainingResourcesFeatureGate/enableCaching=false"])
def test_tas_caching_remaining_resources_feature_gate(enable_caching: bool) -> None:
    node = TASNode("node-a", {"hostname": "node-a"}, _req(cpu=8000, memory=10 * GI))
    s = _snapshot(["hostname"], [node], name="tas-topology")
    domain = s.node_to_domain["node-a"]
    assert domain in s.leaves
    usage = [(("node-a",), _req(cpu=5000), 1)]
    assert s.fits(usage)
    s.update_tas_usage(domain, _req(cpu=4000), True, 1)
    assert not s.fits(usage)  # 5 CPU > the 4 CPU left
    s.update_tas_usage(domain, _req(cpu=4000), False, 1)
    assert s.fits(usage)


# -- TestUpdateCountsToMinimumGenericLogsLeafSummary ----------------------------------------------

LOGGER = "dralab.queueing.kueue.tas_domains"
WANT_ERROR_FIELDS = ("remainingCount=9 remainingLeaderCount=0 count=10 leaderCount=0 "
                     "sliceSize=1 unconstrained=False topologyName=tas-topology "
                     "domainCount=1 leafCount=2")


def _violated_assumptions(caplog: pytest.LogCaptureFixture, level: int) -> list[logging.LogRecord]:
    nodes = [TASNode(n, {HOSTNAME_LABEL: n}, _req(cpu=8000)) for n in ("node-a", "node-b")]
    s = _snapshot([HOSTNAME_LABEL], nodes, name="tas-topology")
    dom = Domain("rack-1", ())
    dom.pod_count = 1  # one domain with room for 1 cannot hold 10
    with caplog.at_level(level, logger=LOGGER):
        got = s.update_counts_to_minimum([dom], 10, 0, 1, False, False)
    assert got is None
    return [r for r in caplog.records if r.name == LOGGER]


def test_logs_leaf_summary_at_error(caplog: pytest.LogCaptureFixture) -> None:
    """TestUpdateCountsToMinimumGenericLogsLeafSummary/the error entry summarizes the leaf
    domains instead of dumping them"""
    logs = _violated_assumptions(caplog, logging.INFO)
    assert len(logs) == 1
    assert logs[0].levelno == logging.ERROR
    message = logs[0].getMessage()
    assert "code assumptions violated" in message and WANT_ERROR_FIELDS in message
    assert "node-a" not in message and "node-b" not in message


def test_logs_leaf_domains_at_high_verbosity(caplog: pytest.LogCaptureFixture) -> None:
    """TestUpdateCountsToMinimumGenericLogsLeafSummary/the leaf domains are logged at high
    verbosity"""
    logs = _violated_assumptions(caplog, logging.DEBUG)
    assert len(logs) == 2
    assert WANT_ERROR_FIELDS in logs[0].getMessage()
    assert logs[1].levelno == logging.DEBUG
    assert logs[1].getMessage() == ("TAS flavor snapshot leaf domains topologyName=tas-topology "
                                    "leafDomains=['node-a', 'node-b']")
