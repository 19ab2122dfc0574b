"""KAI's base victim scenario, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
``pkg/scheduler/actions/common/solvers/scenario/base_scenario_test.go`` (Apache-2.0):
every table entry, one pytest case each (id = the entry name), against
``actions.solver.VictimScenario`` (BaseScenario).

The scenario is built as upstream's constructor does (``scenario_helpers``): each
potential victim given to it is added alone (its own task group), the recorded victims'
jobs as they are; tasks given to AddPotentialVictimsTasks form one group. What is
compared is what the solver reads: the potential victims in order, every victim
(recorded and potential) per job (GetVictims; upstream's test counts
victimsJobsTaskGroups per job, which also holds the recorded jobs), the task group a
victim pod is re-placed with (GetVictimJobRepresentativeById: the first group holding
it; dralab re-places the victim's job, whose evicted pods are exactly these groups) and
the latest potential victim's job.
"""

# ruff: noqa: E501

from __future__ import annotations

import pytest
from tests.peers.kai.actions_helpers import Cite
from tests.peers.kai.scenario_helpers import names as _names
from tests.peers.kai.scenario_helpers import pod as _pod
from tests.peers.kai.scenario_helpers import scenario as _scenario

from dralab.queueing.kai.actions.solver import VictimScenario
from dralab.queueing.kai.framework import SessionTask

FILE = "common/solvers/scenario/base_scenario_test.go"


# AddPotentialVictimsTasks: (name, line, ctor potential, recorded, added, potential after, victims per job)
ADD: list[tuple[str, int, list[SessionTask], list[SessionTask], list[SessionTask], list[str], dict[str, list[str]]]] = [
    ("victims in ctor", 43, [_pod("name1", "pg1")], [], [], ["name1"], {"pg1": ["name1"]}),
    ("victims in ctor and AddPotentialVictimsTasks", 89, [_pod("name1", "pg1")], [], [_pod("name2", "pg2")],
     ["name1", "name2"], {"pg1": ["name1"], "pg2": ["name2"]}),
    ("recorded victims update victimsJobsTaskGroups field", 160, [_pod("name1", "pg1")], [_pod("name2", "pg2")], [],
     ["name1"], {"pg2": ["name2"], "pg1": ["name1"]}),
]


@pytest.mark.parametrize("case", ADD, ids=[c[0] for c in ADD])
def test_pod_simple_scenario_add_potential_victims_tasks(case: tuple[str, int, list[SessionTask], list[SessionTask], list[SessionTask], list[str], dict[str, list[str]]]) -> None:
    name, line, potential, recorded, added, after, by_job = case
    scenario = _scenario(potential, recorded, added)
    got = (_names(scenario.potential), {job: _names(tasks) for job, tasks in scenario.victims().items()})
    assert got == (after, by_job), Cite(FILE, "TestPodSimpleScenario_AddPotentialVictimsTasks", name, line)


def _representative(scenario: VictimScenario, task: SessionTask) -> list[str] | None:
    for group in scenario.groups.get(task.job, []):
        if task in group:
            return _names(group)
    return None


def test_get_victim_job_representative_single_task_for_job() -> None:
    name1 = _pod("name1", "pg1")
    scenario = _scenario([name1], [_pod("name2", "pg2")])
    assert _representative(scenario, name1) == ["name1"], Cite(FILE, "TestPodSimpleScenario_GetVictimJobRepresentativeById", "Single task for job", 262)


def test_get_victim_job_representative_task_not_given_to_the_scenario() -> None:
    scenario = _scenario([_pod("name1", "pg1")], [_pod("name2", "pg2")])
    assert _representative(scenario, _pod("name3", "pg3")) is None, Cite(FILE, "TestPodSimpleScenario_GetVictimJobRepresentativeById", "Task not given to the scenario", 339)


def test_get_victim_job_representative_elastic_single_task() -> None:
    name1 = _pod("name1", "pg1")
    scenario = _scenario([name1], [_pod("name2", "pg2")], [_pod("name1.2", "pg1")])
    assert _representative(scenario, name1) == ["name1"], Cite(FILE, "TestPodSimpleScenario_GetVictimJobRepresentativeById", "For elastic job, get only a single-task job representor", 407)


@pytest.mark.parametrize("name,line,added", [("tasks only in ctor", 524, []), ("return latest task from AddPotentialVictimsTasks", 577, [_pod("name2", "pg1")])])
def test_pod_simple_scenario_latest_potential_victim(name: str, line: int, added: list[SessionTask]) -> None:
    scenario = _scenario([_pod("name1", "pg1")], added=added)
    assert scenario.latest_job == "pg1", Cite(FILE, "TestPodSimpleScenario_LatestPotentialVictim", name, line)
