"""KAI's job order by queue, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
``pkg/scheduler/actions/utils/job_order_by_queue_test.go`` (Apache-2.0). Every test
function's cases, one pytest case each (id = the case name, or the function's name for
a function without a table), against ``actions.order.JobsOrder`` (KAI's
JobsOrderByQueues) on a session of the case's queues and jobs.

Upstream opens a bare session (priority and elastic job order; the proportion plugin's
queue order only where the case calls proportion's OnSessionOpen). dralab's session
always divides shares; where upstream has no queue order function KAI orders queues by
creation then UID, and with every queue's numbers equal (no quota, jobs asking nothing)
the proportion order ends on the same creation / name tie-break, so the cases are run
as they are. A pod with allocated resources is placed on a node big enough to hold it
(upstream sets AcceptedResource without a node).
"""

# ruff: noqa: E501

from __future__ import annotations

from collections.abc import Sequence

import pytest
from tests.peers.kai.actions_helpers import Cite

from dralab.queueing.kai.actions.order import JobsOrder
from dralab.queueing.kai.framework import Session
from dralab.queueing.kai.model import KaiJob, KaiNode, KaiQueue, KaiState, KaiTask, QueueResource

FILE = "utils/job_order_by_queue_test.go"
NODE = KaiNode("n1", gpus=100, cpu_milli=1_000_000, memory_bytes=1e12)


def _q(name: str, parent: str | None = None, created: float = 0.0, quota: float | None = None) -> KaiQueue:
    if quota is None:
        return KaiQueue(name, parent=parent, created=created)
    res = QueueResource(quota=quota, over_quota_weight=1)
    return KaiQueue(name, parent=parent, created=created, gpu=res, cpu=res, memory=res)


def _pending(name: str, priority: int, queue: str) -> KaiJob:
    """newHierarchyTestJob: one pending pod asking nothing."""
    return KaiJob(name, queue, priority=priority, tasks=(KaiTask("p1", name),))


def _allocated(name: str, priority: int, queue: str) -> KaiJob:
    """An allocated pod holding 1 GPU, 1000m CPU, 1024 memory."""
    return KaiJob(name, queue, priority=priority, tasks=(
        KaiTask("p1", name, status="Allocated", node="n1", gpus=1, cpu_milli=1000, memory_bytes=1024),))


def _running(name: str, priority: int, queue: str) -> KaiJob:
    return KaiJob(name, queue, priority=priority, tasks=(KaiTask("p1", name, status="Running", node="n1"),))


def _order(queues: Sequence[KaiQueue], jobs: Sequence[KaiJob], *, victims: bool = False,
           pushed: Sequence[KaiJob] = (), requeue: bool = False) -> tuple[list[str], int]:
    """The names popped until empty, and how many jobs the order held before."""
    state = KaiState(nodes={NODE.name: NODE}, queues={q.name: q for q in queues},
                     jobs={j.name: j for j in [*jobs, *pushed]})
    session = Session(state)
    order = JobsOrder(session, [session.jobs[j.name] for j in jobs], victims=victims)
    for job in pushed:
        order.push(session.jobs[job.name])
    if requeue:
        again = order.pop()
        assert again is not None
        order.push(again)
    held = sum(len(v) for v in order.leaves.values())
    popped: list[str] = []
    while (next_job := order.pop()) is not None:
        popped.append(next_job.name)
    assert order.empty()
    return popped, held


def test_numerical_priority_within_same_queue() -> None:
    queues = [_q("pq1"), _q("q1", "pq1")]
    jobs = [_pending("p150", 150, "q1"), _pending("p255", 255, "q1"), _pending("p160", 160, "q1"), _pending("p200", 200, "q1")]
    popped, _ = _order(queues, jobs)
    assert popped == ["p255", "p200", "p160", "p150"], Cite(FILE, "TestNumericalPriorityWithinSameQueue", "(single case)", 42)


def test_victim_queue_pop_next_job() -> None:
    # q2 created a second before q1; both quota 1 of each resource; proportion opened
    queues = [_q("pq1", created=1.0), _q("q1", "pq1", created=1.0, quota=1), _q("q2", "pq1", created=0.0, quota=1)]
    jobs = [_allocated(n, p, n[:2]) for n, p in
            (("q1j1", 100), ("q1j2", 99), ("q1j3", 98), ("q2j1", 100), ("q2j2", 99), ("q2j3", 98))]
    popped, _ = _order(queues, jobs, victims=True)
    assert popped == ["q1j3", "q2j3", "q1j2", "q2j2", "q1j1", "q2j1"], Cite(FILE, "TestVictimQueue_PopNextJob", "single podgroup insert - empty queue", 157)


# (name, line, jobs already in, the pushed job, expected pop order)
PUSH: list[tuple[str, int, list[KaiJob], KaiJob, list[str]]] = [
    ("single podgroup insert - empty queue", 355, [], _pending("p150", 150, "q1"), ["p150"]),
    # same priority and creation: KAI's heap keeps the job already in first (UID 1 < 2)
    ("single podgroup insert - one in queue. On pop comes second", 417,
     [_pending("p140", 150, "q1")], _pending("p150", 150, "q1"), ["p140", "p150"]),
    ("single podgroup insert - one in queue. On pop comes first", 524,
     [_pending("p140", 150, "q1")], _pending("p150", 160, "q1"), ["p150", "p140"]),
]


