"""KAI's accumulated idle-GPUs scenario filter, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
``pkg/scheduler/actions/common/solvers/accumulated_scenario_filters/idle_gpus/
idle_gpus_test.go`` (Apache-2.0): every entry of its five tables, one pytest case each
(id = function / entry name), against ``actions.solver.IdleGpusFilter``
(AccumulatedIdleGpus) and ``greedy_match`` (greedyMatchRequirements).

Upstream's filter keeps its books as fields the cases set directly: each node's idle
plus releasing GPUs (``capacity``), the N nodes with the most of them (``holders()``,
N = the scenario's pending tasks; KAI keeps that list sorted as victims are added, here
it is sorted when read, ties by name), and the victims already counted. A victim adds
the GPUs its pod holds (AcceptedResource) to its node once. What is checked is what the
filter decides with: the capacities, the holders, and the scenario's verdict.
orderedInsert (a sorted-slice helper) and the filter's assertions that one instance is
only fed accumulating scenarios (errors for misuse, not verdicts) are not decisions.
"""

# ruff: noqa: E501

from __future__ import annotations

from collections.abc import Sequence

import pytest
from tests.peers.kai.actions_helpers import Cite

from dralab.queueing.kai.actions.solver import IdleGpusFilter, VictimScenario, greedy_match
from dralab.queueing.kai.framework import Session, SessionJob, SessionTask
from dralab.queueing.kai.model import KaiJob, KaiNode, KaiState, KaiTask

FILE = "common/solvers/accumulated_scenario_filters/idle_gpus/idle_gpus_test.go"

ORDERED_INSERT = [("empty array", 42), ("add at the beginning of the array", 52), ("replace in array", 62), ("update element in array", 72)]


@pytest.mark.parametrize("case", ORDERED_INSERT, ids=[c[0] for c in ORDERED_INSERT])
def test_ordered_insert(case: tuple[str, int]) -> None:
    pytest.skip(f"not a decision: orderedInsert is a generic sorted-slice helper (Test_orderedInsert / {case[0]}); the holders it keeps are checked by updateWithVictim's cases")


# (name, line, requirements, holders, capacity, want)
GREEDY: list[tuple[str, int, list[float], list[str], dict[str, float], bool]] = [
    ("empty requirements always match", 118, [], ["n1"], {"n1": 1.0}, True),
    ("zero requirements are skipped", 127, [0, 0], [], {}, True),
    ("single requirement matched to holder", 136, [0.5], ["n1"], {"n1": 1.0}, True),
    ("single requirement exceeds holder capacity", 145, [0.5], ["n1"], {"n1": 0.0}, False),
    ("virtual allocation prevents double-use of same holder", 154, [1.0, 0.5], ["n1"], {"n1": 1.0}, False),
    ("bin-packing: two requirements fit in one holder", 163, [1.0, 0.5], ["n1"], {"n1": 1.5}, True),
    ("second holder used after first is saturated", 172, [1.0, 1.0], ["n2", "n1"], {"n1": 1.0, "n2": 2.0}, True),
    ("early termination: best holder below requirement", 181, [2.0], ["n1"], {"n1": 1.0}, False),
]


@pytest.mark.parametrize("case", GREEDY, ids=[c[0] for c in GREEDY])
def test_greedy_match_requirements(case: tuple[str, int, list[float], list[str], dict[str, float], bool]) -> None:
    name, line, required, holders, capacity, want = case
    assert greedy_match(required, holders, capacity) == want, Cite(FILE, "Test_greedyMatchRequirements", name, line)


def _victim(name: str, node: str, gpus: float) -> SessionTask:
    task = SessionTask(f"{name}pg", KaiTask(name, f"{name}pg", status="Running", node=node, gpus=gpus), "Running", node, (), 0)
    task.accepted_gpus = gpus
    return task


def _scenario(pending: list[float], recorded: Sequence[SessionTask] = (), potential: Sequence[SessionTask] = ()) -> VictimScenario:
    tasks = [SessionTask("pendingPg1", KaiTask(f"pending{i}", "pendingPg1", gpus=g), "Pending", None, (), i) for i, g in enumerate(pending)]
    job = SessionJob(KaiJob("pendingPg1", "q", tasks=tuple(t.spec for t in tasks)), tasks)
    scenario = VictimScenario(job, tasks, recorded=list(recorded))
    scenario.add_potential(list(potential))
    return scenario


# (name, line, capacity, holders before (their count is N), victim's node and GPUs, holders after)
UPDATE_WITH_VICTIM: list[tuple[str, int, dict[str, float], list[str], tuple[str, float], list[str]]] = [
    ("new victim update", 221, {"n1": 1.0, "n2": 2.0}, ["n2"], ("n1", 2), ["n1"]),
    ("do not update maxFreeGpu nodes", 244, {"n1": 1.0, "n2": 5.0}, ["n2"], ("n1", 2), ["n2"]),
    ("new victim - middle of max free gpu list", 267, {"n1": 1.0, "n2": 2.0, "n3": 5.0, "n4": 2.0}, ["n3", "n2", "n4"], ("n1", 2), ["n3", "n1", "n2"]),
]


@pytest.mark.parametrize("case", UPDATE_WITH_VICTIM, ids=[c[0] for c in UPDATE_WITH_VICTIM])
def test_accumulated_idle_gpus_update_with_victim(case: tuple[str, int, dict[str, float], list[str], tuple[str, float], list[str]]) -> None:
    name, line, capacity, before, (node, gpus), after = case
    idle = IdleGpusFilter(dict(capacity), [], len(before))
    assert idle.holders() == before
    idle.add_victims([_victim("uid1", node, gpus)])
    # upstream also returns the least of the holders (minIdleGpusRelevant), its own bookkeeping
    assert idle.holders() == after, Cite(FILE, "TestAccumulatedIdleGpus_updateWithVictim", name, line)


