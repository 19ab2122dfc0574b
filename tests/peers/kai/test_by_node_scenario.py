"""KAI's by-node victim scenario, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
``pkg/scheduler/actions/common/solvers/scenario/by_node_scenario_test.go``
(Apache-2.0), ``TestPodByNodeScenario_VictimsTasksFromNodes``: one pytest case per
entry (id = its name), against ``VictimScenario.victim_tasks_from_node``: the victims
evicted when the solver tries a node are every task group of every job with a potential
victim on it (pods of those jobs on other nodes included). Built as upstream's
constructor builds it (``scenario_helpers``).
"""

# ruff: noqa: E501

from __future__ import annotations

import pytest
from tests.peers.kai.actions_helpers import Cite
from tests.peers.kai.scenario_helpers import names as _names
from tests.peers.kai.scenario_helpers import pod as _pod
from tests.peers.kai.scenario_helpers import scenario as _scenario

from dralab.queueing.kai.framework import SessionTask

FILE = "common/solvers/scenario/by_node_scenario_test.go"


# VictimsTasksFromNodes: (name, line, ctor potential, added, node, expected)
BY_NODE_CASES: list[tuple[str, int, list[SessionTask], list[SessionTask], str, list[str]]] = [
    ("Single potential job, 2 pods", 40, [_pod("name1", "pg1", "node1"), _pod("name2", "pg1", "node1")], [], "node1", ["name1", "name2"]),
    ("No pods on node", 165, [_pod("name1", "pg1", "node1"), _pod("name2", "pg1", "node1")], [], "node2", []),
    ("Single potential job, return pods from same job on different nodes", 259,
     [_pod("name1", "pg1", "node1"), _pod("name2", "pg1", "node2")], [], "node1", ["name1", "name2"]),
    ("Single potential job, return pods from same job on different nodes - get tasks from AddPotentialVictimsTasks", 384,
     [_pod("name1", "pg1", "node1")], [_pod("name2", "pg1", "node2")], "node1", ["name1", "name2"]),
]


@pytest.mark.parametrize("case", BY_NODE_CASES, ids=[c[0] for c in BY_NODE_CASES])
def test_pod_by_node_scenario_victims_tasks_from_nodes(case: tuple[str, int, list[SessionTask], list[SessionTask], str, list[str]]) -> None:
    name, line, potential, added, node, expected = case
    scenario = _scenario(potential, added=added)
    assert sorted(_names(scenario.victim_tasks_from_node(node))) == expected, Cite(FILE, "TestPodByNodeScenario_VictimsTasksFromNodes", name, line)