@pytest.mark.parametrize("case", PUSH, ids=[c[0] for c in PUSH])
def test_jobs_order_by_queues_push_job(case: tuple[str, int, list[KaiJob], KaiJob, list[str]]) -> None:
    name, line, jobs, pushed, expected = case
    popped, _ = _order([_q("pq1"), _q("q1", "pq1")], jobs, pushed=[pushed])
    assert popped == expected, Cite(FILE, "TestJobsOrderByQueues_PushJob", name, line)


def test_jobs_order_by_queues_requeue_job() -> None:
    popped, _ = _order([_q("pq1"), _q("q1", "pq1")], [_pending("p140", 150, "q1")], requeue=True)
    assert popped == ["p140"], Cite(FILE, "TestJobsOrderByQueues_RequeueJob", "single job - pop and insert", 665)


def test_jobs_order_by_queues_orphan_queue_adds_job_fit_error() -> None:
    # a queue whose parent does not exist: its jobs are not scheduled at all
    popped, held = _order([_q("orphan-queue", "missing-parent")], [_pending("test-job", 100, "orphan-queue")])
    assert (popped, held) == ([], 0), Cite(FILE, "TestJobsOrderByQueues_OrphanQueue_AddsJobFitError", "(single case)", 747)


_P = _pending
# (name, line, queues, jobs, pushed jobs, expected order)
HIERARCHY: list[tuple[str, int, list[KaiQueue], list[KaiJob], list[KaiJob], list[str]]] = [
    ("three level hierarchy", 807,
     [_q("root"), _q("dept1", "root"), _q("dept2", "root"), _q("team1", "dept1"), _q("team2", "dept1"), _q("team3", "dept2")],
     [_P("job1-team1-p100", 100, "team1"), _P("job2-team2-p200", 200, "team2"), _P("job3-team3-p150", 150, "team3"), _P("job4-team1-p250", 250, "team1")],
     [], ["job4-team1-p250", "job1-team1-p100", "job2-team2-p200", "job3-team3-p150"]),
    ("four level hierarchy", 825,
     [_q("org"), _q("div1", "org"), _q("dept1", "div1"), _q("team1", "dept1")],
     [_P("deep-job", 100, "team1")], [], ["deep-job"]),
    ("single level hierarchy", 838,
     [_q("default")], [_P("job1-default-p100", 100, "default"), _P("job2-default-p200", 200, "default")],
     [], ["job2-default-p200", "job1-default-p100"]),
    ("two level hierarchy", 849,
     [_q("root"), _q("leaf1", "root"), _q("leaf2", "root")],
     [_P("job1-leaf1-p100", 100, "leaf1"), _P("job2-leaf2-p200", 200, "leaf2")],
     [], ["job1-leaf1-p100", "job2-leaf2-p200"]),
    ("mixed depth hierarchy", 862,
     [_q("root"), _q("leaf1", "root"), _q("dept", "root"), _q("team", "dept")],
     [_P("job1-shallow-p150", 150, "leaf1"), _P("job2-deep-p200", 200, "team")],
     [], ["job2-deep-p200", "job1-shallow-p150"]),
    ("multiple root queues", 876,
     [_q("root1"), _q("leaf1", "root1"), _q("root2"), _q("leaf2", "root2")],
     [_P("job1-root1-p100", 100, "leaf1"), _P("job2-root2-p200", 200, "leaf2")],
     [], ["job1-root1-p100", "job2-root2-p200"]),
    ("multiple single level root queues", 890,
     [_q("queue-a"), _q("queue-b"), _q("queue-c")],
     [_P("job-a-p100", 100, "queue-a"), _P("job-b-p300", 300, "queue-b"), _P("job-c-p200", 200, "queue-c")],
     [], ["job-a-p100", "job-b-p300", "job-c-p200"]),
    ("push job builds n-level tree", 904,
     [_q("root"), _q("dept", "root"), _q("team", "dept")],
     [], [_P("job1-p100", 100, "team"), _P("job2-p200", 200, "team")], ["job2-p200", "job1-p100"]),
    ("push job to single level queue", 917,
     [_q("default")], [], [_P("pushed-job", 100, "default")], ["pushed-job"]),
    ("tree cleanup after all jobs popped", 927,
     [_q("root"), _q("dept1", "root"), _q("dept2", "root"), _q("team1", "dept1"), _q("team2", "dept2")],
     [_P("job1-team1", 200, "team1"), _P("job2-team2", 100, "team2")],
     [], ["job1-team1", "job2-team2"]),
]


@pytest.mark.parametrize("case", HIERARCHY, ids=[c[0] for c in HIERARCHY])
def test_n_level_queue_hierarchy(case: tuple[str, int, list[KaiQueue], list[KaiJob], list[KaiJob], list[str]]) -> None:
    name, line, queues, jobs, pushed, expected = case
    popped, held = _order(queues, jobs, pushed=pushed)
    assert (held, popped) == (len(expected), expected), Cite(FILE, "TestNLevelQueueHierarchy", name, line)


def test_victim_queue_two_queues_with_running_jobs() -> None:
    queues = [_q("default"), _q("team-0", "default"), _q("team-1", "default")]
    jobs = [_running("job0", 100, "team-0"), _running("job1", 100, "team-1")]
    popped, held = _order(queues, jobs, victims=True)
    assert (held, len(popped)) == (2, 2), Cite(FILE, "TestVictimQueue_TwoQueuesWithRunningJobs", "(single case)", 1047)
