"""KAI's topology-aware idle-GPUs scenario filter, ported test by test.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
``pkg/scheduler/actions/common/solvers/accumulated_scenario_filters/idle_gpus/topology_aware_idle_gpus_test.go``
(Apache-2.0): its 13 test functions (no tables; one case each, id = the function),
against ``dralab.queueing.kai.topology_filter``.

Inputs as upstream's helpers make them: createTestNodes (nodes with only GPUs and the
topology labels), createRunningPodWithGpus (a running pod of its own job on a node,
AddTask'ed so the node's idle GPUs drop), buildJob (jobs_fake with the given root
sub-group set). newConstrainedSubGroup(name, ...) is a sub-group set with the required
level holding one pod set of the same name; in our flat sub-group list the set keeps the
name and the constraint and its pod set is ``<name>/pods`` (a pod set's name is not read
by the filter). The filter's Filter(scenario) takes the scenario's recorded victims'
tasks and its potential victims.
"""

# ruff: noqa: E501

from __future__ import annotations

from tests.peers.kai.topology_helpers import COMMIT, REPO

from dralab.queueing.kai.framework import Session, SessionTask
from dralab.queueing.kai.model import (
    KaiJob,
    KaiNode,
    KaiState,
    KaiSubGroup,
    KaiTask,
    TopologyConstraint,
)
from dralab.queueing.kai.topology_filter import TopologyDomainKey, TopologyIdleGpusFilter

FILE = "pkg/scheduler/actions/common/solvers/accumulated_scenario_filters/idle_gpus/topology_aware_idle_gpus_test.go"
TOPOLOGY = "cluster-topology"


def cite(function: str, line: int) -> str:
    return f"{REPO}@{COMMIT} {FILE}:{line} {function}"


def _session(gpus: dict[str, int], labels: dict[str, dict[str, str]] | None = None,
             victims: tuple[tuple[str, str, int], ...] = ()) -> Session:
    """createTestNodes, then each (victim, node, GPUs) as a running pod of job <victim>-job."""
    nodes = {n: KaiNode(n, gpus=g, labels=dict((labels or {}).get(n, {}))) for n, g in gpus.items()}
    jobs = {f"{v}-job": KaiJob(f"{v}-job", "default", tasks=(
        KaiTask(v, f"{v}-job", status="Running", node=node, gpus=float(g)),)) for v, node, g in victims}
    return Session(KaiState(nodes=nodes, jobs=jobs))


def _victim(session: Session, name: str) -> SessionTask:
    return session.jobs[f"{name}-job"].pods[0]


def _job(groups: list[tuple[str, str, int]], tasks: list[tuple[str, int]]) -> KaiJob:
    """buildJob with a root set (no constraint) of newConstrainedSubGroup(name, topology,
    level, podCount) sub-groups; tasks (sub-group, GPUs), pending."""
    subgroups: list[KaiSubGroup] = []
    for name, level, count in groups:
        subgroups.append(KaiSubGroup(name, 0, None, TopologyConstraint(TOPOLOGY, level)))
        subgroups.append(KaiSubGroup(f"{name}/pods", count, name))
    return KaiJob("pending-job", "default", tasks=tuple(
        KaiTask(f"pending-job-{i}", "pending-job", gpus=float(g), subgroup=f"{sg}/pods")
        for i, (sg, g) in enumerate(tasks)), subgroups=tuple(subgroups))


def _filter(job: KaiJob, session: Session) -> TopologyIdleGpusFilter:
    found = TopologyIdleGpusFilter.for_preemptor(job, session.nodes)
    assert found is not None, "Expected non-nil filter"
    return found


def test_new_topology_aware_idle_gpus_filter_no_constraints() -> None:
    session = _session({"node-1": 8, "node-2": 8})
    job = KaiJob("pending-job", "default", tasks=(KaiTask("pending-job-0", "pending-job", gpus=4),))
    assert TopologyIdleGpusFilter.for_preemptor(job, session.nodes) is None, cite("TestNewTopologyAwareIdleGpusFilter_NoConstraints", 34)


def test_topology_aware_idle_gpus_single_domain_sufficient_capacity() -> None:
    level = "topologyLevel/rack"
    session = _session({"node-1": 8, "node-2": 8, "node-3": 4},
                       {"node-1": {level: "rack-1"}, "node-2": {level: "rack-1"}, "node-3": {level: "rack-2"}})
    job = _job([("default", level, 2)], [("default", 8), ("default", 4)])
    assert _filter(job, session).filter([], []) is True, cite("TestTopologyAwareIdleGpus_SingleDomainSufficientCapacity", 62)


def test_topology_aware_idle_gpus_no_domain_has_sufficient_capacity() -> None:
    level = TOPOLOGY + "/rack"
    session = _session({"node-1": 4, "node-2": 5, "node-3": 6},
                       {"node-1": {level: "rack-1"}, "node-2": {level: "rack-2"}, "node-3": {level: "rack-3"}})
    job = _job([("default", level, 2)], [("default", 8), ("default", 8)])
    assert _filter(job, session).filter([], []) is False, cite("TestTopologyAwareIdleGpus_NoDomainHasSufficientCapacity", 95)


