"""KAI's topology job filtering, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
``pkg/scheduler/plugins/topology/job_filtering_test.go`` (Apache-2.0), one pytest case
per table entry (id = its name), against ``dralab.queueing.kai.topology``:

* TestTopologyPlugin_subsetNodesFn -> subset_node_sets: jobs and nodes as jobs_fake /
  nodes_fake build them (through the action-table harness's builders), the test's
  hand-built tree with its nodesToDomains placement; checks the returned error, the
  first fit error's first message, and the first node set (as a set);
* TestTopologyPlugin_calculateRelevantDomainLevels -> relevant_levels;
* TestTopologyPlugin_calcTreeAllocatable -> calc_tree_allocatable: AllocatablePods of
  the root and of the listed domains (all 0 when none are listed);
* TestTopologyPlugin_getJobAllocatableDomains -> job_allocatable_domains: the domains
  (by id: id, level, AllocatablePods) or the error, and when an error is expected, the
  job's fit errors (upstream compares fit errors only then; two entries list fit errors
  for the no-error path that its loop never compares, and we leave them uncompared too).

The trees are the tests' literals: the zone domain itself stands at DomainsByLevel[root],
and a domain literal without AllocatablePods has Go's zero, 0.
"""

# ruff: noqa: E501

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from tests.peers.kai.topology_helpers import (
    Cite,
    D,
    one_zone,
    pending,
    place_nodes,
    pod,
    session_of,
    tree,
    two_racks_one_zone,
)

from dralab.queueing.kai.framework import SessionTask
from dralab.queueing.kai.model import TopologyConstraint
from dralab.queueing.kai.topology import (
    KaiTopologyTree,
    TopologyError,
    calc_tree_allocatable,
    job_allocatable_domains,
    relevant_levels,
    subset_node_sets,
    tasks_amounts,
)

FILE = "job_filtering_test.go"
RACKS = {"rack1.zone1": "zone1", "rack2.zone1": "zone1"}
ZONE = {"zone1": "zone"}


def _node(cpu: float, labels: dict[str, str] | None = None, gpus: int = 6) -> dict[str, Any]:
    return {"CPUMillis": cpu, "GPUs": gpus, "MaxTaskNum": 100, "Labels": labels or {}}


def _empty_tree() -> KaiTopologyTree:
    """An Info with levels (zone) and no DomainsByLevel."""
    return tree("test-topology", ("zone",), [], None)


def _one_rack_tree() -> KaiTopologyTree:
    rack1 = D("rack1.zone1", "rack")
    zone1 = D("zone1", "zone", [rack1])
    return tree("test-topology", ("zone", "rack"), [rack1, zone1], zone1)


def _job(cpu: float, tasks: list[dict[str, Any]], namespace: str = "") -> dict[str, Any]:
    job: dict[str, Any] = {"Name": "test-job", "RequiredCPUsPerTask": cpu, "Tasks": tasks}
    if namespace:
        job["Namespace"] = namespace
    return job


PENDING: dict[str, Any] = {"State": "Pending"}

