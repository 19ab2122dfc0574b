"""KAI's preempt, reclaim, consolidation and stalegangeviction actions on a few upstream
cases written by hand, plus the statement's undo rules.

Cases from NVIDIA/KAI-Scheduler@72de64fc8eca10fa8cca26a20156178f3edbe092, built as the
upstream test utilities build them (queues under an unlimited department unless the
case names departments, jobs created in table order, tasks ``<job>-<index>``, priority
Train = 50 (preemptible), Build = 100 (not)).
"""

from __future__ import annotations

import dataclasses

from dralab.queueing.kai.framework import Session
from dralab.queueing.kai.model import (
    KaiJob,
    KaiNode,
    KaiQueue,
    KaiState,
    KaiTask,
    QueueResource,
)
from dralab.queueing.kai.session import run_session

UNL = QueueResource(quota=-1, limit=-1, over_quota_weight=1)
TRAIN, BUILD = 50, 100


def _queue(name: str, parent: str | None, quota: float, weight: float = 0.0,
           created: float = 0.0) -> KaiQueue:
    return KaiQueue(name, parent=parent, created=created,
                    gpu=QueueResource(quota=quota, over_quota_weight=weight),
                    cpu=UNL, memory=UNL)


def _job(name: str, queue: str, gpus: float, created: float, *tasks: tuple[str, str | None],
         priority: int = TRAIN, groups: tuple[str, ...] = ()) -> KaiJob:
    return KaiJob(name, queue, priority=priority, created=created, min_member=len(tasks),
                  tasks=tuple(KaiTask(f"{name}-{i}", name, status=status,  # type: ignore[arg-type]
                                      node=node, gpus=gpus, cpu_milli=1000, memory_bytes=1e9,
                                      gpu_groups=groups if node else ())
                              for i, (status, node) in enumerate(tasks)))


def _node(name: str, gpus: int) -> KaiNode:
    return KaiNode(name, gpus=gpus, cpu_milli=20_000_000, memory_bytes=20e9, max_pods=110,
                   gpu_memory_mib=100)


def _state(nodes: list[KaiNode], queues: list[KaiQueue], jobs: list[KaiJob]) -> KaiState:
    return KaiState(nodes={n.name: n for n in nodes}, queues={q.name: q for q in queues},
                    jobs={j.name: j for j in jobs})


RUN, PEND = "Running", "Pending"


def test_preempt_only_what_is_needed() -> None:
    # preempt_test.go TestHandlePreempt case 0: "3 train job running, 1 build job pending
    # for the same queue - no need to preempt both"
    jobs = [_job("running_job0", "queue0", 0.5, 0, (RUN, "node0"), groups=("0",)),
            _job("running_job1", "queue0", 1, 1, (RUN, "node0")),
            _job("running_job2", "queue0", 0.5, 2, (RUN, "node0"), groups=("0",)),
            _job("pending_job0", "queue0", 1, 3, (PEND, None), priority=BUILD)]
    state = _state([_node("node0", 2)],
                   [_queue("default", None, -1, -1), _queue("queue0", "default", 2)], jobs)
    result = run_session(state, ("preempt",))
    status = {t.job: (t.status, t.node) for t in result.tasks}
    assert status == {"running_job0": (RUN, "node0"), "running_job1": ("Releasing", "node0"),
                      "running_job2": (RUN, "node0"), "pending_job0": ("Pipelined", "node0")}
    evictions = [e for e in result.events if e.kind == "evict"]
    assert [(e.job, e.for_job, e.action) for e in evictions] == [
        ("running_job1", "pending_job0", "preempt")]
    assert "was preempted by higher priority workload" in evictions[0].reason


