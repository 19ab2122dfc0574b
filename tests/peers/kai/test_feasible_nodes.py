"""KAI's feasible nodes for a job, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
``pkg/scheduler/actions/common/feasible_nodes_test.go`` (Apache-2.0), ``TestFeasibleNodes``:
one pytest case per table entry (id = its name), against ``actions.solver.feasible_nodes``
(FeasibleNodesForJob): a job with a pod asking no GPU of any kind may go to every node,
any other job only to the nodes with some idle or releasing GPU (whole, a shared GPU's
free part, or a MIG instance).

Upstream sets each NodeInfo's Idle / Releasing directly; here the same books are made
on a :class:`NodeUsage`: a node of one GPU whose GPU is taken, releasing, or shared
(100 of its 200 MiB used or releasing), a MIG instance idle or releasing.
"""

# ruff: noqa: E501

from __future__ import annotations

import pytest
from tests.peers.kai.actions_helpers import Cite

from dralab.queueing.kai.actions.solver import feasible_nodes
from dralab.queueing.kai.framework import Session, SessionJob, SessionTask
from dralab.queueing.kai.model import KaiJob, KaiNode, KaiState, KaiTask
from dralab.queueing.kai.placement import GroupUsage, NodeUsage

FILE = "common/feasible_nodes_test.go"
MIG = "nvidia.com/mig-1g.10gb"


def _nodes() -> dict[str, NodeUsage]:
    cpu = NodeUsage.of(KaiNode("cpu-node", cpu_milli=1000, memory_bytes=2000))
    idle_gpu = NodeUsage.of(KaiNode("idle-gpu-node", gpus=1))
    releasing_gpu = NodeUsage.of(KaiNode("releasing-gpu-node", gpus=1))
    releasing_gpu.taken["gpu"] = 1
    releasing_gpu.releasing_held["gpu"] = 1
    idle_fraction = NodeUsage.of(KaiNode("idle-fraction-node", gpus=1))
    idle_fraction.gpu_memory = 200
    idle_fraction.groups["abc"] = GroupUsage(allocated=100)
    releasing_fraction = NodeUsage.of(KaiNode("releasing-fraction-node", gpus=1))
    releasing_fraction.gpu_memory = 200
    releasing_fraction.groups["abc"] = GroupUsage(releasing=100)
    idle_mig = NodeUsage.of(KaiNode("idle-mig-node", mig_instances={MIG: 1}))
    releasing_mig = NodeUsage.of(KaiNode("releasing-mig-node", mig_instances={MIG: 1}))
    releasing_mig.taken[MIG] = 1
    releasing_mig.releasing_held[MIG] = 1
    return {u.node.name: u for u in (cpu, idle_gpu, releasing_gpu, idle_fraction, releasing_fraction, idle_mig, releasing_mig)}


GPU_NODES = ["idle-gpu-node", "releasing-gpu-node", "idle-fraction-node", "releasing-fraction-node", "idle-mig-node", "releasing-mig-node"]
ALL_NODES = [*GPU_NODES, "cpu-node"]

# (name, line, the job's pods, whether nodes exist, expected node names)
CASES: list[tuple[str, int, tuple[KaiTask, ...], bool, list[str]]] = [
    ("no nodes", 89, (KaiTask("pod1", "j", gpus=1),), False, []),
    ("CPU only job", 106, (KaiTask("pod1", "j", cpu_milli=1000),), True, ALL_NODES),
    ("whole GPU job", 123, (KaiTask("pod1", "j", gpus=2),), True, GPU_NODES),
    ("distributed whole GPU job", 142, (KaiTask("pod1", "j", gpus=2), KaiTask("pod2", "j", gpus=2)), True, GPU_NODES),
    ("Mixed requests (whole GPU and CPU pods)", 167, (KaiTask("pod1", "j", gpus=2), KaiTask("pod2", "j", cpu_milli=1000, memory_bytes=2000)), True, ALL_NODES),
    ("Fraction GPU job", 190, (KaiTask("pod1", "j", gpus=0.5),), True, GPU_NODES),
    ("GPU Memory job", 209, (KaiTask("pod1", "j", gpu_memory_mib=500),), True, GPU_NODES),
    ("MIG job", 229, (KaiTask("pod1", "j", mig={MIG: 1}),), True, GPU_NODES),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_feasible_nodes(case: tuple[str, int, tuple[KaiTask, ...], bool, list[str]]) -> None:
    name, line, tasks, with_nodes, expected = case
    session = Session(KaiState())
    session.nodes = _nodes() if with_nodes else {}
    job = SessionJob(KaiJob("j", "q", tasks=tasks), [SessionTask("j", t, "Pending", None, (), i) for i, t in enumerate(tasks)])
    assert sorted(feasible_nodes(session, job)) == sorted(expected), Cite(FILE, "TestFeasibleNodes", name, line)
