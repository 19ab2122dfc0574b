"""KAI session and allocate action on a few upstream cases written by hand.

Cases from NVIDIA/KAI-Scheduler@72de64fc8eca10fa8cca26a20156178f3edbe092,
pkg/scheduler/actions/allocate/allocate_test.go (getTestsMetadata), as the upstream
test utilities build them: queues under a department ``default`` (unlimited), jobs
created in table order, task names ``<job>-<index>``.
"""

from __future__ import annotations

import pytest

from dralab.queueing.kai.model import KaiJob, KaiNode, KaiQueue, KaiState, KaiTask, QueueResource
from dralab.queueing.kai.session import UnknownAction, run_session

UNL = QueueResource(quota=-1, limit=-1, over_quota_weight=-1)


def _queues(*names: str, quota: float = 1) -> dict[str, KaiQueue]:
    queues = {"default": KaiQueue("default", gpu=UNL, cpu=UNL, memory=UNL)}
    for index, name in enumerate(names):
        queues[name] = KaiQueue(name, parent="default", created=60.0 * index,
                                gpu=QueueResource(quota=quota, over_quota_weight=0),
                                cpu=QueueResource(quota=-1, limit=-1),
                                memory=QueueResource(quota=-1, limit=-1))
    return queues


def _job(name: str, queue: str, gpus: float, created: float, status: str = "Pending",
         node: str | None = None, tasks: int = 1, min_member: int = 1,
         priority: int = 50) -> KaiJob:
    return KaiJob(name, queue, priority=priority, created=created, min_member=min_member,
                  tasks=tuple(KaiTask(f"{name}-{i}", name, status=status,  # type: ignore[arg-type]
                                      node=node, gpus=gpus, cpu_milli=1000,
                                      memory_bytes=1e9) for i in range(tasks)))


def _node(name: str, gpus: int) -> KaiNode:
    return KaiNode(name, gpus=gpus, cpu_milli=20000 * 1000, memory_bytes=20e9, max_pods=110)


def test_allocate_by_queue_shares() -> None:
    # allocate_test.go case 1: "1 job running on node0 from queue0, 3 pending jobs from
    # queue1 and 1 pending job from queue0 - allocate them according to their the queue
    # shares"
    jobs = [_job("running_job0", "queue0", 1, 0, "Running", "node0"),
            _job("pending_job0", "queue0", 1, 1), _job("pending_job1", "queue1", 1, 2),
            _job("pending_job2", "queue1", 1, 3), _job("pending_job3", "queue1", 1, 4)]
    state = KaiState(nodes={"node0": _node("node0", 2), "node1": _node("node1", 2)},
                     queues=_queues("queue0", "queue1"), jobs={j.name: j for j in jobs})
    result = run_session(state, ("allocate",))
    placed = {t.job: (t.status, t.node) for t in result.tasks}
    assert placed == {
        "running_job0": ("Running", "node0"),
        "pending_job0": ("Binding", "node1"),
        "pending_job1": ("Binding", "node0"),
        "pending_job2": ("Binding", "node1"),
        "pending_job3": ("Pending", None),
    }
    assert result.count("bind") == 3
    assert "pending_job3" in result.unschedulable
    # the input is not changed
    assert state.jobs["pending_job0"].tasks[0].status == "Pending"


def test_gang_binds_all_or_nothing() -> None:
    # a gang of 3 one-GPU pods on two 1-GPU nodes places nothing (allocateGang_test.go's
    # shape); a gang of 2 places both
    jobs = [_job("gang3", "queue0", 1, 0, tasks=3, min_member=3),
            _job("gang2", "queue1", 1, 1, tasks=2, min_member=2)]
    state = KaiState(nodes={"n0": _node("n0", 1), "n1": _node("n1", 1)},
                     queues=_queues("queue0", "queue1", quota=2),
                     jobs={j.name: j for j in jobs})
    result = run_session(state, ("allocate",))
    assert {t.status for t in result.of_job("gang3")} == {"Pending"}
    assert {t.status for t in result.of_job("gang2")} == {"Binding"}
    assert "gang scheduling" in result.unschedulable["gang3"]


def test_fractions_share_one_gpu() -> None:
    # two half-GPU pods binpack onto one GPU group of the same node
    jobs = [_job("f0", "queue0", 0.5, 0), _job("f1", "queue0", 0.5, 1)]
    state = KaiState(nodes={"n0": _node("n0", 2)}, queues=_queues("queue0", quota=2),
                     jobs={j.name: j for j in jobs})
    result = run_session(state, ("allocate",))
    groups = {t.gpu_groups for t in result.tasks}
    assert len(groups) == 1 and all(len(g) == 1 for g in groups)
    assert {t.status for t in result.tasks} == {"Binding"}


def test_pipelines_onto_releasing_gpus() -> None:
    # the only GPU is held by a releasing pod: the pending pod is pipelined to it
    jobs = [_job("going", "queue0", 1, 0, "Releasing", "n0"), _job("next", "queue0", 1, 1)]
    state = KaiState(nodes={"n0": _node("n0", 1)}, queues=_queues("queue0"),
                     jobs={j.name: j for j in jobs})
    result = run_session(state, ("allocate",))
    assert result.task("next", "next-0").status == "Pipelined"
    assert result.task("next", "next-0").node == "n0"
    assert result.count("pipeline") == 1


def test_unknown_action() -> None:
    with pytest.raises(UnknownAction):
        run_session(KaiState(), ("nosuch",))