# --- TestTopologyPlugin_subsetNodesFn ------------------------------------------------------
# (name, line, job, constraint, nodes, nodesToDomains, domainParent, domainLevel, tree,
#  expected error, expected first fit error message, expected first node set)
SUBSET: list[tuple[str, int, dict[str, Any], TopologyConstraint | None, dict[str, dict[str, Any]], dict[str, str],
                   dict[str, str], dict[str, str], Callable[[], KaiTopologyTree], str, str, set[str] | None]] = [
    ("successful topology allocation - right nodes", 47,
     _job(500, [PENDING, PENDING]), TopologyConstraint("test-topology", "zone", "rack"),
     {"node-1": _node(1000, {"zone": "zone1", "rack": "rack1"}), "node-2": _node(400, {"zone": "zone1", "rack": "rack2"})},
     {"node-1": "rack1.zone1", "node-2": "rack2.zone1"}, RACKS, ZONE, two_racks_one_zone, "", "", {"node-1"}),
    ("successful topology allocation - required equal preferred", 149,
     _job(500, [PENDING, PENDING]), TopologyConstraint("test-topology", "rack", "rack"),
     {"node-1": _node(1000, {"zone": "zone1", "rack": "rack1"}), "node-2": _node(400, {"zone": "zone1", "rack": "rack2"})},
     {"node-1": "rack1.zone1", "node-2": "rack2.zone1"}, RACKS, ZONE, two_racks_one_zone, "", "", {"node-1"}),
    ("no topology constraint - early return", 251,
     _job(500, [PENDING]), None, {"node-1": _node(1000)}, {}, {}, {}, _empty_tree, "", "", None),
    ("topology not found - error", 284,
     _job(500, [PENDING], "test-namespace"), TopologyConstraint("nonexistent-topology"),
     {"node-1": _node(1000)}, {}, {}, {}, _empty_tree, "", "Requested topology nonexistent-topology does not exist", None),
    ("insufficient allocatable pods - no domains found", 320,
     _job(2000, [PENDING]), TopologyConstraint("test-topology", "zone"),
     {"node-1": _node(1000, {"zone": "zone1"})}, {"node-1": "zone1"}, {}, {}, one_zone, "",
     "topology test-topology, requirement zone couldn't be satisfied for job </test-job>: not enough resources in zone1 to allocate the job", None),
    ("successful allocation with mixed GPU tasks - usePodCountAccounting returns false", 378,
     _job(2000, [{"State": "Pending", "RequiredGPUs": 1}, {"State": "Pending", "RequiredGPUs": 0}]),
     TopologyConstraint("test-topology", "zone", "rack"),
     {"node-1": _node(2000, {"rack": "rack1", "zone": "zone1"}), "node-2": _node(2000, {"rack": "rack2", "zone": "zone1"})},
     {"node-1": "rack1.zone1", "node-2": "rack2.zone1"}, RACKS, ZONE, two_racks_one_zone, "", "", {"node-1", "node-2"}),
    ("getJobAllocatableDomains constrain definition error", 484,
     _job(500, [PENDING]), TopologyConstraint("test-topology", "nonexistent-level", "rack"),
     {"node-1": _node(1000)}, {"node-1": "rack1.zone1"}, {"rack1.zone1": "zone1"}, ZONE, _one_rack_tree,
     "topology constraint error: sub-group  specified 'nonexistent-level' as the required topology constraint level, but the topology tree 'test-topology' does not contain a level with this name",
     "", None),
]


@pytest.mark.parametrize("case", SUBSET, ids=[c[0] for c in SUBSET])
def test_topology_plugin_subset_nodes_fn(case: tuple[Any, ...]) -> None:
    (name, line, job, constraint, nodes, to_domains, parent, parent_level, setup,
     expected_error, expected_fit_error, expected_first) = case
    cite = Cite(FILE, "TestTopologyPlugin_subsetNodesFn", name, line)
    session = session_of([job], nodes)
    topology = setup()
    place_nodes(topology, session, to_domains, parent, parent_level)
    job_pods = session.jobs["test-job"].pods
    try:
        # the root sub-group set: its name is "" (RootSubGroupSetName)
        found = subset_node_sets({"test-topology": topology}, constraint, "test-job",
                                 session.jobs["test-job"].spec.namespace, "", job_pods,
                                 pending(session, "test-job"), list(session.nodes.values()))
    except TopologyError as err:
        assert expected_error, f"{cite}: unexpected error {err}"
        assert str(err) == expected_error, cite
        return
    assert not expected_error, f"{cite}: expected error {expected_error!r}, got none"
    if expected_fit_error:
        assert found.fit_errors, cite
        assert found.fit_errors[0].messages[0] == expected_fit_error, cite
    if expected_first is not None:
        assert found.node_sets, cite
        assert {u.node.name for u in found.node_sets[0]} == expected_first, cite
        assert len(found.node_sets[0]) == len(expected_first), cite


# --- TestTopologyPlugin_calculateRelevantDomainLevels -------------------------------------------
DZR = ("datacenter", "zone", "rack")
# (name, line, sub-group name, required, preferred, tree levels, expected levels, expected error)
LEVELS: list[tuple[str, int, str, str, tuple[str, ...], list[str] | None, str]] = [
    ("both required and preferred placement specified", 653, "zone", "rack", DZR, ["rack", "zone"], ""),
    ("only required placement specified", 680, "zone", "", DZR, ["zone"], ""),
    ("only preferred placement specified", 705, "", "rack", DZR, ["rack", "zone", "datacenter", "root"], ""),
    ("no placement annotations specified", 733, "", "", ("zone", "rack"), None,
     "no topology constraints were found for subgroup test-subgroup, with topology name test-topology"),
    ("required placement not found in topology", 754, "nonexistent", "", ("zone", "rack"), None,
     "topology constraint error: sub-group test-subgroup specified 'nonexistent' as the required topology constraint level, but the topology tree 'test-topology' does not contain a level with this name"),
    ("preferred placement not found in topology", 776, "", "nonexistent", ("zone", "rack"), None,
     "topology constraint error: sub-group test-subgroup specified 'nonexistent' as the preferred topology constraint level, but the topology tree 'test-topology' does not contain a level with this name"),
    ("required placement at first level", 798, "rack", "", DZR, ["rack"], ""),
    ("preferred placement at first level", 823, "", "rack", DZR, ["rack", "zone", "datacenter", "root"], ""),
    ("preferred placement at middle level", 851, "", "zone", DZR, ["zone", "datacenter", "root"], ""),
    ("single level topology with preferred placement", 878, "", "zone", ("zone",), ["zone", "root"], ""),
    ("complex topology with multiple levels", 902, "region", "zone", ("datacenter", "region", "zone", "rack"),
     ["zone", "region"], ""),
]


