"""Kueue's flavor-assigner TAS tables, ported case by case.

Source: kubernetes-sigs/kueue at ff69552e79ad21652c36caa97038382e55625cf7,
``pkg/scheduler/flavorassigner/flavorassigner_test.go``: the TAS tables
``TestWorkloadsTopologyRequests_ErrorBranches``, ``TestAssignment_ComputeTASNetUsage``,
``TestWorkloadsTopologyRequests_ZeroCountPodSetSkipped``,
``TestWorkloadsTopologyRequests_ElasticJobsValidation``,
``TestWorkloadsTopologyRequests_RequiredTopologyRejectedForElasticWorkloadSlices``,
``TestAssignFlavors_LeaderWorkerSetTASFlavor`` and ``TestTasFlavorsOnly``; one pytest
case per upstream case, ids = ``<TestFunction>/<upstream case name>``. (The file's
other tables are in ``test_flavorassigner.py``.) They run against
``dralab.queueing.kueue.tas_assign`` and ``flavors.assign_flavors(..., tas=...)``.

Where upstream builds an ``Assignment`` by hand, the ported case builds dralab's
``PodSetOutcome`` (per resource the flavor and mode, the count) the same way.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from tests.peers.kueue.schedule_builders import cq, fq, group, ps, rf

from dralab.queueing.kueue.flavors import (
    AssignMode,
    PodSetOutcome,
    assign_flavors,
    place_topology,
    topology_requests,
)
from dralab.queueing.kueue.quota import QuotaTree
from dralab.queueing.kueue.tas import TASFlavorSnapshot, TASNode
from dralab.queueing.kueue.tas_assign import (
    ERR_ELASTIC_PREFERRED_TOPOLOGY,
    ERR_ELASTIC_REQUIRED_TOPOLOGY,
    ERR_NO_TAS_CACHE_INFORMATION,
    ERR_NO_TAS_FLAVOR_ASSIGNED,
    TASContext,
    compute_tas_net_usage,
    multiple_tas_flavors_assigned,
    tas_flavors_only,
)
from dralab.queueing.model import PodSetRequest, TopologyAssignment, TopologyRequest, WorkloadSpec

HOSTNAME = "kubernetes.io/hostname"
FIT = AssignMode.FIT
GI = 1024 ** 3


def _tas_ps(name: str, count: int, requests: dict[str, str] | None = None,
            group_name: str | None = None, topology: bool = True) -> PodSetRequest:
    """MakePodSet(name, count).Request(...).RequiredTopologyRequest(hostname).PodSetGroup(g)."""
    pod_set = ps(name, count, requests, group=group_name)
    return replace(pod_set, topology=TopologyRequest(HOSTNAME, required=True)) if topology \
        else pod_set


def _outcome(name: str, flavors: dict[str, str], count: int) -> PodSetOutcome:
    return PodSetOutcome(name, {r: (f, FIT) for r, f in flavors.items()}, [], {}, count)


def _workload(*pod_sets: PodSetRequest) -> WorkloadSpec:
    return WorkloadSpec("ns/wl", "main", "cq", 0, 0.0, tuple(pod_sets))


def _snapshot(levels: tuple[str, ...] = (HOSTNAME,), nodes: list[TASNode] | None = None
              ) -> TASFlavorSnapshot:
    return TASFlavorSnapshot("topology", levels, nodes or [])


# -- TestWorkloadsTopologyRequests_ErrorBranches -----------------------------------------------

ERROR_BRANCHES = {
    "workload requires Topology, but there is no TAS cache information": (
        {}, {"cpu": "default"}, {"cpu": "1"}, ERR_NO_TAS_CACHE_INFORMATION),
    "workload requires Topology, but there is no TAS flavor assigned": (
        {"tas": None}, {"cpu": "tas"}, {"cpu": "1"}, ERR_NO_TAS_FLAVOR_ASSIGNED),
    "more than one TAS flavor assigned (onlyTASFlavor fails); RepresentativeMode must be NoFit": (
        {"flavor-a": _snapshot(), "flavor-b": _snapshot()},
        {"cpu": "flavor-a", "memory": "flavor-b"}, {"cpu": "1", "memory": "1Gi"},
        multiple_tas_flavors_assigned(["flavor-a", "flavor-b"])),
}


@pytest.mark.parametrize("name", list(ERROR_BRANCHES),
                         ids=[f"TestWorkloadsTopologyRequests_ErrorBranches/{n}"
                              for n in ERROR_BRANCHES])
def test_workloads_topology_requests_error_branches(name: str) -> None:
    snapshots, flavors, requests, want_error = ERROR_BRANCHES[name]
    tas = TASContext(snapshots)
    workload = _workload(_tas_ps("main", 1, requests))
    outcomes = [_outcome("main", flavors, 1)]
    assert topology_requests(tas, workload, outcomes) == {}
    assert outcomes[0].error == want_error
    # a pod set whose TAS request cannot be built does not fit: the workload is not admitted
    mode, _ = place_topology(tas, _workload(_tas_ps("main", 1, requests)),
                             [_outcome("main", flavors, 1)], FIT)
    assert mode == AssignMode.NO_FIT


# -- TestWorkloadsTopologyRequests_ElasticJobsValidation -----------------------------------------
# Both gates on (ElasticJobsViaWorkloadSlices, ElasticJobsViaWorkloadSlicesWithTAS): the
# TASContext's elastic_with_tas; the workload's kueue.x-k8s.io/elastic-job: "true" is
# WorkloadSpec.elastic. Upstream's replaceWorkloadSlice (an old slice with an empty
# topology assignment) and the cached representativeMode Fit do not change what is
# checked -- the pod set's error and the representative mode -- so they are left out.

_REQUIRED = TopologyRequest(HOSTNAME, required=True)
_PREFERRED = TopologyRequest(HOSTNAME)
_UNCONSTRAINED = TopologyRequest(unconstrained=True)
ELASTIC = {
    "required topology is rejected with ElasticJobsViaWorkloadSlices": (
        True, _REQUIRED, ERR_ELASTIC_REQUIRED_TOPOLOGY),
    "preferred topology is rejected with ElasticJobsViaWorkloadSlices": (
        True, _PREFERRED, ERR_ELASTIC_PREFERRED_TOPOLOGY),
    "preferred topology is rejected for new elastic workload": (
        True, _PREFERRED, ERR_ELASTIC_PREFERRED_TOPOLOGY),
    "unconstrained topology is accepted with ElasticJobsViaWorkloadSlices": (
        True, _UNCONSTRAINED, ""),
    "required topology is accepted for regular jobs with ElasticJobsViaWorkloadSlicesWithTAS": (
        False, _REQUIRED, ""),
    "preferred topology is accepted for regular jobs with ElasticJobsViaWorkloadSlicesWithTAS": (
        False, _PREFERRED, ""),
}


@pytest.mark.parametrize("name", list(ELASTIC),
                         ids=[f"TestWorkloadsTopologyRequests_ElasticJobsValidation/{n}"
                              for n in ELASTIC])
def test_workloads_topology_requests_elastic_jobs_validation(name: str) -> None:
    elastic, request, want_error = ELASTIC[name]
    workload = replace(_workload(replace(ps("main", 2, {"cpu": "1"}), topology=request)),
                       elastic=elastic)
    outcomes = [_outcome("main", {"cpu": "tas"}, 2)]
    got = topology_requests(TASContext({"tas": _snapshot()}, elastic_with_tas=True), workload,
                            outcomes)
    assert outcomes[0].error == want_error
    if want_error:
        assert got == {}
        # elastic validation failed: the workload must not be admitted
        assert outcomes[0].mode() == AssignMode.NO_FIT
    else:
        assert [r.name for r in got["tas"]] == ["main"]
        assert outcomes[0].mode() == FIT


def test_workloads_topology_requests_required_topology_rejected_for_elastic_workload_slices(
) -> None:
    """TestWorkloadsTopologyRequests_RequiredTopologyRejectedForElasticWorkloadSlices: a
    leader asking no resource (so no flavor) is rejected for its required topology
    before its missing TAS flavor is noticed."""
    workload = replace(_workload(_tas_ps("leader", 1, group_name="group1"),
                                 _tas_ps("worker", 1, {"example.com/gpu": "1"}, "group1")),
                       elastic=True)
    outcomes = [_outcome("leader", {}, 1), _outcome("worker", {"example.com/gpu": "tas"}, 1)]
    topology_requests(TASContext({"tas": _snapshot()}, tas_only=True, elastic_with_tas=True),
                      workload, outcomes)
    assert outcomes[0].error == ERR_ELASTIC_REQUIRED_TOPOLOGY


# -- TestAssignment_ComputeTASNetUsage ---------------------------------------------------------

def _one_domain(node: str, count: int) -> TopologyAssignment:
    return TopologyAssignment((HOSTNAME,), (((node,), count),))


_CPU_MEM = {"cpu": "1", "memory": "1Gi"}
NET_USAGE = {
    "records actual pod requests when assignment requests differ": (
        {"cpu": "1", "memory": "1Gi", "example.com/gpu": "1", "networking.example.com/vpc": "1"},
        ["tas", "tas", "quota"], _one_domain("node-a", 2), None,
        [("node-a", {"cpu": 1000, "memory": GI * 1000, "example.com/gpu": 1000,
                     "networking.example.com/vpc": 1000}, 2)]),
    "accounts for a domain the recomputed assignment moved to, when the previous admission "
    "held a different domain": (
        _CPU_MEM, ["tas", "tas"], _one_domain("node-b", 2), _one_domain("node-a", 2),
        [("node-b", {"cpu": 1000, "memory": GI * 1000}, 2)]),
    "counts only the additional pods when the recomputed assignment grew an already admitted "
    "domain": (
        {"cpu": "1"}, ["tas"], _one_domain("node-a", 3), _one_domain("node-a", 1),
        [("node-a", {"cpu": 1000}, 2)]),
    "skips usage already present in previous admission": (
        {**_CPU_MEM, "example.com/gpu": "1"}, ["tas", "tas", "quota"], _one_domain("node-a", 2),
        _one_domain("node-a", 2), []),
}


@pytest.mark.parametrize("name", list(NET_USAGE),
                         ids=[f"TestAssignment_ComputeTASNetUsage/{n}" for n in NET_USAGE])
def test_assignment_compute_tas_net_usage(name: str) -> None:
    requests, flavors, assignment, previous, want = NET_USAGE[name]
    pod_set = _tas_ps("main", assignment.domains[0][1], requests)
    got = compute_tas_net_usage(
        TASContext({"tas": _snapshot()}), {"main": pod_set}, {"main": flavors},
        {"main": assignment}, {"main": previous} if previous is not None else None)
    assert got == ({"tas": [((node,), amounts, n) for node, amounts, n in want]} if want else {})


# -- TestWorkloadsTopologyRequests_ZeroCountPodSetSkipped ----------------------------------------

ZERO_COUNT = {
    "mixed: 1 completed (count=0) + 1 running (count=1)": (
        [("completed-job", 0), ("running-job", 1)], ["running-job"]),
    "all completed (count=0): no TAS requests": ([("sampler-0", 0), ("controller", 0)], []),
    "3 podSets: 2 completed + 1 running": (
        [("sampler-0", 0), ("sampler-1", 1), ("controller", 0)], ["sampler-1"]),
    "all running: all get TAS requests": ([("worker-0", 2), ("worker-1", 3)],
                                          ["worker-0", "worker-1"]),
}


@pytest.mark.parametrize("name", list(ZERO_COUNT),
                         ids=[f"TestWorkloadsTopologyRequests_ZeroCountPodSetSkipped/{n}"
                              for n in ZERO_COUNT])
def test_workloads_topology_requests_zero_count_pod_set_skipped(name: str) -> None:
    pod_sets, want = ZERO_COUNT[name]
    workload = _workload(*(_tas_ps(n, max(count, 1), {"cpu": "1"}) for n, count in pod_sets))
    outcomes = [_outcome(n, {"cpu": "tas"}, count) for n, count in pod_sets]
    got = topology_requests(TASContext({"tas": _snapshot()}), workload, outcomes)
    assert sorted(r.name for reqs in got.values() for r in reqs) == want
    assert not [o.name for o in outcomes if o.count == 0 and o.error]


# -- TestAssignFlavors_LeaderWorkerSetTASFlavor ---------------------------------------------------

_LWS_FLAVORS = {f.name: f for f in (rf("tas-a", topology="tas-topo-a"),
                                    rf("tas-b", topology="tas-topo-b"), rf("non-tas"))}
_LWS_NODES = [TASNode(n, {HOSTNAME: n}, {"pods": 32_000, "example.com/gpu-a": 4000,
                                         "example.com/gpu-b": 4000})
              for n in ("tas-node-a", "tas-node-b")]
_GPU_A = {"example.com/gpu-a": "tas-a"}
_GPU_B = {"example.com/gpu-b": "tas-b"}
_A, _B = group(fq("tas-a", **{"example.com/gpu-a": "4"})), \
    group(fq("tas-b", **{"example.com/gpu-b": "4"}))
LWS = {
    "leader without a managed request infers the group's TAS flavor": (
        (_tas_ps("leader", 1, group_name="group1"),
         _tas_ps("worker", 1, {"example.com/gpu-a": "1"}, "group1")),
        cq("test-clusterqueue", _A, group(fq("tas-b", memory="8Gi"))),
        {}, {"leader": _GPU_A, "worker": _GPU_A}),
    "leader without a group is rejected (ClusterQueue-wide fallback is not supported)": (
        (_tas_ps("leader", 1), _tas_ps("worker", 1, {"example.com/gpu-a": "1"})),
        cq("test-clusterqueue", _A),
        {"leader": ERR_NO_TAS_FLAVOR_ASSIGNED}, {"leader": {}, "worker": _GPU_A}),
    "peers in the same group resolving to different TAS flavors are rejected": (
        (_tas_ps("leader", 1, group_name="group1"),
         _tas_ps("worker-a", 1, {"example.com/gpu-a": "1"}, "group1"),
         _tas_ps("worker-b", 1, {"example.com/gpu-b": "1"}, "group1")),
        cq("test-clusterqueue", _A, _B),
        {"leader": multiple_tas_flavors_assigned(["tas-a", "tas-b"])},
        {"leader": {**_GPU_A, **_GPU_B}, "worker-a": _GPU_A, "worker-b": _GPU_B}),
    "multiple groups: leaders infer flavors from their own groups": (
        (_tas_ps("leader1", 1, group_name="group1"),
         _tas_ps("worker1", 1, {"example.com/gpu-a": "1"}, "group1"),
         _tas_ps("leader2", 1, group_name="group2"),
         _tas_ps("worker2", 1, {"example.com/gpu-b": "1"}, "group2")),
        cq("test-clusterqueue", _A, _B),
        {}, {"leader1": _GPU_A, "worker1": _GPU_A, "leader2": _GPU_B, "worker2": _GPU_B}),
    "leader in group where peer resolves to non-TAS flavor is rejected": (
        (_tas_ps("leader", 1, group_name="group1"),
         _tas_ps("worker", 1, {"example.com/gpu-a": "1"}, "group1", topology=False)),
        cq("test-clusterqueue", group(fq("non-tas", **{"example.com/gpu-a": "4"}))),
        {"leader": ERR_NO_TAS_CACHE_INFORMATION},
        {"leader": {}, "worker": {"example.com/gpu-a": "non-tas"}}),
}


@pytest.mark.parametrize("name", list(LWS),
                         ids=[f"TestAssignFlavors_LeaderWorkerSetTASFlavor/{n}" for n in LWS])
def test_assign_flavors_leader_worker_set_tas_flavor(name: str) -> None:
    pod_sets, queue, want_errors, want_flavors = LWS[name]
    tree = QuotaTree({queue.name: queue}, {})
    topologies = {"tas-topo-a": (HOSTNAME,), "tas-topo-b": (HOSTNAME,)}
    names = [f.flavor for g in queue.resource_groups for f in g.flavors]
    snapshots: dict[str, TASFlavorSnapshot | None] = {
        n: TASFlavorSnapshot(_LWS_FLAVORS[n].topology or "", topologies[topology], _LWS_NODES)
        for n in names if (topology := _LWS_FLAVORS[n].topology) in topologies}
    got = assign_flavors(WorkloadSpec("ns/wl", "main", queue.name, 0, 0.0, pod_sets), queue,
                         tree.cluster_queues[queue.name], tree, _LWS_FLAVORS, None,
                         tas=TASContext.for_queue(names, snapshots))
    assert {o.name: o.error for o in got.outcomes if o.error} == want_errors
    assert {o.name: {r: f for r, (f, _) in o.flavors.items()} for o in got.outcomes} == \
        want_flavors


# -- TestTasFlavorsOnly ----------------------------------------------------------------------------

def test_tas_flavors_only() -> None:
    """TestTasFlavorsOnly"""
    assignment = {"example.com/gpu": ("tas", FIT), "cpu": ("quota", FIT)}
    got = tas_flavors_only(assignment, TASContext({"tas": _snapshot()}))
    assert got == {"example.com/gpu": ("tas", FIT)}
