"""KAI's proportion plugin tables, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
``pkg/scheduler/plugins/proportion/proportion_test.go`` (Apache-2.0), one pytest case
per upstream case (id = the Ginkgo path and the case name):

* "Set fair share for multi hierarchy queues" and "... 2 hierarchy queues - simplified":
  the hierarchical division (setFairShare -> ``set_fair_shares``, kValue 0 as the
  plugin struct's zero value in these tests), every queue's GPU fair share compared.
* "Get Node Resources": what a node adds to the divided total (getNodeResources ->
  ``node_quantities``) with node-scheduling restriction on, pods of another scheduler
  taken off unless inactive or KAI's reservation/scaler pods.
  "ignore extra resources": the node allocates only a resource "A", which dralab's node
  model cannot hold; the case is a node with nothing, and checks the result is zero.
* "getVictimResources": a victim's core tasks counted together, elastic ones alone
  (``victim_resources``, allowConsolidatingReclaim on).
* "New": the plugin's arguments (``plugin_arguments``): the saturation multiplier is
  parsed, kept at 1 when malformed or below 1. "should create plugin with empty state
  and default multiplier" checks the new plugin's empty total and queue map and that it
  keeps its arguments: here, the defaults an empty argument map gives.
"""

# ruff: noqa: E501

from __future__ import annotations

import pytest
from tests.peers.kai.proportion_helpers import Cite, Q, S, U

from dralab.queueing.kai.model import KaiJob, KaiNode, KaiTask, PodStatus
from dralab.queueing.kai.proportion import (
    NodePod,
    node_quantities,
    plugin_arguments,
    set_fair_shares,
    victim_resources,
)
from dralab.queueing.kai.shares import QueueShare

FILE = "proportion_test.go"
MULTI = "Set fair share in Proportion / Set fair share for multi hierarchy queues"
SIMPLE = "Set fair share in Proportion / Set fair share for 2 hierarchy queues - simplified"

# (name, line, queues, total, expected GPU fair share)
MULTI_HIERARCHY: list[tuple[str, int, dict[str, QueueShare], dict[str, float], dict[str, float]]] = [
    ('simple scenario with single top queue', 49,
     {'top-queue': Q('top-queue', children=('mid-queue',), gpu=S(max_allowed=U, deserved=3, request=3, fair_share=0)),
      'mid-queue': Q('mid-queue', parent='top-queue', children=('leaf-queue-1', 'leaf-queue-2'), gpu=S(max_allowed=U, deserved=3, request=3, fair_share=0)),
      'leaf-queue-1': Q('leaf-queue-1', parent='mid-queue', gpu=S(max_allowed=U, deserved=2, request=2, fair_share=0)),
      'leaf-queue-2': Q('leaf-queue-2', parent='mid-queue', gpu=S(max_allowed=U, deserved=1, request=1, fair_share=0))},
     {'gpu': 3, 'cpu': 0, 'memory': 0},
     {'top-queue': 3, 'mid-queue': 3, 'leaf-queue-1': 2, 'leaf-queue-2': 1}),
    ('two top parent queues', 132,
     {'top-queue-1': Q('top-queue-1', children=('child-queue-1', 'child-queue-2'), gpu=S(max_allowed=U, deserved=2, request=2)),
      'child-queue-1': Q('child-queue-1', parent='top-queue-1', gpu=S(max_allowed=U, deserved=1, request=1)),
      'child-queue-2': Q('child-queue-2', parent='top-queue-1', gpu=S(max_allowed=U, deserved=1, request=1)),
      'top-queue-2': Q('top-queue-2', children=('child-queue-3', 'child-queue-4'), gpu=S(max_allowed=U, deserved=2, request=2)),
      'child-queue-3': Q('child-queue-3', parent='top-queue-2', gpu=S(max_allowed=U, deserved=0, request=0)),
      'child-queue-4': Q('child-queue-4', parent='top-queue-2', gpu=S(max_allowed=U, deserved=1, over_quota_weight=1, request=2))},
     {'gpu': 4, 'cpu': 0, 'memory': 0},
     {'top-queue-1': 2, 'child-queue-1': 1, 'child-queue-2': 1, 'top-queue-2': 2, 'child-queue-3': 0, 'child-queue-4': 2}),
]


def _base_queues() -> dict[str, QueueShare]:
    """getBaseQueues (line 300)."""
    return {
        'd1': Q('d1', title='dep-1', children=('q1',), gpu=S(max_allowed=U, deserved=2, over_quota_weight=1, request=100, fair_share=0)),
        'q1': Q('q1', title='queue-1', parent='d1', gpu=S(max_allowed=U, deserved=2, over_quota_weight=1, request=100, fair_share=0)),
        'd2': Q('d2', title='dep-2', children=('q2',), gpu=S(max_allowed=U, deserved=2, over_quota_weight=1, request=100, fair_share=0)),
        'q2': Q('q2', title='queue-2', parent='d2', gpu=S(max_allowed=U, deserved=2, over_quota_weight=1, request=100, fair_share=0)),
    }


