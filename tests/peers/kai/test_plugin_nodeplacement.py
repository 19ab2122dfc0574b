"""KAI's nodeplacement plugin tables, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092 (Apache-2.0),
``pkg/scheduler/plugins/nodeplacement``:

* ``nodepack_test.go`` TestNodePack (getTestsMetadata): nodes with allocatable and idle
  GPUs, a task asking for one GPU, the plugin alone on with gpu/cpu binpack; every
  node's score compared exactly (upstream compares with reflect.DeepEqual), the binpack
  range taken over all the nodes as the test's NodePreOrderFn does
  (``placement.node_scores``).
* ``nodespread_test.go`` "NodeSpread / calculateScore / should score gpu jobs based on
  free whole gpus": one It running six (gpuCount, nonAllocated) pairs, each for a GPU
  task on a node whose nvidia.com/gpu.count label says gpuCount, and for a CPU-only
  task on a node with gpuCount allocatable and nonAllocated idle CPU; one test, as
  upstream has one case.
"""

from __future__ import annotations

import pytest
from tests.peers.kai.plugin_helpers import Cite, only, usage

from dralab.queueing.kai.model import KaiTask
from dralab.queueing.kai.placement import node_scores

MAX = 9.0   # scores.MaxHighDensity

# (name, line, {node: (allocatable GPUs, idle GPUs, expected score)})
NODEPACK: list[tuple[str, int, dict[str, tuple[int, int, float]]]] = [
    ("4 nodes, 3 with GPUs small gaps", 55,
     {"n1": (4, 0, MAX), "n2": (4, 3, MAX / float(4)), "n3": (4, 4, 0),
      "n4_no_gpus": (0, 0, 0)}),
    ("3 nodes, 3 with GPUs all full", 80,
     {"n1": (8, 0, 0), "n2": (4, 0, 0), "n3": (16, 0, 0)}),
    ("3 nodes, 3 with GPUs all with same allocatable GPUs", 100,
     {"n1": (8, 1, MAX), "n2": (4, 1, MAX), "n3": (16, 1, MAX)}),
    ("3 nodes, 3 with GPUs all free", 120,
     {"n1": (8, 8, MAX * (1 - float(1.0 / 3.0))), "n2": (4, 4, MAX), "n3": (16, 16, 0)}),
    ("3 nodes, 3 with GPUs, 1 with big gap, 2 with small gaps", 140,
     {"n1": (2, 1, MAX * float(1.0 - (1.0 - 0.0) / 64.0)), "n2": (2, 0, MAX),
      "n3": (64, 64, 0)}),
    ("4 nodes, 1 with GPUs", 160,
     {"n1": (0, 0, 0), "n2": (0, 0, 0), "n3": (4, 4, MAX)}),
    ("3 nodes, 0 with GPUs", 180,
     {"n1": (0, 0, 0), "n2": (0, 0, 0), "n3": (0, 0, 0)}),
]

# nodespread_test.go line 33: (gpuCount, nonAllocated, expected)
NODESPREAD = [(0, 0.0, 0.0), (1, 0.0, 0.0), (1, 1.0, 1.0), (2, 1.0, 0.5), (4, 1.0, 0.25),
              (4, 3.0, 0.75)]
BINPACK = {"gpu": "binpack", "cpu": "binpack"}
SPREAD = {"gpu": "spread", "cpu": "spread"}


@pytest.mark.parametrize(("name", "line", "nodes"), NODEPACK, ids=[c[0] for c in NODEPACK])
def test_nodepack(name: str, line: int, nodes: dict[str, tuple[int, int, float]]) -> None:
    cite = Cite("nodeplacement/nodepack_test.go", "TestNodePack", name, line)
    usages = [usage(n, gpus=alloc, idle_gpus=idle) for n, (alloc, idle, _) in nodes.items()]
    # createFakeTask: one container asking for one GPU, whatever the task's name says
    task = KaiTask(name=name, job="job", gpus=1)
    got = node_scores(task, usages, only("nodeplacement", BINPACK))
    assert got == {n: float(exp) for n, (_, _, exp) in nodes.items()}, str(cite)


def test_nodespread() -> None:
    cite = Cite("nodeplacement/nodespread_test.go",
                "NodeSpread / calculateScore", "should score gpu jobs based on free whole gpus",
                30)
    plugins = only("nodeplacement", SPREAD)
    for count, free, expected in NODESPREAD:
        gpu_node = usage("gpu", gpus=int(free), labels={"nvidia.com/gpu.count": str(count)})
        gpu_task = KaiTask(name="t", job="j", gpus=1)
        assert node_scores(gpu_task, [gpu_node], plugins) == {"gpu": expected}, \
            f"{cite}: GPU task, gpuCount {count}, nonAllocated {free}"
        cpu_node = usage("cpu", cpu_milli=float(count), idle_cpu_milli=free)
        cpu_task = KaiTask(name="t", job="j", cpu_milli=1)
        assert node_scores(cpu_task, [cpu_node], plugins) == {"cpu": expected}, \
            f"{cite}: CPU task, allocatable CPU {count}, idle {free}"
