"""KAI's nodeavailability plugin table, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092 (Apache-2.0),
``pkg/scheduler/plugins/nodeavailability/nodeavailability_test.go``
("NodeAvailability / nodeAvailabilityPlugin / nodeOrderFn / scoring a node for a task"):
a node with one more GPU allocatable than idle, a task asking for GPUs only, the plugin
alone on (``placement.node_scores``): scores.Availability (100) when the task fits on
the node's idle resources, else 0.
"""

from __future__ import annotations

import pytest
from tests.peers.kai.plugin_helpers import Cite, only, usage

from dralab.queueing.kai.model import KaiTask
from dralab.queueing.kai.placement import node_scores

# (It, line, idle GPUs of the node, GPUs the task asks, expected)
CASES = [
    ("Returns 10 score if node can allocate", 51, 1, 1.0, 100.0),
    ("Returns 0 score if node cannot allocate", 59, 1, 2.0, 0.0),
]


@pytest.mark.parametrize(("name", "line", "idle", "asks", "expected"), CASES,
                         ids=[c[0] for c in CASES])
def test_node_order(name: str, line: int, idle: int, asks: float, expected: float) -> None:
    cite = Cite("nodeavailability/nodeavailability_test.go",
                "NodeAvailability / nodeAvailabilityPlugin / nodeOrderFn", name, line)
    node = usage("node-1", gpus=idle + 1, idle_gpus=idle)   # createFakeNode
    task = KaiTask(name="task-1", job="job", gpus=asks)
    assert node_scores(task, [node], only("nodeavailability")) == {"node-1": expected}, str(cite)