# Entry(name, line, total, deservedOverride, weightOverride, priorityOverride, expected)
SIMPLIFIED = [
    ('two top parent queues - sanity', 380, {'gpu': 4, 'cpu': 0, 'memory': 0}, {}, {}, {}, {'d1': 2, 'q1': 2, 'd2': 2, 'q2': 2}),
    ('two top parent queues - deserved department quota', 393, {'gpu': 4, 'cpu': 0, 'memory': 0}, {'d1': 3, 'd2': 1}, {}, {}, {'d1': 3, 'q1': 3, 'd2': 1, 'q2': 2}),
    ('two top parent queues - over-quota', 410, {'gpu': 12, 'cpu': 0, 'memory': 0}, {'d1': 3, 'd2': 1}, {}, {}, {'d1': 7, 'q1': 7, 'd2': 5, 'q2': 5}),
    ('two top parent queues - over-quota weight', 427, {'gpu': 12, 'cpu': 0, 'memory': 0}, {'d1': 3, 'd2': 1}, {'d1': 1, 'd2': 7}, {}, {'d1': 4, 'q1': 4, 'd2': 8, 'q2': 8}),
    ('two top parent queues - over-quota weight - reversed', 448, {'gpu': 12, 'cpu': 0, 'memory': 0}, {'d1': 3, 'd2': 1}, {'d1': 7, 'd2': 1}, {}, {'d1': 10, 'q1': 10, 'd2': 2, 'q2': 2}),
    ('two top parent queues - priority', 469, {'gpu': 12, 'cpu': 0, 'memory': 0}, {'d1': 1, 'q1': 1, 'd2': 1, 'q2': 1}, {'d1': 7, 'd2': 1}, {'d1': 1, 'd2': 2}, {'d1': 1, 'q1': 1, 'd2': 11, 'q2': 11}),
    ('two top parent queues - priority - reversed', 496, {'gpu': 12, 'cpu': 0, 'memory': 0}, {'d1': 1, 'q1': 1, 'd2': 1, 'q2': 1}, {'d1': 1, 'd2': 7}, {'d1': 2, 'd2': 1}, {'d1': 11, 'q1': 11, 'd2': 1, 'q2': 1}),
]


@pytest.mark.parametrize("case", MULTI_HIERARCHY, ids=[c[0] for c in MULTI_HIERARCHY])
def test_set_fair_share_multi_hierarchy(case: tuple[str, int, dict[str, QueueShare], dict[str, float], dict[str, float]]) -> None:
    name, line, queues, total, expected = case
    queues = {k: q.copy() for k, q in queues.items()}
    set_fair_shares(total, 0.0, queues)
    for queue in queues.values():
        assert queue.gpu.fair_share == expected.get(queue.name, 0), (Cite(FILE, MULTI, name, line), queue.name)


@pytest.mark.parametrize("case", SIMPLIFIED, ids=[c[0] for c in SIMPLIFIED])
def test_set_fair_share_two_hierarchy_simplified(case: tuple[str, int, dict[str, float], dict[str, int], dict[str, int], dict[str, int], dict[str, float]]) -> None:
    name, line, total, deserved, weights, priorities, expected = case
    queues = _base_queues()
    for queue, value in deserved.items():
        queues[queue].gpu.deserved = float(value)
    for queue, value in priorities.items():
        queues[queue].priority = value
    for queue, value in weights.items():
        queues[queue].gpu.over_quota_weight = float(value)
    set_fair_shares(total, 0.0, queues)
    for queue in queues.values():
        assert queue.gpu.fair_share == expected.get(queue.name, 0), (Cite(FILE, SIMPLE, name, line), queue.name)