@pytest.mark.parametrize("case", LEVELS, ids=[c[0] for c in LEVELS])
def test_topology_plugin_calculate_relevant_domain_levels(case: tuple[str, int, str, str, tuple[str, ...], list[str] | None, str]) -> None:
    name, line, required, preferred, levels, expected, expected_error = case
    cite = Cite(FILE, "TestTopologyPlugin_calculateRelevantDomainLevels", name, line)
    topology = tree("test-topology", levels, [], None)
    constraint = TopologyConstraint("test-topology", required, preferred)
    try:
        result = relevant_levels(topology, constraint, "test-subgroup")
    except TopologyError as err:
        assert str(err) == expected_error, cite
        return
    assert not expected_error, f"{cite}: expected error {expected_error!r}, got none"
    assert result == expected, cite


# --- TestTopologyPlugin_calcTreeAllocatable ------------------------------------------------------
# (name, line, job, allocated pod groups, nodes, nodesToDomains, domainParent, domainLevel,
#  tree, expected root AllocatablePods, expected AllocatablePods by (level, domain id))
NODE_1000 = _node(1000)
ALLOCATABLE: list[tuple[str, int, dict[str, Any], list[dict[str, Any]], dict[str, dict[str, Any]], dict[str, str],
                        dict[str, str], dict[str, str], Callable[[], KaiTopologyTree], int, dict[tuple[str, str], int]]] = [
    ("two level topology - parent takes child values when children can allocate full job", 1043,
     _job(500, [PENDING, PENDING]), [], {"node-1": NODE_1000, "node-2": NODE_1000},
     {"node-1": "rack1.zone1", "node-2": "rack2.zone1"}, RACKS, ZONE, two_racks_one_zone, 4,
     {("rack", "rack1.zone1"): 2, ("rack", "rack2.zone1"): 2, ("zone", "zone1"): 4}),
    ("children cannot allocate full job individually - parent sums allocations", 1096,
     _job(800, [PENDING, PENDING]), [], {"node-1": NODE_1000, "node-2": NODE_1000},
     {"node-1": "rack1.zone1", "node-2": "rack2.zone1"}, RACKS, ZONE, two_racks_one_zone, 2,
     {("rack", "rack1.zone1"): 1, ("rack", "rack2.zone1"): 1, ("zone", "zone1"): 2}),
    ("mixed distances - parent takes minimum distance", 1149,
     _job(500, [PENDING, PENDING]), [], {"node-1": _node(500), "node-2": _node(500), "node-3": NODE_1000},
     {"node-1": "rack1.zone1", "node-2": "rack1.zone1", "node-3": "rack2.zone1"}, RACKS, ZONE, two_racks_one_zone, 4,
     {("rack", "rack1.zone1"): 2, ("rack", "rack2.zone1"): 2, ("zone", "zone1"): 4}),
    ("no leaf domains - no allocatable domains", 1208,
     _job(2000, [PENDING]), [], {"node-1": NODE_1000}, {"node-1": "zone1"}, {}, {}, one_zone, 0, {}),
    ("Can pipeline on domain with releasing pods", 1260,
     _job(500, [PENDING, PENDING]),
     [{"Name": "running-job", "RequiredCPUsPerTask": 500,
       "Tasks": [{"State": "Releasing", "NodeName": "node-1"}, {"State": "Releasing", "NodeName": "node-2"}]}],
     {"node-1": NODE_1000, "node-2": NODE_1000},
     {"node-1": "rack1.zone1", "node-2": "rack2.zone1"}, RACKS, ZONE, two_racks_one_zone, 4,
     {("rack", "rack1.zone1"): 2, ("rack", "rack2.zone1"): 2, ("zone", "zone1"): 4}),
    ("Job requests 0 resources - set maximal amount of pods on each node", 1329,
     {**_job(0, [PENDING, PENDING, PENDING, PENDING]), "IsBestEffortJob": True}, [],
     {"node-1": NODE_1000, "node-2": NODE_1000},
     {"node-1": "rack1.zone1", "node-2": "rack2.zone1"}, RACKS, ZONE, two_racks_one_zone, 8,
     {("rack", "rack1.zone1"): 4, ("rack", "rack2.zone1"): 4, ("zone", "zone1"): 8}),
]


