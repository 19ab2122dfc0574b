"""KAI's resourcetype plugin table, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092 (Apache-2.0),
``pkg/scheduler/plugins/resourcetype/resourcetype_test.go`` ("resourceType /
resourceTypePlugin / nodeOrderFn / scoring a node for a task"): a node with 2000 CPUs
and the given GPUs and MIG profiles, a task asking for GPUs and 500 millicores, the
plugin alone on (``placement.node_scores``): scores.ResourceType (10) for a CPU-only
task on a CPU-only node, else 0. The two DRA cases: the task's DRA GPUs are a claim of
a GPU device class asking for 2 devices, the node's DRA GPUs a ResourceSlice of 4 GPU
devices on it; the session folds both into GPUs at open (``dra.with_dra_gpus``), so the
task is no CPU-only request and the node no CPU-only node, as KAI's ResReq DRA GPUs
and NodeInfo.HasDRAGPUs make them.
"""

from __future__ import annotations

from typing import Any

import pytest
from tests.peers.kai.dra_objects import build_dra
from tests.peers.kai.plugin_helpers import Cite, only, usage

from dralab.queueing.kai.dra import with_dra_gpus
from dralab.queueing.kai.model import KaiJob, KaiNode, KaiState, KaiTask
from dralab.queueing.kai.placement import NodeUsage, node_scores

# (It, line, task GPUs, node GPUs, node MIG profiles, expected; None: the DRA cases)
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
        _check_dra(cite, task_dra=name.startswith("Returns 0 score if task has only DRA"))
        return
    node = usage("node-1", gpus=node_gpus, cpu_milli=2000 * 1000.0, mig=mig)
    task = KaiTask(name="task-1", job="job", gpus=task_gpus, cpu_milli=500)
    assert node_scores(task, [node], only("resourcetype")) == {"node-1": expected}, str(cite)


def _check_dra(cite: Cite, task_dra: bool) -> None:
    """createFakeTaskWithDRA (2 DRA GPUs) on a CPU-only node, or a CPU task on
    createFakeNodeWithDRA (4 DRA GPUs): score 0 either way."""
    objects: dict[str, Any] = {"DeviceClasses": ["gpu.nvidia.com"]}
    if task_dra:
        objects["ResourceClaims"] = [{"Name": "claim", "DeviceClassName": "gpu.nvidia.com",
                                      "Count": 2}]
    else:
        objects["ResourceSlices"] = [{"Name": "slice", "NodeName": "node-1", "Count": 4}]
    claims, slices, classes = build_dra(objects)
    task = KaiTask(name="task-1", job="job", cpu_milli=500,
                   claims=("claim",) if task_dra else ())
    state = with_dra_gpus(KaiState(
        nodes={"node-1": KaiNode(name="node-1", cpu_milli=2000 * 1000.0)},
        jobs={"job": KaiJob(name="job", queue="q", namespace="", tasks=(task,))},
        resource_claims=claims, resource_slices=slices, device_classes=classes))
    folded = state.jobs["job"].tasks[0]
    node = NodeUsage.of(state.nodes["node-1"])
    assert (folded.gpus, node.node.gpus) == ((2, 0) if task_dra else (0, 4)), str(cite)
    assert node_scores(folded, [node], only("resourcetype")) == {"node-1": 0.0}, str(cite)