UPDATE_STATE_ASSERTS = [
    ("pending tasks only - assert failed", 416),
    ("potential victims scenario - assert failed", 587),
    ("recorded victims scenario - assert failed", 829),
]


@pytest.mark.parametrize("case", UPDATE_STATE_ASSERTS, ids=[c[0] for c in UPDATE_STATE_ASSERTS])
def test_accumulated_idle_gpus_update_state_with_scenario_asserts(case: tuple[str, int]) -> None:
    pytest.skip(f"not a decision: the filter's error when one instance is fed scenarios that do not accumulate (a misuse by the caller, TestAccumulatedIdleGpus_updateStateWithScenario / {case[0]})")


def test_update_state_no_nodes_available() -> None:
    idle = IdleGpusFilter({}, [1.0], 0)
    idle.add_victims([])
    assert (idle.capacity, idle.holders()) == ({}, []), Cite(FILE, "TestAccumulatedIdleGpus_updateStateWithScenario", "no nodes available", 337)


@pytest.mark.parametrize("name,line", [("pending tasks only - first scenario", 374), ("pending tasks only - non first scenario", 456)])
def test_update_state_pending_tasks_only(name: str, line: int) -> None:
    idle = IdleGpusFilter({"n1": 1.0, "n2": 2.0}, [1.0], 1)
    scenario = _scenario([1.0])
    idle.add_victims([*scenario.recorded, *scenario.potential])
    assert (idle.capacity, idle.holders()) == ({"n1": 1.0, "n2": 2.0}, ["n2"]), Cite(FILE, "TestAccumulatedIdleGpus_updateStateWithScenario", name, line)


def test_update_state_potential_victims_scenario() -> None:
    idle = IdleGpusFilter({"n1": 1.0, "n2": 2.0}, [1.0], 1)
    scenario = _scenario([1.0], potential=[_victim("pv1", "n1", 3)])
    idle.add_victims([*scenario.recorded, *scenario.potential])
    assert (idle.capacity, idle.holders()) == ({"n1": 4.0, "n2": 2.0}, ["n1"]), Cite(FILE, "TestAccumulatedIdleGpus_updateStateWithScenario", "potential victims scenario", 498)


def test_update_state_recorded_victims_first_scenario() -> None:
    idle = IdleGpusFilter({"n1": 1.0, "n2": 2.0}, [1.0], 1)
    scenario = _scenario([1.0], recorded=[_victim("pv1", "n1", 3)])
    idle.add_victims([*scenario.recorded, *scenario.potential])
    assert (idle.capacity, idle.holders()) == ({"n1": 4.0, "n2": 2.0}, ["n1"]), Cite(FILE, "TestAccumulatedIdleGpus_updateStateWithScenario", "recorded victims scenario - first scenario", 673)


def test_update_state_recorded_victims_non_first_scenario_do_not_update() -> None:
    # upstream starts from n1 = 4 with the recorded victim already counted; here it is
    # counted by a first scenario, then given again
    recorded = _victim("pv1", "n1", 3)
    idle = IdleGpusFilter({"n1": 1.0, "n2": 2.0}, [1.0], 1)
    idle.add_victims([recorded])
    scenario = _scenario([1.0], recorded=[recorded])
    idle.add_victims([*scenario.recorded, *scenario.potential])
    assert (idle.capacity, idle.holders()) == ({"n1": 4.0, "n2": 2.0}, ["n1"]), Cite(FILE, "TestAccumulatedIdleGpus_updateStateWithScenario", "recorded victims scenario - non first scenario - do not update", 762)


@pytest.mark.parametrize("name,line,n1,want", [
    ("exact amount of GPUs after removing potential victim - valid scenario", 970, 9.0, True),
    ("insufficient amount of GPUs for largest job - invalid scenario", 1124, 6.0, False),
])
def test_accumulated_idle_gpus_filter(name: str, line: int, n1: float, want: bool) -> None:
    # requirements 10, 8, 2; rv1 (3 GPUs on n1) already counted, pv1 (3 GPUs on n1) new
    recorded, potential = _victim("rv1", "n1", 3), _victim("pv1", "n1", 3)
    idle = IdleGpusFilter({"n1": n1, "n2": 8.0}, [10, 8, 2], 3)
    idle.seen.add(id(recorded))
    assert idle.valid(_scenario([10, 8, 2], recorded=[recorded], potential=[potential])) == want, Cite(FILE, "TestAccumulatedIdleGpus_Filter", name, line)


def test_accumulated_idle_gpus_filter_gpu_memory_victim() -> None:
    # a gpu-memory pod of 20 MiB on a node whose GPUs have 100 MiB frees 0.2 GPU (its
    # accepted share, as the session computes it): 0.8 idle + 0.2 fits a 1-GPU task
    node = KaiNode("n1", gpus=1, gpu_memory_mib=100)
    victim = KaiTask("pv1", "potential_victims", status="Running", node="n1", gpu_memory_mib=20, gpu_groups=("g1",))
    session = Session(KaiState(nodes={"n1": node}, jobs={"potential_victims": KaiJob("potential_victims", "q", tasks=(victim,))}))
    pv = session.jobs["potential_victims"].pods[0]
    assert abs(pv.accepted_gpus - 0.2) < 1e-9
    idle = IdleGpusFilter({"n1": 0.8}, [1.0], 1)
    assert idle.valid(_scenario([1.0], potential=[pv])), Cite(FILE, "TestAccumulatedIdleGpus_Filter", "gpu memory pods counted for freed resources - scenario valid", 1278)