@pytest.mark.parametrize("case", ALLOCATABLE, ids=[c[0] for c in ALLOCATABLE])
def test_topology_plugin_calc_tree_allocatable(case: tuple[Any, ...]) -> None:
    (name, line, job, allocated, nodes, to_domains, parent, parent_level, setup,
     expected_root, expected) = case
    cite = Cite(FILE, "TestTopologyPlugin_calcTreeAllocatable", name, line)
    session = session_of([*allocated, job], nodes)
    topology = setup()
    place_nodes(topology, session, to_domains, parent, parent_level)
    calc_tree_allocatable(pending(session, "test-job"), topology.root)
    assert topology.root.allocatable_pods == expected_root, cite
    if not expected:
        for level_domains in topology.domains.values():
            for domain in level_domains.values():
                assert domain.allocatable_pods == 0, f"{cite}: {domain.id}"
        return
    for (level, domain_id), pods in expected.items():
        assert topology.domains[level][domain_id].allocatable_pods == pods, f"{cite}: {domain_id}"


# --- TestTopologyPlugin_getJobAllocatableDomains -------------------------------------------------
def _pods(*pods: SessionTask) -> list[SessionTask]:
    return list(pods)


def _t_multi_domain() -> KaiTopologyTree:
    return tree("test-topology", ("zone", "rack"), [
        D("rack1.zone1", "rack", pods=2), D("rack2.zone1", "rack", pods=1), D("zone1", "zone", pods=3)], None)


def _t_no_domains() -> KaiTopologyTree:
    return tree("test-topology", ("zone", "rack"), [D("rack1.zone1", "rack", pods=1), D("zone1", "zone", pods=1)], None)


def _t_free() -> KaiTopologyTree:
    def free(cpu: float) -> dict[str, float]:
        return {"cpu": cpu, "memory": 0.0, "gpu": 0.0}
    return tree("test-topology", ("zone", "rack"), [
        D("rack1.zone1", "rack", pods=-1, free=free(500)), D("rack2.zone2", "rack", pods=-1, free=free(600)),
        D("zone1", "zone", pods=-1, free=free(500)), D("zone2", "zone", pods=-1, free=free(600))], None)


def _t_no_levels() -> KaiTopologyTree:
    return tree("test-topology", ("datacenter", "region"), [D("datacenter1", "datacenter", pods=1)], None)


def _t_complex() -> KaiTopologyTree:
    return tree("test-topology", ("datacenter", "region", "zone", "rack"), [
        D("rack1.zone1.region1", "rack", pods=3), D("rack2.zone1.region1", "rack", pods=3),
        D("zone1.region1", "zone", pods=6), D("region1", "region", pods=9)], None)


def _t_one_zone_node1() -> KaiTopologyTree:
    return tree("test-topology", ("zone",), [D("zone1", "zone", pods=2, nodes=["node1"])], None)


def _t_two_zones() -> KaiTopologyTree:
    return tree("test-topology", ("zone",), [D("zone1", "zone", pods=2, nodes=["node1"]),
                                              D("zone2", "zone", pods=2, nodes=["node2"])], None)


def _t_multiple_levels() -> KaiTopologyTree:
    out = tree("test-topology", ("datacenter", "region", "zone", "rack"), [], None)
    # keys as the literal writes them (two keys hold a domain whose ID differs)
    racks = {"rack1.zone1.region1": D("rack1.zone1.region1", "rack", pods=3),
             "rack2.zone1.region1": D("rack2.zone1.region1", "rack", pods=3),
             "rack1.zone2.region1": D("rack1.zone2.region1", "rack", pods=2),
             "rack2.zone2.region1": D("rack2.zone1.region1", "rack", pods=1),
             "rack3.zone3.region1": D("rack3.zone2.region1", "rack", pods=1),
             "rack4.zone2.region1": D("rack4.zone2.region1", "rack", pods=1),
             "rack5.zone2.region1": D("rack5.zone2.region1", "rack", pods=1)}
    zones = {"zone1.region1": D("zone1.region1", "zone", [D("rack1.zone1.region1", "rack", pods=3),
                                                          D("rack2.zone1.region1", "rack", pods=3)], pods=6),
             "zone2.region1": D("zone2.region1", "zone", [D("rack1.zone2.region1", "rack", pods=2),
                                                          D("rack2.zone1.region1", "rack", pods=1),
                                                          D("rack3.zone2.region1", "rack", pods=1),
                                                          D("rack4.zone2.region1", "rack", pods=1),
                                                          D("rack5.zone2.region1", "rack", pods=1)], pods=6)}
    out.domains = {"rack": racks, "zone": zones, "region": {"region1": D("region1", "region", pods=9)}}
    return out


