"""KAI's resourcetype plugin table, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092 (Apache-2.0),
``pkg/scheduler/plugins/resourcetype/resourcetype_test.go`` ("resourceType /
resourceTypePlugin / nodeOrderFn / scoring a node for a task"): a node with 2000 CPUs
and the given GPUs and MIG profiles, a task asking for GPUs and 500 millicores, the
plugin alone on (``placement.node_scores``): scores.ResourceType (10) for a CPU-only
task on a CPU-only node, else 0. The two DRA cases need a task's DRA GPU requests and
a node's DRA GPUs, which KaiTask/KaiNode do not carry yet.
"""

from __future__ import annotations

import pytest
from tests.peers.kai.plugin_helpers import Cite, only, usage

from dralab.queueing.kai.model import KaiTask
from dralab.queueing.kai.placement import node_scores

# (It, line, task GPUs, node GPUs, node MIG profiles, expected; None: not built)
CASES: list[tuple[str, int, float, int, dict[str, int], float | None]] = [
    ("Returns 10 score if both task is CPU only and node doesn't have GPUs", 52, 0, 0, {}, 10.0),
    ("Returns 0 score if task is NOT CPU only and node doesn't have GPUs", 60, 2, 0, {}, 0.0),
    ("Returns 0 score if task is CPU only and node has GPUs", 66, 0, 1, {}, 0.0),
    ("Returns 0 score if task is CPU only and node has MIG GPU", 72, 0, 0,
     {"nvidia.com/mig-1g.5gb": 1}, 0.0),
    ("Returns 0 score if task is NOT CPU only and node has GPUs", 80, 1, 1, {}, 0.0),
    ("Returns 0 score if task has only DRA GPU requests and node is CPU only", 86, 0, 0, {},
     None),
    ("Returns 0 score if task is CPU only and node has only DRA GPUs", 92, 0, 0, {}, None),
]


@pytest.mark.parametrize(("name", "line", "task_gpus", "node_gpus", "mig", "expected"), CASES,
                         ids=[c[0] for c in CASES])
def test_node_order(name: str, line: int, task_gpus: float, node_gpus: int,
                    mig: dict[str, int], expected: float | None) -> None:
    cite = Cite("resourcetype/resourcetype_test.go",
                "resourceType / resourceTypePlugin / nodeOrderFn", name, line)
    if expected is None:
        pytest.skip("not built: DRA GPU requests on KaiTask and DRA GPUs on KaiNode "
                    "(KAI's ResReq DRA GPUs / NodeInfo.HasDRAGPUs)")
    node = usage("node-1", gpus=node_gpus, cpu_milli=2000 * 1000.0, mig=mig)
    task = KaiTask(name="task-1", job="job", gpus=task_gpus, cpu_milli=500)
    assert node_scores(task, [node], only("resourcetype")) == {"node-1": expected}, str(cite)
