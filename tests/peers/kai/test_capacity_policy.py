"""KAI's capacity policy tables, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
``pkg/scheduler/plugins/proportion/capacity_policy/capacity_policy_test.go``
(Apache-2.0), one pytest case per upstream case (id = the Ginkgo path and the case
name). The job's tasks to allocate (its pending tasks) are summed as
getRequiredQuota does (``requested_of`` of ``task_requested``), then
IsJobOverQueueCapacity -> ``job_over_capacity``, IsNonPreemptibleJobOverQuota ->
``non_preemptible_over_quota``, IsTaskAllocationOnNodeOverCapacity ->
``task_on_node_over_capacity`` with the task's quota on the node
(``task_node_quota``); the schedulable verdict is compared. A PodGroupInfo without
Preemptibility is not preemptible (IsPreemptibleJob compares with Preemptible).
"""

# ruff: noqa: E501

from __future__ import annotations

import pytest
from tests.peers.kai.proportion_helpers import Cite, Q, S, U

from dralab.queueing.kai.capacity import (
    job_over_capacity,
    non_preemptible_over_quota,
    requested_of,
    task_node_quota,
    task_on_node_over_capacity,
)
from dralab.queueing.kai.model import KaiJob, KaiNode, KaiTask
from dralab.queueing.kai.proportion import task_requested
from dralab.queueing.kai.shares import QueueShare