def _p2() -> list[SessionTask]:
    return _pods(pod("pod1"), pod("pod2"))


# (name, line, job namespace, pods, required, preferred, tree, expected domains
#  (id, level, pods) or None, expected error, expected fit errors (messages, detailed))
ALLOCATABLE_DOMAINS: list[tuple[str, int, str, Callable[[], list[SessionTask]], str, str, Callable[[], KaiTopologyTree],
                                list[tuple[str, str, int]] | None, str, list[tuple[list[str], str]]]] = [
    ("return multi domain", 1462, "", _p2, "zone", "rack", _t_multi_domain,
     [("rack1.zone1", "rack", 2), ("zone1", "zone", 3)], "", []),
    ("no domains can allocate the job", 1527, "test-namespace", _p2, "zone", "", _t_no_domains, [], "", []),
    ("no domains can allocate the job - using IdleOrReleasingResources", 1591, "test-namespace",
     lambda: _pods(pod("pod1", gpus=1), pod("pod2", milli_cpu=1000)), "zone", "", _t_free, [], "", []),
    ("no relevant domain levels", 1688, "", lambda: _pods(pod("pod1")), "zone", "rack", _t_no_levels, None,
     "topology constraint error: sub-group test specified 'zone' as the required topology constraint level, but the topology tree 'test-topology' does not contain a level with this name",
     []),
    ("complex topology with multiple levels", 1729, "", lambda: _pods(pod("pod1"), pod("pod2"), pod("pod3")),
     "region", "zone", _t_complex, [("zone1.region1", "zone", 6), ("region1", "region", 9)], "", []),
    ("mixed task statuses - some pending, some running", 1804, "",
     lambda: _pods(pod("pod1", "Running", "node1"), pod("pod2"), pod("pod3")), "zone", "", _t_one_zone_node1,
     [("zone1", "zone", 2)], "", []),
    ("mixed task statuses with required constraint - choose zone with existing pods", 1860, "",
     lambda: _pods(pod("pod1", "Running", "node2"), pod("pod2"), pod("pod3")), "zone", "", _t_two_zones,
     [("zone2", "zone", 2)], "", []),
    ("Return multiple levels of domains", 1930, "", lambda: _pods(pod("pod1"), pod("pod2"), pod("pod3"), pod("pod4")),
     "region", "rack", _t_multiple_levels,
     [("zone1.region1", "zone", 6), ("zone2.region1", "zone", 6), ("region1", "region", 9)], "", []),
]


@pytest.mark.parametrize("case", ALLOCATABLE_DOMAINS, ids=[c[0] for c in ALLOCATABLE_DOMAINS])
def test_topology_plugin_get_job_allocatable_domains(case: tuple[Any, ...]) -> None:
    (name, line, namespace, pods, required, preferred, setup, expected, expected_error,
     expected_fit_errors) = case
    cite = Cite(FILE, "TestTopologyPlugin_getJobAllocatableDomains", name, line)
    job_pods = pods()
    tasks = [p for p in job_pods if p.status == "Pending"]   # GetTasksToAllocate
    constraint = TopologyConstraint("", required, preferred)
    try:
        # the test's root sub-group set is NewSubGroupSet("test", constraint)
        domains, fit_errors = job_allocatable_domains(
            setup(), constraint, "test-job", namespace, "test", job_pods, tasks_amounts(tasks), len(tasks))
    except TopologyError as err:
        assert expected_error, f"{cite}: unexpected error {err}"
        assert str(err) == expected_error, cite
        # the error comes before any fit error is added
        assert len(expected_fit_errors) == 0, cite
        return
    assert not expected_error, f"{cite}: expected error {expected_error!r}, got none"
    assert expected is not None, cite
    assert len(domains) == len(expected), cite
    got = sorted((d.id, d.level, d.allocatable_pods) for d in domains)
    assert got == sorted(expected), cite
    del fit_errors   # upstream compares them only when an error is expected