def test_topology_aware_idle_gpus_multiple_pod_sets_with_same_constraint() -> None:
    level = "topologyLevel/rack"
    session = _session({"node-1": 10, "node-2": 2, "node-3": 20},
                       {"node-1": {level: "rack-1"}, "node-2": {level: "rack-2"}, "node-3": {level: "rack-2"}})
    job = _job([("podset1", level, 2), ("podset2", level, 1)], [("podset1", 8), ("podset1", 8), ("podset2", 10)])
    assert _filter(job, session).filter([], []) is True, cite("TestTopologyAwareIdleGpus_MultiplePodSetsWithSameConstraint", 128)


def test_topology_aware_idle_gpus_with_victim_tasks() -> None:
    level = "topologyLevel2/rack"
    session = _session({"node-1": 4, "node-2": 12}, {"node-1": {level: "rack-1"}, "node-2": {level: "rack-2"}},
                       (("victim-1", "node-2", 8),))
    job = _job([("default", level, 1)], [("default", 10)])
    check = _filter(job, session)
    assert check.filter([], [_victim(session, "victim-1")]) is True, cite("TestTopologyAwareIdleGpus_WithVictimTasks", 164)


def test_topology_aware_idle_gpus_victim_not_double_counted_across_filter_calls() -> None:
    session = _session({"node-1": 8}, {"node-1": {"rack": "rack-1"}}, (("victim-1", "node-1", 4),))
    job = _job([("default", "rack", 1)], [("default", 10)])
    check = _filter(job, session)
    victim = _victim(session, "victim-1")
    where = cite("TestTopologyAwareIdleGpus_VictimNotDoubleCountedAcrossFilterCalls", 220)
    assert check.filter([], [victim]) is False, where    # 4 idle + 4 freed < 10
    assert check.filter([], [victim]) is False, where    # the same victim again: still 8


def test_topology_aware_idle_gpus_recorded_victims_counted_toward_capacity() -> None:
    session = _session({"node-1": 12}, {"node-1": {"rack": "rack-1"}}, (("victim-1", "node-1", 8),))
    job = _job([("default", "rack", 1)], [("default", 10)])
    check = _filter(job, session)
    recorded = session.jobs["victim-1-job"].pods    # RecordedVictimsTasks: the recorded jobs' pods
    assert check.filter(recorded, []) is True, cite("TestTopologyAwareIdleGpus_RecordedVictimsCountedTowardCapacity", 277)


def test_topology_aware_idle_gpus_multiple_levels() -> None:
    zone, rack = "topologyPrefix/zone", "topologyPrefix/rack"
    session = _session({"node-1": 8, "node-2": 8, "node-3": 8},
                       {"node-1": {zone: "zone-1", rack: "rack-1"}, "node-2": {zone: "zone-1", rack: "rack-2"},
                        "node-3": {zone: "zone-2", rack: "rack-3"}})
    job = _job([("podset1", rack, 1), ("podset2", zone, 2)], [("podset1", 6), ("podset2", 8), ("podset2", 8)])
    assert _filter(job, session).filter([], []) is True, cite("TestTopologyAwareIdleGpus_MultipleLevels", 326)


def test_topology_domain_key_equality() -> None:
    where = cite("TestTopologyDomainKey_Equality", 362)
    key1 = TopologyDomainKey("topo", "rack", "rack-1")
    key2 = TopologyDomainKey("topo", "rack", "rack-1")
    key3 = TopologyDomainKey("topo", "rack", "rack-2")
    keys = {key1: 1}
    keys[key2] = 2
    assert keys[key1] == 2, where
    assert key3 not in keys, where


def test_topology_aware_idle_gpus_filter_domain_moves_two_steps_left() -> None:
    session = _session({"node-1": 10, "node-2": 8, "node-3": 11},
                       {"node-1": {"rack": "rack-1"}, "node-2": {"rack": "rack-2"}, "node-3": {"rack": "rack-3"}},
                       (("victim-1", "node-3", 5),))
    job = _job([("default", "rack", 1)], [("default", 11)])
    check = _filter(job, session)
    where = cite("TestTopologyAwareIdleGpus_FilterDomainMovesTwoStepsLeft", 386)
    assert check.filter([], [_victim(session, "victim-1")]) is True, where


def test_topology_aware_idle_gpus_bin_packing_prevents_over_allocation() -> None:
    session = _session({"node-1": 15, "node-2": 15}, {"node-1": {"rack": "rack-1"}, "node-2": {"rack": "rack-2"}})
    job = _job([("podset1", "rack", 1), ("podset2", "rack", 1)], [("podset1", 10), ("podset2", 10)])
    assert _filter(job, session).filter([], []) is True, cite("TestTopologyAwareIdleGpus_BinPackingPreventsOverAllocation", 434)


def test_topology_aware_idle_gpus_bin_packing_rejects_insufficient_domains() -> None:
    session = _session({"node-1": 15}, {"node-1": {"rack": "rack-1"}})
    job = _job([("podset1", "rack", 1), ("podset2", "rack", 1)], [("podset1", 10), ("podset2", 10)])
    assert _filter(job, session).filter([], []) is False, cite("TestTopologyAwareIdleGpus_BinPackingRejectsInsufficientDomains", 466)


def test_topology_aware_idle_gpus_fragmented_capacity_rejected() -> None:
    session = _session({"node-1": 10, "node-2": 9}, {"node-1": {"rack": "rack-1"}, "node-2": {"rack": "rack-2"}})
    job = _job([("subA", "rack", 1), ("subB", "rack", 1), ("subC", "rack", 1)],
               [("subA", 8), ("subB", 8), ("subC", 3)])
    assert _filter(job, session).filter([], []) is False, cite("TestTopologyAwareIdleGpus_FragmentedCapacityRejected", 504)