SCHEDULER = "kai-scheduler"
WORKER = {"node-role.kubernetes.io/gpu-worker": "true"}
G10 = 10_000_000_000.0  # "10G"
G1, G2 = 1_000_000_000.0, 2_000_000_000.0
MINE = NodePod(SCHEDULER, "Running", 2000, G2)
OTHER = NodePod("default-scheduler", "Running", 1000, G1)
# (name, line, node, pods on it, expected cpu/memory/gpu); isRestrictNode is true in all
NODE_RESOURCES: list[tuple[str, int, KaiNode, tuple[NodePod, ...], tuple[float, float, float]]] = [
    ("cpu + memory node", 534, KaiNode("n1", cpu_milli=8000, memory_bytes=G10), (), (8000, G10, 0)),
    ("gpu node", 548, KaiNode("n1", cpu_milli=8000, memory_bytes=G10, gpus=2, labels=WORKER), (), (8000, G10, 2)),
    ("mig gpu node", 570, KaiNode("n1", cpu_milli=8000, memory_bytes=G10, labels=WORKER, mig_instances={"nvidia.com/mig-1g.5gb": 1}), (), (8000, G10, 1)),
    ("ignore extra resources", 592, KaiNode("n1"), (), (0, 0, 0)),
    ("Count out resources for non-related pods", 608, KaiNode("n1", cpu_milli=8000, memory_bytes=G10), (MINE, OTHER), (7000, 9_000_000_000.0, 0)),
    ("Count out resources for non-related pods - consider reservation pods", 642, KaiNode("n1", cpu_milli=8000, memory_bytes=G10),
     (MINE, OTHER, NodePod("default-scheduler", "Running", 1000, G1, utility=True)), (7000, 9_000_000_000.0, 0)),
    ("Count out resources for non-related pods - consider scaler pods", 688, KaiNode("n1", cpu_milli=8000, memory_bytes=G10),
     (MINE, OTHER, NodePod("default-scheduler", "Running", 1000, G1, utility=True)), (7000, 9_000_000_000.0, 0)),
    ("Do not count out resources for non-related pods if non active", 734, KaiNode("n1", cpu_milli=8000, memory_bytes=G10),
     tuple(NodePod("default-scheduler", status, 1000, G1) for status in ("Pending", "Succeeded", "Deleted")), (8000, G10, 0)),
]


@pytest.mark.parametrize("case", NODE_RESOURCES, ids=[c[0] for c in NODE_RESOURCES])
def test_get_node_resources(case: tuple[str, int, KaiNode, tuple[NodePod, ...], tuple[float, float, float]]) -> None:
    name, line, node, pods, (cpu, memory, gpu) = case
    got = node_quantities(node, restrict_to_gpu_workers=True, pods=pods, scheduler_name=SCHEDULER)
    assert got == {"cpu": cpu, "memory": memory, "gpu": gpu}, Cite(FILE, "Set fair share in Proportion / Get Node Resources", name, line)


GI = 1024.0 ** 3
# (name, line, default sub-group minAvailable, number of Pending tasks, expected CPU per result)
VICTIMS: list[tuple[str, int, int, int, list[float]]] = [
    ("should handle case where MinAvailable is greater than number of tasks (panic fix)", 802, 2, 1, [1000.0]),
    ("should correctly split elastic and core tasks when MinAvailable is less than task count", 833, 1, 3, [1000.0, 1000.0, 1000.0]),
    ("should handle case where MinAvailable equals task count", 873, 2, 2, [2000.0]),
    ("should handle zero MinAvailable", 907, 0, 2, [1000.0, 1000.0]),
]


@pytest.mark.parametrize("case", VICTIMS, ids=[c[0] for c in VICTIMS])
def test_get_victim_resources(case: tuple[str, int, int, int, list[float]]) -> None:
    name, line, minimum, count, cpus = case
    status: PodStatus = "Pending"
    tasks = tuple(KaiTask(f"t{i}", "victim", status=status, cpu_milli=1000, memory_bytes=GI) for i in range(count))
    job = KaiJob("victim", "q", min_member=minimum, tasks=tasks)
    amounts = [{"cpu": t.cpu_milli, "memory": t.memory_bytes, "gpu": 0.0} for t in tasks]
    result = victim_resources(job, tasks, amounts, ignore_reallocated=True)
    assert [r["cpu"] for r in result] == cpus, Cite(FILE, "Set fair share in Proportion / getVictimResources", name, line)


# (name, line, arguments, expected saturation multiplier)
NEW: list[tuple[str, int, dict[str, str], float]] = [
    ("should create plugin with empty state and default multiplier", 952, {}, 1.0),
    ("should handle malformed Saturation Multiplier arg", 960, {"relcaimerSaturationMultiplier": "wrong"}, 1.0),
    ("should handle Saturation Multiplier arg", 967, {"relcaimerSaturationMultiplier": "1.5"}, 1.5),
    ("should prevent Saturation Multiplier lower than 1", 974, {"relcaimerSaturationMultiplier": "0.5"}, 1.0),
]


@pytest.mark.parametrize("case", NEW, ids=[c[0] for c in NEW])
def test_new(case: tuple[str, int, dict[str, str], float]) -> None:
    name, line, arguments, multiplier = case
    parsed = plugin_arguments(arguments)
    assert parsed.saturation_multiplier == multiplier, Cite(FILE, "New / Initializing proportion plugin", name, line)
    if not arguments:
        assert parsed.k_value == 1.0