def test_reclaim_by_fair_share() -> None:
    # reclaim_test.go TestHandleReclaim case 0: "Reclaim jobs according to queue fair share"
    jobs = [_job("q0_running_job0", "queue0", 1, 0, (RUN, "node0")),
            _job("q0_running_job1", "queue0", 1, 1, (RUN, "node0")),
            _job("q0_running_job2", "queue0", 1, 2, (RUN, "node0"), priority=TRAIN - 1),
            _job("q1_running_job0", "queue1", 1, 3, (RUN, "node0")),
            _job("q1_running_job1", "queue1", 1, 4, (RUN, "node0")),
            _job("q1_running_job2", "queue1", 1, 5, (RUN, "node0"), priority=TRAIN - 1),
            _job("reclaimer", "reclaimer_queue", 1, 6, (PEND, None), (PEND, None))]
    queues = [KaiQueue("d1", gpu=QueueResource(quota=1, limit=-1, over_quota_weight=1),
                       cpu=UNL, memory=UNL),
              _queue("queue0", "d1", 1, 1, 0), _queue("queue1", "d1", 1, 1, 60),
              _queue("reclaimer_queue", "d1", 2, 0, 120)]
    result = run_session(_state([_node("node0", 6)], queues, jobs), ("reclaim",))
    status = {t.name: t.status for t in result.tasks}
    assert status["q0_running_job2-0"] == status["q1_running_job2-0"] == "Releasing"
    assert {status[f"q{q}_running_job{j}-0"] for q in (0, 1) for j in (0, 1)} == {RUN}
    assert status["reclaimer-0"] == status["reclaimer-1"] == "Pipelined"
    assert result.count("evict") == 2 and result.count("pipeline") == 2


def test_consolidation_moves_a_pod_to_make_room() -> None:
    # consolidation_test.go TestHandleConsolidation case 0: "2 jobs of 1 task running on
    # different GPUs, two pending jobs, only first can be consolidated"
    jobs = [_job("running_job0", "queue0", 2, 0, (RUN, "node0")),
            _job("running_job1", "queue0", 2, 1, (RUN, "node1")),
            _job("pending_job0", "queue0", 3, 2, (PEND, None)),
            _job("pending_job1", "queue0", 2, 3, (PEND, None))]
    state = _state([_node("node0", 4), _node("node1", 4)],
                   [_queue("default", None, -1, -1), _queue("queue0", "default", 2)], jobs)
    result = run_session(state, ("consolidation",))
    status = {t.job: (t.status, t.node) for t in result.tasks}
    assert status == {"running_job0": (RUN, "node0"), "running_job1": ("Pipelined", "node0"),
                      "pending_job0": ("Pipelined", "node1"), "pending_job1": (PEND, None)}
    assert result.count("evict") == 1 and result.count("pipeline") == 2


def test_stale_gang_evicted_after_grace_period() -> None:
    # a gang of 2 with one pod left running: stale; evicted once stale for the grace
    # period (stalegangeviction_test.go's shape), kept before
    job = _job("gang", "queue0", 1, 0, (RUN, "node0"), (PEND, None))
    queues = [_queue("default", None, -1, -1), _queue("queue0", "default", 2)]
    fresh = _state([_node("node0", 2)], queues, [job])
    assert run_session(fresh, ("stalegangeviction",)).count("evict") == 0
    old = _state([_node("node0", 2)], queues, [dataclasses.replace(job, stale_since=61.0)])
    result = run_session(old, ("stalegangeviction",))
    assert [(e.task, e.kind) for e in result.events] == [("gang-0", "evict")]
    assert "minimum required number of pods (2)" in result.events[0].reason


def test_rollback_past_an_unevict_evicts_again() -> None:
    # statement.go: un-evicting is itself an operation; rolling back past it evicts the
    # pod again, and a discarded statement restores the node's books
    job = _job("victim", "queue0", 1, 0, (RUN, "node0"))
    state = _state([_node("node0", 1)],
                   [_queue("default", None, -1, -1), _queue("queue0", "default", 1)], [job])
    session = Session(state)
    pod = session.jobs["victim"].pods[0]
    usage = session.nodes["node0"]
    stmt = session.statement("test")
    stmt.evict(pod)
    assert pod.status == "Releasing" and usage.releasing("gpu") == 1
    mark = stmt.checkpoint()
    stmt.unevict(pod)
    assert pod.status == RUN and usage.releasing("gpu") == 0
    stmt.rollback(mark)
    assert pod.status == "Releasing" and usage.releasing("gpu") == 1
    stmt.discard()
    assert pod.status == RUN and usage.idle("gpu") == 0 and usage.releasing("gpu") == 0
    assert session.shares["queue0"].gpu.allocated == 1
