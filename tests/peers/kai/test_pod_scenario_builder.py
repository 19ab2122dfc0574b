"""KAI's accumulated scenario builder, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
``pkg/scheduler/actions/common/solvers/pod_scenario_builder_test.go`` (Apache-2.0), the
Ginkgo suite ``PodAccumulatedScenarioBuilder`` (TestScenarioSolvers): every It, one
pytest case each (id = Context / It), against ``actions.solver``'s scenario builder
(PodAccumulatedScenarioBuilder: ``first`` is GetValidScenario, ``next`` GetNextScenario)
over the victim queue (``JobsOrder`` with victims, GetVictimsQueue without a filter).

The session is upstream's initializeSession(jobs, tasks per job): queue ``default`` with
a child ``team-<i>`` per job (GPU quota 1 each), job ``<i>`` of that many running
1-GPU pods ``pod-<i*tasks+t>`` on ``node-1``, whose GPUs they fill; a reclaimer job of
queue ``team-a`` (outside the session, as upstream's) with one pending pod asking one
GPU (none in the first context). A pod group's minMember (minAvailable) is 1 unless the
case sets it.
"""

# ruff: noqa: E501

from __future__ import annotations

from collections.abc import Callable

import pytest
from tests.peers.kai.actions_helpers import Cite

from dralab.queueing.kai.actions.order import JobsOrder
from dralab.queueing.kai.actions.solver import VictimScenario, _Builder
from dralab.queueing.kai.framework import Session, SessionJob, SessionTask
from dralab.queueing.kai.model import KaiJob, KaiNode, KaiQueue, KaiState, KaiTask, QueueResource

FILE = "common/solvers/pod_scenario_builder_test.go"
FUNCTION = "TestScenarioSolvers (Ginkgo PodAccumulatedScenarioBuilder)"


def _session(jobs: int, per_job: int, min_member: int | Callable[[int], int] = 1) -> Session:
    quota = QueueResource(quota=1)
    queues = {"default": KaiQueue("default"), "team-a": KaiQueue("team-a", parent="default", gpu=quota)}
    state_jobs: dict[str, KaiJob] = {}
    for i in range(jobs):
        queues[f"team-{i}"] = KaiQueue(f"team-{i}", parent="default", gpu=quota)
        tasks = tuple(KaiTask(f"pod-{i * per_job + t}", str(i), status="Running", node="node-1", gpus=1) for t in range(per_job))
        minimum = min_member(per_job) if callable(min_member) else min_member
        state_jobs[str(i)] = KaiJob(str(i), f"team-{i}", namespace=f"kai-team-{i}", min_member=minimum, tasks=tasks)
    node = KaiNode("node-1", gpus=jobs * per_job)
    return Session(KaiState(nodes={"node-1": node}, queues=queues, jobs=state_jobs))


def _reclaimer(gpus: float = 1) -> SessionJob:
    task = KaiTask("pod-1", "reclaimer", gpus=gpus)
    return SessionJob(KaiJob("reclaimer", "team-a", namespace="kai-team-a", tasks=(task,)), [SessionTask("reclaimer", task, "Pending", None, (), 0)])


def _builder(session: Session, reclaimer: SessionJob, recorded: list[SessionTask] | None = None) -> _Builder:
    scenario = VictimScenario(reclaimer, list(reclaimer.pods), recorded=list(recorded or []))
    victims = JobsOrder(session, list(session.jobs.values()), victims=True)
    return _Builder(session, reclaimer, scenario, victims, session.nodes)


def _scenarios(builder: _Builder) -> list[tuple[int, int, list[int]]]:
    """Every scenario the builder gives, as (recorded victims, potential victims, the
    size of each potential victim's task group)."""
    out = []
    scenario = builder.first()
    while scenario is not None:
        sizes = [len(next(g for g in scenario.groups[t.job] if t in g)) for t in scenario.potential]
        out.append((len(scenario.recorded), len(scenario.potential), sizes))
        scenario = builder.next()
    return out


def test_no_jobs_reclaimer_has_pods_no_victims_scenario_is_valid() -> None:
    builder = _builder(_session(0, 0), _reclaimer(gpus=0))
    assert builder.first() is not None, Cite(FILE, FUNCTION, "with no jobs - NewIdleGpusFilter irrelevant / Reclaimer has pods, NewIdleGpusFilter irrelevant, no victims scenario is valid", 54)


def test_no_jobs_no_victims_queue_no_next_scenario() -> None:
    builder = _builder(_session(0, 0), _reclaimer(gpus=0))
    assert builder.next() is None, Cite(FILE, FUNCTION, "with no jobs - NewIdleGpusFilter irrelevant / No victims queue, no next scenario", 58)


def test_no_jobs_empty_victims_queue_no_valid_scenario() -> None:
    builder = _builder(_session(0, 0), _reclaimer())
    assert builder.first() is None, Cite(FILE, FUNCTION, "with no jobs - NewIdleGpusFilter filters no victim scenario / Empty victimsQueue, no valid scenario", 74)


@pytest.mark.parametrize("name,line,min_member,group", [
    ("returns scenario with all tasks in single groups when minAvailable is 1", 87, 1, 1),
    ("returns scenario with all tasks in single groups when minAvailable is amount of pods", 107, 2, 2),
])
def test_optional_victim_jobs(name: str, line: int, min_member: int, group: int) -> None:
    found = _scenarios(_builder(_session(2, 2, min_member), _reclaimer()))
    assert found and found[-1][1:] == (4, [group] * 4), Cite(FILE, FUNCTION, f"with optional victim jobs / {name}", line)


def _recorded_gangs() -> tuple[Session, list[SessionTask]]:
    # three gangs of two; the first and the third pod group are recorded victims
    session = _session(3, 2, min_member=lambda n: n)
    return session, [*session.jobs["0"].pods, *session.jobs["2"].pods]


def test_recorded_victims_same_recorded_victims() -> None:
    session, recorded = _recorded_gangs()
    found = _scenarios(_builder(session, _reclaimer(), recorded))
    assert [r for r, _, _ in found] == [len(recorded)] * 2, Cite(FILE, FUNCTION, "with recorded victims / returns scenarios that have the same recorded victims", 132)


def test_recorded_victims_correct_number_of_potential_victims() -> None:
    session, recorded = _recorded_gangs()
    found = _scenarios(_builder(session, _reclaimer(), recorded))
    assert [p for _, p, _ in found] == [0, 2], Cite(FILE, FUNCTION, "with recorded victims / returns scenarios that have correct number of potential victims", 166)


def _elastic(per_job: int, min_member: int) -> tuple[Session, list[SessionTask]]:
    # one elastic job; its last pod (first in eviction order) is the recorded victim
    session = _session(1, per_job, min_member)
    return session, [p for p in session.jobs["0"].pods if p.name == f"pod-{per_job - 1}"]


def test_elastic_recorded_victims_same_recorded_victims() -> None:
    session, recorded = _elastic(3, 1)
    found = _scenarios(_builder(session, _reclaimer(), recorded))
    assert [r for r, _, _ in found] == [1, 1, 1], Cite(FILE, FUNCTION, "with recorded victims that are elastic / returns scenarios that have the same recorded victims", 203)


def test_elastic_recorded_victims_correct_number_of_potential_victims() -> None:
    session, recorded = _elastic(4, 2)
    found = _scenarios(_builder(session, _reclaimer(), recorded))
    assert [p for _, p, _ in found] == [0, 1, 3], Cite(FILE, FUNCTION, "with recorded victims that are elastic / returns scenarios that have correct number of potential victims", 244)