FILE = "capacity_policy/capacity_policy_test.go"
# (name, line, queues, job, expected schedulable) -- TASK_ON_NODE: (..., node name, expected)
JOB_MAX_ALLOWED = [
    ('limited queues - results below limit',
     31,
     {'top-queue': Q('top-queue', children=('mid-queue',), gpu=S(max_allowed=3, allocated=2)),
      'mid-queue': Q('mid-queue', parent='top-queue', children=('leaf-queue',), gpu=S(max_allowed=3, allocated=2)),
      'leaf-queue': Q('leaf-queue', parent='mid-queue', gpu=S(max_allowed=3, allocated=2))},
     KaiJob('job-a', 'leaf-queue', namespace='team-a', preemptible=True, tasks=(KaiTask('task-a', 'job-a', status='Pending', gpus=1, cpu_milli=0, memory_bytes=0),)),
     True),
    ('limited queues - result over limit',
     95,
     {'top-queue': Q('top-queue', children=('mid-queue',), gpu=S(max_allowed=3, allocated=3)),
      'mid-queue': Q('mid-queue', parent='top-queue', children=('leaf-queue',), gpu=S(max_allowed=3, allocated=2)),
      'leaf-queue': Q('leaf-queue', parent='mid-queue', gpu=S(max_allowed=3, allocated=2))},
     KaiJob('job-a', 'leaf-queue', namespace='team-a', preemptible=False, tasks=(KaiTask('task-a', 'job-a', status='Pending', gpus=1, cpu_milli=0, memory_bytes=0),)),
     False),
]
JOB_NON_PREEMPTIBLE = [
    ('unlimited queues - preemptible job - allocated non preemptible below quota',
     179,
     {'top-queue': Q('top-queue', children=('mid-queue',), gpu=S(max_allowed=U, allocated_not_preemptible=2, deserved=3)),
      'mid-queue': Q('mid-queue', parent='top-queue', children=('leaf-queue',), gpu=S(max_allowed=U, allocated_not_preemptible=2, deserved=3)),
      'leaf-queue': Q('leaf-queue', parent='mid-queue', gpu=S(max_allowed=U, allocated_not_preemptible=2, deserved=3))},
     KaiJob('job-a', 'leaf-queue', namespace='team-a', preemptible=False, tasks=(KaiTask('task-a', 'job-a', status='Pending', gpus=1, cpu_milli=0, memory_bytes=0),)),
     True),
    ('unlimited queues - preemptible job -  allocated non preemptible above quota',
     246,
     {'top-queue': Q('top-queue', children=('mid-queue',), gpu=S(max_allowed=U, allocated_not_preemptible=3, deserved=3)),
      'mid-queue': Q('mid-queue', parent='top-queue', children=('leaf-queue',), gpu=S(max_allowed=U, allocated_not_preemptible=2, deserved=3)),
      'leaf-queue': Q('leaf-queue', parent='mid-queue', gpu=S(max_allowed=U, allocated_not_preemptible=2, deserved=3))},
     KaiJob('job-a', 'leaf-queue', namespace='team-a', preemptible=False, tasks=(KaiTask('task-a', 'job-a', status='Pending', gpus=1, cpu_milli=0, memory_bytes=0),)),
     False),
]
NON_PREEMPTIBLE_OVER_QUOTA = [
    ('unlimited queues - preemptible job - allocated non preemptible below quota',
     337,
     {'top-queue': Q('top-queue', children=('mid-queue',), gpu=S(max_allowed=U, allocated_not_preemptible=2, deserved=3)),
      'mid-queue': Q('mid-queue', parent='top-queue', children=('leaf-queue',), gpu=S(max_allowed=U, allocated_not_preemptible=2, deserved=3)),
      'leaf-queue': Q('leaf-queue', parent='mid-queue', gpu=S(max_allowed=U, allocated_not_preemptible=2, deserved=3))},
     KaiJob('job-a', 'leaf-queue', namespace='team-a', preemptible=False, tasks=(KaiTask('task-a', 'job-a', status='Pending', gpus=1, cpu_milli=0, memory_bytes=0),)),
     True),
    ('unlimited queues - preemptible job -  allocated non preemptible above quota',
     404,
     {'top-queue': Q('top-queue', children=('mid-queue',), gpu=S(max_allowed=U, allocated_not_preemptible=3, deserved=3)),
      'mid-queue': Q('mid-queue', parent='top-queue', children=('leaf-queue',), gpu=S(max_allowed=U, allocated_not_preemptible=2, deserved=3)),
      'leaf-queue': Q('leaf-queue', parent='mid-queue', gpu=S(max_allowed=U, allocated_not_preemptible=2, deserved=3))},
     KaiJob('job-a', 'leaf-queue', namespace='team-a', preemptible=False, tasks=(KaiTask('task-a', 'job-a', status='Pending', gpus=1, cpu_milli=0, memory_bytes=0),)),
     False),
]
TASK_ON_NODE = [
    ('unlimited queues - allocated non preemptible job below quota',
     496,
     {'top-queue': Q('top-queue', children=('mid-queue',), cpu=S(max_allowed=U, allocated_not_preemptible=2000, deserved=3000)),
      'mid-queue': Q('mid-queue', parent='top-queue', children=('leaf-queue',), cpu=S(max_allowed=U, allocated_not_preemptible=2000, deserved=3000)),
      'leaf-queue': Q('leaf-queue', parent='mid-queue', cpu=S(max_allowed=U, allocated_not_preemptible=2000, deserved=3000))},
     KaiJob('job-a', 'leaf-queue', namespace='team-a', preemptible=False, tasks=(KaiTask('task-a', 'job-a', status='Pending', gpus=0, cpu_milli=1000, memory_bytes=0),)),
     'worker-node',
     True),
    ('unlimited queues - allocated non preemptible job above quota',
     566,
     {'top-queue': Q('top-queue', children=('mid-queue',), cpu=S(max_allowed=U, allocated_not_preemptible=3000, deserved=3000)),
      'mid-queue': Q('mid-queue', parent='top-queue', children=('leaf-queue',), cpu=S(max_allowed=U, allocated_not_preemptible=2000, deserved=3000)),
      'leaf-queue': Q('leaf-queue', parent='mid-queue', cpu=S(max_allowed=U, allocated_not_preemptible=2000, deserved=3000))},
     KaiJob('job-a', 'leaf-queue', namespace='team-a', preemptible=False, tasks=(KaiTask('task-a', 'job-a', status='Pending', gpus=0, cpu_milli=1000, memory_bytes=0),)),
     'worker-node',
     False),
    ('unlimited queues - allocated preemptible job below quota',
     636,
     {'top-queue': Q('top-queue', children=('mid-queue',), cpu=S(max_allowed=U, allocated_not_preemptible=2000, deserved=3000)),
      'mid-queue': Q('mid-queue', parent='top-queue', children=('leaf-queue',), cpu=S(max_allowed=U, allocated_not_preemptible=2000, deserved=3000)),
      'leaf-queue': Q('leaf-queue', parent='mid-queue', cpu=S(max_allowed=U, allocated_not_preemptible=2000, deserved=3000))},
     KaiJob('job-a', 'leaf-queue', namespace='team-a', preemptible=True, tasks=(KaiTask('task-a', 'job-a', status='Pending', gpus=0, cpu_milli=1000, memory_bytes=0),)),
     'worker-node',
     True),
    ('unlimited queues - allocated preemptible job above quota',
     706,
     {'top-queue': Q('top-queue', children=('mid-queue',), cpu=S(max_allowed=U, allocated_not_preemptible=3000, deserved=3000)),
      'mid-queue': Q('mid-queue', parent='top-queue', children=('leaf-queue',), cpu=S(max_allowed=U, allocated_not_preemptible=2000, deserved=3000)),
      'leaf-queue': Q('leaf-queue', parent='mid-queue', cpu=S(max_allowed=U, allocated_not_preemptible=2000, deserved=3000))},
     KaiJob('job-a', 'leaf-queue', namespace='team-a', preemptible=True, tasks=(KaiTask('task-a', 'job-a', status='Pending', gpus=0, cpu_milli=1000, memory_bytes=0),)),
     'worker-node',
     True),
    ('limited queue -  allocated non preemptible job below limit',
     776,
     {'top-queue': Q('top-queue', children=('mid-queue',), cpu=S(max_allowed=3000, allocated=2000, allocated_not_preemptible=2000, deserved=3000)),
      'mid-queue': Q('mid-queue', parent='top-queue', children=('leaf-queue',), cpu=S(max_allowed=3000, allocated=2000, allocated_not_preemptible=2000, deserved=3000)),
      'leaf-queue': Q('leaf-queue', parent='mid-queue', cpu=S(max_allowed=3000, allocated=2000, allocated_not_preemptible=2000, deserved=3000))},
     KaiJob('job-a', 'leaf-queue', namespace='team-a', preemptible=False, tasks=(KaiTask('task-a', 'job-a', status='Pending', gpus=0, cpu_milli=500, memory_bytes=0),)),
     'worker-node',
     True),
    ('limited queue -  allocated non preemptible job above limit',
     849,
     {'top-queue': Q('top-queue', children=('mid-queue',), cpu=S(max_allowed=3000, allocated=2000, allocated_not_preemptible=2000, deserved=4000)),
      'mid-queue': Q('mid-queue', parent='top-queue', children=('leaf-queue',), cpu=S(max_allowed=3000, allocated=2000, allocated_not_preemptible=2000, deserved=4000)),
      'leaf-queue': Q('leaf-queue', parent='mid-queue', cpu=S(max_allowed=3000, allocated=2000, allocated_not_preemptible=2000, deserved=4000))},
     KaiJob('job-a', 'leaf-queue', namespace='team-a', preemptible=False, tasks=(KaiTask('task-a', 'job-a', status='Pending', gpus=0, cpu_milli=1100, memory_bytes=0),)),
     'worker-node',
     False),
    ('limited queue -  allocated preemptible job below limit',
     922,
     {'top-queue': Q('top-queue', children=('mid-queue',), cpu=S(max_allowed=3000, allocated=2000, allocated_not_preemptible=2000, deserved=3000)),
      'mid-queue': Q('mid-queue', parent='top-queue', children=('leaf-queue',), cpu=S(max_allowed=3000, allocated=2000, allocated_not_preemptible=2000, deserved=3000)),
      'leaf-queue': Q('leaf-queue', parent='mid-queue', cpu=S(max_allowed=3000, allocated=2000, allocated_not_preemptible=2000, deserved=3000))},
     KaiJob('job-a', 'leaf-queue', namespace='team-a', preemptible=True, tasks=(KaiTask('task-a', 'job-a', status='Pending', gpus=0, cpu_milli=500, memory_bytes=0),)),
     'worker-node',
     True),
    ('limited queue -  allocated preemptible job above limit',
     995,
     {'top-queue': Q('top-queue', children=('mid-queue',), cpu=S(max_allowed=3000, allocated=2000, allocated_not_preemptible=2000, deserved=4000)),
      'mid-queue': Q('mid-queue', parent='top-queue', children=('leaf-queue',), cpu=S(max_allowed=3000, allocated=2000, allocated_not_preemptible=2000, deserved=4000)),
      'leaf-queue': Q('leaf-queue', parent='mid-queue', cpu=S(max_allowed=3000, allocated=2000, allocated_not_preemptible=2000, deserved=4000))},
     KaiJob('job-a', 'leaf-queue', namespace='team-a', preemptible=True, tasks=(KaiTask('task-a', 'job-a', status='Pending', gpus=0, cpu_milli=1100, memory_bytes=0),)),
     'worker-node',
     False),
]


