"""KAI's non-preemptible quota check tables, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
``pkg/scheduler/plugins/proportion/capacity_policy/quota_check_test.go`` (Apache-2.0),
one pytest case per upstream case: isAllocatedNonPreemptibleOverQuota ->
``over_quota_resource`` (verdict and the first resource over) and
resultsWithNonPreemptibleOverQuota -> ``non_preemptible_over_quota_check``.
"""

# ruff: noqa: E501

from __future__ import annotations

import pytest
from tests.peers.kai.proportion_helpers import Cite, Q, S

from dralab.queueing.kai.capacity import non_preemptible_over_quota_check, over_quota_resource
from dralab.queueing.kai.model import KaiJob
from dralab.queueing.kai.shares import QueueShare

FILE = "capacity_policy/quota_check_test.go"
# (name, line, requestedQuota, deserved, allocatedNonPreemptible, over, resource)
IS_OVER_QUOTA = [
    ('lower than deserved quota in all resources',
     40,
     {'cpu': 3, 'memory': 3, 'gpu': 3},
     {'cpu': 5, 'memory': 5, 'gpu': 5},
     {'cpu': 1, 'memory': 1, 'gpu': 1},
     False,
     ''),
    ('lower than deserved in some resources',
     58,
     {'cpu': 10, 'memory': 3, 'gpu': 3},
     {'cpu': 5, 'memory': 5, 'gpu': 5},
     {'cpu': 1, 'memory': 1, 'gpu': 1},
     True,
     'cpu'),
    ('higher than deserved in all resources',
     77,
     {'cpu': 10, 'memory': 10, 'gpu': 10},
     {'cpu': 5, 'memory': 5, 'gpu': 5},
     {'cpu': 1, 'memory': 1, 'gpu': 1},
     True,
     'cpu'),
    ("higher than deserved quota with job that doesn't request the exceeding resource",
     96,
     {'cpu': 1, 'memory': 1, 'gpu': 0},
     {'cpu': 5, 'memory': 5, 'gpu': 5},
     {'cpu': 4, 'memory': 4, 'gpu': 6},
     False,
     ''),
]
# (name, line, queues, job, requestedShare, schedulable)
RESULTS_OVER_QUOTA = [
    ('single queue - **preemptible** job - allocated non preemptible below quota',
     140,
     {'queue1': Q('queue1', gpu=S(deserved=3, allocated_not_preemptible=1))},
     KaiJob('job-a', 'queue1', namespace='team-a', preemptible=True),
     {'gpu': 10},
     True),
    ('single queue - non preemptible job - allocated non preemptible below quota',
     167,
     {'queue1': Q('queue1', gpu=S(deserved=3, allocated_not_preemptible=1))},
     KaiJob('job-a', 'queue1', namespace='team-a', preemptible=False),
     {'gpu': 1},
     True),
    ('single queue - non preemptible job - allocated non preemptible results over quota',
     193,
     {'queue1': Q('queue1', gpu=S(deserved=3, allocated_not_preemptible=1))},
     KaiJob('job-a', 'queue1', namespace='team-a', preemptible=False),
     {'gpu': 10},
     False),
    ('multiple queues - non preemptible job - allocated non preemptible below quota',
     219,
     {'top-queue': Q('top-queue', children=('mid-queue',), gpu=S(deserved=3, allocated_not_preemptible=1)),
      'mid-queue': Q('mid-queue', parent='top-queue', children=('leaf-queue',), gpu=S(deserved=3, allocated_not_preemptible=1)),
      'leaf-queue': Q('leaf-queue', parent='mid-queue', gpu=S(deserved=3, allocated_not_preemptible=1))},
     KaiJob('job-a', 'leaf-queue', namespace='team-a', preemptible=False),
     {'gpu': 1},
     True),
    ('multiple queues - non preemptible job - allocated non preemptible results over quota',
     271,
     {'top-queue': Q('top-queue', children=('mid-queue',), gpu=S(deserved=3, allocated_not_preemptible=1)),
      'mid-queue': Q('mid-queue', parent='top-queue', children=('leaf-queue',), gpu=S(deserved=1, allocated_not_preemptible=1)),
      'leaf-queue': Q('leaf-queue', parent='mid-queue', gpu=S(deserved=1, allocated_not_preemptible=0))},
     KaiJob('job-a', 'leaf-queue', namespace='team-a', preemptible=False),
     {'gpu': 1},
     False),
]


@pytest.mark.parametrize("case", IS_OVER_QUOTA, ids=[c[0] for c in IS_OVER_QUOTA])
def test_is_allocated_non_preemptible_over_quota(case: tuple[str, int, dict[str, float], dict[str, float], dict[str, float], bool, str]) -> None:
    name, line, requested, deserved, allocated, over, resource = case
    queue = Q("q")
    for r in ("cpu", "memory", "gpu"):
        queue.share(r).deserved = deserved.get(r, 0.0)
        queue.share(r).allocated_not_preemptible = allocated.get(r, 0.0)
    found = over_quota_resource(queue, requested)
    cite = Cite(FILE, "isAllocatedNonPreemptibleOverQuota / isAllocatedNonPreemptibleOverQuota tests", name, line)
    assert (found is not None, found or "") == (over, resource), cite


@pytest.mark.parametrize("case", RESULTS_OVER_QUOTA, ids=[c[0] for c in RESULTS_OVER_QUOTA])
def test_results_with_non_preemptible_over_quota(case: tuple[str, int, dict[str, QueueShare], KaiJob, dict[str, float], bool]) -> None:
    name, line, queues, job, requested, expected = case
    result = non_preemptible_over_quota_check(queues, job, requested)
    assert result.schedulable == expected, Cite(
        FILE, "resultsWithNonPreemptibleOverQuota / resultsWithNonPreemptibleOverQuota tests", name, line)