def _requested(job: KaiJob) -> dict[str, float]:
    return requested_of(task_requested(t) for t in job.tasks if t.status == "Pending")


CASES = ([("IsJobOverQueueCapacity / max allowed", c) for c in JOB_MAX_ALLOWED]
         + [("IsJobOverQueueCapacity / allocated non preemptible over quota", c) for c in JOB_NON_PREEMPTIBLE]
         + [("IsNonPreemptibleJobOverQuota / allocated non preemptible over quota", c) for c in NON_PREEMPTIBLE_OVER_QUOTA])


@pytest.mark.parametrize("function, case", CASES, ids=[f"{f} / {c[0]}" for f, c in CASES])
def test_job_capacity(function: str, case: tuple[str, int, dict[str, QueueShare], KaiJob, bool]) -> None:
    name, line, queues, job, expected = case
    check = job_over_capacity if function.startswith("IsJobOverQueueCapacity") else non_preemptible_over_quota
    result = check(queues, job, _requested(job))
    assert result.schedulable == expected, Cite(FILE, f"Capacity Policy Check / {function}", name, line)


@pytest.mark.parametrize("case", TASK_ON_NODE, ids=[c[0] for c in TASK_ON_NODE])
def test_task_allocation_on_node(case: tuple[str, int, dict[str, QueueShare], KaiJob, str, bool]) -> None:
    name, line, queues, job, node, expected = case
    task = next(t for t in job.tasks if t.name == "task-a")
    result = task_on_node_over_capacity(queues, job, task_node_quota(task, KaiNode(node)))
    assert result.schedulable == expected, Cite(
        FILE, "Capacity Policy Check / IsTaskAllocationOnNodeOverCapacity / allocated non preemptible over quota", name, line)
